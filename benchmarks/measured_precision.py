"""How precisely each lab sweep measured its means (issue 21, item 4): runs, I/Os per run, interval widths.

PYTHONPATH=src .venv/bin/python benchmarks/measured_precision.py [SWEEP ...]

One row per sweep (``analyses.forecast_matrix.precision``): configurations, runs per configuration,
I/Os per fio run, and the median and widest half-width of the 95 % Student's t interval of a
configuration's mean latency, in per cent of the mean. The Forecasts chapter shows the same table.
"""

from __future__ import annotations

import sys

import pandas as pd
from lab_sweeps import RAW, SCORED_SWEEPS

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab
from iscsi_report.presentation import forecast as tables


def main(names: list[str]) -> None:
    """Print the precision table of the named sweeps (default: every scored sweep)."""
    rows = [
        fm.precision(fm.Matrix(n, fm.configurations(lab.load(RAW / n)), pd.DataFrame()))
        for n in names or SCORED_SWEEPS
    ]
    print(tables.precision_table(rows).to_string(index=False, float_format="{:.1f}".format))


if __name__ == "__main__":
    main(sys.argv[1:])
