"""Print the lab fit's coefficients and the held-out error table (issue 13), from the committed dataset.

PYTHONPATH=src .venv/bin/python benchmarks/lab_validation.py [data/raw/lab-iscsi-2026] [--goal-pct 5]
    [--confirm data/raw/lab-iscsi-2026-confirm data/raw/lab-iscsi-2026-confirm2]
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
        help="the confirmation sweeps (none: skip)",
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
        print("\ndeclared model, fitted once on every first-sweep row (HC3 95% CI):")
        print(lab.confirmation_coefficients(rows).round(4).to_string(index=False))
        print("\nconfirmation sweeps (median absolute error, %):")
        print(lab.confirmation_table(rows, sweeps, args.goal_pct).round(2).T.to_string())
        for name, data in sweeps.items():
            new = lab.write_fit_rows(lab.features(data))
            summ = lab.confirmation_summary(lab.confirmation_predictions(rows, new))
            print(f"\n{name}: by what is new")
            print(summ.round(2).to_string(index=False))
            print(lab.rule_findings(summ, args.goal_pct))


if __name__ == "__main__":
    main()
