"""The book theme's print-only heading shows a page title as text (issue 24): a params ``title`` or
``short_title`` holding markup is glued into a chapter's H1, and the theme copies the H1's plain
text into ``<div class="onlyprint"><h1>`` without escaping it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sphinx.cmd.build import build_main

PAYLOAD = "<img src=x onerror=alert(1)>"
PRINT_H1 = re.compile(r'<div id="jb-print-docs-body" class="onlyprint">\s*<h1>(.*?)</h1>', re.DOTALL)


def _build(root: Path, extensions: list[str]) -> str:
    """Build a one-page site titled with the payload; the page's HTML."""
    book = root / "book"
    book.mkdir(parents=True)
    (book / "conf.py").write_text(f"extensions = {extensions!r}\nhtml_theme = 'sphinx_book_theme'\n")
    title = f"Network — {PAYLOAD}"
    (book / "index.rst").write_text(f"{title}\n{'=' * len(title)}\n\nText.\n")
    assert build_main(["-q", "-b", "html", str(book), str(root / "_build")]) == 0
    return (root / "_build" / "index.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(the page built with the project's extension, the same page without it)."""
    ours = _build(tmp_path_factory.mktemp("ours"), ["iscsi_report.pipeline.sphinx_site"])
    bare = _build(tmp_path_factory.mktemp("bare"), [])
    return ours, bare


def test_the_theme_alone_puts_the_title_unescaped_into_the_print_heading(pages: tuple[str, str]) -> None:
    """The control: without the extension the payload is a live tag (the fault this guards)."""
    _, bare = pages
    found = PRINT_H1.search(bare)
    assert found and PAYLOAD in found.group(1)


def test_the_print_heading_shows_the_title_as_text(pages: tuple[str, str]) -> None:
    ours, _ = pages
    found = PRINT_H1.search(ours)
    assert found and "&lt;img src=x onerror=alert(1)&gt;" in found.group(1)
    assert PAYLOAD not in ours, "the payload is a tag somewhere in the page"
