"""Charts of the model and projections chapters: stacked latency terms, trips, estimate vs measured."""

from __future__ import annotations

import altair as alt
import pandas as pd

from iscsi_report.core.model import TERM_NAMES

WIDTH = 520
BAR_HEIGHT = 22


def latency_terms(terms: pd.DataFrame, row: str = "configuration") -> alt.Chart:
    """One horizontal bar per ``row`` value, stacked by term in exchange order (ms)."""
    order = {name: i for i, name in enumerate(TERM_NAMES)}
    data = terms.assign(
        term_order=terms["term"].map(order),
        term_label=terms["term"].str.removesuffix("_ms").str.replace("_", " "),
    )
    labels = [t.removesuffix("_ms").replace("_", " ") for t in TERM_NAMES]
    n_rows = max(1, data[row].nunique())
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y(f"{row}:N", title=None, sort=None),
            x=alt.X("sum(ms):Q", title="time per write (ms)"),
            color=alt.Color("term_label:N", title="term", sort=labels, scale=alt.Scale(scheme="tableau10")),
            order=alt.Order("term_order:Q"),
            tooltip=[f"{row}:N", "term_label:N", alt.Tooltip("ms:Q", format=".3f")],
        )
        .properties(width=WIDTH, height=BAR_HEIGHT * n_rows)
    )


def one_way_trips(exchange: pd.DataFrame) -> alt.Chart:
    """One-way network trips per write against block size, one line per configuration."""
    return (
        alt.Chart(exchange)
        .mark_line(point=True)
        .encode(
            x=alt.X("bs_kib:Q", scale=alt.Scale(type="log", base=2), title="block size (KiB, log2)"),
            y=alt.Y("one_way_trips:Q", title="one-way trips per write"),
            color=alt.Color("configuration:N"),
        )
        .properties(width=WIDTH, height=200)
    )


def estimate_vs_measured(compare: pd.DataFrame) -> alt.Chart:
    """Estimated MiB/s (blog inputs, measured inputs) and measured MiB/s per configuration."""
    keys = ["max_outstanding_r2t", "network", "device"]
    long = compare.melt(
        id_vars=keys,
        value_vars=["mib_per_s_blog", "mib_per_s_measured", "measured_mib_per_s_measured"],
        var_name="series",
        value_name="mib_per_s",
    )
    long["series"] = long["series"].map(
        {
            "mib_per_s_blog": "estimate, blog inputs",
            "mib_per_s_measured": "estimate, measured inputs",
            "measured_mib_per_s_measured": "measured (fio)",
        }
    )
    long["configuration"] = (
        "R2T=" + long["max_outstanding_r2t"].astype(str) + ", " + long["network"] + ", " + long["device"]
    )
    return (
        alt.Chart(long.dropna(subset=["mib_per_s"]))
        .mark_point(filled=True, size=70)
        .encode(
            y=alt.Y("configuration:N", title=None, sort=None),
            x=alt.X("mib_per_s:Q", title="throughput (MiB/s)", scale=alt.Scale(zero=True)),
            color=alt.Color("series:N", title=None),
            shape=alt.Shape("series:N", title=None),
        )
        .properties(width=WIDTH, height=BAR_HEIGHT * max(1, long["configuration"].nunique()))
    )
