"""Links between chapters: a chapter links a sibling only through glue (words when its run lacks the
sibling), and the build turns a link into words only for a listed chapter of a run left out of the book."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from iscsi_report.pipeline.sphinx_site import listed_chapter

ROOT = Path(__file__).resolve().parents[1]
DOC_LINK = re.compile(r"\{doc\}`(?:[^`<]*<)?([^`>]+)>?`")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.md"))


def _params(root: Path, run: str, notebooks: list[object]) -> None:
    (root / "params").mkdir(exist_ok=True)
    doc = {"title": run, "dataset": None, "notebooks": notebooks}
    (root / "params" / f"{run}.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")


def test_a_listed_chapter_of_a_run_is_known_and_anything_else_is_not(tmp_path: Path) -> None:
    _params(tmp_path, "study", ["fit", {"whatif": {"n_draws": 10}}])
    assert listed_chapter(tmp_path, "runs/study/fit")
    assert listed_chapter(tmp_path, "runs/study/whatif")  # listed with overrides
    assert not listed_chapter(tmp_path, "runs/study/no_such_chapter")  # a typo stays a broken link
    assert not listed_chapter(tmp_path, "runs/no-such-run/fit")
    assert not listed_chapter(tmp_path, "intro")  # a hand-written page is never a run's chapter
    assert not listed_chapter(tmp_path, "runs/study/fit/deeper")


def test_an_unreadable_params_file_leaves_the_link_to_the_strict_build(tmp_path: Path) -> None:
    (tmp_path / "params").mkdir()
    (tmp_path / "params" / "study.yaml").write_text("title: [unclosed\n", encoding="utf-8")
    assert not listed_chapter(tmp_path, "runs/study/fit")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapters_link_only_pages_every_book_has_or_other_runs_listed_chapters(notebook: Path) -> None:
    for target in DOC_LINK.findall(notebook.read_text(encoding="utf-8")):
        # A sibling chapter (a bare name) may be missing from a run: it goes through about.glue_links.
        assert target.startswith("/"), f"{notebook.name}: {{doc}} link to {target!r}: use about.glue_links"
        docname = target.lstrip("/")
        hand_written = (ROOT / "book" / f"{docname}.md").is_file()
        assert hand_written or listed_chapter(ROOT, docname), f"{notebook.name}: no such page {target!r}"
