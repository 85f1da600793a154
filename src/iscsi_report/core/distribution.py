"""The distribution of one operation's latency, forecast from the network's ping sample.

:func:`forecast_tail` is the one tail model the forecasts use (the command line, the own-data
chapters); it simulates the first-in, first-out line of :func:`forecast_fifo`, which the fifth
jitter sweep tested. The first model (:func:`forecast`, described next) and the multi-packet one
(:func:`forecast_bursts`) stay for the lab chapter, which scores them beside it.

A mean-only forecast says nothing of the slow writes users feel. One write pays its one-way trips
(command, each exposed R2T round, the last data and the status): in round trips, ``n = trips / 2``.
Its latency is a fixed part (wire time, device, host residual: everything but the trips) plus
the sum of the ``n`` round trips it happened to meet. The engine's mean forecast fixes the fixed
part (``op_ms - n x mean RTT``); the round trips are drawn from today's ping sample at the
protocol's spacing, ``n`` *consecutive* samples per write (a moving block: trips of one write are
close in time and share the network's mood, so correlation is kept rather than averaged away).

Percentiles come from many such draws (Monte Carlo); their intervals from re-drawing the ping
sample itself in blocks (a moving-block bootstrap), so a short ping log gives wide intervals.
Pure functions of arrays; no I/O.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from iscsi_report.core.units import BITS_PER_BYTE, MS_PER_S

QUANTILES = (0.5, 0.9, 0.99, 0.999)
N_DRAWS = 20_000
N_BOOT = 200
BLOCK = 50  # ping samples per bootstrap block: at 2 ms spacing, 100 ms of the network's history
CI_LEVEL = 0.95


@dataclass(frozen=True)
class LatencyDistribution:
    """Forecast percentiles of one operation's latency (ms), their intervals, and draws for a CDF."""

    quantiles: dict[float, float]
    low: dict[float, float]
    high: dict[float, float]
    round_trips: int
    fixed_ms: float
    draws_ms: np.ndarray

    def cdf(self, x_ms: np.ndarray) -> np.ndarray:
        """Share of forecast draws at or below each ``x_ms``."""
        s = np.sort(self.draws_ms)
        return np.searchsorted(s, np.asarray(x_ms, dtype=float), side="right") / s.size


def percentile_key(p: float) -> str:
    """The name a level goes by in tables and JSON: 0.5 -> ``p50_ms``, 0.999 -> ``p99_9_ms``."""
    return f"p{p * 100:g}_ms".replace(".", "_")


def round_trips(one_way_trips: float) -> int:
    """Whole round trips of a write that pays ``one_way_trips`` one-way trips (at least one)."""
    return max(1, round(one_way_trips / 2))


def block_sums(rtt_ms: np.ndarray, n: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Sums of ``n`` consecutive RTT samples starting at random places (wrapping around)."""
    rtt = np.asarray(rtt_ms, dtype=float)
    if rtt.size == 0:
        raise ValueError("no ping sample: a latency distribution needs the network's round trips")
    starts = rng.integers(0, rtt.size, size=draws)
    idx = (starts[:, None] + np.arange(n)[None, :]) % rtt.size
    sums: np.ndarray = rtt[idx].sum(axis=1)
    return sums


def forecast(
    mean_op_ms: float,
    one_way_trips: float,
    rtt_ms: np.ndarray,
    *,
    draws: int = N_DRAWS,
    boot: int = N_BOOT,
    seed: int = 0,
) -> LatencyDistribution:
    """The latency distribution whose mean is ``mean_op_ms`` and whose trips meet ``rtt_ms``'s rounds."""
    rtt = np.asarray(rtt_ms, dtype=float)
    rtt = rtt[np.isfinite(rtt)]
    if rtt.size == 0:
        raise ValueError("no ping sample: a latency distribution needs the network's round trips")
    n = round_trips(one_way_trips)
    fixed = mean_op_ms - n * float(rtt.mean())
    rng = np.random.default_rng(seed)
    sample = fixed + block_sums(rtt, n, draws, rng)
    q = {p: float(np.quantile(sample, p)) for p in QUANTILES}
    reps = np.array([_quantiles_of(_resampled(rtt, rng), n, fixed, rng) for _ in range(boot)])
    lo_p, hi_p = (1 - CI_LEVEL) / 2, (1 + CI_LEVEL) / 2
    low = {p: float(np.quantile(reps[:, i], lo_p)) for i, p in enumerate(QUANTILES)}
    high = {p: float(np.quantile(reps[:, i], hi_p)) for i, p in enumerate(QUANTILES)}
    return LatencyDistribution(q, low, high, n, fixed, sample)


def _resampled(rtt: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The ping sample re-drawn in moving blocks of :data:`BLOCK` (its autocorrelation kept)."""
    block = min(BLOCK, rtt.size)
    k = math.ceil(rtt.size / block)
    starts = rng.integers(0, rtt.size - block + 1, size=k)
    return np.concatenate([rtt[s : s + block] for s in starts])[: rtt.size]


def _quantiles_of(rtt: np.ndarray, n: int, fixed: float, rng: np.random.Generator) -> list[float]:
    """The forecast quantiles from one bootstrap copy of the ping sample (fewer draws: 2,000)."""
    sample = fixed + block_sums(rtt, n, 2000, rng)
    return [float(np.quantile(sample, p)) for p in QUANTILES]


def pinball(y: np.ndarray, q_forecast: float, p: float) -> float:
    """Mean pinball (quantile) loss of forecast ``q_forecast`` for level ``p`` over outcomes ``y``."""
    d = np.asarray(y, dtype=float) - q_forecast
    return float(np.mean(np.maximum(p * d, (p - 1) * d)))


CRPS_ROWS = 64  # outcomes per block of the CRPS's |x - y| matrix: a block stays in cache


def crps(y: np.ndarray, draws: np.ndarray, max_draws: int = 4000) -> float:
    """Mean continuous ranked probability score of a forecast given by ``draws`` over outcomes ``y``.

    CRPS(F, y) = E|X - y| - E|X - X'| / 2 (Gneiting and Raftery 2007), X, X' drawn from F; lower is
    better, in the outcomes' unit (ms).
    """
    x = np.sort(np.asarray(draws, dtype=float))
    if x.size > max_draws:
        x = x[np.linspace(0, x.size - 1, max_draws).astype(int)]
    y = np.asarray(y, dtype=float)
    term1 = _mean_abs_gaps(y, x)
    i = np.arange(1, x.size + 1)
    e_xx = 2 * np.sum((2 * i - x.size - 1) * x) / x.size**2  # E|X - X'| from the sorted sample
    return float(np.mean(term1 - e_xx / 2))


def _mean_abs_gaps(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per outcome ``y_k``: the mean of ``|x - y_k|``, a few rows of the matrix at a time, in one buffer.

    Row by row the same sums as ``np.mean(np.abs(x[None, :] - y[:, None]), axis=1)``, bit for bit,
    without two temporaries of ``y.size * x.size`` floats (issue 28: 4x less CPU in lab_tails).
    """
    out = np.empty(y.size)
    buf = np.empty((min(CRPS_ROWS, y.size), x.size))
    for start in range(0, y.size, CRPS_ROWS):
        part = y[start : start + CRPS_ROWS]
        rows = buf[: part.size]
        np.subtract(x[None, :], part[:, None], out=rows)
        np.abs(rows, out=rows)
        np.mean(rows, axis=1, out=out[start : start + part.size])
    return out


# ---- trips of several packets (issue 22, post hoc) ---------------------------------------------
#
# A ping is one small packet each way; a write's round sends a burst of packets out and one back.
# In a first-in, first-out line the last packet of a burst leaves no earlier than any packet ahead
# of it, so a burst waits for the largest extra delay among its packets, less the serialisation
# time that separated each from the last. The one-way extra delay per packet is not measured
# directly: it is recovered from ping's round trips (forward extra + backward extra + today's floor).

GRID_STEP_MS = 0.05  # resolution of the one-way extra-delay grid: finer than any tail studied here
GRID_TAIL_MS = 1.0  # grid headroom beyond the largest observed extra (ms), so no mass is cut off
TIE_MS = 1e-9  # an extra equal to a threshold up to float rounding counts as within it
DECONVOLVED_KEPT = 64  # one-way extras kept per process: a sweep's shapes times a chapter's sweeps


@dataclass(frozen=True)
class OneWayExtra:
    """The per-packet one-way extra delay as a probability mass on a grid (ms), from a ping sample."""

    grid_ms: np.ndarray
    pmf: np.ndarray

    def cdf(self) -> np.ndarray:
        """P(extra <= grid point)."""
        out: np.ndarray = np.minimum(np.cumsum(self.pmf), 1.0)
        return out

    def mean_ms(self) -> float:
        """The mean extra delay (ms)."""
        return float(np.dot(self.grid_ms, self.pmf))


def _on_grid(values_ms: np.ndarray, size: int, step_ms: float) -> np.ndarray:
    """Probability mass of ``values_ms`` rounded to a grid of ``size`` points from 0 (clipped)."""
    idx = np.clip(np.rint(np.asarray(values_ms, float) / step_ms).astype(int), 0, size - 1)
    mass: np.ndarray = np.bincount(idx, minlength=size) / idx.size
    return mass


def one_way_extra(
    rtt_ms: np.ndarray, floor_rtt_ms: np.ndarray, *, step_ms: float = GRID_STEP_MS
) -> OneWayExtra:
    """The one-way extra delay whose two independent copies, plus today's floor, make ``rtt_ms``.

    Ping's round trip under jitter is the floor (today's fixed network's ping, its own small
    spread kept as a kernel) plus a forward and a backward extra, drawn independently from one
    distribution (the delay line draws each direction with its own seed). So the round-trip
    extra's law is the one-way law convolved with itself and with the floor's spread: a quadratic,
    not linear, deconvolution. It is solved non-parametrically on a grid: a probability mass
    ``p >= 0`` minimising the squared distance between the CDF of ``floor * p * p`` and ping's
    empirical CDF (L-BFGS-B with its bounds and the analytic gradient; the CDF rather than the
    histogram because it is not noisy bin by bin). Non-parametric because the shapes of interest
    include mixtures and replayed traces that no one family fits. The far tail (beyond the one-way
    p99) rests on few pings and is the least certain part.
    """
    floor = np.asarray(floor_rtt_ms, float)
    floor = floor[np.isfinite(floor)]
    rtt = np.asarray(rtt_ms, float)
    rtt = rtt[np.isfinite(rtt)]
    if rtt.size == 0 or floor.size == 0:
        raise ValueError("no ping sample: a one-way extra delay needs today's and the new ping")
    return _deconvolved(rtt.tobytes(), floor.tobytes(), step_ms)


@functools.lru_cache(maxsize=DECONVOLVED_KEPT)
def _deconvolved(rtt_bytes: bytes, floor_bytes: bytes, step_ms: float) -> OneWayExtra:
    """:func:`one_way_extra`'s fit, once per pair of samples (every target under one jitter shape shares it).

    Deterministic, so a kept result is the result; its arrays are read-only, as it is shared.
    """
    from scipy import optimize

    rtt, floor = np.frombuffer(rtt_bytes), np.frombuffer(floor_bytes)
    base = float(floor.min())
    size = int(np.ceil((max(float(rtt.max()) - base, 0.0) + GRID_TAIL_MS) / step_ms)) + 1
    kernel = _on_grid(floor - base, size, step_ms)
    target = np.cumsum(_on_grid(rtt - base, size, step_ms))
    start = _on_grid((rtt - float(floor.mean())) / 2, size, step_ms)

    def loss(p: np.ndarray) -> tuple[float, np.ndarray]:
        pp = np.convolve(p, p)
        c = np.convolve(pp, kernel)[:size]
        resid = np.cumsum(c) - target
        g_c = np.cumsum((2 * resid)[::-1])[::-1]  # d loss / d c_m: every CDF point from m on
        padded = np.concatenate([g_c, np.zeros(pp.size - size + kernel.size)])
        g_pp = np.correlate(padded, kernel, "valid")[: pp.size]
        grad = 2 * np.correlate(g_pp, p, "valid")[:size]
        return float(resid @ resid), grad

    fit = optimize.minimize(loss, start, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * size)
    pmf = np.maximum(fit.x, 0.0)
    grid, mass = np.arange(size) * step_ms, pmf / pmf.sum()
    grid.setflags(write=False)
    mass.setflags(write=False)
    return OneWayExtra(grid, mass)


def burst_extra_cdf(extra: OneWayExtra, offsets_ms: np.ndarray, correlation: float = 0.0) -> np.ndarray:
    """P(the last packet of a burst is held at most x ms beyond its own fixed delay), x on the grid.

    ``offsets_ms`` gives, for each packet in send order, how long before the last one it left the
    serialiser (the last's is 0). First in, first out, the last packet is released at the latest
    of ``d_j - offset_j``: with independent packets the CDF is the product of ``G(x + offset_j)``.
    With ``correlation`` r a packet keeps the previous packet's extra with probability r (the
    delay line's correlated jitter); the CDF then follows the chain packet by packet (a forward
    recursion over the current extra, vectorised over x). r = 0 is the product.
    """
    x = extra.grid_ms
    offsets = np.asarray(offsets_ms, float)
    if offsets.size == 0:
        raise ValueError("a burst has at least one packet")
    ok = extra.grid_ms[None, :] <= x[:, None] + offsets[0] + TIE_MS  # rows: x; columns: the packet's extra
    u = extra.pmf[None, :] * ok
    for o in offsets[1:]:
        kept = correlation * u + (1 - correlation) * extra.pmf[None, :] * u.sum(axis=1, keepdims=True)
        u = kept * (extra.grid_ms[None, :] <= x[:, None] + o + TIE_MS)
    out: np.ndarray = np.minimum(u.sum(axis=1), 1.0)
    return out


def _draw_from_cdf(grid_ms: np.ndarray, cdf: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of a grid variable with the given CDF (inverse transform)."""
    idx = np.searchsorted(cdf, rng.random(size) * cdf[-1], side="left")
    out: np.ndarray = grid_ms[np.minimum(idx, grid_ms.size - 1)]
    return out


@dataclass
class _Rounds:
    """What a multi-packet forecast starts from: the samples, the one-way extra, the draws so far."""

    floor: np.ndarray  # today's ping (ms), finite values
    extra: OneWayExtra
    rng: np.random.Generator
    rounds: int
    fixed_ms: float  # the engine's mean less the rounds at ping's mean
    sample: np.ndarray  # one latency per draw, rounds added in place

    def distribution(self) -> LatencyDistribution:
        """The sample's quantiles (``low`` and ``high`` equal the point values: no interval here)."""
        q = {p: float(np.quantile(self.sample, p)) for p in QUANTILES}
        return LatencyDistribution(q, dict(q), dict(q), self.rounds, self.fixed_ms, self.sample)


def _rounds_start(
    mean_op_ms: float,
    rtt_ms: np.ndarray,
    floor_rtt_ms: np.ndarray,
    rounds: int,
    draws: int,
    seed: int,
    extra: OneWayExtra | None = None,
) -> _Rounds:
    """The finite samples, the one-way extra (deconvolved unless given) and every draw's fixed start."""
    rtt = np.asarray(rtt_ms, float)
    rtt = rtt[np.isfinite(rtt)]
    floor = np.asarray(floor_rtt_ms, float)
    floor = floor[np.isfinite(floor)]
    fixed = mean_op_ms - rounds * float(rtt.mean())
    extra = one_way_extra(rtt, floor) if extra is None else extra
    return _Rounds(floor, extra, np.random.default_rng(seed), rounds, fixed, np.full(draws, fixed))


def forecast_bursts(
    mean_op_ms: float,
    rtt_ms: np.ndarray,
    floor_rtt_ms: np.ndarray,
    offsets_per_round_ms: list[np.ndarray],
    *,
    correlation: float = 0.0,
    draws: int = N_DRAWS,
    seed: int = 0,
) -> LatencyDistribution:
    """The latency distribution when each round's outbound trip is a burst of several packets.

    One round per entry of ``offsets_per_round_ms`` (each a burst's packet offsets, see
    :func:`burst_extra_cdf`). A round costs today's floor (a draw of today's ping) plus the
    burst's extra on the way out plus one packet's extra back; rounds are independent (the
    captures of the first jitter sweep show them barely correlated). The fixed part is the
    engine's mean less the rounds at ping's mean, as in :func:`forecast`, so with one packet per
    trip the mean is the engine's; a burst of several packets meets more delay than one ping, and
    the mean rises above the engine's by that much (the engine's mean charges one ping per round).
    Intervals are not computed here (each would need a new deconvolution): ``low`` and ``high``
    equal the point values.
    """
    r = _rounds_start(mean_op_ms, rtt_ms, floor_rtt_ms, len(offsets_per_round_ms), draws, seed)
    extra, rng, floor, sample = r.extra, r.rng, r.floor, r.sample
    back_cdf = extra.cdf()
    out_cdfs: dict[bytes, np.ndarray] = {}  # rounds of one shape share a burst's CDF (issue 28)
    for offsets in offsets_per_round_ms:
        shape = np.asarray(offsets, float).tobytes()
        if shape not in out_cdfs:
            out_cdfs[shape] = burst_extra_cdf(extra, offsets, correlation)
        out_cdf = out_cdfs[shape]
        sample += rng.choice(floor, draws)
        sample += _draw_from_cdf(extra.grid_ms, out_cdf, draws, rng)
        sample += _draw_from_cdf(extra.grid_ms, back_cdf, draws, rng)
    return r.distribution()


def packet_offsets_ms(packet_bytes: list[int] | tuple[int, ...], link_bps: float) -> np.ndarray:
    """How long before the last packet each packet of a back-to-back burst left the serialiser.

    A packet's offset is the serialisation time of the packets after it at ``link_bps``.
    """
    sizes = np.asarray(packet_bytes, float)
    after = np.concatenate([np.cumsum(sizes[::-1])[::-1][1:], [0.0]])
    out: np.ndarray = after * BITS_PER_BYTE / link_bps * MS_PER_S
    return out


# ---- the delay line's first-in, first-out hold, simulated (issue 22, post hoc) -----------------
#
# The delay line releases each packet at the later of (its send time + its own extra) and the
# previous packet's release in the same direction: a late packet holds every packet behind it.
# :func:`forecast_bursts` applies that to a round's outbound burst only, draws the way back as one
# packet and each round afresh. The line's way back also carries TCP's acknowledgements of the
# burst, sent as its packets arrive, ahead of the R2T or status; its draws run as one chain per
# direction through every packet. The simulation below follows the line packet by packet.

ACK_EVERY = 2  # the receiver acknowledges every second full-sized segment at once (RFC 5681, 4.2)


def fifo_release_ms(send_ms: np.ndarray, extra_ms: np.ndarray) -> np.ndarray:
    """Release times of packets through a first-in, first-out line (last axis: send order).

    A packet leaves at the later of its send time plus its own extra and the release of the packet
    ahead of it: a running maximum of ``send + extra``.
    """
    out: np.ndarray = np.maximum.accumulate(np.asarray(send_ms, float) + np.asarray(extra_ms, float), axis=-1)
    return out


def sticky_chain_ms(
    extra: OneWayExtra, packets: int, previous_ms: np.ndarray, correlation: float, rng: np.random.Generator
) -> np.ndarray:
    """Extras of the next ``packets`` packets per draw: each keeps the one before with prob. ``correlation``.

    The line's correlated jitter, one chain per direction; ``previous_ms`` (one per draw, NaN for
    none yet) is the extra of the packet before the first. Rows: draws; columns: packets.
    """
    prev = np.asarray(previous_ms, float)
    cdf = extra.cdf()
    out = np.empty((prev.size, packets))
    for j in range(packets):
        fresh = _draw_from_cdf(extra.grid_ms, cdf, prev.size, rng)
        keep = (rng.random(prev.size) < correlation) & np.isfinite(prev)
        prev = np.where(keep, prev, fresh)
        out[:, j] = prev
    return out


def ack_positions(packets: int, ack_every: int = ACK_EVERY) -> np.ndarray:
    """Indices of a burst's packets whose arrival sends an acknowledgement back (none when 0)."""
    if ack_every <= 0:
        return np.array([], dtype=int)
    return np.arange(ack_every - 1, packets, ack_every)


def fifo_round_ms(
    extra: OneWayExtra,
    offsets_ms: np.ndarray,
    chains: tuple[np.ndarray, np.ndarray],
    correlation: float,
    rng: np.random.Generator,
    ack_every: int = ACK_EVERY,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """One round's extra over its fixed trip (per draw), and each direction's last extra drawn.

    Out: the burst's packets leave the serialiser ``offsets_ms`` before the last and pass the
    line in order; the round's outbound extra is the last packet's release. Back: an
    acknowledgement leaves as each :data:`ACK_EVERY`-th packet arrives, then the R2T or status as
    the last arrives; it is released behind any acknowledgement still held.
    """
    offsets = np.asarray(offsets_ms, float)
    out_extra = sticky_chain_ms(extra, offsets.size, chains[0], correlation, rng)
    arrive = fifo_release_ms(-offsets[None, :], out_extra)
    acks = ack_positions(offsets.size, ack_every)
    back_send = np.concatenate([arrive[:, acks], arrive[:, -1:]], axis=1)
    back_extra = sticky_chain_ms(extra, back_send.shape[1], chains[1], correlation, rng)
    back = fifo_release_ms(back_send, back_extra)[:, -1]
    return back, (out_extra[:, -1], back_extra[:, -1])


def forecast_fifo(
    mean_op_ms: float,
    rtt_ms: np.ndarray,
    floor_rtt_ms: np.ndarray,
    offsets_per_round_ms: list[np.ndarray],
    *,
    correlation: float = 0.0,
    ack_every: int = ACK_EVERY,
    draws: int = N_DRAWS,
    seed: int = 0,
    extra: OneWayExtra | None = None,
) -> LatencyDistribution:
    """The latency distribution with each round simulated through the first-in, first-out line.

    As :func:`forecast_bursts` (the fixed part, today's floor per round, the deconvolved per-packet
    extra), but each round is :func:`fifo_round_ms`: the way back carries the burst's
    acknowledgements ahead of the R2T or status, and each direction's stickiness runs on from
    round to round. Designed after the fourth jitter sweep, tested on the fifth. ``extra``, when
    given, replaces the deconvolved one (:data:`NO_EXTRA`: rounds of the floor alone). ``low`` and
    ``high`` equal the point values.
    """
    r = _rounds_start(mean_op_ms, rtt_ms, floor_rtt_ms, len(offsets_per_round_ms), draws, seed, extra)
    extra, rng, floor, sample = r.extra, r.rng, r.floor, r.sample
    chains = (np.full(draws, np.nan), np.full(draws, np.nan))
    for offsets in offsets_per_round_ms:
        if extra.pmf.size == 1:  # one fixed extra each way: every packet shifted alike, nothing queues
            extra_ms = np.full(draws, 2 * float(extra.grid_ms[0]))
        else:
            extra_ms, chains = fifo_round_ms(extra, offsets, chains, correlation, rng, ack_every)
        sample += rng.choice(floor, draws) + extra_ms
    return r.distribution()


MAX_CORRELATION = 0.95  # ping's lag-1 autocorrelation is clipped here: a fully sticky line is one draw
SPREAD_LEVELS = (0.5, 0.99)  # a ping sample's jitter: the distance from its median to its p99
NO_EXTRA = OneWayExtra(np.zeros(1), np.ones(1))  # no per-packet extra: every packet at its fixed delay
PER_PACKET = "per-packet"  # the target's ping is the more jittered: its extra deconvolved over today's
PER_ROUND = "per-round"  # no more jittered than today's: whole round trips drawn from the target's ping


def lag1(series: list[np.ndarray]) -> float:
    """Lag-1 correlation of consecutive values, pooled over series (each already centred)."""
    a = np.concatenate([s[:-1] for s in series if s.size > 1])
    b = np.concatenate([s[1:] for s in series if s.size > 1])
    if a.size <= 2 or np.ptp(a) == 0 or np.ptp(b) == 0:  # too few, or a constant: no correlation defined
        return math.nan
    return float(np.corrcoef(a, b)[0, 1])


def ping_correlation(rtt_ms: np.ndarray) -> float:
    """Ping's lag-1 autocorrelation, clipped to [0, MAX_CORRELATION]: the line's stickiness per packet.

    Each ping is one packet each way and correlated jitter repeats the previous packet's extra, so
    in ping's sample the two directions' stickiness shows as lag-1 correlation.
    """
    rtt = np.asarray(rtt_ms, float)
    r = lag1([rtt - float(np.mean(rtt))])
    return float(np.clip(r, 0.0, MAX_CORRELATION)) if math.isfinite(r) else 0.0


def spread_ms(rtt_ms: np.ndarray) -> float:
    """A ping sample's jitter (ms): its p99 less its median (finite values)."""
    rtt = np.asarray(rtt_ms, float)
    low, high = np.quantile(rtt[np.isfinite(rtt)], SPREAD_LEVELS)
    return float(high - low)


def tail_rule(target_rtt_ms: np.ndarray, today_rtt_ms: np.ndarray) -> str:
    """Which way the tail is forecast: :data:`PER_PACKET` when the target's ping is the more jittered.

    The simulated line was validated (the fifth jitter sweep, pre-registered) where a jittered
    network is forecast over today's steady one: the extra each packet meets is deconvolved from
    the target's ping over today's. Toward less jitter (or the same network) there is nothing to
    deconvolve, so each round meets one whole round trip of the target's ping (:data:`PER_ROUND`).
    """
    return PER_PACKET if spread_ms(target_rtt_ms) > spread_ms(today_rtt_ms) else PER_ROUND


def forecast_tail(
    mean_op_ms: float,
    target_rtt_ms: np.ndarray,
    today_rtt_ms: np.ndarray,
    offsets_per_round_ms: list[np.ndarray],
    *,
    ack_every: int = ACK_EVERY,
    draws: int = N_DRAWS,
    seed: int = 0,
) -> tuple[LatencyDistribution, str]:
    """One operation's latency distribution through the simulated line, and the rule (:func:`tail_rule`).

    The one tail model every forecast uses, the lab chapter's included: :func:`forecast_fifo` with
    today's ping as the floor and the target's extra per packet, or (toward less jitter) the
    target's ping as the floor and no per-packet extra. Stickiness is the target's ping's lag-1
    correlation; ``ack_every`` is there for the chapter's sensitivity check.
    """
    rule = tail_rule(target_rtt_ms, today_rtt_ms)
    per_packet = rule == PER_PACKET
    d = forecast_fifo(
        mean_op_ms,
        target_rtt_ms,
        today_rtt_ms if per_packet else target_rtt_ms,
        offsets_per_round_ms,
        correlation=ping_correlation(target_rtt_ms),
        ack_every=ack_every,
        draws=draws,
        seed=seed,
        extra=None if per_packet else NO_EXTRA,
    )
    return d, rule
