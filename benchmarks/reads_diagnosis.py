"""Issue 21, the reads diagnosis: where a large read's extra host time lands (both ends captured).

Reads a sweep of ``lab run --reads N`` (default ``data/raw/lab-iscsi-2026-reads``) through
:mod:`iscsi_report.analyses.read_time` and prints, per network point, direction and size, the
medians over the captured I/Os of the quantities the pre-registration
(``data/preregistered/lab-iscsi-2026-reads/README.md``) named:

- ``latency_ms``: command to the last PDU of the operation, at the initiator;
- ``target_ms``: at the target, the command's arrival to its first Data-In leaving (reads), or the
  last Data-Out's arrival to the response leaving (writes: the store's write);
- ``spread_excess_ms`` at each end: first to last data PDU, less the wire time of the bytes after
  the first PDU at the link rate;

then the step from 2,048 KiB to 3,328 KiB in each, the fio means of the plain runs and of local
fio on the LUN's file, and iperf3 in both directions.

Run from the project root:
    PYTHONPATH=src .venv/bin/python benchmarks/reads_diagnosis.py [DATASET_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from iscsi_report.analyses import read_time
from iscsi_report.core.ingest import iperf3
from iscsi_report.core.measurements import Measurements, open_dataset
from iscsi_report.core.units import BITS_PER_MBIT

DEFAULT = Path(__file__).resolve().parents[1] / "data" / "raw" / "lab-iscsi-2026-reads"
BELOW_KIB, ABOVE_KIB = 2048, 3328  # the sizes either side of the step (BENCHMARKS.md, issue 21)


def iperf_rates(ds: Measurements) -> pd.DataFrame:
    """iperf3's received rate (Mbit/s) per point and direction."""
    rows = [
        {
            "one_way_ms": f.labels["one_way_delay_ms"],
            "link_mbps": f.labels["link_mbps"],
            "reverse": bool(f.labels.get("reverse", False)),
            "received_mbit_s": iperf3.summary(ds.iperf3(f))["received_bps"] / BITS_PER_MBIT,
        }
        for f in ds.select("iperf3")
    ]
    return pd.DataFrame(rows).sort_values(["one_way_ms", "reverse"])


def steps(caps: pd.DataFrame) -> pd.DataFrame:
    """Each quantity at 3,328 KiB less at 2,048 KiB, per point, direction and end."""
    cols = [c for c in ("latency_ms", "target_ms", "spread_excess_ms") if c in caps]
    keyed = caps.set_index(["one_way_ms", "rw", "end", "kib"])[cols]
    return (keyed.xs(ABOVE_KIB, level="kib") - keyed.xs(BELOW_KIB, level="kib")).dropna(how="all", axis=1)


def main(folder: Path) -> None:
    """Print the captures' medians, their steps, the fio means and iperf3 both ways."""
    ds = open_dataset(folder)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 20)
    print(f"{ds.name}: tgtd's allocator {read_time.allocator(ds)}")
    caps = read_time.captured(ds)
    print("captured I/Os, medians (ms):")
    print(caps.round(3).to_string(index=False))
    print(f"\nstep from {BELOW_KIB} KiB to {ABOVE_KIB} KiB (ms):")
    print(steps(caps).round(3).to_string())
    print("\nfio mean latency (ms), median of replicates; local = psync on the LUN's file:")
    means = read_time.fio_means(ds)
    print(
        means.pivot_table(index=["where", "one_way_ms", "rw"], columns="kib", values="mean_ms", dropna=False)
        .dropna(how="all")
        .round(3)
        .to_string()
    )
    print("\niperf3 received rate (Mbit/s):")
    print(iperf_rates(ds).round(1).to_string(index=False))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
