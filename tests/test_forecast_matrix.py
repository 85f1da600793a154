"""The forecast protocol on a real lab sweep: blind to the targets, scored beside both baselines."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab
from iscsi_report.core import forecast, model

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
SWEEP = "lab-iscsi-2026-confirm3"


@pytest.fixture(scope="module")
def data() -> lab.LabData:
    return lab.load(RAW / SWEEP)


@pytest.fixture(scope="module")
def matrix(data: lab.LabData) -> fm.Matrix:
    return fm.run(data, SWEEP, max_today=6)


def test_a_targets_forecasts_are_blind_to_its_own_runs(data: lab.LabData, matrix: fm.Matrix) -> None:
    """Scrambling one target's runs, inside a group used as today, changes none of its forecasts."""
    confs = matrix.configurations.set_index("key")
    todays = set(matrix.pairs["today"])
    target = next(k for k in confs.index if fm.settings_name(k) in todays)
    runs = data.runs.copy()
    keys = fm.configurations(data).set_index(fm.KEY_COLUMNS)["key"]
    mine = np.asarray(runs.set_index(fm.KEY_COLUMNS).index.map(keys) == target)
    runs.loc[mine, "lat_mean_ms"] = runs.loc[mine, "lat_mean_ms"] * 7.0
    again = fm.run(dataclasses.replace(data, runs=runs), SWEEP, max_today=6)
    rows = matrix.pairs["target"] == target
    assert rows.sum() >= 3
    np.testing.assert_allclose(again.pairs.loc[rows, "forecast_ms"], matrix.pairs.loc[rows, "forecast_ms"])
    others = ~rows & (matrix.pairs["today"] == fm.settings_name(target))
    assert not np.allclose(again.pairs.loc[others, "forecast_ms"], matrix.pairs.loc[others, "forecast_ms"]), (
        "the same runs do move the forecasts of other targets (the test can fail)"
    )


def test_every_pair_differs_and_is_grouped_by_what_differs(matrix: fm.Matrix) -> None:
    assert (matrix.pairs["today"] != matrix.pairs["target"].map(fm.settings_name)).any()
    assert set(matrix.pairs["group"]) <= {*fm.DIMENSIONS, fm.SEVERAL}
    assert set(matrix.pairs["method"]) == set(fm.METHODS)
    confs = matrix.configurations.set_index("key")
    one = matrix.pairs[matrix.pairs["group"] == "delay"].iloc[0]
    b = confs.loc[one["target"]]
    assert (
        one["today"] != fm.settings_name(one["target"])
        and f"ow={b['one_way_delay_ms']:g}" not in one["today"]
    )
    inside = matrix.pairs[matrix.pairs["today"] == matrix.pairs["target"].map(fm.settings_name)]
    assert set(inside["group"]) == {"block size"}, "a target sharing today's settings differs in size only"


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


def test_coverage_is_judged_in_words_against_the_level() -> None:
    assert "wider" in fm.coverage_words(100.0)
    assert "overconfident" in fm.coverage_words(60.0) and "wider" not in fm.coverage_words(60.0)
    assert fm.coverage_words(95.5).startswith("about as often")


def test_the_chapters_table_has_human_headers_and_says_yes_only_below_zero(matrix: fm.Matrix) -> None:
    from iscsi_report.presentation import forecast as tables

    s = fm.summary(matrix)
    t = tables.summary_table(s)
    assert not any("_" in c for c in t.columns)
    said = t["Engine better than rescaled formula"] == "yes"
    assert (said == (s["diff_vs_scaled_high"] < 0)).all()


def test_frozen_forecasts_are_refused_when_changed_after_their_pre_registration(tmp_path: Path) -> None:
    import hashlib

    from iscsi_report.core.errors import IngestError

    csv = b"target,forecast engine\nx,1.0\n"
    (tmp_path / fm.FROZEN_FILE).write_bytes(csv)
    digest = hashlib.sha256(csv).hexdigest()
    (tmp_path / fm.PREREGISTRATION).write_text(
        f"forecasts.csv, sha256\n   `{digest}`: frozen\n", encoding="utf-8"
    )
    assert fm.load_frozen(tmp_path)["forecast engine"].tolist() == [1.0]
    (tmp_path / fm.FROZEN_FILE).write_bytes(csv.replace(b"1.0", b"1.1"))
    with pytest.raises(IngestError, match="is not the"):
        fm.load_frozen(tmp_path)


def test_the_rule_names_every_group_that_fails_it(matrix: fm.Matrix) -> None:
    s = fm.summary(matrix)
    passed, words = fm.rule_verdict(s)
    worst = s.loc[s[fm.ENGINE].idxmax()]
    if worst[fm.ENGINE] > fm.RULE_ERROR_PCT:
        assert not passed and str(worst["group"]) in words
    good = s.assign(**{fm.ENGINE: 1.0, "better_than_blog": True, "better_than_scaled": True})
    assert fm.rule_verdict(good) == (True, "The engine passes the rule in every group.")
    bad = good.assign(better_than_scaled=[False] + [True] * (len(good) - 1))
    assert "not shown better than the rescaled formula" in fm.rule_verdict(bad)[1]


def test_a_read_forecast_from_todays_writes_pays_no_r2t_and_its_own_pdus(data: lab.LabData) -> None:
    """On real writes: a read carries today's host time per command and per PDU, counted for the read."""
    confs = fm.configurations(data)
    group = next(g for g in fm._todays(confs, None) if int(g["r2t_window"].iloc[0]) == 1)
    t = fm.today(data.dataset, group)
    big = int(group["bs_bytes"].max())
    read = forecast.forecast(t, dataclasses.replace(t.configuration, direction="read", bs_bytes=big))
    same_write = dataclasses.replace(t.configuration, bs_bytes=big)
    write_b = forecast.breakdown(t, same_write, forecast.network_for(t, same_write))
    read_b = forecast.breakdown(t, read.target, forecast.network_for(t, read.target))
    assert read.terms_ms["r2t_one_way_ms"] == 0.0 and read_b.one_way_trips == 2.0
    fit = forecast.per_pdu_host_time(t)
    assert fit is not None and fit.per_pdu_ms > 0, "today's writes pay host time per PDU"
    assert read.terms_ms["host_residual_ms"] == pytest.approx(fit.at(read_b.pdus_exchanged)[0])
    assert read_b.pdus_exchanged < write_b.pdus_exchanged, "no R2Ts and no separate status"
    per_byte, _ = forecast.host_residual(t).at(big)
    assert read.terms_ms["host_residual_ms"] < per_byte, "the writes' R2T rounds are not a read's"


def test_a_blind_test_refuses_frozen_forecasts_its_pre_registration_does_not_state(
    data: lab.LabData, tmp_path: Path
) -> None:
    """blind_test checks the frozen forecasts' sha256 before it scores anything."""
    from iscsi_report.core.errors import IngestError

    folder = tmp_path / SWEEP
    folder.mkdir()
    (folder / fm.FROZEN_FILE).write_bytes(b"target,forecast engine\nx,1.0\n")
    (folder / fm.PREREGISTRATION).write_text(f"sha256 `{'0' * 64}`\n", encoding="utf-8")
    with pytest.raises(IngestError, match="is not the"):
        fm.blind_test(data, SWEEP, tmp_path)


def test_a_sweeps_design_is_read_off_its_configurations_in_words() -> None:
    """design_words lists the measured values in order, with units, and 'none' for no deep queue."""
    from iscsi_report.presentation import forecast as tables

    confs = pd.DataFrame(
        {
            "rw": ["write", "write", "write", "read"],
            "link_mbps": [540.0, 1600.0, 540.0, 1600.0],
            "one_way_delay_ms": [0.6, 3.5, 1.8, 0.6],
            "bs_bytes": [212992, 2359296, 589824, 1507328],
            "r2t_window": [1, 5, 1, 1],
            "iodepth": [1, 1, 3, 1],
            "runs": [3, 3, 3, 2],
            "writes": [72, 72, 72, 48],
        }
    )
    words = tables.design_words(fm.Matrix("s", confs, pd.DataFrame()))
    assert words == {
        "links": "1,600 and 540 Mbit/s",
        "delays": "0.6, 1.8 and 3.5 ms",
        "write_sizes": "208, 576 and 2,304 KiB",
        "windows": "1 and 5",
        "read_sizes": "1,472 KiB",
        "queue_depths": "3",
        "ios_per_run": "24",
    }
    assert (
        tables.design_words(
            fm.Matrix("s", confs.assign(writes=[72, 48, 72, 48], runs=[3, 3, 3, 2]), pd.DataFrame())
        )["ios_per_run"]
        == "16 to 24"
    )
    shallow = tables.design_words(fm.Matrix("s", confs.assign(iodepth=1), pd.DataFrame()))
    assert shallow["queue_depths"] == "none"


def test_signed_by_reads_each_groups_misses_by_the_targets_settings(matrix: fm.Matrix) -> None:
    """signed_by keeps the sign and splits one group by the target's settings, every method beside."""
    group = "immediate data and segment"
    split = fm.signed_by(matrix, group, ["max_recv_data_segment_bytes"])
    assert list(split.columns) == ["max_recv_data_segment_bytes", *fm.METHODS]
    pairs = matrix.pairs[(matrix.pairs["group"] == group) & (matrix.pairs["method"] == fm.ENGINE)]
    keys = matrix.configurations.set_index("key")["max_recv_data_segment_bytes"]
    for _, row in split.iterrows():
        mine = pairs[pairs["target"].map(keys) == row["max_recv_data_segment_bytes"]]["error_pct"]
        assert row[fm.ENGINE] == pytest.approx(float(mine.median()))


def test_forecasts_apart_measures_the_gap_between_engine_and_rescaled_beside_the_measured_error() -> None:
    """Per target the median over todays, then the median over targets; a target counted once overall."""
    rows = []
    for today, target, group, engine, scaled in (
        ("t1", "a", "block size", 10.0, 10.1),  # 1 % apart
        ("t2", "a", "block size", 10.2, 9.8),  # 4 % apart: target a's median 2.5 %
        ("t1", "b", "delay", 12.0, 10.0),  # 20 % apart
        ("t2", "b", "block size", 10.0, 10.0),  # 0 %: in another group from this today
    ):
        for method, value in ((fm.ENGINE, engine), (fm.BLOG, 99.0), (fm.BLOG_SCALED, scaled)):
            rows.append(
                {
                    "today": today,
                    "target": target,
                    "group": group,
                    "method": method,
                    "forecast_ms": value,
                    "measured_ms": 10.0,
                }
            )
    confs = pd.DataFrame({"key": ["a", "b"], "measured_ms": [10.0, 10.0], "se_ms": [0.1, 0.3]})
    apart = fm.forecasts_apart(fm.Matrix("s", confs, pd.DataFrame(rows))).set_index("group")
    assert list(apart.index) == ["every target", "block size", "delay"]
    assert apart.loc["block size", "targets"] == 2
    assert apart.loc["block size", "apart_pct"] == pytest.approx((2.5 + 0.0) / 2)
    assert apart.loc["block size", "se_pct"] == pytest.approx((1.0 + 3.0) / 2)
    assert apart.loc["delay", "apart_pct"] == pytest.approx(20.0)
    # overall: a's todays 1 and 4 % (median 2.5), b's 20 and 0 % (median 10): median 6.25
    assert apart.loc["every target", "apart_pct"] == pytest.approx(6.25)
    from iscsi_report.presentation import forecast as tables

    table = tables.apart_table(
        apart.reset_index(),
        pd.DataFrame(
            {"group": ["every target", "block size", "delay"], "better_than_scaled": [True, False, True]}
        ),
    )
    assert list(table["Engine better than rescaled formula"]) == ["yes", "no", "yes"]


def test_measured_means_take_students_t_over_the_replicates_and_precision_sums_them_up() -> None:
    """Three runs: t with 2 degrees of freedom (4.303 x se); one run: no interval (NaN), not a zero width."""
    confs = pd.DataFrame(
        {
            "key": ["a", "b"],
            "rw": ["write", "read"],
            "bs_bytes": [65536, 131072],
            "iodepth": [1, 1],
            "one_way_delay_ms": [0.5, 0.5],
            "link_mbps": [1000.0, 1000.0],
            "r2t_window": [1, 1],
            "iscsi_parameters": ["set", "set"],
            "runs": [3, 1],
            "writes": [72, 24],
            "measured_ms": [10.0, 20.0],
            "se_ms": [0.5, 0.0],
            "sd_ms": [0.5 * 3**0.5, float("nan")],
        }
    )
    means = fm.measured_means(fm.Matrix("s", confs, pd.DataFrame())).set_index("key")
    assert means.loc["a", "ci_high_ms"] - 10.0 == pytest.approx(4.302653 * 0.5, rel=1e-6)
    assert means.loc["a", "half_width_pct"] == pytest.approx(100 * 4.302653 * 0.5 / 10.0, rel=1e-6)
    assert np.isnan(means.loc["b", "half_width_pct"]) and means.loc["a", "ios_per_run"] == 24
    p = fm.precision(fm.Matrix("s", confs, pd.DataFrame()))
    assert (p["runs_min"], p["runs_max"], p["configurations"]) == (1, 3, 2)
    assert p["max_half_width_pct"] == pytest.approx(means.loc["a", "half_width_pct"])
    assert p["median_run_sd_pct"] == pytest.approx(100 * 0.5 * 3**0.5 / 10.0)  # one run has no spread


def test_version_3_takes_the_host_time_per_round_from_todays_captures_never_the_targets(
    data: lab.LabData,
) -> None:
    """The target's own capture (a huge time here) never enters; version 2 and no capture give none."""
    confs = fm.configurations(data)
    group = fm._todays(confs, None)[0]
    keys = group["key"].tolist()
    target = keys[0]
    first = {k: np.array([10.0, 12.0]) for k in keys[1:]} | {target: np.full(100, 1e6)}
    t = fm.today(data.dataset, group, leave_out=target, engine_version=3, first_r2t_ms=first)
    assert t.per_round_ms is not None and t.per_round_ms.source.kind == "measured"
    imm_ms = (
        (model.immediate_bytes(t.configuration.bs_bytes, t.configuration.params) + t.pdu_header_bytes)
        * 8
        / t.link_bps.value
        * 1000
    )
    assert t.per_round_ms.value == pytest.approx(max(11.0 - 2 * t.one_way_ms.value - imm_ms, 0.0))
    with_target = fm.today(data.dataset, group, engine_version=3, first_r2t_ms=first)
    assert with_target.per_round_ms is not None and with_target.per_round_ms.value > 1e5  # all of today's
    assert (
        fm.today(data.dataset, group, leave_out=target, engine_version=2, first_r2t_ms=first).per_round_ms
        is None
    )
    assert (
        fm.today(data.dataset, group, leave_out=target, engine_version=3, first_r2t_ms={}).per_round_ms
        is None
    )


def test_version_3_charges_the_round_time_per_exposed_round_so_a_wider_window_saves_it(
    data: lab.LabData,
) -> None:
    """Same today, a target at a wider window: version 3 forecasts it faster than version 2 does."""
    confs = fm.configurations(data)
    group = next(g for g in fm._todays(confs, None) if int(g.iloc[0]["r2t_window"]) == 1)
    first = {k: np.array([5.0]) for k in group["key"]}
    t2 = fm.today(data.dataset, group, engine_version=2)
    t3 = fm.today(data.dataset, group, engine_version=3, first_r2t_ms=first)
    assert t3.per_round_ms is not None and t3.per_round_ms.value > 0
    base = t2.configuration
    params = dataclasses.replace(base.params, max_outstanding_r2t=8)
    wide = dataclasses.replace(base, bs_bytes=int(max(group["bs_bytes"])), params=params, target_r2t_window=8)
    assert forecast.forecast(t3, wide).op_ms < forecast.forecast(t2, wide).op_ms


def test_versions_compared_says_better_only_when_the_paired_interval_excludes_zero() -> None:
    """Per target the median over its todays, newer less older: a uniform gain is better, a mixed one not."""

    def matrix(errors: dict[str, list[float]]) -> fm.Matrix:
        rows = [
            {"today": f"t{i}", "target": target, "method": fm.ENGINE, "abs_error_pct": e}
            for target, values in errors.items()
            for i, e in enumerate(values)
        ]
        return fm.Matrix("s", pd.DataFrame(), pd.DataFrame(rows))

    older = matrix({f"c{i}": [5.0, 7.0] for i in range(20)})  # every target's median 6
    gain = fm.versions_compared(matrix({f"c{i}": [4.0, 4.0] for i in range(20)}), older)
    assert gain["targets"] == 20 and gain["diff"] == pytest.approx(-2.0) and gain["better"]
    mixed = fm.versions_compared(matrix({f"c{i}": [6.0 + (-1) ** i * 2] * 2 for i in range(20)}), older)
    assert mixed["diff"] == pytest.approx(0.0) and mixed["low"] < 0 < mixed["high"] and not mixed["better"]
