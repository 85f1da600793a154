"""The forecast protocol on every committed lab sweep (issue 21): calibrate on one, forecast the rest.

PYTHONPATH=src .venv/bin/python benchmarks/forecast_matrix.py [--training lab-iscsi-2026]
    [--sweeps lab-iscsi-2026 lab-iscsi-2026-confirm2 lab-iscsi-2026-confirm3 lab-iscsi-2026-confirm]

The engine fits nothing on any sweep: each forecast uses today's configuration alone. The one
number learned is the engine's own error (its 95 % absolute error on the training sweep), which
widens its intervals; their coverage is then measured on the other sweeps.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab
from iscsi_report.presentation.forecast import interval_text

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
COLUMNS = ["group", "targets", fm.ENGINE, fm.BLOG, fm.BLOG_SCALED]


def main() -> None:
    """Run the protocol over the sweeps and print each table, the paired differences and the coverage."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--training", default="lab-iscsi-2026")
    ap.add_argument(
        "--sweeps",
        nargs="*",
        default=[
            "lab-iscsi-2026",
            "lab-iscsi-2026-confirm2",
            "lab-iscsi-2026-confirm3",
            "lab-iscsi-2026-confirm",
        ],
    )
    args = ap.parse_args()
    pd.set_option("display.width", 200)
    started = time.perf_counter()
    sweeps = {name: lab.load(RAW / name) for name in dict.fromkeys([args.training, *args.sweeps])}
    loaded = time.perf_counter()
    v = fm.verdict(sweeps, args.training)
    print(
        f"loaded {len(sweeps)} sweeps in {loaded - started:.1f} s; the protocol ran in "
        f"{time.perf_counter() - loaded:.1f} s"
    )
    for name, s in v.summaries.items():
        m = v.matrices[name]
        s = s.assign(
            **{
                "vs blog (points)": [interval_text(r, "blog") for _, r in s.iterrows()],
                "vs scaled (points)": [interval_text(r, "scaled") for _, r in s.iterrows()],
            }
        )
        print(f"\n## {name}: {len(m.configurations)} configurations, {len(m.pairs) // 3} pairs")
        print(s[[*COLUMNS, "vs blog (points)", "vs scaled (points)"]].round(2).to_string(index=False))
        if name == v.training:
            error = v.model_error
            print(f"engine's own error, declared from here: {error.value:.2f} % ({error.source.what})")
        else:
            print(f"95 % interval coverage: {v.coverage_pct[name]:.1f} % of pairs")


if __name__ == "__main__":
    main()
