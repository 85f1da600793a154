"""Numbers quoted from the source documents: ``data/published/<source>.yaml``, read strictly and typed.

One file per source: its ``numbers`` (each an ``id``, the ``value`` as printed, its ``decimals``,
``unit`` and ``section``, optionally how it was printed, a note and an explanation), and optionally
a ``citation``, ``tables`` whose cells name numbers by id, and ``bounds`` (the words of the
cross-study chapter's rows). The file is read through :mod:`iscsi_report.core.yamlio` (a
duplicate key is an error, the read is recorded by the batch) and checked by pydantic models: a
missing key, an unknown key or a wrong type is an :class:`~iscsi_report.core.errors.IngestError`
naming the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)

from iscsi_report.core import yamlio
from iscsi_report.core.dataset import schema_error
from iscsi_report.core.errors import IngestError

NEAREST, TRUNCATED, APPROXIMATE = "nearest", "truncated", "approximate"
PRINTED_AS = (NEAREST, TRUNCATED, APPROXIMATE)

Text = Annotated[StrictStr, Field(min_length=1)]
Number = Annotated[StrictFloat, Field(allow_inf_nan=False)]  # an integer is a number too; a bool is not
Cell = StrictStr | StrictInt | StrictFloat | StrictBool | None


class _Strict(BaseModel):
    """Unknown keys refused (a typo is not a default), no coercion, immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class NumberEntry(_Strict):
    """One entry of ``numbers``: a value as the source prints it, and where it stands."""

    id: Text
    value: Number
    decimals: Annotated[StrictInt, Field(ge=0)] = 0
    unit: StrictStr = ""
    section: Text
    source: StrictStr | None = None
    printed_as: Literal["nearest", "truncated", "approximate"] = "nearest"
    note: StrictStr = ""
    explanation: StrictStr = ""


class CitationEntry(_Strict):
    """How the book cites the source: a short key (author surname and year) and the references label."""

    key: Text
    ref: Text
    title: Text
    author: StrictStr | None = None
    year: StrictInt | None = None
    date: StrictStr | None = None
    kind: StrictStr | None = None
    link: StrictStr | None = None
    related: StrictStr | None = None


class TableEntry(_Strict):
    """A structured table of the source: rows of cells, a cell naming a number by its id."""

    section: StrictStr | None = None
    rows: list[dict[StrictStr, Cell]]


class BoundText(_Strict):
    """The words on one row of the cross-study bounds table: how it was obtained, and why its verdict."""

    note: StrictStr = ""
    explanation: StrictStr = ""


class PublishedFile(_Strict):
    """A whole ``data/published/*.yaml`` file."""

    source: Text | None = None
    transcribed_from: StrictStr | None = None
    title: StrictStr | None = None
    citation: CitationEntry | None = None
    sections: dict[StrictStr, StrictStr] | None = None
    numbers: list[NumberEntry]
    tables: dict[StrictStr, TableEntry] = Field(default_factory=dict)
    bounds: dict[StrictStr, BoundText] = Field(default_factory=dict)


@dataclass(frozen=True)
class PublishedNumber:
    """One number as a source prints it, with where it comes from (``source``: the file's if not its own)."""

    id: str
    value: float
    decimals: int
    unit: str
    section: str
    source: str
    printed_as: str = NEAREST
    note: str = ""
    explanation: str = ""


@dataclass(frozen=True)
class Published:
    """A loaded published file: its numbers by id, and the rest of it as validated."""

    path: Path
    source: str
    numbers: dict[str, PublishedNumber]
    citation: CitationEntry | None = None
    tables: dict[str, TableEntry] = field(default_factory=dict)
    bounds: dict[str, BoundText] = field(default_factory=dict)


def _number(entry: NumberEntry, source: str) -> PublishedNumber:
    """The frozen record of one validated entry (value as a float, the file's source by default)."""
    return PublishedNumber(
        id=entry.id,
        value=float(entry.value),
        decimals=entry.decimals,
        unit=entry.unit,
        section=entry.section,
        source=entry.source if entry.source is not None else source,
        printed_as=entry.printed_as,
        note=entry.note,
        explanation=entry.explanation,
    )


def _by_id(doc: yamlio.YamlDoc, spec: PublishedFile, source: str) -> dict[str, PublishedNumber]:
    """The numbers keyed by id; IngestError at the line of an id given twice."""
    out: dict[str, PublishedNumber] = {}
    for i, entry in enumerate(spec.numbers):
        if entry.id in out:
            loc = ("numbers", i, "id")
            raise IngestError(
                doc.path, f"duplicate id {entry.id!r}", line=doc.line_of(loc), json_path=yamlio.json_path(loc)
            )
        out[entry.id] = _number(entry, source)
    return out


def load(path: str | Path) -> Published:
    """Read and check one ``data/published`` file (IngestError naming file and line when refused)."""
    p = Path(path)
    doc = yamlio.load_file(p)
    if not isinstance(doc.data, dict):
        raise IngestError(p, "expected a mapping with a 'numbers' list")
    try:
        spec = PublishedFile.model_validate(doc.data)
    except ValidationError as exc:
        raise schema_error(doc, exc) from None
    source = spec.source if spec.source is not None else p.name
    return Published(p, source, _by_id(doc, spec, source), spec.citation, spec.tables, spec.bounds)
