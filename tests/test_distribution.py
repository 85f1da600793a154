"""Latency distributions from the ping sample: a hand-computed convolution, scores, intervals."""

from __future__ import annotations

import numpy as np
import pytest

from iscsi_report.core import distribution as dist


def test_two_round_trips_over_a_two_valued_ping_is_the_hand_computed_convolution() -> None:
    """RTT 1 ms or 3 ms, independent (alternating blocks), two round trips: 2, 4 or 6 ms plus fixed.

    With the sample [1, 3] repeated, a block of two consecutive samples is always 1 + 3 = 4 ms: the
    moving block keeps the order a write meets. With [1, 1, 3, 3] repeated the sums are 2, 4, 6, 4
    (each start equally likely): P(2) = P(6) = 1/4, P(4) = 1/2.
    """
    alternating = dist.forecast(10.0, 4, np.array([1.0, 3.0] * 500), boot=20)
    assert alternating.round_trips == 2
    assert alternating.fixed_ms == pytest.approx(10.0 - 2 * 2.0)
    assert np.unique(alternating.draws_ms).tolist() == [10.0]
    paired = dist.forecast(10.0, 4, np.array([1.0, 1.0, 3.0, 3.0] * 250), draws=40_000, boot=20)
    values, counts = np.unique(paired.draws_ms, return_counts=True)
    assert values.tolist() == [8.0, 10.0, 12.0]
    np.testing.assert_allclose(counts / counts.sum(), [0.25, 0.5, 0.25], atol=0.01)
    assert paired.quantiles[0.5] == 10.0 and paired.quantiles[0.99] == 12.0


def test_the_forecast_mean_is_the_engines_mean() -> None:
    rng = np.random.default_rng(1)
    rtt = 2.0 + rng.gamma(2.0, 0.5, size=3000)
    d = dist.forecast(25.0, 6.0, rtt)
    assert d.draws_ms.mean() == pytest.approx(25.0, rel=0.01)
    assert d.low[0.99] <= d.quantiles[0.99] <= d.high[0.99]
    assert d.quantiles[0.5] < d.quantiles[0.9] < d.quantiles[0.99] <= d.quantiles[0.999]


def test_pinball_and_crps_prefer_the_right_forecast() -> None:
    rng = np.random.default_rng(2)
    y = rng.normal(10.0, 1.0, size=4000)
    right, shifted = rng.normal(10.0, 1.0, size=4000), rng.normal(11.0, 1.0, size=4000)
    assert dist.crps(y, right) < dist.crps(y, shifted)
    # CRPS of a point forecast is the mean absolute error
    assert dist.crps(np.array([1.0, 3.0]), np.array([2.0])) == pytest.approx(1.0)
    q99 = float(np.quantile(y, 0.99))
    assert dist.pinball(y, q99, 0.99) < dist.pinball(y, q99 - 1.0, 0.99)
    assert dist.pinball(np.array([1.0]), 0.0, 0.9) == pytest.approx(0.9)


def test_crps_in_blocks_is_the_whole_matrix_formula_bit_for_bit() -> None:
    """The blocked E|X - y| sums each row as the one-shot matrix does: a block edge moves no bit."""
    rng = np.random.default_rng(3)
    draws = rng.gamma(2.0, 0.7, size=30_000)
    x = np.sort(draws)[np.linspace(0, draws.size - 1, 4000).astype(int)]
    for n in (1, dist.CRPS_ROWS - 1, dist.CRPS_ROWS, 1000):
        y = rng.gamma(2.0, 0.7, size=n)
        term1 = np.mean(np.abs(x[None, :] - y[:, None]), axis=1)
        i = np.arange(1, x.size + 1)
        e_xx = 2 * np.sum((2 * i - x.size - 1) * x) / x.size**2
        assert dist.crps(y, draws) == float(np.mean(term1 - e_xx / 2))


def test_no_ping_sample_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no ping sample"):
        dist.forecast(1.0, 2, np.array([]))
