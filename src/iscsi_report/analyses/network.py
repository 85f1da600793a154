"""Network chapter analyses: RTT samples per ping group, their summary, iperf3 rates.

A ping group is one network label, host pinged, address family and probe interval
(:data:`GROUP_KEYS`): two files differing in any of them measure different things, so every table,
chart and finding keeps them apart.

Everything here takes a :class:`~iscsi_report.core.measurements.Measurements` and returns tidy DataFrames;
the notebook only shows them.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.core import labels as label_contract
from iscsi_report.core import stats
from iscsi_report.core.dataset import RawFile
from iscsi_report.core.ingest import iperf3, ping
from iscsi_report.core.measurements import Measurements
from iscsi_report.core.units import (
    BITS_PER_MBIT as BITS_PER_MBIT,  # re-exported: about.py reads network.BITS_PER_MBIT
)
from iscsi_report.core.units import MS_PER_S

# What a ping group is: the manifest's network label, the host pinged, the address family and the
# probe interval, read from the file's own header and -D timestamps (the ip_version and interval_s
# labels, when given, settle family and interval). The latency summary has one row per group.
GROUP_KEYS = ("network", "host", "family", "interval_s")
UNKNOWN = "unknown"  # a key neither a label nor the file settles
LOOPBACK_HOST = "loopback"  # 127.0.0.1 and ::1 are one host: the family tells them apart
FAMILIES = {4: "IPv4", 6: "IPv6"}
LINK_CAPACITY_LABELS = label_contract.LINK_CAPACITY_LABELS


def interval_s(m: Measurements, f: RawFile, result: ping.PingResult) -> float:
    """The ping's probe interval: its label, else what the file shows (-D spacing); NaN if neither."""
    if f.labels.get("interval_s") is not None:
        return float(f.labels["interval_s"])
    inferred = label_contract.ping_labels(result, m.text(f)).labels.get("interval_s")
    return float(inferred) if inferred is not None else np.nan


def family_name(version: object) -> str:
    """'IPv4' or 'IPv6' for an IP version (4, 6, '4', 'IPv6'...); :data:`UNKNOWN` otherwise."""
    text = str(version).lower().removeprefix("ipv")
    return FAMILIES.get(int(text), UNKNOWN) if text in ("4", "6") else UNKNOWN


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address ``text`` spells (a zone index dropped), None when it is a name."""
    try:
        return ipaddress.ip_address(text.partition("%")[0])
    except ValueError:
        return None


def host_of(name: str, address: str) -> str:
    """The host a ping went to: the name as typed, an address literal as itself, loopback as one host.

    ``ping -4 host`` and ``ping -6 host`` share the host (only the family differs); literal
    addresses of one host in two families cannot be told to be one host, except loopback's.
    """
    literal, resolved = _address(name), _address(address)
    if literal is None:
        return name
    return (
        LOOPBACK_HOST
        if literal.is_loopback or (resolved is not None and resolved.is_loopback)
        else str(literal)
    )


def host_and_family(m: Measurements, f: RawFile) -> tuple[str, str]:
    """(host, family) of a ping file from its header ("PING name (address)"); the ``ip_version``
    label, when given, settles the family."""
    found = ping.destination(m.text(f))
    host = host_of(*found) if found else UNKNOWN
    if f.labels.get("ip_version") is not None:
        return host, family_name(f.labels["ip_version"])
    resolved = _address(found[1]) if found else None
    return host, family_name(resolved.version) if resolved is not None else UNKNOWN


def rate_kind(protocol: str, reverse: bool) -> str:
    """What an iperf3 rate measures: link capacity (forward TCP), an offered UDP rate, the reverse way."""
    if protocol == "udp":
        return "offered rate (UDP -b): not a capacity"
    if reverse:
        return "reverse direction (-R): server to client"
    return "link capacity (forward TCP)"


def capacity_runs(iperf: pd.DataFrame) -> pd.Series:
    """Rows that measure link capacity (LINK_CAPACITY_LABELS: forward TCP); all when unlabelled."""
    keep = pd.Series(True, index=iperf.index)
    for key, wanted in LINK_CAPACITY_LABELS.items():
        if key in iperf:
            keep &= iperf[key].astype(object).map(lambda v, w=wanted: str(v).lower() == str(w).lower())
    return keep


def rtt_samples(ds: Measurements) -> pd.DataFrame:
    """Every reply of every ping file: file, the group keys (:data:`GROUP_KEYS`), seq, rtt_ms
    (duplicates dropped with their count reported by :func:`ping_files`, since a DUP is not a
    second round trip)."""
    frames = []
    for f in ds.select("ping"):
        result = ds.ping(f)
        replies = result.samples[~result.samples["duplicate"]]
        host, family = host_and_family(ds, f)
        frames.append(
            pd.DataFrame(
                {
                    "file": f.rel,
                    "network": f.labels.get("network", UNKNOWN),
                    "host": host,
                    "family": family,
                    "interval_s": interval_s(ds, f, result),
                    "seq": replies["seq"].to_numpy(),
                    "rtt_ms": replies["rtt_ms"].to_numpy(),
                }
            )
        )
    if not frames:
        raise ValueError(f"dataset {ds.name}: no ping files in the manifest")
    return pd.concat(frames, ignore_index=True)


def mixed_paths(samples: pd.DataFrame) -> dict[tuple[str, float], str]:
    """(network, interval_s) whose pings reached more than one host or address family, said in words.

    A model input is one path's round trip: averaging IPv4 and IPv6 pings (or two hosts) of one
    network label would pool two paths into a number neither has. The words name the files.
    """
    out: dict[tuple[str, float], str] = {}
    # One row per (path, file) first: the words need only which files reached which path, and a
    # Python set over every reply's file name took seconds on the blog's 900,000 replies.
    distinct = samples[["network", "interval_s", "host", "family", "file"]].drop_duplicates()
    groups: Iterable[tuple[Any, pd.DataFrame]] = distinct.groupby(
        ["network", "interval_s"], sort=True, dropna=False
    )
    for (name, interval), g in groups:
        files = g.groupby(["host", "family"], sort=True)["file"].agg(lambda f: ", ".join(sorted(f)))
        if len(files) > 1:
            paths: dict[Any, str] = files.to_dict()
            seen = "; ".join(f"{path[0]} over {path[1]}: {names}" for path, names in paths.items())
            spacing_ms = float(interval) * MS_PER_S
            out[(str(name), float(interval))] = (
                f"its pings every {spacing_ms:g} ms reached more than one host or address family "
                f"({seen}); give each path its own network label"
            )
    return out


def ping_files(ds: Measurements) -> pd.DataFrame:
    """Per ping file: the format found, counts, loss, lines not understood, warnings."""
    rows = []
    for f in ds.select("ping"):
        result = ds.ping(f)
        s = ping.summary(result)
        rows.append(
            {
                "file": f.rel,
                "format": result.format,
                "transmitted": s["transmitted"],
                "received": s["received"],
                "loss_pct": s["loss_pct"],
                "duplicates": s["duplicates"],
                "unparsed_lines": len(result.unparsed),
                "warnings": "; ".join(result.warnings),
            }
        )
    return pd.DataFrame(rows)


def latency_summary(samples: pd.DataFrame) -> pd.DataFrame:
    """Per ping group (:data:`GROUP_KEYS`): the blog's statistics (datamash definitions) and modality.

    Groups keep missing keys (dropna=False), so every reply counted in the prose is in a row.
    """
    rows = []
    for keys, group in samples.groupby(list(GROUP_KEYS), sort=True, dropna=False):
        rtt = group["rtt_ms"].to_numpy()
        s = stats.summarize_rtt(rtt)
        positive = rtt[rtt > 0]
        modes = stats.find_modes(positive) if positive.size > 3 else []
        rows.append(
            {
                **dict(zip(GROUP_KEYS, keys, strict=True)),
                "samples": rtt.size,
                "mean_ms": s["mean"],
                "p50_ms": s["p50"],
                "p99_ms": s["p99"],
                "max_ms": s["max"],
                "sstdev_ms": s["sstdev"],
                "cv_pct": s["cv_pct"],
                "modes": len(modes),
                "upper_mode_ms": max(modes) if modes else np.nan,
                "bimodality_coefficient": stats.bimodality_coefficient(positive, log=True)
                if positive.size > 3
                else np.nan,
            }
        )
    table = pd.DataFrame(rows)
    if rows and int(table["samples"].sum()) != len(samples):  # prose counts samples, the table groups
        raise ValueError(f"summary holds {table['samples'].sum()} of {len(samples)} replies")
    return table


def iperf_intervals(ds: Measurements) -> pd.DataFrame:
    """iperf3 per-interval rates of every file (summed over streams): file, network, t, Mbit/s."""
    frames = []
    for f in ds.select("iperf3"):
        result = ds.iperf3(f)
        iv = result.intervals
        iv = iv[(iv["stream"] == "sum") & (iv["direction"] == "forward")]
        frames.append(
            pd.DataFrame(
                {
                    "file": f.rel,
                    "network": f.labels.get("network", "unknown"),
                    "start_s": iv["start_s"].to_numpy(),
                    "end_s": iv["end_s"].to_numpy(),
                    "mbit_per_s": iv["bits_per_s"].to_numpy() / BITS_PER_MBIT,
                }
            )
        )
    return (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["file", "network", "start_s", "end_s", "mbit_per_s"])
    )


def iperf_summary(ds: Measurements) -> pd.DataFrame:
    """Per iperf3 file: protocol, direction, streams, sent and received Mbit/s, what the rate measures."""
    rows = []
    for f in ds.select("iperf3"):
        s = iperf3.summary(ds.iperf3(f))
        rows.append(
            {
                "file": f.rel,
                "network": f.labels.get("network", "unknown"),
                "protocol": s["protocol"],
                "reverse": bool(s["reverse"]),
                "streams": s["streams"],
                "sent_mbit_per_s": s["sent_bps"] / BITS_PER_MBIT,
                "received_mbit_per_s": s["received_bps"] / BITS_PER_MBIT,
                "rate_kind": rate_kind(str(s["protocol"]), bool(s["reverse"])),
            }
        )
    return pd.DataFrame(rows)


def log_histogram(samples: pd.DataFrame, bins_per_decade: int = 20) -> pd.DataFrame:
    """Share of replies per log-spaced RTT bin, per ping group (for charts)."""
    positive = samples[samples["rtt_ms"] > 0]
    lo = np.floor(np.log10(positive["rtt_ms"].min()))
    hi = np.ceil(np.log10(positive["rtt_ms"].max()))
    edges = 10.0 ** np.linspace(lo, hi, int((hi - lo) * bins_per_decade) + 1)
    rows = []
    for keys, group in positive.groupby(list(GROUP_KEYS), sort=True, dropna=False):
        counts, _ = np.histogram(group["rtt_ms"], bins=edges)
        share = counts / counts.sum()
        rows.append(
            pd.DataFrame(
                {
                    **dict(zip(GROUP_KEYS, keys, strict=True)),
                    "bin_lo_ms": edges[:-1],
                    "bin_hi_ms": edges[1:],
                    "share": share,
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def ecdf_points(samples: pd.DataFrame, points: int = 400) -> pd.DataFrame:
    """The ECDF of each group at ``points`` quantiles (enough to draw, small enough to embed)."""
    probs = np.linspace(0.0, 1.0, points)
    rows = []
    for keys, group in samples.groupby(list(GROUP_KEYS), sort=True, dropna=False):
        q = np.quantile(group["rtt_ms"].to_numpy(), probs)
        rows.append(
            pd.DataFrame({**dict(zip(GROUP_KEYS, keys, strict=True)), "rtt_ms": q, "cumulative_share": probs})
        )
    return pd.concat(rows, ignore_index=True)
