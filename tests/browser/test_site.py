"""The built site in a real browser: headless Chromium, served from 127.0.0.1, network blocked.

The site is the lab copy of ``conftest.py`` (built once per test run, shared with ``test_reader``),
or with ``ISCSI_REPORT_SITE_ROOT`` set (``make check-site``, used by ``make publish`` and CI) the
project's own live site, exactly the folder that will be published.

Every HTML page is opened once; what each page did and shows is collected, then each test asserts
one property: no console error and no request leaving the machine, every chart drawn, every glued
number in the prose, every local link resolving, every download serving the exact bytes of its
source, each chapter linking exactly the raw files it read, the provenance page linking them all.
"""

from __future__ import annotations

import ast
import json
import os
import re
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import nbformat
import pytest
import yaml
from e2e.projects import LAB

from browser.conftest import html_dir, server  # noqa: F401  (re-exported: modules still import them here)
from browser.harness import (  # noqa: F401  (CHROMIUM, CHROMIUM_ARGS: re-exported as well)
    CHAPTERS,
    CHROMIUM,
    CHROMIUM_ARGS,
    LOCAL_HOST,
    PAGE_TIMEOUT_MS,
    SITE_ROOT_ENV,
    VISIT_CHARTS_JS,
    browser_or_skip,
    chromium,
    page_files,
    watch,
)
from iscsi_report.analyses import about
from iscsi_report.analyses import provenance as reconstruction
from iscsi_report.pipeline import provenance as provenance_pages

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

# A raw folder shown as one line: `<code>data/raw/d/fio/</code>: 966 files` (report.raw_links_markdown).
FOLDER_LINE = re.compile(
    r'<code[^>]*>(?:<span class="pre">)?(data/raw/[^<]+/)(?:</span>)?</code>: ([0-9,]+) files'
)
CHART_MARKER = 'class="iscsi-chart"'  # a chart output: a figure drawn by the site's own Vega runtime
GLUE_ROLE = re.compile(r"\{glue(?::text)?\}`([^`]+)`")
TABLE_LINK = re.compile(r"Download (\S+\.csv)")
CANARY_URL = "http://192.0.2.1/canary.js"  # TEST-NET-1: must be blocked, never reached
_browser_or_skip = browser_or_skip  # the name other modules import from here


@dataclass
class PageVisit:
    """What one page did and showed in the browser."""

    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    hrefs: list[str] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    downloads: list[tuple[str, str]] = field(default_factory=list)  # (absolute href, link text)
    charts: list[dict] = field(default_factory=list)
    pasted: list[str] = field(default_factory=list)
    untouched: dict = field(default_factory=dict)  # the charts as loaded, before any interaction
    hovered_ready: bool = False  # the first chart drawn live after the pointer moved onto it


@dataclass
class Site:
    """The built project, the served folder and URL, and every page's visit."""

    project: Path
    html: Path
    base: str
    pages: dict[str, PageVisit]
    blocked: list[str]
    canary_blocked: bool


_COLLECT_JS = """() => ({
  hrefs: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
  ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id),
  downloads: Array.from(document.querySelectorAll('a.download')).map(a => [a.href, a.textContent.trim()]),
  charts: Array.from(document.querySelectorAll('figure.iscsi-chart')).map(f => {
      const r = f.getBoundingClientRect();
      const live = f.querySelector('.iscsi-chart-live svg');
      return {drawn: f.classList.contains('iscsi-chart-ready'), box_w: r.width, box_h: r.height,
              marks: live ? live.querySelectorAll('.role-mark path, .role-mark line').length : 0};
  }),
  pasted: Array.from(document.querySelectorAll('.pasted-text')).filter(  // the page's own text, not the
    e => !e.closest('nav, .bd-sidebar-primary, .bd-sidebar-secondary, .prev-next-area, footer')  // menus
  ).map(e => e.textContent),
})"""
# Every chart drawn, or given up (its live view removed, the SVG left): then the page can be read.
_CHARTS_SETTLED_JS = """() => Array.from(document.querySelectorAll('figure.iscsi-chart')).every(
  f => f.classList.contains('iscsi-chart-ready') || !f.querySelector('.iscsi-chart-live'))"""


# The charts as loaded and left alone: was the Vega runtime fetched, how each figure is offered.
_UNTOUCHED_JS = """() => ({
  runtime_fetched: performance.getEntriesByType('resource').some(r => r.name.includes('vega-bundle')),
  runtime_defined: typeof window.vegaEmbed === 'function',
  figures: Array.from(document.querySelectorAll('figure.iscsi-chart')).map(f => ({
    ready: f.classList.contains('iscsi-chart-ready'),
    tabindex: f.getAttribute('tabindex'),
    label: f.getAttribute('aria-label') || '',
    fallback: !!f.querySelector('img.iscsi-chart-fallback'),
  })),
})"""


def _hover_first_chart(page) -> bool:
    """Move the pointer onto the page's first chart; whether it is then drawn live."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.hover("figure.iscsi-chart >> nth=0", timeout=PAGE_TIMEOUT_MS)
    try:
        page.wait_for_function(
            "() => document.querySelector('figure.iscsi-chart').classList.contains('iscsi-chart-ready')",
            timeout=PAGE_TIMEOUT_MS,
        )
    except PlaywrightTimeout:
        return False
    return True


def _visit(page, url: str) -> PageVisit:
    """Open one page, wait for the network to settle, collect what it shows and what went wrong."""
    visit = PageVisit()
    watch(page, visit.console_errors, visit.failed_requests)
    page.goto(url, wait_until="networkidle", timeout=PAGE_TIMEOUT_MS)
    if page.url != url:  # index.html redirects to the root page: collect where it landed
        page.wait_for_load_state("networkidle", timeout=PAGE_TIMEOUT_MS)
    visit.untouched = page.evaluate(_UNTOUCHED_JS)
    if visit.untouched["figures"]:
        visit.hovered_ready = _hover_first_chart(page)
    page.evaluate(VISIT_CHARTS_JS)  # the others: a chart is drawn live on a first touch or focus
    page.wait_for_function(_CHARTS_SETTLED_JS, timeout=PAGE_TIMEOUT_MS)
    found = page.evaluate(_COLLECT_JS)
    visit.hrefs, visit.ids = found["hrefs"], set(found["ids"])
    visit.downloads = [tuple(d) for d in found["downloads"]]
    visit.charts, visit.pasted = found["charts"], found["pasted"]
    return visit


@pytest.fixture(scope="module")
def site(project: Path, html_dir: Path, server: str, tmp_path_factory: pytest.TempPathFactory) -> Site:  # noqa: F811
    """Open every page in headless Chromium with the network blocked."""
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as (context, gate):
        page = context.new_page()
        page.goto(server + "intro.html", wait_until="load", timeout=PAGE_TIMEOUT_MS)
        page.evaluate("u => fetch(u).catch(() => null)", CANARY_URL)  # prove the gate works
        canary = CANARY_URL in gate.blocked
        gate.blocked.clear()
        page.close()
        pages = {}
        for rel in page_files(html_dir):
            page = context.new_page()
            pages[rel] = _visit(page, server + rel)
            page.close()
    return Site(project, html_dir, server, pages, gate.blocked, canary)


def _chapter_pages(site: Site) -> list[tuple[str, Path]]:
    """(page, executed notebook) for every chapter of the book (an executed notebook with a page)."""
    runs = site.project / "book" / "runs"
    pairs = [
        (nb.relative_to(site.project / "book").with_suffix(".html").as_posix(), nb)
        for nb in sorted(runs.glob("*/*.ipynb"))
    ]
    return [(page, nb) for page, nb in pairs if page in site.pages]


def _fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


# ------------------------------------------------------------------------------ tests


def test_every_page_of_the_book_was_opened(site: Site) -> None:
    chapters = [p for p, _ in _chapter_pages(site)]
    assert {"index.html", "intro.html", "provenance.html"} <= set(site.pages), sorted(site.pages)
    assert chapters and len(chapters) == len(list((site.project / "book" / "runs").glob("*/*.ipynb")))
    if not os.environ.get(SITE_ROOT_ENV):
        assert chapters == [f"runs/{LAB}/{nb}.html" for nb in sorted(CHAPTERS)]


def test_no_console_error_and_no_request_leaves_the_machine(site: Site) -> None:
    assert site.canary_blocked, "the network gate did not see a request to another host"
    assert site.blocked == []
    for rel, visit in site.pages.items():
        assert visit.console_errors == [], rel
        assert visit.failed_requests == [], rel


def test_every_chart_renders(site: Site) -> None:
    n_charts = 0
    for rel, nb_path in _chapter_pages(site):
        nb = nbformat.read(nb_path, as_version=4)
        outputs = [out.get("data", {}) for c in nb.cells for out in c.get("outputs", [])]
        n_shown = sum(CHART_MARKER in "".join(data.get("text/html", "")) for data in outputs)
        charts = site.pages[rel].charts
        assert len(charts) == n_shown, (rel, n_shown, len(charts))
        n_charts += n_shown
        for chart in charts:
            assert chart["drawn"] and chart["marks"] > 0, (rel, chart)
            assert chart["box_w"] > 0 and chart["box_h"] > 0, (rel, chart)
    assert n_charts > 0


def test_no_chart_runtime_before_a_touch_and_a_live_chart_after_one(site: Site) -> None:
    chart_pages = {rel: v for rel, v in site.pages.items() if v.untouched["figures"]}
    assert chart_pages, "no chart on any page: the check would prove nothing"
    for rel, visit in chart_pages.items():
        assert not visit.untouched["runtime_fetched"] and not visit.untouched["runtime_defined"], rel
        for figure in visit.untouched["figures"]:
            assert not figure["ready"] and figure["fallback"], (rel, figure)  # the static SVG, as built
            assert figure["tabindex"] == "0" and "interactive" in figure["label"], (rel, figure)
        assert visit.hovered_ready, f"{rel}: the first chart not drawn live once the pointer moved onto it"


def _glue_values(nb) -> dict[str, str]:
    """name -> text/plain of every value glued in the executed notebook."""
    values = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            scrap = out.get("metadata", {}).get("scrapbook")
            if scrap:
                values[scrap["name"]] = out["data"][scrap["mime_prefix"] + "text/plain"]
    return values


def _expected_text(plain: str, spec: str) -> str:
    """The text a ``{glue:text}`name:spec``` reference shows, by Python's format()."""
    try:
        value = ast.literal_eval(plain)
    except (ValueError, SyntaxError):
        value = plain
    if not spec:
        return str(value)
    kind = spec[-1]
    if kind in "eEfFgGn%":
        value = float(value)
    elif kind in "bcdoxX":
        value = int(value)
    return format(value, spec)


def test_every_glued_number_appears_where_referenced(site: Site) -> None:
    n_refs = 0
    for rel, nb_path in _chapter_pages(site):
        nb = nbformat.read(nb_path, as_version=4)
        values = _glue_values(nb)
        expected = []
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                for ref in GLUE_ROLE.findall(cell.source):
                    name, _, spec = ref.partition(":")
                    assert name in values, f"{rel}: {name} is referenced but was never glued"
                    expected.append(_expected_text(values[name], spec))
        assert site.pages[rel].pasted == expected, rel
        n_refs += len(expected)
    assert n_refs > 0, "no glue reference anywhere: the check would prove nothing"


def test_internal_links_resolve(site: Site) -> None:
    ids_by_url = {site.base + rel: visit.ids for rel, visit in site.pages.items()}
    status: dict[str, int] = {}
    checked = 0
    for rel, visit in site.pages.items():
        for href in visit.hrefs:
            if urlparse(href).hostname != LOCAL_HOST:
                continue
            url, frag = urldefrag(href)
            if url not in status:
                status[url] = _fetch(url)[0]
            assert status[url] == 200, f"{rel}: {href} -> {status[url]}"
            if frag and url in ids_by_url:
                assert unquote(frag) in ids_by_url[url], f"{rel}: no anchor #{frag} on {url}"
            checked += 1
    assert checked > 0


def _download_source(site: Site, page: str, text: str) -> Path:
    """The project file a download link must serve: its path is the text, or a run's table."""
    candidate = site.project / text
    if text and candidate.is_file():
        return candidate
    m = TABLE_LINK.fullmatch(text)
    assert m, f"{page}: download link {text!r} names no known source"
    run = Path(page).parts[1]
    return site.project / "results" / run / m.group(1)


def test_downloads_serve_the_exact_source_bytes(site: Site) -> None:
    served: set[Path] = set()
    checked: dict[str, bytes] = {}
    for rel, visit in site.pages.items():
        for href, text in visit.downloads:
            source = _download_source(site, rel, text)
            if href not in checked:
                code, checked[href] = _fetch(href)
                assert code == 200, f"{rel}: {href} -> {code}"
            assert checked[href] == source.read_bytes(), f"{rel}: {href} differs from {source}"
            served.add(source)
    tables = set(site.project.glob("results/*/*.csv"))
    # every raw file but the dataset's prose (README, reader notes: text shown, no number read from it)
    prose = {*site.project.glob("data/raw/*/README*"), *site.project.glob(f"data/raw/*/{about.NOTES}")}
    raw = set(site.project.glob("data/raw/*/**/*.*")) - prose
    assert tables and tables <= served, sorted(map(str, tables - served))
    assert raw and raw <= served, sorted(map(str, raw - served))


def _linked(site: Site, page: str, prefix: str) -> set[str]:
    return {text for _, text in site.pages[page].downloads if text.startswith(prefix)}


def test_each_chapter_links_exactly_the_raw_files_it_read(site: Site) -> None:
    prefix = "data/raw/"
    for rel, nb_path in _chapter_pages(site):
        run = nb_path.parent.name
        record = json.loads((site.project / ".cache" / "runs" / run / f"{nb_path.stem}.json").read_text())
        read = {p for p in record["reads"] if p.startswith(prefix)}
        manifests = {p for p in read if p.endswith("/manifest.yaml")}
        # the dataset's prose (README, reader notes, the reconstruction's targets, which the banner
        # links) may be linked for people without being read; when a page does read it, it counts
        prose = ("/README.md", f"/{about.NOTES}", f"/{reconstruction.TARGETS}")
        linked = {p for p in _linked(site, rel, prefix) if p in read or not p.endswith(prose)}
        assert linked <= read, f"{rel} links files it did not read: {sorted(linked - read)}"
        # a folder of many files is one line, its count (the files are listed on the provenance page)
        html = (site.html / rel).read_text(encoding="utf-8")
        folders = {m[1]: int(m[2].replace(",", "")) for m in FOLDER_LINE.finditer(html)}
        in_folders = {p for p in read if p.rsplit("/", 1)[0] + "/" in folders}
        for folder, n_files in folders.items():
            assert n_files == sum(p.startswith(folder) for p in in_folders), f"{rel}: {folder} count"
        assert read - manifests - in_folders == linked - manifests, f"{rel}: read but not linked"


def test_provenance_pages_link_every_raw_file_with_its_digest(site: Site) -> None:
    summary = (site.html / "provenance.html").read_text()
    manifests = sorted(site.project.glob("data/raw/*/manifest.yaml"))
    assert manifests
    for path in manifests:
        entries = yaml.safe_load(path.read_text())["files"]
        dataset = path.parent.relative_to(site.project).as_posix()
        page = f"{provenance_pages.dataset_doc(path.parent.name)}.html"  # one page per dataset
        assert f'href="{page}"' in summary, page  # the summary links it
        html = (site.html / page).read_text()
        listed = {f"{dataset}/{f['path']}" for f in entries} | {f"{dataset}/manifest.yaml"}
        assert listed <= _linked(site, page, "data/raw/"), dataset
        for f in entries:
            assert f["sha256"] in html, f["path"]
            assert f["sha256"] not in summary, f["path"]  # the summary stays short


def test_site_folder_is_self_contained(site: Site) -> None:
    """No page refers to a CDN: every script and stylesheet is served from the site itself."""
    for rel in site.pages:
        text = (site.html / rel).read_text()
        for src in re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?://[^"]+)"', text):
            pytest.fail(f"{rel} loads {src} from the network")
