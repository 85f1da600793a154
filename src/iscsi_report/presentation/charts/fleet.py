"""Chart of the fleet chapter: modelled against measured MiB/s, one point per row, colour = binding bound."""

from __future__ import annotations

import altair as alt
import pandas as pd

from iscsi_report.core.model import BOUND_NAMES

SIZE = 420
BOUND_COLOURS = {"latency": "#4c78a8", "link": "#f58518", "device": "#9d755d", "cpu": "#e45756"}
PROVENANCE_SHAPES = {"measured": "circle", "emulated": "triangle-up", "reconstructed": "square"}


def modelled_vs_measured(table: pd.DataFrame) -> alt.LayerChart:
    """Measured (x) against modelled (y) MiB/s, log axes, the y = x line; rows lacking either left out."""
    both = table.dropna(subset=["modelled_mib_per_s", "measured_mib_per_s"])
    lo = float(min(both["modelled_mib_per_s"].min(), both["measured_mib_per_s"].min())) * 0.8
    hi = float(max(both["modelled_mib_per_s"].max(), both["measured_mib_per_s"].max())) * 1.25
    bounds = [b for b in BOUND_NAMES if b in set(both["binding"])]
    kinds = [k for k in PROVENANCE_SHAPES if k in set(both["provenance"])]
    scale = alt.Scale(type="log", domain=[lo, hi], nice=False)
    points = (
        alt.Chart(both)
        .mark_point(filled=True, size=70, opacity=0.8)
        .encode(
            x=alt.X("measured_mib_per_s:Q", title="measured (MiB/s)", scale=scale),
            y=alt.Y("modelled_mib_per_s:Q", title="modelled (MiB/s)", scale=scale),
            color=alt.Color(
                "binding:N",
                title="binding bound",
                scale=alt.Scale(domain=bounds, range=[BOUND_COLOURS[b] for b in bounds]),
            ),
            shape=alt.Shape(
                "provenance:N",
                title="provenance",
                scale=alt.Scale(domain=kinds, range=[PROVENANCE_SHAPES[k] for k in kinds]),
            ),
            tooltip=[
                "dataset:N",
                "configuration:N",
                "network:N",
                "device:N",
                alt.Tooltip("measured_mib_per_s:Q", format=".1f"),
                alt.Tooltip("modelled_mib_per_s:Q", format=".1f"),
                alt.Tooltip("error_pct:Q", format=".1f"),
            ],
        )
    )
    diagonal = (
        alt.Chart(pd.DataFrame({"mib_per_s": [lo, hi]}))
        .mark_line(color="#79706e", strokeDash=[4, 3])
        .encode(x="mib_per_s:Q", y="mib_per_s:Q")
    )
    return (diagonal + points).properties(width=SIZE, height=SIZE)
