"""User-written YAML read by the pipeline and the lab is read strictly: a duplicate key is refused
with the file and its line (core.yamlio), never silently resolved to the last value."""

from __future__ import annotations

from pathlib import Path

import pytest

from iscsi_report import cli
from iscsi_report.core.errors import IngestError
from iscsi_report.core.paths import Project
from iscsi_report.lab.accuracy import accuracy_rows
from iscsi_report.pipeline import toc
from iscsi_report.pipeline.build import toc_files

HAND_WRITTEN_TOC = """\
format: jb-book
root: intro
chapters:
  - file: glossary
root: glossary
"""
BASE_TOC = """\
format: jb-book
root: intro
parts:
  - generated: runs
  - caption: Reference
    caption: Again
    chapters:
      - file: glossary
"""
LAB_MANIFEST = """\
dataset: lab
files:
  - path: ping/a.txt
    tool: ping
    labels: {one_way_delay_ms: 1, link_mbps: 1000}
    tool: iperf3
"""


def _book(root: Path, name: str, text: str) -> Path:
    path = root / "book" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_hand_written_toc_with_a_duplicate_key_is_refused(tmp_path: Path) -> None:
    path = _book(tmp_path, "_toc.yml", HAND_WRITTEN_TOC)
    with pytest.raises(IngestError, match=r"duplicate key 'root' \(first at line 2\)") as caught:
        toc_files(Project.at(tmp_path))
    assert (caught.value.path, caught.value.line) == (str(path), 5)


def test_build_stops_on_it_with_exit_2_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _book(tmp_path, "_toc.yml", HAND_WRITTEN_TOC)
    assert cli.main(["--root", str(tmp_path), "build"]) == 2
    out, err = capsys.readouterr()
    assert f"{path}:5: duplicate key 'root'" in err and out == ""
    assert not (tmp_path / "_build" / "html").exists()


def test_a_toc_base_with_a_duplicate_key_is_refused(tmp_path: Path) -> None:
    path = _book(tmp_path, toc.BASE_NAME, BASE_TOC)
    with pytest.raises(IngestError, match=r"duplicate key 'caption' \(first at line 5\)") as caught:
        toc.generate(Project.at(tmp_path), [])
    assert (caught.value.path, caught.value.line) == (str(path), 6)


def test_a_lab_manifest_with_a_duplicate_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_text(LAB_MANIFEST, encoding="utf-8")
    with pytest.raises(IngestError, match=r"duplicate key 'tool' \(first at line 4\)") as caught:
        accuracy_rows(tmp_path)
    assert (caught.value.path, caught.value.line) == (str(path), 6)
