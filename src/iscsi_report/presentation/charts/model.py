"""Charts of the model and projections chapters: stacked latency terms, trips, estimate vs measured."""

from __future__ import annotations

import altair as alt
import pandas as pd

from iscsi_report.core.model import TERM_NAMES

WIDTH = 520
BAR_HEIGHT = 22


# Each latency term in words, in exchange order: the legend names every term a bar holds.
TERM_WORDS: dict[str, str] = {
    "command_one_way_ms": "command: one-way trip to the target",
    "unsolicited_transmit_ms": "unsolicited data: time on the wire",
    "r2t_one_way_ms": "R2T: one-way trips back to the initiator",
    "data_one_way_ms": "solicited data: one-way trips",
    "r2t_processing_ms": "R2T: processing at target and initiator",
    "solicited_transmit_ms": "solicited data: time on the wire",
    "status_one_way_ms": "status: one-way trip back",
    "device_ms": "device: writing the data",
    "cpu_ms": "CPU: host processing",
}
TERM_LEGEND_COLUMNS = 2  # words are long: two columns under the bars keep every label whole
# Ten categorical colours (Tableau 10) for at most nine terms: no two terms share a colour.
TERM_COLOURS = (
    "#4c78a8",
    "#f58518",
    "#e45756",
    "#72b7b2",
    "#54a24b",
    "#eeca3b",
    "#b279a2",
    "#ff9da6",
    "#9d755d",
    "#bab0ac",
)


def term_words(term: str) -> str:
    """A latency term's name in words (the column name with its unit dropped, for an unknown term)."""
    return TERM_WORDS.get(term, term.removesuffix("_ms").replace("_", " "))


def term_legend(terms: pd.Series) -> list[str]:
    """The legend's entries: every term ``terms`` holds, in words, in exchange order."""
    order = {name: i for i, name in enumerate(TERM_NAMES)}
    present = sorted(set(terms), key=lambda t: (order.get(t, len(order)), t))
    return [term_words(t) for t in present]


def latency_terms(terms: pd.DataFrame, row: str = "configuration") -> alt.Chart:
    """One horizontal bar per ``row`` value, stacked by term in exchange order (ms); the legend under
    the bars names every term in words, whole (no entry or label cut, whatever the bars' height)."""
    order = {name: i for i, name in enumerate(TERM_NAMES)}
    data = terms.assign(term_order=terms["term"].map(order), term_label=terms["term"].map(term_words))
    domain = term_legend(terms["term"])
    colours = list(TERM_COLOURS[: len(domain)]) if len(domain) <= len(TERM_COLOURS) else None
    scale = (
        alt.Scale(domain=domain, range=colours) if colours else alt.Scale(domain=domain, scheme="category20")
    )
    legend = alt.Legend(orient="bottom", columns=TERM_LEGEND_COLUMNS, labelLimit=0, symbolLimit=0)
    n_rows = max(1, data[row].nunique())
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y(f"{row}:N", title=None, sort=None),
            x=alt.X("sum(ms):Q", title="time per write (ms)"),
            color=alt.Color("term_label:N", title="term", sort=domain, scale=scale, legend=legend),
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
