"""The forecast protocol on a real lab sweep: blind to the targets, scored beside both baselines."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
SWEEP = "lab-iscsi-2026-confirm3"


@pytest.fixture(scope="module")
def data() -> lab.LabData:
    return lab.load(RAW / SWEEP)


@pytest.fixture(scope="module")
def matrix(data: lab.LabData) -> fm.Matrix:
    return fm.run(data, SWEEP, max_today=6)


def test_forecasts_are_blind_to_the_targets_measurements(data: lab.LabData, matrix: fm.Matrix) -> None:
    """Scrambling every run's latency except the calibrations' leaves every forecast unchanged."""
    todays = set(matrix.pairs["today"])
    runs = data.runs.copy()
    keys = fm.configurations(data).set_index(fm.KEY_COLUMNS)["key"]
    run_keys = runs.set_index(fm.KEY_COLUMNS).index.map(keys)
    scramble = ~np.isin(run_keys, list(todays))
    runs.loc[scramble, "lat_mean_ms"] = np.random.default_rng(1).uniform(1, 100, int(scramble.sum()))
    again = fm.run(dataclasses.replace(data, runs=runs), SWEEP, max_today=6)
    pd.testing.assert_series_equal(again.pairs["forecast_ms"], matrix.pairs["forecast_ms"])


def test_every_pair_differs_and_is_grouped_by_what_differs(matrix: fm.Matrix) -> None:
    assert (matrix.pairs["today"] != matrix.pairs["target"]).all()
    assert set(matrix.pairs["group"]) <= {*fm.DIMENSIONS, fm.SEVERAL}
    assert set(matrix.pairs["method"]) == set(fm.METHODS)
    confs = matrix.configurations.set_index("key")
    one = matrix.pairs[matrix.pairs["group"] == "delay"].iloc[0]
    a, b = confs.loc[one["today"]], confs.loc[one["target"]]
    assert a["one_way_delay_ms"] != b["one_way_delay_ms"] and a["bs_bytes"] == b["bs_bytes"]


def test_summary_claims_better_only_when_the_interval_excludes_zero(matrix: fm.Matrix) -> None:
    s = fm.summary(matrix)
    assert s.iloc[0]["group"] == "every target"
    for name in ("blog", "scaled"):
        assert (s[f"better_than_{name}"] == (s[f"diff_vs_{name}_high"] < 0)).all()
        finite = s[f"diff_vs_{name}_low"].notna()
        assert (s.loc[finite, f"diff_vs_{name}_low"] <= s.loc[finite, f"diff_vs_{name}"]).all()


def test_declared_model_error_widens_the_intervals(data: lab.LabData, matrix: fm.Matrix) -> None:
    error = fm.model_error(matrix)
    assert 0 < error.value < 100 and SWEEP in error.source.what
    wide = fm.run(data, SWEEP, max_today=6, model_error=error)
    assert fm.coverage(wide) >= fm.coverage(matrix)
