"""The distribution of one operation's latency, forecast from the network's ping sample.

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

import math
from dataclasses import dataclass

import numpy as np

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


def crps(y: np.ndarray, draws: np.ndarray, max_draws: int = 4000) -> float:
    """Mean continuous ranked probability score of a forecast given by ``draws`` over outcomes ``y``.

    CRPS(F, y) = E|X - y| - E|X - X'| / 2 (Gneiting and Raftery 2007), X, X' drawn from F; lower is
    better, in the outcomes' unit (ms).
    """
    x = np.sort(np.asarray(draws, dtype=float))
    if x.size > max_draws:
        x = x[np.linspace(0, x.size - 1, max_draws).astype(int)]
    y = np.asarray(y, dtype=float)
    term1 = np.mean(np.abs(x[None, :] - y[:, None]), axis=1)
    i = np.arange(1, x.size + 1)
    e_xx = 2 * np.sum((2 * i - x.size - 1) * x) / x.size**2  # E|X - X'| from the sorted sample
    return float(np.mean(term1 - e_xx / 2))
