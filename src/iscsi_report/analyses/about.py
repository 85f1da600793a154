"""What a page's dataset is, and what its odd-looking numbers mean, in sentences computed from its files.

The same chapters (network, storage, model) run over every dataset: the reconstructed blog study,
the veth link of this machine, a reader's own measurements. :func:`dataset_box` opens each such
chapter over measured data with the manifest's own title and description, says when the dataset
holds no iSCSI traffic at all, and adds the dataset's reader notes for that chapter
(``data/raw/<dataset>/notes.yaml``, text only). :func:`network_findings` explains the network
numbers that mislead when read bare: a rate set by a traffic shaper, round trips that depend on
how often the path is used, and round trips too short for ping's printed resolution. Each finding
is a sentence whose numbers come from the raw files, shown only where the data shows it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from iscsi_report.analyses import network
from iscsi_report.core import markup, prose, yamlio
from iscsi_report.core.errors import ReportError
from iscsi_report.core.ingest import iperf3
from iscsi_report.core.measurements import NOTES, Measurements, open_dataset
from iscsi_report.presentation.report import Context, display_markdown, glue

CHAPTERS = ("network", "storage", "model")
# Bytes a shaper counts per TCP segment beyond its payload: IPv4 header, TCP header with the
# timestamp option Linux sends by default, and the Ethernet header the qdisc sees (no FCS, no preamble).
IPV4_HEADER_BYTES = 20
TCP_HEADER_WITH_TIMESTAMPS_BYTES = 32
ETHERNET_HEADER_BYTES = 14
# A print step at least this share of the median round trip makes the histogram a staircase.
COARSE_PRINT_SHARE = 0.25
# Mean round trips of one network differing by at least this factor across ping intervals.
INTERVAL_EFFECT_FACTOR = 2.0


def notes(ds: Measurements) -> dict[str, str]:
    """The dataset's reader notes per chapter (empty without ``notes.yaml``); clear error on a bad file.

    Read through the measurements layer, so the batch records the read and an edited note
    re-executes the chapters that show it; a duplicated key is refused with its line.
    """
    path = ds.root / NOTES
    doc = ds.notes_doc()
    if not doc:
        return {}
    chapters = doc.get("chapters")
    if not isinstance(chapters, dict):
        raise ReportError(f"{path}: expected a mapping with a 'chapters' mapping of chapter name to text")
    out = {}
    for name, text in chapters.items():
        if name not in CHAPTERS or not isinstance(text, str):
            raise ReportError(f"{path}: at chapters.{name}: expected text for one of {list(CHAPTERS)}")
        out[str(name)] = " ".join(text.split())
    return out


def has_iscsi(ds: Measurements) -> bool:
    """Whether any file of the dataset went through iSCSI (a fio run not local, or iSCSI parameters)."""
    return any(f.side != "local" for f in ds.select("fio")) or bool(ds.iscsi_parameters)


def dataset_box(ds: Measurements, chapter: str) -> str:
    """The page's opening note on a measured dataset (MyST admonition); "" on a reconstructed one.

    What matters most comes first: whether any iSCSI traffic is in the data, then the dataset's
    note for this chapter, then the manifest's description (tools, versions, how it was captured).
    """
    if ds.reconstructed:
        return ""  # the reconstructed-data banner (analyses/provenance.py) says what it is
    paragraphs = []
    if not has_iscsi(ds):
        paragraphs.append(
            "**No iSCSI traffic is in this dataset.** Its fio runs write to a local device and its "
            "ping and iperf3 runs cross the network alone, so the chapters over it show the parts "
            "an iSCSI write is made of, measured separately; any iSCSI figure is the model's."
        )
    note = notes(ds).get(chapter, "")
    if note:
        paragraphs.append(markup.text(note))
    if ds.description:
        paragraphs.append("*How it was measured:* " + markup.text(ds.description))
    if not paragraphs:
        return ""  # an admonition needs a body: nothing to say beyond the page itself
    head = [f":::{{admonition}} About this dataset: {markup.text(ds.title)}", ":class: note", ""]
    return "\n".join([*head, "\n\n".join(paragraphs), ":::"])


# ---- network findings -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Shaped:
    """A forward TCP iperf3 run through a shaper of known rate: the payload ceiling it implies."""

    file: str
    limit_mbit_per_s: float
    mss_bytes: int
    received_mbit_per_s: float
    sender_cpu_pct: float

    @property
    def frame_bytes(self) -> int:
        """Bytes the shaper counts per full segment."""
        return self.mss_bytes + IPV4_HEADER_BYTES + TCP_HEADER_WITH_TIMESTAMPS_BYTES + ETHERNET_HEADER_BYTES

    @property
    def payload_ceiling_mbit_per_s(self) -> float:
        """The shaper's rate times the payload share of each frame."""
        return self.limit_mbit_per_s * self.mss_bytes / self.frame_bytes


def shaped_runs(ds: Measurements) -> list[Shaped]:
    """Forward TCP iperf3 runs whose manifest gives the link's shaped rate (label ``link_limit_mbps``)."""
    out = []
    for f in ds.select("iperf3"):
        limit = f.labels.get("link_limit_mbps")
        result = ds.iperf3(f)
        mss = result.doc.get("start", {}).get("tcp_mss_default")
        if limit is None or result.protocol != "tcp" or result.reverse or not isinstance(mss, int):
            continue
        summary = iperf3.summary(result)
        cpu = result.end.get("cpu_utilization_percent", {}).get("host_total", np.nan)
        received = summary["received_bps"] / network.BITS_PER_MBIT
        out.append(Shaped(f.rel, float(limit), mss, received, float(cpu)))
    return out


def shaping_sentence(run: Shaped) -> str:
    """Why a shaped link's TCP rate sits below the shaper's rate, with the numbers of one run."""
    share = 100 * run.received_mbit_per_s / run.payload_ceiling_mbit_per_s
    limit = prose.number(run.limit_mbit_per_s)
    headers = (
        f"IPv4 {IPV4_HEADER_BYTES}, TCP with timestamps {TCP_HEADER_WITH_TIMESTAMPS_BYTES}, "
        f"Ethernet {ETHERNET_HEADER_BYTES}"
    )
    return (
        f"**The iperf3 rate is the shaper's, not the link's.** The run {markup.code(run.file)} crossed a "
        f"{{term}}`shaper <traffic shaper>` set to {limit} Mbit/s (manifest label `link_limit_mbps`). "
        f"A shaper counts whole frames: each segment carries {prose.count(run.mss_bytes, 'byte')} of "
        f"payload (iperf3's {{term}}`MSS`) in {prose.count(run.frame_bytes, 'byte')} ({headers}), "
        f"so TCP payload tops out at {prose.number(run.payload_ceiling_mbit_per_s, 1)} Mbit/s. "
        f"iperf3 received {prose.number(run.received_mbit_per_s, 1)} Mbit/s, {prose.number(share, 1)} % "
        f"of that ceiling, with the sending host's CPU {prose.number(run.sender_cpu_pct, 1)} % busy: the "
        "shaper is the {term}`binding bound`."
    )


def interval_effects(summary: pd.DataFrame) -> pd.DataFrame:
    """Per network pinged at several intervals: the densest and sparsest interval and their mean RTTs."""
    rows = []
    for net, group in summary.dropna(subset=["interval_s"]).groupby("network", sort=True):
        if group["interval_s"].nunique() < 2:
            continue
        ordered = group.sort_values("interval_s")
        dense, sparse = ordered.iloc[0], ordered.iloc[-1]
        rows.append(
            {
                "network": net,
                "dense_interval_ms": 1000 * dense["interval_s"],
                "dense_mean_ms": dense["mean_ms"],
                "sparse_interval_ms": 1000 * sparse["interval_s"],
                "sparse_mean_ms": sparse["mean_ms"],
                "ratio": sparse["mean_ms"] / dense["mean_ms"],
            }
        )
    return pd.DataFrame(rows)


def interval_sentence(row: pd.Series) -> str:
    """How much a network's round trip depends on how often it is pinged."""
    slower = "longer" if row["ratio"] >= 1 else "shorter"
    factor = row["ratio"] if row["ratio"] >= 1 else 1 / row["ratio"]
    dense_ms, dense_mean = prose.number(row["dense_interval_ms"], 0), prose.duration_ms(row["dense_mean_ms"])
    dense = f"{dense_ms} ms apart averaged {dense_mean}"
    sparse = (
        f"{prose.number(row['sparse_interval_ms'], 0)} ms apart {prose.duration_ms(row['sparse_mean_ms'])}"
    )
    return (
        f"**How often the path is used changes its round trip.** On {markup.text(row['network'])}, pings "
        f"{dense} and pings {sparse}, {prose.number(factor, 1)} times {slower}. Which of them an iSCSI "
        "write meets depends on how often it sends: the model chapter takes the ping interval closest "
        "to its own gap between PDUs."
    )


def print_steps(samples: pd.DataFrame) -> pd.DataFrame:
    """Per network and interval: ping's print step, distinct values and median, in ms."""
    rows = []
    for _, group in samples.groupby(list(network.SUMMARY_KEYS), sort=True, dropna=False):
        values = np.unique(np.round(group["rtt_ms"].to_numpy(), 9))
        steps = np.diff(values)
        rows.append(
            {
                "network": group["network"].iloc[0],
                "interval_ms": 1000 * float(group["interval_s"].iloc[0]),
                "step_ms": float(steps.min()) if steps.size else np.nan,
                "distinct_values": int(values.size),
                "median_ms": float(group["rtt_ms"].median()),
                "replies": len(group),
            }
        )
    return pd.DataFrame(rows)


def steps_sentence(row: pd.Series) -> str:
    """Why a histogram of round trips near ping's print resolution shows 'modes' that are not there."""
    return (
        f"**Some 'modes' are print steps.** The {markup.text(row['network'])} pings "
        f"{prose.number(row['interval_ms'], 0)} ms apart print their round trips in steps of "
        f"{prose.duration_ms(row['step_ms'])}, and their {prose.count(row['replies'], 'reply', 'replies')} "
        f"take only {prose.count(row['distinct_values'], 'distinct value')} (median "
        f"{prose.duration_ms(row['median_ms'])}). Peaks of the histogram and the `modes` column for them "
        "are steps of the printout, not separate populations of round trips."
    )


def network_findings(ds: Measurements, samples: pd.DataFrame, summary: pd.DataFrame) -> list[str]:
    """Every network finding the dataset shows, as MyST paragraphs (an empty list when none applies)."""
    found = [shaping_sentence(run) for run in shaped_runs(ds)]
    effects = interval_effects(summary)
    if len(effects):
        strong = effects[
            (effects["ratio"] >= INTERVAL_EFFECT_FACTOR) | (effects["ratio"] <= 1 / INTERVAL_EFFECT_FACTOR)
        ]
        found += [interval_sentence(row) for _, row in strong.iterrows()]
    steps = print_steps(samples)
    if len(steps):
        coarse = steps[steps["step_ms"] >= COARSE_PRINT_SHARE * steps["median_ms"]]
        found += [steps_sentence(row) for _, row in coarse.iterrows()]
    return found


def show_dataset_box(ctx: Context, chapter: str) -> str:
    """Show the opening note of the page's dataset (nothing on a reconstructed one); returns its MyST."""
    text = dataset_box(open_dataset(ctx.raw_dir), chapter)
    if text:
        display_markdown(text)
    return text


# ---- the page's run: its label and its sibling chapters ------------------------------------------


def run_params(ctx: Context) -> dict[str, object]:
    """The run's params file (``params/<run>.yaml``) as read, recorded for the run cache; {} without one.

    A page that links its sibling chapters or names its run depends on this file: recording it as
    read makes a change of the run's chapters or titles re-execute the page.
    """
    path = ctx.project.params_file(ctx.run_name)
    if not path.is_file():
        return {}  # a notebook opened by hand under a run name with no params file
    doc = yamlio.load_file(path).data  # strict (a duplicate key is an error) and a recorded read
    if not isinstance(doc, dict):
        raise ReportError(f"{path}: expected a mapping (title, dataset, notebooks, ...)")
    return doc


def run_chapters(ctx: Context) -> list[str]:
    """The notebooks of the page's run, in params order (names or one-key ``{name: overrides}``)."""
    entries = run_params(ctx).get("notebooks") or []
    if not isinstance(entries, list):
        return []  # the runner refuses such a file before any notebook runs
    return [
        e if isinstance(e, str) else str(next(iter(e))) for e in entries if isinstance(e, str | dict) and e
    ]


def run_label(ctx: Context) -> str:
    """What tells this run's pages from another run's: params ``short_title``, else ``title``, else the
    dataset manifest's title, else the run's name."""
    doc = run_params(ctx)
    for key in ("short_title", "title"):
        value = doc.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    if ctx.dataset and (ctx.raw_dir / "manifest.yaml").is_file():
        return open_dataset(ctx.raw_dir).title
    return ctx.run_name


def chapter_link(chapters: list[str], notebook: str, text: str) -> str:
    """A MyST link to a sibling chapter when the run has it, else the plain ``text`` (no broken link)."""
    return f"{{doc}}`{text} <{notebook}>`" if notebook in chapters else text


def glue_links(ctx: Context, links: dict[str, tuple[str, str]]) -> None:
    """Glue the page's links to sibling chapters: a link where the run has the chapter, else words.

    ``links`` maps a glue name to (notebook, link text); the prose pastes each with
    ``{glue:md}`name:myst``` so a chapter the run leaves out reads as plain text, and a params file
    running only some of a run's chapters still builds under the strict build.
    """
    from IPython.display import Markdown

    chapters = run_chapters(ctx)
    for name, (notebook, text) in links.items():
        glue(name, Markdown(chapter_link(chapters, notebook, text)))


def glue_page(ctx: Context, links: dict[str, tuple[str, str]]) -> None:
    """Glue the page's run label (``run_label``, for the H1) and its links to sibling chapters."""
    glue("run_label", run_label(ctx))
    glue_links(ctx, links)
