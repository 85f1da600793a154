"""Print the lab fit's coefficients and the held-out error table (issue 13), from the committed dataset.

PYTHONPATH=src .venv/bin/python benchmarks/lab_validation.py [data/raw/lab-iscsi-2026] [--goal-pct 5]
    [--confirm data/raw/lab-iscsi-2026-confirm data/raw/lab-iscsi-2026-confirm2]
    [--second data/raw/lab-iscsi-2026-confirm3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from iscsi_report.analyses import lab


def main() -> None:
    """Load, fit, validate, print."""
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "raw_dir", nargs="?", default=str(Path(__file__).resolve().parents[1] / "data/raw/lab-iscsi-2026")
    )
    ap.add_argument("--goal-pct", type=float, default=5.0)
    ap.add_argument(
        "--confirm",
        nargs="*",
        default=[
            str(Path(__file__).resolve().parents[1] / "data/raw" / name)
            for name in ("lab-iscsi-2026-confirm", "lab-iscsi-2026-confirm2")
        ],
        help="the first declared model's confirmation sweeps (none: skip)",
    )
    ap.add_argument(
        "--second",
        nargs="*",
        default=[str(Path(__file__).resolve().parents[1] / "data/raw/lab-iscsi-2026-confirm3")],
        help="the second declared model's confirmation sweeps (none: skip)",
    )
    args = ap.parse_args()
    t0 = time.monotonic()
    data = lab.load(args.raw_dir)
    rows = lab.write_fit_rows(lab.features(data))
    t1 = time.monotonic()
    v = lab.validate(rows)
    t2 = time.monotonic()
    pd.set_option("display.width", 200)
    print("coefficients (primary model, fit on design_role=fit rows, HC3 95% CI):")
    print(lab.coefficients(rows[rows["design_role"] == "fit"]).round(3).to_string(index=False))
    print("\nmedian absolute held-out error of per-write latency (%), per fold type:")
    print(lab.goal_met(v, args.goal_pct).round(2).to_string(index=False))
    print(f"\nvariants chosen by the nested selection: {sorted(set(v.chosen.values()))}")
    print(f"load {t1 - t0:.1f} s, validation {t2 - t1:.1f} s, {len(rows)} fit rows")
    if args.confirm:
        sweeps = {Path(p).name: lab.load(p) for p in args.confirm}
        preds = {
            n: lab.confirmation_predictions(rows, lab.write_fit_rows(lab.features(d)))
            for n, d in sweeps.items()
        }
        print("\nfirst declared model, fitted once on every first-sweep row (HC3 95% CI):")
        print(lab.confirmation_coefficients(rows).round(4).to_string(index=False))
        report(preds, sweeps, args.goal_pct, lab.CONFIRMATION)
    if args.second:
        raw = Path(args.raw_dir).parent
        given = {Path(args.raw_dir).name: data}  # the first sweep, already loaded above
        training = {n: given[n] if n in given else lab.load(raw / n) for n in lab.SECOND_TRAINING}
        train = lab.second_training(training)
        sweeps = {Path(p).name: lab.load(p) for p in args.second}
        preds = {n: lab.second_predictions(rows, train, lab.host_rows(d)) for n, d in sweeps.items()}
        where = " and ".join(lab.SECOND_TRAINING)
        print(f"\nsecond declared model, fitted once on {len(train)} runs of {where} (HC3 95% CI):")
        print(lab.second_coefficients(train).round(4).to_string(index=False))
        report(preds, sweeps, args.goal_pct, lab.SECOND)


def report(
    preds: dict[str, pd.DataFrame], sweeps: dict[str, lab.LabData], goal_pct: float, declared: str
) -> None:
    """Print one prospective test: the sweeps' table, then each sweep's errors by what is new."""
    print(f"\nconfirmation sweeps of {declared!r} (median absolute error, %):")
    print(lab.confirmation_table(preds, sweeps, goal_pct, declared).round(2).T.to_string())
    for name, pred in preds.items():
        summ = lab.confirmation_summary(pred)
        print(f"\n{name}: by what is new")
        print(summ.round(2).to_string(index=False))
        print(lab.rule_findings(summ, goal_pct, declared))


if __name__ == "__main__":
    main()
