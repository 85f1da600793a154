"""A small Sphinx extension so every page loads in a browser without a console error.

Two defects of the stock toolchain, found by the headless-Chromium test (tests/browser):

- Sphinx 7.4 writes an inline script twice when an extension registers it after the builder
  started (it re-adds the registry's scripts with filename ``''`` next to the same script with
  filename ``None``); sphinx-thebe's ``const THEBE_JS_URL = ...`` then throws "Identifier has
  already been declared" on every page. We drop such repeats from each page's script list.
- With no icon declared, browsers request ``/favicon.ico`` and log a 404. Each page declares an
  inline SVG icon instead, so no request is made.

Two scripts of the theme (pydata-sphinx-theme 0.17) that every page loads are dropped after the
build (issue 25: they made every page weigh over 1 MB compressed before any chart or formula):
FontAwesome's JavaScript (1.5 MB, 0.54 MB gzipped), which redraws the theme's icons as SVG although
its style sheet already draws them from the icon font it loads; and, on every page but the search
page, Sphinx's search script and the whole search index (0.46 MB, loaded before the page renders),
which the theme loads for its search-as-you-type box, switched off unless ``search_as_you_type``
is set. The search page keeps its own copies; the header's search button leads there.

The first paint waits for no script that waits for the page itself (issue 25): the theme's and
extensions' scripts that act on ``DOMContentLoaded`` or on a click get ``defer``; the style sheets
that draw nothing on a page's first screen (code colours, Thebe's, sphinx-design's where the page
uses none of its components) load as print sheets switched to the screen once loaded, and a
``<noscript>`` link loads them plainly without JavaScript.

A table the theme wraps in a scrolling box (a markdown table: ``pst-scrollable-table-container``)
becomes a named keyboard stop: ``tabindex="0"``, ``role="region"`` and an ``aria-label`` from its
caption, else from its first headers (the chapters' own tables are labelled where they are
rendered, :mod:`iscsi_report.presentation.tables`).

Each chapter page offers its executed notebook (the published ``.ipynb`` the page was built
from) and its MyST source (``notebooks/<chapter>.md``) for download: both are copied under
``_downloads/chapters/<run>/`` and linked at the top of the page.

It also turns Sphinx's smart quotes off: text from data (a label, a version string) must show
on the page exactly as written, and smart quotes would turn its ``'`` and ``"`` into others.

A link to another run's chapter (``{doc}`What if </runs/blog-2023/whatif>```) becomes its words
when that run is not in the book being built (``iscsi-report book summary`` builds the front
page without the blog study): the chapter exists, this book leaves it out. Only a chapter its
run's params file lists is treated so; any other unknown document still fails the strict build.

Enabled by ``sphinx: extra_extensions: [iscsi_report.pipeline.sphinx_site]`` in ``_config.yml``.
"""

from __future__ import annotations

import functools
import html
import posixpath
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote

from docutils import nodes  # type: ignore[import-untyped]  # docutils ships no types; Sphinx's own are typed
from sphinx.util import docname_join, logging

from iscsi_report.core.errors import ReportError
from iscsi_report.core.paths import Project
from iscsi_report.pipeline.params import load_run

LOGGER = logging.getLogger(__name__)
# A chapter of a run in the book: ``runs/<run>/<notebook>`` (the batch's executed-notebook layout).
RUN_CHAPTER_RE = re.compile(r"^runs/(?P<run>[^/]+)/(?P<notebook>[^/]+)$")

# A blue disk: inline, so the icon costs no request and needs no file in the book.
ICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    '<circle cx="8" cy="8" r="7" fill="#2a6ebb"/></svg>'
)
ICON_LINK = f'<link rel="icon" type="image/svg+xml" href="data:image/svg+xml,{quote(ICON_SVG)}" />\n'
# Without JavaScript a dropdown admonition stays open (site.css draws it closed until the toggle
# script has run, which never happens then). Its ``html`` outweighs site.css's rule, loaded later.
NOSCRIPT_DROPDOWNS = (
    "<noscript><style>html .admonition.dropdown:not(.toggle) .admonition-title ~ * "
    "{ height: auto; opacity: 1; visibility: visible; }</style></noscript>\n"
)


def _script_key(script: Any) -> tuple[str, tuple[tuple[str, str], ...]]:
    """Identity of a page script: its file ('' and None alike) and its attributes (body included)."""
    filename = getattr(script, "filename", script) or ""
    attributes = getattr(script, "attributes", {}) or {}
    return str(filename), tuple(sorted((str(k), str(v)) for k, v in attributes.items()))


def dedupe_scripts(scripts: list[Any]) -> list[Any]:
    """The scripts in order, each kept once."""
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    kept = []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    return kept


# The theme's and extensions' scripts that only act once the page is parsed (they wait for
# DOMContentLoaded or for a click): loaded with ``defer`` they no longer hold the first paint back
# (issue 25, Lighthouse's "render-blocking resources"). ``defer`` keeps their order among themselves,
# and no inline script of a page uses them. Kept synchronous: ``documentation_options.js`` (the
# page's inline ``DOCUMENTATION_OPTIONS.pagename = ...`` needs it) and ``code-toggle.js`` (it hides
# the code before the body is drawn).
DEFERRED_SCRIPTS = frozenset(
    {
        "_static/doctools.js",
        "_static/sphinx_highlight.js",
        "_static/clipboard.min.js",
        "_static/copybutton.js",
        "_static/scripts/sphinx-book-theme.js",
        "_static/togglebutton.js",
        "_static/design-tabs.js",
    }
)
SEARCH_NEEDS = "_static/doctools.js"  # Sphinx's synchronous searchtools.js calls its ``_ready`` at once
# Style sheets that draw nothing on the first screen of a page: code colours (the code is hidden
# behind the page's switch) and Thebe's (no launch button: ``launch_buttons`` are off). They load
# as ``media="print"`` and switch to all media once loaded, so they do not hold the first paint.
DEFERRED_STYLES = frozenset({"_static/pygments.css", "_static/sphinx-thebe.css"})
# sphinx-design's style sheet is deferred likewise on a page that uses none of its components.
DESIGN_STYLE = "_static/sphinx-design.min.css"
DESIGN_CLASS = 'class="sd-'  # every sphinx-design component carries an ``sd-`` class
STYLE_SWAP = "this.media='all'"  # the loaded sheet applies to the screen from then on


def deferred_scripts(scripts: list[Any], search: bool = False) -> list[Any]:
    """The scripts, those of :data:`DEFERRED_SCRIPTS` with ``defer`` (new objects: Sphinx shares its own);
    with ``search`` (a page that loads Sphinx's search tools) doctools stays: they call its ``_ready``."""
    names = DEFERRED_SCRIPTS - {SEARCH_NEEDS} if search else DEFERRED_SCRIPTS
    return [
        type(s)(s.filename, priority=s.priority, **{**s.attributes, "defer": "defer"})
        if _script_key(s)[0] in names and "async" not in s.attributes
        else s
        for s in scripts
    ]


def styles_to_defer(body: str) -> frozenset[str]:
    """The style sheets a page can load after its first paint (sphinx-design's when it has no component)."""
    return DEFERRED_STYLES if DESIGN_CLASS in body else DEFERRED_STYLES | {DESIGN_STYLE}


def deferred_styles(styles: list[Any], names: frozenset[str]) -> list[Any]:
    """The style sheets, those named in ``names`` loaded as print sheets that switch to all media on load."""
    return [
        type(s)(s.filename, priority=s.priority, **{**s.attributes, "media": "print", "onload": STYLE_SWAP})
        if getattr(s, "filename", None) in names
        else s
        for s in styles
    ]


def noscript_styles(styles: list[Any], names: frozenset[str], pathto: Any) -> str:
    """``<noscript>`` links to the deferred sheets: without JavaScript their ``onload`` never runs."""
    hrefs = [pathto(s.filename, resource=True) for s in styles if getattr(s, "filename", None) in names]
    links = "".join(f'<link rel="stylesheet" href="{html.escape(h)}" />' for h in hrefs)
    return f"<noscript>{links}</noscript>\n" if links else ""


THEME_TABLE_BOX = '<div class="pst-scrollable-table-container">'
THEME_TABLE = re.compile(re.escape(THEME_TABLE_BOX) + r"(?P<table><table\b.*?</table>)", re.S)
CAPTION = re.compile(r"<caption\b[^>]*>(.*?)</caption>", re.S)
HEADER = re.compile(r"<th\b[^>]*>(.*?)</th>", re.S)
TAG = re.compile(r"<[^>]+>")
LABEL_HEADERS = 3  # a table without a caption is named by this many of its first headers


def _words(fragment: str) -> str:
    """The text of an HTML fragment, tags dropped, on one line."""
    return " ".join(html.unescape(TAG.sub(" ", fragment)).split())


def table_box_label(table: str) -> str:
    """A theme table's name for a screen reader: its caption, else 'Table: ' and its first headers."""
    caption = CAPTION.search(table)
    if caption and _words(caption.group(1)):
        return _words(caption.group(1)).rstrip("#").strip()
    heads = [w for w in (_words(h) for h in HEADER.findall(table)) if w][:LABEL_HEADERS]
    return "Table: " + ", ".join(heads) if heads else "Table"


def label_table_boxes(body: str) -> str:
    """Every theme table box as a focusable, named region (a keyboard user can scroll it)."""

    def named(found: re.Match[str]) -> str:
        label = html.escape(table_box_label(found["table"]), quote=True)
        box = THEME_TABLE_BOX[:-1] + f' tabindex="0" role="region" aria-label="{label}">'
        return box + found["table"]

    return THEME_TABLE.sub(named, body)


DOWNLOADS_DIR = "_downloads/chapters"  # in the site: _downloads/chapters/<run>/<chapter>.{ipynb,md}
DOWNLOADS_CLASS = "iscsi-chapter-downloads"


def chapter_files(app: Any, pagename: str) -> list[tuple[str, Path]]:
    """A chapter page's downloads: (words, file) of its executed notebook and MyST source, if present."""
    found = RUN_CHAPTER_RE.match(pagename)
    if not found:
        return []
    executed = Path(app.srcdir) / f"{pagename}.ipynb"
    source = Project(Path(app.srcdir).parent).notebook(found["notebook"])
    files = [("executed notebook (.ipynb)", executed), ("MyST source (.md)", source)]
    return [(words, path) for words, path in files if path.is_file()]


def _downloads(app: Any, pagename: str) -> str:
    """Copy a chapter's downloads into the site and return the links shown above its text ('' if none)."""
    found = RUN_CHAPTER_RE.match(pagename)
    files = chapter_files(app, pagename)
    if not found or not files:
        return ""
    target = Path(app.outdir) / DOWNLOADS_DIR / found["run"]
    target.mkdir(parents=True, exist_ok=True)
    links = []
    for words, path in files:
        shutil.copyfile(path, target / path.name)
        href = posixpath.relpath(f"{DOWNLOADS_DIR}/{found['run']}/{path.name}", posixpath.dirname(pagename))
        links.append(f'<a href="{html.escape(href)}" download>{html.escape(words)}</a>')
    return f'<p class="{DOWNLOADS_CLASS}">Download this chapter: {" · ".join(links)}</p>\n'


STEM_MEMO = "_iscsi_stem_memo"  # marks a search language whose stemmer already remembers its words


def remember_stems(indexer: Any) -> None:
    """Stem each word once per build: Sphinx remembers stems per page only, and stemming the same
    words again on every page was the search index's largest cost (issue 28). Same stems, same index."""
    lang = getattr(indexer, "lang", None)
    if lang is None or getattr(lang.stem, STEM_MEMO, False):
        return
    memo = functools.cache(lang.stem)
    setattr(memo, STEM_MEMO, True)
    lang.stem = memo


def _on_page(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """Per page: drop repeated scripts (in place: the builder restores its list per page); defer the
    scripts and style sheets the first paint does not need; add the icon; name the theme's table
    boxes; keep dropdowns open without JavaScript; escape the print-only title. From the first page
    on, the search index stems each word once (:func:`remember_stems`)."""
    remember_stems(getattr(app.builder, "indexer", None))
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        search = pagename == SEARCH_PAGE.removesuffix(".html") or _search_as_you_type(app)
        scripts[:] = deferred_scripts(dedupe_scripts(scripts), search)
    context["metatags"] = context.get("metatags", "") + ICON_LINK + NOSCRIPT_DROPDOWNS
    styles = context.get("css_files")
    if isinstance(styles, list) and "pathto" in context:
        later = styles_to_defer(str(context.get("body", "")))
        context["metatags"] += noscript_styles(styles, later, context["pathto"])
        styles[:] = deferred_styles(styles, later)
    if isinstance(context.get("pagetitle"), str):
        context["pagetitle"] = escaped_title(context["pagetitle"])
    if isinstance(context.get("body"), str):
        context["body"] = _downloads(app, pagename) + label_table_boxes(context["body"])


# The theme's FontAwesome JavaScript tag (``static/webpack-macros.html``), any page depth and digest.
FONTAWESOME_JS = re.compile(
    r'[ \t]*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\n?'
)
# The search tools the theme's layout adds to every page but the search page, for search-as-you-type.
SEARCH_SCRIPTS = re.compile(
    r'[ \t]*<script src="[^"]*_static/searchtools\.js"></script>\n'
    r'[ \t]*<script src="[^"]*_static/language_data\.js"></script>\n'
    r'[ \t]*<script src="[^"]*searchindex\.js"></script>\n?'
)
SEARCH_PAGE = "search.html"  # Sphinx's search page: it needs its index


def lighter_page(page: str, keep_search: bool) -> str:
    """A built page without FontAwesome's JavaScript and, unless ``keep_search``, the search index."""
    page = FONTAWESOME_JS.sub("", page, count=1)
    return page if keep_search else SEARCH_SCRIPTS.sub("", page, count=1)


def _search_as_you_type(app: Any) -> bool:
    """Whether the theme's search box searches as one types (then every page needs the index)."""
    context = getattr(app.builder, "globalcontext", None) or {}  # the theme's options, defaults included
    return str(context.get("theme_search_as_you_type", False)).lower() == "true"


def _lighten_pages(app: Any, exception: BaseException | None) -> None:
    """After an HTML build, drop the scripts :func:`lighter_page` names from every written page."""
    if exception is not None or app.builder.format != "html":
        return
    keep_all_search = _search_as_you_type(app)
    for path in Path(app.outdir).rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        lighter = lighter_page(text, keep_all_search or path.name == SEARCH_PAGE)
        if lighter != text:
            path.write_text(lighter, encoding="utf-8")


def escaped_title(text: str) -> str:
    """The page title as HTML text: the book theme puts its plain text (``pagetitle``, which may
    hold a params ``title`` or ``short_title``) unescaped into the print-only heading."""
    return html.escape(text, quote=False)


def _literal_quotes(app: Any, config: Any) -> None:
    """Show quotes as written (no smart quotes), so escaped text stays literal."""
    config.smartquotes = False


def listed_chapter(project_root: Path, docname: str) -> bool:
    """Whether ``docname`` is ``runs/<run>/<notebook>`` with ``params/<run>.yaml`` listing the notebook."""
    found = RUN_CHAPTER_RE.match(docname)
    if not found:
        return False
    params = Project(project_root).params_file(found["run"])
    try:
        return params.is_file() and found["notebook"] in load_run(params).notebooks
    except ReportError:
        return False  # an unreadable params file: leave the link broken, the build names it


def _absent_chapter_as_words(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """A ``{doc}`` link to a listed chapter this book leaves out: its words, no warning."""
    if node.get("refdomain") != "std" or node.get("reftype") != "doc":
        return None
    docname = docname_join(node.get("refdoc", ""), node["reftarget"])
    if docname in env.all_docs or not listed_chapter(Path(app.srcdir).parent, docname):
        return None
    LOGGER.info("link to %s shown as words: its run is not in this book", docname, location=node)
    return nodes.Text(contnode.astext())


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point."""
    app.connect("config-inited", _literal_quotes)
    app.connect("missing-reference", _absent_chapter_as_words)
    app.connect("html-page-context", _on_page, priority=900)
    app.connect("build-finished", _lighten_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
