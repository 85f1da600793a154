"""MathJax loads only on pages with math of their own (issue 25), checked on a small built site."""

from __future__ import annotations

from pathlib import Path

import pytest
from sphinx.cmd.build import build_main

MATHJAX = "mathjax/tex-chtml.js"  # the path _config.yml gives Sphinx
PAGES = {
    "index": "Root\n====\n\n.. toctree::\n\n   formula\n   prose\n",
    "formula": "Formula\n=======\n\nA write takes :math:`t = 2 d + s / b`.\n",
    "prose": "Prose\n=====\n\nNo formula here.\n",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A three-page site built with the project's Sphinx extension: a root, a page with math, one without."""
    src = tmp_path_factory.mktemp("site")
    (src / "conf.py").write_text(
        f"extensions = ['iscsi_report.pipeline.sphinx_site']\nmathjax_path = {MATHJAX!r}\n"
    )
    for name, text in PAGES.items():
        (src / f"{name}.rst").write_text(text)
    out = src / "_build"
    assert build_main(["-q", "-W", "-b", "html", str(src), str(out)]) == 0
    return out


def test_a_page_with_math_loads_mathjax(site: Path) -> None:
    assert MATHJAX in (site / "formula.html").read_text()


@pytest.mark.parametrize("page", ["index", "prose"])
def test_a_page_without_math_does_not(site: Path, page: str) -> None:
    """The root too, although its toctree leads to the page with math (Sphinx would load it there)."""
    assert MATHJAX not in (site / f"{page}.html").read_text()
