"""What a reconstructed dataset reproduces: per tool, how many published numbers and how many files.

A dataset whose manifest says ``reconstructed: true`` was generated from published summaries
(``generation_targets.yaml`` lists the ids of data/published/<source>.yaml it reproduces).
:func:`tool_counts` counts, per tool a page reads, the published numbers its files reproduce and
the files the generator wrote; :mod:`iscsi_report.presentation.provenance` says it in the banner
that opens every chapter over such a dataset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from iscsi_report.core import yamlio
from iscsi_report.core.errors import ReportError
from iscsi_report.core.measurements import open_dataset

TARGETS = "generation_targets.yaml"
README = "README.md"
TOOLS = ("ping", "iperf3", "fio", "iostat")
# Ids of the published numbers each tool's reconstructed files reproduce, by prefix.
PUBLISHED_PREFIXES: dict[str, tuple[str, ...]] = {
    "ping": ("latency.",),
    "iperf3": ("network.iperf3.",),
    "fio": ("fio.", "projection.", "model.r2t"),
    "iostat": ("iostat.excerpt.", "fio.wireless.libiscsi_hdd."),
}


@dataclass(frozen=True)
class ToolCounts:
    """One tool's reconstructed files: what they reproduce of the source and what was generated."""

    tool: str
    n: int  # published numbers the files reproduce
    files: int  # files of this tool in the manifest
    n_excerpt: int  # values of the one iostat line the source printed
    n_cpu: int  # runs whose CPU share the source printed
    invented_cpu: int  # iostat files whose CPU share the generator made up


def _yaml(path: Path) -> dict[str, object]:
    """A YAML mapping; ReportError naming the file otherwise."""
    data = yamlio.load_file(path).data  # strict: a duplicate key is an error naming its line
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a YAML mapping at the top level")
    return data


def reconstructed(raw_dir: Path) -> bool:
    """Whether the dataset's manifest says it was generated (``reconstructed: true``), not measured."""
    return open_dataset(raw_dir).reconstructed  # the page's one read of the manifest


def published_ids(raw_dir: Path) -> list[str]:
    """Ids of the published numbers a reconstructed dataset was generated to reproduce."""
    ids = _yaml(raw_dir / TARGETS).get("published_ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ReportError(f"{raw_dir / TARGETS}: published_ids: expected a list of strings")
    return ids


def tool_counts(raw_dir: Path, tools: Sequence[str]) -> list[ToolCounts]:
    """Per tool the page reads, in order: counts from the manifest and the generation targets."""
    files = open_dataset(raw_dir).files
    ids = published_ids(raw_dir)
    n_cpu = sum(1 for i in ids if i.endswith(".cpu_pct"))
    n_excerpt = sum(1 for i in ids if i.startswith("iostat.excerpt."))
    out = []
    for tool in tools:
        if tool not in PUBLISHED_PREFIXES:
            raise ReportError(f"unknown tool {tool!r} for the provenance banner; expected one of {TOOLS}")
        n_files = sum(1 for f in files if f.tool == tool)
        n = sum(1 for i in ids if i.startswith(PUBLISHED_PREFIXES[tool]))
        out.append(ToolCounts(tool, n, n_files, n_excerpt, n_cpu, n_files - n_cpu))
    return out
