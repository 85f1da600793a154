"""The one way text reaches a page: MyST markdown that shows any string literally.

Every string that comes from data (raw file content, manifests, params, file names) goes through
:func:`text`, :func:`code` or :func:`link` before it is put into markdown, so that no character of
it can open HTML, a role, a directive, math or a table cell. Markup the project writes itself
(``**``, ``#``, ``|`` of its own tables) is added around the escaped pieces, never inside them.
HTML tables are rendered by the analyses with pandas' own HTML escaping.
"""

from __future__ import annotations

import hashlib
import string
import unicodedata
from pathlib import PurePosixPath

from iscsi_report.core.errors import ReportError

# CommonMark lets a backslash escape every ASCII punctuation character, and only those.
_PUNCTUATION = frozenset(string.punctuation)
# Characters a link target cannot carry through markdown-it and MyST unchanged.
_UNLINKABLE = frozenset("%")


def _visible(ch: str) -> str:
    """A control character as visible text (tab and line breaks become a space)."""
    if ch in "\t\r\n\f\v":
        return " "
    if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
        return f"\\u{ord(ch):04x}"
    return ch


def flat(value: object) -> str:
    """``str(value)`` on one line: line breaks and tabs as spaces, other control characters as ``\\uXXXX``."""
    text = str(value)
    if text.isascii() and text.isprintable():  # space to tilde: each character shown as it is (fast path)
        return text
    return "".join(_visible(ch) for ch in text)


def text(value: object) -> str:
    """Markdown that renders as exactly ``str(value)`` (on one line), safe in prose and table cells."""
    return "".join(f"\\{ch}" if ch in _PUNCTUATION else ch for ch in flat(value))


def code(value: object, *, in_table: bool = False) -> str:
    """An inline code span showing ``str(value)`` literally, whatever backticks it holds.

    ``in_table``: the span sits in a pipe-table cell, where a bare ``|`` would end the cell.
    """
    body = flat(value)
    if in_table:
        body = body.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _backtick_runs(body)), default=0) + 1)
    edge = body[:1] + body[-1:]
    pad = " " if "`" in edge or (body.startswith(" ") and body.endswith(" ") and body.strip()) else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def _backtick_runs(body: str) -> list[str]:
    """Every maximal run of backticks in ``body``."""
    runs, current = [], ""
    for ch in body:
        if ch == "`":
            current += ch
        elif current:
            runs.append(current)
            current = ""
    return [*runs, current] if current else runs


def link(label: object, target: str) -> str:
    """A MyST download link showing ``label`` literally; ``target`` is a POSIX path from the page.

    Sphinx copies the target into the site. The target's punctuation is backslash-escaped, so a
    ``<``, ``>``, backtick or ``|`` in a file name ends neither the link nor a table cell. A target
    MyST cannot carry unchanged (a ``%`` or a control character in a file name) is refused with
    the name, rather than linked wrongly.
    """
    bad = sorted({ch for ch in set(target) if ch in _UNLINKABLE or flat(ch) != ch})  # each character once
    if bad:
        shown = ", ".join(repr(ch) for ch in bad)
        raise ReportError(
            f"{PurePosixPath(target).name!r}: a file name with {shown} cannot be linked from the book; "
            "rename it"
        )
    dest = "".join(f"\\{ch}" if ch in _PUNCTUATION and ch not in "/._-" else ch for ch in target)
    return f"[{text(label)}](<path:{dest}>)"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A pipe table of cells that are already markdown (from :func:`text`, :func:`code`, :func:`link`)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def raw_dataset_label(dataset: str) -> str:
    """The Sphinx label of a dataset's provenance page (safe for any folder name).

    A hash rather than the name: a label must be unique after Sphinx lowercases it, and a folder
    name may hold characters a label cannot.
    """
    return "raw-data-" + hashlib.sha256(dataset.encode()).hexdigest()[:12]
