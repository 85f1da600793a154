"""Each chapter page offers its executed notebook and its MyST source for download (issue 25),
checked on a small site built with the project's Sphinx extension."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sphinx.cmd.build import build_main

RUN, CHAPTER = "r1", "network"
EXECUTED = '{"cells": [], "metadata": {"executed": true}, "nbformat": 4, "nbformat_minor": 5}\n'
SOURCE = "---\njupytext: {}\n---\n# Network\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root page and one chapter page, with the chapter's executed notebook and MyST source beside."""
    root = tmp_path_factory.mktemp("project")
    book = root / "book"
    (book / "runs" / RUN).mkdir(parents=True)
    (book / "conf.py").write_text("extensions = ['iscsi_report.pipeline.sphinx_site']\n")
    (book / "index.rst").write_text(f"Root\n====\n\n.. toctree::\n\n   runs/{RUN}/{CHAPTER}\n")
    (book / "runs" / RUN / f"{CHAPTER}.rst").write_text("Network\n=======\n\nText.\n")
    (book / "runs" / RUN / f"{CHAPTER}.ipynb").write_text(EXECUTED)
    (root / "notebooks").mkdir()
    (root / "notebooks" / f"{CHAPTER}.md").write_text(SOURCE)
    out = root / "_build"
    assert build_main(["-q", "-W", "-b", "html", str(book), str(out)]) == 0
    return out


def _links(page: Path) -> dict[str, Path]:
    """The chapter's download links: words -> the file each link resolves to."""
    found = re.findall(r'<a href="([^"]+)" download>([^<]+)</a>', page.read_text())
    return {words: (page.parent / href).resolve() for href, words in found}


def test_the_chapter_links_its_executed_notebook_and_source(site: Path) -> None:
    links = _links(site / "runs" / RUN / f"{CHAPTER}.html")
    assert set(links) == {"executed notebook (.ipynb)", "MyST source (.md)"}
    assert links["executed notebook (.ipynb)"].read_text() == EXECUTED
    assert links["MyST source (.md)"].read_text() == SOURCE


def test_a_page_that_is_no_chapter_offers_none(site: Path) -> None:
    assert _links(site / "index.html") == {}
