"""The simulated FIFO line scored post hoc on the fourth jitter sweep, apart from the pre-registered rows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from iscsi_report.analyses import lab_tails as tails
from iscsi_report.core.measurements import Measurements

RAW = Path(__file__).resolve().parents[1] / "data" / "raw" / "lab-iscsi-2026-jitter4"
pytestmark = pytest.mark.skipif(not RAW.is_dir(), reason="the fourth jitter sweep is absent")


@pytest.fixture(scope="module")
def ds() -> Measurements:
    return tails.load(RAW)


@pytest.fixture(scope="module")
def tested(ds: Measurements) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    return tails.fifo_test(ds)


def test_the_fifo_line_is_scored_apart_and_leaves_the_pre_registered_result(
    ds: Measurements, tested: tuple[pd.DataFrame, pd.DataFrame, dict]
) -> None:
    combined, table, found = tested
    fifo = combined[combined["method"] == tails.FIFO]
    assert len(fifo) == 18 and list(table["method"])[:2] == [tails.FIFO, tails.BURSTS]
    pre = combined[combined["method"] != tails.FIFO]
    _, pre_table, pre_found = tails.bursts_test(ds, tails.BURSTS, tails.PREREGISTERED_NOTE)
    mine = tails.summary(pre, (tails.BURSTS, tails.ENGINE, tails.SHIFTED, tails.RESCALED))
    pd.testing.assert_frame_equal(mine.set_index("method"), pre_table.set_index("method").loc[mine["method"]])
    assert tails.FIFO_NOTE in found["bursts_words"] and "simulated FIFO line" in found["bursts_words"]
    assert pre_found["bursts_rule_passed"] is False  # the pre-registered verdict stands as measured


def test_acknowledgements_in_the_line_raise_every_spikes_p99(
    tested: tuple[pd.DataFrame, pd.DataFrame, dict],
) -> None:
    """Under 3 % of packets 4 ms late, each configuration's p99 forecast rises and its miss shrinks."""
    combined, _, _ = tested
    spikes = combined[combined["jitter"] == "spikes"].set_index(["bs_bytes", "r2t_window", "method"])
    fifo = spikes.xs(tails.FIFO, level="method")
    bursts = spikes.xs(tails.BURSTS, level="method")
    assert (fifo["p99_ms"] > bursts["p99_ms"]).all()
    before = tails.shape_misses(combined, tails.BURSTS, "spikes")
    after = tails.shape_misses(combined, tails.FIFO, "spikes")
    assert after["p99_error_pct"] < before["p99_error_pct"]


def test_sweeps_summary_keeps_the_asked_methods_of_each_sweep_named_by_its_sweep() -> None:
    one = pd.DataFrame({"method": [tails.FIFO, tails.ENGINE], "targets": [18, 18], "p99_error_pct": [4.0, 9]})
    two = one.assign(p99_error_pct=[7.0, 8.0])
    joined = tails.sweeps_summary({"a": one, "b": two}, (tails.FIFO,))
    assert list(joined.columns[:2]) == ["sweep", "method"]
    assert joined[["sweep", "p99_error_pct"]].values.tolist() == [["a", 4.0], ["b", 7.0]]
    assert "Sweep" in tails.summary_table(joined).columns
