"""Build a small site of the provenance pages over the project's real data, and print their weights.

Usage: PYTHONPATH=src .venv/bin/python benchmarks/provenance_pages.py [--keep DIR]

The copy holds the project's params files, chapters' sources, every raw dataset and the published
numbers, and a toc of ``intro`` and ``provenance`` only: nothing is executed, so the provenance
pages list the datasets the params files name (not the ones a run's records add). Prints the size
in bytes of each built provenance page (``provenance.html`` and ``provenance/*.html``, if any), the
figures of BENCHMARKS.md's issue-25 section.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("notebooks", "params", "data/raw", "data/published", "book/_static")
BOOK_PAGES = ("intro.md",)


def make_copy(dest: Path) -> Path:
    """The project's inputs in ``dest``, with a toc of the intro and the provenance page."""
    for rel in COPIED:
        if (ROOT / rel).is_dir():
            shutil.copytree(ROOT / rel, dest / rel)
    shutil.copy(ROOT / "_config.yml", dest / "_config.yml")
    for page in BOOK_PAGES:
        shutil.copy(ROOT / "book" / page, dest / "book" / page)
    toc = {
        "format": "jb-book",
        "root": "intro",
        "parts": [{"caption": "About", "chapters": [{"file": "provenance"}]}],
    }
    (dest / "book" / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    return dest


def page_sizes(site: Path) -> dict[str, int]:
    """Bytes of each built provenance page, by site path."""
    pages = [site / "provenance.html", *sorted((site / "provenance").glob("*.html"))]
    return {p.relative_to(site).as_posix(): p.stat().st_size for p in pages if p.is_file()}


def main() -> int:
    """Copy, build, print the weights."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keep", type=Path, help="build in this folder and keep it")
    args = parser.parse_args()
    dest = args.keep or Path(tempfile.mkdtemp(prefix="provenance-pages-"))
    project = make_copy(dest / "proj")
    cmd = [sys.executable, "-m", "iscsi_report.cli", "--root", str(project), "build"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(proc.stdout + proc.stderr, file=sys.stderr)
        return 1
    sizes = page_sizes(project / "_build" / "html")
    for rel, size in sizes.items():
        print(f"{size:>12,}  {rel}")
    others = {k: v for k, v in sizes.items() if k != "provenance.html"}
    if others:
        largest = max(others, key=lambda k: others[k])
        summary = sizes.get("provenance.html", 0)
        print(f"summary {summary:,} bytes; largest dataset page {largest} {others[largest]:,} bytes")
    if args.keep is None:
        shutil.rmtree(dest, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
