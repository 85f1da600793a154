"""End to end: papermill batch + strict jupyter-book build on the small real lab dataset."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from iscsi_report.core.dataset import update_checksums

from .projects import LAB, add_notebook, cli, make_project

pytestmark = [pytest.mark.e2e]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A project copy with two runs over two copies of the lab dataset, built once."""
    project = make_project(
        tmp_path_factory.mktemp("proj"),
        runs={LAB: (LAB, ["network"]), "lab-copy": ("lab-copy", ["network"])},
    )
    result = cli(project, "book", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    return project, result.stdout


def _ping_times(path: Path) -> np.ndarray:
    """RTTs read straight from the raw file with a regex, independently of the parser."""
    return np.array([float(x) for x in re.findall(r"time=([0-9.]+) ms", path.read_text())])


def test_book_builds_with_glued_numbers_and_tables(built: tuple[Path, str]) -> None:
    project, _ = built
    html = project / "_build" / "html"
    assert (html / "index.html").is_file()
    table = pd.read_csv(project / "results" / LAB / "latency_summary.csv")
    raw = project / "data" / "raw" / LAB / "ping"
    expected = min(_ping_times(p).mean() for p in raw.glob("*.txt"))
    assert table["mean_ms"].min() == pytest.approx(expected, rel=1e-9)
    page = (html / "runs" / LAB / "network.html").read_text()
    assert f"{expected:.3f}" in page  # the glued number reached the prose
    assert "latency_summary.csv" in page  # and the table's download link


def test_no_change_rebuild_executes_nothing(built: tuple[Path, str]) -> None:
    project, _ = built
    result = cli(project, "book", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "queued" not in result.stdout
    assert result.stdout.count("cached") == 2
    assert "up to date" in result.stdout


def test_changed_raw_file_reexecutes_only_runs_that_read_it(built: tuple[Path, str]) -> None:
    project, _ = built
    ping = project / "data" / "raw" / "lab-copy" / "ping" / "veth-2ms.txt"
    ping.write_text(ping.read_text().replace("time=0.001 ms", "time=0.002 ms", 1))
    update_checksums(ping.parents[1])
    result = cli(project, "run", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "queued  lab-copy/network: raw input changed" in result.stdout
    assert f"queued  {LAB}/network" not in result.stdout


def test_edited_notes_reexecute_the_chapter_that_shows_them(built: tuple[Path, str]) -> None:
    project, _ = built
    notes = project / "data" / "raw" / "lab-copy" / "notes.yaml"
    notes.write_text(notes.read_text().replace("Both ends", "Edited note about both ends", 1))
    result = cli(project, "run", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "queued  lab-copy/network: raw input changed" in result.stdout
    assert f"queued  {LAB}/network" not in result.stdout
    executed = (project / "book" / "runs" / "lab-copy" / "network.ipynb").read_text()
    assert "Edited note about both ends" in executed


def test_raising_notebook_fails_loudly_and_keeps_previous_site(built: tuple[Path, str]) -> None:
    project, _ = built
    site = project / "_build" / "html"
    before_target = site.resolve()
    before_index = (site / "index.html").read_bytes()
    add_notebook(project, "boom", "1 / 0")
    params = project / "params" / f"{LAB}.yaml"
    doc = yaml.safe_load(params.read_text())
    doc["notebooks"].append("boom")
    params.write_text(yaml.safe_dump(doc))
    try:
        result = cli(project, "book", "--jobs", "2")
        assert result.returncode != 0
        assert f"FAILED {LAB}/boom" in result.stdout
        assert "ZeroDivisionError" in result.stdout
        failed = project / ".cache" / "failed" / LAB / "boom.ipynb"
        assert str(failed) in result.stdout and failed.is_file()
        assert site.resolve() == before_target
        assert (site / "index.html").read_bytes() == before_index
    finally:
        doc["notebooks"].remove("boom")
        params.write_text(yaml.safe_dump(doc))


def test_failed_build_keeps_previous_site(built: tuple[Path, str]) -> None:
    project, _ = built
    site = project / "_build" / "html"
    before = site.resolve()
    intro = project / "book" / "intro.md"
    original = intro.read_text()
    intro.write_text(original + "\n{doc}`no-such-page`\n")  # a broken reference: -W fails
    try:
        result = cli(project, "build")
        assert result.returncode == 1
        assert "previous site is untouched" in result.stdout
        assert site.resolve() == before and (site / "index.html").is_file()
    finally:
        intro.write_text(original)


def test_unknown_parameter_fails_before_anything_runs(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    params = project / "params" / f"{LAB}.yaml"
    doc = yaml.safe_load(params.read_text())
    doc["notebooks"] = [{"network": {"no_such_knob": 3}}]
    params.write_text(yaml.safe_dump(doc))
    result = cli(project, "run")
    assert result.returncode == 2
    assert f"{params}: notebooks.network.no_such_knob: unknown parameter" in result.stderr
    assert not (project / "book" / "runs").exists()


def test_notebook_without_parameters_tag_is_refused(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    add_notebook(project, "untagged", "x = 1")
    nb_path = project / "notebooks" / "untagged.md"
    nb_path.write_text(nb_path.read_text().replace("[parameters]", "[other]"))
    (project / "params" / "extra.yaml").write_text(
        yaml.safe_dump({"title": "t", "dataset": LAB, "notebooks": ["untagged"]})
    )
    result = cli(project, "run")
    assert result.returncode == 2
    assert "expected exactly one cell tagged 'parameters', found 0" in result.stderr
    shutil.rmtree(project / "book" / "runs", ignore_errors=True)
