"""core.digest.code_digest: one digest of code for the run cache and the fleet's row cache."""

from __future__ import annotations

import shutil
from pathlib import Path

from iscsi_report.analyses import fleet
from iscsi_report.core.digest import code_digest, sha256_bytes
from iscsi_report.core.paths import Project

ROOT = Path(__file__).resolve().parents[1]


def _package(root: Path) -> Path:
    pkg = root / "core"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("A = 1\n")
    (pkg / "sub" / "b.py").write_text("B = 2\n")
    return pkg


def test_code_digest_follows_python_and_c_sources_only(tmp_path: Path) -> None:
    pkg = _package(tmp_path / "one")
    first = code_digest(pkg)
    (pkg / "notes.txt").write_text("not code")
    (pkg / "sub" / "scan-0123abcd.so").write_bytes(b"\x7fELF built from scan.c")
    assert code_digest(pkg) == first
    (pkg / "sub" / "scan.c").write_text("int scan(void) { return 0; }\n")
    with_c = code_digest(pkg)
    assert with_c != first
    (pkg / "sub" / "scan.c").write_text("int scan(void) { return 1; }\n")
    assert code_digest(pkg) not in (first, with_c)
    (pkg / "sub" / "scan.c").unlink()
    assert code_digest(pkg) == first
    (pkg / "sub" / "b.py").write_text("B = 3\n")
    assert code_digest(pkg) != first
    (pkg / "sub" / "b.py").write_text("B = 2\n")
    assert code_digest(pkg) == first
    (pkg / "sub" / "b.py").rename(pkg / "sub" / "c.py")  # same bytes under another name
    assert code_digest(pkg) != first


def test_code_digest_is_the_same_wherever_the_folder_sits(tmp_path: Path) -> None:
    pkg = _package(tmp_path / "one")
    copy = tmp_path / "two" / "core"
    shutil.copytree(pkg, copy)
    assert code_digest(copy) == code_digest(pkg)
    assert code_digest(pkg, copy) != code_digest(pkg)


def test_the_fleet_hashes_the_code_its_rows_come_from() -> None:
    """The fleet's rows come from core and analyses (no page code): the run cache's digest of those two."""
    dirs = [d for d in Project.at(ROOT).notebook_code_dirs if d.name in ("core", "analyses")]
    assert len(dirs) == 2 and fleet._code_digest() == code_digest(*dirs)


def test_sha256_bytes() -> None:
    assert sha256_bytes(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
