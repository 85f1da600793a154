"""The release's pieces without a book: numbers compared, archives deterministic and unpacked safely."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from iscsi_report import cli
from iscsi_report.core.digest import sha256_bytes
from iscsi_report.pipeline import numbers, release

TABLE = b"bs_bytes,mean_ms,label\n4096,1.25,small\n8192,2.5,large\n"


def _notebook(**glued: str) -> bytes:
    """An executed notebook whose one cell glued ``glued`` (as myst_nb writes it through papermill)."""
    prefix = "application/papermill.record/"
    outputs = [
        {
            "output_type": "display_data",
            "data": {f"{prefix}text/plain": value},
            "metadata": {"scrapbook": {"name": name, "mime_prefix": prefix}},
        }
        for name, value in glued.items()
    ]
    return json.dumps({"cells": [{"cell_type": "code", "outputs": outputs}]}).encode()


def test_table_numbers_are_keyed_by_row_and_column() -> None:
    found = numbers.table_numbers("results/r/t.csv", TABLE)
    assert found[("results/r/t.csv", "row 2, mean_ms")] == "2.5"
    assert len(found) == 6


def test_glued_numbers_read_the_papermill_record() -> None:
    found = numbers.glued_numbers("book/runs/r/n.ipynb", _notebook(mean_ms="1.25", label="'veth'"))
    assert found == {
        ("book/runs/r/n.ipynb", "glue mean_ms"): "1.25",
        ("book/runs/r/n.ipynb", "glue label"): "'veth'",
    }


def test_differences_name_file_cell_old_and_new_and_ignore_float_noise() -> None:
    old = numbers.published_numbers({"results/r/t.csv": TABLE, "book/runs/r/n.ipynb": _notebook(x="0.1")})
    changed_table = TABLE.replace(b"2.5,large", b"2.75,large").replace(b"1.25", b"1.2500000000000002")
    new = numbers.published_numbers(
        {"results/r/t.csv": changed_table, "book/runs/r/n.ipynb": _notebook(x="0.2")}
    )
    found = numbers.differences(old, new)
    assert [(d.file, d.item, d.old, d.new) for d in found] == [
        ("book/runs/r/n.ipynb", "glue x", "0.1", "0.2"),
        ("results/r/t.csv", "row 2, mean_ms", "2.5", "2.75"),
    ]
    assert found[1].change() == "+0.25 (+10 %)"
    assert "results/r/t.csv: row 2, mean_ms: 2.5 -> 2.75" in str(found[1])


def test_a_table_only_on_one_side_and_a_new_row_are_differences() -> None:
    old = numbers.published_numbers({"results/r/t.csv": TABLE, "results/r/gone.csv": TABLE})
    new = numbers.published_numbers({"results/r/t.csv": TABLE + b"16384,5.0,huge\n"})
    found = numbers.differences(old, new)
    assert ("results/r/gone.csv", "whole file", "present", numbers.ABSENT) in [
        (d.file, d.item, d.old, d.new) for d in found
    ]
    assert ("results/r/t.csv", "row 3, mean_ms", numbers.ABSENT, "5.0") in [
        (d.file, d.item, d.old, d.new) for d in found
    ]


def test_changelog_lists_each_change_by_how_much() -> None:
    found = [numbers.Difference("results/r/t.csv", "row 1, mean_ms", "2", "3")]
    text = numbers.changelog("iscsi-report-0.1.0.tar.gz", found, "0.2.0")
    assert "1 published numbers changed since `iscsi-report-0.1.0.tar.gz`" in text
    assert "| results/r/t.csv | row 1, mean_ms | 2 | 3 | +1 (+50 %) |" in text
    assert "first release" in numbers.changelog(None, [], "0.1.0")
    assert "No published number changed" in numbers.changelog("a.tar.gz", [], "0.1.1")


def _write(tmp_path: Path, name: str, blobs: dict[str, bytes]) -> Path:
    """A release archive of ``blobs`` (with their manifest) at ``tmp_path/name``."""
    path = tmp_path / name
    release.write_archive(
        path, "iscsi-report-1", {**blobs, release.MANIFEST: release.manifest(blobs)}, {}, 1700000000
    )
    return path


def test_archives_are_deterministic_sorted_and_owned_by_root(tmp_path: Path) -> None:
    blobs = {"src/b.py": b"b", "README.md": b"r", "results/r/t.csv": TABLE}
    first = _write(tmp_path / "1", "a.tar.gz", blobs)
    second = _write(tmp_path / "2", "a.tar.gz", dict(reversed(blobs.items())))
    assert first.read_bytes() == second.read_bytes()
    with tarfile.open(first) as tar:
        members = tar.getmembers()
    names = [m.name.split("/", 1)[1] for m in members]
    assert names == sorted(names) and release.MANIFEST in names
    assert {(m.uid, m.gid, m.mtime, m.uname) for m in members} == {(0, 0, 1700000000, "")}


def test_manifest_lists_every_member_as_sha256sum_does() -> None:
    text = release.manifest({"b": b"2", "a": b"1"}).decode()
    assert text == f"{sha256_bytes(b'1')}  a\n{sha256_bytes(b'2')}  b\n"


def test_a_tampered_member_is_reported(tmp_path: Path) -> None:
    archive = _write(tmp_path, "a.tar.gz", {"results/r/t.csv": TABLE, "src/x.py": b"x = 1\n"})
    top, refused = release.safe_extract(archive, tmp_path / "out")
    assert top is not None and not refused
    assert release.check_manifest(top) == []
    (top / "results" / "r" / "t.csv").write_bytes(TABLE.replace(b"2.5", b"2.6"))
    (top / "extra.txt").write_text("added")
    problems = release.check_manifest(top)
    assert any(p.startswith("results/r/t.csv: sha256") and "tampered" in p for p in problems)
    assert "extra.txt: in the archive but not in MANIFEST.sha256" in problems


def _hostile(tmp_path: Path, member: tarfile.TarInfo, data: bytes = b"") -> Path:
    """An archive whose only member is ``member``."""
    path = tmp_path / "hostile.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data))
    return path


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    """A link member ``name`` -> ``target``."""
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize(
    ("member", "why"),
    [
        (tarfile.TarInfo("/etc/evil"), "absolute path"),
        (tarfile.TarInfo("top/../../evil"), "'..'"),
        (_link("top/link", "/etc/passwd"), "leads outside"),
        (_link("top/a/link", "../../../x"), "leads outside"),
        (_link("top/hard", "../x", tarfile.LNKTYPE), "leads outside"),
    ],
)
def test_unsafe_members_are_refused_and_nothing_is_unpacked(
    tmp_path: Path, member: tarfile.TarInfo, why: str
) -> None:
    top, refused = release.safe_extract(_hostile(tmp_path, member, b"x"), tmp_path / "out")
    assert top is None and len(refused) == 1 and why in refused[0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    assert not (tmp_path / "evil").exists()


def test_a_link_inside_the_archive_is_allowed() -> None:
    assert release.unsafe_member(_link("top/a/link", "../b")) == ""


def test_lock_pins_keep_every_version_of_a_universal_lock() -> None:
    text = (
        "numpy==2.4.6 ; python_full_version < '3.12' \\\n    --hash=sha256:ab\n"
        "numpy==2.5.5 ; x \\\nPyYAML==6.0.3 \\\n"
    )
    assert release.lock_pins(text) == {"numpy": {"2.4.6", "2.5.5"}, "pyyaml": {"6.0.3"}}


@pytest.mark.parametrize("version", ["", "../x", ".hidden", "a/b", " 1"])
def test_a_version_that_is_not_a_plain_name_is_refused(version: str) -> None:
    with pytest.raises(release.ReportError):
        release.archive_name(version)


def test_the_rebuild_copy_leaves_out_every_re_executed_output(tmp_path: Path) -> None:
    top = tmp_path / "top"
    for rel in ("results/r/t.csv", "book/runs/r/n.ipynb", "book/intro.md", "site/index.html", "src/x.py"):
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text("x")
    shutil.copytree(top, tmp_path / "copy", ignore=release._not_copied(top))
    copied = sorted(
        p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*") if p.is_file()
    )
    assert copied == ["book/intro.md", "src/x.py"]


def test_offline_runs_in_a_network_namespace_or_says_it_could_not(monkeypatch: pytest.MonkeyPatch) -> None:
    wrapped, isolation = release.offline(["python", "-V"])
    assert wrapped[-2:] == ["python", "-V"]
    assert ("unshare" in wrapped[0]) == ("network namespace with only loopback" in isolation)
    monkeypatch.setattr(release.shutil, "which", lambda name: None)
    command, isolation = release.offline(["python", "-V"])
    assert command == ["python", "-V"] and release.OFFLINE_PROXY in isolation


def test_a_network_namespace_has_no_route_out() -> None:
    wrapped, isolation = release.offline(
        [sys.executable, "-c", "import socket; socket.create_connection(('192.0.2.1', 80), timeout=2)"]
    )
    if "unshare" not in wrapped[0]:
        pytest.skip(isolation)
    result = subprocess.run(wrapped, capture_output=True, text=True, check=False, timeout=60)
    assert result.returncode != 0 and "unreachable" in result.stderr.lower()


def test_a_citation_of_another_version_is_noted(tmp_path: Path) -> None:
    project = release.Project.at(tmp_path)
    assert "no CITATION.cff" in release.citation_notes(project, "1.0")[0]
    (tmp_path / "CITATION.cff").write_text('cff-version: 1.2.0\nversion: "1.0"\n')
    assert release.citation_notes(project, "1.0") == []
    assert "cites version 1.0, this is 1.1" in release.citation_notes(project, "1.1")[0]


def test_the_cli_refuses_a_project_without_results_and_reports_an_unreadable_archive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--root", str(tmp_path), "release", "build", "--version", "1.0"]) == 2
    assert "no published results for any run" in capsys.readouterr().err
    (tmp_path / "broken.tar.gz").write_bytes(b"not a tar")
    assert cli.main(["--root", str(tmp_path), "release", "verify", str(tmp_path / "broken.tar.gz")]) == 1
    out = capsys.readouterr().out
    assert "PROBLEM:" in out and "not a readable .tar.gz" in out and "verify: FAILED" in out


def test_the_archived_single_file_must_load_nothing_from_outside(tmp_path: Path) -> None:
    top = tmp_path / "iscsi-report-1"
    top.mkdir()
    assert "the single-file report is missing" in release.self_contained(top)[0]
    (top / "iscsi-report-1.html").write_text('<html><body><a href="#x" id="x">x</a></body></html>')
    assert release.self_contained(top) == []
    (top / "iscsi-report-1.html").write_text(
        '<html><body><img src="https://example.org/a.png"></body></html>'
    )
    assert release.self_contained(top) == [
        "iscsi-report-1.html: refers outside itself: https://example.org/a.png"
    ]
