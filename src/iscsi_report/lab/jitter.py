"""Jitter shapes for the delay line, stated as users state them: a mean and a p99 of the extra delay.

The delay line (:mod:`iscsi_report.lab.delayline`, standard library only) draws with the
parameters of a shape; this module turns a requested mean and 99th percentile of the extra
one-way delay into those parameters (scipy), and gives each shape's distribution for checking
what the line realises (:func:`distribution`, the KS test's reference).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, stats

Z_99 = float(stats.norm.ppf(0.99))
GAMMA_SHAPE_RANGE = (0.05, 1000.0)  # k outside this: the request is not a gamma a line can draw


@dataclass(frozen=True)
class Shape:
    """One jitter shape: its name and the JSON object the delay line's params file carries."""

    name: str
    doc: dict[str, Any]
    source: str = ""  # where a replayed trace came from ('' for a drawn shape)

    def record(self) -> dict[str, Any]:
        """The shape as a manifest keeps it: a trace's points summarised, its source named."""
        if self.doc["shape"] != "trace":
            return self.doc
        extras = np.asarray(self.doc["trace_ms"], float)
        summary = {"trace_points": int(extras.size), "trace_mean_ms": round(float(extras.mean()), 4)}
        summary |= {"trace_p99_ms": round(float(np.quantile(extras, 0.99)), 4), "source": self.source}
        return {k: v for k, v in self.doc.items() if k != "trace_ms"} | summary


def gamma(mean_ms: float, p99_ms: float, seed: int = 0, correlation: float = 0.0) -> Shape:
    """Gamma-distributed extra delay with the given mean and p99 (p99 above the mean)."""
    ratio = p99_ms / mean_ms
    lo, hi = GAMMA_SHAPE_RANGE

    def miss(k: float) -> float:
        return float(stats.gamma.ppf(0.99, k) / k) - ratio

    if not miss(hi) < 0 < miss(lo):
        raise ValueError(f"no gamma has mean {mean_ms} ms and p99 {p99_ms} ms (ratio {ratio:.2f})")
    k = float(optimize.brentq(miss, lo, hi))
    doc = {"shape": "gamma", "k": k, "theta_ms": mean_ms / k, "seed": seed, "correlation": correlation}
    return Shape(f"gamma mean {mean_ms:g} p99 {p99_ms:g} ms", doc)


def lognormal(mean_ms: float, p99_ms: float, seed: int = 0, correlation: float = 0.0) -> Shape:
    """Lognormal extra delay with the given mean and p99: sigma is the smaller root of the pair."""
    gap = Z_99**2 - 2 * math.log(p99_ms / mean_ms)
    if gap < 0 or p99_ms <= mean_ms:
        raise ValueError(f"no lognormal has mean {mean_ms} ms and p99 {p99_ms} ms")
    sigma = Z_99 - math.sqrt(gap)
    doc = {"shape": "lognormal", "mu": math.log(mean_ms) - sigma**2 / 2, "sigma": sigma, "seed": seed}
    return Shape(f"lognormal mean {mean_ms:g} p99 {p99_ms:g} ms", doc | {"correlation": correlation})


def mixture(
    weights: tuple[float, ...], extra_ms: tuple[float, ...], sigmas: tuple[float, ...], seed: int = 0
) -> Shape:
    """A mixture of lognormal modes (each with its mean extra and log spread): a bimodal link."""
    total = sum(weights)
    doc = {
        "shape": "mixture",
        "weights": [w / total for w in weights],
        "extra_ms": list(extra_ms),
        "sigmas": list(sigmas),
        "seed": seed,
    }
    modes = ", ".join(f"{w / total:.0%} at {e:g} ms" for w, e in zip(weights, extra_ms, strict=True))
    return Shape(f"mixture {modes}", doc)


def trace(rtt_ms: np.ndarray, source: str, seed: int = 0) -> Shape:
    """A measured ping trace replayed in order: each packet's one-way extra is half its RTT's rise.

    A round trip's rise over the trace's fastest reply is split evenly between the two directions;
    the line replays one such extra per packet, each direction from its own point in the trace.
    """
    rtt = np.asarray(rtt_ms, float)
    rtt = rtt[np.isfinite(rtt)]
    if rtt.size == 0:
        raise ValueError(f"{source}: no round-trip times to replay")
    extras = np.round((rtt - rtt.min()) / 2, 4)
    doc = {"shape": "trace", "trace_ms": extras.tolist(), "seed": seed}
    return Shape(f"trace of {rtt.size} pings, half-RTT rise, from {source}", doc, source)


def distribution(doc: dict[str, Any]) -> Any:
    """The shape's extra-delay distribution (a frozen scipy distribution, or a mixture's CDF holder)."""
    shape = doc["shape"]
    if shape == "gamma":
        return stats.gamma(doc["k"], scale=doc["theta_ms"])
    if shape == "lognormal":
        return stats.lognorm(doc["sigma"], scale=math.exp(doc["mu"]))
    if shape == "mixture":
        return _Mixture(doc)
    if shape == "trace":
        return _Trace(doc["trace_ms"])
    raise ValueError(f"no reference distribution for shape {shape!r}")


class _Mixture:
    """CDF and mean of a mixture of lognormals (what the delay line's mixture draws)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.parts = [
            (w, stats.lognorm(s, scale=e * math.exp(-(s**2) / 2)) if s else None, e)
            for w, e, s in zip(doc["weights"], doc["extra_ms"], doc["sigmas"], strict=True)
        ]

    def cdf(self, x: Any) -> Any:
        x = np.asarray(x, dtype=float)
        return sum(w * (d.cdf(x) if d is not None else (x >= e).astype(float)) for w, d, e in self.parts)

    def mean(self) -> float:
        return float(sum(w * e for w, _, e in self.parts))

    def rvs(self, size: int, random_state: np.random.Generator) -> np.ndarray:
        """``size`` independent draws: a mode by its weight, then its lognormal (or its fixed extra)."""
        weights = np.array([w for w, _, _ in self.parts], dtype=float)
        modes = random_state.choice(len(self.parts), size=size, p=weights / weights.sum())
        out = np.empty(size)
        for i, (_, d, e) in enumerate(self.parts):
            chosen = modes == i
            out[chosen] = d.rvs(int(chosen.sum()), random_state=random_state) if d is not None else e
        return out


class _Trace:
    """CDF and mean of a replayed trace: its points' empirical distribution."""

    def __init__(self, extras_ms: Any) -> None:
        self.sorted_ms = np.sort(np.asarray(extras_ms, float))

    def cdf(self, x: Any) -> Any:
        """P(extra <= x): the share of the trace's points at or below x."""
        return np.searchsorted(self.sorted_ms, np.asarray(x, dtype=float), side="right") / self.sorted_ms.size

    def mean(self) -> float:
        """The trace's mean extra (ms)."""
        return float(self.sorted_ms.mean())
