"""Charts of the real iSCSI lab chapters: PDU timelines, latency against delay, held-out errors."""

from __future__ import annotations

import altair as alt
import pandas as pd

WIDTH = 520
EVENT_ORDER = ["command", "r2t", "data_out", "response"]


def pdu_timeline(events: pd.DataFrame) -> alt.Chart:
    """Each PDU of one write (time from the command vs byte offset), one panel per ``write`` label."""
    data = events.assign(offset_kib=events["offset_kib"].fillna(0.0))
    return (
        alt.Chart(data)
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("time_ms:Q", title="time since the command, at the initiator (ms)"),
            y=alt.Y("offset_kib:Q", title="burst offset (KiB)"),
            color=alt.Color("event:N", sort=EVENT_ORDER, title="PDU"),
            shape=alt.Shape("event:N", sort=EVENT_ORDER, title="PDU"),
            tooltip=["write:N", "event:N", alt.Tooltip("time_ms:Q", format=".3f"), "offset_kib:Q"],
        )
        .properties(width=WIDTH, height=160)
        .facet(row=alt.Row("write:N", title=None))
    )


def latency_vs_delay(lines: pd.DataFrame) -> alt.Chart:
    """Measured median latency (points) and the model (lines) against one-way delay, per bs and window."""
    data = lines.assign(
        bs=(lines["bs_bytes"] // 1024).astype(str) + " KiB", window=lines["r2t_window"].astype(str)
    )
    base = alt.Chart(data).encode(
        x=alt.X("one_way_delay_ms:Q", title="one-way delay set on the delay line (ms)"),
        color=alt.Color("window:N", title="R2T window"),
    )
    points = base.mark_point(filled=True).encode(
        y=alt.Y("measured_ms:Q", title="per-write latency (ms)"),
        tooltip=["bs:N", "window:N", "one_way_delay_ms:Q", alt.Tooltip("measured_ms:Q", format=".2f")],
    )
    model_line = base.mark_line().encode(y="predicted_ms:Q")
    return (
        alt.layer(points, model_line)
        .properties(width=230, height=150)
        .facet(
            facet=alt.Facet(
                "bs:N", title=None, sort=sorted(data["bs"].unique(), key=lambda s: int(s.split()[0]))
            ),
            columns=2,
        )
        .resolve_scale(y="independent")
    )


def reads_vs_writes(table: pd.DataFrame) -> alt.Chart:
    """Median latency of reads and writes against one-way delay, one line per block size."""
    data = table.assign(bs=(table["bs_bytes"] // 1024).astype(str) + " KiB")
    return (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("one_way_delay_ms:Q", title="one-way delay (ms)"),
            y=alt.Y("latency_ms:Q", title="per-operation latency (ms)", scale=alt.Scale(type="log")),
            color=alt.Color(
                "bs:N", title="block size", sort=sorted(data["bs"].unique(), key=lambda s: int(s.split()[0]))
            ),
            strokeDash=alt.StrokeDash("rw:N", title="operation"),
            tooltip=["rw:N", "bs:N", "one_way_delay_ms:Q", alt.Tooltip("latency_ms:Q", format=".2f")],
        )
        .properties(width=WIDTH, height=260)
    )


def held_out_errors(summary: pd.DataFrame) -> alt.Chart:
    """Median absolute held-out error per fold type and method (grouped bars, one group per fold type)."""
    return (
        alt.Chart(summary)
        .mark_bar()
        .encode(
            y=alt.Y("fold_kind:N", title=None),
            yOffset=alt.YOffset("method:N"),
            x=alt.X("median_abs_error_pct:Q", title="median absolute held-out error (%)"),
            color=alt.Color(
                "method:N", title="method", legend=alt.Legend(orient="bottom", columns=1, labelLimit=0)
            ),
            tooltip=[
                alt.Tooltip("fold_kind:N", title="held out"),
                alt.Tooltip("method:N", title="method"),
                alt.Tooltip("median_abs_error_pct:Q", title="median absolute error (%)", format=".2f"),
            ],
        )
        .properties(width=WIDTH - 120, height=alt.Step(9))
    )


def confirmation_scatter(pred: pd.DataFrame, method: str) -> alt.Chart:
    """Predicted vs measured per-write latency on the confirmation sweep, log axes, with y = x."""
    t = pred[pred["method"] == method].assign(
        block_kib=lambda d: d["bs_bytes"] // 1024,
        segment_kib=lambda d: d["max_recv_data_segment_bytes"] // 1024,
    )
    lo = float(min(t["measured_ms"].min(), t["predicted_ms"].min())) * 0.9
    hi = float(max(t["measured_ms"].max(), t["predicted_ms"].max())) * 1.1
    scale = alt.Scale(type="log", domain=[lo, hi])
    diagonal = (
        alt.Chart(
            pd.DataFrame(
                {"measured_ms": [lo, hi], "predicted_ms": [lo, hi], "line": "prediction = measurement"}
            )
        )
        .mark_line(color="#888", strokeDash=[4, 4])
        .encode(
            x=alt.X("measured_ms:Q", scale=scale),
            y=alt.Y("predicted_ms:Q", scale=scale),
            tooltip=[alt.Tooltip("line:N", title="dashed line")],
        )
    )
    points = (
        alt.Chart(t)
        .mark_point(filled=True, size=50)
        .encode(
            x=alt.X("measured_ms:Q", scale=scale, title="measured per-write latency (ms)"),
            y=alt.Y("predicted_ms:Q", scale=scale, title="predicted (ms)"),
            color=alt.Color("one_way_delay_ms:O", title="one-way delay (ms)"),
            shape=alt.Shape("segment_kib:O", title="segment (KiB)"),
            tooltip=[
                alt.Tooltip("one_way_delay_ms:Q", title="one-way delay (ms)"),
                alt.Tooltip("block_kib:Q", title="block (KiB)"),
                alt.Tooltip("r2t_window:Q", title="R2T window"),
                alt.Tooltip("segment_kib:Q", title="segment (KiB)"),
                alt.Tooltip("measured_ms:Q", title="measured (ms)", format=".2f"),
                alt.Tooltip("predicted_ms:Q", title="predicted (ms)", format=".2f"),
                alt.Tooltip("error_pct:Q", title="error (%)", format="+.1f"),
            ],
        )
    )
    return (points + diagonal).properties(width=WIDTH - 160, height=WIDTH - 160)
