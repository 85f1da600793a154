"""Issue 21, the reads diagnosis: where a large read's extra host time lands (both ends captured).

Reads the sweep ``lab run --reads`` wrote (default ``data/raw/lab-iscsi-2026-reads``) and prints,
per network point, direction and size, the medians over the captured I/Os of the quantities its
pre-registration (``data/preregistered/lab-iscsi-2026-reads/README.md``) named:

- ``latency_ms``: command to the last PDU of the operation, at the initiator;
- ``target_first_ms``: at the target, the command's arrival to its first Data-In leaving (reads),
  or the last Data-Out's arrival to the response leaving (writes: the store's write);
- ``spread_excess_ms`` at each end: first to last Data-In (reads) or Data-Out (writes), less the
  wire time of the bytes after the first PDU at the link rate;
- ``initiator_after_ms``: at the initiator, the operation's last PDU to the next command;

then the step from 2,048 KiB to 3,328 KiB in each, beside the fio means of the plain runs, iperf3
in both directions and local fio of the LUN's file.

Run from the project root:
    PYTHONPATH=src .venv/bin/python benchmarks/reads_diagnosis.py [DATASET_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from iscsi_report.core.ingest import iperf3
from iscsi_report.core.measurements import Measurements, open_dataset
from iscsi_report.core.units import BITS_PER_BYTE, BITS_PER_MBIT, BYTES_PER_KIB, MS_PER_S
from iscsi_report.lab.sweep import AT_TARGET

DEFAULT = Path(__file__).resolve().parents[1] / "data" / "raw" / "lab-iscsi-2026-reads"
BELOW_KIB, ABOVE_KIB = 2048, 3328  # the sizes either side of the step (BENCHMARKS.md, issue 21)
DATA = {"read": "data_in", "write": "data_out"}


def operations(pdus: pd.DataFrame) -> pd.DataFrame:
    """One row per SCSI command of the capture: its PDU times (s) and the data PDUs' bytes."""
    rows = []
    commands = pdus[pdus["pdu"] == "command"].sort_values("time_epoch_s")
    for _, cmd in commands.iterrows():
        mine = pdus[(pdus["itt"] == cmd["itt"]) & (pdus["time_epoch_s"] >= cmd["time_epoch_s"])]
        data = mine[mine["pdu"].isin(DATA.values())].sort_values("time_epoch_s")
        resp = mine[mine["pdu"] == "response"]
        end = resp["time_epoch_s"].min() if len(resp) else data["time_epoch_s"].max()
        rows.append(
            {
                "itt": cmd["itt"],
                "t_cmd": cmd["time_epoch_s"],
                "t_first": data["time_epoch_s"].min(),
                "t_last": data["time_epoch_s"].max(),
                "t_end": end,
                "first_bytes": float(data["data_segment_bytes"].iloc[0]) if len(data) else np.nan,
                "data_bytes": float(data["data_segment_bytes"].sum()),
                "data_pdus": len(data),
            }
        )
    out = pd.DataFrame(rows)
    out["t_next"] = out["t_cmd"].shift(-1)
    return out


def one_side(ops: pd.DataFrame, rw: str, link_mbps: float, at_target: bool) -> pd.DataFrame:
    """Per operation, the pre-registered quantities (ms) seen from one end of the line."""
    wire_s = (ops["data_bytes"] - ops["first_bytes"]) * BITS_PER_BYTE / (link_mbps * BITS_PER_MBIT)
    out = pd.DataFrame({"spread_excess_ms": (ops["t_last"] - ops["t_first"] - wire_s) * MS_PER_S})
    if at_target:
        pre = ops["t_first"] - ops["t_cmd"] if rw == "read" else ops["t_end"] - ops["t_last"]
        out["target_first_ms"] = pre * MS_PER_S
    else:
        out["latency_ms"] = (ops["t_end"] - ops["t_cmd"]) * MS_PER_S
        out["initiator_after_ms"] = (ops["t_next"] - ops["t_end"]) * MS_PER_S
    return out


def captures(ds: Measurements) -> pd.DataFrame:
    """The medians of each captured run, one row per (point, direction, size, end of the line)."""
    rows = []
    for f in ds.select("tshark"):
        lab = f.labels
        at_target = f.rel.endswith(f"{AT_TARGET}.tsv")
        ops = operations(ds.tshark(f).pdus)
        side = one_side(ops, str(lab["rw"]), float(lab["link_mbps"]), at_target)
        key = {
            "one_way_ms": lab["one_way_delay_ms"],
            "link_mbps": lab["link_mbps"],
            "rw": lab["rw"],
            "kib": int(lab["bs_bytes"]) // BYTES_PER_KIB,
            "end": "target" if at_target else "initiator",
            "ios": len(side),
        }
        rows.append(key | side.median(numeric_only=True).to_dict())
    return pd.DataFrame(rows).sort_values(["one_way_ms", "rw", "kib", "end"])


def fio_means(ds: Measurements) -> pd.DataFrame:
    """Mean latency (ms) of the plain iSCSI runs and of local fio on the LUN's file, by size."""
    rows = []
    for f in ds.select("fio"):
        lab = f.labels
        if lab.get("captured"):
            continue
        j = ds.fio(f).jobs.iloc[0]
        where = "local" if f.side == "local" else f"{lab['one_way_delay_ms']:g} ms"
        rows.append(
            {
                "where": where,
                "rw": lab["rw"],
                "kib": int(lab["bs_bytes"]) // BYTES_PER_KIB,
                "ms": j["lat_mean_ms"],
            }
        )
    t = pd.DataFrame(rows).groupby(["where", "rw", "kib"])["ms"].median().unstack("kib")
    return t


def iperf_rates(ds: Measurements) -> pd.DataFrame:
    """iperf3's received rate (Mbit/s) per point and direction."""
    rows = []
    for f in ds.select("iperf3"):
        rate = iperf3.summary(ds.iperf3(f))["received_bps"] / BITS_PER_MBIT
        rows.append(
            {
                "one_way_ms": f.labels["one_way_delay_ms"],
                "link_mbps": f.labels["link_mbps"],
                "reverse": bool(f.labels.get("reverse", False)),
                "received_mbit_s": rate,
            }
        )
    return pd.DataFrame(rows).sort_values(["one_way_ms", "reverse"])


def steps(caps: pd.DataFrame) -> pd.DataFrame:
    """Each quantity at 3,328 KiB less at 2,048 KiB, per point, direction and end."""
    value_cols = [
        c for c in ("latency_ms", "target_first_ms", "spread_excess_ms", "initiator_after_ms") if c in caps
    ]
    keyed = caps.set_index(["one_way_ms", "rw", "end", "kib"])[value_cols]
    return (keyed.xs(ABOVE_KIB, level="kib") - keyed.xs(BELOW_KIB, level="kib")).dropna(how="all", axis=1)


def main(folder: Path) -> None:
    """Print the captures' medians, their steps, the fio means and iperf3 both ways."""
    ds = open_dataset(folder)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 20)
    caps = captures(ds)
    print("captured I/Os, medians (ms):")
    print(caps.round(3).to_string(index=False))
    print(f"\nstep from {BELOW_KIB} KiB to {ABOVE_KIB} KiB (ms):")
    print(steps(caps).round(3).to_string())
    print("\nfio mean latency (ms), median of replicates; local = psync on the LUN's file:")
    print(fio_means(ds).round(3).to_string())
    print("\niperf3 received rate (Mbit/s):")
    print(iperf_rates(ds).round(1).to_string(index=False))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
