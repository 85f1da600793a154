"""Charts of the storage chapter: throughput by block size, the latency fit, iostat request sizes."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
from altair.typing import ChartType

from iscsi_report.presentation.charts import theme

WIDTH = 260
HEIGHT = 180
BS_AXIS = alt.X("bs_kib:Q", scale=alt.Scale(type="log", base=2), title="block size (KiB, log2)")


def _by_kind(table: pd.DataFrame) -> dict[str, Any]:
    """Encodings that give each run kind (column ``kind``, words) its own series, when there are several."""
    if "kind" not in table or table["kind"].nunique() < 2:
        return {}
    return {
        "strokeDash": alt.StrokeDash("kind:N", title="run kind"),
        "shape": alt.Shape("kind:N", title="run kind"),
    }


def throughput_by_bs(table: pd.DataFrame, color: str = "device") -> alt.HConcatChart:
    """MiB/s and IOPS against block size, one line per ``color`` value and run kind, side by side."""
    kind = color if color in theme.COLOURS else "device"
    colour = theme.color(color, kind, table[color], title=color)
    base = alt.Chart(table).encode(x=BS_AXIS, color=colour, **_by_kind(table))
    mib = base.mark_line(point=True).encode(
        y=alt.Y("mib_per_s:Q", title="throughput (MiB/s)", scale=alt.Scale(zero=True))
    )
    iops = base.mark_line(point=True).encode(
        y=alt.Y("iops:Q", title="IOPS (log)", scale=alt.Scale(type="log"))
    )
    return alt.hconcat(
        mib.properties(width=WIDTH, height=HEIGHT), iops.properties(width=WIDTH, height=HEIGHT)
    )


def device_fit(points: pd.DataFrame, curves: pd.DataFrame) -> alt.Chart:
    """Measured per-op ms against block size with the fitted line and its band, per device."""
    data = pd.concat(
        [points[["device", "bs_kib", "op_ms"]].assign(layer="measured"), curves.assign(layer="fit")],
        ignore_index=True,
    )
    x = alt.X("bs_kib:Q", title="block size (KiB)")
    base = alt.Chart()
    colour = theme.color("device", "device", data["device"], legend=None)
    band = (
        base.mark_area(opacity=0.25)
        .encode(x=x, y="op_ms_lo:Q", y2="op_ms_hi:Q", color=colour)
        .transform_filter(alt.datum.layer == "fit")
    )
    line = (
        base.mark_line()
        .encode(x=x, y=alt.Y("op_ms:Q", title="time per write (ms)"), color=colour)
        .transform_filter(alt.datum.layer == "fit")
    )
    dots = (
        base.mark_point(filled=True, size=40, color="black")
        .encode(x=x, y="op_ms:Q")
        .transform_filter(alt.datum.layer == "measured")
    )
    return (
        alt.layer(band, line, dots, data=data)
        .properties(width=WIDTH, height=HEIGHT)
        .facet(facet=alt.Facet("device:N", title=None), columns=2)
        .resolve_scale(y="independent", x="independent")
    )


def request_size(requests: pd.DataFrame) -> ChartType:
    """Device write request size (iostat wareq-sz) against fio block size, with the y = x line."""
    data = requests.dropna(subset=["wareq_sz_kb"]).assign(
        bs_kib=lambda d: d["bs_bytes"] / 1024,
    )
    diag = pd.DataFrame({"bs_kib": sorted(data["bs_kib"].unique())})
    ref = alt.Chart(diag).mark_line(strokeDash=[4, 4], color="gray").encode(x=BS_AXIS, y=alt.Y("bs_kib:Q"))
    pts = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=BS_AXIS,
            y=alt.Y(
                "wareq_sz_kb:Q", scale=alt.Scale(type="log", base=2), title="device write request (KiB, log2)"
            ),
            color=theme.color("device", "device", data["device"]),
            strokeDash=alt.StrokeDash("scenario:N", title="scenario"),
        )
    )
    return alt.layer(ref, pts).properties(width=2 * WIDTH, height=HEIGHT)


def remote_vs_local(remote: pd.DataFrame, local: pd.DataFrame) -> alt.Chart:
    """MiB/s by block size of every remote scenario and the local runs of the same devices."""
    cols = ["scenario", "device", "bs_kib", "mib_per_s"]
    data = pd.concat([remote[cols], local[cols]], ignore_index=True)
    return (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=BS_AXIS,
            y=alt.Y("mib_per_s:Q", title="throughput (MiB/s, log)", scale=alt.Scale(type="log")),
            color=theme.color("device", "device", data["device"]),
            strokeDash=alt.StrokeDash("scenario:N", title="scenario"),
        )
        .properties(width=2 * WIDTH, height=HEIGHT + 40)
    )


PERCENTILE_ORDER = ["p50", "p90", "p99", "p99.9"]


def latency_percentiles(points: pd.DataFrame) -> alt.Chart:
    """Completion-latency percentiles of the local runs against block size, one panel per device.

    The percentile ids of the analyses (``p99_9``) are shown as people write them (``p99.9``).
    """
    shown = points.assign(percentile=points["percentile"].astype(str).str.replace("_", ".", regex=False))
    return (
        alt.Chart(shown)
        .mark_line(point=True)
        .encode(
            x=BS_AXIS,
            y=alt.Y("ms:Q", title="completion latency (ms, log)", scale=alt.Scale(type="log")),
            color=alt.Color("percentile:N", sort=PERCENTILE_ORDER, title="percentile"),
            shape=alt.Shape("source:N", title="computed from"),
            **({"strokeDash": alt.StrokeDash("kind:N", title="run kind")} if _by_kind(shown) else {}),
        )
        .properties(width=WIDTH, height=HEIGHT)
        .facet(facet=alt.Facet("device:N", title=None), columns=2)
        .resolve_scale(y="independent")
    )


def latency_cdf(cdf: pd.DataFrame) -> alt.Chart:
    """Share of writes completed within each latency (json+ bins), one line per fio run."""
    return (
        alt.Chart(cdf)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("lat_ms:Q", title="completion latency (ms, log)", scale=alt.Scale(type="log")),
            y=alt.Y("cumulative_pct:Q", title="writes completed (%)", scale=alt.Scale(domain=[0, 100])),
            color=theme.color("device", "device", cdf["device"]),
            detail="file:N",
        )
        .properties(width=2 * WIDTH, height=HEIGHT)
    )


def iostat_over_time(table: pd.DataFrame) -> alt.VConcatChart:
    """Write MiB/s and w_await of each iostat file's busiest device against time, one line per file."""
    base = alt.Chart(table).encode(
        x=alt.X("elapsed_s:Q", title="seconds since the first interval report"),
        color=theme.color("device", "device", table["device"]),
        detail="file:N",
    )
    mib = base.mark_line(point=True).encode(y=alt.Y("w_mib_per_s:Q", title="written (MiB/s)"))
    wait = base.mark_line(point=True).encode(y=alt.Y("w_await_ms:Q", title="w_await (ms)"))
    return alt.vconcat(
        mib.properties(width=2 * WIDTH, height=HEIGHT), wait.properties(width=2 * WIDTH, height=HEIGHT)
    )
