"""Weigh every page of a built site in headless Chromium: bytes as served, bytes gzipped, requests, paint.

Usage: PYTHONPATH=src .venv/bin/python benchmarks/page_weights.py [--site _build/html] [--json FILE] [PAGE...]

The site is served on 127.0.0.1 only (``http.server`` in a thread, no compression) and each page
is opened in a fresh tab with the cache disabled at 1400 x 900 px, the browser tests' network gate
aborting anything not on loopback (``tests/browser/harness.py``, whose ``weigh_page`` the browser
tests use too). Per page, from the browser's performance timeline: the bytes transferred
(navigation plus every resource, headers included, as this server sends them), the same with each
text resource gzipped as a normal web server would send it (fonts and images count as served), the
number of requests and the first contentful paint (loopback, no throttling). Prints a Markdown
table, heaviest first, and the pages over issue 25's goal (BENCHMARKS.md, issue 25).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser.harness import (  # noqa: E402  (the tests folder is put on the path just above)
    PAGE_WEIGHT_GOAL_BYTES,
    PageWeight,
    chromium,
    page_files,
    serve,
    weigh_page,
)


def weigh_site(site: Path, profile: Path, pages: list[str]) -> tuple[list[PageWeight], list[str]]:
    """Every page's weight, and the requests the loopback gate blocked (there should be none)."""
    sizes: dict[Path, int] = {}
    with serve(site) as base, chromium(profile) as (context, gate):
        weights = []
        for rel in pages:
            weights.append(weigh_page(context, site, base + rel, sizes))
            print(f"{rel}: {weights[-1]}", file=sys.stderr, flush=True)
    return weights, gate.blocked


def markdown(weights: list[PageWeight]) -> str:
    """The weights as a Markdown table, heaviest (gzipped) first, pages over the goal marked."""
    lines = [
        "| page | served, bytes | gzipped, bytes | requests | first contentful paint |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for w in sorted(weights, key=lambda w: -w.gzipped_bytes):
        paint = "—" if w.first_contentful_paint_ms is None else f"{w.first_contentful_paint_ms:,.0f} ms"
        over = " **over**" if w.gzipped_bytes > PAGE_WEIGHT_GOAL_BYTES else ""
        over += "" if w.settled else " (not settled)"
        lines.append(
            f"| `{w.page}` | {w.served_bytes:,} | {w.gzipped_bytes:,}{over} | {w.requests} | {paint} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Weigh the site's pages and print the table (and write the JSON, if asked)."""
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("pages", nargs="*", help="pages relative to the site (default: every page)")
    args = parser.parse_args()
    site = args.site.resolve()
    with tempfile.TemporaryDirectory(prefix="page-weights-") as profile:
        weights, blocked = weigh_site(site, Path(profile), args.pages or page_files(site))
    print(markdown(weights))
    over = [w.page for w in weights if w.gzipped_bytes > PAGE_WEIGHT_GOAL_BYTES]
    served_over = [w.page for w in weights if w.served_bytes > PAGE_WEIGHT_GOAL_BYTES]
    print(
        f"\n{len(weights)} pages; over {PAGE_WEIGHT_GOAL_BYTES:,} bytes gzipped: {over or 'none'}; "
        f"as served (uncompressed): {len(served_over)}; blocked requests: {blocked or 'none'}"
    )
    if args.json:
        args.json.write_text(json.dumps([asdict(w) for w in weights], indent=2) + "\n")


if __name__ == "__main__":
    main()
