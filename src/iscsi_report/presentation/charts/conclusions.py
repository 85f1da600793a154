"""Charts of the front page and the conclusions: every estimate of an upgrade beside the blog's measurement.

Each source of an estimate (the blog's measurement, its formula, the physical and the fitted model,
the real iSCSI lab) keeps one colour and marker on both pages; the colours are the theme's spare ones,
so none of them means a network or a device elsewhere on the site.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import altair as alt
import pandas as pd

from iscsi_report.analyses import conclusions

WIDTH = 420
ROW_HEIGHT = 60  # px per question or upgrade: room for the markers and a two-line label
LABEL_SEPARATOR = "|"  # splits a row's label into lines (the question, then its binding bound)
# One colour and marker per source: measured black and filled, models in the theme's spare colours.
SOURCE_STYLE: Mapping[str, tuple[str, str]] = {
    conclusions.MEASURED: ("#222222", "circle"),
    conclusions.PUBLISHED: ("#222222", "circle"),
    conclusions.BLOG_FORMULA: ("#8c6d31", "square"),
    conclusions.PHYSICAL: ("#393b79", "diamond"),
    "Fitted model": ("#1f8f89", "triangle-up"),
    conclusions.FITTED: ("#1f8f89", "triangle-up"),
    conclusions.LAB: ("#637939", "cross"),
}
CEILING_COLOURS: Mapping[str, str] = {"link ceiling": "#bab0ac", "device ceiling": "#e0a96d"}
X_MIB_PER_S = "throughput (MiB/s)"
X_GAIN = "gain over the configuration it replaces (%)"
MEASURED_SIZE = 140  # the measurement's marker is larger than a model's: it is what the models forecast
MODEL_SIZE = 70


def _styles(series: list[str]) -> tuple[list[str], list[str]]:
    """Colour and shape of each series, in order (a source this module does not name: grey, a cross)."""
    styled = [SOURCE_STYLE.get(s, ("#888888", "cross")) for s in series]
    return [c for c, _ in styled], [m for _, m in styled]


def _row_label(frame: pd.DataFrame, first: str, second: str) -> pd.Series:
    """A two-line row label: ``first`` on top, ``second`` below (split by the axis' label expression)."""
    return frame[first] + LABEL_SEPARATOR + frame[second]


def _y(order: list[str]) -> alt.Y:
    """The rows' axis: labels in the given order, each split into its lines."""
    return alt.Y(
        "row:N",
        sort=order,
        title=None,
        axis=alt.Axis(labelExpr=f"split(datum.label, '{LABEL_SEPARATOR}')", labelLimit=260, labelPadding=6),
    )


def _points(frame: pd.DataFrame, order: list[str], x_title: str, x_field: str) -> alt.Chart:
    """One marker per source and row, the measurement larger; tooltips carry the MiB/s."""
    series = list(dict.fromkeys(frame["series"]))
    colours, shapes = _styles(series)
    return (
        alt.Chart(frame)
        .mark_point(filled=True, opacity=0.9)
        .encode(
            y=_y(order),
            x=alt.X(f"{x_field}:Q", title=x_title),
            color=alt.Color("series:N", title="source", scale=alt.Scale(domain=series, range=colours)),
            shape=alt.Shape("series:N", title="source", scale=alt.Scale(domain=series, range=shapes)),
            size=alt.Size("size:Q", legend=None, scale=None),
            tooltip=[
                alt.Tooltip("series:N", title="source"),
                alt.Tooltip(f"{x_field}:Q", title=x_title, format=".1f"),
            ],
        )
    )


def _interval(
    frame: pd.DataFrame, order: list[str], x_field: str, x_title: str, lo: str, hi: str
) -> alt.Chart:
    """The fitted model's prediction interval as a horizontal rule, on the points' field and axis title
    (so the layers share one axis title)."""
    shown = frame.dropna(subset=[lo, hi])
    shown = shown.assign(**{x_field: shown[lo]})
    return (
        alt.Chart(shown)
        .mark_rule(strokeWidth=2, color=SOURCE_STYLE[conclusions.FITTED][0], opacity=0.6)
        .encode(
            y=_y(order),
            x=alt.X(f"{x_field}:Q", title=x_title),
            x2=alt.X2(f"{hi}:Q", title=x_title),
            tooltip=[
                alt.Tooltip(f"{lo}:Q", title="interval from", format=".1f"),
                alt.Tooltip(f"{hi}:Q", title="interval to", format=".1f"),
            ],
        )
    )


def questions_at_a_glance(rows: pd.DataFrame) -> alt.LayerChart:
    """Per question of the blog, its measured MiB/s beside each model's forecast, the link's and the
    device's ceilings as ticks, and the bound that binds named under the question.

    ``rows`` is :func:`iscsi_report.analyses.conclusions.question_rows`: the values the page glues.
    """
    frame = rows.assign(binding_line="bound: " + rows["binding"])
    frame = frame.assign(row=_row_label(frame, "question", "binding_line")).sort_values("order")
    order = list(dict.fromkeys(frame["row"]))
    estimates = frame[frame["kind"] == "throughput"]
    estimates = estimates.assign(
        size=[MEASURED_SIZE if s == conclusions.MEASURED else MODEL_SIZE for s in estimates["series"]]
    )
    ceilings = frame[frame["kind"] == "ceiling"]
    names = list(dict.fromkeys(ceilings["series"]))
    ticks = (
        alt.Chart(ceilings)
        .mark_tick(thickness=3, size=ROW_HEIGHT * 0.6)
        .encode(
            y=_y(order),
            x=alt.X("mib_per_s:Q", title=X_MIB_PER_S),
            fill=alt.Fill(
                "series:N",
                title="ceiling",
                scale=alt.Scale(domain=names, range=[CEILING_COLOURS.get(n, "#888888") for n in names]),
                legend=alt.Legend(symbolType="square"),
            ),
            tooltip=[
                alt.Tooltip("series:N", title="ceiling"),
                alt.Tooltip("mib_per_s:Q", title=X_MIB_PER_S, format=".1f"),
            ],
        )
    )
    points = _points(estimates, order, X_MIB_PER_S, "mib_per_s")
    interval = _interval(estimates, order, "mib_per_s", X_MIB_PER_S, "lo_mib_per_s", "hi_mib_per_s")
    return (ticks + interval + points).properties(width=WIDTH, height=ROW_HEIGHT * len(order))


def _gain_bounds(row: pd.Series) -> tuple[float, float]:
    """The fitted interval of an upgrade's MiB/s after it, as gains over the MiB/s before (NaN if none)."""
    before = float(row["before_mib_per_s"])
    if not (before > 0 and math.isfinite(row["after_lo_mib_per_s"])):
        return math.nan, math.nan
    return (row["after_lo_mib_per_s"] / before - 1) * 100, (row["after_hi_mib_per_s"] / before - 1) * 100


def upgrade_gains(estimates: pd.DataFrame, bindings: Mapping[str, str]) -> alt.LayerChart:
    """Gain of each upgrade per source (the fitted model with its interval), the binding bound named
    under the upgrade; a source that gives no value for an upgrade draws nothing there.

    ``estimates`` is :attr:`iscsi_report.analyses.conclusions.Reconciliation.estimates`, ``bindings``
    the bound in words per upgrade key.
    """
    shown = estimates.dropna(subset=["gain_pct"])
    bounds = [_gain_bounds(r) for _, r in shown.iterrows()]
    frame = shown.assign(
        series=shown["source"],
        binding_line=["bound: " + bindings.get(k, "") for k in shown["upgrade"]],
        gain_lo_pct=[b[0] for b in bounds],
        gain_hi_pct=[b[1] for b in bounds],
        size=[MEASURED_SIZE if s == conclusions.PUBLISHED else MODEL_SIZE for s in shown["source"]],
    )
    frame = frame.assign(row=_row_label(frame, "label", "binding_line"))
    order = list(dict.fromkeys(frame["row"]))
    points = _points(frame, order, X_GAIN, "gain_pct")
    interval = _interval(frame, order, "gain_pct", X_GAIN, "gain_lo_pct", "gain_hi_pct")
    zero = (
        alt.Chart(pd.DataFrame({"gain_pct": [0.0]}))
        .mark_rule(color="#888888")
        .encode(x=alt.X("gain_pct:Q", title=X_GAIN))
    )
    return (zero + interval + points).properties(width=WIDTH, height=ROW_HEIGHT * len(order))
