"""Monte Carlo prediction intervals: deterministic, contain the point value, shrink with spread."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_fit import synthetic_runs

from iscsi_report.analyses import fit, uncertainty
from iscsi_report.core import model
from iscsi_report.core.units import BYTES_PER_MIB


@pytest.fixture(scope="module")
def result() -> fit.TermFit:
    return fit.fit_variant(synthetic_runs(seed=1), fit.Variant("tx", {"transmit_ms": 0.95}))


def config(one_way_ms: float = 1.5) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "network": "net",
                "device": "hdd",
                "bs_bytes": 2 * BYTES_PER_MIB,
                "max_outstanding_r2t": 1,
                "one_way_ms": one_way_ms,
                "link_bps": 600e6,
                "device_ms": 7.3,
                "cpu_ms": 8.0,
            }
        ]
    )


def rtt(sd_ms: float, mean_ms: float = 3.0, n: int = 5000, seed: int = 0) -> np.ndarray:
    return np.abs(np.random.default_rng(seed).normal(mean_ms, sd_ms, n))


@pytest.mark.parametrize("kind", ["operation", "run"])
def test_interval_contains_point_and_is_ordered(result, kind):
    out = uncertainty.project(config(), result, {"net": rtt(1.0)}, kind=kind, n_draws=4000)
    row = out.iloc[0]
    assert row["op_ms_lo"] < row["op_ms"] < row["op_ms_hi"]
    assert row["mib_per_s_lo"] < row["mib_per_s"] < row["mib_per_s_hi"]
    assert row["iops_lo"] == pytest.approx(model.iops(row["op_ms_hi"]))
    assert row["op_ms"] == pytest.approx(result.predict(fit.term_matrix(config()))[0])


def test_seeded_and_deterministic(result):
    a = uncertainty.project(config(), result, {"net": rtt(1.0)}, n_draws=2000, seed=5)
    b = uncertainty.project(config(), result, {"net": rtt(1.0)}, n_draws=2000, seed=5)
    c = uncertainty.project(config(), result, {"net": rtt(1.0)}, n_draws=2000, seed=6)
    pd.testing.assert_frame_equal(a, b)
    assert a.loc[0, "op_ms_hi"] != c.loc[0, "op_ms_hi"]


def test_operation_interval_shrinks_with_less_spread(result):
    wide = uncertainty.project(config(), result, {"net": rtt(2.0)}, kind="operation", n_draws=4000)
    narrow = uncertainty.project(config(), result, {"net": rtt(0.2)}, kind="operation", n_draws=4000)
    width = lambda df: df.loc[0, "op_ms_hi"] - df.loc[0, "op_ms_lo"]  # noqa: E731
    assert width(narrow) < 0.5 * width(wide)


def test_operation_interval_is_wider_than_run_interval(result):
    op = uncertainty.project(config(), result, {"net": rtt(2.0)}, kind="operation", n_draws=4000)
    run = uncertainty.project(config(), result, {"net": rtt(2.0)}, kind="run", n_draws=4000)
    assert op.loc[0, "op_ms_hi"] - op.loc[0, "op_ms_lo"] > run.loc[0, "op_ms_hi"] - run.loc[0, "op_ms_lo"]


def test_one_way_sum_uses_legs_and_half_rtt():
    rng = np.random.default_rng(0)
    draws = uncertainty.one_way_sum_draws(np.array([2.0, 2.0]), legs=18, n_draws=10, rng=rng)
    assert np.all(draws == 18.0)  # 18 legs of RTT/2 = 1 ms
    assert np.all(uncertainty.one_way_sum_draws(np.array([2.0, 4.0]), 0, 5, rng) == 0)


def test_samples_are_rescaled_to_the_configuration_latency():
    scaled = uncertainty.scaled_rtt(np.array([1.0, 3.0]), one_way_ms=0.5)
    assert scaled.mean() == pytest.approx(1.0)
    assert scaled[1] / scaled[0] == pytest.approx(3.0)


def test_fixed_only_fit_has_no_coefficient_spread():
    allfixed = fit.fit_variant(synthetic_runs(), fit.default_variants()[0])
    draws = uncertainty.coefficient_draws(allfixed, 100, np.random.default_rng(0))
    assert (draws[list(fit.REGRESSORS)] == 1.0).all().all()


def test_unknown_network_is_named(result):
    with pytest.raises(KeyError, match="net"):
        uncertainty.project(config(), result, {"other": rtt(1.0)})


def test_run_interval_depends_only_on_published_moments(result):
    """Two sample sets with the same mean, sd and count but different shapes give the same run interval."""
    rng = np.random.default_rng(3)
    a = rng.lognormal(0.0, 0.8, 4000)
    b = rng.normal(0.0, 1.0, 4000)
    b = (b - b.mean()) / b.std(ddof=1) * a.std(ddof=1) + a.mean()  # same moments, other shape
    run_a = uncertainty.project(config(), result, {"net": a}, kind="run", n_draws=2000, seed=5)
    run_b = uncertainty.project(config(), result, {"net": b}, kind="run", n_draws=2000, seed=5)
    assert run_a.loc[0, "op_ms_lo"] == pytest.approx(run_b.loc[0, "op_ms_lo"], rel=1e-9)
    op_a = uncertainty.project(config(), result, {"net": a}, kind="operation", n_draws=2000, seed=5)
    op_b = uncertainty.project(config(), result, {"net": b}, kind="operation", n_draws=2000, seed=5)
    assert op_a.loc[0, "op_ms_hi"] != pytest.approx(op_b.loc[0, "op_ms_hi"], rel=1e-3)


def test_interval_basis_labels_reconstructed_shapes(result):
    op = uncertainty.project(
        config(), result, {"net": rtt(1.0)}, kind="operation", n_draws=200, reconstructed=True
    )
    run = uncertainty.project(
        config(), result, {"net": rtt(1.0)}, kind="run", n_draws=200, reconstructed=True
    )
    assert "conditional on the reconstruction" in op.loc[0, "interval_basis"]
    assert run.loc[0, "interval_basis"].startswith("published ping mean")
    measured = uncertainty.project(config(), result, {"net": rtt(1.0)}, kind="operation", n_draws=200)
    assert "reconstruct" not in measured.loc[0, "interval_basis"]
