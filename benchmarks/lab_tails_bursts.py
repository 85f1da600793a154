"""The multi-packet trip model on a jitter sweep, beside the first model and the baselines (issue 22).

PYTHONPATH=src .venv/bin/python benchmarks/lab_tails_bursts.py [--sweep lab-iscsi-2026-jitter]
    [--label post-hoc|pre-registered] [--realised DESIGN]

``--realised N`` prints instead what the line realised in ping under each shape of jitter design
``N`` against the round trip the shape implies (today's ping plus two independent extras).

On the first jitter sweep (the default) the model is post hoc: designed after seeing the sweep, not
a test. On the second (``--sweep lab-iscsi-2026-jitter2 --label pre-registered``) it is the test
that sweep's pre-registration describes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from iscsi_report.analyses import lab_tails as tails
from iscsi_report.core import distribution
from iscsi_report.lab import jitter, jitter_sweep

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
SCORES = ("pinball_p50_ms", "pinball_p90_ms", "pinball_p99_ms", "crps_ms")
IMPLIED_DRAWS = 200_000  # simulated round trips per shape


def extras(doc: dict, size: int, rng: np.random.Generator) -> np.ndarray:
    """Independent draws of a shape's one-way extra (a trace: its points drawn with replacement)."""
    if doc["shape"] == "trace":
        return rng.choice(np.asarray(doc["trace_ms"], float), size)
    return np.asarray(jitter.distribution(doc).rvs(size, random_state=rng), float)


def realised(sweep: str, design: int) -> None:
    """Per shape: ping's realised mean and p99 against the implied, their KS distance, ping's lag-1."""
    ds = tails.load(RAW / sweep)
    fixed, _ = tails.ping_rtt(ds, tails.REFERENCE)
    rng = np.random.default_rng(0)
    for name, shape in jitter_sweep.shapes(design, RAW).items():
        if shape is None:
            print(f"{name}: mean {fixed.mean():.3f} ms, p99 {np.quantile(fixed, 0.99):.2f} ms")
            continue
        rtt, _ = tails.ping_rtt(ds, name)
        drawn = extras(shape.doc, IMPLIED_DRAWS, rng) + extras(shape.doc, IMPLIED_DRAWS, rng)
        implied = rng.choice(fixed, IMPLIED_DRAWS) + drawn
        ks = stats.ks_2samp(rtt, implied).statistic
        print(
            f"{name}: realised {rtt.mean():.3f} / {np.quantile(rtt, 0.99):.2f} ms, implied "
            f"{implied.mean():.3f} / {np.quantile(implied, 0.99):.2f} ms, KS {ks:.3f}, "
            f"lag-1 {distribution.ping_correlation(rtt):.3f}"
        )


def main() -> None:
    """Score both models and print the summary, the paired differences, the rule and the p99 misses."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", default="lab-iscsi-2026-jitter")
    ap.add_argument("--label", choices=("post-hoc", "pre-registered"), default="post-hoc")
    ap.add_argument("--realised", type=int, metavar="DESIGN", help="the line's realised ping per shape")
    args = ap.parse_args()
    if args.realised:
        realised(args.sweep, args.realised)
        return
    method, note = (
        (tails.POST_HOC, tails.POST_HOC_NOTE)
        if args.label == "post-hoc"
        else (tails.BURSTS, tails.PREREGISTERED_NOTE)
    )
    ds = tails.load(RAW / args.sweep)
    t0 = time.monotonic()
    combined, table, found = tails.bursts_test(ds, method, note)
    seconds = time.monotonic() - t0
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.round(3))
        for column in SCORES:
            baselines = (tails.SHIFTED, tails.RESCALED, tails.ENGINE)
            diffs = tails.paired(combined, column, engine=method, baselines=baselines)
            for base, (med, lo, hi) in diffs.items():
                print(f"{column}: {method} less {base}: {med:+.3f} [{lo:+.3f}, {hi:+.3f}]")
        print(found["bursts_words"])
        mine = combined[combined["method"] == method]
        columns = ["jitter", "bs_bytes", "r2t_window", "measured_p99_ms", "p99_ms", "p99_error_pct"]
        print(mine[columns].round(2))
    print(f"scored in {seconds:.1f} s")


if __name__ == "__main__":
    main()
