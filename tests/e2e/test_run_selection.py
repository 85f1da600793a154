"""Runs are distinct in the book: a generated toc part per params file, `book RUN` builds only the
chosen runs, `enabled: false` leaves a bundled study out, and a model chapter with nothing to model
builds green and says what is missing (issue 14)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from fast_yaml import load_yaml

from iscsi_report.core.paths import Project
from iscsi_report.pipeline import toc
from iscsi_report.pipeline.build import prepare_toc, toc_files
from iscsi_report.pipeline.params import discover

from .projects import LAB, REFERENCE_PAGES, ROOT, cli, make_project

pytestmark = [pytest.mark.e2e]

# The Reference part as the real base toc has it: chapters link glossary terms and cite references.
REFERENCE = {"caption": "Reference", "chapters": [{"file": page} for page in REFERENCE_PAGES]}
BASE = {"format": "jb-book", "root": "intro", "parts": [toc.PLACEHOLDER, REFERENCE]}


def _params(project: Path, run: str, dataset: str, notebooks: list[str], **extra: object) -> None:
    doc = {"title": f"Study {run}", "short_title": run, "dataset": dataset, "notebooks": notebooks, **extra}
    (project / "params" / f"{run}.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")


def _pings_only(project: Path) -> None:
    """A dataset holding only the lab's two ping files (no iperf3, no fio)."""
    lab = load_yaml(ROOT / "data/raw" / LAB / "manifest.yaml")
    dest = project / "data/raw/pings"
    for entry in lab["files"]:
        if entry["tool"] == "ping":
            (dest / entry["path"]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / "data/raw" / LAB / entry["path"], dest / entry["path"])
    doc = {**lab, "dataset": "pings", "iscsi_parameters": {}}
    doc["files"] = [e for e in lab["files"] if e["tool"] == "ping"]
    (dest / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def _make(dest: Path) -> Path:
    """A project copy with three runs: ``mine`` (the model over pings only), ``bundled``, and ``off``."""
    root = make_project(dest)
    shutil.copytree(ROOT / "data/published", root / "data/published")
    (root / "params" / f"{LAB}.yaml").unlink()
    (root / "book" / toc.BASE_NAME).write_text(yaml.safe_dump(BASE, sort_keys=False), encoding="utf-8")
    _params(root, "mine", "pings", ["model"])
    _params(root, "bundled", LAB, ["network"])
    _params(root, "off", LAB, ["network"], enabled=False)
    _pings_only(root)
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh, unbuilt copy."""
    return _make(tmp_path / "p")


@pytest.fixture(scope="module")
def built_mine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A copy after ``book mine`` (built once for the module) and what it said: read it, never change it.

    Both book tests start from this build; the one that builds further works on a private copy.
    """
    root = _make(tmp_path_factory.mktemp("built-mine") / "p")
    return root, cli(root, "book", "mine", "--jobs", "1")


def test_toc_parts_are_generated_per_enabled_run(project: Path) -> None:
    p = Project.at(project)
    assert [s.name for s in discover(p)] == ["bundled", "mine"]  # 'off' has enabled: false
    path = prepare_toc(p)
    assert path == project / "book/_toc.yml" and path.read_text().startswith("# GENERATED")
    doc = yaml.safe_load(path.read_text())
    assert [part["caption"] for part in doc["parts"]] == ["Study bundled", "Study mine", "Reference"]
    assert doc["parts"][1]["chapters"] == [{"file": "runs/mine/model", "title": "Model — mine"}]
    chosen = prepare_toc(p, discover(p, ["mine"]))
    assert chosen != path and toc_files(p, chosen) == {"intro", "runs/mine/model", *REFERENCE_PAGES}
    assert "runs/bundled/network" in toc_files(p)  # book/_toc.yml still describes the whole book


def test_book_run_builds_only_that_run_and_the_empty_model_says_what_is_missing(
    built_mine: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    project, proc = built_mine
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (project / "book/runs/bundled").exists()  # the bundled study was not executed
    site = project / "_build/html"
    assert not (site / "runs/bundled").exists()
    page = (site / "runs/mine/model.html").read_text(encoding="utf-8")
    assert "Nothing to model in this dataset" in page
    assert "no forward TCP iperf3" in page  # the network has pings but no link rate
    assert "no local fio run" in page  # and there is no device to fit
    assert "Model — mine" in (site / "intro.html").read_text(encoding="utf-8")  # the sidebar


def test_book_of_one_run_keeps_the_other_published_runs_in_the_site(
    built_mine: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    """A user rebuilding their run must not unpublish the rest of the site (issue 23)."""
    shared, first = built_mine
    assert first.returncode == 0, first.stdout + first.stderr
    project = tmp_path / "p"  # a private copy: the relative _build/html link and cache records stay valid
    shutil.copytree(shared, project, symlinks=True)
    second = cli(project, "book", "bundled", "--jobs", "1")
    assert second.returncode == 0, second.stdout + second.stderr
    site = project / "_build/html"
    assert (site / "runs/bundled/network.html").is_file()
    assert (site / "runs/mine/model.html").is_file(), "the run built before stays published"
