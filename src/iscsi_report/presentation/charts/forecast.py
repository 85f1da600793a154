"""Charts of the forecast chapter: each method's median error per group of targets."""

from __future__ import annotations

import altair as alt
import pandas as pd

WIDTH = 480


def errors_by_group(summary: pd.DataFrame, methods: tuple[str, ...]) -> alt.Chart:
    """Grouped horizontal bars: each method's median absolute error (per cent) in each group of targets."""
    tidy = summary.melt(
        id_vars=["group", "targets"], value_vars=list(methods), var_name="method", value_name="pct"
    )
    order = list(summary["group"])
    return (
        alt.Chart(tidy)
        .mark_bar()
        .encode(
            y=alt.Y("group:N", sort=order, title=None),
            yOffset=alt.YOffset("method:N", sort=list(methods)),
            x=alt.X("pct:Q", title="median absolute error of the mean write latency (%)"),
            color=alt.Color(
                "method:N", sort=list(methods), title="method", legend=alt.Legend(orient="bottom")
            ),
            tooltip=[
                alt.Tooltip("group:N", title="what differs from today"),
                alt.Tooltip("method:N", title="method"),
                alt.Tooltip("pct:Q", title="median error (%)", format=".2f"),
                alt.Tooltip("targets:Q", title="configurations forecast"),
            ],
        )
        .properties(width=WIDTH)
    )
