"""What every browser test shares: Chromium, the network gate, serving a site, watching a page.

``build_once`` (from ``e2e/projects.py``) builds a site at most once per test run for all workers.
"""

from __future__ import annotations

import gzip
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
import yaml
from e2e import projects
from e2e.projects import build_once  # noqa: F401  (re-exported for the browser modules)

CHROMIUM = Path("/usr/bin/chromium")
LOCAL_HOST = "127.0.0.1"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PAGE_TIMEOUT_MS = 30_000
SITE_ROOT_ENV = "ISCSI_REPORT_SITE_ROOT"  # check this project's own site instead of a lab copy
SITE_ENV = "ISCSI_REPORT_SITE"  # the exact site folder to check (default: its _build/html)
CHAPTERS = ["network", "storage", "model"]  # the lab site's chapters (tests/browser/conftest.py)
REFERENCE_PAGES = projects.REFERENCE_PAGES  # and its Reference part (every project copy has it)


def browser_or_skip() -> None:
    """Skip without Chromium or playwright locally; fail under CI (it must not skip silently)."""
    missing = []
    if not CHROMIUM.is_file():
        missing.append(f"{CHROMIUM} (Debian package chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright Python package (pip install -e '.[test]')")
    if missing:
        message = "browser test needs " + " and ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message + " (CI is set: refusing to skip)")
        pytest.skip(message)


def add_toc_part(project: Path, caption: str, files: list[str]) -> None:
    """Append a part listing ``files`` to a project copy's toc."""
    toc_path = project / "book" / "_toc.yml"
    toc = yaml.safe_load(toc_path.read_text())
    toc["parts"].append({"caption": caption, "chapters": [{"file": f} for f in files]})
    toc_path.write_text(yaml.safe_dump(toc, sort_keys=False))


def page_files(html: Path) -> list[str]:
    """Every HTML page of the site, relative to its root (theme assets excluded)."""
    return sorted(
        p.relative_to(html).as_posix()
        for p in html.rglob("*.html")
        if not p.relative_to(html).parts[0].startswith("_")
    )


class QuietHandler(SimpleHTTPRequestHandler):
    """Static files, no request log on stderr."""

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(html: Path, handler: type[SimpleHTTPRequestHandler] = QuietHandler) -> Iterator[str]:
    """The folder served on 127.0.0.1 from a thread; yields its base URL (ending in '/')."""
    httpd = ThreadingHTTPServer((LOCAL_HOST, 0), partial(handler, directory=str(html)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOCAL_HOST}:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


@dataclass
class Gate:
    """Playwright route handler: requests to 127.0.0.1 go through, every other one is aborted and kept."""

    blocked: list[str] = field(default_factory=list)

    def __call__(self, route: Any) -> None:
        if urlparse(route.request.url).hostname == LOCAL_HOST:
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()


@contextmanager
def chromium(profile: Path) -> Iterator[tuple[Any, Gate]]:
    """A headless Chromium context (fresh profile) with the network gate on every request."""
    from playwright.sync_api import sync_playwright

    gate = Gate()
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            context.route("**/*", gate)
            yield context, gate
        finally:
            context.close()


def watch(page: Any, errors: list[str] | None = None, failed: list[str] | None = None) -> None:
    """Collect console errors and uncaught exceptions in ``errors``, failed requests in ``failed``."""
    errors = [] if errors is None else errors
    failed = errors if failed is None else failed
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.url}: {r.status}"))


# ------------------------------------------------------------------------------ page weight (issue 25)

# Issue 25's goal: at most 1.5 MB per page, counted as Lighthouse counts it: bytes over the wire
# with each text resource compressed as a normal web server sends it (BENCHMARKS.md, "Every chapter
# answers first"; benchmarks/page_weights.py weighs every page of the real book the same way).
PAGE_WEIGHT_GOAL_BYTES = 1_500_000
WEIGHT_VIEWPORT = {"width": 1400, "height": 900}  # the reader tests' desktop width
GZIP_LEVEL = 6  # zlib's default, what Apache's mod_deflate and most CDNs use
SETTLE_MS = 20_000  # longest wait for the charts to draw and the network to go idle
# Sent gzipped by a normal web server; anything else (fonts, PNGs) is already compressed.
COMPRESSED_SUFFIXES = (".html", ".js", ".mjs", ".css", ".json", ".svg", ".txt", ".map", ".ipynb", ".md")

_TIMELINE_JS = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  return {
    entries: [{url: nav.name, transfer: nav.transferSize, body: nav.encodedBodySize},
              ...performance.getEntriesByType('resource').map(
                r => ({url: r.name, transfer: r.transferSize, body: r.encodedBodySize}))],
    first_contentful_paint_ms: paint ? paint.startTime : null,
  };
}"""

# Charts are drawn live only on the reader's first touch of each (pipeline/assets.py, issue 25):
# focus each in turn, as a keyboard reader would, a frame or two at each, then back to the top.
VISIT_CHARTS_JS = """async () => {
  const frame = () => new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  for (const figure of document.querySelectorAll('figure.iscsi-chart')) {
    figure.scrollIntoView({block: 'center'});
    figure.focus();
    await frame();
  }
  window.scrollTo(0, 0);
  await frame();
}"""

# Polled until true: each poll focuses the first chart not yet drawn (nor given up), which asks it
# to draw; every formula is MathML from the build (pipeline/mathml.py), drawn by the browser itself.
_SETTLED_JS = """() => {
  const waiting = Array.from(document.querySelectorAll('figure.iscsi-chart')).filter(
    f => !f.classList.contains('iscsi-chart-ready') && f.querySelector('.iscsi-chart-live'));
  if (waiting.length) { waiting[0].scrollIntoView({block: 'center'}); waiting[0].focus(); return false; }
  return Array.from(document.querySelectorAll('.math')).every(m => m.querySelector('math'));
}"""


@dataclass
class PageWeight:
    """One page as loaded with an empty cache: bytes as served (uncompressed), bytes gzipped, requests."""

    page: str
    served_bytes: int
    gzipped_bytes: int
    requests: int
    first_contentful_paint_ms: float | None
    settled: bool  # charts drawn and the network idle before weighing


def gzipped_size(path: Path) -> int:
    """The size of a file gzipped at GZIP_LEVEL (the body a compressing server would send)."""
    return len(gzip.compress(path.read_bytes(), compresslevel=GZIP_LEVEL, mtime=0))


def local_file(site: Path, url: str) -> Path | None:
    """The file of the site a loopback URL names (a folder's index.html), or None."""
    path = site / unquote(urlparse(url).path).lstrip("/")
    path = path / "index.html" if path.is_dir() else path
    return path if path.is_file() else None


def gzipped_transfer(site: Path, entry: dict[str, Any], sizes: dict[Path, int]) -> int:
    """An entry's transfer, its body replaced by the gzipped file when a server would compress it."""
    path = local_file(site, entry["url"])
    if path is None or path.suffix not in COMPRESSED_SUFFIXES:
        return int(entry["transfer"])
    if path not in sizes:
        sizes[path] = gzipped_size(path)
    return int(entry["transfer"]) - int(entry["body"]) + sizes[path]


def weigh_page(context: Any, site: Path, url: str, sizes: dict[Path, int] | None = None) -> PageWeight:
    """Open one page with the cache disabled, let its charts settle, and weigh what it loaded."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = context.new_page()
    page.set_viewport_size(WEIGHT_VIEWPORT)
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    page.goto(url, wait_until="load", timeout=PAGE_TIMEOUT_MS)
    settled = True
    try:  # a chart that never draws is test_reader's to report; here it only marks the weight
        page.wait_for_function(_SETTLED_JS, timeout=SETTLE_MS)
        page.wait_for_load_state("networkidle", timeout=SETTLE_MS)  # fonts and images asked for late
    except PlaywrightTimeout:
        settled = False
    found = page.evaluate(_TIMELINE_JS)
    page.close()
    sizes = {} if sizes is None else sizes
    entries = found["entries"]
    return PageWeight(
        page=urlparse(url).path.lstrip("/"),
        served_bytes=sum(int(e["transfer"]) for e in entries),
        gzipped_bytes=sum(gzipped_transfer(site, e, sizes) for e in entries),
        requests=len(entries),
        first_contentful_paint_ms=found["first_contentful_paint_ms"],
        settled=settled,
    )
