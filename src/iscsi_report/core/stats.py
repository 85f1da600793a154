"""Distribution summaries for latency samples: datamash-compatible percentiles and mode counting.

The blog summarised its ping samples with ``datamash mean 1 perc:50 1 perc:99 1 max 1 sstdev 1``.
GNU datamash (1.7, checked in tests/test_stats.py against the installed binary) computes
``perc:P`` by linear interpolation between closest ranks, which is numpy's ``method="linear"``
(Hyndman & Fan type 7): the value at rank ``(n - 1) * P / 100`` of the sorted sample.

Two measures of bimodality are offered, because no single one is reliable:

* :func:`find_modes` / :func:`count_modes`: local maxima of a Gaussian kernel density estimate,
  by default of the log10 values (latency is positive and right-skewed; on a log axis a
  log-normal component is symmetric, so "a mode" means "a cluster of latencies"). The bandwidth
  is Silverman's rule of thumb, ``0.9 * min(sd, IQR / 1.349) * n ** (-1/5)``, computed on the
  (log) values. A local maximum counts as a mode only when its topographic prominence is at
  least ``min_prominence`` (default 5%) of the highest density peak, so that ripples from
  sampling noise and from the 3-significant-digit printing of ping are not counted.
* :func:`bimodality_coefficient`: Sarle's coefficient ``(g**2 + 1) / (k + 3 (n-1)**2 /
  ((n-2)(n-3)))`` with bias-corrected skewness ``g`` and excess kurtosis ``k``. Values above
  5/9 (the value of a uniform distribution) suggest bi- or multimodality; it is also inflated
  by strong skew, so for heavy-tailed latency it is a hint, not a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
from scipy import stats as sps

PERCENTILE_METHOD: Final = "linear"  # what GNU datamash perc:P computes (Hyndman & Fan type 7)
DEFAULT_MIN_PROMINENCE = 0.05  # fraction of the highest density peak a mode must stand out by
KDE_GRID_POINTS = 2048  # evaluation grid of the binned KDE
KDE_PAD_BANDWIDTHS = 4.0  # grid extends this many bandwidths beyond the data on each side
SILVERMAN_FACTOR = 0.9
IQR_TO_SD = 1.349  # IQR of a standard normal
UNIFORM_BIMODALITY_COEFFICIENT = 5.0 / 9.0  # Sarle's threshold


def _as_array(samples: Sequence[float] | np.ndarray, *, what: str = "samples") -> np.ndarray:
    """Samples as a 1-D float array; empty or non-finite input is refused, not guessed at."""
    arr = np.asarray(samples, dtype=float).ravel()
    if arr.size == 0:
        raise ValueError(f"{what}: expected at least one value, got none")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: expected finite values, got NaN or infinity")
    return arr


def percentile(samples: Sequence[float] | np.ndarray, pct: float) -> float:
    """The ``pct``-th percentile as ``datamash perc:pct`` prints it (linear interpolation)."""
    arr = _as_array(samples)
    return float(np.percentile(arr, pct, method=PERCENTILE_METHOD))


def summarize_rtt(samples_ms: Sequence[float] | np.ndarray) -> dict[str, float]:
    """mean, p50, p99, max, sample standard deviation and CV% of RTT samples, like the blog.

    ``sstdev`` is the sample (n - 1) standard deviation, as datamash ``sstdev``; ``cv_pct`` is
    ``100 * sstdev / mean`` (the blog's "Coff. var" column). Needs at least two samples.
    """
    arr = _as_array(samples_ms, what="samples_ms")
    if arr.size < 2:
        raise ValueError("samples_ms: expected at least two values for a sample standard deviation")
    mean = float(arr.mean())
    sstdev = float(arr.std(ddof=1))
    p50, p99 = np.percentile(arr, [50, 99], method=PERCENTILE_METHOD)
    return {
        "mean": mean,
        "p50": float(p50),
        "p99": float(p99),
        "max": float(arr.max()),
        "sstdev": sstdev,
        "cv_pct": 100.0 * sstdev / mean if mean else float("nan"),
    }


def silverman_bandwidth(values: np.ndarray) -> float:
    """Silverman's rule-of-thumb bandwidth ``0.9 min(sd, IQR/1.349) n^(-1/5)``."""
    sd = float(values.std(ddof=1)) if values.size > 1 else 0.0
    q75, q25 = np.percentile(values, [75, 25])
    spread = min(sd, float(q75 - q25) / IQR_TO_SD) or sd
    return float(SILVERMAN_FACTOR * spread * values.size ** (-0.2))


@dataclass(frozen=True)
class Density:
    """A kernel density estimate on a grid; ``x`` is in the analysed scale (log10 when log)."""

    x: np.ndarray
    density: np.ndarray
    bandwidth: float
    log: bool


def kde(samples: Sequence[float] | np.ndarray, *, log: bool = True) -> Density:
    """Gaussian KDE with Silverman bandwidth, binned on a fine grid (fast for 10^5-10^6 samples).

    The samples are binned on ``KDE_GRID_POINTS`` points and smoothed with a Gaussian filter
    (scipy.ndimage), which equals the exact KDE to within the grid spacing (bandwidth/4 or finer).
    """
    arr = _as_array(samples)
    if log:
        if np.any(arr <= 0):
            raise ValueError("samples: log=True needs positive values")
        arr = np.log10(arr)
    bw = silverman_bandwidth(arr)
    if bw <= 0:
        raise ValueError("samples: all values are equal, no density to estimate")
    lo = arr.min() - KDE_PAD_BANDWIDTHS * bw
    hi = arr.max() + KDE_PAD_BANDWIDTHS * bw
    step = (hi - lo) / (KDE_GRID_POINTS - 1)
    grid_points = KDE_GRID_POINTS
    if step > bw / 4:  # keep the grid fine relative to the kernel
        grid_points = int(np.ceil((hi - lo) / (bw / 4))) + 1
        step = (hi - lo) / (grid_points - 1)
    x = lo + step * np.arange(grid_points)
    counts, _ = np.histogram(arr, bins=grid_points, range=(lo - step / 2, hi + step / 2))
    from scipy import ndimage  # here, not at import: every network chapter imports this module

    dens = ndimage.gaussian_filter1d(counts.astype(float), sigma=bw / step, mode="constant")
    dens /= dens.sum() * step
    return Density(x=x, density=dens, bandwidth=bw, log=log)


def find_modes(
    samples: Sequence[float] | np.ndarray,
    *,
    log: bool = True,
    min_prominence: float = DEFAULT_MIN_PROMINENCE,
) -> list[float]:
    """Locations (in the samples' own unit) of the KDE modes that pass the prominence test."""
    est = kde(samples, log=log)
    from scipy import signal

    peaks, _ = signal.find_peaks(est.density, prominence=min_prominence * est.density.max())
    locs = est.x[peaks]
    return [float(10.0**v) if log else float(v) for v in locs]


def count_modes(
    samples: Sequence[float] | np.ndarray,
    *,
    log: bool = True,
    min_prominence: float = DEFAULT_MIN_PROMINENCE,
) -> int:
    """Number of modes of the (log10) KDE whose prominence is at least ``min_prominence``."""
    return len(find_modes(samples, log=log, min_prominence=min_prominence))


def bimodality_coefficient(samples: Sequence[float] | np.ndarray, *, log: bool = False) -> float:
    """Sarle's bimodality coefficient; above 5/9 suggests more than one mode (or strong skew)."""
    arr = _as_array(samples)
    if arr.size < 4:
        raise ValueError("samples: the bimodality coefficient needs at least four values")
    if log:
        arr = np.log10(arr)
    n = arr.size
    g = float(sps.skew(arr, bias=False))
    k = float(sps.kurtosis(arr, fisher=True, bias=False))
    return (g**2 + 1.0) / (k + 3.0 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
