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

from iscsi_report.analyses import lab, lab_validation


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
    v = lab_validation.validate(rows)
    t2 = time.monotonic()
    pd.set_option("display.width", 200)
    print("coefficients (primary model, fit on design_role=fit rows, HC3 95% CI):")
    print(lab.coefficients(rows[rows["design_role"] == "fit"]).round(3).to_string(index=False))
    print("\nmedian absolute held-out error of per-write latency (%), per fold type:")
    print(lab_validation.goal_met(v, args.goal_pct).round(2).to_string(index=False))
    print(f"\nvariants chosen by the nested selection: {sorted(set(v.chosen.values()))}")
    print(f"load {t1 - t0:.1f} s, validation {t2 - t1:.1f} s, {len(rows)} fit rows")
    if args.confirm:
        sweeps = {Path(p).name: lab.load(p) for p in args.confirm}
        print("\nfirst declared model, fitted once on every first-sweep row (HC3 95% CI):")
        print(lab_validation.confirmation_coefficients(rows).round(4).to_string(index=False))
        report(lab_validation.first_test(rows, sweeps, args.goal_pct))
    if args.second:
        raw = Path(args.raw_dir).parent
        given = {Path(args.raw_dir).name: data}  # the first sweep, already loaded above
        training = {n: given[n] if n in given else lab.load(raw / n) for n in lab_validation.SECOND_TRAINING}
        train = lab_validation.second_training(training)
        sweeps = {Path(p).name: lab.load(p) for p in args.second}
        where = " and ".join(lab_validation.SECOND_TRAINING)
        print(f"\nsecond declared model, fitted once on {len(train)} runs of {where} (HC3 95% CI):")
        print(lab_validation.second_coefficients(train).round(4).to_string(index=False))
        report(lab_validation.second_test(rows, train, sweeps, args.goal_pct))


def report(test: lab_validation.ProspectiveTest) -> None:
    """Print one prospective test: the sweeps' table, each sweep's errors by what is new, the verdict."""
    print(f"\nconfirmation sweeps of {test.declared!r} (median absolute error, %):")
    print(test.table.round(2).T.to_string())
    for name, pred in test.preds.items():
        summ = lab_validation.confirmation_summary(pred)
        print(f"\n{name}: by what is new")
        print(summ.round(2).to_string(index=False))
        print(lab_validation.rule_findings(summ, test.goal_pct, test.declared))
    v = test.values()
    print(
        f"\nverdict: {v['which']} {v['name']}, the model {v['verdict']} the rule "
        f"({v['declared']:.2f} % over every configuration, worst group {v['declared_worst']:.2f} %)"
    )


if __name__ == "__main__":
    main()
