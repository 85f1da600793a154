"""The jitter sweep: the measured tails, the forecast's scores and the rule, the trips of a write."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iscsi_report.analyses import lab_tails as tails
from iscsi_report.core.measurements import Measurements

RAW = Path(__file__).resolve().parents[1] / "data" / "raw" / "lab-iscsi-2026-jitter"
pytestmark = pytest.mark.skipif(not RAW.is_dir(), reason="the jitter sweep is absent")


@pytest.fixture(scope="module")
def ds() -> Measurements:
    return tails.load(RAW)


@pytest.fixture(scope="module")
def scored(ds: Measurements) -> pd.DataFrame:
    return tails.score(ds)


def test_every_run_holds_a_thousand_writes_from_its_bins(ds: Measurements) -> None:
    runs = tails.runs(ds)
    assert (runs["writes"] >= 1000).all() and set(runs["jitter"]) == {
        "fixed",
        "gamma",
        "lognormal",
        "bimodal",
    }
    fixed = runs[runs["jitter"] == "fixed"].set_index(["bs_bytes", "r2t_window"])
    bimodal = runs[runs["jitter"] == "bimodal"].set_index(["bs_bytes", "r2t_window"])
    assert (bimodal["p99_ms"] > fixed["p99_ms"]).all(), "jitter lengthens every tail"


def test_fifteen_targets_three_methods_and_the_rule_in_words(scored: pd.DataFrame) -> None:
    assert len(scored) == 15 * len(tails.METHODS)
    v = tails.verdict(scored)
    s = tails.summary(scored).set_index("method")
    within = s.loc[tails.ENGINE, ["p50_error_pct", "p99_error_pct"]].max() <= tails.RULE_ERROR_PCT
    assert v["rule_passed"] == (within and "not shown lower" not in v["verdict_words"])
    assert ("passes" in v["verdict_words"]) == v["rule_passed"]


def test_the_engine_beats_the_rescaled_distribution_at_p99(scored: pd.DataFrame) -> None:
    """Today's distribution stretched to the new mean cannot grow the tail jitter adds."""
    lo_hi = tails.paired(scored, "pinball_p99_ms")[tails.RESCALED]
    assert lo_hi[2] < 0


def test_a_writes_rounds_are_nine_and_barely_correlated(ds: Measurements) -> None:
    rounds = tails.trip_rounds(ds)
    per_write = rounds.groupby("write")["round"].size()
    assert (per_write == 9).all(), "2 MiB = 64 KiB immediate + eight 256 KiB bursts: 8 R2Ts and a response"
    assert (rounds["round_ms"] > 0).all()
    t = tails.trip_independence(ds).set_index("jitter")
    assert (t["lag1_rounds_low"] < 0).all() and (t["lag1_rounds_high"] > 0).all()
    assert np.isclose(t.loc["fixed", "round_rise_ms"], 0.0)
    assert (t.drop(index="fixed")["round_rise_ms"] > t.drop(index="fixed")["ping_rise_ms"]).all()


def test_the_post_hoc_model_is_scored_apart_and_leaves_the_pre_registered_result(
    ds: Measurements, scored: pd.DataFrame
) -> None:
    post = tails.score_bursts(ds)
    assert set(post["method"]) == {tails.POST_HOC} and len(post) == 15
    combined = pd.concat([scored, post], ignore_index=True)
    pd.testing.assert_frame_equal(tails.summary(combined), tails.summary(scored))
    assert tails.verdict(combined) == tails.verdict(scored)
    s = tails.summary(combined, tails.ALL_METHODS).set_index("method")
    # a burst waits for its latest packet: the tail the pre-registered model under-forecast grows
    assert s.loc[tails.POST_HOC, "p99_error_pct"] < s.loc[tails.ENGINE, "p99_error_pct"]
    assert (post["p99_ms"].to_numpy() > scored[scored["method"] == tails.ENGINE]["p99_ms"].to_numpy()).all()
    words = tails.bursts_verdict(combined)["bursts_words"]
    assert tails.POST_HOC_NOTE in words


def test_a_round_is_a_few_packets_on_the_line_and_hundreds_at_ethernets_mtu() -> None:
    """Why the pages' forecasts keep one ping per trip: the tested regime is a handful of packets."""
    counts = tails.packets_per_round(tails.load(RAW))
    assert counts["line_mtu_bytes"] == 65_000 and counts["ethernet_mtu_bytes"] == 1_500
    assert counts["size"] == "2 MiB" and counts["bs_bytes"] == 2 * 2**20  # the first sweep's largest
    assert 1 < counts["line_packets"] <= 5
    assert counts["ethernet_packets"] > 30 * counts["line_packets"]


def test_the_worst_shape_is_the_one_whose_p99_misses_most() -> None:
    rows = [{"method": "m", "jitter": "calm", "p99_error_pct": e} for e in (1.0, -2.0, 0.5)] + [
        {"method": "m", "jitter": "wild", "p99_error_pct": e} for e in (-20.0, -30.0, 5.0)
    ]
    rows.append({"method": "other", "jitter": "calm", "p99_error_pct": 99.0})
    worst = tails.worst_shape(pd.DataFrame(rows), "m")
    assert worst["shape"] == "wild" and worst["p99_error_pct"] == 20.0
    assert worst["worst_p99_error_pct"] == -30.0 and worst["under"] == 2 and worst["configurations"] == 3
    calm = tails.shape_misses(pd.DataFrame(rows), "m", "calm")
    assert calm == {
        "shape": "calm",
        "p99_error_pct": 1.0,
        "worst_p99_error_pct": -2.0,
        "under": 1,
        "configurations": 3,
    }, "one shape's misses, the other method's row left out"
