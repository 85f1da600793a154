"""Distribution helpers: datamash-compatible percentiles, mode counting, Sarle's coefficient."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from iscsi_report.core import stats

DATAMASH = shutil.which("datamash")


def _datamash(values: np.ndarray, ops: str) -> list[float]:
    """Run ``datamash <ops>`` over one column of values, as the blog did."""
    text = "\n".join(f"{v:.6f}" for v in values) + "\n"
    out = subprocess.run(["datamash", *ops.split()], input=text, capture_output=True, text=True, check=True)
    return [float(x) for x in out.stdout.split()]


@pytest.mark.skipif(DATAMASH is None, reason="datamash is not installed")
@pytest.mark.parametrize("n", [2, 5, 10, 101, 900, 1234])
def test_summary_agrees_with_datamash(n: int) -> None:
    rng = np.random.default_rng(n)
    values = np.round(rng.lognormal(mean=0.5, sigma=0.8, size=n), 6)
    mean, p50, p99, p90, mx, sstdev = _datamash(values, "mean 1 perc:50 1 perc:99 1 perc:90 1 max 1 sstdev 1")
    got = stats.summarize_rtt(values)
    assert got["mean"] == pytest.approx(mean, rel=1e-9)
    assert got["p50"] == pytest.approx(p50, rel=1e-9)
    assert got["p99"] == pytest.approx(p99, rel=1e-9)
    assert stats.percentile(values, 90) == pytest.approx(p90, rel=1e-9)
    assert got["max"] == pytest.approx(mx, rel=1e-12)
    assert got["sstdev"] == pytest.approx(sstdev, rel=1e-9)
    assert got["cv_pct"] == pytest.approx(100 * sstdev / mean, rel=1e-9)


def test_percentile_is_linear_interpolation_between_ranks() -> None:
    # rank (n-1)*p: for [1, 2, 3, 4, 10] p99 sits at rank 3.96 -> 4 + 0.96 * 6
    assert stats.percentile([10, 1, 3, 2, 4], 99) == pytest.approx(9.76)
    assert stats.percentile([1, 2, 3, 4], 50) == pytest.approx(2.5)


def test_summarize_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one"):
        stats.summarize_rtt([])
    with pytest.raises(ValueError, match="at least two"):
        stats.summarize_rtt([1.0])
    with pytest.raises(ValueError, match="finite"):
        stats.summarize_rtt([1.0, float("nan")])


def _bimodal(rng: np.random.Generator, n: int) -> np.ndarray:
    low = rng.lognormal(np.log(1.5), 0.15, size=n // 3)
    high = rng.lognormal(np.log(4.0), 0.15, size=n - n // 3)
    return np.concatenate([low, high])


def test_count_modes_unimodal_lognormal() -> None:
    rng = np.random.default_rng(1)
    assert stats.count_modes(rng.lognormal(np.log(2.6), 0.4, size=20_000)) == 1


def test_count_modes_bimodal_reports_both_locations() -> None:
    rng = np.random.default_rng(2)
    samples = _bimodal(rng, 3000)
    modes = stats.find_modes(samples)
    assert len(modes) == 2
    assert modes[0] == pytest.approx(1.5, rel=0.1)
    assert modes[1] == pytest.approx(4.0, rel=0.1)


def test_count_modes_linear_scale_and_prominence_threshold() -> None:
    rng = np.random.default_rng(3)
    main = rng.normal(10.0, 1.0, size=10_000)
    bump = rng.normal(16.0, 0.5, size=200)  # a small bump: ~8% of the main peak height
    samples = np.concatenate([main, bump])
    assert stats.count_modes(samples, log=False, min_prominence=0.02) == 2
    assert stats.count_modes(samples, log=False, min_prominence=0.5) == 1


def test_kde_refuses_nonpositive_values_on_log_scale() -> None:
    with pytest.raises(ValueError, match="positive"):
        stats.count_modes([0.0, 1.0, 2.0])


def test_bimodality_coefficient_separates_bimodal_from_normal() -> None:
    rng = np.random.default_rng(4)
    normal = rng.normal(0.0, 1.0, size=5000)
    two_peaks = np.concatenate([rng.normal(-3, 1, 2500), rng.normal(3, 1, 2500)])
    assert stats.bimodality_coefficient(normal) < stats.UNIFORM_BIMODALITY_COEFFICIENT
    assert stats.bimodality_coefficient(two_peaks) > stats.UNIFORM_BIMODALITY_COEFFICIENT
    assert stats.bimodality_coefficient(_bimodal(rng, 3000), log=True) > 5 / 9
