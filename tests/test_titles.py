"""Chapters that run over any dataset name their run in the title and link sibling chapters only when
the run has them (presentation/about.py: run_label, run_chapters, chapter_link, glue_page)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from fast_yaml import load_yaml

from iscsi_report.core.errors import ReportError
from iscsi_report.core.ingest import textio
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import toc
from iscsi_report.presentation import about, report

ROOT = Path(__file__).resolve().parents[1]
LAB = "lab-veth-2026"
SHARED_CHAPTERS = ("network", "storage", "model")


def _ctx(root: Path, run: str, params: dict[str, object] | None) -> report.Context:
    (root / "params").mkdir(parents=True, exist_ok=True)
    if params is not None:
        (root / "params" / f"{run}.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    return report.Context(run_name=run, dataset=LAB, project_root=root, results_dir=root / "results")


def test_label_prefers_short_title_then_title(tmp_path: Path) -> None:
    both = _ctx(
        tmp_path, "a", {"title": "Long title", "short_title": "  my  veth ", "notebooks": ["network"]}
    )
    assert about.run_label(both) == "my veth"
    assert (
        about.run_label(_ctx(tmp_path, "b", {"title": "Only a title", "notebooks": ["model"]}))
        == "Only a title"
    )


def test_label_falls_back_to_the_manifest_title_without_a_params_file(tmp_path: Path) -> None:
    (tmp_path / "data" / "raw").mkdir(parents=True)
    (tmp_path / "data" / "raw" / LAB).symlink_to(ROOT / "data" / "raw" / LAB)
    manifest = load_yaml(ROOT / "data" / "raw" / LAB / "manifest.yaml")
    assert about.run_label(_ctx(tmp_path, "no-params", None)) == manifest["title"]


def test_run_chapters_reads_names_and_overrides_and_records_the_read(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, "r", {"title": "t", "notebooks": ["network", {"model": {"bs_bytes": 4096}}]})
    assert about.run_chapters(ctx) == ["network", "model"]
    assert (tmp_path / "params" / "r.yaml").resolve() in textio.files_read()  # the run cache sees it
    assert about.run_chapters(_ctx(tmp_path, "none", None)) == []


def test_a_params_file_that_is_not_a_mapping_is_named_in_the_error(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, "bad", None)
    (tmp_path / "params" / "bad.yaml").write_text("- network\n", encoding="utf-8")
    with pytest.raises(ReportError, match=r"bad\.yaml: expected a mapping"):
        about.run_chapters(ctx)


def test_chapter_link_is_a_link_only_to_a_chapter_of_the_run() -> None:
    assert (
        about.chapter_link(["network", "model"], "model", "model chapter") == "{doc}`model chapter <model>`"
    )
    assert about.chapter_link(["network"], "model", "model chapter") == "model chapter"


@pytest.mark.parametrize("chapter", SHARED_CHAPTERS)
def test_shared_chapters_title_their_run_and_link_siblings_only_through_glue(chapter: str) -> None:
    text = (ROOT / "notebooks" / f"{chapter}.md").read_text(encoding="utf-8")
    h1 = next(line for line in text.splitlines() if line.startswith("# "))
    assert h1.endswith("{glue:text}`run_label`")
    assert toc.chapter_heading(Project.at(ROOT), chapter) == chapter.capitalize()  # the sidebar name
    siblings = "|".join(c for c in SHARED_CHAPTERS if c != chapter)
    assert not re.search(rf"\{{doc\}}`[^`]*<({siblings})>`", text)  # a run may leave the sibling out
    for name in re.findall(r"\{glue:md\}`(\w+):myst`", text):
        assert f'"{name}": (' in text  # each pasted link is glued by about.glue_page


def test_every_sidebar_title_is_distinct() -> None:
    """Three lab chapters once all read "Real iSCSI — real iSCSI lab" in the sidebar."""
    doc = yaml.safe_load((ROOT / "book" / "_toc.yml").read_text(encoding="utf-8"))
    titles = [c["title"] for part in doc["parts"] for c in part["chapters"] if "title" in c]
    assert len(titles) == len(set(titles)), sorted(t for t in titles if titles.count(t) > 1)
