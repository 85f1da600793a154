"""Tables for people: human headers with units, number formats, dashes for missing values, key
columns first, wide tables scrolling with a sticky first column, long ones collapsed, and every
header and cell still escaped (presentation/columns.py, presentation/tables.py, report.html_table)."""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iscsi_report.analyses import blog_audit, storage
from iscsi_report.core import markup
from iscsi_report.core.errors import ReportError
from iscsi_report.core.measurements import open_dataset
from iscsi_report.core.units import BYTES_PER_MIB
from iscsi_report.pipeline import assets
from iscsi_report.presentation import columns, report, tables

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw" / "blog-2023"
PUBLISHED = ROOT / "data" / "published"
SNAKE = re.compile(r"[A-Za-z0-9]+(_[A-Za-z0-9]+)+")
MISSING_WORDS = ("nan", "NaN", "None", "<NA>", "NaT")


def headers(out: str, table_id: str | None = None) -> list[str]:
    """Header texts of the first table in ``out`` (or of the table with that id), unescaped."""
    if table_id:
        out = out[out.index(f'id="{table_id}"') :]
    thead = out[out.index("<thead>") : out.index("</thead>")]
    return [html.unescape(h) for h in re.findall(r"<th(?: [^>]*)?>(.*?)</th>", thead)]


def body_rows(out: str, table_id: str) -> list[list[str]]:
    """Cell texts of each body row of the table with that id, unescaped."""
    start = out.index(f'id="{table_id}"')
    body = out[out.index("<tbody>", start) : out.index("</tbody>", start)]
    return [
        [html.unescape(c.replace("<wbr>", "")) for c in re.findall(r"<td(?: [^>]*)?>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


@pytest.fixture(scope="module")
def real_frames() -> dict[str, pd.DataFrame]:
    """Frames the chapters show, computed from the committed blog dataset."""
    runs = storage.fio_runs(open_dataset(RAW))
    audit = blog_audit.audit_frame(blog_audit.run(RAW, PUBLISHED))
    return {
        "remote_throughput": storage.remote_throughput(runs),
        "local_throughput": storage.local_throughput(runs),
        "fio_grouping": storage.grouping_table(runs),
        "audit": audit,
        "audit_mismatches": blog_audit.mismatches(audit),
        "audit_reconstructed": blog_audit.reconstructed_by_section(audit),
    }


def test_real_frames_show_human_headers_with_units(real_frames: dict[str, pd.DataFrame]) -> None:
    for name, df in real_frames.items():
        out = report.html_table(df, name)
        for table_id in re.findall(r'<table[^>]* id="([^"]+)"', out):
            shown = headers(out, table_id)
            assert shown, name
            assert not [h for h in shown if SNAKE.fullmatch(h) or "_" in h], (name, shown)
    remote = report.html_table(real_frames["remote_throughput"], "remote_throughput")
    assert {"Throughput (MiB/s)", "Block size (KiB)", "MaxOutstandingR2T", "Network"} <= set(headers(remote))
    audit, per_section = real_frames["audit"], real_frames["audit_reconstructed"]
    assert per_section["numbers"].sum() == (audit["verdict"] == "consistent with the reconstruction").sum()
    assert headers(report.html_table(real_frames["audit_mismatches"], "m"))[:3] == [
        "Verdict",
        "Published number",
        "Explanation",
    ]


def test_registry_titles_carry_no_machine_name() -> None:
    assert not [name for name, spec in columns.SPECS.items() if "_" in spec.title or not spec.title.strip()]


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("queue_wait_ms", "Queue wait (ms)"),
        ("mean_rtt_us", "Mean RTT (µs)"),
        ("n_retries", "Number of retries"),
        ("link_mbps", "Link (Mbit/s)"),
        ("payload_bytes", "Payload (bytes)"),
        ("peak_bytes_per_s", "Peak (MiB/s)"),
        ("retrans_pct", "Retrans (%)"),
        ("frame_p99_9_ms", "Frame p99.9 (ms)"),
        ("cpu_clock_ghz", "CPU clock (GHz)"),
        ("max_abs_error_pct", "Max absolute error (%)"),
        ("ms_total", "Ms total"),
        ("Odd_Name", "Odd name"),
        ("100 Mbit/s", "100 Mbit/s"),
        ("rate at depth 4", "Rate at depth 4"),
    ],
)
def test_unknown_names_fall_back_to_words_and_unit(name: str, title: str) -> None:
    assert columns.header(name) == title


def test_names_extending_a_registered_one_keep_its_header_and_unit() -> None:
    assert columns.header("published_op_ms") == "Published time per write (ms)"
    assert columns.header("device_ms_lo") == "Device time, low (ms)"
    assert columns.header("mib_per_s_blog") == "Throughput, blog (MiB/s)"
    assert columns.header("wireless_minus_wired_one_way_ms") == "Wireless minus wired one-way latency (ms)"


def test_byte_rates_are_shown_in_mib_per_s() -> None:
    df = pd.DataFrame(
        {"bw_bytes_per_s": [2 * BYTES_PER_MIB, 3.5 * BYTES_PER_MIB], "other_bytes_per_s": [BYTES_PER_MIB, 0]}
    )
    out = report.html_table(df, "rates")
    assert headers(out) == ["Throughput (MiB/s)", "Other (MiB/s)"]
    assert body_rows(out, "T_rates") == [["2.0", "1"], ["3.5", "0"]]  # one number of decimals per column


def test_missing_values_show_an_em_dash_and_a_note_under_the_table() -> None:
    df = pd.DataFrame(
        {
            "network": ["wired", None, "", "wireless"],
            "rtt_ms": [0.25, math.nan, 1.5, np.nan],
            "count": pd.array([1, pd.NA, 3, 4], dtype="Int64"),
        }
    )
    out = report.html_table(df, "gaps")
    rows = body_rows(out, "T_gaps")
    assert rows == [["wired", "0.25", "1"], ["—", "—", "—"], ["—", "1.50", "3"], ["wireless", "—", "4"]]
    text = re.sub(r"<[^>]+>", " ", out)
    assert not [w for w in MISSING_WORDS if re.search(rf"(?<![\w<]){re.escape(w)}(?!\w)", text)]
    assert out.endswith('<p class="iscsi-table-note">—: not applicable or not measured</p>')
    custom = report.html_table(df, "gaps", dash_note="no reply <within> 1 s")
    assert custom.endswith("—: no reply &lt;within&gt; 1 s</p>")
    assert "iscsi-table-note" not in report.html_table(df.iloc[[0]], "full")


def test_number_formats_per_column() -> None:
    df = pd.DataFrame(
        {
            "iodepth": [16.0, 32.0, 1.0],  # whole floats: no ".000"
            "link_bps": [10e9, 1e9, 25e9],  # scaled to Mbit/s, thousands separated
            "size_bytes": [10_000_000_000, 4096, 0],  # integers: separators, no decimals
            "rtt_ms": [1.5, 2.25, 0.0001],  # decimals shared by the column; a tiny value is not "0"
            "used": [True, False, True],
            "published": [0.9, 60700.0, 0.00123],  # significant digits per cell
        }
    )
    rows = body_rows(report.html_table(df, "formats"), "T_formats")
    assert [r[0] for r in rows] == ["16", "32", "1"]
    assert [r[1] for r in rows] == ["10,000", "1,000", "25,000"]
    assert [r[2] for r in rows] == ["10,000,000,000", "4,096", "0"]
    assert [r[3] for r in rows] == ["1.50", "2.25", "0.0001"]
    assert [r[4] for r in rows] == ["yes", "no", "yes"]
    assert [r[5] for r in rows] == ["0.9", "60,700", "0.00123"]


def test_format_column_obeys_the_spec() -> None:
    spec = columns.ColumnSpec("Port", thousands=False)
    assert columns.format_column([3260, 860], spec) == ["3260", "860"]
    assert columns.format_column([-0.0001, 2.0, 2.25], columns.ColumnSpec("x", decimals=1)) == [
        "-0.0001",
        "2.0",
        "2.2",
    ]
    assert columns.format_column([-0.0, 2.0], columns.ColumnSpec("x", decimals=1)) == ["0", "2"]
    assert columns.format_column([math.inf, -math.inf, 1.0], columns.ColumnSpec("x")) == ["∞", "−∞", "1"]
    assert columns.format_column([0.5, 12345.678], columns.ColumnSpec("x", digits=3)) == ["0.5", "12,346"]


def test_identifying_columns_lead() -> None:
    df = pd.DataFrame(
        {"mib_per_s": [1.0], "explanation": ["why"], "network": ["wired"], "verdict": ["match"]}
    )
    assert headers(report.html_table(df, "order")) == [
        "Verdict",
        "Network",
        "Explanation",
        "Throughput (MiB/s)",
    ]
    chosen = report.html_table(df, "order", columns=["mib_per_s", "network"])
    assert headers(chosen) == ["Throughput (MiB/s)", "Network"]
    assert headers(chosen, "T_order-all")[:2] == ["Throughput (MiB/s)", "Network"]  # the rest follows


def test_a_wide_table_scrolls_with_a_sticky_first_column_and_leaves_details_to_the_full_table() -> None:
    wide = pd.DataFrame({f"metric_{i}_ms": [float(i), i + 0.5] for i in range(10)})
    wide.insert(0, "device", ["hdd", "ssd"])
    wide["file"] = ["fio/a.json", "fio/b.json"]
    wide["bs_kib"] = [64.0, 128.0]
    wide["bs_bytes"] = [65536, 131072]  # shows the same as bs_kib: once on the page
    out = report.html_table(wide, "wide")
    assert out.startswith('<div class="iscsi-table-wrap iscsi-table-wide" tabindex="0" role="region"')
    main = headers(out)
    assert main[0] == "Device" and "File" not in main and len(main) == tables.WIDE_COLUMNS
    assert "File" in headers(out, "T_wide-all")
    assert "Shown above: 8 of 14 columns." in out
    assert "<summary>All 2 rows and 14 columns</summary>" in out
    narrow = report.html_table(wide.iloc[:, :4], "narrow")
    assert narrow.startswith('<div class="iscsi-table-wrap" tabindex="0"') and "<details" not in narrow


def test_a_twenty_column_frame_shows_eight_columns_and_the_full_table_collapsed() -> None:
    df = pd.DataFrame({f"m{i}_ms": [1.0 + i, 2.5 + i, 4.0 + i] for i in range(19)})
    df.insert(0, "network", ["ethernet", "wifi", "veth"])
    out = report.html_table(df, "twenty", caption="Twenty columns")
    assert headers(out) == ["Network", *(f"M{i} (ms)" for i in range(7))]
    full = headers(out, "T_twenty-all")
    assert len(full) == 20 and full[0] == "Network"
    before, details = out.split("<details", 1)
    assert before.count("<th ") == tables.WIDE_COLUMNS  # the visible table: eight columns, no more
    assert details.count("<th ") == 20 and "<summary>All 3 rows and 20 columns</summary>" in details
    assert "Shown above: 8 of 20 columns." in before


def test_a_wide_summary_shows_eight_columns_too() -> None:
    tidy = pd.DataFrame({"device": ["hdd"] * 12, "term": [f"t{i}" for i in range(12)], "ms": np.arange(12.0)})
    summary = tables.spread(tidy, ["device"], "term", "ms")
    out = report.html_table(tidy, "terms", summary=summary)
    assert headers(out) == ["Device", *(f"T{i}" for i in range(7))]
    assert len(summary.columns) == 13 and "<details" in out


def test_a_page_may_not_ask_for_more_than_eight_columns() -> None:
    df = pd.DataFrame({f"m{i}_ms": [1.0] for i in range(12)})
    with pytest.raises(ReportError, match="at most 8"):
        report.html_table(df, "many", columns=list(df.columns[:9]))
    assert len(headers(report.html_table(df, "eight", columns=list(df.columns[:8])))) == 8


def test_every_scroll_box_is_a_named_keyboard_stop() -> None:
    df = pd.DataFrame(
        {"run": [f"r{i}" for i in range(40)], **{f"m{i}_ms": np.arange(40.0) for i in range(12)}}
    )
    out = report.html_table(df, "boxes", caption='Latency <per> "run"')
    boxes = re.findall(r'<div class="iscsi-table-wrap[^"]*"([^>]*)>', out)
    assert len(boxes) == 2  # the shown view and the full table in its <details>
    label = "Latency &lt;per&gt; &quot;run&quot;"
    assert boxes[0] == f' tabindex="0" role="region" aria-label="{label}"'
    assert boxes[1] == f' tabindex="0" role="region" aria-label="{label} (all rows and columns)"'
    unnamed = report.html_table(df.iloc[:3, :3], "iostat_cpu")
    assert 'aria-label="Table iostat cpu"' in unnamed


def test_columns_with_one_value_in_every_row_of_a_wide_table_become_a_note() -> None:
    df = pd.DataFrame({f"m{i}_ms": [1.0 + i, 2.0 + i] for i in range(8)})
    df["rw"] = ["write", "write"]
    df["iodepth"] = [1, 1]
    out = report.html_table(df, "same")
    assert "I/O pattern" not in headers(out) and "Queue depth" not in headers(out)
    assert "In every row: I/O pattern: write; Queue depth: 1." in out
    assert "<details" not in out  # nothing else left out


def test_the_style_sheet_styles_the_classes_and_the_site_loads_it() -> None:
    css = (Path(assets.__file__).with_name("tables.css")).read_text(encoding="utf-8")
    for klass in (
        tables.WRAP_CLASS,
        tables.WIDE_CLASS,
        tables.TABLE_CLASS,
        tables.FULL_CLASS,
        tables.NOTE_CLASS,
    ):
        assert f".{klass}" in css, klass
    sticky = css[css.index(f".{tables.WIDE_CLASS} table.{tables.TABLE_CLASS} th:first-child") :]
    assert "position: sticky" in sticky[: sticky.index("}")]
    wrap = css[css.index(f".{tables.WRAP_CLASS} {{") :]
    assert "overflow-x: auto" in wrap[: wrap.index("}")]

    class App:
        def __init__(self) -> None:
            self.css: list[str] = []

        def add_css_file(self, name: str) -> None:
            self.css.append(name)

        def connect(self, *_: object) -> None:
            pass

    app = App()
    assets.setup(app)
    assert assets.TABLE_STYLE in app.css


def test_a_long_table_shows_its_first_rows_and_the_whole_table_one_click_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import IPython.display

    shown: list[object] = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    ctx = report.start("run", "data", tmp_path, tmp_path / "out")
    df = pd.DataFrame({"run": [f"r{i}" for i in range(60)], "op_ms": np.arange(60) / 4})
    ctx.table(df, "long", caption="A long table")
    out = next(o.data for o in shown if isinstance(o, IPython.display.HTML))
    assert len(body_rows(out, "T_long")) == tables.PREVIEW_ROWS
    assert "Shown above: the first 10 rows of 60." in out
    assert '<details class="iscsi-table-full"><summary>All 60 rows and 2 columns</summary>' in out
    assert len(body_rows(out, "T_long-all")) == 60
    links = [o.data for o in shown if isinstance(o, IPython.display.Markdown)]
    assert markup.link("Download long.csv", ctx.table_link("long")) in links  # the CSV stays one click away
    assert (tmp_path / "out" / "long.csv").read_text().splitlines()[0] == "run,op_ms"
    only_full = report.html_table(df, "long", preview_rows=0)
    assert only_full.startswith('<details class="iscsi-table-full">') and 'id="T_long"' not in only_full


def test_hostile_headers_cells_and_names_stay_escaped() -> None:
    evil = '<script>alert("x")</script>'
    df = pd.DataFrame(
        {evil: ["<img src=x onerror=alert(1)>", "a & b", "tab\there\x1b[31m"], "note_ms": [1.0, None, 2.0]}
    )
    out = report.html_table(df, 'name "with" <odd> chars', dash_note=evil)
    assert "<script" not in out and "<img" not in out and "onerror=alert(1)>" not in out
    assert set(re.findall(r"<(\w+)", out)) <= {"div", "table", "thead", "tbody", "tr", "th", "td", "p", "wbr"}
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in out
    assert 'id="T_name__with___odd__chars"' in out
    cells = [r[0] for r in body_rows(out, "T_name__with___odd__chars")]
    assert cells == ["<img src=x onerror=alert(1)>", "a & b", "tab here\\u001b[31m"]


def test_rendering_is_deterministic_and_refuses_unknown_or_duplicate_columns() -> None:
    df = pd.DataFrame({"network": ["a", "b"], "rtt_ms": [0.1, 0.2]})
    assert report.html_table(df, "same") == report.html_table(df.copy(), "same")
    with pytest.raises(ReportError, match=r"table 'same': no column 'rtt_us'"):
        report.html_table(df, "same", columns=["rtt_us"])
    with pytest.raises(ReportError, match="duplicate column names"):
        report.html_table(pd.DataFrame([[1, 2]], columns=["a", "a"]), "dup")


def test_a_summary_is_shown_instead_and_the_tidy_table_collapsed() -> None:
    tidy = pd.DataFrame(
        {
            "configuration": ["a", "a", "b", "b"],
            "term": ["r2t_one_way_ms", "device_ms", "r2t_one_way_ms", "device_ms"],
            "ms": [0.5, 7.25, 1.0, 2.0],
        }
    )
    summary = tables.spread(tidy, ["configuration"], "term", "ms")
    assert list(summary.columns) == ["configuration", "r2t_one_way_ms", "device_ms"]  # first-seen order
    out = report.html_table(tidy, "terms", summary=summary)
    assert headers(out) == ["Configuration", "R2T one-way latency (ms)", "Device time (ms)"]
    assert body_rows(out, "T_terms") == [["a", "0.5", "7.25"], ["b", "1.0", "2.00"]]
    assert "<summary>All 4 rows and 3 columns</summary>" in out
    assert len(body_rows(out, "T_terms-all")) == 4


def test_years_seeds_and_ports_are_names_not_quantities() -> None:
    """The cross-study table printed "2,017": numbers that are names are never grouped by thousands."""
    from iscsi_report.presentation import tables as t

    cols = t.formatted(pd.DataFrame({"year": [2017, 2023], "port": [3260, 80], "count": [12345, 7]}), "x", 3)
    assert cols["year"].cells == ["2017", "2023"] and cols["port"].cells == ["3260", "80"]
    assert cols["count"].cells[0] == "12,345"


def test_the_sites_markdown_tables_become_named_keyboard_stops() -> None:
    from iscsi_report.pipeline import sphinx_site

    captioned = (
        '<div class="pst-scrollable-table-container"><table class="table" id="t1">'
        '<caption><span class="caption-text">Labels &amp; types</span><a class="headerlink" href="#t1">#</a>'
        "</caption><thead><tr><th>a</th></tr></thead></table></div>"
    )
    bare = (
        '<p>x</p><div class="pst-scrollable-table-container"><table class="table"><thead><tr>'
        '<th class="head"><p>label</p></th><th class="head"><p>type</p></th><th>set by</th><th>more</th>'
        "</tr></thead><tbody><tr><td>1</td></tr></tbody></table></div>"
    )
    body = sphinx_site.label_table_boxes(captioned + bare)
    boxes = re.findall(r'<div class="pst-scrollable-table-container"([^>]*)>', body)
    assert boxes == [
        ' tabindex="0" role="region" aria-label="Labels &amp; types"',
        ' tabindex="0" role="region" aria-label="Table: label, type, set by"',
    ]
    assert body.replace(boxes[0], "").replace(boxes[1], "") == captioned + bare  # nothing else changed
