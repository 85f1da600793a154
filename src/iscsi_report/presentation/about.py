"""The words about a page's dataset and run: the box opening a chapter, the network findings in
sentences (a difference between ping groups names the one key that differs), the run's label and
its links to sibling chapters.

:func:`show_dataset_box` opens each chapter over measured data with the manifest's own title and
description, says when the dataset holds no iSCSI traffic at all, and adds the dataset's reader
notes for that chapter (:func:`iscsi_report.analyses.about.dataset_facts`). :func:`network_findings`
turns what :func:`iscsi_report.analyses.about.network_findings` found into one paragraph per
finding, its numbers from the raw files. :func:`glue_page` and :func:`glue_links` glue the run's
label and the links to the chapters this run has.
"""

from __future__ import annotations

import pandas as pd

from iscsi_report.analyses import about as facts
from iscsi_report.core import markup, prose, yamlio
from iscsi_report.core.errors import ReportError
from iscsi_report.core.measurements import Measurements, open_dataset
from iscsi_report.presentation.report import Context, display_markdown, glue

NO_ISCSI = (
    "**No iSCSI traffic is in this dataset.** Its fio runs write to a local device and its "
    "ping and iperf3 runs cross the network alone, so the chapters over it show the parts "
    "an iSCSI write is made of, measured separately; any iSCSI figure is the model's."
)
NO_ISCSI_TAG = " (parts measured, no iSCSI traffic)"  # the box's title line says it while the box is closed


def box_markdown(found: facts.DatasetFacts) -> str:
    """The page's opening note on a measured dataset (a MyST admonition collapsed to its title line,
    so the chapter's answer stays in the first screen); "" on a reconstructed one.

    What matters most comes first: whether any iSCSI traffic is in the data, then the dataset's
    note for this chapter, then the manifest's description (tools, versions, how it was captured).
    """
    if found.reconstructed:
        return ""  # the reconstructed-data banner (presentation/provenance.py) says what it is
    paragraphs = [] if found.has_iscsi else [NO_ISCSI]
    if found.note:
        paragraphs.append(markup.text(found.note))
    if found.description:
        paragraphs.append("*How it was measured:* " + markup.text(found.description))
    if not paragraphs:
        return ""  # an admonition needs a body: nothing to say beyond the page itself
    title = f"About this dataset: {markup.text(found.title)}" + ("" if found.has_iscsi else NO_ISCSI_TAG)
    head = [f":::{{admonition}} {title} — details", ":class: note dropdown", ""]
    return "\n".join([*head, "\n\n".join(paragraphs), ":::"])


def dataset_box(ds: Measurements, chapter: str) -> str:
    """The opening note of ``chapter`` over ``ds`` (MyST), "" when there is nothing to say."""
    return box_markdown(facts.dataset_facts(ds, chapter))


def show_dataset_box(ctx: Context, chapter: str) -> str:
    """Show the opening note of the page's dataset (nothing on a reconstructed one); returns its MyST."""
    text = dataset_box(open_dataset(ctx.raw_dir), chapter)
    if text:
        display_markdown(text)
    return text


# ---- network findings in sentences ---------------------------------------------------------------


def shaping_sentence(run: facts.Shaped) -> str:
    """Why a shaped link's TCP rate sits below the shaper's rate, with the numbers of one run."""
    share = 100 * run.received_mbit_per_s / run.payload_ceiling_mbit_per_s
    limit = prose.number(run.limit_mbit_per_s)
    headers = (
        f"IPv4 {facts.IPV4_HEADER_BYTES}, TCP with timestamps {facts.TCP_HEADER_WITH_TIMESTAMPS_BYTES}, "
        f"Ethernet {facts.ETHERNET_HEADER_BYTES}"
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


# How each key of a ping group is named in a finding, and how one of its values reads.
KEY_WORDS = {
    "interval_s": "ping interval",
    "family": "address family",
    "host": "host pinged",
}


# How one value of each key reads in a sentence about pings ("pings every 2 ms", "over IPv6").
KEY_PREFIX = {"interval_s": "every", "family": "over", "host": "to", "network": "on"}
# What a difference in each key other than the interval means for the model's network input.
KEY_CONSEQUENCE = {
    "family": "the model's network input holds only if its pings use the address family the iSCSI "
    "traffic uses",
    "host": "the model's network input holds only if its pings go to the host the iSCSI traffic goes to",
}


def _key_value(key: str, value: object) -> str:
    """One value of a group key as it reads after 'pings': 'every 2 ms', 'over IPv6', 'to nas'."""
    if key == "interval_s":
        return f"every {prose.number(1000 * float(value), 0)} ms"  # type: ignore[arg-type]
    return f"{KEY_PREFIX[key]} {markup.text(str(value))}"


def _same(row: pd.Series) -> str:
    """What a compared pair shares, in words ('to loopback, every 200 ms, on lan')."""
    shared = [k for k in ("family", "host", "interval_s", "network") if k != row["key"] and k in row.index]
    return ", ".join(_key_value(k, row[k]) for k in shared)


def _headline(key: str) -> str:
    """The bold opening of a group-difference finding, naming what differs."""
    return {
        "interval_s": "How often the path is used changes its round trip.",
        "family": "IPv4 and IPv6 round trips differ.",
        "host": "The hosts pinged answer at different round trips.",
    }[key]


def _consequence(key: str) -> str:
    """What a difference in ``key`` means for reading the model's inputs."""
    if key == "interval_s":
        return (
            "Which of them an iSCSI write meets depends on how often it sends: the model chapter takes "
            "the ping interval closest to its own gap between PDUs."
        )
    return (
        f"Both were pinged equally often, so how often ping ran does not explain it: the "
        f"{KEY_WORDS[key]} is the only difference, and {KEY_CONSEQUENCE[key]}."
    )


def effect_sentence(row: pd.Series) -> str:
    """How two ping groups alike in all but one key differ in mean round trip, naming that key."""
    key = str(row["key"])
    longer = "longer" if row["ratio"] >= 1 else "shorter"
    factor = row["ratio"] if row["ratio"] >= 1 else 1 / row["ratio"]
    low = f"{_key_value(key, row['low'])} averaged {prose.duration_ms(row['low_mean_ms'])}"
    high = f"{_key_value(key, row['high'])} {prose.duration_ms(row['high_mean_ms'])}"
    return (
        f"**{_headline(key)}** Two ping groups differ only in their {KEY_WORDS[key]} (both {_same(row)}): "
        f"pings {low} and pings {high}, {prose.number(factor, 1)} times {longer}. " + _consequence(key)
    )


def steps_sentence(row: pd.Series) -> str:
    """Why a histogram of round trips near ping's print resolution shows 'modes' that are not there."""
    return (
        f"**Some 'modes' are print steps.** The {markup.text(row['network'])} pings to "
        f"{markup.text(row['host'])} over {markup.text(row['family'])} "
        f"{prose.number(row['interval_ms'], 0)} ms apart print their round trips in steps of "
        f"{prose.duration_ms(row['step_ms'])}, and their {prose.count(row['replies'], 'reply', 'replies')} "
        f"take only {prose.count(row['distinct_values'], 'distinct value')} (median "
        f"{prose.duration_ms(row['median_ms'])}). Peaks of the histogram and the `modes` column for them "
        "are steps of the printout, not separate populations of round trips."
    )


def network_findings(found: facts.NetworkFindings) -> list[str]:
    """Every network finding as a MyST paragraph, in the order shaper, group differences, print steps."""
    paragraphs = [shaping_sentence(run) for run in found.shaped]
    paragraphs += [effect_sentence(row) for _, row in found.group_effects.iterrows()]
    return paragraphs + [steps_sentence(row) for _, row in found.print_steps.iterrows()]


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
