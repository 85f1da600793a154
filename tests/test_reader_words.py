"""Tables and charts speak words: ids for code turn into words through the column registry, and
numbers are formatted by what they count (issue 25)."""

from __future__ import annotations

import json
import re

import altair as alt
import nbformat
import pandas as pd
import pytest
from e2e.reader_text import reader_ids, table_texts

from iscsi_report.presentation import columns, report, tables


def _page(*outputs: str) -> nbformat.NotebookNode:
    """A notebook whose one cell shows each of ``outputs`` as HTML."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": o}) for o in outputs]
    nb.cells = [cell]
    return nb


def test_glue_keys_stay_in_the_csv_but_never_reach_the_page() -> None:
    answers = pd.DataFrame(
        {
            "glue_key": ["q1_op_ms", "q1_cpu_share_pct"],
            "question": [1, 1],
            "quantity": ["estimated op ms", "share of op time: CPU (%)"],
            "blog_inputs": [70.1, 3.2],
        }
    )
    shown = tables.render(answers, "blog_questions")
    assert "q1_" not in shown and "Glue key" not in shown
    assert "estimated op ms" in shown
    before = "<table><tr><th>Key</th></tr><tr><td>q1_op_ms</td></tr></table>"  # what the page showed
    assert reader_ids(_page(before)) == {"q1_op_ms"}


@pytest.mark.parametrize(
    ("cell", "words"),
    [
        ("latency_device_free", "latency and device free"),
        ("nested_selection", "variant chosen by nested validation"),
        ("cpu_ms", "Target CPU time"),
        ("p99_9_ms", "p99.9"),
        ("slope_us_per_kib", "Slope (µs per KiB)"),
        ("one_way_ms=1, cpu_ms=1", "one-way latency=1, target CPU time=1"),
        ("as latency_device_free, plus a constant", "as latency and device free, plus a constant"),
    ],
)
def test_ids_in_cells_become_words(cell: str, words: str) -> None:
    assert columns.value_words(cell) == words
    shown = list(table_texts(tables.render(pd.DataFrame({"variant": [cell]}), "t")))
    assert shown == ["Variant", words]
    assert not reader_ids(_page(tables.render(pd.DataFrame({"variant": [cell]}), "t")))


@pytest.mark.parametrize(
    "text",
    [
        "fio.wireless.blockdev_hdd.64k.mib_per_s",
        "published fio MiB/s of each run (fio.*.mib_per_s)",
        "iostat/blockdev_hdd.txt",
        "sessions x cmds_max",
        "TCP_NODELAY",
    ],
)
def test_references_paths_and_setting_names_are_kept(text: str) -> None:
    assert columns.value_words(text) == text


def test_every_registered_id_reads_as_words() -> None:
    for id_, words in columns.VALUE_WORDS.items():
        assert not columns.MACHINE_ID.fullmatch(words), id_


def test_chart_fields_shown_under_their_headers_in_axes_legends_and_tooltips() -> None:
    data = pd.DataFrame({"bs_kib": [4, 8], "p99_9_ms": [1.0, 2.0], "config": ["a", "b"]})
    chart = (
        alt.Chart(data)
        .mark_point()
        .encode(
            x="bs_kib:Q",
            y=alt.Y("p99_9_ms:Q", title=None),
            color="config:N",
            tooltip=["bs_kib:Q", "p99_9_ms:Q", alt.Tooltip("config:N", title="setup")],
        )
    )
    spec = report.titled(report.spec_dict(chart))
    enc = spec["encoding"]
    assert enc["x"]["title"] == "Block size (KiB)"
    assert enc["y"]["title"] is None  # the chart's own choice: no title
    assert [t["title"] for t in enc["tooltip"]] == ["Block size (KiB)", "p99.9 (ms)", "setup"]
    page = report.chart_html(chart, caption="c", alt="a")
    payload = json.loads(re.search(r'class="iscsi-chart-spec">(.*?)</script>', page, re.S).group(1))
    assert payload["encoding"]["tooltip"][1]["title"] == "p99.9 (ms)"
    assert not reader_ids(_page(page))


def test_a_bare_tooltip_field_is_found_by_the_page_check() -> None:
    spec = {"mark": "point", "encoding": {"tooltip": [{"field": "p99_9_ms", "type": "quantitative"}]}}
    page = f'<script type="application/json" class="iscsi-chart-spec">{json.dumps(spec)}</script>'
    assert reader_ids(_page(page)) == {"p99_9_ms"}


# ---- numbers by what they count (issue 25, item 2) ----


def test_counts_show_whole_numbers_without_decimals() -> None:
    in_flight = columns.spec_for("in_flight")
    assert columns.format_column([100.0, 34816.0, 125.70625], in_flight) == ["100", "34,816", "125.706"]
    assert columns.format_column([3.0, 12.0], columns.spec_for("n_runs")) == ["3", "12"]


def test_years_have_no_thousands_separator() -> None:
    assert columns.format_column([2017.0, None, 2009.0], columns.spec_for("year")) == ["2017", None, "2009"]


def test_float_noise_shows_as_zero_but_small_values_stay() -> None:
    spec = columns.spec_for("difference")
    assert columns.format_column([-3.3e-16, 1.5, 0.1 + 0.2 - 0.3], spec) == ["0", "1.5", "0"]
    assert columns.format_column([5e-6, 0.016], columns.spec_for("tol")) == ["0.000005", "0.016"]


def test_percentages_carry_their_unit() -> None:
    assert columns.header("gain_pct") == "Gain (%)"
    assert columns.header("share_pct") == "Share (%)"
