"""The provenance pages: a short summary (one row per dataset and published study) plus one page per
dataset, its toc sections, and the chapters' links to a dataset's page."""

from __future__ import annotations

import csv
import hashlib
import shutil
import tarfile
from pathlib import Path

import pytest
import yaml
from fast_yaml import load_yaml

from iscsi_report.core import markup
from iscsi_report.core.errors import ReportError
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import build, provenance, toc

ROOT = Path(__file__).resolve().parents[1]
LAB = "lab-veth-2026"  # small (15 files), emulated (a shaped link)
BUILT_AT = "2026-01-02T03:04:05Z"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project: the small lab dataset, one run over it, a published study, a toc naming provenance."""
    root = tmp_path / "proj"
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    shutil.copytree(ROOT / "data" / "raw" / LAB, root / "data" / "raw" / LAB)
    (root / "data" / "published").mkdir(parents=True)
    shutil.copy(ROOT / "data" / "published" / "comstar-2009.yaml", root / "data" / "published")
    (root / "params").mkdir()
    run = {"title": "lab", "dataset": LAB, "timeout_s": 300, "notebooks": ["network"]}
    (root / "params" / f"{LAB}.yaml").write_text(yaml.safe_dump(run))
    (root / "book").mkdir()
    shutil.copy(ROOT / "book" / "intro.md", root / "book" / "intro.md")
    doc = {
        "format": "jb-book",
        "root": "intro",
        "parts": [{"caption": "About", "chapters": [{"file": "provenance"}]}],
    }
    (root / "book" / "_toc.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return root


def test_summary_has_one_row_per_dataset_and_the_dataset_page_every_file(project: Path) -> None:
    pages = provenance.pages(Project.at(project), BUILT_AT)
    doc = provenance.dataset_doc(LAB)
    assert list(pages) == [provenance.PAGE, doc]
    summary, page = pages[provenance.PAGE], pages[doc]
    row = next(ln for ln in summary.splitlines() if ln.startswith(f"| [{markup.text(LAB)}]"))
    assert row.startswith(f"| [{markup.text(LAB)}]({doc}.md) | emulated | 15 | ")
    assert "fio fio\\-3\\.33 (6)" in row and "iperf3 iperf 3\\.12 (1)" in row
    assert "| published | 1 |" in summary and "comstar\\-2009\\.yaml" in summary
    manifest = load_yaml(project / "data" / "raw" / LAB / "manifest.yaml")
    for entry in manifest["files"]:
        digest = hashlib.sha256((project / "data" / "raw" / LAB / entry["path"]).read_bytes()).hexdigest()
        assert f"`{digest}`" in page and digest not in summary  # file facts live on the dataset page only
        assert f"(<path:../../data/raw/{LAB}/{entry['path']}>)" in page  # links relative to provenance/
    assert page.startswith(f"({markup.raw_dataset_label(LAB)})=\n# Raw data: {markup.text(LAB)}\n")
    assert BUILT_AT not in page  # the source date is on the summary only: a dataset page is stable


def test_the_file_table_is_collapsed_and_a_file_that_fails_its_checksum_is_named_in_the_open(
    project: Path,
) -> None:
    """The per-file table sits in a dropdown (unstyled until opened); the counts per tool and any
    checksum failure stay on the page itself."""
    page = provenance.pages(Project.at(project), BUILT_AT)[provenance.dataset_doc(LAB)]
    before, dropdown = page.split(":::{dropdown} Every raw file", 1)
    assert "| fio | 6 |" in before and "Every one of the 15 files matches" in before
    assert dropdown.count("| yes |") == 15
    manifest = load_yaml(project / "data" / "raw" / LAB / "manifest.yaml")
    for entry in manifest["files"]:
        assert entry["sha256"] in dropdown and entry["sha256"] not in before, "every digest in the dropdown"
    changed = project / "data" / "raw" / LAB / manifest["files"][0]["path"]
    changed.write_bytes(changed.read_bytes() + b"\n")
    page = provenance.pages(Project.at(project), BUILT_AT)[provenance.dataset_doc(LAB)]
    before, _ = page.split(":::{dropdown}", 1)
    assert f"**1 of 15 files do NOT match their manifest's sha256:** {markup.text(changed.name)}" in before


def test_dataset_page_names_are_plain_or_a_digest() -> None:
    assert provenance.dataset_doc("lab-iscsi-2026") == "provenance/lab-iscsi-2026"
    odd = [provenance.dataset_doc(name) for name in ("Lab", "a b", "x<y>", "../up")]
    assert all(d.startswith(f"provenance/{provenance.HASHED_NAME_PREFIX}") for d in odd)
    assert len(set(odd)) == len(odd)


def test_write_page_writes_every_page_and_drops_stale_ones(project: Path) -> None:
    p = Project.at(project)
    stale = p.book_dir / "provenance" / "gone.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("# gone\n")
    assert provenance.write_page(p, BUILT_AT) == p.book_dir / "provenance.md"
    assert sorted(f.name for f in (p.book_dir / "provenance").iterdir()) == [f"{LAB}.files.csv", f"{LAB}.md"]
    assert provenance.is_generated(p, p.book_dir / "provenance" / f"{LAB}.md")
    assert provenance.is_generated(p, p.book_dir / "provenance.md")
    assert not provenance.is_generated(p, p.book_dir / "intro.md")


def test_hand_written_toc_gets_the_dataset_pages_as_sections(project: Path) -> None:
    p = Project.at(project)
    path = build.prepare_toc(p)
    assert path == p.build_dir / "toc" / toc.TOC_NAME  # book/_toc.yml stays as written
    chapters = yaml.safe_load(path.read_text())["parts"][0]["chapters"]
    assert chapters == [{"file": "provenance", "sections": [{"file": provenance.dataset_doc(LAB)}]}]
    build.check_toc(p, path)  # generated pages need not exist before the build writes them


def test_a_toc_without_the_provenance_page_is_used_as_written(project: Path) -> None:
    p = Project.at(project)
    doc = {"format": "jb-book", "root": "intro"}
    (p.book_dir / "_toc.yml").write_text(yaml.safe_dump(doc))
    assert build.prepare_toc(p) == p.book_dir / "_toc.yml"


def test_provenance_as_the_root_is_refused(project: Path) -> None:
    p = Project.at(project)
    doc = {"format": "jb-book", "root": "provenance", "parts": [{"chapters": [{"file": "provenance"}]}]}
    (p.book_dir / "_toc.yml").write_text(yaml.safe_dump(doc))
    with pytest.raises(ReportError, match="cannot be the root"):
        build.prepare_toc(p)


def test_with_sections_sets_replaces_or_removes_a_pages_sections() -> None:
    doc = {
        "root": "intro",
        "parts": [{"chapters": [{"file": "a"}, {"file": "provenance", "sections": [{"file": "x"}]}]}],
    }
    assert toc.lists(doc, "provenance") and not toc.lists(doc, "b")
    set_ = toc.with_sections(doc, "provenance", ["provenance/d1", "provenance/d2"])
    assert set_["parts"][0]["chapters"] == [
        {"file": "a"},
        {"file": "provenance", "sections": [{"file": "provenance/d1"}, {"file": "provenance/d2"}]},
    ]
    assert toc.with_sections(doc, "provenance", [])["parts"][0]["chapters"][1] == {"file": "provenance"}
    assert provenance.is_generated_doc("provenance/d1") and not provenance.is_generated_doc("intro")


def test_every_dataset_page_links_its_file_table_as_csv(project: Path) -> None:
    """The CSV holds one row per manifest file with the page's digest, size, match and tool."""
    p = Project.at(project)
    provenance.write_page(p, BUILT_AT)
    csv_path = p.book_dir / "provenance" / f"{LAB}{provenance.FILES_CSV_SUFFIX}"
    rows = list(csv.DictReader(csv_path.open()))
    manifest = load_yaml(project / "data" / "raw" / LAB / "manifest.yaml")
    assert [r["file"] for r in rows] == [f"data/raw/{LAB}/{e['path']}" for e in manifest["files"]]
    for row, entry in zip(rows, manifest["files"], strict=True):
        path = project / row["file"]
        assert row["sha256"] == entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        facts = (int(row["bytes"]), row["matches_manifest"], row["tool"])
        assert facts == (path.stat().st_size, "yes", entry["tool"])
    page = (p.book_dir / "provenance" / f"{LAB}.md").read_text()
    assert f"(<path:{LAB}{provenance.FILES_CSV_SUFFIX}>)" in page  # linked from the page, beside it
    assert ":::{dropdown} Every raw file" in page  # 15 files: still listed on the page itself


def test_a_dataset_too_large_to_list_links_one_archive_of_every_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above the inline limit the page has no per-file table: the CSV, and one deterministic archive
    holding the manifest and every file byte for byte."""
    monkeypatch.setattr(provenance, "FILES_INLINE_MAX", 10)  # the small dataset's 15 files are "many"
    p = Project.at(project)
    provenance.write_page(p, BUILT_AT)
    page = (p.book_dir / "provenance" / f"{LAB}.md").read_text()
    assert ":::{dropdown}" not in page and "are too many to list on this page" in page
    raw = project / "data" / "raw" / LAB
    manifest = load_yaml(raw / "manifest.yaml")
    assert all(e["sha256"] not in page for e in manifest["files"])  # no per-file rows: the page stays light
    archive = p.book_dir / "provenance" / f"{LAB}{provenance.RAW_ARCHIVE_SUFFIX}"
    first = archive.read_bytes()
    with tarfile.open(archive, "r:gz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]
    expected = {f"{LAB}/{e['path']}": (raw / e["path"]).read_bytes() for e in manifest["files"]}
    expected[f"{LAB}/manifest.yaml"] = (raw / "manifest.yaml").read_bytes()
    assert members == expected
    provenance.write_page(p, "2027-01-01T00:00:00Z")
    assert archive.read_bytes() == first  # a function of the files alone, not of the build time
    monkeypatch.setattr(provenance, "FILES_INLINE_MAX", 200)
    provenance.write_page(p, BUILT_AT)
    assert not archive.exists(), "a stale archive is dropped once the page lists the files again"
