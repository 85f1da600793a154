"""Chart of the upgrade chapter: each scenario's forecast throughput, its interval and binding bound."""

from __future__ import annotations

import altair as alt
import pandas as pd

from iscsi_report.core.units import BYTES_PER_MIB

WIDTH = 480


def scenarios(table: pd.DataFrame, bs_bytes: int) -> alt.LayerChart | alt.FacetChart:
    """Horizontal bars of MiB/s per scenario, coloured by the binding bound, with the 95 % interval.

    The interval is the latency interval turned into throughput at the scenario's queue depth
    (MiB/s scales as 1 / latency while latency binds; a ceiling that binds has no width of its own).
    """
    data = table.assign(
        low_mib_per_s=table["mib_per_s"] * table["op_ms"] / table["ci_high_ms"],
        high_mib_per_s=table["mib_per_s"] * table["op_ms"] / table["ci_low_ms"].where(table["ci_low_ms"] > 0),
        bs_mib=bs_bytes / BYTES_PER_MIB,
    )
    order = list(table["scenario"])
    base = alt.Chart(data).encode(y=alt.Y("scenario:N", sort=order, title=None))
    bars = base.mark_bar().encode(
        x=alt.X("mib_per_s:Q", title="forecast throughput (MiB/s)"),
        color=alt.Color("binding:N", title="binding bound", legend=alt.Legend(orient="bottom")),
        tooltip=[
            alt.Tooltip("scenario:N", title="scenario"),
            alt.Tooltip("what:N", title="what changes"),
            alt.Tooltip("op_ms:Q", title="time per write (ms)", format=".2f"),
            alt.Tooltip("mib_per_s:Q", title="throughput (MiB/s)", format=".1f"),
            alt.Tooltip("gain_pct:Q", title="change against today (%)", format="+.1f"),
            alt.Tooltip("binding:N", title="binding bound"),
        ],
    )
    interval = base.mark_rule(color="black").encode(x="low_mib_per_s:Q", x2="high_mib_per_s:Q")
    return alt.layer(bars, interval).properties(width=WIDTH)
