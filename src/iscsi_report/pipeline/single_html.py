"""The built site as one self-contained HTML file, for archiving and offline reading (issue 27).

The pages are taken in reading order (``index.html``, then each page's ``rel="next"``), each page's
article becomes one ``<section>``; ids are prefixed by the page so they stay unique, and links
between pages become ``#anchors``. Stylesheets, images and small downloads (the tables' CSVs)
are inlined as ``<style>`` and ``data:`` URIs, the chart runtime (Vega, Vega-Lite, vega-embed and
the site's ``charts.js``) as ``<script>`` text; formulas are already MathML in the pages
(:mod:`iscsi_report.pipeline.mathml`), so no math script is needed. A link
to the web keeps its address as ``data-url`` (shown after the text by CSS), never as ``href``:
the file loads nothing from anywhere (:func:`outside_references` finds anything that would).
"""

from __future__ import annotations

import base64
import html
import mimetypes
import posixpath
import re
from html.parser import HTMLParser
from pathlib import Path

from iscsi_report.core.errors import ReportError
from iscsi_report.pipeline.assets import BUNDLE, SCRIPT

START = "index.html"
CODE_SWITCH = "code-toggle.js"  # the site's one "Show the code" switch per page (book/_static)
MAX_PAGES = 500  # a loop of rel="next" links is an error, not an endless file
MAX_DOWNLOAD_BYTES = 1 << 20  # a download up to this size is embedded; a larger one is named only
EMBEDDED_DOWNLOADS = frozenset({".csv"})  # the tables; raw files are in the release archive, not here
LOCAL_CSS = """
body { font-family: system-ui, sans-serif; line-height: 1.5; max-width: 60em; margin: 0 auto; padding: 1em; }
section.page { border-top: 1px solid #ccc; margin-top: 3em; padding-top: 1em; overflow-x: auto; }
a[data-url]::after { content: " <" attr(data-url) ">"; font-size: 0.85em; word-break: break-all; }
a.headerlink { display: none; }
"""
TAG = re.compile(r"""<[A-Za-z][^\s>/]*(?:\s+[^\s=>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>'"]+))?)*\s*/?>""")
ATTR = re.compile(r"""(\s)(id|for|href|src)\s*=\s*("[^"]*"|'[^']*')""")
RAW = re.compile(r"(<(script|style)\b.*?</\2\s*>)", re.DOTALL | re.IGNORECASE)
ARTICLE = re.compile(r'<article class="bd-article"[^>]*>(.*?)</article>', re.DOTALL)
NEXT = re.compile(r'<link rel="next"[^>]*href="([^"]+)"')
REFRESH = re.compile(r'<meta http-equiv="Refresh" content="0; url=([^"]+)"', re.IGNORECASE)
H1 = re.compile(r"<h1[^>]*>(.*?)</h1>", re.DOTALL)
STYLESHEET = re.compile(r'<link rel="stylesheet"[^>]*href="([^"?]+)(?:\?[^"]*)?"')
CSS_URL = re.compile(r"""url\(\s*(["']?)([^)"']*)\1\s*\)""")


def first_page(site: Path) -> str:
    """The page ``index.html`` is, or redirects to (jupyter-book's index only redirects to the root page)."""
    found = REFRESH.search((site / START).read_text(encoding="utf-8")) if (site / START).is_file() else None
    return posixpath.normpath(html.unescape(found.group(1))) if found else START


def reading_order(site: Path) -> list[str]:
    """The site's pages from the first page along ``rel="next"``, as site-relative paths."""
    pages: list[str] = []
    page = first_page(site)
    while page and page not in pages:
        if len(pages) >= MAX_PAGES or not (site / page).is_file():
            raise ReportError(f"single file: the page chain breaks at {page}")
        pages.append(page)
        found = NEXT.search((site / page).read_text(encoding="utf-8"))
        page = (
            posixpath.normpath(posixpath.join(posixpath.dirname(page), html.unescape(found.group(1))))
            if found
            else ""
        )
    return pages


def anchor(page: str, fragment: str = "") -> str:
    """The id a page (or an id inside it) gets in the single file."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", page.removesuffix(".html")).strip("-")
    return f"p-{slug}" + (f"--{fragment}" if fragment else "")


def data_uri(path: Path) -> str:
    """``path``'s bytes as a base64 ``data:`` URI with its media type."""
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode()}"


class _Rewriter:
    """Rewrites one page's ids and links for the single file."""

    def __init__(self, site: Path, page: str, pages: set[str]) -> None:
        self.site, self.page, self.pages = site, page, pages

    def url(self, name: str, value: str) -> str:
        """The attribute text for an ``href``/``src`` of this page (``data-url`` for the web)."""
        if value.startswith("data:"):
            return f'{name}="{html.escape(value)}"'
        if value.startswith(("http://", "https://", "//", "mailto:")):
            return f'data-url="{html.escape(value)}"'
        path, _, fragment = value.partition("#")
        target = posixpath.normpath(posixpath.join(posixpath.dirname(self.page), path)) if path else self.page
        if target in self.pages:
            return f'href="#{anchor(target, fragment)}"' if name == "href" else ""
        file = (self.site / target).resolve()
        inside = file.is_relative_to(self.site.resolve()) and file.is_file()
        embedded = name == "src" or file.suffix in EMBEDDED_DOWNLOADS
        if embedded and inside and file.stat().st_size <= MAX_DOWNLOAD_BYTES:
            download = f' download="{html.escape(file.name)}"' if name == "href" else ""
            return f'{name}="{data_uri(file)}"{download}'
        return f'title="not in this file (see the release archive): {html.escape(target)}"'

    def attribute(self, match: re.Match[str]) -> str:
        """One ``id``/``for``/``href``/``src`` attribute rewritten."""
        space, name, quoted = match.groups()
        value = html.unescape(quoted[1:-1])
        if name in ("id", "for"):
            return f'{space}{name}="{anchor(self.page, value)}"'
        rewritten = self.url(name, value)
        return f"{space}{rewritten}" if rewritten else ""

    def tag(self, match: re.Match[str]) -> str:
        """One tag with its attributes rewritten."""
        return ATTR.sub(self.attribute, match.group(0))

    def body(self, text: str) -> str:
        """The page's article with every tag outside ``<script>``/``<style>`` rewritten."""
        parts = RAW.split(text)
        out = []
        for i in range(0, len(parts), 3):
            out.append(TAG.sub(self.tag, parts[i]))
            if i + 1 < len(parts):
                out.append(parts[i + 1])
        return "".join(out)


def page_section(site: Path, page: str, pages: set[str]) -> str:
    """One page's article as a ``<section>`` of the single file."""
    text = (site / page).read_text(encoding="utf-8")
    found = ARTICLE.search(text)
    if not found:
        raise ReportError(f"single file: {page} has no article")
    body = _Rewriter(site, page, pages).body(found.group(1))
    return f'<section class="page" id="{anchor(page)}">\n{body}\n</section>'


def inline_css(site: Path, sheet: str) -> str:
    """A stylesheet with each ``url()`` a ``data:`` URI, or ``none`` when the file is not there."""
    path = site / sheet
    text = path.read_text(encoding="utf-8")

    def resolve(match: re.Match[str]) -> str:
        ref = match.group(2).strip()
        if ref.startswith(("data:", "#")):
            return match.group(0)
        target = (path.parent / ref.split("?")[0].split("#")[0]).resolve()
        small = target.is_file() and target.stat().st_size <= MAX_DOWNLOAD_BYTES
        return f'url("{data_uri(target)}")' if small and target.is_relative_to(site.resolve()) else "none"

    return CSS_URL.sub(resolve, text)


def script(text: str) -> str:
    """``text`` as an inline ``<script>`` (a ``</script`` inside it cannot end the element)."""
    return "<script>" + re.sub(r"</(script)", r"<\\/\1", text, flags=re.IGNORECASE) + "</script>"


def head(site: Path, title: str, sections: str) -> str:
    """The ``<head>``: title, the index page's stylesheets inlined, the scripts the sections need."""
    index = (site / first_page(site)).read_text(encoding="utf-8")
    styles = [inline_css(site, html.unescape(s)) for s in STYLESHEET.findall(index) if (site / s).is_file()]
    parts = ['<meta charset="utf-8">', f"<title>{html.escape(title)}</title>"]
    parts += [f"<style>\n{css}\n</style>" for css in [*styles, LOCAL_CSS]]
    if 'class="iscsi-chart"' in sections:
        parts += [script((site / "_static" / BUNDLE).read_text(encoding="utf-8"))]
        parts += [script((site / "_static" / SCRIPT).read_text(encoding="utf-8"))]
    if 'class="cell_input' in sections:
        toggle = site / "_static" / CODE_SWITCH
        parts += [script(toggle.read_text(encoding="utf-8"))] if toggle.is_file() else []
    return "\n".join(parts)


def page_title(site: Path, page: str) -> str:
    """A page's heading as text (its first ``<h1>`` without the permalink), else its path."""
    found = H1.search((site / page).read_text(encoding="utf-8"))
    text = (
        re.sub(r"<a class=\"headerlink\".*?</a>|<[^>]+>", "", found.group(1), flags=re.DOTALL)
        if found
        else ""
    )
    return text.strip() or page


def contents(site: Path, pages: list[str]) -> str:
    """A list of the pages, each linked to its section."""
    items = [f'<li><a href="#{anchor(page)}">{page_title(site, page)}</a></li>' for page in pages]
    return '<nav id="contents"><h2>Contents</h2><ol>\n' + "\n".join(items) + "\n</ol></nav>"


def single_html(site: Path, title: str, subtitle: str) -> tuple[str, list[str]]:
    """The single-file report's text and the pages it holds."""
    pages = reading_order(site)
    sections = "\n".join(page_section(site, page, set(pages)) for page in pages)
    banner = f"<header><h1>{html.escape(title)}</h1><p>{html.escape(subtitle)}</p></header>"
    body = f"{banner}\n{contents(site, pages)}\n<main>\n{sections}\n</main>"
    document = (
        f'<!DOCTYPE html>\n<html lang="en" data-theme="light">\n<head>\n{head(site, title, sections)}\n'
    )
    return document + f'</head>\n<body class="single-file">\n{body}\n</body>\n</html>\n', pages


class _References(HTMLParser):
    """Collects every attribute value a browser would load or follow, and the CSS ``url()`` inside styles."""

    LOADS = frozenset({"src", "href", "srcset", "poster", "data", "action", "formaction", "background"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_style = tag == "style"
        for name, value in attrs:
            if name in self.LOADS and value is not None:
                self.found.append(value.strip())
            if name == "style" and value:
                self.found += [m.group(2) for m in CSS_URL.finditer(value)]

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.found += [m.group(2).strip() for m in CSS_URL.finditer(data)]
            self.found += re.findall(r"@import\s+[\"']?([^\"';\s]+)", data)


def outside_references(text: str) -> list[str]:
    """Every reference in an HTML text to something outside it (anything but ``#anchor`` and ``data:``)."""
    parser = _References()
    parser.feed(text)
    parser.close()
    return [ref for ref in parser.found if ref != "none" and not ref.startswith(("#", "data:"))]
