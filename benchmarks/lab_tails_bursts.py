"""The multi-packet trip model on a jitter sweep, beside the first model and the baselines (issue 22).

PYTHONPATH=src .venv/bin/python benchmarks/lab_tails_bursts.py [--sweep lab-iscsi-2026-jitter]
    [--label post-hoc|pre-registered]

On the first jitter sweep (the default) the model is post hoc: designed after seeing the sweep, not
a test. On the second (``--sweep lab-iscsi-2026-jitter2 --label pre-registered``) it is the test
that sweep's pre-registration describes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from iscsi_report.analyses import lab_tails as tails

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
SCORES = ("pinball_p50_ms", "pinball_p90_ms", "pinball_p99_ms", "crps_ms")


def main() -> None:
    """Score both models and print the summary, the paired differences, the rule and the p99 misses."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", default="lab-iscsi-2026-jitter")
    ap.add_argument("--label", choices=("post-hoc", "pre-registered"), default="post-hoc")
    args = ap.parse_args()
    method, note = (
        (tails.POST_HOC, tails.POST_HOC_NOTE)
        if args.label == "post-hoc"
        else (tails.BURSTS, tails.PREREGISTERED_NOTE)
    )
    ds = tails.load(RAW / args.sweep)
    t0 = time.monotonic()
    combined = pd.concat([tails.score(ds), tails.score_bursts(ds, method)], ignore_index=True)
    seconds = time.monotonic() - t0
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(tails.summary(combined, (tails.ENGINE, method, tails.SHIFTED, tails.RESCALED)).round(3))
        for column in SCORES:
            baselines = (tails.SHIFTED, tails.RESCALED, tails.ENGINE)
            diffs = tails.paired(combined, column, engine=method, baselines=baselines)
            for base, (med, lo, hi) in diffs.items():
                print(f"{column}: {method} less {base}: {med:+.3f} [{lo:+.3f}, {hi:+.3f}]")
        print(tails.bursts_verdict(combined, method, note)["bursts_words"])
        mine = combined[combined["method"] == method]
        columns = ["jitter", "bs_bytes", "r2t_window", "measured_p99_ms", "p99_ms", "p99_error_pct"]
        print(mine[columns].round(2))
    print(f"scored in {seconds:.1f} s")


if __name__ == "__main__":
    main()
