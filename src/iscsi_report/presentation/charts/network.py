"""Charts of the network chapter: RTT distributions (log axis, small multiples), iperf3 over time."""

from __future__ import annotations

import altair as alt
import pandas as pd

from iscsi_report.presentation.charts import theme

WIDTH = 260
HEIGHT = 160


def _varying(df: pd.DataFrame, keys: tuple[str, ...]) -> list[str]:
    """The keys among ``keys`` that take more than one value in ``df`` (the others need no naming)."""
    return [k for k in keys if k in df and df[k].nunique(dropna=False) > 1]


def _group_label(df: pd.DataFrame) -> pd.Series:
    """A panel's name: the network, then the host pinged and the family where they vary, the interval."""
    label = df["network"].astype(str)
    for key in _varying(df, ("host", "family")):
        label = label + ", " + df[key].astype(str)
    return label + ", every " + (df["interval_s"] * 1000).map("{:g}".format) + " ms"


def rtt_histogram(hist: pd.DataFrame) -> alt.Chart:
    """Share of replies per log-spaced RTT bin, one panel per ping group."""
    data = hist.assign(group=_group_label(hist))
    return (
        alt.Chart(data)
        .mark_rect(opacity=0.85)
        .encode(
            x=alt.X("bin_lo_ms:Q", scale=alt.Scale(type="log"), title="round-trip time (ms, log)"),
            x2="bin_hi_ms:Q",
            y=alt.Y("share:Q", title="share of replies", axis=alt.Axis(format="%")),
            color=theme.color("network", "network", data["network"], legend=None),
        )
        .properties(width=WIDTH, height=HEIGHT)
        .add_params(alt.selection_interval(bind="scales", encodings=["x"]))
        .facet(facet=alt.Facet("group:N", title=None), columns=2)
        .resolve_scale(y="independent")
    )


def rtt_ecdf(ecdf: pd.DataFrame) -> alt.Chart:
    """ECDF of RTT on a log axis, one line per ping group: colour the network (with the host pinged
    and family where they vary), dash the interval."""
    shown = ecdf[ecdf["rtt_ms"] > 0]
    data = shown.assign(interval=(shown["interval_s"] * 1000).map("{:g} ms".format))
    for key in _varying(data, ("host", "family")):
        data = data.assign(network=data["network"].astype(str) + ", " + data[key].astype(str))
    return (
        alt.Chart(data)
        .mark_line()
        .encode(
            x=alt.X("rtt_ms:Q", scale=alt.Scale(type="log"), title="round-trip time (ms, log)"),
            y=alt.Y("cumulative_share:Q", title="share of replies at or below", axis=alt.Axis(format="%")),
            color=theme.color("network", "network", data["network"]),
            strokeDash=alt.StrokeDash("interval:N", title="ping interval"),
        )
        .properties(width=2 * WIDTH, height=HEIGHT + 40)
        .interactive(bind_y=False)
    )


def iperf_timeline(intervals: pd.DataFrame) -> alt.Chart:
    """iperf3 throughput per reporting interval, one line per file."""
    return (
        alt.Chart(intervals)
        .mark_line(point=True)
        .encode(
            x=alt.X("end_s:Q", title="time since start (s)"),
            y=alt.Y("mbit_per_s:Q", title="throughput (Mbit/s)", scale=alt.Scale(zero=True)),
            color=alt.Color("file:N", title="iperf3 file"),
        )
        .properties(width=2 * WIDTH, height=HEIGHT)
    )
