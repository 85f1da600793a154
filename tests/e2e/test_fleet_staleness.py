"""The fleet chapter lists every dataset: a dataset added after it ran re-executes it (issue 24),
where before the page stayed cached and stale until something it had read changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from fast_yaml import load_yaml

from .projects import LAB, ROOT, cli, make_project

FLEET_PARAMS = {"title": "fleet", "dataset": None, "timeout_s": 600, "notebooks": ["fleet"]}


def _add_dataset(project: Path, name: str) -> None:
    """A second dataset: the lab's files under another name."""
    dest = project / "data" / "raw" / name
    shutil.copytree(project / "data" / "raw" / LAB, dest)
    manifest = dest / "manifest.yaml"
    doc = load_yaml(manifest)
    doc["dataset"] = name
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def test_a_new_dataset_re_executes_the_fleet_chapter(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    shutil.copytree(ROOT / "data" / "published", project / "data" / "published")
    (project / "params" / "fleet.yaml").write_text(yaml.safe_dump(FLEET_PARAMS), encoding="utf-8")
    first = cli(project, "run", "fleet", "--jobs", "1")
    assert first.returncode == 0, first.stdout + first.stderr
    again = cli(project, "run", "fleet", "--jobs", "1")
    assert again.returncode == 0 and "queued" not in again.stdout, again.stdout
    _add_dataset(project, "host-b")
    third = cli(project, "run", "fleet", "--jobs", "1")
    assert third.returncode == 0, third.stdout + third.stderr
    assert "queued  fleet/fleet: raw input changed" in third.stdout
    executed = (project / "book" / "runs" / "fleet" / "fleet.ipynb").read_text(encoding="utf-8")
    assert "host-b" in executed
