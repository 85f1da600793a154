"""The delay line's first-in, first-out hold simulated packet by packet (issue 22, post hoc)."""

from __future__ import annotations

import numpy as np
import pytest
from test_distribution_bursts import _pings

from iscsi_report.core import distribution as dist
from iscsi_report.lab.delayline import Jitter, Serialiser

LATE_MS = 4.0  # the late packet of the two-point line below
LATE_SHARE = 0.1  # how often a packet is late on it
DRAWS = 200_000


def _two_point() -> dist.OneWayExtra:
    """A line whose packets are on time (0 ms extra) or :data:`LATE_MS` late, a tenth of them."""
    grid = np.arange(int(LATE_MS / dist.GRID_STEP_MS) + 1) * dist.GRID_STEP_MS
    pmf = np.zeros(grid.size)
    pmf[0], pmf[-1] = 1 - LATE_SHARE, LATE_SHARE
    return dist.OneWayExtra(grid, pmf)


def test_a_late_packet_holds_the_packets_behind_it() -> None:
    """Three packets 0.5 ms apart, the second 3 ms late: the third, due at 1.2 ms, leaves with it at 3.5."""
    send_ms = np.array([0.0, 0.5, 1.0])
    extra_ms = np.array([0.1, 3.0, 0.2])
    np.testing.assert_allclose(dist.fifo_release_ms(send_ms, extra_ms), [0.1, 3.5, 3.5])
    # a packet late enough to leave after the hold has passed is not held
    np.testing.assert_allclose(dist.fifo_release_ms(send_ms, [0.1, 3.0, 2.9]), [0.1, 3.5, 3.9])
    # rows are independent lines
    both = dist.fifo_release_ms(send_ms[None, :], np.array([extra_ms, [0.0, 0.0, 0.0]]))
    np.testing.assert_allclose(both, [[0.1, 3.5, 3.5], [0.0, 0.5, 1.0]])


def test_an_acknowledgement_still_in_the_line_holds_the_r2t() -> None:
    """One data packet out, its acknowledgement then the R2T back: three draws must all be on time.

    By hand, P(round extra = 0) = 0.9^3 = 0.729. The multi-packet model (one packet's extra back)
    says 0.9^2 = 0.81: it is the model this one replaces on the way back.
    """
    extra = _two_point()
    rng = np.random.default_rng(1)
    start = (np.full(DRAWS, np.nan), np.full(DRAWS, np.nan))
    round_ms, _ = dist.fifo_round_ms(extra, np.zeros(1), start, 0.0, rng, ack_every=1)
    on_time = float(np.mean(round_ms == 0.0))
    assert on_time == pytest.approx((1 - LATE_SHARE) ** 3, abs=0.005)
    bursts_on_time = float(dist.burst_extra_cdf(extra, np.zeros(1))[0] * extra.cdf()[0])
    assert bursts_on_time == pytest.approx((1 - LATE_SHARE) ** 2)
    assert abs(on_time - bursts_on_time) > 0.07
    # a late acknowledgement adds its own 4 ms at most once: the round's extra is 0, 4 or 8 ms
    assert set(np.unique(round_ms)) <= {0.0, LATE_MS, 2 * LATE_MS}


def test_without_acknowledgements_the_outbound_burst_is_the_multi_packet_model() -> None:
    """No acknowledgements and no stickiness: the round is the latest packet out plus one back."""
    extra = _two_point()
    offsets = np.array([1.0, 0.5, 0.0])
    rng = np.random.default_rng(2)
    start = (np.full(DRAWS, np.nan), np.full(DRAWS, np.nan))
    round_ms, _ = dist.fifo_round_ms(extra, offsets, start, 0.0, rng, ack_every=0)
    out_cdf = dist.burst_extra_cdf(extra, offsets)
    back = extra.pmf
    expected = np.convolve(np.diff(np.concatenate([[0.0], out_cdf])), back)
    grid = np.arange(expected.size) * dist.GRID_STEP_MS
    for x_ms in (0.0, 3.0, 3.5, LATE_MS, 2 * LATE_MS):
        share = float(np.mean(round_ms <= x_ms + dist.TIE_MS))
        assert share == pytest.approx(expected[grid <= x_ms + dist.TIE_MS].sum(), abs=0.005)


def test_a_sticky_chain_keeps_the_marginal_and_shows_its_correlation() -> None:
    extra = _two_point()
    rng = np.random.default_rng(3)
    r = 0.6
    chain = dist.sticky_chain_ms(extra, 2000, np.full(50, np.nan), r, rng)
    assert np.mean(chain == LATE_MS) == pytest.approx(LATE_SHARE, abs=0.01)
    lag1 = np.corrcoef(chain[:, :-1].ravel(), chain[:, 1:].ravel())[0, 1]
    assert lag1 == pytest.approx(r, abs=0.03)
    # the chain runs on from the packet before: nearly fully sticky, a late start stays late
    held = dist.sticky_chain_ms(extra, 3, np.full(1000, LATE_MS), 0.999, rng)
    assert np.mean(held == LATE_MS) > 0.99


def test_acknowledgements_go_back_every_second_packet() -> None:
    assert dist.ack_positions(5).tolist() == [1, 3]
    assert dist.ack_positions(4).tolist() == [1, 3]
    assert dist.ack_positions(3, ack_every=1).tolist() == [0, 1, 2]
    assert dist.ack_positions(3, ack_every=0).size == 0


def test_the_fifo_forecast_keeps_the_fixed_part_and_raises_the_tail_over_the_bursts() -> None:
    rtt, floor = _pings(seed=5)
    offsets = [dist.packet_offsets_ms((65000,) * 5, 1e9)] * 4
    bursts = dist.forecast_bursts(30.0, rtt, floor, offsets)
    fifo = dist.forecast_fifo(30.0, rtt, floor, offsets)
    plain = dist.forecast_fifo(30.0, rtt, floor, offsets, ack_every=0)
    assert fifo.fixed_ms == bursts.fixed_ms and fifo.round_trips == bursts.round_trips == 4
    for p in (0.5, 0.9, 0.99):
        assert plain.quantiles[p] == pytest.approx(bursts.quantiles[p], rel=0.02)
    assert fifo.quantiles[0.99] > bursts.quantiles[0.99] and fifo.draws_ms.mean() > bursts.draws_ms.mean()


def test_the_release_rule_is_the_delay_lines() -> None:
    """The lab line's own scheduler, fed a back-to-back burst with spikes, releases as the running maximum."""
    doc = {"shape": "mixture", "weights": (0.9, 0.1), "extra_ms": (0.0, LATE_MS), "seed": 4}
    twin = Jitter.from_doc(doc)
    extras_ms = np.array([twin.draw_ms() for _ in range(200)])
    line = Serialiser(link_mbps=1000.0, one_way_delay_ms=1.0, jitter=Jitter.from_doc(doc))
    due_ms = np.array([line.schedule(0, 65_000) for _ in range(200)], float) / 1e6
    serialised_ms = np.arange(1, 201) * 0.52  # 65,000 bytes at 1000 Mbit/s: 0.52 ms each
    np.testing.assert_allclose(due_ms, dist.fifo_release_ms(serialised_ms + 1.0, extras_ms), atol=1e-6)
    assert (extras_ms == LATE_MS).sum() > 5 and (due_ms > serialised_ms + 1.0 + extras_ms + 1e-6).any()


def test_the_one_tail_model_deconvolves_only_toward_more_jitter() -> None:
    """A jittered target over a steady today is the validated FIFO forecast; the reverse: whole rounds."""
    rtt, floor = _pings(seed=5)
    offsets = [dist.packet_offsets_ms((65000,) * 5, 1e9)] * 3
    tail, rule = dist.forecast_tail(30.0, rtt, floor, offsets, draws=4000)
    fifo = dist.forecast_fifo(30.0, rtt, floor, offsets, correlation=dist.ping_correlation(rtt), draws=4000)
    assert rule == dist.PER_PACKET and tail.quantiles == fifo.quantiles
    calm, rule = dist.forecast_tail(30.0, floor, rtt, offsets, draws=4000)
    assert rule == dist.PER_ROUND
    # by hand: each draw is the fixed part plus three round trips drawn from the steady sample
    rng = np.random.default_rng(0)
    fixed = 30.0 - 3 * floor.mean()
    by_hand = fixed + sum(rng.choice(floor, 4000) for _ in range(3))
    np.testing.assert_allclose(calm.draws_ms, by_hand)
    same, rule = dist.forecast_tail(30.0, rtt, rtt, offsets, draws=4000)
    assert rule == dist.PER_ROUND and same.draws_ms.mean() == pytest.approx(30.0, abs=0.05)


def test_a_fixed_extra_shifts_every_round_by_two_one_way_extras() -> None:
    """One extra c each way, no spread: every packet shifted alike, so a round is 2c late, none queue."""
    rtt, floor = _pings(seed=6)
    shift = dist.OneWayExtra(np.array([0.25]), np.ones(1))
    offsets = [dist.packet_offsets_ms((65000,) * 5, 1e9)] * 2
    shifted = dist.forecast_fifo(30.0, rtt, floor, offsets, draws=3000, extra=shift)
    none = dist.forecast_fifo(30.0, rtt, floor, offsets, draws=3000, extra=dist.NO_EXTRA)
    np.testing.assert_allclose(shifted.draws_ms - none.draws_ms, 2 * 2 * 0.25)


def test_a_ping_samples_spread_and_stickiness() -> None:
    assert dist.spread_ms(np.r_[np.zeros(98), 5.0, 5.0]) == pytest.approx(
        np.quantile(np.r_[np.zeros(98), 5.0, 5.0], 0.99)
    )
    steps = np.repeat([1.0, 3.0], 500)  # one level, then another: strongly sticky
    assert dist.ping_correlation(steps) == dist.MAX_CORRELATION
    assert dist.ping_correlation(np.tile([1.0, 3.0], 500)) == 0.0  # alternating: clipped at 0
