"""Every page drops the theme's FontAwesome script and, but the search page, the search index (issue 25);
the chart runtime is never in a page's head, and the scripts and style sheets the first paint does
not need are deferred.

Checked on a small site built with the book's theme and the project's Sphinx extension, and on the
rewriting function alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sphinx.cmd.build import build_main

from iscsi_report.pipeline import assets
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


# Issue 25, first paint: the chart runtime never in a page's head, the theme's scripts deferred.
CHART_PAGES = {
    "index": "Root\n====\n\n.. toctree::\n\n   chart\n   design\n",
    "chart": (
        "Chart\n=====\n\n.. raw:: html\n\n"
        '   <figure class="iscsi-chart"><div class="iscsi-chart-live"></div></figure>\n'
    ),
    "design": 'Design\n======\n\n.. raw:: html\n\n   <div class="sd-card">A card</div>\n',
}
DEFERRED = ("doctools.js", "sphinx_highlight.js", "sphinx-book-theme.js")  # present on every page
SCRIPT_TAG = re.compile(r"<script\b[^>]*\bsrc=\"[^\"]*?(?P<name>[\w.-]+\.js)[^\"]*\"[^>]*>")
STYLE_TAG = re.compile(r"<link\b[^>]*\bhref=\"[^\"]*?(?P<name>[\w.-]+\.css)[^\"]*\"[^>]*>")


def _tags(pattern: re.Pattern[str], head: str) -> dict[str, str]:
    """Each script or style sheet of a page head by file name, with its whole tag."""
    return {found["name"]: found.group(0) for found in pattern.finditer(head)}


@pytest.fixture(scope="module")
def chart_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small site with a chart figure and a sphinx-design component, built with both extensions."""
    src = tmp_path_factory.mktemp("charts")
    (src / "conf.py").write_text(
        "extensions = ['sphinx_design', 'iscsi_report.pipeline.sphinx_site',"
        " 'iscsi_report.pipeline.assets']\n"
        "html_theme = 'sphinx_book_theme'\n"
    )
    for name, text in CHART_PAGES.items():
        (src / f"{name}.rst").write_text(text)
    out = src / "_build"
    assert build_main(["-q", "-b", "html", str(src), str(out)]) == 0
    return out


def _head(site: Path, page: str) -> str:
    return (site / f"{page}.html").read_text().split("</head>", 1)[0]


def test_a_chart_page_loads_only_the_small_deferred_chart_script(chart_site: Path) -> None:
    scripts = _tags(SCRIPT_TAG, _head(chart_site, "chart"))
    assert "defer" in scripts["charts.js"]
    assert "vega-bundle.js" not in scripts  # fetched by charts.js on a first touch of a chart
    assert (chart_site / "_static" / assets.BUNDLE).is_file()  # ...from the site itself
    assert "vega-bundle.js" in (chart_site / "_static" / assets.SCRIPT).read_text()
    assert "charts.js" not in _tags(SCRIPT_TAG, _head(chart_site, "design"))  # no chart, no script


@pytest.mark.parametrize("page", ["index", "chart", "design"])
def test_the_theme_scripts_that_wait_for_the_page_are_deferred(chart_site: Path, page: str) -> None:
    scripts = _tags(SCRIPT_TAG, _head(chart_site, page))
    assert all("defer" in scripts[name] for name in DEFERRED), scripts
    # The inline DOCUMENTATION_OPTIONS lines need this one first: it stays synchronous.
    assert "defer" not in scripts["documentation_options.js"]


def test_the_search_page_keeps_doctools_ahead_of_its_synchronous_search_tools(chart_site: Path) -> None:
    html = (chart_site / "search.html").read_text()
    scripts = _tags(SCRIPT_TAG, html)
    assert "defer" not in scripts["doctools.js"] and "defer" not in scripts["searchtools.js"]
    assert "defer" in scripts["sphinx-book-theme.js"]
    assert html.index("doctools.js") < html.index("searchtools.js")  # searchtools calls doctools' _ready


def test_code_colours_and_unused_design_styles_load_after_the_first_paint(chart_site: Path) -> None:
    chart = _tags(STYLE_TAG, _head(chart_site, "chart"))
    for name in ("pygments.css", "sphinx-design.min.css"):
        assert 'media="print"' in chart[name] and "onload=" in chart[name]
    assert 'media="print"' not in chart["pydata-sphinx-theme.css"]
    assert 'media="print"' not in chart["site.css"]
    design = _tags(STYLE_TAG, _head(chart_site, "design"))
    assert 'media="print"' not in design["sphinx-design.min.css"]  # the page shows a card: no jump
    assert 'media="print"' in design["pygments.css"]


def test_deferred_style_sheets_load_without_javascript(chart_site: Path) -> None:
    head = _head(chart_site, "chart")
    noscript = head.split("<noscript><link", 1)[1].split("</noscript>", 1)[0]
    assert "pygments.css" in noscript and "sphinx-design.min.css" in noscript
    assert "pydata-sphinx-theme.css" not in noscript
