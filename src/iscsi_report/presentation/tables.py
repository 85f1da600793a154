"""A data frame as an HTML table a person can read (what :func:`report.html_table` returns).

- headers are human, with units (:mod:`iscsi_report.presentation.columns`), numbers formatted per
  column and right-aligned, a missing value shown as an em dash with a note under the table;
- identifying columns (verdict, configuration, network...) lead; the page shows at most
  :data:`WIDE_COLUMNS` columns: the ones the chapter picks (``shown``) or, by default, the
  identifying ones and the first others, leaving detail columns (files, engine...), repeats and the
  rest to the full table; a table of :data:`STICKY_COLUMNS` columns or more keeps its first column
  in view while the rest scrolls;
- every scrolling box is a keyboard stop (``tabindex="0"``) and a named region (``role="region"``,
  ``aria-label`` from the caption), so a keyboard or screen-reader user can reach and scroll it;
- a table longer than :data:`LONG_ROWS` rows shows its first :data:`PREVIEW_ROWS` rows;
- whenever the page shows less than the frame, the full table follows in a collapsed
  ``<details>`` block (and the chapter links the CSV).

Every header and cell is HTML-escaped (control characters shown visibly), the ids derive from
the table's name, and the output depends on nothing but the frame: two builds are byte-identical.
The class names here are styled by ``pipeline/tables.css``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from iscsi_report.core import markup
from iscsi_report.core.errors import ReportError
from iscsi_report.presentation import columns as cols

WIDE_COLUMNS = 8  # the most columns the page shows of a table; the rest wait in the collapsed full table
STICKY_COLUMNS = 5  # from this many columns a phone-wide column scrolls: the first column stays in view
LONG_ROWS = 25  # more rows than this: a preview, the full table collapsed
PREVIEW_ROWS = 10
DEFAULT_DASH_NOTE = "not applicable or not measured"

WRAP_CLASS = "iscsi-table-wrap"  # a scrolling box as wide as the text column
WIDE_CLASS = "iscsi-table-wide"  # first column sticky while the rest scrolls
TABLE_CLASS = "iscsi-table"
FULL_CLASS = "iscsi-table-full"  # the <details> holding the whole table
NOTE_CLASS = "iscsi-table-note"  # what a dash means, what the preview leaves out
NUM_CLASS = "num"
LONG_CLASS = "long"  # a text column with long cells (explanations): given room to wrap
LONG_TEXT_CHARS = 40
BREAK_AFTER = re.compile(r"([._/])(?=[^\s])")  # where a long identifier may wrap: after . _ /
LONG_WORD_CHARS = 16


@dataclass(frozen=True)
class Column:
    """One column as shown: its header, its formatted cells (None where missing), right-aligned or not."""

    name: object
    title: str
    cells: list[str | None]
    numeric: bool
    detail: bool
    key: bool

    @property
    def css_class(self) -> str:
        """The cell class: numbers right-aligned, long text given room."""
        if self.numeric:
            return f' class="{NUM_CLASS}"'
        longest = max((len(c) for c in self.cells if c is not None), default=0)
        return f' class="{LONG_CLASS}"' if longest > LONG_TEXT_CHARS else ""

    @property
    def constant(self) -> bool:
        """Every cell the same value (none missing)."""
        return len(set(self.cells)) == 1 and self.cells[0] is not None


@dataclass(frozen=True)
class View:
    """What one rendered table shows: which columns, how many rows, what every row shares."""

    columns: list[Column]
    rows: int
    constants: list[Column]


def table_id(name: str) -> str:
    """The HTML id of a table, derived from its name (``T_`` prefix, unsafe characters as ``_``)."""
    return "T_" + re.sub(r"[^A-Za-z0-9_-]", "_", name)


def _escape(value: object) -> str:
    """Text as HTML: one line, control characters visible, every markup character escaped."""
    return html.escape(markup.flat(value), quote=True)


def _cell(text: str) -> str:
    """A cell's text as HTML, escaped; a long identifier (``a.b_c.d``) may wrap after . _ or /."""
    words = _escape(text).split(" ")  # entities (&lt; &amp; &quot; &#x27;) hold none of . _ /
    return " ".join(BREAK_AFTER.sub(r"\1<wbr>", w) if len(w) > LONG_WORD_CHARS else w for w in words)


def formatted(df: pd.DataFrame, name: str, decimals: int) -> dict[object, Column]:
    """Every column of ``df`` formatted as the page shows it (the whole column decides its format)."""
    if df.columns.has_duplicates:
        raise ReportError(f"table {name!r}: duplicate column names {list(map(str, df.columns))}")
    out: dict[object, Column] = {}
    for col in df.columns:
        spec = cols.spec_for(col)
        dtype = df[col].dtype
        numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
        cells = cols.format_column(df[col].tolist(), spec, decimals)
        out[col] = Column(col, spec.title, cells, numeric, spec.detail, spec.rank is not None)
    return out


def main_view(
    df: pd.DataFrame,
    name: str,
    columns: dict[object, Column],
    shown: Sequence[object] | None,
    rows: int | None,
) -> View:
    """The columns and rows the page shows before the collapsed full table.

    ``shown`` picks the columns (at most :data:`WIDE_COLUMNS`); by default the identifying ones
    lead and, in a wide table, detail columns, repeats of an earlier column and (listed in a note
    instead) columns with one value in every row are left to the full table, then the first
    :data:`WIDE_COLUMNS` are kept.
    """
    constants: list[Column] = []
    if shown is not None:
        if len(shown) > WIDE_COLUMNS:
            raise ReportError(
                f"table {name!r}: {len(shown)} columns asked for; a page shows at most {WIDE_COLUMNS}"
            )
        missing = [c for c in shown if c not in columns]
        if missing:
            have = list(map(str, df.columns))
            raise ReportError(f"table {name!r}: no column {', '.join(map(repr, missing))}; it has {have}")
        picked = [columns[c] for c in shown]
    else:
        picked = [columns[c] for c in cols.shown_order(list(df.columns))]
        if len(picked) > WIDE_COLUMNS:
            picked = [c for c in picked if not c.detail] or picked
            seen: set[tuple[str, tuple[str | None, ...]]] = set()
            unique = []
            for c in picked:
                if (c.title, tuple(c.cells)) not in seen:
                    unique.append(c)
                seen.add((c.title, tuple(c.cells)))
            picked = unique
        if len(picked) > WIDE_COLUMNS and len(df) > 1:
            constants = [c for c in picked if c.constant and not c.key]
            picked = [c for c in picked if all(c is not k for k in constants)] or picked
        picked = picked[:WIDE_COLUMNS]
    if rows is None:
        rows = PREVIEW_ROWS if len(df) > LONG_ROWS else len(df)
    return View(picked, min(max(rows, 0), len(df)), constants)


def region_label(name: str, caption: str = "") -> str:
    """What a screen reader calls a table's scrolling box: its caption, else its name in words."""
    return markup.flat(caption).strip() or "Table " + re.sub(r"[_-]+", " ", name).strip()


def _table(view: View, table_name: str, label: str) -> tuple[str, bool]:
    """One ``<table>`` in its scrolling box (a named keyboard stop), and whether a cell showed a dash."""
    wide = len(view.columns) >= STICKY_COLUMNS
    classes = [c.css_class for c in view.columns]
    th = "".join(
        f'<th scope="col"{k}>{_escape(c.title)}</th>' for c, k in zip(view.columns, classes, strict=True)
    )
    dashed = False
    body = []
    for i in range(view.rows):
        tds = []
        for c, k in zip(view.columns, classes, strict=True):
            cell = c.cells[i]
            dashed |= cell is None
            tds.append(f"<td{k}>{cols.DASH if cell is None else _cell(cell)}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    wrap = f"{WRAP_CLASS} {WIDE_CLASS}" if wide else WRAP_CLASS
    out = (
        f'<div class="{wrap}" tabindex="0" role="region" aria-label="{_escape(label)}">'
        f'<table class="{TABLE_CLASS} dataframe" id="{table_id(table_name)}">'
        f"<thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )
    return out, dashed


def _count(n: int, noun: str) -> str:
    """``n noun`` with thousands separators and the plural when needed."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def spread(df: pd.DataFrame, index: list[str], columns: str, values: str) -> pd.DataFrame:
    """One row per ``index`` combination, one column per value of ``columns`` (first-seen orders kept)."""
    wide = df.pivot_table(index=index, columns=columns, values=values, sort=False, aggfunc="first")
    wide = wide.reindex(columns=list(dict.fromkeys(df[columns])))
    wide.columns = [str(c) for c in wide.columns]
    return wide.reset_index()


def shown_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without the columns the registry keeps for code (glue keys, join keys)."""
    return df[[c for c in df.columns if not cols.spec_for(c).internal]]


def render(
    df: pd.DataFrame,
    name: str,
    decimals: int | None = 3,
    *,
    shown: Sequence[object] | None = None,
    preview_rows: int | None = None,
    dash_note: str | None = None,
    summary: pd.DataFrame | None = None,
    caption: str = "",
) -> str:
    """The page's HTML for ``df``: the main view (or ``summary``), the full table collapsed when it
    shows more, notes; ``caption`` names the scrolling boxes for a screen reader."""
    places = 6 if decimals is None else decimals
    df = shown_frame(df)
    columns = formatted(df, name, places)
    view = main_view(df, name, columns, shown, 0 if summary is not None else preview_rows)
    first = list(shown or [])  # the caller's columns lead the full table too
    rest = [c for c in cols.shown_order(list(df.columns)) if c not in first]
    full = View([columns[c] for c in first + rest], len(df), [])
    label = region_label(name, caption)
    partial = view.rows < len(df) or len(view.columns) + len(view.constants) < len(full.columns)
    parts: list[str] = []
    dashed = False
    if summary is not None:
        brief_frame = shown_frame(summary)
        brief = formatted(brief_frame, name, places)
        brief_view = main_view(brief_frame, name, brief, None, len(brief_frame))  # at most WIDE_COLUMNS too
        main, dashed = _table(brief_view, name, label)
        parts.append(main)
        parts.append(
            f'<p class="{NOTE_CLASS}">{_escape("Shown above: a summary; the full table below.")}</p>'
        )
    elif view.rows > 0:
        main, dashed = _table(view, name, label)
        parts.append(main)
    if view.constants and view.rows > 0:
        same = "; ".join(f"{c.title}: {c.cells[0]}" for c in view.constants)
        parts.append(f'<p class="{NOTE_CLASS}">{_escape("In every row: " + same)}.</p>')
    if partial:
        left = []
        if view.rows < len(df):
            left.append(f"the first {_count(view.rows, 'row')} of {len(df):,}")
        if view.rows and len(view.columns) + len(view.constants) < len(full.columns):
            left.append(f"{len(view.columns) + len(view.constants)} of {_count(len(full.columns), 'column')}")
        if view.rows:
            parts.append(f'<p class="{NOTE_CLASS}">{_escape("Shown above: " + ", ".join(left))}.</p>')
        whole, dashed_full = _table(full, f"{name}-all", f"{label} (all rows and columns)")
        dashed |= dashed_full
        what = f"All {_count(len(df), 'row')} and {_count(len(full.columns), 'column')}"
        parts.append(f'<details class="{FULL_CLASS}"><summary>{_escape(what)}</summary>{whole}</details>')
    if dashed:
        note = dash_note or DEFAULT_DASH_NOTE
        parts.append(f'<p class="{NOTE_CLASS}">{cols.DASH}: {_escape(note)}</p>')
    return "".join(parts)
