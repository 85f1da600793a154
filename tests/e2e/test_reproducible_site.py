"""The published site: byte-identical for identical inputs, free of the building machine's paths, and
holding only what the current runs use (no unused dataset, nothing of a deleted run).

Two copies of one project, at different paths, are built from scratch, the first by a fresh
jupyter-book process and the second by one forked from the warm pool; every file of the two sites
must have the same bytes. Then a run is deleted and the book rebuilt: its tables and its dataset
are no longer downloadable.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from iscsi_report.pipeline.build import FORKED_NOTE

from .lab_pair import EXTRA, EXTRA_DATASET, UNUSED_DATASET, lab_pair, pair_env
from .projects import LAB, cli

pytestmark = [pytest.mark.e2e]


def _site_files(root: Path) -> dict[str, bytes]:
    """Every file of the live site, by path relative to the site folder."""
    html = (root / "_build" / "html").resolve()
    return {p.relative_to(html).as_posix(): p.read_bytes() for p in sorted(html.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two copies of one project at different paths (copied before anything ran), each built from scratch.

    The pair ``test_safety.py`` reads too (``lab_pair``), built once per test run: never changed here.
    """
    pair = lab_pair(tmp_path_factory)
    for build in (pair.first_build, pair.second_build):
        assert build.returncode == 0, build.stdout + build.stderr
    return pair.first, pair.second


def test_two_builds_of_the_same_inputs_are_byte_identical(
    built: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    pair = lab_pair(tmp_path_factory)  # the builds behind ``built``: the first cold, the second forked
    assert FORKED_NOTE not in pair.first_build.stdout, "the first copy must be built by a fresh jupyter-book"
    assert FORKED_NOTE in pair.second_build.stdout, "the second copy must be built by a forked jupyter-book"
    first, second = (_site_files(r) for r in built)
    assert sorted(first) == sorted(second)
    differ = [rel for rel in first if first[rel] != second[rel]]
    assert differ == [], differ[:20]
    assert any(rel.endswith(".csv") for rel in first) and "provenance.html" in first


def test_no_path_of_the_building_machine_is_published(built: tuple[Path, Path]) -> None:
    needles = {str(r) for r in built} | {str(r.parent) for r in built} | {str(Path.home())}
    needles |= {str(Path(os.environ.get("TMPDIR", "/tmp")) / "pytest-of-")}
    for root in built:
        for rel, data in _site_files(root).items():
            for needle in needles:
                assert needle.encode() not in data, f"{rel} contains {needle}"


def test_published_notebooks_carry_relative_paths_and_no_timings(built: tuple[Path, Path]) -> None:
    import nbformat

    nb = nbformat.read(built[0] / "book" / "runs" / LAB / "network.ipynb", as_version=4)
    assert "papermill" not in nb.metadata
    cell = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert "project_root = '../../..'" in cell.source and "results_dir = ''" in cell.source
    assert all("execution" not in c.metadata and "papermill" not in c.metadata for c in nb.cells)


def test_only_datasets_used_by_a_run_are_published(built: tuple[Path, Path]) -> None:
    root = built[0]
    site = _site_files(root)
    unused = (root / "data" / "raw" / UNUSED_DATASET / "manifest.yaml").read_bytes()
    extra = (root / "data" / "raw" / EXTRA_DATASET / "manifest.yaml").read_bytes()
    assert unused == extra  # the same bytes: only the extra run's use publishes them
    assert any(data == extra for data in site.values())
    assert UNUSED_DATASET not in site["provenance.html"].decode()


def test_a_deleted_run_is_not_downloadable_after_the_next_build(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    root = tmp_path / "proj"  # a private copy: the shared pair stays as built
    shutil.copytree(built[1], root, symlinks=True)
    env = pair_env(tmp_path / "package")
    tables = {p.name: p.read_bytes() for p in (root / "results" / EXTRA).glob("*.csv")}
    lab_tables = {p.read_bytes() for p in (root / "results" / LAB).glob("*.csv")}
    own = {name: data for name, data in tables.items() if data not in lab_tables}
    assert own, "the extra run's tables are byte-identical to the lab run's: the test would prove nothing"
    manifest = (root / "data" / "raw" / EXTRA_DATASET / "manifest.yaml").read_bytes()
    before = _site_files(root).values()
    assert all(any(data == b for b in before) for data in [*own.values(), manifest])

    (root / "params" / f"{EXTRA}.yaml").unlink()
    toc_path = root / "book" / "_toc.yml"
    toc = yaml.safe_load(toc_path.read_text())
    for part in toc["parts"]:
        part["chapters"] = [c for c in part["chapters"] if not c["file"].startswith(f"runs/{EXTRA}/")]
    toc_path.write_text(yaml.safe_dump(toc, sort_keys=False))
    result = cli(root, "book", "--jobs", "2", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"removed results/{EXTRA}/" in result.stdout
    after = _site_files(root)
    for name, data in own.items():
        assert not any(d == data for d in after.values()), f"{EXTRA}/{name} is still published"
    assert not any(d == manifest for d in after.values()), "the deleted run's dataset is still published"
    assert not (root / "results" / EXTRA).exists() and not (root / "book" / "runs" / EXTRA).exists()
    assert EXTRA not in after["provenance.html"].decode()
    assert f"provenance/{EXTRA_DATASET}.html" not in after  # its dataset page is gone with it
