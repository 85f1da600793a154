"""Chart of the tails chapter: forecast against measured p50 and p99, per configuration and method."""

from __future__ import annotations

import altair as alt
import pandas as pd

WIDTH = 260


def quantiles(scored: pd.DataFrame) -> alt.FacetChart:
    """Forecast against measured percentile (ms), a panel per percentile, colour by method, diagonal."""
    tidy = pd.concat(
        [
            scored.assign(
                percentile=name, measured_ms=scored[f"measured_{name}_ms"], forecast_ms=scored[f"{name}_ms"]
            )
            for name in ("p50", "p99")
        ]
    )[["percentile", "method", "jitter", "bs_bytes", "r2t_window", "measured_ms", "forecast_ms"]]
    points = (
        alt.Chart()
        .mark_point(filled=True, size=50, opacity=0.8)
        .encode(
            x=alt.X("measured_ms:Q", title="measured (ms)", scale=alt.Scale(type="log")),
            y=alt.Y("forecast_ms:Q", title="forecast (ms)", scale=alt.Scale(type="log")),
            color=alt.Color("method:N", title="method", legend=alt.Legend(orient="bottom")),
            tooltip=[
                alt.Tooltip("method:N", title="method"),
                alt.Tooltip("jitter:N", title="jitter shape"),
                alt.Tooltip("bs_bytes:Q", title="block size (bytes)", format=","),
                alt.Tooltip("r2t_window:Q", title="R2T window"),
                alt.Tooltip("measured_ms:Q", title="measured (ms)", format=".2f"),
                alt.Tooltip("forecast_ms:Q", title="forecast (ms)", format=".2f"),
            ],
        )
    )
    diagonal = (
        alt.Chart().mark_line(color="grey", strokeDash=[4, 4]).encode(x="measured_ms:Q", y="measured_ms:Q")
    )
    return (
        alt.layer(diagonal, points, data=tidy)
        .properties(width=WIDTH, height=WIDTH)
        .facet(column=alt.Column("percentile:N", title=None))
    )
