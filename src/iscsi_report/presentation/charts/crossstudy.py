"""Charts of the cross-study chapter: the SCST roofline, reply-time agreement, and the four bounds.

Inputs are the small frames built by :mod:`iscsi_report.analyses.crossstudy` (a few hundred rows at most);
charts are static (rendered to SVG by vl-convert), so no selections or tooltips are needed.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
from altair.typing import ChartType

WIDTH = 420
HEIGHT = 280
LABEL_STEP = 0.55  # vertical spacing of crossover labels on the log IOPS axis
MAX_ROWS = 500
BOUNDS_X_MAX = 1.2
ISO_LATENCIES_MS = (
    0.1,
    1.0,
    10.0,
    100.0,
)  # charts are rendered offline; anything bigger should be aggregated first
SIZE_AXIS = alt.X(
    "size_bytes:Q",
    scale=alt.Scale(type="log", base=2),
    title="read size (bytes, log2)",
)


def _check_rows(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """Refuse frames too large for an inline SVG chart (aggregate them first)."""
    if len(df) > MAX_ROWS:
        raise ValueError(f"{name}: {len(df)} rows; aggregate to at most {MAX_ROWS} before charting")
    return df


def roofline_chart(
    ceilings: pd.DataFrame, peaks: pd.DataFrame, crossovers: pd.DataFrame, source: str = ""
) -> ChartType:
    """IOPS against read size: network and CPU ceilings as lines, measured peaks (cited ``source``) as
    points, and a vertical rule at each mode's CPU/network crossover size."""
    _check_rows(ceilings, "ceilings")
    y = alt.Y("iops:Q", scale=alt.Scale(type="log"), title="reads per second (IOPS, log)")
    peak_title = f"measured peak ({source})" if source else "measured peak"
    lines = (
        alt.Chart(ceilings)
        .mark_line(strokeDash=[5, 3])
        .encode(x=SIZE_AXIS, y=y, color=alt.Color("ceiling:N", title="ceiling"))
    )
    points = (
        alt.Chart(_check_rows(peaks, "peaks"))
        .mark_point(filled=True, size=60, color="black")
        .encode(x=SIZE_AXIS, y=y, shape=alt.Shape("mode:N", title=peak_title))
    )
    cross = crossovers.dropna(subset=["crossover_size_bytes"]).assign(
        label=lambda d: (
            d["mode"].map({"nodelay": "TCP_NODELAY", "adaptive": "Adaptive Nagle"})
            + " crossover "
            + d["crossover_size_bytes"].round(0).astype(int).astype(str)
            + " B"
        )
    )
    rules = alt.Chart(cross).mark_rule(color="gray").encode(x="crossover_size_bytes:Q")
    text = (
        alt.Chart(cross)
        .mark_text(align="left", dx=4, fontSize=10)
        .encode(x="crossover_size_bytes:Q", y="label_iops:Q", text="label:N")
    )
    return alt.layer(lines, points, rules, text).properties(
        width=WIDTH, height=HEIGHT, title="SCST usermode, one session: ceilings and peaks"
    )


def reply_time_chart(reply: pd.DataFrame) -> alt.Chart:
    """Our network reply time minus the paper's, per read size, as a percentage of the paper's."""
    data = _check_rows(reply, "reply")
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X("size_bytes:O", title="read size (bytes)"),
            y=alt.Y("model_diff_pct:Q", title="model minus paper reply time (% of paper)"),
        )
        .properties(width=WIDTH, height=HEIGHT / 2, title="Network reply time: first principles vs the paper")
    )


def bounds_chart(bounds_long: pd.DataFrame) -> ChartType:
    """Achieved rate as a fraction of each known bound, one row per system/case; the bound the
    row's verdict names is drawn as a filled diamond, and the verdict is written at the right."""
    data = _check_rows(bounds_long, "bounds").assign(label=lambda d: d["system"] + ": " + d["case"])
    order = list(dict.fromkeys(data["label"]))
    y = alt.Y("label:N", title=None, sort=order, axis=alt.Axis(labelLimit=420))
    x = alt.X(
        "fraction:Q",
        title="achieved / bound (1 = at the bound)",
        scale=alt.Scale(domain=[0, BOUNDS_X_MAX]),
    )
    color = alt.Color("bound:N", title="bound", legend=alt.Legend(orient="bottom"))
    others = alt.Chart(data[~data["binding"]]).mark_point(size=60).encode(x=x, y=y, color=color)
    binding = (
        alt.Chart(data[data["binding"]])
        .mark_point(shape="diamond", filled=True, size=140)
        .encode(x=x, y=y, color=color)
    )
    names = (
        alt.Chart(data.drop_duplicates("label").assign(fraction=BOUNDS_X_MAX))
        .mark_text(align="left", dx=6, fontSize=10)
        .encode(x=x, y=y, text="binding_label:N")
    )
    one = alt.Chart(pd.DataFrame({"fraction": [1.0]})).mark_rule(color="black").encode(x="fraction:Q")
    return alt.layer(others, binding, one, names).properties(
        width=WIDTH, title="Each system against its ceilings (filled diamond: the ceiling its verdict names)"
    )


def _iso_latency_lines(in_flight_lo: float, in_flight_hi: float) -> pd.DataFrame:
    """Endpoints of constant-latency diagonals (IOPS = in flight / latency) across the x range."""
    rows = []
    for latency_ms in ISO_LATENCIES_MS:
        for n in (in_flight_lo, in_flight_hi):
            rows.append({"in_flight": n, "iops": n / (latency_ms / 1000.0), "latency": f"{latency_ms:g} ms"})
    return pd.DataFrame(rows)


def littles_law_chart(little: pd.DataFrame) -> ChartType:
    """Commands in flight against IOPS on log axes, with constant-latency diagonals; each point
    is labelled with the latency Little's law implies."""
    data = _check_rows(little, "little").assign(label=lambda d: d["latency_ms"].round(2).astype(str) + " ms")
    x = alt.X(
        "in_flight:Q",
        scale=alt.Scale(type="log"),
        title="commands in flight (log)",
        axis=alt.Axis(format="~s"),
    )
    y = alt.Y("iops:Q", scale=alt.Scale(type="log"), title="IOPS (log)", axis=alt.Axis(format="~s"))
    iso = _iso_latency_lines(float(data["in_flight"].min()) / 2, float(data["in_flight"].max()) * 2)
    diagonals = (
        alt.Chart(iso).mark_line(color="lightgray", strokeDash=[2, 2]).encode(x=x, y=y, detail="latency:N")
    )
    diagonal_names = (
        alt.Chart(iso.groupby("latency", as_index=False).last())
        .mark_text(align="left", dx=3, color="gray", fontSize=9)
        .encode(x=x, y=y, text="latency:N")
    )
    base = alt.Chart(data).encode(x=x, y=y)
    dots = base.mark_point(filled=True, size=60).encode(color=alt.Color("system:N", title="system"))
    labels = base.mark_text(align="left", dx=6, fontSize=10).encode(text="label:N")
    return alt.layer(diagonals, diagonal_names, dots, labels).properties(
        width=WIDTH, height=HEIGHT, title="Little's law: latency = in flight / IOPS"
    )
