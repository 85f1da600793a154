"""Leave-one-configuration-out validation: each validation run predicted by a fit that never saw its setup."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from iscsi_report.analyses import blog
from iscsi_report.analyses.fit.terms import (
    CONFIG_KEYS,
    check_runs,
    term_matrix,
)
from iscsi_report.analyses.fit.variants import (
    PRIMARY_VARIANT,
    Variant,
    default_variants,
    fit_variant,
)
from iscsi_report.core import model
from iscsi_report.core.errors import DesignError


def same_configuration(
    runs: pd.DataFrame, target: pd.Series, keys: Sequence[str] = CONFIG_KEYS
) -> np.ndarray:
    """Mask of runs sharing ``target``'s configuration (all ``keys`` equal)."""
    mask = np.ones(len(runs), dtype=bool)
    for k in keys:
        mask &= (runs[k] == target[k]).to_numpy()
    return mask


def leave_one_out(
    runs: pd.DataFrame, variant: Variant, targets: pd.Series | np.ndarray, keys: Sequence[str] = CONFIG_KEYS
) -> pd.DataFrame:
    """Predict each target run from a fit that excludes it and every run of its configuration.

    Error is the blog's convention: (measured − estimated) / measured × 100 on MiB/s.
    """
    targets = np.asarray(targets, dtype=bool)
    check_runs(runs)
    rows = []
    for idx in np.flatnonzero(targets):
        target = runs.iloc[idx]
        train = runs[~same_configuration(runs, target, keys)]
        held = runs.iloc[[int(idx)]]
        rows.append(_loo_row(train, held, variant))
    return pd.DataFrame(rows)


def _loo_row(train: pd.DataFrame, held: pd.DataFrame, variant: Variant) -> dict[str, object]:
    """Fit on ``train`` and score the single run ``held``."""
    target = held.iloc[0]
    base = {k: target[k] for k in ("run", "network", "device", "max_outstanding_r2t", "bs_bytes")}
    try:
        fit = fit_variant(train, variant)
    except DesignError as exc:
        return {
            **base,
            "n_train": len(train),
            "measured_mib_per_s": measured_mib_per_s(target),
            "est_mib_per_s": np.nan,
            "error_pct": np.nan,
            "refused": str(exc),
        }
    est_ms = float(fit.predict(term_matrix(held))[0])
    est = model.mib_per_s(int(target["bs_bytes"]), est_ms) if est_ms > 0 else np.nan
    measured = measured_mib_per_s(target)
    return {
        **base,
        "n_train": len(train),
        "op_ms": float(target["op_ms"]),
        "est_op_ms": est_ms,
        "measured_mib_per_s": measured,
        "est_mib_per_s": est,
        "error_pct": model.error_pct(measured, est),
        "near_collinear": fit.near_collinear,
        "refused": "",
    }


def measured_mib_per_s(run: pd.Series) -> float:
    """Measured MiB/s of a run: its ``mib_per_s`` column if given, else from its op time."""
    given = run.get("mib_per_s")
    if given is not None and np.isfinite(given):
        return float(given)
    return model.mib_per_s(int(run["bs_bytes"]), float(run["op_ms"]))


def mean_abs_error_pct(loo: pd.DataFrame) -> float:
    """Mean absolute leave-one-out error (%) over the scored runs."""
    return float(loo["error_pct"].abs().mean())


def blog_errors() -> pd.DataFrame:
    """The blog's six validation errors: as published and as its own formula gives them."""
    table = blog.projection_table()
    return pd.DataFrame(
        {
            "network": table["network"],
            "device": table["device"].str.lower(),
            "max_outstanding_r2t": table["max_outstanding_r2t"].astype(int),
            "blog_error_pct": table["published_error_pct"],
            "blog_formula_error_pct": table["error_pct"],
        }
    )


def validation_table(runs: pd.DataFrame, variant: Variant, keys: Sequence[str] = CONFIG_KEYS) -> pd.DataFrame:
    """Leave-one-configuration-out errors of the validation runs beside the blog's errors."""
    loo = leave_one_out(runs, variant, runs["validation"].to_numpy(bool), keys)
    loo["max_outstanding_r2t"] = loo["max_outstanding_r2t"].astype(int)
    out = loo.merge(blog_errors(), on=["network", "device", "max_outstanding_r2t"], how="left")
    out.insert(
        0,
        "configuration",
        out["network"] + " " + out["device"] + " R2T " + out["max_outstanding_r2t"].astype(str),
    )
    return out


def loo_by_variant(
    runs: pd.DataFrame, variants: Sequence[Variant] | None = None, keys: Sequence[str] = CONFIG_KEYS
) -> pd.DataFrame:
    """Mean and largest absolute leave-one-out error of every variant (refused folds counted)."""
    rows = []
    for v in variants if variants is not None else default_variants():
        loo = leave_one_out(runs, v, runs["validation"].to_numpy(bool), keys)
        rows.append(
            {
                "variant": v.name,
                "mean_abs_error_pct": mean_abs_error_pct(loo),
                "max_abs_error_pct": float(loo["error_pct"].abs().max()),
                "refused_folds": int((loo["refused"] != "").sum()),
                "primary": v.name == PRIMARY_VARIANT,
            }
        )
    return pd.DataFrame(rows)
