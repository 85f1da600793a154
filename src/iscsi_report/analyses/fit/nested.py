"""Nested leave-one-configuration-out: a variant chosen inside each fold, the blog's formula as baseline.

Every method (the declared primary variant, the nested selection, the blog's formula and that
formula rescaled) is scored on identical outer folds, and :class:`FoldLog` records which runs
every fit saw, so a test can check that held-out data never leaks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.analyses import blog
from iscsi_report.analyses.fit.loo import measured_mib_per_s, same_configuration
from iscsi_report.analyses.fit.terms import (
    CONFIG_KEYS,
    PHYSICAL_COEFFICIENT,
    REGRESSORS,
    check_runs,
    term_matrix,
)
from iscsi_report.analyses.fit.variants import (
    PRIMARY_VARIANT,
    Variant,
    default_variants,
    fit_variant,
    predict,
)
from iscsi_report.core import model
from iscsi_report.core.errors import DesignError

BLOG_FORMULA = "blog_formula"  # the blog's own formula (lock-step, no headers) fed the runs' inputs
BLOG_FORMULA_SCALED = "blog_formula_scaled"  # the same times one scale factor fitted on the training runs
NESTED = "nested_selection"  # variant chosen by inner leave-one-configuration-out error


def blog_formula_ms(runs: pd.DataFrame) -> np.ndarray:
    """Op time of each run by the blog's formula (:data:`blog.BLOG_ASSUMPTIONS`, every term in full)."""
    terms = term_matrix(runs, assumptions=blog.BLOG_ASSUMPTIONS)
    return predict({r: PHYSICAL_COEFFICIENT for r in REGRESSORS}, terms)


def scale_factor(train: pd.DataFrame) -> float:
    """Least-squares factor s (no constant) of op_ms ≈ s · blog formula on the training runs."""
    f = blog_formula_ms(train)
    return float(np.dot(f, train["op_ms"].to_numpy(float)) / np.dot(f, f))


@dataclass
class FoldLog:
    """Which runs every fit of one outer fold saw (for checking that held-out data never leaks)."""

    held_out: tuple[str, ...]
    fits: list[tuple[str, frozenset[str]]] = field(default_factory=list)

    def saw(self, stage: str, train: pd.DataFrame) -> None:
        """Record that a fit at ``stage`` was given exactly the runs of ``train``."""
        self.fits.append((stage, frozenset(train["run"].astype(str))))


def _predict_variant(train: pd.DataFrame, held: pd.DataFrame, variant: Variant) -> float:
    """Fit ``variant`` on ``train`` and predict the op time of the single run ``held`` (NaN if refused)."""
    try:
        return float(fit_variant(train, variant).predict(term_matrix(held))[0])
    except DesignError:
        return float("nan")


def _inner_error(train: pd.DataFrame, variant: Variant, keys: Sequence[str], log: FoldLog) -> float:
    """Mean absolute leave-one-configuration-out error (%) of ``variant`` over ``train``'s validation runs."""
    targets = train["validation"].to_numpy(bool) if "validation" in train else np.ones(len(train), bool)
    errors = []
    for idx in np.flatnonzero(targets):
        target = train.iloc[idx]
        inner = train[~same_configuration(train, target, keys)]
        log.saw(f"inner:{variant.name}", inner)
        est = _predict_variant(inner, train.iloc[[int(idx)]], variant)
        measured = measured_mib_per_s(target)
        est_mib = model.mib_per_s(int(target["bs_bytes"]), est) if est > 0 else np.nan
        errors.append(abs(model.error_pct(measured, est_mib)) if np.isfinite(est_mib) else np.inf)
    return float(np.mean(errors)) if errors else float("inf")


def nested_leave_one_out(
    runs: pd.DataFrame,
    candidates: Sequence[Variant] | None = None,
    primary: str = PRIMARY_VARIANT,
    keys: Sequence[str] = CONFIG_KEYS,
) -> tuple[pd.DataFrame, list[FoldLog]]:
    """Held-out error per validation configuration of every method, all on the same outer folds.

    Methods: the declared ``primary`` variant; the variant chosen inside each fold by its inner
    leave-one-configuration-out error on the training configurations only (:data:`NESTED`); the
    blog's formula (:data:`BLOG_FORMULA`); and that formula with one fitted scale factor
    (:data:`BLOG_FORMULA_SCALED`). Returns one row per (configuration, method) and, per fold,
    the runs each fit saw.
    """
    check_runs(runs)
    cands = list(candidates) if candidates is not None else default_variants()
    by_name = {v.name: v for v in cands}
    if primary not in by_name:
        raise ValueError(f"primary variant {primary!r} is not among the candidates {sorted(by_name)}")
    rows, logs = [], []
    for idx in np.flatnonzero(runs["validation"].to_numpy(bool)):
        target = runs.iloc[idx]
        held = runs.iloc[[int(idx)]]
        train = runs[~same_configuration(runs, target, keys)]
        log = FoldLog(tuple(runs.loc[same_configuration(runs, target, keys), "run"].astype(str)))
        inner = {v.name: _inner_error(train, v, keys, log) for v in cands}
        chosen = min(inner, key=lambda n: (inner[n], list(inner).index(n)))
        log.saw(f"outer:{primary}", train)
        log.saw(f"outer:{chosen}", train)
        log.saw(BLOG_FORMULA_SCALED, train)
        estimates = {
            primary: _predict_variant(train, held, by_name[primary]),
            NESTED: _predict_variant(train, held, by_name[chosen]),
            BLOG_FORMULA: float(blog_formula_ms(held)[0]),
            BLOG_FORMULA_SCALED: scale_factor(train) * float(blog_formula_ms(held)[0]),
        }
        measured = measured_mib_per_s(target)
        for method, est_ms in estimates.items():
            est = model.mib_per_s(int(target["bs_bytes"]), est_ms) if est_ms > 0 else np.nan
            rows.append(
                {
                    "configuration": _config_label(target),
                    "run": target["run"],
                    "method": method,
                    "chosen_variant": chosen if method == NESTED else "",
                    "n_train": len(train),
                    "op_ms": float(target["op_ms"]),
                    "est_op_ms": est_ms,
                    "measured_mib_per_s": measured,
                    "est_mib_per_s": est,
                    "error_pct": model.error_pct(measured, est),
                }
            )
        logs.append(log)
    return pd.DataFrame(rows), logs


def _config_label(run: pd.Series) -> str:
    """'network device R2T m' label of a run's configuration."""
    return f"{run['network']} {run['device']} R2T {int(run['max_outstanding_r2t'])}"


def method_summary(nested: pd.DataFrame) -> pd.DataFrame:
    """Mean and largest absolute held-out error (%) per method, on identical folds."""
    g = nested.assign(abs_error_pct=nested["error_pct"].abs()).groupby("method", sort=False)
    out = g.agg(
        mean_abs_error_pct=("abs_error_pct", "mean"),
        max_abs_error_pct=("abs_error_pct", "max"),
        folds=("run", "count"),
        unscored=("error_pct", lambda e: int(e.isna().sum())),
    )
    return out.reset_index()


def per_configuration(nested: pd.DataFrame) -> pd.DataFrame:
    """Held-out error (%) per configuration (rows) and method (columns)."""
    wide = nested.pivot(index="configuration", columns="method", values="error_pct")
    return wide[list(dict.fromkeys(nested["method"]))].reset_index()


def r2t_saving_per_message(runs: pd.DataFrame) -> pd.DataFrame:
    """Per network/device/block size measured at two MaxOutstandingR2T values: time saved per
    one-way message removed, beside the ping one-way latency the model charges for it."""
    terms = term_matrix(runs)
    data = runs.assign(legs=terms["legs"])
    rows = []
    # keys: network and device labels and the integer block size (pandas-stubs types them Hashable)
    groups: Iterable[tuple[Any, pd.DataFrame]] = data.groupby(["network", "device", "bs_bytes"], sort=True)
    for (net, dev, bs), g in groups:
        by_m = g.groupby("max_outstanding_r2t").agg(
            op_ms=("op_ms", "mean"), legs=("legs", "first"), one_way_ms=("one_way_ms", "first")
        )
        if len(by_m) < 2:
            continue
        lo, hi = by_m.iloc[0], by_m.iloc[-1]
        removed = lo["legs"] - hi["legs"]
        if removed <= 0:
            continue
        saved = (lo["op_ms"] - hi["op_ms"]) / removed
        rows.append(
            {
                "network": net,
                "device": dev,
                "bs_bytes": int(bs),
                "r2t_low": int(by_m.index[0]),
                "r2t_high": int(by_m.index[-1]),
                "messages_removed": removed,
                "saved_ms_per_message": saved,
                "ping_one_way_ms": lo["one_way_ms"],
                "ratio": saved / lo["one_way_ms"],
            }
        )
    return pd.DataFrame(rows)
