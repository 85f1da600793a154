"""What a reader sees of an executed chapter, searched for ids written for code.

A rendered table's headers and cells and a live chart's axis, legend and tooltip titles must be
words: an id (``q1_op_ms``, ``latency_device_free``, ``p99_9``) there is a defect. Names of real
settings inside a sentence (``cmds_max``) and dotted references to published numbers
(``fio.local.op_ms``) are not ids in this sense.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from typing import Any

import nbformat

from iscsi_report.presentation import columns

TABLE = re.compile(r"<table\b.*?</table>", re.S)
CELL = re.compile(r"<t[hd]\b[^>]*>(.*?)</t[hd]>", re.S)
SPEC = re.compile(r'<script type="application/json" class="iscsi-chart-spec">(.*?)</script>', re.S)
GLUE_KEY = re.compile(r"\bq\d_[a-z0-9_]+")  # the projections chapter's answer keys
REGISTERED = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, columns.VALUE_WORDS)) + r")(?![\w])")


def _html_outputs(nb: nbformat.NotebookNode) -> Iterator[str]:
    """Every text/html output of a notebook."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text = out.get("data", {}).get("text/html")
            if text:
                yield "".join(text) if isinstance(text, list) else str(text)


def table_texts(page_html: str) -> Iterator[str]:
    """Each header's and cell's text of every table in ``page_html``, unescaped."""
    for table in TABLE.findall(page_html):
        for cell in CELL.findall(table):
            yield html.unescape(re.sub(r"<[^>]+>", "", cell))


def _channel_titles(node: Any) -> Iterator[str]:
    """The title each encoded field is shown under (its field name when it has none)."""
    if isinstance(node, list):
        for item in node:
            yield from _channel_titles(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in ("encoding", "facet") and isinstance(value, dict):
                defs = [value] if "field" in value else list(value.values())
                for d in defs:
                    for one in d if isinstance(d, list) else [d]:
                        if isinstance(one, dict) and "field" in one and one.get("title", "") is not None:
                            yield str(one.get("title") or one["field"])
            yield from _channel_titles(value)


def chart_titles(page_html: str) -> Iterator[str]:
    """Every axis, legend, facet and tooltip title of the live charts in ``page_html``."""
    for payload in SPEC.findall(page_html):
        yield from _channel_titles(json.loads(payload))


def ids_in_text(text: str) -> set[str]:
    """The ids a reader would see in one header, cell or title."""
    found = set(GLUE_KEY.findall(text)) | set(REGISTERED.findall(text))
    if columns.MACHINE_ID.fullmatch(text.strip()):
        found.add(text.strip())
    return found


def reader_ids(nb: nbformat.NotebookNode) -> set[str]:
    """Ids shown to a reader in an executed notebook's tables and charts."""
    found: set[str] = set()
    for page_html in _html_outputs(nb):
        for text in [*table_texts(page_html), *chart_titles(page_html)]:
            found |= ids_in_text(text)
    return found
