"""The lab validation chapter's verdict: which sweep judges a declared model and how the verdict is worded.

Synthetic sweeps only (no dataset is read): the rules are checked on tables built to hit each case.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from iscsi_report.analyses import lab, lab_validation
from iscsi_report.analyses.lab_validation import BLOG, BLOG_SCALED, SECOND

DECLARED = SECOND


def _table(path_ok: list[bool], meets: list[bool]) -> pd.DataFrame:
    """A confirmation table of len(path_ok) sweeps named s0, s1, ... with distinct numbers."""
    n = len(path_ok)
    return pd.DataFrame(
        {
            "sweep": [f"s{i}" for i in range(n)],
            "runs": [100 + i for i in range(n)],
            "configurations": [10 + i for i in range(n)],
            "path_excess_max_ms": [0.5 if ok else 2.5 for ok in path_ok],
            "r2t_counts_matching_capture": [10 + i for i in range(n)],
            DECLARED: [2.0 + i for i in range(n)],
            BLOG: [6.0 + i for i in range(n)],
            BLOG_SCALED: [7.0 + i for i in range(n)],
            "worst_group_pct": [3.0 + i for i in range(n)],
            "path_ok": path_ok,
            "meets_rule": meets,
        }
    )


@pytest.mark.parametrize(
    ("path_ok", "chosen"),
    [
        ([True, True, True], "s2"),  # all pass: the last
        ([True, False, True, False], "s2"),  # some pass: the last that passes, not the last sweep
        ([False, True, False], "s1"),
        ([False, False], "s1"),  # none pass: the last sweep, said so
        ([False], "s0"),
    ],
)
def test_the_judging_sweep_is_the_last_that_passes_the_path_check(path_ok: list[bool], chosen: str) -> None:
    judged = lab_validation.judging_sweep(_table(path_ok, [False] * len(path_ok)))
    assert judged is not None and judged["sweep"] == chosen


def test_no_sweep_no_judge() -> None:
    assert lab_validation.judging_sweep(pd.DataFrame()) is None
    words = lab_validation.verdict_words(pd.DataFrame())
    assert words == {
        "name": "none",
        "which": "No sweep passes the path check yet; on the last one,",
        "verdict": "—",
    }


@pytest.mark.parametrize(
    ("path_ok", "meets", "which", "verdict"),
    [
        ([True, False], [True, True], "On the last sweep that passes the path check,", "meets"),
        ([True, False], [False, True], "On the last sweep that passes the path check,", "does not meet"),
        ([False, False], [False, True], "No sweep passes the path check yet; on the last one,", "meets"),
        (
            [False, False],
            [True, False],
            "No sweep passes the path check yet; on the last one,",
            "does not meet",
        ),
    ],
)
def test_the_verdict_is_worded_on_the_judging_sweep(
    path_ok: list[bool], meets: list[bool], which: str, verdict: str
) -> None:
    words = lab_validation.verdict_words(_table(path_ok, meets))
    assert words["which"] == which and words["verdict"] == verdict
    assert words["name"] == ("s0" if path_ok[0] else "s1")


def _pred(errors: list[float], sweep_bs: int) -> pd.DataFrame:
    """Predictions of three configurations by the declared model and both baselines."""
    rows = []
    for method, scale in ((DECLARED, 1.0), (BLOG, 3.0), (BLOG_SCALED, 2.0)):
        for i, e in enumerate(errors):
            rows.append(
                {
                    **dict.fromkeys(lab.CONFIG_KEYS, 0),
                    "bs_bytes": sweep_bs * (i + 1),
                    "r2t_window": 5,
                    "max_recv_data_segment_bytes": 8192,
                    "one_way_delay_ms": 0.75,
                    "method": method,
                    "error_pct": e * scale,
                    "new_delay": True,
                    "new_block_size": True,
                    "new_window": i > 0,
                }
            )
    return pd.DataFrame(rows)


def test_a_prospective_test_states_the_judging_sweeps_numbers_in_words() -> None:
    table = _table([True, True, False], [False, True, False])
    preds = {
        "s0": _pred([9.0, 9.0, 9.0], 1),
        "s1": _pred([1.0, -4.0, 2.0], 64 * 1024),
        "s2": _pred([50.0] * 3, 1),
    }
    test = lab_validation.ProspectiveTest(DECLARED, 5.0, preds, table)
    v = test.values()
    assert (v["name"], v["verdict"], v["n_sweeps"], v["n_clean"]) == ("s1", "meets", 3, 2)
    assert (v["declared"], v["blog"], v["scaled"], v["declared_worst"]) == (3.0, 7.0, 8.0, 4.0)
    assert (v["n"], v["runs"], v["excess_max"], v["r2t_match"]) == (11.0, 101.0, 0.5, 11.0)
    assert v["signed_pct"] == 1.0 and v["bias_word"] == "over-predicts"
    assert v["worst_pct"] == -4.0
    assert v["worst_config"] == "128 KiB writes, window 5, 8 KiB segments, 0.75 ms one way"
    assert v["rule_goal"] == "within 5 % in every group"
    assert v["rule_baselines"] == "better than both baselines in every group"
    assert test.value(BLOG) == 7.0


def test_an_under_predicting_model_that_misses_the_goal_is_said_to() -> None:
    table = _table([True], [False])
    test = lab_validation.ProspectiveTest(DECLARED, 5.0, {"s0": _pred([-6.0, -7.0, -1.0], 1024)}, table)
    v = test.values()
    assert v["verdict"] == "does not meet" and v["bias_word"] == "under-predicts"
    assert v["rule_goal"].startswith("above 5 % in: every configuration")


def test_a_test_without_sweeps_says_so() -> None:
    v = lab_validation.ProspectiveTest(DECLARED, 5.0, {}, pd.DataFrame()).values()
    assert (v["name"], v["verdict"], v["n_sweeps"], v["n_clean"]) == ("none", "—", 0, 0)
    assert (v["rule_goal"], v["rule_baselines"], v["worst_config"]) == ("no sweep", "no sweep", "none")
    assert all(math.isnan(v[k]) for k in ("declared", "blog", "signed_pct", "worst_pct"))


def test_a_method_table_predicts_with_each_methods_own_training_rows() -> None:
    train_a = pd.DataFrame({"blog_ms": [1.0, 2.0], "latency_ms": [2.0, 4.0]})  # scale 2
    train_b = pd.DataFrame({"blog_ms": [1.0, 2.0], "latency_ms": [3.0, 6.0]})  # scale 3
    new = pd.DataFrame(
        {
            **{k: [0, 0] for k in lab.CONFIG_KEYS},
            "bs_bytes": [1, 2],
            "blog_ms": [10.0, 20.0],
            "latency_ms": [25.0, 50.0],
        }
    )
    for frame in (train_a, train_b):
        for k in lab.CONFIG_KEYS:
            frame[k] = 0
    train_b["bs_bytes"] = 2  # block size 2 was seen (by method b only); block size 1 was not
    methods = {
        "a": (lab_validation.Method(scaled=True), train_a),
        "b": (lab_validation.Method(scaled=True), train_b),
        "blog": (lab_validation.Method(), train_a),
    }
    pred = lab_validation.prospective_predictions(new, methods).set_index(["method", "bs_bytes"])
    assert pred.loc[("a", 1), "predicted_ms"] == pytest.approx(20.0)
    assert pred.loc[("b", 2), "predicted_ms"] == pytest.approx(60.0)
    assert pred.loc[("blog", 2), "predicted_ms"] == 20.0
    assert pred.loc[("a", 2), "error_pct"] == pytest.approx(-20.0)
    assert not pred.loc[("a", 2), "new_block_size"] and pred.loc[("a", 1), "new_block_size"]
    held = new.drop(columns=["latency_ms"])
    np.testing.assert_array_equal(lab_validation.Method().predict(train_a, held), [10.0, 20.0])
