"""Trips of several packets: the one-way extra recovered from ping, the burst's wait, the forecast."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from test_forecast import _conf, _today

from iscsi_report.core import distribution as dist
from iscsi_report.core import forecast, model

GAMMA_K, GAMMA_THETA_MS = 1.2, 0.4
FLOOR_MS = 2.0
PINGS = 3000


def _pings(seed: int, size: int = PINGS) -> tuple[np.ndarray, np.ndarray]:
    """A fixed line's ping and a jittered one's: floor noise plus two independent gamma extras."""
    rng = np.random.default_rng(seed)
    floor = FLOOR_MS + np.abs(rng.normal(0.0, 0.03, size))
    extras = rng.gamma(GAMMA_K, GAMMA_THETA_MS, (2, size)).sum(axis=0)
    return FLOOR_MS + np.abs(rng.normal(0.0, 0.03, size)) + extras, floor


def _exact(cdf_at: np.ndarray) -> dist.OneWayExtra:
    """A one-way extra on the default grid whose CDF at the grid points is ``cdf_at``."""
    grid = np.arange(cdf_at.size) * dist.GRID_STEP_MS
    return dist.OneWayExtra(grid, np.diff(np.concatenate([[0.0], cdf_at])))


def test_deconvolution_of_a_gamma_sum_recovers_the_one_way_gamma() -> None:
    rtt, floor = _pings(seed=3)
    extra = dist.one_way_extra(rtt, floor)
    truth = stats.gamma(GAMMA_K, scale=GAMMA_THETA_MS)
    # the grid rounds to the nearest step: compare with the truth's CDF half a step above
    ks = np.max(np.abs(extra.cdf() - truth.cdf(extra.grid_ms + dist.GRID_STEP_MS / 2)))
    assert ks < 0.03
    assert extra.mean_ms() == pytest.approx(GAMMA_K * GAMMA_THETA_MS, rel=0.05)
    naive = np.quantile(rtt - floor.mean(), 0.9) / 2  # half the round trip's p90: too low
    p90 = extra.grid_ms[np.searchsorted(extra.cdf(), 0.9)]
    assert abs(p90 - truth.ppf(0.9)) < abs(naive - truth.ppf(0.9))


def test_a_burst_waits_for_the_latest_packet_as_order_statistics_say() -> None:
    """Back to back with no gap, k independent packets: P(max <= x) = G(x)^k; quantiles grow with k."""
    grid = np.arange(200) * dist.GRID_STEP_MS
    extra = _exact(stats.gamma(GAMMA_K, scale=GAMMA_THETA_MS).cdf(grid) / stats.gamma(GAMMA_K).cdf(1e9))
    g = extra.cdf()
    p99 = []
    for k in (1, 2, 5, 20):
        cdf = dist.burst_extra_cdf(extra, np.zeros(k))
        np.testing.assert_allclose(cdf, g**k, atol=1e-12)
        p99.append(extra.grid_ms[np.searchsorted(cdf, 0.99)])
    assert p99 == sorted(p99) and p99[0] < p99[-1]
    # packets that left long before the last (gap beyond the largest extra) no longer matter
    far = dist.burst_extra_cdf(extra, np.array([grid[-1] + 1.0, 0.0]))
    np.testing.assert_allclose(far, g, atol=1e-12)


def test_a_correlated_line_matches_a_simulated_chain_and_a_fully_sticky_one_is_one_packet() -> None:
    rng = np.random.default_rng(7)
    grid = np.arange(60) * dist.GRID_STEP_MS
    extra = _exact(np.minimum(stats.expon(scale=0.5).cdf(grid) / stats.expon(scale=0.5).cdf(grid[-1]), 1.0))
    offsets, r, n = np.array([0.3, 0.2, 0.1, 0.0]), 0.6, 200_000
    fresh = rng.choice(extra.grid_ms, size=(n, offsets.size), p=extra.pmf)
    keep = rng.random((n, offsets.size)) < r
    keep[:, 0] = False
    last = np.where(~keep, np.arange(offsets.size)[None, :], 0)
    chain = np.take_along_axis(fresh, np.maximum.accumulate(last, axis=1), axis=1)
    held = (chain - offsets[None, :]).max(axis=1)
    simulated = (held[:, None] <= extra.grid_ms[None, :] + 1e-9).mean(axis=0)
    np.testing.assert_allclose(dist.burst_extra_cdf(extra, offsets, r), simulated, atol=0.005)
    independent = dist.burst_extra_cdf(extra, offsets)
    assert (dist.burst_extra_cdf(extra, offsets, r) >= independent - 1e-12).all()  # sticky: fewer draws
    np.testing.assert_allclose(dist.burst_extra_cdf(extra, np.zeros(5), 1.0 - 1e-12), extra.cdf(), atol=1e-9)


def test_one_packet_per_trip_is_the_old_model() -> None:
    rtt, floor = _pings(seed=11, size=6000)
    old = dist.forecast(30.0, 10.0, rtt, boot=1)
    new = dist.forecast_bursts(30.0, rtt, floor, [np.zeros(1)] * old.round_trips)
    assert new.round_trips == old.round_trips == 5
    assert new.draws_ms.mean() == pytest.approx(30.0, rel=0.005)
    for p in (0.5, 0.9, 0.99):
        assert new.quantiles[p] == pytest.approx(old.quantiles[p], rel=0.02)


def test_bursts_raise_the_tail_and_the_mean() -> None:
    rtt, floor = _pings(seed=5)
    one = dist.forecast_bursts(30.0, rtt, floor, [np.zeros(1)] * 4)
    offsets = dist.packet_offsets_ms((1500,) * 50, 1e9)
    burst = dist.forecast_bursts(30.0, rtt, floor, [offsets] * 4)
    assert burst.quantiles[0.99] > one.quantiles[0.99] and burst.draws_ms.mean() > one.draws_ms.mean() + 1.0


def test_packet_offsets_are_the_serialisation_of_the_packets_behind() -> None:
    # 1500 B at 1 Gbit/s is 12 us; 100 B is 0.8 us
    np.testing.assert_allclose(dist.packet_offsets_ms((1500, 1500, 100), 1e9), [0.0128, 0.0008, 0.0])


def test_a_tcp_stream_is_cut_at_the_mss() -> None:
    mss = forecast.ETHERNET_MTU_BYTES - forecast.IP_TCP_HEADER_BYTES
    assert forecast.segment_bytes(2 * mss + 10, 1500) == (1500, 1500, 10 + forecast.IP_TCP_HEADER_BYTES)
    assert forecast.segment_bytes(0, 1500) == ()
    with pytest.raises(model.ModelInputError):
        forecast.segment_bytes(10, forecast.IP_TCP_HEADER_BYTES)


def test_a_writes_rounds_carry_the_command_then_each_burst() -> None:
    """1 MiB at window 1, 64 KiB first burst: the command round, then three 256 KiB and one 192 KiB burst."""
    today = _today()
    target = _conf(bs_bytes=1 << 20, one_way_ms=2.0)
    h = model.BHS_BYTES
    b = forecast.breakdown(today, target, forecast.network_for(today, target))
    streams = forecast.round_stream_bytes(b, target.params, h)
    assert streams == [65536 + h] + [262144 + h] * 3 + [196608 + h]
    rounds = forecast.round_packets(today, target, mtu_bytes=65000)
    assert [sum(p) - len(p) * forecast.IP_TCP_HEADER_BYTES for p in rounds] == streams
    assert [len(p) for p in rounds] == [2, 5, 5, 5, 4]
    params = model.IscsiParams(
        first_burst_bytes=65536,
        max_burst_bytes=262144,
        max_recv_data_segment_bytes=262144,
        max_outstanding_r2t=8,
    )
    wide = _conf(bs_bytes=1 << 20, one_way_ms=2.0, target_r2t_window=8, params=params)
    merged = forecast.round_stream_bytes(
        forecast.breakdown(today, wide, forecast.network_for(today, wide)), wide.params, h
    )
    assert sum(merged) == sum(streams) and len(merged) < len(streams)
