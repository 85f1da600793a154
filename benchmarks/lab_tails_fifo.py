"""The simulated first-in, first-out line on the jitter sweeps (issue 22).

PYTHONPATH=src .venv/bin/python benchmarks/lab_tails_fifo.py [--sweep lab-iscsi-2026-jitter4 ...]
    [--ack-every N]

``--ack-every N`` sets how many data packets the target acknowledges at once (default 2; 0: no
acknowledgements, which leaves only the stickiness carried across rounds): a sensitivity check.

On sweeps 2 to 4 the model is post hoc: designed after seeing the fourth jitter sweep's misses, so
no score there is a test. On any later sweep (the fifth, pre-registered) it is scored as declared.
Per sweep: the summary of the FIFO line beside the multi-packet model (the pre-registered one of
sweeps 2 to 4), the first model and both baselines; the FIFO line's paired differences; the issue's
rule; and each shape's p99 misses for both models (before and after).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from iscsi_report.analyses import lab_tails as tails
from iscsi_report.core import distribution

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
SWEEPS = ("lab-iscsi-2026-jitter2", "lab-iscsi-2026-jitter3", "lab-iscsi-2026-jitter4")
SCORES = ("pinball_p50_ms", "pinball_p90_ms", "pinball_p99_ms", "crps_ms")


def report(sweep: str, ack_every: int) -> None:
    """Score one sweep and print its tables."""
    ds = tails.load(RAW / sweep)
    t0 = time.monotonic()
    post_hoc = sweep in SWEEPS  # the sweeps the model was designed on; later ones test it as declared
    method = tails.FIFO if post_hoc else tails.FIFO_DECLARED
    note = tails.FIFO_NOTE if post_hoc else tails.PREREGISTERED_NOTE
    rows = pd.concat([tails.score(ds), tails.score_bursts(ds, tails.BURSTS)], ignore_index=True)
    combined, table, found = tails.fifo_added(ds, rows, method, note, ack_every)
    seconds = time.monotonic() - t0
    print(
        f"== {sweep} ({note}, ack every {ack_every}), {table['targets'].iloc[0]} targets, "
        f"scored in {seconds:.1f} s"
    )
    print(table.round(3).to_string(index=False))
    for column in SCORES:
        diffs = tails.paired(
            combined, column, engine=method, baselines=(tails.BURSTS, tails.SHIFTED, tails.RESCALED)
        )
        for base, (med, lo, hi) in diffs.items():
            print(f"{column}: FIFO less {base}: {med:+.3f} [{lo:+.3f}, {hi:+.3f}]")
    print(found["bursts_words"])
    misses = []
    for shape in sorted(set(combined["jitter"])):
        for shown in (tails.BURSTS, method):
            misses.append({"method": shown} | tails.shape_misses(combined, shown, shape))
    print(pd.DataFrame(misses).round(2).to_string(index=False))
    wide = combined.pivot_table(
        index=["jitter", "bs_bytes", "r2t_window", "measured_p99_ms"],
        columns="method",
        values="p99_error_pct",
    )
    print(wide[[tails.BURSTS, method]].round(1).to_string())


def main() -> None:
    """Score each sweep named (default: the second, third and fourth)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", action="append", help="a sweep under data/raw (repeatable)")
    ap.add_argument("--ack-every", type=int, default=distribution.ACK_EVERY)
    args = ap.parse_args()
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        for sweep in args.sweep or SWEEPS:
            report(sweep, args.ack_every)


if __name__ == "__main__":
    main()
