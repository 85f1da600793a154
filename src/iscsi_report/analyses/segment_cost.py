"""The segments diagnoses (lab run --segments 1 and 2) read as their pre-registrations declared.

Why writes with 8 KiB segments are slower than the engine says on a fast link. Design 1: iperf3's
rate with small and large messages, and how busy the delay line and tgtd were (CPU seconds per
wall second) during iSCSI writes with each segment size. Design 2: each write also captured at
both ends of the line, and the difference between the sets split by where it shows (before the
line, in it, at tgtd).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from iscsi_report.analyses import lab, read_time
from iscsi_report.core.ingest import iperf3
from iscsi_report.core.measurements import Measurements
from iscsi_report.core.units import BITS_PER_MBIT, BYTES_PER_KIB

# The readings' thresholds, as data/preregistered/lab-iscsi-2026-segments/README.md declares them.
IPERF_SHORT_FRACTION = 0.90  # 1a: small messages receive less than this share of large ones...
IPERF_SAME_FRACTION = 0.05  # ...while at the slow rate the two are within this share
BUSY = 0.8  # CPU seconds per wall second that counts as busy
REPLICATION_EXCESS = 0.05  # the small set's latency above the large set's at the largest size
SET_KEYS = ["link_mbps", "max_recv_data_segment_bytes", "bs_bytes"]


def rates(ds: Measurements) -> pd.DataFrame:
    """iperf3's received Mbit/s per rate (rows) and message size (columns; 0: default), replicates' median."""
    rows = [
        {
            "link_mbps": float(f.labels["link_mbps"]),
            "message_bytes": int(f.labels.get("message_bytes") or 0),
            "received_mbps": iperf3.summary(ds.iperf3(f))["received_bps"] / BITS_PER_MBIT,
        }
        for f in ds.select("iperf3")
    ]
    return pd.DataFrame(rows).groupby(["link_mbps", "message_bytes"])["received_mbps"].median().unstack()


def writes(ds: Measurements) -> pd.DataFrame:
    """Per configuration: mean latency, and the delay line's and tgtd's busy fraction (replicates' median)."""
    runs = lab.fio_runs(ds)
    if "captured" in runs:  # design 2's captured runs: few writes, under dumpcap; not the means
        runs = runs[~runs["captured"].astype(bool)].copy()
    runs["line_busy"] = runs["delayline_cpu_s"] / runs["run_wall_s"]
    runs["tgtd_busy"] = runs["tgtd_cpu_s"] / runs["run_wall_s"]
    return runs.groupby(SET_KEYS).agg(
        lat_mean_ms=("lat_mean_ms", "mean"),
        line_busy=("line_busy", "median"),
        tgtd_busy=("tgtd_busy", "median"),
        runs=("lat_mean_ms", "size"),
    )


@dataclass(frozen=True)
class Readings:
    """The declared readings: their figures and whether each held."""

    iperf_ratio_fast: float  # small over large messages' rate, at the fast link
    iperf_ratio_slow: float
    line_busy_small: float  # the delay line during the small set's writes at the fast link
    line_busy_large: float
    tgtd_busy_small: float
    excess_fast: float  # the small set's latency over the large set's - 1, at the largest size
    excess_slow: float
    line_binds: bool  # reading 1
    hosts_bind: bool  # reading 2
    replicated: bool


def readings(r: pd.DataFrame, w: pd.DataFrame) -> Readings:
    """Each declared reading from :func:`rates` and :func:`writes` (fast and slow: the two rates)."""
    slow, fast = sorted(r.index)
    small, large = sorted(m for m in r.columns if m)
    ratio_fast, ratio_slow = r.loc[fast, small] / r.loc[fast, large], r.loc[slow, small] / r.loc[slow, large]
    at_fast = {seg: w.xs((fast, seg), level=SET_KEYS[:2]) for seg in (small, large)}
    line_small, line_large = (float(at_fast[s]["line_busy"].median()) for s in (small, large))
    tgtd_small = float(at_fast[small]["tgtd_busy"].median())
    big = max(w.index.get_level_values("bs_bytes"))
    excess = {
        link: w.loc[(link, small, big), "lat_mean_ms"] / w.loc[(link, large, big), "lat_mean_ms"] - 1
        for link in (fast, slow)
    }
    iperf_short = ratio_fast < IPERF_SHORT_FRACTION and abs(ratio_slow - 1) <= IPERF_SAME_FRACTION
    return Readings(
        float(ratio_fast),
        float(ratio_slow),
        line_small,
        line_large,
        tgtd_small,
        float(excess[fast]),
        float(excess[slow]),
        line_binds=bool(iperf_short and line_small >= BUSY and line_small > line_large),
        hosts_bind=bool(tgtd_small >= BUSY and line_small < BUSY),
        replicated=bool(excess[fast] > REPLICATION_EXCESS and excess[slow] < excess[fast]),
    )


def for_people(w: pd.DataFrame) -> pd.DataFrame:
    """:func:`writes` with human headers."""
    t = w.reset_index()
    return pd.DataFrame(
        {
            "Link (Mbit/s)": t["link_mbps"].map(lambda v: f"{v:,.0f}"),
            "Segment size (KiB)": (t["max_recv_data_segment_bytes"] // BYTES_PER_KIB).astype(int),
            "Write size (KiB)": (t["bs_bytes"] // BYTES_PER_KIB).astype(int),
            "Mean latency (ms)": t["lat_mean_ms"],
            "Delay line busy (CPU s per s)": t["line_busy"],
            "tgtd busy (CPU s per s)": t["tgtd_busy"],
            "Runs": t["runs"].astype(int),
        }
    )


# ---- design 2: each write captured at both ends of the line at once -----------------------------
# Thresholds as data/preregistered/lab-iscsi-2026-segments2/README.md declares them.

EXPLAINED_SHARE = 0.5  # a place explains the miss when it holds at least half the latency difference
MIN_MISS_MS = 0.3  # sizes whose latency difference between the sets is smaller have no miss to explain
SPLIT_COLUMNS = ["before_line_ms", "in_line_ms", "at_tgtd_ms"]


def _between_sets(frame: pd.DataFrame, column: str, at: tuple[Any, ...], small: int, large: int) -> float:
    """``column`` of the small set less the large set's, at the index prefix ``at`` (sets next)."""
    return float(frame.loc[(*at[:2], small, *at[2:]), column] - frame.loc[(*at[:2], large, *at[2:]), column])


def split(ds: Measurements) -> pd.DataFrame:
    """Per rate and size: the small set's latency over the large set's, and where the difference lies (ms).

    From the captures at both ends (medians per captured run, small set minus large set):
    ``before_line_ms``, the Data-Out spread in excess of the wire time as it left the initiator
    (libiscsi and its TCP); ``in_line_ms``, the extra spread the line added on the way to the
    target; ``at_tgtd_ms``, the target's time from the last Data-Out to the response. The latency
    difference is of fio's mean latencies over the replicated runs.
    """
    caps = read_time.captured(ds)
    caps = caps[caps["rw"] == "write"].set_index(["link_mbps", "kib", "segment_kib", "end"])
    means = writes(ds).reset_index()
    means["kib"], means["segment_kib"] = (
        means["bs_bytes"] // BYTES_PER_KIB,
        means["max_recv_data_segment_bytes"],
    )
    means["segment_kib"] //= BYTES_PER_KIB
    means = means.set_index(["link_mbps", "kib", "segment_kib"])
    small, large = sorted(set(caps.index.get_level_values("segment_kib")))
    rows = []
    for link, kib in sorted({(i[0], i[1]) for i in caps.index}):
        before = _between_sets(caps, "spread_excess_ms", (link, kib, "initiator"), small, large)
        rows.append(
            {
                "link_mbps": link,
                "kib": kib,
                "latency_diff_ms": _between_sets(means, "lat_mean_ms", (link, kib), small, large),
                "before_line_ms": before,
                "in_line_ms": _between_sets(caps, "spread_excess_ms", (link, kib, "target"), small, large)
                - before,
                "at_tgtd_ms": _between_sets(caps, "target_ms", (link, kib, "target"), small, large),
            }
        )
    return pd.DataFrame(rows)


def places(s: pd.DataFrame) -> pd.Series:
    """Per row of :func:`split`: the places holding at least half the difference ('none'; 'no miss')."""

    def one(r: pd.Series) -> str:
        miss = r["latency_diff_ms"]
        if miss <= MIN_MISS_MS:
            return "no miss to explain"
        held = [c.removesuffix("_ms") for c in SPLIT_COLUMNS if r[c] >= EXPLAINED_SHARE * miss]
        return ", ".join(held) or "none"

    return s.apply(one, axis=1)


def split_for_people(s: pd.DataFrame) -> pd.DataFrame:
    """:func:`split` with :func:`places`, human headers."""
    return pd.DataFrame(
        {
            "Link (Mbit/s)": s["link_mbps"].map(lambda v: f"{v:,.0f}"),
            "Write size (KiB)": s["kib"].astype(int),
            "8 KiB set slower by (ms)": s["latency_diff_ms"],
            "Before the line (ms)": s["before_line_ms"],
            "In the line (ms)": s["in_line_ms"],
            "At tgtd (ms)": s["at_tgtd_ms"],
            "Where at least half of it shows": places(s),
        }
    )


# ---- the same design on the compiled delay line -------------------------------------------------
# Thresholds as data/preregistered/lab-iscsi-2026-segments3/README.md declares them.

LINE_GONE_SHARE = 0.5  # the line's part is gone below half of what the Python line held


def line_compared(python_line: pd.DataFrame, compiled_line: pd.DataFrame) -> pd.DataFrame:
    """Where the Python line's sweep had a miss: the two declared readings of the compiled line's sweep.

    Both arguments are :func:`split` frames. ``line_part_gone``: the compiled line's "in the line"
    is under half the Python line's; ``miss_shrank``: the latency difference fell by at least half
    the Python line's "in the line".
    """
    before = python_line.set_index(["link_mbps", "kib"])
    after = compiled_line.set_index(["link_mbps", "kib"])
    missed = before[before["latency_diff_ms"] > MIN_MISS_MS]
    out = pd.DataFrame(
        {
            "diff_python_ms": missed["latency_diff_ms"],
            "diff_compiled_ms": after["latency_diff_ms"].reindex(missed.index),
            "in_line_python_ms": missed["in_line_ms"],
            "in_line_compiled_ms": after["in_line_ms"].reindex(missed.index),
        }
    )
    out["line_part_gone"] = out["in_line_compiled_ms"] < LINE_GONE_SHARE * out["in_line_python_ms"]
    shrink = out["diff_python_ms"] - out["diff_compiled_ms"]
    out["miss_shrank"] = shrink >= LINE_GONE_SHARE * out["in_line_python_ms"]
    return out.reset_index()


def line_compared_for_people(c: pd.DataFrame) -> pd.DataFrame:
    """:func:`line_compared` with human headers."""
    held = {True: "yes", False: "no"}
    return pd.DataFrame(
        {
            "Link (Mbit/s)": c["link_mbps"].map(lambda v: f"{v:,.0f}"),
            "Write size (KiB)": c["kib"].astype(int),
            "8 KiB set slower by, Python line (ms)": c["diff_python_ms"],
            "8 KiB set slower by, compiled line (ms)": c["diff_compiled_ms"],
            "In the line, Python (ms)": c["in_line_python_ms"],
            "In the line, compiled (ms)": c["in_line_compiled_ms"],
            "Line's part gone": c["line_part_gone"].map(held),
            "Miss shrank with it": c["miss_shrank"].map(held),
        }
    )
