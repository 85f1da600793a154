"""The cross-study chapter's sources: one :class:`Study` per ``data/published`` file, tables resolved.

Each study is read by :func:`iscsi_report.core.published.load` (strict YAML, typed entries); a
table cell that names a number by its id is replaced by the number.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from iscsi_report.analyses import blog as blog_model
from iscsi_report.analyses.audit import printed_interval
from iscsi_report.core import published
from iscsi_report.core.errors import ReportError
from iscsi_report.core.published import BoundText, CitationEntry, Published, PublishedNumber
from iscsi_report.core.units import (
    BYTES_PER_KIB,
    BYTES_PER_MIB,
)

STUDY_FILES = {
    "scst": "scst-usermode-2017.yaml",
    "l3": "l3-100gbe.yaml",
    "comstar": "comstar-2009.yaml",
}
BLOG_FILE = blog_model.BLOG_FILE  # Guerri 2023, compared with the three seeds in the bounds table
_REFERENCE = re.compile(r"^[a-z0-9_]+(\.[A-Za-z0-9_]+)+$")


@dataclass(frozen=True)
class Study:
    """One seed's published numbers, plus its tables with cell ids resolved to values."""

    path: Path
    source: str
    numbers: dict[str, PublishedNumber]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    citation: CitationEntry | None = None
    cases: dict[str, BoundText] = field(default_factory=dict)

    def cite(self) -> str:
        """The short citation key of this study (the file name when the YAML gives no citation)."""
        return self.citation.key if self.citation else self.source

    def case_text(self, key: str) -> BoundText:
        """The note and explanation of bounds row ``key``; a clear error naming the file if absent."""
        if key not in self.cases:
            raise ReportError(f"{self.path}: at bounds: no entry {key!r} (have {sorted(self.cases)})")
        return self.cases[key]

    def printed_rel_tol(self, key: str) -> float:
        """Half the width of the interval the printed number ``key`` stands for, relative to it."""
        self.value(key)  # a clear error if absent
        lo, hi = printed_interval(self.numbers[key])
        return (hi - lo) / 2 / abs(self.numbers[key].value)

    def value(self, key: str) -> float:
        """The published value of ``key``; a clear error naming the file if it is absent."""
        if key not in self.numbers:
            raise ReportError(f"{self.path}: no published number with id {key!r}")
        return self.numbers[key].value

    def table(self, name: str) -> pd.DataFrame:
        """A copy of table ``name`` (cells referencing ids already replaced by their values)."""
        if name not in self.tables:
            raise ReportError(f"{self.path}: no table {name!r} (have {sorted(self.tables)})")
        return self.tables[name].copy()


@dataclass(frozen=True)
class CrossStudy:
    """The three seeds this chapter recomputes, and the blog it compares them with."""

    scst: Study
    l3: Study
    comstar: Study
    blog: Study  # Guerri 2023, transcribed by the blog chapter; used for the four-bound table

    def studies(self) -> dict[str, Study]:
        """The studies keyed as in :data:`STUDY_FILES`, plus ``blog``."""
        return {"scst": self.scst, "l3": self.l3, "comstar": self.comstar, "blog": self.blog}

    def numbers(self) -> dict[str, PublishedNumber]:
        """Every published number of the three files; ids are unique across them."""
        out: dict[str, PublishedNumber] = {}
        for study in self.studies().values():
            clash = set(out) & set(study.numbers)
            if clash:
                raise ReportError(f"{study.path}: ids also used by another study: {sorted(clash)}")
            out.update(study.numbers)
        return out


def _resolve_cell(cell: Any, numbers: Mapping[str, PublishedNumber], where: str) -> Any:
    """Replace an id-shaped string by the number it names; other cells pass through."""
    if isinstance(cell, str) and _REFERENCE.match(cell):
        if cell not in numbers:
            raise ReportError(f"{where}: unknown id {cell!r}")
        return numbers[cell].value
    return cell


def _resolve_tables(pub: Published) -> dict[str, pd.DataFrame]:
    """Each table of the file as a DataFrame, cells naming an id replaced by its value."""
    out: dict[str, pd.DataFrame] = {}
    for name, table in pub.tables.items():
        where = f"{pub.path}: at tables.{name}.rows"
        resolved = [
            {k: _resolve_cell(v, pub.numbers, f"{where}[{i}].{k}") for k, v in row.items()}
            for i, row in enumerate(table.rows)
        ]
        out[name] = pd.DataFrame(resolved)
    return out


def load_study(path: str | Path) -> Study:
    """Read one ``data/published`` YAML (strict and typed: :func:`iscsi_report.core.published.load`)."""
    pub = published.load(path)
    return Study(
        path=pub.path,
        source=pub.source,
        numbers=pub.numbers,
        tables=_resolve_tables(pub),
        citation=pub.citation,
        cases=dict(pub.bounds),
    )


def citations(cs: CrossStudy) -> pd.DataFrame:
    """One row per source of the chapter: short key, author, year, title, link, references label."""
    rows = []
    for study in cs.studies().values():
        c = study.citation
        if c is None:
            raise ReportError(f"{study.path}: no citation (key, ref, title) to cite this source by")
        rows.append(
            {"key": c.key, "author": c.author, "year": c.year, "title": c.title, "link": c.link, "ref": c.ref}
        )
    return pd.DataFrame(rows)


def load_cross_study(published_dir: str | Path) -> CrossStudy:
    """Load the three seed files of this chapter, and the blog's, from ``published_dir``."""
    d = Path(published_dir)
    studies = {key: load_study(d / name) for key, name in STUDY_FILES.items()}
    return CrossStudy(**studies, blog=load_study(d / BLOG_FILE))


def size_label(size_bytes: float) -> str:
    """Bytes below 4 KiB, KiB below 1 MiB, MiB from there: the way the seeds name their I/O sizes."""
    if size_bytes >= BYTES_PER_MIB:
        return f"{size_bytes / BYTES_PER_MIB:g} MiB"
    return f"{size_bytes / BYTES_PER_KIB:g} KiB" if size_bytes >= 4 * BYTES_PER_KIB else f"{size_bytes:g} B"
