"""Every published number of a run, and the differences between two sets of them (issue 27).

A run publishes two kinds of numbers: the cells of its tables (``results/<run>/*.csv``) and the
values its chapters glue into the prose (the ``scrapbook`` outputs of ``book/runs/<run>/*.ipynb``,
written by ``report.glue``). ``release verify`` compares the archived ones with a re-execution;
``release build`` compares them with the previous release to write the changelog of numbers.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ABSENT = "(absent)"
REL_TOL = 1e-9  # two floats this close print the same in the book: not a difference
ABS_TOL = 1e-12
GLUE_MIMES = ("text/markdown", "text/plain")  # what the page shows of a glued value, preferred first


@dataclass(frozen=True)
class Difference:
    """One published number (or whole table) that differs: where, which cell or glue name, old, new."""

    file: str
    item: str
    old: str
    new: str

    def change(self) -> str:
        """By how much a number changed (``+0.012 (+1.3 %)``), or '' when either side is not a number."""
        old, new = _number(self.old), _number(self.new)
        if old is None or new is None:
            return ""
        pct = f" ({100.0 * (new - old) / old:+.3g} %)" if old else ""
        return f"{new - old:+.6g}{pct}"

    def __str__(self) -> str:
        change = self.change()
        return f"{self.file}: {self.item}: {self.old} -> {self.new}" + (f" [{change}]" if change else "")


# (file, item) -> the value as published (text)
Numbers = dict[tuple[str, str], str]


def _number(text: str) -> float | None:
    """``text`` as a float, or None when it is not a number."""
    try:
        return float(text)
    except ValueError:
        return None


def same_value(old: str, new: str) -> bool:
    """Equal text, or two numbers equal up to float noise (NaN equals NaN)."""
    if old == new:
        return True
    a, b = _number(old), _number(new)
    if a is None or b is None:
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def table_numbers(rel: str, data: bytes) -> Numbers:
    """Each cell of a CSV table keyed by (file, "row N, COLUMN"); rows counted from 1 after the header."""
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    if not rows:
        return {}
    header, out = rows[0], {}
    for i, row in enumerate(rows[1:], start=1):
        for column, value in zip(header, row, strict=False):
            out[(rel, f"row {i}, {column}")] = value
    return out


def glued_numbers(rel: str, data: bytes) -> Numbers:
    """Each value an executed notebook glued, keyed by (file, "glue NAME"), as its text/plain repr."""
    notebook = json.loads(data.decode("utf-8"))
    out = {}
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            scrapbook = output.get("metadata", {}).get("scrapbook", {})
            if scrapbook.get("name"):
                out[(rel, f"glue {scrapbook['name']}")] = _glued_text(
                    output, scrapbook.get("mime_prefix", "")
                )
    return out


def _glued_text(output: Mapping[str, Any], prefix: str) -> str:
    """A glued value as the page shows it: its markdown when it is markdown, else its text repr."""
    data = output.get("data", {})
    for mime in GLUE_MIMES:
        if f"{prefix}{mime}" in data:
            text = data[f"{prefix}{mime}"]
            return "".join(text) if isinstance(text, list) else str(text)
    return ""


def is_published(rel: str) -> bool:
    """Whether a project-relative path holds published numbers: a run's table or executed chapter."""
    return (rel.startswith("results/") and rel.endswith(".csv")) or (
        rel.startswith("book/runs/") and rel.endswith(".ipynb")
    )


def published_numbers(files: Mapping[str, bytes]) -> dict[str, Numbers]:
    """Per published file (project-relative path), its numbers; other files are ignored."""
    out: dict[str, Numbers] = {}
    for rel in sorted(files):
        if is_published(rel):
            read = table_numbers if rel.endswith(".csv") else glued_numbers
            out[rel] = read(rel, files[rel])
    return out


def differences(old: Mapping[str, Numbers], new: Mapping[str, Numbers]) -> list[Difference]:
    """Every number that differs, file by file; a file only on one side is one difference."""
    found: list[Difference] = []
    for rel in sorted(set(old) | set(new)):
        if rel not in new:
            found.append(Difference(rel, "whole file", "present", ABSENT))
        elif rel not in old:
            found.append(Difference(rel, "whole file", ABSENT, "present"))
        else:
            found += _cell_differences(old[rel], new[rel])
    return found


def _cell_differences(old: Numbers, new: Numbers) -> list[Difference]:
    """The differing values of one file, in the file's order (old's keys first, then new's)."""
    keys = list(old) + [k for k in new if k not in old]
    return [
        Difference(file, item, old.get((file, item), ABSENT), new.get((file, item), ABSENT))
        for file, item in keys
        if not same_value(old.get((file, item), ABSENT), new.get((file, item), ABSENT))
    ]


def _cell(text: str) -> str:
    """Text safe in a markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def changelog(previous: str | None, found: list[Difference], version: str) -> str:
    """``CHANGES-numbers.md``: every published number changed since the previous release, by how much."""
    title = f"# Published numbers: what changed in {version}\n\n"
    if previous is None:
        return title + "The first release: no previous release archive in `dist/` to compare with.\n"
    if not found:
        return title + f"No published number changed since `{previous}`.\n"
    lines = [
        title + f"{len(found)} published numbers changed since `{previous}`.\n",
        "| file | where | old | new | change |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {_cell(d.file)} | {_cell(d.item)} | {_cell(d.old)} | {_cell(d.new)} | {d.change()} |"
        for d in found
    ]
    return "\n".join(lines) + "\n"
