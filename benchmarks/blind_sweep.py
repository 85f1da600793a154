"""The pre-registered blind sweeps of issue 21: forecasts frozen before a sweep, then scored.

PYTHONPATH=src .venv/bin/python benchmarks/blind_sweep.py freeze [--design 3] [--engine-version V]
    Every target configuration of the lab's design N (``lab run --confirm N``; 3: the sweep
    lab-iscsi-2026-blind, 4: lab-iscsi-2026-blind2, 5: lab-iscsi-2026-blind3, 6: lab-iscsi-2026-blind4,
    7: lab-iscsi-2026-blind5, 8: lab-iscsi-2026-blind6, 9: lab-iscsi-2026-blind7)
    forecast from the committed sweep lab-iscsi-2026 alone (today chosen by the rule
    ``project --dataset`` uses), with both baselines; written to
    data/preregistered/<sweep>/forecasts.csv. Run and committed before the sweep exists.

PYTHONPATH=src .venv/bin/python benchmarks/blind_sweep.py score [--design 3] [--engine-version V]
    (1) the frozen forecasts against the sweep's measured means; (2) the forecast matrix inside
    the sweep (each settings group as today; the engine's current version unless told). Each
    beside both baselines, with paired intervals.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from iscsi_report.analyses import dataset_forecast as df
from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab
from iscsi_report.core.measurements import open_dataset
from iscsi_report.lab import sweep

ROOT = Path(__file__).resolve().parents[1]
TRAINING = ROOT / "data" / "raw" / "lab-iscsi-2026"
PREREGISTERED = ROOT / "data" / "preregistered"
# design -> the sweep it was run as
SWEEPS = {
    3: "lab-iscsi-2026-blind",
    4: "lab-iscsi-2026-blind2",
    5: "lab-iscsi-2026-blind3",
    6: "lab-iscsi-2026-blind4",
    7: "lab-iscsi-2026-blind5",
    8: "lab-iscsi-2026-blind6",
    9: "lab-iscsi-2026-blind7",
}
SETS = {(65536, 262144): "tgt-libiscsi-imm64k-seg256k", (8192, 8192): "tgt-libiscsi-imm8k-seg8k"}
SHOWN = ["group", "targets", fm.ENGINE, fm.BLOG, fm.BLOG_SCALED]


def targets(design: int) -> list[tuple[dict[str, Any], str]]:
    """(flags as ``project`` takes them, direction) for each configuration ``design`` measures."""
    runs, _ = sweep.design(confirm=design)
    seen: dict[tuple, tuple[dict[str, Any], str]] = {}
    for r in runs:
        if r.captured:
            continue
        combo = {
            "bs": r.bs_bytes,
            "one_way_ms": r.one_way_delay_ms,
            "link_mbps": r.link_mbps,
            "max_outstanding_r2t": r.r2t_window,
            "iscsi_parameters": SETS[(r.immediate_data_bytes, r.max_recv_data_segment_bytes)],
            "queue_depth": r.iodepth,
        }
        seen[(r.rw, *sorted(combo.items()))] = (combo, r.rw)
    return [seen[k] for k in sorted(seen)]


def freeze(design: int, engine_version: int) -> None:
    """Write the frozen forecasts (by ``engine_version``) and print their sha256 (for the README)."""
    ds = open_dataset(TRAINING)
    t0 = time.monotonic()
    errors = df.blind_errors(ROOT / "data" / "raw", PREREGISTERED)  # the engine's own, in every interval
    first = fm.captured_first_r2t_ms(ds) if engine_version >= fm.ROUND_HOST_VERSION else None
    rows = [
        df.frozen_forecast(ds, combo, rw, errors, engine_version, first)  # type: ignore[arg-type]
        for combo, rw in targets(design)
    ]
    out = PREREGISTERED / SWEEPS[design] / "forecasts.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=df.FROZEN_COLUMNS).to_csv(out, index=False, float_format="%.6f")
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    print(f"{len(rows)} targets in {time.monotonic() - t0:.1f} s -> {out.relative_to(ROOT)}\nsha256 {digest}")


def _table(m: fm.Matrix) -> None:
    """Each group's median error per method and the engine's paired differences."""
    s = fm.summary(m)
    print(s[SHOWN].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    for _, r in s.iterrows():
        for base in ("blog", "scaled"):
            lo, hi = r[f"diff_vs_{base}_low"], r[f"diff_vs_{base}_high"]
            verdict = "better" if r[f"better_than_{base}"] else "not better"
            diff = r[f"diff_vs_{base}"]
            print(f"  {r['group']}: engine - {base} {diff:+.2f} [{lo:+.2f}, {hi:+.2f}] {verdict}")


def score(design: int, engine_version: int) -> None:
    """Score the frozen forecasts and the within-sweep matrix on the blind sweep of ``design``."""
    name = SWEEPS[design]
    data = lab.load(ROOT / "data" / "raw" / name)
    frozen = fm.score_frozen(fm.load_frozen(PREREGISTERED / name), data, name)  # its sha256 checked
    print(f"== (1) frozen forecasts from lab-iscsi-2026, {len(frozen.pairs) // 3} targets")
    _table(frozen)
    print(fm.rule_verdict(fm.summary(frozen))[1])
    print(f"coverage of the engine's intervals: {fm.coverage(frozen):.1f} %")
    within = fm.run(data, name, engine_version=engine_version)
    pairs = len(within.pairs) // 3
    print(f"== (2) forecast matrix inside {name} (engine version {engine_version}), {pairs} pairs")
    _table(within)
    print(fm.rule_verdict(fm.summary(within))[1])


def main(argv: list[str]) -> None:
    """freeze | score."""
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=("freeze", "score"))
    ap.add_argument("--design", type=int, choices=sorted(SWEEPS), default=3)
    ap.add_argument("--engine-version", type=int, default=fm.ENGINE_VERSION)
    args = ap.parse_args(argv)
    if args.step == "freeze":
        freeze(args.design, args.engine_version)
    else:
        score(args.design, args.engine_version)


if __name__ == "__main__":
    main(sys.argv[1:])
