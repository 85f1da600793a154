"""Source notebooks, params files and the toc agree with each other and with the conventions."""

from __future__ import annotations

from pathlib import Path

import pytest

from iscsi_report.core.paths import Project
from iscsi_report.pipeline.build import toc_files
from iscsi_report.pipeline.params import INJECTED, discover, jobs_for, parameters_cell, read_notebook

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.md"))
NOTEBOOKS = [p for p in NOTEBOOKS if p.name != "README.md"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_source_notebook_is_clean(path: Path) -> None:
    nb = read_notebook(path)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "outputs committed"
    defaults = parameters_cell(path)
    assert set(INJECTED) <= set(defaults)
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")


# A clock read in a chapter makes two executions of the same inputs publish different bytes (issue 24).
CLOCKS = ("time.time(", "perf_counter(", "monotonic(", "datetime.now(", "date.today(", "process_time(")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_chapter_reads_a_clock(path: Path) -> None:
    """Chapters are functions of their inputs: no wall-clock reading may reach a published page."""
    code = "\n".join(c.source for c in read_notebook(path).cells if c.cell_type == "code")
    assert [clock for clock in CLOCKS if clock in code] == []


def test_every_params_file_validates_and_every_chapter_is_in_the_toc() -> None:
    project = Project.at(ROOT)
    listed = toc_files(project)
    executed = set()
    for spec in discover(project):
        for job in jobs_for(project, spec):
            executed.add(f"runs/{job.run}/{job.notebook}")
    assert executed == {entry for entry in listed if entry.startswith("runs/")}


def test_every_notebook_is_used_by_some_run() -> None:
    project = Project.at(ROOT)
    used = {nb for spec in discover(project) for nb in spec.notebooks}
    assert used == {p.stem for p in NOTEBOOKS}
