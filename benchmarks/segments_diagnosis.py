"""The segments diagnosis (data/preregistered/lab-iscsi-2026-segments/README.md), read as declared.

PYTHONPATH=src .venv/bin/python benchmarks/segments_diagnosis.py [--sweep lab-iscsi-2026-segments]
    [--compare-to lab-iscsi-2026-segments2]

Prints iperf3's received rate per point and message size (medians of the replicates), per write
configuration the mean latency and how busy the delay line and tgtd were (CPU seconds per wall
second, median over replicates), then each declared reading (analyses.segment_cost, which the
Forecasts chapter shows too).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from iscsi_report.analyses import segment_cost as sc
from iscsi_report.core.measurements import open_dataset

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> None:
    """Print the tables and the readings."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", default="lab-iscsi-2026-segments")
    ap.add_argument(
        "--compare-to", help="a design-2 sweep on the Python line (segments3's readings against segments2)"
    )
    args = ap.parse_args(argv)
    ds = open_dataset(ROOT / "data" / "raw" / args.sweep)
    r, w = sc.rates(ds), sc.writes(ds)
    print("iperf3 received Mbit/s (message bytes; 0 = default):")
    print(r.round(1).to_string())
    print("writes:")
    print(w.round(3).to_string())
    got = sc.readings(r, w)
    print(
        f"1a iperf3 small/large: {got.iperf_ratio_fast:.3f} fast, {got.iperf_ratio_slow:.3f} slow\n"
        f"1b delay line busy, small set at the fast link: {got.line_busy_small:.2f} "
        f"(large set {got.line_busy_large:.2f})\n"
        f"reading 1, the line's packet rate binds: {got.line_binds}\n"
        f"reading 2, the hosts bind (tgtd busy {got.tgtd_busy_small:.2f}): {got.hosts_bind}\n"
        f"replication at the largest size: {got.excess_fast:+.1%} fast, {got.excess_slow:+.1%} slow -> "
        f"{got.replicated}"
    )
    if "captured" in sc.lab.fio_runs(ds):  # design 2: the split by where the miss shows
        here = sc.split(ds)
        print("split (ms):")
        print(sc.split_for_people(here).round(3).to_string(index=False))
        if args.compare_to:
            before = sc.split(open_dataset(ROOT / "data" / "raw" / args.compare_to))
            print(f"against {args.compare_to}:")
            print(sc.line_compared_for_people(sc.line_compared(before, here)).round(3).to_string(index=False))


if __name__ == "__main__":
    main(sys.argv[1:])
