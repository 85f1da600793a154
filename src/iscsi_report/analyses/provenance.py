"""The reconstructed-data banner: which of a page's inputs the source published and which were invented.

A dataset whose manifest says ``reconstructed: true`` was generated from published summaries
(``generation_targets.yaml`` lists the ids of data/published/<source>.yaml it reproduces). Every
chapter reading such a dataset opens with :func:`banner`, a MyST warning admonition naming, per
tool the page reads, what is published and what the generator invented, with download links to
the dataset's README and generation targets. On measured data it shows nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from iscsi_report.core import markup
from iscsi_report.core.errors import ReportError
from iscsi_report.presentation.report import Context, display_markdown

MANIFEST = "manifest.yaml"
TARGETS = "generation_targets.yaml"
README = "README.md"
TOOLS = ("ping", "iperf3", "fio", "iostat")


@dataclass(frozen=True)
class ToolProvenance:
    """What one tool's reconstructed files take from the source, and what they make up."""

    published_prefixes: tuple[str, ...]  # ids of the published numbers the files reproduce
    published: str  # what those numbers are ({n}: how many)
    invented: str  # what the generator made up ({invented_cpu}, {files} may appear)


PROVENANCE: dict[str, ToolProvenance] = {
    "ping": ToolProvenance(
        ("latency.",),
        "{n} summary statistics (mean, median, p99, maximum, standard deviation, CV) of the "
        "{files} ping files",
        "every individual reply: the shape of each RTT distribution (its modes, the tail between the "
        "published percentiles, the order of replies); any bimodality is the generator's choice",
    ),
    "iperf3": ToolProvenance(
        ("network.iperf3.",),
        "{n} link rates (one per network)",
        "the per-second intervals, retransmissions and CPU figures of the {files} iperf3 files",
    ),
    "fio": ToolProvenance(
        ("fio.", "projection.", "model.r2t"),
        "{n} throughput, IOPS and CPU figures of the {files} fio runs",
        "every per-I/O latency, latency percentile and timestamp",
    ),
    "iostat": ToolProvenance(
        ("iostat.excerpt.", "fio.wireless.libiscsi_hdd."),
        "one device line of one run ({n_excerpt} values) and the CPU share of {n_cpu} runs",
        "the target CPU share of the other {invented_cpu} of the {files} iostat files (the block-device "
        "runs, generated in proportion to their throughput), every other device line "
        "(request sizes, await, utilisation) and the since-boot reports",
    ),
}


def _yaml(path: Path) -> dict[str, object]:
    """A YAML mapping; ReportError naming the file otherwise."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ReportError(f"{path}: cannot read ({exc})") from exc
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a YAML mapping at the top level")
    return data


def published_ids(raw_dir: Path) -> list[str]:
    """Ids of the published numbers a reconstructed dataset was generated to reproduce."""
    ids = _yaml(raw_dir / TARGETS).get("published_ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ReportError(f"{raw_dir / TARGETS}: published_ids: expected a list of strings")
    return ids


def tool_lines(raw_dir: Path, tools: Sequence[str]) -> list[tuple[str, str, str]]:
    """(tool, published, invented) for each tool the page reads, counted from the dataset's files."""
    manifest = _yaml(raw_dir / MANIFEST)
    listed = manifest.get("files")
    files: list[object] = listed if isinstance(listed, list) else []
    ids = published_ids(raw_dir)
    cpu_ids = [i for i in ids if i.endswith(".cpu_pct")]
    out = []
    for tool in tools:
        if tool not in PROVENANCE:
            raise ReportError(f"unknown tool {tool!r} for the provenance banner; expected one of {TOOLS}")
        p = PROVENANCE[tool]
        n_files = sum(1 for f in files if isinstance(f, dict) and f.get("tool") == tool)
        n = sum(1 for i in ids if i.startswith(p.published_prefixes))
        fields = {
            "n": n,
            "files": n_files,
            "n_excerpt": sum(1 for i in ids if i.startswith("iostat.excerpt.")),
            "n_cpu": len(cpu_ids),
            "invented_cpu": n_files - len(cpu_ids),
        }
        out.append((tool, p.published.format(**fields), p.invented.format(**fields)))
    return out


def banner_markdown(
    raw_dir: Path, link_to: Callable[[Path], str], tools: Sequence[str] = TOOLS, note: str = ""
) -> str:
    """The banner's MyST (a warning admonition), or "" when the manifest does not say reconstructed."""
    if _yaml(raw_dir / MANIFEST).get("reconstructed") is not True:
        return ""
    shown = "/".join(raw_dir.parts[-3:])  # data/raw/<dataset>: the project path, as every download names it
    readme = markup.link(f"{shown}/{README}", link_to(raw_dir / README))
    targets = markup.link(f"{shown}/{TARGETS}", link_to(raw_dir / TARGETS))
    lines = [
        ":::{warning} Reconstructed data, not measurements",
        f"This page reads the dataset {markup.code(raw_dir.name)}, which was **generated** from the "
        "summaries its source published, not measured. Only what the source printed is evidence; "
        f"everything else was invented to be plausible. Method and judgement calls: {readme}; the "
        f"published figures the files reproduce: {targets}.",
        "",
    ]
    for tool, published, invented in tool_lines(raw_dir, tools):
        lines.append(f"- **{tool}**: published: {published}. Invented: {invented}.")
    if note:
        lines += ["", note]
    lines.append(":::")
    return "\n".join(lines)


def banner(ctx: Context, tools: Sequence[str] = TOOLS, note: str = "") -> str:
    """Show the reconstructed-data banner of the page's dataset (nothing on measured data)."""
    text = banner_markdown(ctx.raw_dir, ctx.link_to, tools, note)
    if text:
        display_markdown(text)
    return text
