"""Print the lab fit's coefficients and the held-out error table (issue 13), from the committed dataset.

PYTHONPATH=src .venv/bin/python benchmarks/lab_validation.py [data/raw/lab-iscsi-2026] [--goal-pct 5]
    [--confirm data/raw/lab-iscsi-2026-confirm]
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
        default=str(Path(__file__).resolve().parents[1] / "data/raw/lab-iscsi-2026-confirm"),
        help="the confirmation sweep ('' to skip)",
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
        new = lab.write_fit_rows(lab.features(lab.load(args.confirm)))
        print("\ndeclared model, fitted once on every first-sweep row (HC3 95% CI):")
        print(lab.confirmation_coefficients(rows).round(4).to_string(index=False))
        print(f"\nconfirmation sweep ({len(new)} runs): median absolute error (%) by what is new:")
        print(
            lab.confirmation_summary(lab.confirmation_predictions(rows, new)).round(2).to_string(index=False)
        )


if __name__ == "__main__":
    main()
