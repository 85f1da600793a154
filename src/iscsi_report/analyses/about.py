"""What a page's dataset is, and which of its network numbers mislead when read bare: data, no words.

The same chapters (network, storage, model) run over every dataset: the reconstructed blog study,
the veth link of this machine, a reader's own measurements. :func:`dataset_facts` gathers what the
box opening each chapter over measured data says (the manifest's title and description, whether
the dataset holds any iSCSI traffic, the reader notes for that chapter from
``data/raw/<dataset>/notes.yaml``). :func:`network_findings` finds the network numbers that mislead
when read bare: a rate set by a traffic shaper, round trips that differ between ping groups alike
in all but one key (how often the path is used, the address family, the host pinged), and round
trips too short for ping's printed resolution, each only where the data shows it.
The words for both are :mod:`iscsi_report.presentation.about`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from iscsi_report.analyses import network
from iscsi_report.core.errors import ReportError
from iscsi_report.core.ingest import iperf3
from iscsi_report.core.measurements import NOTES, Measurements

CHAPTERS = ("network", "storage", "model")
# Bytes a shaper counts per TCP segment beyond its payload: IPv4 header, TCP header with the
# timestamp option Linux sends by default, and the Ethernet header the qdisc sees (no FCS, no preamble).
IPV4_HEADER_BYTES = 20
TCP_HEADER_WITH_TIMESTAMPS_BYTES = 32
ETHERNET_HEADER_BYTES = 14
# A print step at least this share of the median round trip makes the histogram a staircase.
COARSE_PRINT_SHARE = 0.25
# Mean round trips of two ping groups of one network differing in one key (interval, family, host)
# by at least this factor are a finding.
GROUP_EFFECT_FACTOR = 2.0
# The keys a finding may vary, within one network label: the host pinged, the family, the interval.
COMPARED_KEYS = ("host", "family", "interval_s")


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


@dataclass(frozen=True)
class DatasetFacts:
    """What the box opening a chapter says about its dataset, as found in the manifest and notes."""

    title: str
    reconstructed: bool  # the reconstructed-data banner (presentation/provenance.py) says it
    has_iscsi: bool
    note: str  # the dataset's reader note for this chapter, "" without one
    description: str  # the manifest's: tools, versions, how it was captured


def dataset_facts(ds: Measurements, chapter: str) -> DatasetFacts:
    """The facts of the box opening ``chapter`` over ``ds`` (notes read only for a measured dataset)."""
    if ds.reconstructed:
        return DatasetFacts(ds.title, True, has_iscsi(ds), "", ds.description)
    return DatasetFacts(ds.title, False, has_iscsi(ds), notes(ds).get(chapter, ""), ds.description)


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


def _group_name(row: pd.Series, keys: tuple[str, ...]) -> dict[str, object]:
    """The values of ``keys`` in one summary row."""
    return {key: row[key] for key in keys}


def group_effects(summary: pd.DataFrame) -> pd.DataFrame:
    """Pairs of ping groups that differ in exactly one key, with the mean RTT of each side.

    For each key of :data:`COMPARED_KEYS`, the summary rows sharing every other key of
    :data:`network.GROUP_KEYS` are compared: the lowest value of the varying key against the
    highest (the densest and sparsest interval, IPv4 against IPv6). A pair differing in two keys
    (another family *and* another interval) is never compared, so a difference is never put down
    to the wrong one. Two network labels are two networks by the user's word: the table shows
    them side by side, and no finding compares them.
    """
    rows = []
    keys = network.GROUP_KEYS
    known = summary.dropna(subset=list(keys))
    for varied in COMPARED_KEYS:
        fixed = tuple(k for k in keys if k != varied)
        for _, group in known.groupby(list(fixed), sort=True):
            if group[varied].nunique() < 2:
                continue
            ordered = group.sort_values(varied)
            low, high = ordered.iloc[0], ordered.iloc[-1]
            rows.append(
                {
                    "key": varied,
                    **_group_name(low, fixed),
                    "low": low[varied],
                    "low_mean_ms": low["mean_ms"],
                    "high": high[varied],
                    "high_mean_ms": high["mean_ms"],
                    "ratio": high["mean_ms"] / low["mean_ms"],
                }
            )
    return pd.DataFrame(rows)


def print_steps(samples: pd.DataFrame) -> pd.DataFrame:
    """Per ping group: ping's print step, distinct values and median, in ms."""
    rows = []
    for _, group in samples.groupby(list(network.GROUP_KEYS), sort=True, dropna=False):
        values = np.unique(np.round(group["rtt_ms"].to_numpy(), 9))
        steps = np.diff(values)
        rows.append(
            {
                "network": group["network"].iloc[0],
                "host": group["host"].iloc[0],
                "family": group["family"].iloc[0],
                "interval_ms": 1000 * float(group["interval_s"].iloc[0]),
                "step_ms": float(steps.min()) if steps.size else np.nan,
                "distinct_values": int(values.size),
                "median_ms": float(group["rtt_ms"].median()),
                "replies": len(group),
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class NetworkFindings:
    """The network effects a dataset's files show, each with the numbers that show it (empty: none)."""

    shaped: list[Shaped]  # forward TCP runs through a shaper of known rate
    group_effects: pd.DataFrame  # rows of :func:`group_effects` past GROUP_EFFECT_FACTOR
    print_steps: pd.DataFrame  # rows of :func:`print_steps` coarse against their median round trip


def network_findings(ds: Measurements, samples: pd.DataFrame, summary: pd.DataFrame) -> NetworkFindings:
    """Every network effect the dataset shows: a shaper's rate, a difference between ping groups
    that differ in one key only, coarse print steps."""
    effects = group_effects(summary)
    if len(effects):
        ratio = effects["ratio"]
        effects = effects[(ratio >= GROUP_EFFECT_FACTOR) | (ratio <= 1 / GROUP_EFFECT_FACTOR)]
    steps = print_steps(samples)
    if len(steps):
        steps = steps[steps["step_ms"] >= COARSE_PRINT_SHARE * steps["median_ms"]]
    return NetworkFindings(shaped_runs(ds), effects.reset_index(drop=True), steps.reset_index(drop=True))
