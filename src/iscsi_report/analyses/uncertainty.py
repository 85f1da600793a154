"""Prediction intervals of projections, propagated from raw ping samples and the fit's coefficients.

Two intervals, both by seeded Monte Carlo (numpy, vectorised), 2.5–97.5 %:

* ``operation``: the spread of *one* operation. Every one-way leg the model charges is drawn
  independently as RTT/2 from the measured ping samples (a bootstrap convolution of the
  distribution, as many legs as :func:`iscsi_report.analyses.fit.unit_counts` says), and the coefficients
  are drawn from their fitted (HC3) normal distribution.
* ``run``: the mean throughput of a new run. The mean one-way latency is drawn from its
  bootstrap distribution (normal, standard error sd/√n of the samples), the coefficients as
  above, plus the fit's residual scatter (run-to-run and model error), so it is a regression
  prediction interval.

The ping samples keep their shape but are rescaled so their mean is twice the configuration's
``one_way_ms``: a what-if "half the latency" keeps the measured jitter in proportion.

Provenance: the ``run`` interval uses only the mean, standard deviation and count of the pings
(on the reconstructed blog dataset these are the published figures); the ``operation`` interval
uses the whole sample *shape*, which on a reconstructed dataset was invented, so it is labelled
conditional on the reconstruction (column ``interval_basis``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd

from iscsi_report.analyses import fit
from iscsi_report.core import model
from iscsi_report.core.units import BITS_PER_BYTE, BYTES_PER_MIB

DEFAULT_DRAWS = 10_000
DEFAULT_SEED = 20231231
LOWER_PCT, UPPER_PCT = 2.5, 97.5
LEGS_PER_RTT = 2  # a round trip is two one-way legs
Kind = Literal["operation", "run"]


def coefficient_draws(result: fit.TermFit, n_draws: int, rng: np.random.Generator) -> pd.DataFrame:
    """Coefficients drawn from N(β̂, HC3 covariance) for the free ones, constant for fixed ones."""
    beta = result.beta
    out = pd.DataFrame({name: np.full(n_draws, value) for name, value in beta.items()})
    free = list(result.cov.columns)
    if free:
        mean = np.array([beta[name] for name in free])
        out[free] = rng.multivariate_normal(mean, result.cov.to_numpy(float), size=n_draws, method="svd")
    for name in fit.REGRESSORS:
        if name not in out:
            out[name] = 0.0
    return out


def scaled_rtt(rtt_ms: np.ndarray, one_way_ms: float) -> np.ndarray:
    """RTT samples rescaled so their mean is ``2 × one_way_ms`` (shape kept)."""
    rtt = np.asarray(rtt_ms, dtype=float)
    if rtt.size < 2 or not np.all(np.isfinite(rtt)) or rtt.mean() <= 0:
        raise ValueError("rtt_ms: expected at least two finite samples with a positive mean")
    scaled: np.ndarray = rtt * (LEGS_PER_RTT * one_way_ms / rtt.mean())
    return scaled


def one_way_sum_draws(rtt_ms: np.ndarray, legs: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """Sum of ``legs`` independent one-way latencies, each RTT/2 of a resampled ping reply."""
    if legs == 0:
        return np.zeros(n_draws)
    picks = rng.integers(0, rtt_ms.size, size=(n_draws, legs))
    sums: np.ndarray = rtt_ms[picks].sum(axis=1) / LEGS_PER_RTT
    return sums


def mean_one_way_draws(rtt_ms: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """Distribution of the mean one-way latency: normal with the mean's standard error sd/√n.

    Only the samples' mean, standard deviation and count enter (published moments on the blog).
    """
    mean, sd, n = float(rtt_ms.mean()), float(rtt_ms.std(ddof=1)), rtt_ms.size
    return rng.normal(mean, sd / np.sqrt(n), n_draws) / LEGS_PER_RTT


def interval_basis(kind: Kind, reconstructed: bool) -> str:
    """What an interval of ``kind`` rests on, said plainly for the table."""
    if kind == "run":
        src = "published" if reconstructed else "measured"
        return f"{src} ping mean, standard deviation and count; fitted coefficients"
    if reconstructed:
        return "reconstructed (invented) ping sample shapes: conditional on the reconstruction"
    return "measured ping samples; fitted coefficients"


def op_ms_draws(
    config: pd.Series,
    terms: pd.Series,
    rtt_ms: np.ndarray,
    result: fit.TermFit,
    kind: Kind,
    n_draws: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Monte Carlo op_ms of one configuration (see the module docstring for the two kinds)."""
    beta = coefficient_draws(result, n_draws, rng)
    rtt = scaled_rtt(rtt_ms, float(config["one_way_ms"]))
    legs = int(np.rint(terms["legs"]))
    if kind == "operation":
        one_way = one_way_sum_draws(rtt, legs, n_draws, rng)
    elif kind == "run":
        one_way = legs * mean_one_way_draws(rtt, n_draws, rng)
    else:
        raise ValueError(f"kind must be 'operation' or 'run', got {kind!r}")
    draws = (
        beta["one_way_ms"].to_numpy() * one_way
        + beta["transmit_ms"].to_numpy() * terms["transmit_ms"]
        + beta["device_ms"].to_numpy() * terms["device_ms"]
        + beta["cpu_ms"].to_numpy() * terms["cpu_ms"]
        + beta.get(fit.INTERCEPT, pd.Series(0.0, index=beta.index)).to_numpy()
    )
    if kind == "run" and np.isfinite(result.resid_sd_ms):
        draws = draws + rng.normal(0.0, result.resid_sd_ms, n_draws)
    out: np.ndarray = draws
    return out


def summarize_draws(draws: np.ndarray, bs_bytes: int) -> dict[str, float]:
    """2.5–97.5 % of op_ms, IOPS and MiB/s from op_ms draws (non-positive draws are counted, not kept)."""
    positive = draws[draws > 0]
    lo, hi = np.percentile(positive, [LOWER_PCT, UPPER_PCT])
    return {
        "op_ms_lo": float(lo),
        "op_ms_hi": float(hi),
        "iops_lo": model.iops(hi),
        "iops_hi": model.iops(lo),
        "mib_per_s_lo": model.mib_per_s(bs_bytes, hi),
        "mib_per_s_hi": model.mib_per_s(bs_bytes, lo),
        "nonpositive_draws": int(draws.size - positive.size),
    }


def ceilings_mib_per_s(config: pd.Series, bs_bytes: int) -> dict[str, float]:
    """Physical ceilings of one configuration in MiB/s: link, device (local, whole block), CPU.

    The device ceiling uses ``device_local_ms`` (the device's own time for the whole block)
    when the row has it, else ``device_ms`` for the whole block; a zero CPU time has no ceiling.
    """
    link = float(config["link_bps"]) / BITS_PER_BYTE / BYTES_PER_MIB
    local_ms = float(config.get("device_local_ms", config["device_ms"]))
    cpu_ms = float(config["cpu_ms"])
    out = {"link": link}
    out["device"] = model.mib_per_s(bs_bytes, local_ms) if local_ms > 0 else math.inf
    out["cpu"] = model.mib_per_s(bs_bytes, cpu_ms) if cpu_ms > 0 else math.inf
    return out


def project(
    configs: pd.DataFrame,
    result: fit.TermFit,
    rtt_by_network: Mapping[str, np.ndarray],
    *,
    kind: Kind = "run",
    n_draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    reconstructed: bool = False,
) -> pd.DataFrame:
    """Deterministic projection of each configuration with its Monte Carlo interval.

    ``reconstructed``: the ping samples come from a reconstructed dataset; the ``interval_basis``
    column then says the per-operation interval is conditional on the reconstruction.

    ``configs`` has the columns of :data:`iscsi_report.analyses.fit.INPUT_COLUMNS`; the ping samples are
    looked up by each row's ``network`` (KeyError naming it if absent). Seeded: same inputs,
    same intervals.
    """
    terms = fit.term_matrix(configs)
    point = result.predict(terms)
    rng = np.random.default_rng(seed)
    rows = []
    rows_by_index: Iterable[tuple[Any, pd.Series]] = configs.iterrows()  # index labels of configs
    for (idx, config), op_ms in zip(rows_by_index, point, strict=True):
        network = config["network"]
        if network not in rtt_by_network:
            raise KeyError(f"no ping samples for network {network!r} (have {sorted(rtt_by_network)})")
        bs = int(config["bs_bytes"])
        draws = op_ms_draws(config, terms.loc[idx], rtt_by_network[network], result, kind, n_draws, rng)
        summary = summarize_draws(draws, bs)
        ceilings = ceilings_mib_per_s(config, bs)
        latency_mib = model.mib_per_s(bs, op_ms)
        achieved = min([latency_mib, *ceilings.values()])
        binding = min(ceilings, key=ceilings.__getitem__) if achieved < latency_mib else "latency"
        for end in ("mib_per_s_lo", "mib_per_s_hi"):
            summary[end] = min([summary[end], *ceilings.values()])
        for end in ("lo", "hi"):
            summary[f"iops_{end}"] = summary[f"mib_per_s_{end}"] * BYTES_PER_MIB / bs
        rows.append(
            {
                "op_ms": op_ms,
                "iops": achieved * BYTES_PER_MIB / bs,
                "mib_per_s": achieved,
                "latency_mib_per_s": latency_mib,
                **{f"{k}_mib_per_s": v for k, v in ceilings.items()},
                "binding": binding,
                **summary,
                "interval": kind,
                "interval_basis": interval_basis(kind, reconstructed),
                "draws": n_draws,
            }
        )
    return pd.concat([configs.reset_index(drop=True), pd.DataFrame(rows)], axis=1)
