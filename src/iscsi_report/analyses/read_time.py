"""Where a large read's missing host time goes: the target's time before its first Data-In.

The engine forecasts reads from writes and fell short on the largest reads (issue 21). The reads
diagnosis (``lab run --reads``) captured each read at both ends of the line at once. This module
reads those captures. Per command, it finds the target's time from the command's arrival to its
first Data-In leaving (a read), or from the last Data-Out's arrival to the response leaving (a
write: the store's write). It then sets them beside the fio means, sweep by sweep.

The three sweeps differ only in tgtd's allocator settings: its environment, as each manifest
records it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from iscsi_report.core import labels
from iscsi_report.core.measurements import Measurements
from iscsi_report.core.units import BITS_PER_BYTE, BITS_PER_MBIT, BYTES_PER_KIB, MS_PER_S

AT_TARGET = f"{labels.AT_TARGET_SUFFIX}.tsv"  # the file-name ending of a capture taken on the target's side
DATA_PDU = {"read": "data_in", "write": "data_out"}
ENV_KEY = "tgtd_environment"  # the manifest's record of tgtd's environment (lab.reads_sweep)


OPERATION_COLUMNS = ["t_cmd", "t_first", "t_last", "t_end", "first_bytes", "data_bytes"]
_NO_PDUS = (np.empty(0), np.empty(0, dtype=np.int64))  # a command with no PDU of a kind


def _by_itt(pdus: pd.DataFrame) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per task tag: the PDUs' times (s, ascending, ties in capture order) and data segment bytes."""
    ordered = pdus.sort_values(["itt", "time_epoch_s"], kind="stable")
    itt = ordered["itt"].to_numpy()
    times, sizes = ordered["time_epoch_s"].to_numpy(), ordered["data_segment_bytes"].to_numpy()
    starts = np.flatnonzero(np.r_[True, itt[1:] != itt[:-1]]) if len(itt) else np.empty(0, dtype=np.int64)
    ends = np.r_[starts[1:], len(itt)]
    return {int(itt[i]): (times[i:j], sizes[i:j]) for i, j in zip(starts, ends, strict=True)}


def _from(kept: tuple[np.ndarray, np.ndarray], t_s: float) -> tuple[np.ndarray, np.ndarray]:
    """The PDUs of one task tag at or after ``t_s`` (its times are ascending)."""
    times, sizes = kept
    first = int(np.searchsorted(times, t_s, side="left"))
    return times[first:], sizes[first:]


def _operation(t_cmd: float, data: tuple[np.ndarray, np.ndarray], resp_s: np.ndarray) -> dict[str, float]:
    """One command's row from its data PDUs and responses at or after it."""
    times, sizes = data
    t_last = float(times[-1]) if len(times) else np.nan
    return {
        "t_cmd": t_cmd,
        "t_first": float(times[0]) if len(times) else np.nan,
        "t_last": t_last,
        "t_end": float(resp_s[0]) if len(resp_s) else t_last,
        "first_bytes": float(sizes[0]) if len(sizes) else np.nan,
        "data_bytes": float(sizes.sum()),
    }


def operations(pdus: pd.DataFrame) -> pd.DataFrame:
    """One row per SCSI command of a capture: its PDU times (s), the data PDUs' bytes and count.

    A command's PDUs are those of its task tag from its own time on; the PDUs are grouped by tag
    once, so a capture is read in one pass rather than once per command.
    """
    pdus = pdus[pdus["time_epoch_s"].notna()]  # a PDU with no time is at or after no command
    commands = pdus[pdus["pdu"] == "command"].sort_values("time_epoch_s")
    data = _by_itt(pdus[pdus["pdu"].isin(DATA_PDU.values())])
    resp = _by_itt(pdus[pdus["pdu"] == "response"])
    rows = [
        _operation(
            float(t_cmd),
            _from(data.get(itt, _NO_PDUS), t_cmd),
            _from(resp.get(itt, _NO_PDUS), t_cmd)[0],
        )
        for itt, t_cmd in zip(commands["itt"].tolist(), commands["time_epoch_s"].tolist(), strict=True)
    ]
    out = pd.DataFrame(rows, columns=OPERATION_COLUMNS)
    out["t_next"] = out["t_cmd"].shift(-1)
    return out


def target_ms(ops: pd.DataFrame, rw: str) -> pd.Series:
    """At the target: command to first Data-In (a read), or last Data-Out to the response (a write), ms."""
    gap = ops["t_first"] - ops["t_cmd"] if rw == "read" else ops["t_end"] - ops["t_last"]
    return gap * MS_PER_S


def spread_excess_ms(ops: pd.DataFrame, link_mbps: float) -> pd.Series:
    """First to last data PDU less the wire time of the bytes after the first at the link rate, ms."""
    wire_s = (ops["data_bytes"] - ops["first_bytes"]) * BITS_PER_BYTE / (link_mbps * BITS_PER_MBIT)
    return (ops["t_last"] - ops["t_first"] - wire_s) * MS_PER_S


def _of_size(kib: int, sizes_kib: tuple[int, ...] | None) -> bool:
    """A size among ``sizes_kib`` (None: every size)."""
    return sizes_kib is None or kib in sizes_kib


def captured(ds: Measurements, sizes_kib: tuple[int, ...] | None = None) -> pd.DataFrame:
    """Medians per captured run (of ``sizes_kib``; None: all): point, direction, size, end, times (ms)."""
    rows = []
    for f in ds.select("tshark"):
        lab = f.labels
        if not _of_size(int(lab["bs_bytes"]) // BYTES_PER_KIB, sizes_kib):
            continue
        at_target = f.rel.endswith(AT_TARGET)
        ops = operations(ds.tshark(f).pdus)
        row = {
            "one_way_ms": float(lab["one_way_delay_ms"]),
            "link_mbps": float(lab["link_mbps"]),
            "rw": str(lab["rw"]),
            "kib": int(lab["bs_bytes"]) // BYTES_PER_KIB,
            "segment_kib": int(lab["max_recv_data_segment_bytes"]) // BYTES_PER_KIB,
            "end": "target" if at_target else "initiator",
            "ios": len(ops),
            "spread_excess_ms": float(spread_excess_ms(ops, float(lab["link_mbps"])).median()),
        }
        if at_target:
            row["target_ms"] = float(target_ms(ops, str(lab["rw"])).median())
        else:
            row["latency_ms"] = float(((ops["t_end"] - ops["t_cmd"]) * MS_PER_S).median())
        rows.append(row)
    return pd.DataFrame(rows).sort_values(
        ["one_way_ms", "rw", "kib", "segment_kib", "end"], ignore_index=True
    )


def fio_means(ds: Measurements, sizes_kib: tuple[int, ...] | None = None) -> pd.DataFrame:
    """Median over replicates of fio's mean latency (ms): iSCSI runs per point, and local fio of the LUN."""
    rows = []
    for f in ds.select("fio"):
        if f.labels.get("captured") or not _of_size(int(f.labels["bs_bytes"]) // BYTES_PER_KIB, sizes_kib):
            continue
        local = f.side == "local"
        rows.append(
            {
                "where": "local" if local else "iscsi",
                "one_way_ms": np.nan if local else float(f.labels["one_way_delay_ms"]),
                "rw": str(f.labels["rw"]),
                "kib": int(f.labels["bs_bytes"]) // BYTES_PER_KIB,
                "mean_ms": float(ds.fio(f).jobs.iloc[0]["lat_mean_ms"]),
            }
        )
    keys = ["where", "one_way_ms", "rw", "kib"]
    out: pd.DataFrame = pd.DataFrame(rows).groupby(keys, dropna=False, as_index=False)[["mean_ms"]].median()
    return out


def allocator(ds: Measurements) -> str:
    """tgtd's allocator settings as the manifest records them ("glibc's defaults" when none were set)."""
    env = ds.lab.get(ENV_KEY) or {}
    return " ".join(f"{k}={v}" for k, v in sorted(env.items())) or "glibc's defaults"


def sweep_rows(ds: Measurements, sizes_kib: tuple[int, ...]) -> pd.DataFrame:
    """Per point and size: the target's read and write times, and fio's read mean, under one setting."""
    caps = captured(ds, sizes_kib)
    at = caps[caps["end"] == "target"].set_index(["one_way_ms", "rw", "kib"])["target_ms"]
    means = fio_means(ds, sizes_kib)
    reads = means[(means["where"] == "iscsi") & (means["rw"] == "read")].set_index(["one_way_ms", "kib"])
    rows = []
    for one_way in sorted(set(caps["one_way_ms"])):
        for kib in sizes_kib:
            rows.append(
                {
                    "sweep": ds.name,
                    "allocator": allocator(ds),
                    "one_way_ms": one_way,
                    "kib": kib,
                    "read_target_ms": float(at.loc[(one_way, "read", kib)]),
                    "write_target_ms": float(at.loc[(one_way, "write", kib)]),
                    "read_mean_ms": float(reads.loc[(one_way, kib), "mean_ms"]),
                }
            )
    return pd.DataFrame(rows)


def table(sweeps: list[Measurements], sizes_kib: tuple[int, ...]) -> pd.DataFrame:
    """:func:`sweep_rows` of every sweep, one after another."""
    return pd.concat([sweep_rows(ds, sizes_kib) for ds in sweeps], ignore_index=True)


def for_people(t: pd.DataFrame) -> pd.DataFrame:
    """The table with human headers."""
    return t.rename(
        columns={
            "sweep": "Sweep",
            "allocator": "tgtd's allocator",
            "one_way_ms": "One-way delay (ms)",
            "kib": "Size (KiB)",
            "read_target_ms": "Read: command to first Data-In at the target (ms)",
            "write_target_ms": "Write: last Data-Out to response at the target (ms)",
            "read_mean_ms": "Read: mean latency (ms)",
        }
    )
