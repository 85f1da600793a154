"""Lighthouse's performance and accessibility scores of chosen pages of a built site, desktop and mobile.

Usage: CHROME_PATH=/usr/bin/chromium PYTHONPATH=src .venv/bin/python benchmarks/lighthouse_pages.py
       --lighthouse /tmp/lh/node_modules/.bin/lighthouse [--site _build/html] [--out DIR] PAGE...
       (or ``--median DIR... PAGE...``: the medians of the runs kept in those ``--out`` folders)

Lighthouse is installed outside the project (``mkdir -p /tmp/lh && cd /tmp/lh && npm install
lighthouse``). The site is served on 127.0.0.1 only (``http.server`` in a thread, as
``tests/browser/harness.py`` serves it: no compression, or with ``--gzip`` its text files gzipped
as a normal web server sends them); each page is audited twice, with ``--preset=desktop``
and with Lighthouse's default (mobile: simulated slow 4G and a 4x slower CPU), in headless Chromium
with :data:`CHROME_FLAGS`. Prints one Markdown row per page and preset, with the audits Lighthouse
ranks as the page's largest savings when performance misses :data:`PERFORMANCE_GOAL` (issue 25).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser.harness import (  # noqa: E402  (the tests folder is put on the path just above)
    COMPRESSED_SUFFIXES,
    GZIP_LEVEL,
    QuietHandler,
    serve,
)

# Headless Chromium's flags plus the harness's: nothing but the page itself may touch the network.
CHROME_FLAGS = (
    "--headless=new --no-sandbox --disable-gpu --disable-background-networking "
    "--disable-component-update --disable-sync --no-first-run"
)
PRESETS = {"desktop": ["--preset=desktop"], "mobile": []}  # Lighthouse's default is mobile
PERFORMANCE_GOAL = {"desktop": 90, "mobile": 70}  # issue 25; accessibility must stay 100
TOP_OPPORTUNITIES = 3  # audits named per page when performance misses its goal
LIGHTHOUSE_TIMEOUT_S = 600
# Metrics summarised by ``--median`` (Lighthouse audit ids; their numericValue is in ms, bytes or score).
MEDIAN_METRICS = (
    "first-contentful-paint",
    "largest-contentful-paint",
    "total-blocking-time",
    "cumulative-layout-shift",
    "total-byte-weight",
)


class GzipHandler(QuietHandler):
    """Static files, text ones gzipped when the browser accepts it (as a normal web server sends them)."""

    def do_GET(self) -> None:
        """A text file gzipped; anything else (folders, fonts, images, errors) as the plain handler."""
        path = Path(self.translate_path(self.path))
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.is_file() and path.suffix in COMPRESSED_SUFFIXES):
            super().do_GET()
            return
        body = gzip.compress(path.read_bytes(), compresslevel=GZIP_LEVEL)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def audit(lighthouse: Path, url: str, preset: str, report: Path) -> dict[str, Any]:
    """Run Lighthouse once and return its JSON report."""
    command = [
        str(lighthouse),
        url,
        *PRESETS[preset],
        "--only-categories=performance,accessibility",
        "--output=json",
        f"--output-path={report}",
        f"--chrome-flags={CHROME_FLAGS}",
        "--quiet",
    ]
    subprocess.run(command, check=True, timeout=LIGHTHOUSE_TIMEOUT_S)
    found: dict[str, Any] = json.loads(report.read_text())
    return found


def score(found: dict[str, Any], category: str) -> int:
    """A category's score out of 100."""
    return round(100 * float(found["categories"][category]["score"]))


def opportunities(found: dict[str, Any]) -> list[str]:
    """The audits with the largest estimated savings, as 'title (ms, bytes)'."""
    ranked = []
    for item in found["audits"].values():
        details = item.get("details") or {}
        saving_ms = float(details.get("overallSavingsMs") or 0)
        saving_bytes = float(details.get("overallSavingsBytes") or 0)
        if (saving_ms > 0 or saving_bytes > 0) and (item.get("score") or 0) < 1:
            ranked.append((saving_ms, saving_bytes, item["title"]))
    ranked.sort(reverse=True)
    return [f"{t} ({ms:,.0f} ms, {b / 1000:,.0f} kB)" for ms, b, t in ranked[:TOP_OPPORTUNITIES]]


def metric(found: dict[str, Any], name: str) -> str:
    """A metric as Lighthouse displays it (for example '1.2 s')."""
    return str(found["audits"][name].get("displayValue", "—")).replace("\xa0", " ")


def row(page: str, preset: str, found: dict[str, Any]) -> str:
    """One Markdown row: scores, the main metrics, and what Lighthouse blames when performance misses."""
    performance = score(found, "performance")
    blamed = "; ".join(opportunities(found)) if performance < PERFORMANCE_GOAL[preset] else ""
    return (
        f"| `{page}` | {preset} | {performance} | {score(found, 'accessibility')} | "
        f"{metric(found, 'first-contentful-paint')} | {metric(found, 'largest-contentful-paint')} | "
        f"{metric(found, 'total-blocking-time')} | {metric(found, 'total-byte-weight')} | {blamed} |"
    )


def numeric(found: dict[str, Any], name: str) -> float:
    """An audit's value as a number (milliseconds, bytes, or the layout shift score)."""
    return float(found["audits"][name]["numericValue"])


def median_row(page: str, preset: str, reports: list[dict[str, Any]]) -> str:
    """One Markdown row: the medians of several runs of one page and preset, and the runs' scores."""
    scores = [score(r, "performance") for r in reports]
    value = {name: statistics.median(numeric(r, name) for r in reports) for name in MEDIAN_METRICS}
    return (
        f"| `{page}` | {preset} | {statistics.median(scores):.0f} ({', '.join(map(str, scores))}) | "
        f"{min(score(r, 'accessibility') for r in reports)} | "
        f"{value['first-contentful-paint'] / 1000:.1f} s | "
        f"{value['largest-contentful-paint'] / 1000:.1f} s | "
        f"{value['total-blocking-time']:,.0f} ms | {value['cumulative-layout-shift']:.3f} | "
        f"{value['total-byte-weight'] / 1024:,.0f} KiB |"
    )


def print_medians(folders: list[Path], pages: list[str]) -> None:
    """The median table of the reports kept by earlier runs (``--out``), one folder per run."""
    print("| page | preset | performance (runs) | accessibility, min | FCP | LCP | TBT | CLS | bytes |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for page in pages:
        for preset in PRESETS:
            name = f"{page.replace('/', '_')}-{preset}.json"
            reports = [json.loads((f / name).read_text()) for f in folders if (f / name).is_file()]
            if reports:
                print(median_row(page, preset, reports))


def main() -> None:
    """Audit each page with both presets and print the table (or, with ``--median``, summarise runs)."""
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--lighthouse", type=Path, required=True, help="the lighthouse command")
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--out", type=Path, help="keep each JSON report here")
    parser.add_argument("--gzip", action="store_true", help="serve text files gzipped, as web servers do")
    parser.add_argument(
        "--median", type=Path, nargs="+", help="print the medians of the reports kept in these folders"
    )
    parser.add_argument("pages", nargs="+", help="pages relative to the site")
    args = parser.parse_args()
    if args.median:
        print_medians(args.median, args.pages)
        return
    print("| page | preset | performance | accessibility | FCP | LCP | TBT | total bytes | top savings |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    handler = GzipHandler if args.gzip else QuietHandler
    site = args.site.resolve()
    with tempfile.TemporaryDirectory(prefix="lighthouse-") as tmp, serve(site, handler) as base:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        for page in args.pages:
            for preset in PRESETS:
                report = out / f"{page.replace('/', '_')}-{preset}.json"
                print(row(page, preset, audit(args.lighthouse, base + page, preset, report)), flush=True)


if __name__ == "__main__":
    main()
