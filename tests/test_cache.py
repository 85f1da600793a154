"""The run cache is keyed on content: notebook, parameters, package code, and the files read."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from iscsi_report.analyses import about, fleet
from iscsi_report.core.dataset import Dataset
from iscsi_report.core.ingest import textio
from iscsi_report.core.ingest.textio import READS_LOG_ENV
from iscsi_report.core.measurements import Measurements
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import cache
from iscsi_report.pipeline.params import NotebookJob


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Project, NotebookJob]:
    project = Project.at(tmp_path)
    nb = tmp_path / "notebooks" / "chap.md"
    nb.parent.mkdir()
    nb.write_text("{}")
    for rel in ("data/raw/a.txt", "results/run/t.csv"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    job = NotebookJob("run", "chap", nb, {"dataset": "d", "project_root": str(tmp_path)}, 60)
    record = cache.Record(
        cache.static_key(job, "code"),
        cache.digests(project, ["data/raw/a.txt"]),
        cache.digests(project, ["results/run/t.csv"]),
        1.0,
    )
    cache.save_record(project, job, record)
    return project, job


def test_unchanged_job_is_fresh(setup: tuple[Project, NotebookJob]) -> None:
    project, job = setup
    assert cache.why_stale(project, job, "code") is None


def test_changed_raw_file_makes_it_stale(setup: tuple[Project, NotebookJob]) -> None:
    project, job = setup
    (project.root / "data/raw/a.txt").write_text("changed")
    assert cache.why_stale(project, job, "code") == "raw input changed"


def test_changed_code_notebook_or_params_make_it_stale(setup: tuple[Project, NotebookJob]) -> None:
    project, job = setup
    assert cache.why_stale(project, job, "other code") is not None
    job.source.write_text('{"x": 1}')
    assert cache.why_stale(project, job, "code") is not None


def test_params_change_but_not_place_change(setup: tuple[Project, NotebookJob]) -> None:
    project, job = setup
    place = {**job.parameters, "project_root": "/elsewhere"}
    moved = NotebookJob(job.run, job.notebook, job.source, place, 60)
    assert cache.why_stale(project, moved, "code") is None
    other = NotebookJob(job.run, job.notebook, job.source, {**job.parameters, "dataset": "e"}, 60)
    assert cache.why_stale(project, other, "code") == "notebook, parameters or package code changed"


def test_missing_or_edited_output_makes_it_stale(setup: tuple[Project, NotebookJob]) -> None:
    project, job = setup
    (project.root / "results/run/t.csv").write_text("tampered")
    assert cache.why_stale(project, job, "code") == "outputs missing or modified"


def test_no_record_means_never_run(tmp_path: Path) -> None:
    job = NotebookJob("r", "n", tmp_path / "n.md", {}, 1)
    assert cache.why_stale(Project.at(tmp_path), job, "c") == "never run"


def test_code_key_covers_every_package_a_notebook_imports() -> None:
    """An edit to any layer a chapter imports (core, analyses, presentation) re-executes the chapters;
    the pipeline, the CLI and the lab are left out of the key."""
    project = Project.at(Path(__file__).resolve().parents[1])
    hashed = {d.relative_to(project.package_dir).as_posix() for d in project.notebook_code_dirs}
    assert hashed == {"core", "analyses", "presentation"}
    assert all(d.is_dir() for d in project.notebook_code_dirs)
    chapters = [nb for nb in project.notebooks_dir.glob("*.md") if nb.name != "README.md"]
    sources = [nb.read_text(encoding="utf-8") for nb in chapters]
    imported = {layer for text in sources for layer in re.findall(r"\biscsi_report\.(\w+)", text)}
    assert imported and imported <= hashed, "a notebook imports code the run cache does not hash"


@pytest.mark.parametrize(
    "text", ["[]", "null", '{"version": 1, "key": "k", "reads": [], "outputs": {}}', "{"]
)
def test_a_record_of_another_shape_is_no_record(setup: tuple[Project, NotebookJob], text: str) -> None:
    project, job = setup
    cache.record_path(project, job).write_text(text)
    assert cache.load_record(project, job) is None
    assert cache.why_stale(project, job, "code") == "never run"


def test_pruning_deletes_only_the_runs_own_tables_whatever_the_record_lists(tmp_path: Path) -> None:
    from iscsi_report.pipeline.prune import prune

    project = Project.at(tmp_path / "proj")
    victim = tmp_path / "victim.csv"
    victim.write_text("keep me")
    other = project.results_dir / "other" / "t.csv"  # a table of a run that is still asked for
    own = project.results_dir / "gone" / "t.csv"
    for p in (other, own):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    (project.results_dir / "gone" / "link.csv").symlink_to(victim)  # a link to a file elsewhere
    for run in ("gone", "other"):
        (project.runs_dir / run).mkdir(parents=True, exist_ok=True)
        (project.runs_dir / run / "chap.ipynb").write_text("{}")
    record = project.cache_dir / "runs" / "gone" / "chap.json"
    record.parent.mkdir(parents=True)
    listed = ["../victim.csv", "results/other/t.csv", "results/gone/t.csv", "results/gone/link.csv"]
    record.write_text(json.dumps({"outputs": dict.fromkeys(listed, "x")}))
    still = NotebookJob("other", "chap", project.runs_dir / "other" / "chap.ipynb", {}, 60)
    prune(project, [still], io.StringIO())
    assert victim.read_text() == "keep me", "a file outside the project is never deleted"
    assert other.read_text() == "x", "another run's table is not this record's to delete"
    assert not own.exists() and not (project.runs_dir / "gone").exists()


def _record_from_reads(
    project: Project, job: NotebookJob, read: Callable[[], object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Call ``read`` with a reads log as a batch kernel does; save the job's record from that log."""
    log = project.root / "reads.log"
    monkeypatch.setenv(READS_LOG_ENV, str(log))
    read()
    monkeypatch.delenv(READS_LOG_ENV)
    reads, repeated = cache.read_log(project, log)
    cache.save_record(project, job, cache.Record(cache.static_key(job, "code"), reads, {}, 1.0, repeated))


def test_a_new_dataset_makes_a_run_that_listed_the_datasets_stale(
    setup: tuple[Project, NotebookJob], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fleet chapter picks every dataset with a manifest: a new one must re-execute it (issue 24)."""
    project, job = setup
    (project.raw_dir / "host-a").mkdir()
    (project.raw_dir / "host-a" / "manifest.yaml").write_text("files: []\n")
    _record_from_reads(project, job, lambda: fleet.manifests(project.raw_dir), monkeypatch)
    assert cache.load_record(project, job).reads == {"data/raw": cache.listing_digest(project.raw_dir)}
    assert cache.why_stale(project, job, "code") is None
    (project.raw_dir / "host-b").mkdir()
    (project.raw_dir / "host-b" / "manifest.yaml").write_text("files: []\n")
    assert cache.why_stale(project, job, "code") == "raw input changed"
    assert project.raw_dir not in textio.files_read(), "a listed folder is no raw file to download"


def test_an_edited_notes_file_makes_the_chapters_that_read_it_stale(
    setup: tuple[Project, NotebookJob], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, job = setup
    root = project.raw_dir / "x"
    root.mkdir()
    (root / "notes.yaml").write_text("chapters:\n  network: first words\n")
    ds = Measurements(Dataset("x", root, "x", False, "", {}, []))
    _record_from_reads(project, job, lambda: about.notes(ds), monkeypatch)
    assert "data/raw/x/notes.yaml" in cache.load_record(project, job).reads
    assert cache.why_stale(project, job, "code") is None
    (root / "notes.yaml").write_text("chapters:\n  network: other words\n")
    assert cache.why_stale(project, job, "code") == "raw input changed"
