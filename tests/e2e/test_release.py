"""`release build` and `release verify` on a small book: the lab-veth run's network chapter.

The project copy is a git checkout (the release's code is the git-tracked files). One re-execution
checks that an untouched release verifies; a second, of a release whose table was edited and whose
manifest was rewritten to match, checks that verify names that one cell, old and new, and nothing else.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from iscsi_report.pipeline import release, single_html

from .projects import LAB, ROOT, cli, copy_package, make_project

pytestmark = [pytest.mark.e2e]
TABLE = f"results/{LAB}/latency_summary.csv"


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """A built project copy (its own src/, a git checkout) and its release 0.0.1 in dist/."""
    root = make_project(tmp_path_factory.mktemp("proj"))
    env = copy_package(root)
    shutil.copy(ROOT / release.LOCK, root / release.LOCK)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    built = cli(root, "book", "--jobs", "1", env=env)
    assert built.returncode == 0, built.stdout + built.stderr
    packed = cli(root, "release", "build", "--version", "0.0.1", env=env)
    assert packed.returncode == 0, packed.stdout + packed.stderr
    return root, root / "dist" / "iscsi-report-0.0.1.tar.gz", env


def _members(archive: Path) -> dict[str, bytes]:
    """The archive's members by name below its top folder."""
    return release.read_archive(archive)


def test_release_holds_code_lock_data_site_results_and_a_manifest_of_every_member(
    released: tuple[Path, Path, dict[str, str]],
) -> None:
    _, archive, _ = released
    members = _members(archive)
    for name in (
        release.LOCK,
        "src/iscsi_report/cli/release.py",
        f"data/raw/{LAB}/manifest.yaml",
        "site/index.html",
        TABLE,
    ):
        assert name in members, name
    assert f"book/runs/{LAB}/network.ipynb" in members
    listed = dict(reversed(line.split("  ", 1)) for line in members[release.MANIFEST].decode().splitlines())
    assert set(listed) == set(members) - {release.MANIFEST}
    assert "first release" in members[release.CHANGES].decode()
    with tarfile.open(archive) as tar:
        assert {(m.uid, m.gid) for m in tar.getmembers()} == {(0, 0)}


def test_the_report_in_one_file_loads_nothing_from_outside(
    released: tuple[Path, Path, dict[str, str]],
) -> None:
    root, archive, _ = released
    report = root / "dist" / "iscsi-report-0.0.1.html"
    text = report.read_text(encoding="utf-8")
    assert single_html.outside_references(text) == []
    assert _members(archive)["iscsi-report-0.0.1.html"] == report.read_bytes()
    assert f'id="{single_html.anchor(f"runs/{LAB}/network.html")}"' in text
    bundle = (root / "_build" / "html" / "_static" / "iscsi-charts" / "vega-bundle.js").read_text()
    assert bundle.strip()[-500:] in text  # the chart runtime, inline
    assert 'class="iscsi-chart"' in text
    ids = set(re.findall(r'\sid="([^"]+)"', text))
    assert [h for h in re.findall(r'\shref="#([^"]*)"', text) if h not in ids] == []  # every anchor lands


def test_the_release_verifies_offline(released: tuple[Path, Path, dict[str, str]]) -> None:
    root, archive, env = released
    result = cli(root, "release", "verify", str(archive), env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verify: OK" in result.stdout and "DIFFERENT" not in result.stdout
    assert "note: re-executed with" in result.stdout  # and says how the network was kept out


def _edited_table(released: tuple[Path, Path, dict[str, str]], version: str) -> tuple[Path, str, str]:
    """Set the latency table's first mean_ms, release the project as ``version``: (archive, old, new)."""
    root, _, env = released
    table = root / TABLE
    header, first, *rest = table.read_text().splitlines()
    column = header.split(",").index("mean_ms")
    cells = first.split(",")
    old, cells[column] = cells[column], "123.456"
    table.write_text("\n".join([header, ",".join(cells), *rest]) + "\n")
    packed = cli(root, "release", "build", "--version", version, env=env)
    assert packed.returncode == 0, packed.stdout + packed.stderr
    return root / "dist" / f"iscsi-report-{version}.tar.gz", old, "123.456"


def test_the_changelog_and_verify_name_an_edited_number(released: tuple[Path, Path, dict[str, str]]) -> None:
    root, _, env = released
    archive, old, new = _edited_table(released, "0.0.2")
    changes = _members(archive)[release.CHANGES].decode()
    assert "1 published numbers changed since `iscsi-report-0.0.1.tar.gz`" in changes
    assert f"| {TABLE} | row 1, mean_ms | {old} | {new} |" in changes
    result = cli(root, "release", "verify", str(archive), env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    different = [line for line in result.stdout.splitlines() if line.startswith("DIFFERENT")]
    assert len(different) == 1, result.stdout
    assert different[0].startswith(f"DIFFERENT: {TABLE}: row 1, mean_ms: {new} -> {old}")


def test_a_tampered_member_fails_verify_before_any_execution(
    released: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    root, archive, env = released
    members = _members(archive)
    members["src/iscsi_report/core/model.py"] += b"\n# tampered\n"
    tampered = tmp_path / "iscsi-report-0.0.1.tar.gz"
    release.write_archive(tampered, "iscsi-report-0.0.1", members, {}, 0)
    result = cli(root, "release", "verify", str(tampered), env=env)
    assert result.returncode == 1
    assert "PROBLEM: src/iscsi_report/core/model.py: sha256" in result.stdout
    assert "not re-executed" in result.stdout
