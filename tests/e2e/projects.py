"""Helpers to make throwaway copies of the project for end-to-end tests.

``build_once`` runs a costly build at most once per test run, however many xdist workers ask for
it: the first builds under a file lock in the run's shared temporary root, the others wait and
reuse the folder (pytest-xdist's "session-scoped fixture executed once" recipe).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml
from filelock import FileLock

from iscsi_report.core.paths import Project
from iscsi_report.pipeline import provenance, warm

ROOT = Path(__file__).resolve().parents[2]
LAB = "lab-veth-2026"
# The Reference part every copy carries: chapters link glossary terms and cite references, and the
# strict build refuses a term or citation whose page is missing.
REFERENCE_PAGES = ["model_equation", "glossary", "references"]
BUILT_MARK = ".built-once"  # written last in a build_once folder: the build finished
STUDY_STDOUT = ".study-run-stdout.txt"  # the first execution's output, kept beside the executed study
# The provenance pages' per-file tool cache (pipeline/provenance.py, in a project's .cache/): without
# it a `book` of the study parses all of its raw files again (about a minute) only to name each tool.
TOOL_CACHE = "provenance-tools.json"
TOOLS_BUILT_AT = "2026-01-01T00:00:00Z"  # the pages computed to fill the cache are thrown away


def make_project(dest: Path, runs: dict[str, tuple[str, list[str]]] | None = None) -> Path:
    """Copy notebooks, book sources (intro and the Reference part), config and the lab dataset into ``dest``.

    ``runs`` maps run name -> (dataset, notebooks); default: the lab run with the network chapter.
    """
    runs = runs or {LAB: (LAB, ["network"])}
    shutil.copytree(ROOT / "notebooks", dest / "notebooks")
    (dest / "book").mkdir(parents=True)
    shutil.copy(ROOT / "book" / "intro.md", dest / "book" / "intro.md")
    shutil.copy(ROOT / "_config.yml", dest / "_config.yml")
    (dest / "params").mkdir()
    for dataset in {d for d, _ in runs.values()}:
        shutil.copytree(ROOT / "data" / "raw" / LAB, dest / "data" / "raw" / dataset)
    chapters = []
    for run, (dataset, notebooks) in runs.items():
        doc = {"title": f"test run {run}", "dataset": dataset, "timeout_s": 300, "notebooks": notebooks}
        (dest / "params" / f"{run}.yaml").write_text(yaml.safe_dump(doc))
        chapters += [{"file": f"runs/{run}/{nb}"} for nb in notebooks]
    for page in REFERENCE_PAGES:
        shutil.copy(ROOT / "book" / f"{page}.md", dest / "book" / f"{page}.md")
    if (ROOT / "book" / "_static").is_dir():  # the site's own assets (the page's one code switch)
        shutil.copytree(ROOT / "book" / "_static", dest / "book" / "_static")
    reference = {"caption": "Reference", "chapters": [{"file": page} for page in REFERENCE_PAGES]}
    toc = {
        "format": "jb-book",
        "root": "intro",
        "parts": [{"caption": "Runs", "chapters": chapters}, reference],
    }
    (dest / "book" / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    return dest


def add_notebook(project: Path, name: str, code: str) -> None:
    """Write a minimal chapter notebook whose body is ``code``."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('run_name = ""\ndataset = ""\nproject_root = ""\nresults_dir = ""')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {name}"), params, nbformat.v4.new_code_cell(code)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    jupytext.write(nb, project / "notebooks" / f"{name}.md", fmt="md:myst")


def make_study_project(dest: Path) -> Path:
    """Copy the real params, chapters, published numbers, pre-registrations and every raw dataset
    (chapters such as the lab validation's confirmation sweep and the fleet read datasets beyond
    their run's own; the Forecasts chapter reads frozen forecasts)."""
    for folder in ("notebooks", "params", "data/published", "data/preregistered", "data/raw"):
        shutil.copytree(ROOT / folder, dest / folder)
    shutil.copytree(ROOT / "book", dest / "book", ignore=shutil.ignore_patterns("runs"))
    shutil.copy(ROOT / "_config.yml", dest / "_config.yml")
    return dest


def copy_package(dest: Path) -> dict[str, str]:
    """Copy ``src/`` into ``dest/src``; return an environment whose Python imports that copy first."""
    shutil.copytree(ROOT / "src", dest / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return {**os.environ, "PYTHONPATH": str(dest / "src")}


def cli(
    project: Path, *args: str, timeout: int = 900, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``iscsi-report --root project ARGS`` in a subprocess (``env``: its environment), capturing text."""
    return subprocess.run(
        [sys.executable, "-m", "iscsi_report.cli", "--root", str(project), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def build_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Path]) -> Path:
    """``build(folder)`` run once per test run (all xdist workers); every caller gets its result."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's root, common to every worker
    folder = shared / f"built-{name}"
    with FileLock(str(shared / f"built-{name}.lock")):
        mark = folder / BUILT_MARK
        if mark.is_file():
            return Path(mark.read_text())
        if folder.exists():  # an earlier attempt failed: start from nothing
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        result = build(folder)
        mark.write_text(str(result))
        return result


def _execute_study(folder: Path) -> Path:
    """The real params, chapters and datasets in a copy running its own ``src/``, every run executed."""
    root = make_study_project(folder / "study")
    env = copy_package(root)
    # --warm: the warm pool's e2e test compares this execution with a cold one of the same chapters
    result = cli(root, "run", "--jobs", "2", "--warm", env=env, timeout=3600)
    assert result.returncode == 0, result.stdout + result.stderr
    (folder / STUDY_STDOUT).write_text(result.stdout)
    return root


def shared_study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The study executed once per test run (warm), shared: (root, stdout). Read it, never change it."""
    root = build_once(tmp_path_factory, "study", _execute_study)
    return root, (root.parent / STUDY_STDOUT).read_text()


def executed_study(tmp_path_factory: pytest.TempPathFactory, dest: Path) -> tuple[Path, str]:
    """A private copy at ``dest`` of the study executed once per test run: (root, the execution's stdout).

    The copy keeps its run cache (content-keyed, no paths in it): ``run`` or ``book`` on it executes
    nothing that already ran; its ``src/`` is its own (``study_env``), free to edit.
    """
    shared, stdout = shared_study(tmp_path_factory)
    shutil.copytree(shared, dest, symlinks=True)
    return dest, stdout


def _fill_tool_cache(folder: Path) -> Path:
    """The tool cache of every bundled dataset, filled in a scratch copy of the study (nothing executed).

    The cache is keyed by each file's sha256 and the package code, not by path or by what ran, so
    it serves any copy of the project that builds its provenance pages.
    """
    scratch = make_study_project(folder / "study")
    project = Project.at(scratch)
    provenance.read_datasets(
        project, sorted(d for d in project.raw_dir.iterdir() if (d / "manifest.yaml").is_file())
    )
    kept = scratch / ".cache" / TOOL_CACHE
    assert kept.is_file(), f"the provenance pages kept no tool cache at {kept}"
    return kept


def with_tool_cache(tmp_path_factory: pytest.TempPathFactory, root: Path) -> Path:
    """``root`` with the bundled datasets' provenance tool cache in its ``.cache`` (filled once per run).

    Without it a ``book`` naming the lab's dataset reads every one of its raw files again (about a
    minute) only to name each file's tool; a user's second build reads it from the same cache.
    """
    kept = build_once(tmp_path_factory, "bundled-tools", _fill_tool_cache)
    (root / ".cache").mkdir(parents=True, exist_ok=True)
    shutil.copy(kept, root / ".cache" / TOOL_CACHE)
    return root


def executed_study_to_book(tmp_path_factory: pytest.TempPathFactory, dest: Path) -> tuple[Path, str]:
    """As :func:`executed_study`, for a test that builds the copy: the provenance tool cache comes along.

    The cache (by file sha256 and parser code, as the project keeps it) is filled once per test run
    for every such copy, so each ``book`` reads the tools of the study's raw files instead of parsing them.
    """
    root, stdout = executed_study(tmp_path_factory, dest)
    return with_tool_cache(tmp_path_factory, root), stdout


def parent_pid(pid: int) -> int:
    """The parent PID of process ``pid`` (0 if it has gone)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def without_named_zygote(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) without the suite's shared fork server (``warm.ZYGOTE_ENV``).

    For tests of a process's own fork server (its start, its death) and of runs that must not use one.
    """
    return {k: v for k, v in (os.environ if env is None else env).items() if k != warm.ZYGOTE_ENV}


def study_env(root: Path) -> dict[str, str]:
    """The environment whose Python imports the study copy's own ``src/`` first."""
    return {**os.environ, "PYTHONPATH": str(root / "src")}
