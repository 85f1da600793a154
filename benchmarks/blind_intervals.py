"""How often the engine's 95 % intervals hold what the lab's blind sweeps then measured (issue 21).

PYTHONPATH=src .venv/bin/python benchmarks/blind_intervals.py

Per blind sweep (forecasts frozen and committed before it ran): the share of its frozen forecasts
whose interval holds the measured mean, (1) as frozen, from today's measurement error only, and
(2) widened by the engine's own error calibrated on the *other* blind sweep alone (the 95 %
quantile of its absolute errors, combined as ``forecast.half_width_ms`` combines them): a
split-conformal check of what ``project --dataset`` now does with both sweeps' errors. Prints the
quantile the command line uses (both sweeps) too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from iscsi_report.analyses import dataset_forecast as df
from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab

ROOT = Path(__file__).resolve().parents[1]
RAW, PRE = ROOT / "data" / "raw", ROOT / "data" / "preregistered"


def scored(sweep: str) -> pd.DataFrame:
    """The engine's frozen forecasts of one blind sweep beside what it measured."""
    m = fm.score_frozen(fm.load_frozen(PRE / sweep), lab.load(RAW / sweep), sweep)
    return m.pairs[m.pairs["method"] == fm.ENGINE].reset_index(drop=True)


def coverage_pct(rows: pd.DataFrame, own_pct: float) -> float:
    """Share of rows whose interval, widened by ``own_pct`` of the forecast, holds the measured mean."""
    half = np.hypot(rows["ci_high_ms"] - rows["forecast_ms"], own_pct / 100 * rows["forecast_ms"])
    low, high = rows["forecast_ms"] - half, rows["forecast_ms"] + half
    return float(100 * ((low <= rows["measured_ms"]) & (rows["measured_ms"] <= high)).mean())


def main() -> None:
    """Print each sweep's coverage as frozen and as calibrated on the other, and the CLI's quantile."""
    sweeps = {s: scored(s) for s in df.BLIND_SWEEPS}
    for sweep, rows in sweeps.items():
        other = [s for s in sweeps if s != sweep]
        own = float(np.quantile(pd.concat([sweeps[s] for s in other])["abs_error_pct"], fm.CI_LEVEL))
        print(
            f"{sweep}: {len(rows)} frozen forecasts; interval holds the measured mean in "
            f"{coverage_pct(rows, 0.0):.1f} % as frozen, {coverage_pct(rows, own):.1f} % widened by the "
            f"engine's own error on {', '.join(other)} ({own:.2f} %)"
        )
    both = df.blind_errors(RAW, PRE)
    value = float(np.quantile(both["abs_error_pct"], fm.CI_LEVEL))
    print(f"project --dataset: the engine's own error {value:.2f} % (95 % quantile of {len(both)} forecasts)")


if __name__ == "__main__":
    main()
