"""Two copies of one small lab project at different paths, each built from scratch once per test run.

``test_reproducible_site.py`` compares the two sites byte for byte: the first copy's site is built by
a fresh jupyter-book process, the second's by one forked from a warm fork server, so the comparison
also holds the forked build to the cold one (issue 28). ``test_safety.py`` checks that
the first build ran with its ``data/raw`` read-only and left it unchanged, and that the two copies
wrote byte-identical tables. Both read the same pair (``projects.build_once``: one build for all
xdist workers) instead of building a similar pair each; a test that changes a copy copies it first.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from fast_yaml import load_yaml

from iscsi_report.core.dataset import update_checksums
from iscsi_report.pipeline import warm

from .projects import LAB, build_once, cli, copy_package, make_project, without_named_zygote

EXTRA = "extra-run"  # a second run over its own dataset, deleted by test_reproducible_site.py
EXTRA_DATASET = "extra-set"
UNUSED_DATASET = "unused-set"  # a dataset no run names
CHAPTERS = ["network", "storage"]
FACTS = "pair.json"  # what the builds said and what the read-only check saw, beside the copies
BUILD_TIMEOUT_S = 1800  # upper bound for one copy's book on a loaded machine


@dataclass(frozen=True)
class Build:
    """What one ``book`` of a copy returned."""

    returncode: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class LabPair:
    """The two built copies, their builds, and the first copy's raw data around its build."""

    first: Path
    second: Path
    first_build: Build
    second_build: Build
    raw_before: dict[str, str]  # sha256 of every raw file of the first copy before its build
    raw_after: dict[str, str]  # ... and after it
    protection: str  # how data/raw was made unwritable ("none: why" when it could not be)
    write_error: str  # what a write into data/raw said during the build ("" if it succeeded)


def sha256_tree(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root``, by path relative to it."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@contextmanager
def read_only(folder: Path) -> Iterator[str]:
    """Make ``folder`` unwritable for the block; yield how (or 'none: why not')."""
    if os.geteuid() != 0:  # permissions bind a non-root user
        subprocess.run(["chmod", "-R", "a-w", str(folder)], check=True)
        try:
            yield "chmod -R a-w"
        finally:
            subprocess.run(["chmod", "-R", "u+w", str(folder)], check=True)
        return
    cmds = [["mount", "--bind", str(folder), str(folder)], ["mount", "-o", "remount,ro,bind", str(folder)]]
    try:
        for cmd in cmds:
            subprocess.run(cmd, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True)
        yield f"none: root, and a read-only bind mount failed ({getattr(exc, 'stderr', '') or exc})"
        return
    try:
        yield "read-only bind mount"
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True)


def make_lab_pair_project(dest: Path) -> Path:
    """The lab run (two chapters), a second run over a retitled copy of the lab data, a provenance page."""
    root = make_project(dest, runs={LAB: (LAB, CHAPTERS), EXTRA: (EXTRA_DATASET, ["network"])})
    raw = root / "data" / "raw" / EXTRA_DATASET
    manifest = load_yaml(raw / "manifest.yaml")
    manifest["dataset"] = EXTRA_DATASET
    manifest["title"] = "A copy of the lab data, used only by the run deleted below"
    for entry in manifest["files"]:  # its own network name, so that its tables differ from the lab's
        if "network" in entry.get("labels", {}):
            entry["labels"]["network"] = "veth-extra"
    (raw / "manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    update_checksums(raw)
    (root / "data" / "raw" / UNUSED_DATASET).mkdir()
    shutil.copy(raw / "manifest.yaml", root / "data" / "raw" / UNUSED_DATASET / "manifest.yaml")
    toc_path = root / "book" / "_toc.yml"
    toc = yaml.safe_load(toc_path.read_text())
    toc["parts"].append({"caption": "About this build", "chapters": [{"file": "provenance"}]})
    toc_path.write_text(yaml.safe_dump(toc, sort_keys=False))
    return root


def pair_env(folder: Path) -> dict[str, str]:
    """A snapshot of the package under ``folder`` (the code is an input of the site too), no caller date."""
    env = copy_package(folder)
    env.pop("SOURCE_DATE_EPOCH", None)  # the date must come from the inputs, not the caller
    return env


def _book(root: Path, env: dict[str, str]) -> Build:
    """``book --jobs 2`` on one copy."""
    done = cli(root, "book", "--jobs", "2", env=env, timeout=BUILD_TIMEOUT_S)
    return Build(done.returncode, done.stdout, done.stderr)


def _run_then_build(root: Path, run_env: dict[str, str], build_env: dict[str, str]) -> Build:
    """``run --jobs 2`` in ``run_env``, then ``build`` in ``build_env``: what ``book`` does, in two steps."""
    ran = cli(root, "run", "--jobs", "2", env=run_env, timeout=BUILD_TIMEOUT_S)
    if ran.returncode != 0:
        return Build(ran.returncode, ran.stdout, ran.stderr)
    built = cli(root, "build", env=build_env, timeout=BUILD_TIMEOUT_S)
    return Build(built.returncode, ran.stdout + built.stdout, ran.stderr + built.stderr)


def _build_pair(folder: Path) -> Path:
    """Two copies made before anything ran, the first built with its data/raw read-only by a fresh
    jupyter-book process (its notebooks forked, then ``build`` with no fork server named), the second
    wholly with the suite's fork server (or one of its own when the suite has none); facts saved."""
    forked_env = pair_env(folder / "package")
    cold_env = without_named_zygote(forked_env)
    own = None if forked_env.get(warm.ZYGOTE_ENV) else warm.start_server()
    if own is not None:
        forked_env[warm.ZYGOTE_ENV] = str(own.socket)
    first = make_lab_pair_project(folder / "a" / "proj")
    second = folder / "somewhere" / "much" / "deeper" / "proj"
    shutil.copytree(first, second)
    raw = first / "data" / "raw"
    raw_before = sha256_tree(raw)
    write_error = ""
    try:
        with read_only(raw) as protection:
            try:
                (raw / LAB / "probe").write_text("x")
            except OSError as exc:
                write_error = exc.strerror or str(exc)
            first_build = _run_then_build(first, forked_env, cold_env)
        second_build = _book(second, forked_env)
    finally:
        if own is not None:
            own.stop()
    facts = {
        "first": str(first),
        "second": str(second),
        "first_build": first_build.__dict__,
        "second_build": second_build.__dict__,
        "raw_before": raw_before,
        "raw_after": sha256_tree(raw),
        "protection": protection,
        "write_error": write_error,
    }
    (folder / FACTS).write_text(json.dumps(facts))
    return folder


def lab_pair(tmp_path_factory: pytest.TempPathFactory) -> LabPair:
    """The pair, built once per test run (all workers) and shared: read it, never change it."""
    folder = build_once(tmp_path_factory, "lab-pair", _build_pair)
    facts = json.loads((folder / FACTS).read_text())
    return LabPair(
        first=Path(facts["first"]),
        second=Path(facts["second"]),
        first_build=Build(**facts["first_build"]),
        second_build=Build(**facts["second_build"]),
        raw_before=facts["raw_before"],
        raw_after=facts["raw_after"],
        protection=facts["protection"],
        write_error=facts["write_error"],
    )
