"""Reader aids of the book: code hidden behind one switch per page, collapsed raw-file lists, sources
cited by author and year (never by the file name of a copy), and prose that reads as written."""

from __future__ import annotations

import dataclasses
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jupytext
import pandas as pd
import pytest
import yaml

from iscsi_report.analyses import storage
from iscsi_report.core import markup, prose
from iscsi_report.core.dataset import Dataset
from iscsi_report.core.measurements import Measurements, open_dataset
from iscsi_report.presentation import phrases, report

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("*.md") if p.name != "README.md")
STATIC = ROOT / "book" / "_static"
# Tags that give a cell its own show/hide button (sphinx-togglebutton): one switch per page instead.
PER_CELL_TOGGLES = {"hide-input", "hide-output", "hide-cell"}
# A source cited by the hash-named file of its copy, or as "seed N".
SEED_CITATION = re.compile(r"\bseeds?\s*`*\s*0\d\d|\b0\d\d_[0-9a-f]{16}(\.txt)?\b", re.IGNORECASE)


# ---- code hidden by default, one switch per page ------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_code_cell_has_a_toggle_of_its_own(path: Path) -> None:
    nb = jupytext.read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "a chapter with no code cell"
    own = [(i, sorted(PER_CELL_TOGGLES & set(c.metadata.get("tags", [])))) for i, c in enumerate(code)]
    assert [x for x in own if x[1]] == [], "per-cell toggles: the page's one switch shows the code"


def test_the_page_switch_hides_every_code_cell_until_asked() -> None:
    js = (STATIC / "code-toggle.js").read_text(encoding="utf-8")
    css = (STATIC / "code-toggle.css").read_text(encoding="utf-8")
    assert "root.classList.add(HIDDEN)" in js and '"iscsi-code-hidden"' in js
    assert js.count('document.createElement("button")') == 1, "exactly one switch per page"
    assert "Show the code" in js and "Hide the code" in js
    assert re.search(r"html\.iscsi-code-hidden div\.cell div\.cell_input\s*\{\s*display:\s*none", css)
    # A cell with no output is gone while its code is hidden, and with neither input nor output always.
    assert re.search(
        r"html\.iscsi-code-hidden div\.cell:not\(:has\(div\.cell_output > \*\)\)\s*\{\s*display:\s*none", css
    )
    assert re.search(r"div\.cell:not\(:has\(div\.cell_input\)\):not\(:has\(div\.cell_output > \*\)\)", css)


def test_jupyter_book_loads_the_switch_on_every_page() -> None:
    from jupyter_book.config import get_final_config

    cfg, _ = get_final_config(
        user_yaml=yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8")),
        sourcedir=ROOT / "book",
        cli_config={"latex_individualpages": False},
    )
    assert "code-toggle.js" in cfg["html_js_files"]
    assert "code-toggle.css" in cfg["html_css_files"]


# ---- raw files a chapter read: one collapsed block ----------------------------------------------


def _context(tmp_path: Path) -> report.Context:
    (tmp_path / "book" / "runs" / "r").mkdir(parents=True)
    return report.Context(run_name="r", dataset="d", project_root=tmp_path, results_dir=tmp_path / "out")


def test_raw_links_are_one_collapsed_block_with_a_count(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    raw = tmp_path / "data" / "raw" / "d"
    paths = [raw / "ping" / f"p{i:02d}.txt" for i in range(3)] + [raw / "fio" / "a<b>`|.json"]
    text = ctx.raw_links_markdown(paths)
    lines = text.splitlines()
    assert lines[0] == '<details class="iscsi-raw-files">' and lines[-1] == "</details>"
    assert lines[1] == "<summary>Raw files this chapter read (4)</summary>"
    links = [line for line in lines if line.startswith("- [")]
    assert len(links) == 4
    assert all("(<path:../../../data/raw/d/" in line for line in links), "links stay relative to the page"
    assert str(tmp_path) not in text
    assert r"a\<b\>\`\|.json" in text, "a hostile file name is escaped in the label"
    assert ctx.raw_links_markdown([raw / "one.txt"]).splitlines()[1] == (
        "<summary>Raw file this chapter read (1)</summary>"
    )
    assert ctx.raw_links_markdown([]) == "No raw file was read."


def test_a_folder_of_many_raw_files_is_one_line_pointing_to_the_provenance_page(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    raw = tmp_path / "data" / "raw" / "d"
    many = report.RAW_FILES_LISTED_PER_FOLDER + 1
    paths = [raw / "fio" / f"f{i:03d}.json" for i in range(many)]
    paths += [raw / "ping" / "p.txt", tmp_path / "data" / "published" / f"x{0}.yaml"]
    paths += [tmp_path / "data" / "published" / f"x{i}.yaml" for i in range(1, many)]
    lines = ctx.raw_links_markdown(paths).splitlines()
    assert lines[1] == f"<summary>Raw files this chapter read ({2 * many + 1})</summary>"
    folder = [line for line in lines if "data/raw/d/fio/" in line]
    assert folder == [
        f"- `data/raw/d/fio/`: {many} files, each with its sha256 and a download on "
        f"{{ref}}`the dataset's provenance page <{markup.raw_dataset_label('d')}>`"
    ]
    assert sum("data\\/raw\\/d\\/ping" in line for line in lines) == 1, "a small folder keeps its links"
    # files outside data/raw have no dataset provenance page to point to: each is linked
    assert sum("data\\/published" in line for line in lines) == many
    at_limit = [raw / "fio" / f"f{i:03d}.json" for i in range(many - 1)]
    assert len([x for x in ctx.raw_links_markdown(at_limit).splitlines() if x.startswith("- [")]) == many - 1


def test_raw_links_render_as_details_holding_download_links(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    raw = tmp_path / "data" / "raw" / "d"
    raw.mkdir(parents=True)
    paths = []
    for name in ("a.txt", "b<c>.txt"):
        (raw / name).write_text(name, encoding="utf-8")
        paths.append(raw / name)
    src = tmp_path / "book" / "runs" / "r"
    (tmp_path / "book" / "conf.py").write_text('extensions = ["myst_parser"]\n', encoding="utf-8")
    many = [raw / "fio" / f"f{i:03d}.json" for i in range(report.RAW_FILES_LISTED_PER_FOLDER + 1)]
    index = f"# Index\n\n({markup.raw_dataset_label('d')})=\n## d\n\n```{{toctree}}\nruns/r/page\n```\n"
    (tmp_path / "book" / "index.md").write_text(index, encoding="utf-8")
    page_md = "# Page\n\n" + ctx.raw_links_markdown([*paths, *many]) + "\n"
    (src / "page.md").write_text(page_md, encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-q",
            "-W",
            "-b",
            "html",
            str(tmp_path / "book"),
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "out" / "runs" / "r" / "page.html").read_text(encoding="utf-8")
    block = page[page.index('<details class="iscsi-raw-files">') : page.index("</details>")]
    assert f"<summary>Raw files this chapter read ({len(many) + 2})</summary>" in block
    assert len(re.findall(r'<a class="reference download internal"', block)) == 2
    to_section = r'<a class="reference internal" href="\.\./\.\./index\.html#raw-data-[0-9a-f]{12}"'
    assert re.search(to_section, block), "the folder's line links the dataset's provenance page"
    assert "b&lt;c&gt;.txt" in block and "<c>" not in block


# ---- sources cited by author and year -----------------------------------------------------------


def _strings(node: Any, path: str = "") -> list[tuple[str, str]]:
    """Every (YAML path, string) in a parsed YAML document."""
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in _strings(v, f"{path}.{k}")]
    if isinstance(node, list):
        return [s for i, v in enumerate(node) for s in _strings(v, f"{path}[{i}]")]
    return [(path, node)] if isinstance(node, str) else []


def test_the_seed_pattern_catches_what_it_should() -> None:
    assert SEED_CITATION.search("(seed `000_437e632f38637111.txt`)")
    assert SEED_CITATION.search("seed 002 says")
    assert SEED_CITATION.search("002_622d3d8e8edc3cfb.txt")
    assert not SEED_CITATION.search("seeded draws, seed = 20231231")


def test_no_page_source_cites_a_seed_file() -> None:
    package = ROOT / "src" / "iscsi_report"
    code = [p for layer in ("analyses", "presentation") for p in sorted((package / layer).rglob("*.py"))]
    sources = [*NOTEBOOKS, *code]
    offenders = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in sources
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if SEED_CITATION.search(line)
    ]
    assert offenders == []


@pytest.mark.parametrize("path", sorted((ROOT / "data" / "published").glob("*.yaml")), ids=lambda p: p.stem)
def test_published_text_cites_by_author_and_year(path: Path) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    shown = [(k, s) for k, s in _strings(doc) if k != ".transcribed_from"]  # provenance of the copy only
    assert [f"{k}: {s}" for k, s in shown if SEED_CITATION.search(s)] == []
    citation = doc.get("citation") or {}
    assert doc["source"] == citation.get("key"), "rows are labelled by the citation key"
    refs = (ROOT / "book" / "references.md").read_text(encoding="utf-8")
    assert f"({citation['ref']})=" in refs, "the key resolves to an entry of the references page"


# ---- prose that reads as written ----------------------------------------------------------------


def test_counts_pluralise_and_separate_thousands() -> None:
    assert prose.count(1, "device") == "1 device"
    assert prose.count(6, "device") == "6 devices"
    assert prose.count(0, "group") == "0 groups"
    assert prose.count(901800, "reply", "replies") == "901,800 replies"
    assert prose.number(10_000_000_000.0) == "10,000,000,000"
    assert prose.number(math.nan) == "—"


def test_ranges_collapse_equal_ends() -> None:
    assert prose.span(1024, 1024, "KiB") == "1,024 KiB"
    assert prose.span(512, 1024, "KiB") == "512 to 1,024 KiB"
    assert prose.span(0.1234, 0.1236, "ms", 3) == "0.123 to 0.124 ms"
    assert prose.span(7.3001, 7.2999, "ms", 1) == "7.3 ms", "ends that print the same collapse"


def test_sizes_in_words() -> None:
    assert prose.size(2 * 2**20) == "2 MiB"
    assert prose.size(65536) == "64 KiB"
    assert prose.size(512) == "512 B"
    assert prose.sizes([2 * 2**20] * 6) == "2 MiB"
    assert prose.sizes([2**20, 65536, 2**20]) == "64 KiB and 1 MiB"
    assert prose.sizes([4096, 65536, 2**20]) == "4 KiB, 64 KiB and 1 MiB"


def test_storage_headline_phrases() -> None:
    head = {
        "local_devices": 1.0,
        "local_block_sizes": 6.0,
        "local_min_mib_per_s": 100.04,
        "local_max_mib_per_s": 100.01,
        "fit_min_fixed_ms": 0.5,
        "fit_max_fixed_ms": 7.25,
        "fit_min_streaming_mib_per_s": 140.0,
        "fit_max_streaming_mib_per_s": 1500.0,
        "largest_bs_kib": 2048.0,
        "largest_bs_min_request_kib": 1024.0,
        "largest_bs_max_request_kib": 1024.0,
    }
    text = phrases.storage_headline(head)
    assert text["local_devices_text"] == "1 device"
    assert text["local_block_sizes_text"] == "6 block sizes"
    assert text["local_mib_per_s_text"] == "100.0 MiB/s"
    assert text["fit_fixed_ms_text"] == "0.500 to 7.250 ms"
    assert text["fit_streaming_text"] == "140.0 to 1,500.0 MiB/s"
    assert text["largest_bs_kib_text"] == "2,048 KiB"
    assert text["largest_request_kib_text"] == "1,024 KiB"
    no_slope = phrases.storage_headline(head | {"fit_min_streaming_mib_per_s": math.nan})
    assert no_slope["fit_streaming_text"] == "undefined (no fit has a positive slope)"


def test_fixed_cost_reads_as_zero_when_every_interval_holds_zero() -> None:
    fitted = {
        "fit_devices": 2.0,
        "fit_min_fixed_ms": -0.009,
        "fit_max_fixed_ms": -0.002,
        "fit_min_fixed_lo_ms": -0.031,
        "fit_max_fixed_hi_ms": 0.024,
    }
    base = {
        "local_devices": 2.0,
        "local_block_sizes": 6.0,
        "local_min_mib_per_s": 1.0,
        "local_max_mib_per_s": 2.0,
        "fit_min_streaming_mib_per_s": 140.0,
        "fit_max_streaming_mib_per_s": 150.0,
        "largest_bs_kib": 2048.0,
        "largest_bs_min_request_kib": 1024.0,
        "largest_bs_max_request_kib": 1024.0,
    } | fitted
    zero = phrases.storage_headline(base | {"fit_fixed_zero_devices": 2.0}, 95.0)["fit_fixed_cost_text"]
    assert zero == "a fixed time indistinguishable from zero (95 % intervals within -0.031 to 0.024 ms)"
    one_off = phrases.storage_headline(base | {"fit_fixed_zero_devices": 1.0}, 95.0)["fit_fixed_cost_text"]
    assert one_off == "a fixed -0.009 to -0.002 ms"
    none = phrases.storage_headline(base | {"fit_devices": 0.0}, 95.0)["fit_fixed_cost_text"]
    assert none == "no fitted fixed cost"


def test_storage_headline_counts_devices_whose_fixed_cost_interval_holds_zero() -> None:
    fit = pd.DataFrame(
        {
            "fixed_ms": [-0.01, 0.5],
            "fixed_ms_lo": [-0.03, 0.4],
            "fixed_ms_hi": [0.02, 0.6],
            "streaming_mib_per_s": [140.0, 150.0],
            "r_squared": [0.99, 0.98],
        }
    )
    empty = pd.DataFrame(columns=["device", "bs_bytes", "mib_per_s", "wareq_sz_kb"])
    head = storage.headline(empty, fit, empty)
    assert head["fit_devices"] == 2.0
    assert head["fit_fixed_zero_devices"] == 1.0
    assert (head["fit_min_fixed_lo_ms"], head["fit_max_fixed_hi_ms"]) == (-0.03, 0.6)


def test_small_shares_keep_their_digits() -> None:
    assert phrases.share_pct_text(0.04, 0.13) == "0.040 to 0.130 %"
    assert phrases.share_pct_text(0.01, 0.07) == "under 0.1 %"
    assert phrases.share_pct_text(12.3, 40.0) == "12.3 to 40.0 %"
    assert phrases.share_pct_text(0.0, 0.5) == "0.000 to 0.500 %"
    assert phrases.share_pct_text(math.nan, 1.0) == "—"


def test_fleet_sentence_on_unmodelled_rows_agrees_in_number() -> None:
    assert phrases.unmodelled_sentence(0) == "Every row has something to model."
    assert phrases.unmodelled_sentence(1) == "1 row has nothing to model and says why in its note."
    assert phrases.unmodelled_sentence(3) == "3 rows have nothing to model and say why in their note."


TEMPLATE_SLIPS = re.compile(r"\w\(s\)|\(es\)")
# The chapters over a dataset (blog, veth, your own) and the blog's audit and cross-study pages.
DATASET_CHAPTERS = [
    "network",
    "storage",
    "model",
    "projections",
    "fit",
    "validation",
    "whatif",
    "audit",
    "cross_study",
]


@pytest.mark.parametrize("name", DATASET_CHAPTERS)
def test_chapter_prose_has_no_template_plurals(name: str) -> None:
    nb = jupytext.read(ROOT / "notebooks" / f"{name}.md")
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert TEMPLATE_SLIPS.findall(text) == [], "pluralise with prose.count instead of '(s)'"


# ---- each dataset's chapters say what it is and explain its odd numbers -------------------------

VETH = ROOT / "data" / "raw" / "lab-veth-2026"


def _veth() -> tuple[Any, Any, Any]:
    from iscsi_report.analyses import network

    ds = open_dataset(VETH)
    samples = network.rtt_samples(ds)
    return ds, samples, network.latency_summary(samples)


def test_measured_dataset_pages_open_with_what_the_dataset_is() -> None:
    from iscsi_report.analyses.about import has_iscsi
    from iscsi_report.presentation import about

    ds = open_dataset(VETH)
    box = about.dataset_box(ds, "network")
    assert box.startswith(":::{admonition} About this dataset: This machine") and box.endswith(":::")
    title, klass = box.splitlines()[:2]
    assert klass == ":class: note dropdown", "one line in the first screen, the details one click away"
    assert title.endswith("(parts measured, no iSCSI traffic) — details")
    assert "veth pair" in box and "No iSCSI traffic is in this dataset" in box
    assert "interpretation" in about.dataset_box(ds, "network"), "the chapter's own note from notes.yaml"
    assert about.dataset_box(ds, "model") != about.dataset_box(ds, "storage")
    bare = Measurements(
        dataclasses.replace(ds.dataset, description="", iscsi_parameters={"s": {}}, root=Path("/nonexistent"))
    )
    assert about.dataset_box(bare, "network") == "", "no empty admonition (Sphinx refuses one)"
    blog = open_dataset(ROOT / "data" / "raw" / "blog-2023")
    assert has_iscsi(blog) and about.dataset_box(blog, "network") == "", "the banner covers it"


def test_dataset_notes_refuse_a_bad_file_by_name(tmp_path: Path) -> None:
    from iscsi_report.analyses import about
    from iscsi_report.core.errors import ReportError

    m = Measurements(Dataset("x", tmp_path, "x", False, "", {}, []))
    assert about.notes(m) == {}
    (tmp_path / "notes.yaml").write_text("chapters:\n  netwrok: text\n", encoding="utf-8")
    with pytest.raises(ReportError, match=r"notes\.yaml: at chapters\.netwrok: expected text for one of"):
        about.notes(m)
    (tmp_path / "notes.yaml").write_text("- a list\n", encoding="utf-8")
    with pytest.raises(ReportError, match=r"notes\.yaml: expected a mapping with a 'chapters' mapping"):
        about.notes(m)
    (tmp_path / "notes.yaml").write_text("chapters:\n  network: one\n  network: two\n", encoding="utf-8")
    with pytest.raises(ReportError, match=r"notes\.yaml:3.*network"):
        about.notes(m)  # a duplicated key is refused with its line, never 'last one wins'


def test_the_veth_iperf3_rate_is_the_shapers_payload_ceiling() -> None:
    from iscsi_report.analyses import about
    from iscsi_report.presentation import about as words

    ds, _, _ = _veth()
    (run,) = about.shaped_runs(ds)
    assert run.limit_mbit_per_s == 800 and run.mss_bytes == 1448 and run.frame_bytes == 1514
    assert run.payload_ceiling_mbit_per_s == pytest.approx(800 * 1448 / 1514)
    # Physics: the measured payload rate cannot exceed the shaper's payload ceiling by more than the
    # shaper's initial burst allows, and it reaches it (the shaper, not the CPU, binds).
    assert run.received_mbit_per_s == pytest.approx(run.payload_ceiling_mbit_per_s, rel=0.005)
    assert run.sender_cpu_pct < 50
    text = words.shaping_sentence(run)
    assert "765.1 Mbit/s" in text and "1,514 bytes" in text and "binding bound" in text


def test_veth_interval_effect_and_print_steps_are_found_from_the_files() -> None:
    from iscsi_report.analyses import about
    from iscsi_report.presentation import about as words

    ds, samples, summary = _veth()
    effects = about.group_effects(summary)
    (row,) = [r for _, r in effects.iterrows()]
    assert row["key"] == "interval_s", "the veth pings differ in interval only"
    assert row["low"] == pytest.approx(0.002) and row["high"] == pytest.approx(0.2)
    assert row["ratio"] > about.GROUP_EFFECT_FACTOR
    steps = about.print_steps(samples).set_index("interval_ms")
    assert steps.loc[2.0, "step_ms"] == pytest.approx(0.001)
    assert steps.loc[2.0, "distinct_values"] < 20 and steps.loc[2.0, "replies"] == 3000
    assert steps.loc[200.0, "step_ms"] < about.COARSE_PRINT_SHARE * steps.loc[200.0, "median_ms"]
    found = about.network_findings(ds, samples, summary)
    assert len(found.shaped) == len(found.group_effects) == len(found.print_steps) == 1
    assert found.print_steps["interval_ms"].tolist() == [2.0], "the 200 ms pings print fine enough steps"
    findings = words.network_findings(found)
    assert [f.split("**")[1] for f in findings] == [
        "The iperf3 rate is the shaper's, not the link's.",
        "How often the path is used changes its round trip.",
        "Some 'modes' are print steps.",
    ]
    assert "1.0 µs" in findings[2] and "3,000 replies" in findings[2]


def test_blog_network_files_need_none_of_the_veth_caveats() -> None:
    from iscsi_report.analyses import about, network
    from iscsi_report.presentation import about as words

    ds = open_dataset(ROOT / "data" / "raw" / "blog-2023")
    samples = network.rtt_samples(ds)
    found = about.network_findings(ds, samples, network.latency_summary(samples))
    assert found.shaped == [] and found.print_steps.empty
    findings = words.network_findings(found)
    assert not any("shaper" in f or "print steps" in f for f in findings)


def test_durations_switch_to_microseconds_below_a_tenth_of_a_millisecond() -> None:
    assert prose.duration_ms(0.001343) == "1.3 µs"
    assert prose.duration_ms(0.025433) == "25.4 µs"
    assert prose.duration_ms(1.5) == "1.500 ms"


def test_published_notebooks_give_no_cell_a_toggle_of_its_own(tmp_path: Path) -> None:
    import json

    import nbformat

    from iscsi_report.core.paths import Project
    from iscsi_report.pipeline.sanitize import publishable

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Page"),
        nbformat.v4.new_code_cell('run_name = "x"', metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell('run_name = "r"', metadata={"tags": ["injected-parameters"]}),
        nbformat.v4.new_code_cell("import math"),
        nbformat.v4.new_code_cell("_ = 1", metadata={"tags": ["remove-input"]}),
    ]
    src = tmp_path / "executed.ipynb"
    nbformat.write(nb, src)
    out = json.loads(publishable(src, ROOT / "book" / "runs" / "r" / "page.ipynb", Project.at(ROOT)))
    tags = [c["metadata"].get("tags", []) for c in out["cells"] if c["cell_type"] == "code"]
    assert tags == [
        ["parameters", "remove-cell"],
        ["injected-parameters", "remove-cell"],
        [],
        ["remove-input"],
    ]


def test_one_search_entry_and_no_index_page_but_a_glossary() -> None:
    from jupyter_book.config import get_final_config

    cfg, _ = get_final_config(
        user_yaml=yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8")),
        sourcedir=ROOT / "book",
        cli_config={"latex_individualpages": False},
    )
    assert cfg["html_use_index"] is False
    sidebar = cfg["html_sidebars"]["**"]
    assert "sbt-sidebar-nav.html" in sidebar and not any("search" in item for item in sidebar)
    toc = yaml.safe_load((ROOT / "book" / "_toc.base.yml").read_text(encoding="utf-8"))
    reference = [
        c["file"] for part in toc["parts"] if part.get("caption") == "Reference" for c in part["chapters"]
    ]
    assert "glossary" in reference and "references" in reference
