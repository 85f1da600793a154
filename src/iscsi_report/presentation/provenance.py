"""The reconstructed-data banner: which of a page's inputs the source published and which were invented.

Every chapter reading a reconstructed dataset opens with :func:`banner`: one line (a MyST admonition
styled as a warning and collapsed as a dropdown, :data:`BANNER_TITLE`) whose details name, per tool the page
reads, what is published and what the generator invented (counted by
:func:`iscsi_report.analyses.provenance.tool_counts`), with download links to the dataset's README
and generation targets. The line keeps the chapter's answer in the first screen; the details are
one click away. On measured data it shows nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from iscsi_report.analyses import provenance as sources
from iscsi_report.analyses.provenance import TOOLS as TOOLS  # what a page passes to banner
from iscsi_report.core import markup
from iscsi_report.presentation.report import Context, display_markdown

BANNER_TITLE = "Inputs reconstructed from published summaries, not measured — details"
# A titled admonition (``{warning}`` takes no title) styled as a warning; sphinx-togglebutton shows an
# admonition of class ``dropdown`` collapsed to its title line.
BANNER_CLASS = ":class: warning dropdown"


@dataclass(frozen=True)
class ToolWords:
    """What one tool's reconstructed files take from the source, and what they make up, in words."""

    published: str  # what the reproduced numbers are ({n}: how many)
    invented: str  # what the generator made up ({invented_cpu}, {files} may appear)


WORDS: dict[str, ToolWords] = {
    "ping": ToolWords(
        "{n} summary statistics (mean, median, p99, maximum, standard deviation, CV) of the "
        "{files} ping files",
        "every individual reply: the shape of each RTT distribution (its modes, the tail between the "
        "published percentiles, the order of replies); any bimodality is the generator's choice",
    ),
    "iperf3": ToolWords(
        "{n} link rates (one per network)",
        "the per-second intervals, retransmissions and CPU figures of the {files} iperf3 files",
    ),
    "fio": ToolWords(
        "{n} throughput, IOPS and CPU figures of the {files} fio runs",
        "every per-I/O latency, latency percentile and timestamp",
    ),
    "iostat": ToolWords(
        "one device line of one run ({n_excerpt} values) and the CPU share of {n_cpu} runs",
        "the target CPU share of the other {invented_cpu} of the {files} iostat files (the block-device "
        "runs, generated in proportion to their throughput), every other device line "
        "(request sizes, await, utilisation) and the since-boot reports",
    ),
}


def tool_lines(raw_dir: Path, tools: Sequence[str]) -> list[tuple[str, str, str]]:
    """(tool, published, invented) for each tool the page reads, counted from the dataset's files."""
    out = []
    for counts in sources.tool_counts(raw_dir, tools):
        words, fields = WORDS[counts.tool], asdict(counts)
        out.append((counts.tool, words.published.format(**fields), words.invented.format(**fields)))
    return out


def banner_markdown(
    raw_dir: Path, link_to: Callable[[Path], str], tools: Sequence[str] = TOOLS, note: str = ""
) -> str:
    """The banner's MyST (a collapsed warning admonition); "" unless the manifest says reconstructed."""
    if not sources.reconstructed(raw_dir):
        return ""
    shown = "/".join(raw_dir.parts[-3:])  # data/raw/<dataset>: the project path, as every download names it
    readme = markup.link(f"{shown}/{sources.README}", link_to(raw_dir / sources.README))
    targets = markup.link(f"{shown}/{sources.TARGETS}", link_to(raw_dir / sources.TARGETS))
    lines = [
        f":::{{admonition}} {BANNER_TITLE}",
        BANNER_CLASS,
        "",
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
