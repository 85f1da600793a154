"""Every chapter of every params file, executed once through the real batch, then read back.

The way microsoft/recommenders tests its notebooks through papermill: run them, then assert on what
they produced (the CSVs in ``results/<run>/`` and the values glued into the executed notebooks).
Assertions compare relationships and numbers recomputed here independently of the chapter code
(regexes and ``json`` over the raw files, numpy statistics), never snapshots of today's output.

The project copy runs its own copy of ``src/`` (``PYTHONPATH``), so the last test can edit package
code and check which chapters the run cache re-executes.
"""

from __future__ import annotations

import ast
import gzip
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pandas as pd
import pytest
import yaml
from fast_yaml import load_yaml

from iscsi_report.core.digest import code_digest
from iscsi_report.core.ingest import ping
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import batch, cache
from iscsi_report.pipeline.params import NotebookJob

from .projects import ROOT, cli, executed_study, study_env
from .reader_text import reader_ids

pytestmark = [pytest.mark.e2e]

MIB = 2**20
RECORD_MIME = "application/papermill.record/text/plain"
GLUE_REF = re.compile(r"\{glue(?::\w+)?\}`([^`:<>\s]+)|```\{glue(?::\w+)?\}\s+(\S+)")
CSV_LINK = re.compile(r"results/([^/\s<>()`]+)/([^/\s<>()`]+)\.csv")  # a link's target, whatever its syntax
# The chapters each params file must run (the batch may run more: every job is checked generically).
EXPECTED = {
    "lab-veth-2026": {"network", "storage", "model"},
    "blog-2023": {"network", "storage", "model", "projections", "fit", "validation", "whatif", "audit"},
    "cross-study": {"cross_study"},
}


class Study:
    """The executed project copy: paths, jobs and the batch's first output."""

    def __init__(self, root: Path, env: dict[str, str], stdout: str) -> None:
        self.root = root
        self.env = env
        self.stdout = stdout
        self.project = Project.at(root)
        self.jobs: list[NotebookJob] = batch.plan(self.project, None)

    def results(self, run: str) -> Path:
        return self.root / "results" / run

    def csv(self, run: str, table: str) -> pd.DataFrame:
        return pd.read_csv(self.results(run) / f"{table}.csv")

    def executed(self, run: str, notebook: str) -> nbformat.NotebookNode:
        return nbformat.read(self.project.executed(run, notebook), as_version=4)

    def glued(self, run: str, notebook: str) -> dict[str, Any]:
        return glued_values(self.executed(run, notebook))

    def raw(self, dataset: str) -> Path:
        return self.root / "data" / "raw" / dataset

    def manifest(self, dataset: str) -> list[dict[str, Any]]:
        return load_yaml(self.raw(dataset) / "manifest.yaml")["files"]


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Study:
    """A private copy of the real study (params, chapters, datasets, own ``src/``), executed once per run."""
    root, stdout = executed_study(tmp_path_factory, tmp_path_factory.mktemp("study") / "study")
    return Study(root, study_env(root), stdout)


def glued_values(nb: nbformat.NotebookNode) -> dict[str, Any]:
    """Every value glued in an executed notebook, by name (Python literals parsed, else the text)."""
    out: dict[str, Any] = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is None:
                continue
            text = output["data"][RECORD_MIME]
            try:
                out[name] = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                out[name] = text
    return out


def glue_references(nb: nbformat.NotebookNode) -> set[str]:
    """Names the markdown cells of a notebook refer to with ``{glue:...}`` roles or directives."""
    refs: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            refs |= {a or b for a, b in GLUE_REF.findall(cell.source)}
    return refs


def linked_tables(nb: nbformat.NotebookNode) -> set[tuple[str, str]]:
    """(run, table) of every ``results/<run>/<table>.csv`` a notebook's markdown outputs link to."""
    links: set[tuple[str, str]] = set()
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            links |= set(CSV_LINK.findall(output.get("data", {}).get("text/markdown", "")))
    return links


def ping_times_ms(path: Path) -> np.ndarray:
    """RTTs read from a ping log with a regex, independently of the chapter's parser."""
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    return np.array([float(x) for x in re.findall(r"time=([0-9.]+) ms", text)])


def _jobs_by_run(study: Study) -> dict[str, set[str]]:
    runs: dict[str, set[str]] = {}
    for job in study.jobs:
        runs.setdefault(job.run, set()).add(job.notebook)
    return runs


def _blog_published() -> dict[str, float]:
    doc = yaml.safe_load((ROOT / "data" / "published" / "blog-2023.yaml").read_text())
    found: dict[str, float] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "id" in node and "value" in node:
                found[node["id"]] = node["value"]
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc)
    return found


# ------------------------------------------------------------------------------ every chapter


def test_every_chapter_of_every_params_file_executed_without_error(study: Study) -> None:
    runs = _jobs_by_run(study)
    for run, chapters in EXPECTED.items():
        assert chapters <= runs.get(run, set()), f"{run}: chapters missing from the batch"
    for job in study.jobs:
        assert f"ok     {job.run}/{job.notebook}" in study.stdout
        nb = study.executed(job.run, job.notebook)
        errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert errors == [], f"{job.run}/{job.notebook}"


def test_each_raw_file_is_read_once_per_chapter_execution(study: Study) -> None:
    """The measurements layer: no chapter reads (so checks and parses) a raw file twice.

    Raw files are the tool outputs the manifests list; a manifest or a dataset's prose may be read
    by several page helpers.
    """
    listed = {
        f"data/raw/{folder.name}/{entry['path']}"
        for folder in (study.root / "data" / "raw").iterdir()
        if (folder / "manifest.yaml").is_file()
        for entry in study.manifest(folder.name)
    }
    checked = 0
    for job in study.jobs:
        record = cache.load_record(study.project, job)
        assert record is not None, f"{job.run}/{job.notebook} left no cache record"
        raw = {rel for rel in record.reads if rel in listed}
        checked += len(raw)
        again = {rel: n for rel, n in record.reads_repeated.items() if rel in listed}
        assert not again, f"{job.run}/{job.notebook} read raw files more than once: {again}"
    assert checked > 1000, "the lab chapters alone read over a thousand raw files"


def test_every_glued_name_in_the_prose_is_glued_with_a_real_value(study: Study) -> None:
    checked = 0
    for job in study.jobs:
        nb = study.executed(job.run, job.notebook)
        values = glued_values(nb)
        refs = glue_references(nb)
        missing = sorted(refs - values.keys())
        assert missing == [], f"{job.run}/{job.notebook}: glued in prose but never glued: {missing}"
        for name in refs:
            value = values[name]
            assert value is not None and value != "", f"{job.run}/{job.notebook}: {name} is empty"
            if isinstance(value, float):
                assert math.isfinite(value), f"{job.run}/{job.notebook}: {name} = {value}"
        checked += len(refs)
    assert checked > 100  # the chapters do glue their numbers (217 references today)


def test_every_table_is_non_empty_and_exactly_the_linked_ones(study: Study) -> None:
    for run, chapters in _jobs_by_run(study).items():
        linked: set[tuple[str, str]] = set()
        for notebook in chapters:
            linked |= linked_tables(study.executed(run, notebook))
        written = {p.stem for p in study.results(run).glob("*.csv")}
        assert {(run, name) for name in written} == linked, f"{run}: tables written vs linked differ"
        for name in written:
            df = study.csv(run, name)
            assert len(df) > 0 and len(df.columns) > 0, f"results/{run}/{name}.csv is empty"


# ------------------------------------------------------------------------------ network


@pytest.mark.parametrize("run", ["lab-veth-2026", "blog-2023"])
def test_rtt_summary_matches_the_parser_and_a_regex_over_the_same_files(study: Study, run: str) -> None:
    summary = study.csv(run, "latency_summary").set_index(["network", "interval_s"])
    pings = [e for e in study.manifest(run) if e["tool"] == "ping"]
    assert len(summary) == len(pings)
    for entry in pings:
        path = study.raw(run) / entry["path"]
        parsed = ping.parse(path)
        by_regex = ping_times_ms(path)
        np.testing.assert_array_equal(parsed.rtt_ms, by_regex)  # the parser reads every reply
        row = summary.loc[(entry["labels"]["network"], entry["labels"]["interval_s"])]
        assert row["samples"] == len(by_regex)
        assert row["mean_ms"] == pytest.approx(by_regex.mean(), rel=1e-9)
        assert row["p50_ms"] == pytest.approx(np.percentile(by_regex, 50), rel=1e-9)
        assert row["p99_ms"] == pytest.approx(np.percentile(by_regex, 99), rel=1e-9)
        assert row["max_ms"] == pytest.approx(by_regex.max(), rel=1e-9)
        assert row["sstdev_ms"] == pytest.approx(by_regex.std(ddof=1), rel=1e-9)
    glued = study.glued(run, "network")
    assert glued["n_ping_files"] == len(pings)
    assert glued["n_rtt_samples"] == summary["samples"].sum()
    assert glued["lowest_mean_rtt_ms"] == pytest.approx(summary["mean_ms"].min())
    assert glued["highest_p99_rtt_ms"] == pytest.approx(summary["p99_ms"].max())


@pytest.mark.parametrize("run", ["lab-veth-2026", "blog-2023"])
def test_iperf3_rates_are_the_json_end_sums(study: Study, run: str) -> None:
    table = study.csv(run, "iperf3_summary").set_index("file")
    for entry in (e for e in study.manifest(run) if e["tool"] == "iperf3"):
        doc = json.loads((study.raw(run) / entry["path"]).read_text())
        expected = doc["end"]["sum_received"]["bits_per_second"] / 1e6
        assert table.loc[entry["path"], "received_mbit_per_s"] == pytest.approx(expected, rel=1e-9)
    assert study.glued(run, "network")["best_iperf_mbit_per_s"] == pytest.approx(
        table["received_mbit_per_s"].max()
    )


# ------------------------------------------------------------------------------ storage and model


@pytest.mark.parametrize("run", ["lab-veth-2026", "blog-2023"])
def test_local_throughput_is_iops_times_block_size(study: Study, run: str) -> None:
    local = study.csv(run, "local_throughput")
    assert (local["mib_per_s"] > 0).all()
    np.testing.assert_allclose(local["iops"] * local["bs_bytes"] / MIB, local["mib_per_s"], rtol=1e-6)
    np.testing.assert_allclose(1000.0 / local["iops"], local["op_ms"], rtol=1e-6)


@pytest.mark.parametrize("run", ["lab-veth-2026", "blog-2023"])
def test_model_terms_add_up_and_stay_below_the_link(study: Study, run: str) -> None:
    terms = study.csv(run, "latency_terms")
    totals = study.csv(run, "latency_totals").set_index(["configuration", "network", "device"])
    sums = terms.groupby(["configuration", "network", "device"])["ms"].sum()
    np.testing.assert_allclose(sums.loc[totals.index], totals["total_ms"], rtol=1e-9)
    network_inputs = study.csv(run, "model_network_inputs").set_index("network")
    link = network_inputs.loc[totals.index.get_level_values("network"), "link_mib_per_s"].to_numpy()
    assert (totals["mib_per_s"].to_numpy() < link).all()  # physics: never faster than the link
    rtt = study.csv(run, "latency_summary")
    for network, row in network_inputs.iterrows():
        interval_s = row["ping_interval_ms"] / 1000
        mean = rtt[(rtt["network"] == network) & np.isclose(rtt["interval_s"], interval_s)]["mean_ms"]
        assert row["mean_rtt_ms"] == pytest.approx(mean.item())
        assert row["one_way_ms"] == pytest.approx(row["mean_rtt_ms"] / 2)


# ------------------------------------------------------------------------------ the blog's projections


def test_blog_worked_examples_reproduce_from_the_projections_csv(study: Study) -> None:
    published = _blog_published()
    table = study.csv("blog-2023", "projection_blog_inputs").set_index(
        ["max_outstanding_r2t", "network", "device"]
    )
    for r2t, expected_ms in ((1, 70.14), (16, 49.14)):
        row = table.loc[(r2t, "wireless", "hdd")]
        assert published[f"projection.r2t{r2t}.wireless_hdd.op_ms"] == expected_ms
        assert row["op_ms"] == pytest.approx(expected_ms, abs=0.005)
        # the blog's worked example, term by term: device + CPU + 32 segments of 64 KiB + one-way trips
        trips = 2 + 2 * row["waves"]
        by_hand = row["device_ms"] + row["cpu_ms"] + 32 * row["per_64k_ms"] + trips * row["one_way_ms"]
        assert by_hand == pytest.approx(expected_ms, abs=0.005)
    bs_mib = study.glued("blog-2023", "projections")["bs_kib"] / 1024
    np.testing.assert_allclose(table["mib_per_s"], bs_mib * 1000 / table["op_ms"], rtol=1e-9)


def test_measured_projections_against_fio_and_the_link(study: Study) -> None:
    measured = study.csv("blog-2023", "projection_measured_inputs")
    runs = study.csv("blog-2023", "validation_runs")
    for row in runs.itertuples():
        files = row.files.split(", ")
        assert len(files) == row.runs
        rates = [
            json.loads((study.raw("blog-2023") / f).read_text())["jobs"][0]["write"]["bw_bytes"] / MIB
            for f in files
        ]
        assert row.measured_mib_per_s == pytest.approx(np.mean(rates), rel=1e-6)
    keys = ["max_outstanding_r2t", "network", "device"]
    joined = measured.merge(runs, on=keys, suffixes=("", "_run"))
    assert len(joined) == len(measured) == len(runs)
    np.testing.assert_allclose(joined["measured_mib_per_s"], joined["measured_mib_per_s_run"], rtol=1e-9)
    # positive error: the model is pessimistic (slower than measured), as the chapter says
    assert (
        np.sign(measured["error_pct"]) == np.sign(measured["measured_mib_per_s"] - measured["mib_per_s"])
    ).all()
    link = study.csv("blog-2023", "projection_network_inputs").set_index("network")["link_mib_per_s"]
    assert (measured["mib_per_s"].to_numpy() < link.loc[measured["network"]].to_numpy()).all()
    assert (measured["measured_mib_per_s"].to_numpy() < link.loc[measured["network"]].to_numpy()).all()
    glued = study.glued("blog-2023", "projections")
    assert glued["max_abs_error_pct"] == pytest.approx(measured["error_pct"].abs().max())
    assert glued["mean_error_pct"] == pytest.approx(measured["error_pct"].mean())


def test_fit_residuals_and_validation_errors_are_consistent(study: Study) -> None:
    res = study.csv("blog-2023", "fit_residuals")
    np.testing.assert_allclose(res["op_ms"] - res["fitted_ms"], res["resid_ms"], atol=1e-6)
    # the summary of each method is the mean and max of its per-configuration held-out errors
    per_config = study.csv("blog-2023", "validation_per_configuration")
    methods = study.csv("blog-2023", "validation_methods").set_index("method")
    assert len(methods) >= 3  # the primary model and both baselines at least
    for method, row in methods.iterrows():
        errors = per_config[method].abs()
        assert row["folds"] == len(per_config) == errors.notna().sum()
        np.testing.assert_allclose(errors.mean(), row["mean_abs_error_pct"], rtol=1e-6)
        np.testing.assert_allclose(errors.max(), row["max_abs_error_pct"], rtol=1e-6)


def test_whatif_throughput_never_exceeds_the_link_and_grows_with_it(study: Study) -> None:
    grid = study.csv("blog-2023", "whatif_grid_mib_per_s")
    rates = [c for c in grid.columns if c.endswith(" Mbit/s")]
    assert len(rates) >= 2
    for column in rates:
        link_mib_per_s = float(column.split()[0]) * 1e6 / 8 / MIB
        assert (grid[column] <= link_mib_per_s).all(), column
    assert (np.diff(grid[rates].to_numpy(), axis=1) >= -1e-9).all()  # a faster link never slows a write
    for _, group in grid.groupby(["device", "max_outstanding_r2t"]):
        ordered = group.sort_values("one_way_ms")[rates].to_numpy()
        assert (np.diff(ordered, axis=0) <= 1e-9).all()  # a longer trip never speeds a write up
    upgrades = study.csv("blog-2023", "whatif_upgrades")
    assert (upgrades["mib_per_s"] <= upgrades["link_bps"] / 8 / MIB).all()


def test_audit_counts_add_up(study: Study) -> None:
    audit = study.csv("blog-2023", "audit")
    np.testing.assert_allclose(audit["recomputed"] - audit["published"], audit["difference"], atol=1e-6)
    counts = study.csv("blog-2023", "audit_counts").set_index("verdict")
    assert counts["total"].sum() == len(audit)
    assert counts["total"].to_dict() == audit["verdict"].value_counts().to_dict()
    mismatches = study.csv("blog-2023", "audit_mismatches")
    assert set(audit.loc[audit["verdict"] == "mismatch", "id"]) <= set(mismatches["id"]) <= set(audit["id"])
    assert study.glued("blog-2023", "audit")["n_total"] == len(audit)


def test_cross_study_binding_bound_is_the_tightest(study: Study) -> None:
    bounds = study.csv("cross-study", "bounds")
    kinds = [c.removeprefix("frac_") for c in bounds.columns if c.startswith("frac_")]
    complete = bounds.dropna(subset=[f"frac_{k}" for k in kinds])
    assert len(complete) > 0
    for row in complete.itertuples():
        fracs = {k: getattr(row, f"frac_{k}") for k in kinds}
        for k in kinds:
            assert fracs[k] == pytest.approx(
                row.achieved_bytes_per_s / getattr(row, f"bound_{k}_bytes_per_s")
            )
        assert row.tightest == max(fracs, key=fracs.__getitem__)
        assert row.tightest_fraction == pytest.approx(max(fracs.values()))
    audit = study.csv("cross-study", "cross_study_audit")
    np.testing.assert_allclose(audit["recomputed"] - audit["published"], audit["difference"], atol=1e-6)


# ------------------------------------------------------------------------- what the run cache re-executes


def _mtimes(study: Study) -> dict[Path, int]:
    outputs = [study.project.executed(j.run, j.notebook) for j in study.jobs]
    outputs += sorted((study.root / "results").rglob("*.csv"))
    return {p: p.stat().st_mtime_ns for p in outputs}


def _append_comment(path: Path) -> None:
    path.write_text(path.read_text() + "\n# an edit that changes no behaviour\n")


def test_editing_pipeline_code_reexecutes_no_chapter_but_analyses_code_does(study: Study) -> None:
    package = study.root / "src" / "iscsi_report"
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "from iscsi_report.core.paths import Project; print(Project.at('.').package_dir)",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=study.env,
    )
    assert Path(where.stdout.strip()) == package  # the CLI runs the copy, not the repository's package
    code_dirs = (package / "core", package / "analyses", package / "presentation")
    before = _mtimes(study)
    digest = code_digest(*code_dirs)
    for module in ("build.py", "batch.py", "cache.py"):
        _append_comment(package / "pipeline" / module)
    assert code_digest(*code_dirs) == digest
    result = cli(study.root, "run", "--jobs", "2", env=study.env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "queued" not in result.stdout
    statuses = re.findall(r"^(\S+)\s+(\S+)\s+[0-9.]+\s+(\S+)$", result.stdout, flags=re.M)
    assert sorted(statuses) == sorted((j.run, j.notebook, "cached") for j in study.jobs)
    assert _mtimes(study) == before

    _append_comment(package / "presentation" / "report.py")  # code every chapter imports
    changed = code_digest(*code_dirs)
    assert changed != digest
    stale = {(j.run, j.notebook): cache.why_stale(study.project, j, changed) for j in study.jobs}
    assert set(stale.values()) == {"notebook, parameters or package code changed"}
    result = cli(study.root, "run", "cross-study", "--jobs", "2", env=study.env)  # the quickest run
    assert result.returncode == 0, result.stdout + result.stderr
    assert "queued  cross-study/cross_study: notebook, parameters or package code changed" in result.stdout
    after = _mtimes(study)
    rerun = study.project.executed("cross-study", "cross_study")
    assert after[rerun] > before[rerun]
    assert {p for p in before if after[p] != before[p] and "cross-study" not in p.parts} == set()


def test_no_id_written_for_code_reaches_a_reader(study: Study) -> None:
    """Issue 25: tables and chart titles (axes, legends, tooltips) of every executed chapter are words."""
    shown = {
        f"{run}/{notebook}": sorted(reader_ids(study.executed(run, notebook)))
        for run, notebooks in _jobs_by_run(study).items()
        for notebook in notebooks
    }
    assert {page: ids for page, ids in shown.items() if ids} == {}


# Issue 25: a quantity quoted on more than one page is one number. Each pair names the front
# page's glue key and the key of the chapter the front page quotes for it.
QUOTED_ON_THE_FRONT_PAGE = {
    ("blog-2023", "projections"): {
        "measured_mib_per_s": "q1_measured_mib_per_s_measured",
        "link_mib_per_s": "q1_link_mib_per_s_measured",
        "local_device_mib_per_s": "q1_local_device_mib_per_s_measured",
        "op_ms": "q1_op_ms_measured",
        "trips_share_pct": "q1_one_way_trips_share_pct_measured",
        "transmission_share_pct": "q1_transmission_share_pct_measured",
        "device_share_pct": "q1_device_share_pct_measured",
        "cpu_share_pct": "q1_cpu_share_pct_measured",
        "ssd_local_gain_pct": "q3_local_gain_pct_measured",
    },
    ("blog-2023", "whatif"): {
        "today_fitted_mib_per_s": "today_mib_per_s",
        "wired_fitted_gain_pct": "wired_gain_pct",
        "ssd_fitted_gain_pct": "ssd_gain_pct",
        "r2t_fitted_gain_pct": "r2t_gain_pct",
        "all_fitted_mib_per_s": "all_three_mib_per_s",
        "faster_link_binding": "faster_link_binding",
    },
}


def test_one_number_per_quantity_across_pages(study: Study) -> None:
    """The front page, Conclusions and the chapters they quote give each quantity the same value."""
    front, conclusions = study.glued("summary", "front"), study.glued("summary", "conclusions")
    assert {k: conclusions[k] for k in front if k in conclusions} == {
        k: v for k, v in front.items() if k in conclusions
    }
    for (run, chapter), keys in QUOTED_ON_THE_FRONT_PAGE.items():
        glued = study.glued(run, chapter)
        differ = {f: (front[f], glued[c]) for f, c in keys.items() if not _same(front[f], glued[c])}
        assert differ == {}, f"{run}/{chapter}"
    effect = study.csv("summary", "lab_window_effect")  # Conclusions' table of the real-iSCSI window
    row = effect[effect["Delay measured, one way (ms)"] == front["lab_one_way_ms"]]
    assert len(row) == 1 and _same(float(row["Gain (%)"].iloc[0]), front["r2t_lab_gain_pct"])


def _same(a: Any, b: Any) -> bool:
    """Equal values: numbers to 1e-9 relative (the same computation, re-read), text exactly."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9)
    return bool(a == b)
