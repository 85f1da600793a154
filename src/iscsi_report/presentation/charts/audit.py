"""Chart of the reproduction audit: how many published numbers earned each verdict, and on what basis."""

from __future__ import annotations

import altair as alt
import pandas as pd

WIDTH = 420
TOTAL = "total"  # the column of :func:`iscsi_report.analyses.blog_audit.verdict_counts` summing a row


def verdict_bars(counts: pd.DataFrame) -> alt.Chart:
    """Horizontal bars of numbers per verdict (verdicts in the audit's order), split by the basis
    of the recomputation (raw files, manifest, model, nothing)."""
    order = list(counts["verdict"])
    long = counts.drop(columns=[TOTAL]).melt(id_vars="verdict", var_name="basis", value_name="numbers")
    long = long[long["numbers"] > 0]
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            y=alt.Y("verdict:N", sort=order, title=None),
            x=alt.X("sum(numbers):Q", title="published numbers"),
            color=alt.Color("basis:N", title="recomputed from", legend=alt.Legend(orient="bottom")),
            order=alt.Order("basis:N"),
            tooltip=[
                alt.Tooltip("verdict:N", title="verdict"),
                alt.Tooltip("basis:N", title="recomputed from"),
                alt.Tooltip("numbers:Q", title="numbers"),
            ],
        )
        .properties(width=WIDTH)
    )
