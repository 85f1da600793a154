"""Every page drops the theme's FontAwesome script and, but the search page, the search index (issue 25).

Checked on a small site built with the book's theme and the project's Sphinx extension, and on the
rewriting function alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sphinx.cmd.build import build_main

from iscsi_report.pipeline.sphinx_site import lighter_page

PAGES = {
    "index": "Root\n====\n\n.. toctree::\n\n   prose\n",
    "prose": "Prose\n=====\n\nNo script of its own.\n",
}
FONTAWESOME = "_static/scripts/fontawesome.js"
SEARCH_INDEX = "searchindex.js"
SEARCH_TOOLS = "_static/searchtools.js"


def _build(src: Path, options: dict[str, object]) -> Path:
    """The pages built with sphinx-book-theme and ``iscsi_report.pipeline.sphinx_site``."""
    (src / "conf.py").write_text(
        "extensions = ['iscsi_report.pipeline.sphinx_site']\n"
        f"html_theme = 'sphinx_book_theme'\nhtml_theme_options = {options!r}\n"
    )
    for name, text in PAGES.items():
        (src / f"{name}.rst").write_text(text)
    out = src / "_build"
    assert build_main(["-q", "-b", "html", str(src), str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small site with the theme's defaults (search-as-you-type off)."""
    return _build(tmp_path_factory.mktemp("site"), {})


@pytest.mark.parametrize("page", ["index", "prose", "search"])
def test_no_page_loads_fontawesome_javascript(site: Path, page: str) -> None:
    html = (site / f"{page}.html").read_text()
    assert FONTAWESOME not in html
    assert "pydata-sphinx-theme.css" in html  # the style sheet that draws the icons from the icon font
    assert (site / FONTAWESOME).is_file()  # the theme still ships it; no page asks for it


@pytest.mark.parametrize("page", ["index", "prose"])
def test_a_page_other_than_search_loads_no_search_index(site: Path, page: str) -> None:
    html = (site / f"{page}.html").read_text()
    assert SEARCH_INDEX not in html and SEARCH_TOOLS not in html
    assert 'action="search.html"' in html or "search.html" in html  # the header's search leads there


def test_the_search_page_keeps_its_index_and_tools(site: Path) -> None:
    html = (site / "search.html").read_text()
    assert f'src="{SEARCH_INDEX}"' in html and SEARCH_TOOLS in html


def test_search_as_you_type_keeps_the_index_on_every_page(tmp_path: Path) -> None:
    site = _build(tmp_path, {"search_as_you_type": True})
    assert SEARCH_INDEX in (site / "prose.html").read_text()
    assert FONTAWESOME not in (site / "prose.html").read_text()


def test_lighter_page_removes_exactly_the_three_search_tags_and_fontawesome() -> None:
    page = (
        "<head>\n"
        '  <script defer src="../_static/scripts/fontawesome.js?digest=abc"></script>\n'
        '  <link rel="preload" as="script" href="../_static/scripts/bootstrap.js" />\n'
        '    <script src="../_static/searchtools.js"></script>\n'
        '    <script src="../_static/language_data.js"></script>\n'
        '    <script src="../searchindex.js"></script>\n'
        "</head>\n"
    )
    assert lighter_page(page, keep_search=False) == (
        '<head>\n  <link rel="preload" as="script" href="../_static/scripts/bootstrap.js" />\n</head>\n'
    )
    kept = lighter_page(page, keep_search=True)
    assert "fontawesome" not in kept and "searchindex.js" in kept and "searchtools.js" in kept


@pytest.mark.parametrize("page", ["index", "prose", "search"])
def test_every_page_keeps_dropdowns_open_without_javascript(site: Path, page: str) -> None:
    """site.css draws a dropdown closed until the toggle script runs; without scripts it must open."""
    head = (site / f"{page}.html").read_text().split("</head>", 1)[0]
    assert "<noscript><style>html .admonition.dropdown:not(.toggle)" in head
