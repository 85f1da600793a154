"""Helpers to make throwaway copies of the project for end-to-end tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[2]
LAB = "lab-veth-2026"
# The Reference part every copy carries: chapters link glossary terms and cite references, and the
# strict build refuses a term or citation whose page is missing.
REFERENCE_PAGES = ["model_equation", "glossary", "references"]


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
    """Copy the real params, chapters, published numbers and the raw datasets the params name."""
    for folder in ("notebooks", "params", "data/published"):
        shutil.copytree(ROOT / folder, dest / folder)
    for params in sorted((ROOT / "params").glob("*.yaml")):
        dataset = yaml.safe_load(params.read_text()).get("dataset")
        if dataset and not (dest / "data" / "raw" / dataset).exists():
            shutil.copytree(ROOT / "data" / "raw" / dataset, dest / "data" / "raw" / dataset)
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
