"""Count, over executed chapters, the tables too wide to read and the chapters that open with a figure.

Usage: .venv/bin/python benchmarks/reader_pages.py book/runs/*/*.ipynb

Per notebook: the tables shown by default (not inside a collapsed ``<details>``) with more than
:data:`MAX_COLUMNS` columns, and whether its first screen holds a figure, read structurally: the
first output showing a chart comes before the first shown table and before the second heading.
Prints one line per notebook and the totals (the figures of BENCHMARKS.md's issue-25 section).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import nbformat

MAX_COLUMNS = 8  # the most columns a table shows by default (presentation/tables.py WIDE_COLUMNS)
DETAILS = re.compile(r"<details\b.*?</details>", re.S)
TABLE = re.compile(r"<table\b.*?</table>", re.S)
HEAD_ROW = re.compile(r"<tr\b.*?</tr>", re.S)
HEADING = re.compile(r"^#{1,6} ", re.M)
CHART_MARKERS = ('class="iscsi-chart"', "<figure")  # an offline chart, or any figure
IMAGE_TYPES = ("image/png", "image/svg+xml")


def _outputs(cell: nbformat.NotebookNode) -> Iterator[tuple[str, str]]:
    """(mime type, text) of each output of a code cell."""
    for out in cell.get("outputs", []):
        for mime, value in out.get("data", {}).items():
            yield mime, "".join(value) if isinstance(value, list) else str(value)


def shown_widths(page_html: str) -> list[int]:
    """The column count of every table shown by default in an HTML output."""
    visible = DETAILS.sub("", page_html)
    widths = []
    for table in TABLE.findall(visible):
        first = HEAD_ROW.search(table)
        widths.append(len(re.findall(r"<t[hd]\b", first.group(0))) if first else 0)
    return widths


def first_screen_has_figure(nb: nbformat.NotebookNode) -> bool:
    """Whether a chart is shown before the first table and before the second heading."""
    headings = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            headings += len(HEADING.findall(cell.source))
            if headings >= 2:
                return False
            continue
        for mime, text in _outputs(cell):
            if mime in IMAGE_TYPES or (mime == "text/html" and any(m in text for m in CHART_MARKERS)):
                return True
            if mime == "text/html" and shown_widths(text):
                return False
    return False


def main() -> None:
    """Print per-notebook figures and totals."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args()
    wide_total = opened = 0
    for path in args.notebooks:
        nb = nbformat.read(path, as_version=4)
        widths = [w for c in nb.cells for m, t in _outputs(c) if m == "text/html" for w in shown_widths(t)]
        wide = [w for w in widths if w > MAX_COLUMNS]
        figure = first_screen_has_figure(nb)
        wide_total += len(wide)
        opened += figure
        print(
            f"{path}: {len(widths)} tables shown, {len(wide)} wider than {MAX_COLUMNS} {wide}, "
            f"figure first: {figure}"
        )
    print(
        f"total: {wide_total} tables wider than {MAX_COLUMNS} columns shown by default; "
        f"{opened} of {len(args.notebooks)} chapters open with a figure"
    )


if __name__ == "__main__":
    main()
