"""Fit variants: which coefficients are fixed at their physical value, fitted by OLS with HC3 errors.

A singular design is refused (:class:`~iscsi_report.core.errors.DesignError`) naming the aliased
terms; a near-collinear one (scaled condition number or VIF above its threshold) is flagged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import statsmodels.api as sm
from statsmodels.stats.outliers_influence import OLSInfluence

from iscsi_report.analyses.fit.terms import (
    INTERCEPT,
    PHYSICAL_COEFFICIENT,
    REGRESSORS,
    check_published_only,
    term_matrix,
)
from iscsi_report.core.errors import DesignError

# Belsley, Kuh & Welsch (1980): a scaled condition index above 30 signals a strong dependency.
CONDITION_NUMBER_THRESHOLD = 30.0
VIF_THRESHOLD = 10.0  # conventional rule of thumb for a variance inflation factor
RANK_TOLERANCE = 1e-10  # relative singular-value cut-off for rank deficiency
CONFIDENCE = 0.95
COV_TYPE = "HC3"  # MacKinnon & White: robust to heteroscedasticity, good for small n


@dataclass(frozen=True)
class Variant:
    """A fit specification: which coefficients are fixed (and at what) and whether to add an intercept."""

    name: str
    fixed: Mapping[str, float] = field(default_factory=dict)
    intercept: bool = False
    note: str = ""

    @property
    def free(self) -> tuple[str, ...]:
        """Coefficients estimated from the data, in fit order."""
        names = [r for r in REGRESSORS if r not in self.fixed]
        return (*names, INTERCEPT) if self.intercept else tuple(names)


def default_variants() -> list[Variant]:
    """The candidate variants; :data:`PRIMARY_VARIANT` is the one declared before any validation.

    The CPU coefficient is fixed at 1 in every variant: on the blog study the CPU time per
    operation is a published rule (not a measurement per run), so a coefficient on it would
    measure nothing; on measured data it stays pinned so that every dataset fits the same model.
    """
    one = PHYSICAL_COEFFICIENT
    return [
        Variant("blog_as_written", {r: one for r in REGRESSORS}, note="every β fixed at 1: no fit"),
        Variant(
            "device_free",
            {"one_way_ms": one, "transmit_ms": one, "cpu_ms": one},
            note="network and CPU terms fixed at 1; device overlap estimated",
        ),
        Variant(
            "latency_device_free",
            {"transmit_ms": one, "cpu_ms": one},
            note="transmission and CPU fixed at 1; one-way latency and device estimated",
        ),
        Variant(
            "network_device_free",
            {"cpu_ms": one},
            note="CPU fixed at 1; one-way latency, transmission and device estimated",
        ),
        Variant(
            "latency_device_free_intercept",
            {"transmit_ms": one, "cpu_ms": one},
            intercept=True,
            note="as latency_device_free, plus a constant per operation",
        ),
    ]


# Declared primary, fixed before any held-out error was looked at, on identifiability grounds:
# per-byte transmission and per-byte CPU (and device) cost are collinear within a network, so
# transmission is pinned at its iperf3 value and CPU at its published value; one-way latency stays
# free because the latency iSCSI's back-to-back messages see need not be ping's mean, and device
# time free because a remote write may overlap part of it.
PRIMARY_VARIANT = "latency_device_free"


def design_diagnostics(x: pd.DataFrame) -> tuple[float, pd.DataFrame]:
    """Scaled condition number (columns to unit length, Belsley) and VIFs of a design.

    VIFs are centred (diagonal of the inverse correlation matrix of the non-constant columns);
    NaN where undefined (a constant column or fewer than two such columns).
    """
    arr = x.to_numpy(float)
    norms = np.linalg.norm(arr, axis=0)
    scaled = arr / np.where(norms > 0, norms, 1.0)
    sv = np.linalg.svd(scaled, compute_uv=False)
    cond = float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf")
    vif = pd.Series(np.nan, index=x.columns)
    varying = [c for c in x.columns if np.ptp(x[c].to_numpy(float)) > 0]
    if len(varying) >= 2:
        corr = np.corrcoef(x[varying].to_numpy(float), rowvar=False)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = np.linalg.pinv(corr)
        vif[varying] = np.diag(inv)
    return cond, pd.DataFrame({"term": x.columns, "vif": vif.to_numpy()})


def _check_rank(x: pd.DataFrame) -> None:
    """Raise DesignError naming the aliased columns when the design is rank deficient."""
    arr = x.to_numpy(float)
    if arr.shape[0] < arr.shape[1]:
        raise DesignError(
            f"{arr.shape[0]} runs cannot identify {arr.shape[1]} coefficients {list(x.columns)}"
        )
    norms = np.linalg.norm(arr, axis=0)
    if (norms == 0).any():
        raise DesignError(f"term(s) {list(x.columns[norms == 0])} are zero in every run: not identifiable")
    scaled = arr / norms
    _, sv, vt = np.linalg.svd(scaled, full_matrices=False)
    if sv[-1] > RANK_TOLERANCE * sv[0]:
        return
    null = vt[-1]
    aliased = [c for c, w in zip(x.columns, null, strict=True) if abs(w) > 1e-6]
    raise DesignError(
        f"singular design (rank {int((sv > RANK_TOLERANCE * sv[0]).sum())} < {arr.shape[1]}): "
        f"{aliased} are exactly collinear in these runs; fix one of them (e.g. at "
        f"{PHYSICAL_COEFFICIENT}) or add runs that vary them independently"
    )


@dataclass
class TermFit:
    """A fitted variant: coefficient table, diagnostics, per-run residuals and influence."""

    variant: Variant
    coefficients: pd.DataFrame  # term, estimate, std_err, ci_low, ci_high, fixed
    condition_number: float
    vif: pd.DataFrame
    near_collinear: bool
    warnings: list[str]
    runs: pd.DataFrame  # run labels + terms + op_ms, fitted_ms, resid_ms, hat, cooks_d, student_resid
    cov: pd.DataFrame  # HC3 covariance of the free coefficients
    resid_sd_ms: float
    df_resid: float
    r_squared: float

    @property
    def beta(self) -> dict[str, float]:
        """Coefficient by name, fixed ones included (intercept only when fitted)."""
        return dict(zip(self.coefficients["term"], self.coefficients["estimate"], strict=True))

    def predict(self, terms: pd.DataFrame) -> np.ndarray:
        """Predicted op_ms for rows of term-group values (columns :data:`REGRESSORS`)."""
        return predict(self.beta, terms)


def predict(beta: Mapping[str, float], terms: pd.DataFrame) -> np.ndarray:
    """Σ β·term (+ intercept) for each row of ``terms``."""
    out = np.full(len(terms), float(beta.get(INTERCEPT, 0.0)))
    for r in REGRESSORS:
        out = out + float(beta[r]) * terms[r].to_numpy(float)
    return out


def _fixed_only(variant: Variant, runs: pd.DataFrame, terms: pd.DataFrame) -> TermFit:
    """A variant with nothing free: the model evaluated with its fixed coefficients."""
    y = runs["op_ms"].to_numpy(float)
    fitted = predict(variant.fixed, terms)
    coef = pd.DataFrame(
        {
            "term": list(REGRESSORS),
            "estimate": [variant.fixed[r] for r in REGRESSORS],
            "std_err": 0.0,
            "ci_low": np.nan,
            "ci_high": np.nan,
            "fixed": True,
        }
    )
    table = _run_table(runs, terms, fitted, np.full(len(y), np.nan), np.full(len(y), np.nan))
    resid = y - fitted
    return TermFit(
        variant,
        coef,
        float("nan"),
        pd.DataFrame(columns=["term", "vif"]),
        False,
        [],
        table,
        pd.DataFrame(),
        float(np.sqrt(np.mean(resid**2))),
        float(len(y)),
        r_squared(y, fitted),
    )


def _run_table(
    runs: pd.DataFrame,
    terms: pd.DataFrame,
    fitted: np.ndarray,
    hat: np.ndarray,
    cooks: np.ndarray,
    student: np.ndarray | None = None,
) -> pd.DataFrame:
    """Per-run frame of labels, term values, observed and fitted op_ms and influence measures."""
    labels = [
        c
        for c in ("run", "network", "device", "scenario", "bs_bytes", "max_outstanding_r2t", "validation")
        if c in runs.columns
    ]
    out = pd.concat([runs[labels], terms[list(REGRESSORS)]], axis=1).copy()
    out["op_ms"] = runs["op_ms"].to_numpy(float)
    out["fitted_ms"] = fitted
    out["resid_ms"] = out["op_ms"] - fitted
    out["hat"] = hat
    out["cooks_d"] = cooks
    out["student_resid"] = np.full(len(out), np.nan) if student is None else student
    return out.reset_index(drop=True)


def fit_variant(
    runs: pd.DataFrame,
    variant: Variant,
    *,
    condition_threshold: float = CONDITION_NUMBER_THRESHOLD,
    vif_threshold: float = VIF_THRESHOLD,
    allow_invented: bool = False,
) -> TermFit:
    """Fit one variant by OLS with HC3 errors; DesignError if singular, flagged if near-collinear
    (scaled condition number or any VIF above its threshold), refused on invented inputs unless
    ``allow_invented`` (sensitivity fits only)."""
    if not allow_invented:
        check_published_only(runs)
    terms = term_matrix(runs)
    if not variant.free:
        return _fixed_only(variant, runs, terms)
    unknown = set(variant.fixed) - set(REGRESSORS)
    if unknown:
        raise DesignError(f"variant {variant.name}: cannot fix unknown term(s) {sorted(unknown)}")
    x = terms[[r for r in REGRESSORS if r not in variant.fixed]].copy()
    if variant.intercept:
        x[INTERCEPT] = 1.0
    _check_rank(x)
    offset = predict({**{r: 0.0 for r in REGRESSORS}, **variant.fixed}, terms)
    y = runs["op_ms"].to_numpy(float) - offset
    cond, vif = design_diagnostics(x)
    warnings = []
    max_vif = float(vif["vif"].max()) if vif["vif"].notna().any() else 0.0
    near = cond > condition_threshold or max_vif > vif_threshold
    if near:
        warnings.append(
            f"near-collinear design: scaled condition number {cond:.1f} (threshold "
            f"{condition_threshold:g}), largest VIF {max_vif:.1f} (threshold {vif_threshold:g}); "
            "individual coefficients are poorly determined"
        )
    if len(y) <= x.shape[1]:
        raise DesignError(
            f"variant {variant.name}: {len(y)} runs leave no residual degrees of freedom "
            f"for {x.shape[1]} coefficients"
        )
    ols = sm.OLS(y, x.to_numpy(float)).fit()
    infl = OLSInfluence(ols)
    hat = infl.hat_matrix_diag
    if np.any(hat > 1 - 1e-8):
        warnings.append(
            "a run has leverage 1 (its fit is exact): HC3 errors are undefined there, "
            "classical errors used instead"
        )
        robust = sm.OLS(y, x.to_numpy(float)).fit(use_t=True)
    else:
        robust = sm.OLS(y, x.to_numpy(float)).fit(cov_type=COV_TYPE, use_t=True)
    ci = robust.conf_int(alpha=1 - CONFIDENCE)
    free = pd.DataFrame(
        {
            "term": list(x.columns),
            "estimate": robust.params,
            "std_err": robust.bse,
            "ci_low": ci[:, 0],
            "ci_high": ci[:, 1],
            "fixed": False,
        }
    )
    fixed = pd.DataFrame(
        {
            "term": list(variant.fixed),
            "estimate": list(variant.fixed.values()),
            "std_err": 0.0,
            "ci_low": np.nan,
            "ci_high": np.nan,
            "fixed": True,
        }
    )
    order = [*REGRESSORS, INTERCEPT]
    coef = pd.concat([free, fixed], ignore_index=True)
    coef = coef.sort_values("term", key=lambda s: s.map(order.index)).reset_index(drop=True)
    fitted = offset + ols.fittedvalues
    with np.errstate(divide="ignore", invalid="ignore"):
        student = infl.resid_studentized_external
    table = _run_table(runs, terms, fitted, hat, infl.cooks_distance[0], student)
    cov = pd.DataFrame(robust.cov_params(), index=x.columns, columns=x.columns)
    return TermFit(
        variant,
        coef,
        cond,
        vif,
        near,
        warnings,
        table,
        cov,
        float(np.sqrt(ols.scale)),
        float(ols.df_resid),
        r_squared(runs["op_ms"].to_numpy(float), fitted),
    )


def r_squared(observed: np.ndarray, fitted: np.ndarray) -> float:
    """Share of the variance of op_ms the fit explains (on op_ms itself, not the offset response)."""
    total = float(((observed - observed.mean()) ** 2).sum())
    return 1.0 - float(((observed - fitted) ** 2).sum()) / total if total > 0 else float("nan")


@dataclass(frozen=True)
class VariantOutcome:
    """A variant's fit, or the reason it was refused."""

    variant: Variant
    fit: TermFit | None
    refused: str | None


def fit_variants(runs: pd.DataFrame, variants: Sequence[Variant] | None = None) -> list[VariantOutcome]:
    """Fit every variant; a refused (singular) one is kept with its DesignError message."""
    out = []
    for v in variants if variants is not None else default_variants():
        try:
            out.append(VariantOutcome(v, fit_variant(runs, v), None))
        except DesignError as exc:
            out.append(VariantOutcome(v, None, str(exc)))
    return out


def coefficient_table(outcomes: Sequence[VariantOutcome]) -> pd.DataFrame:
    """Long table: one row per variant and coefficient, with CI and whether it was fixed."""
    frames = []
    for o in outcomes:
        if o.fit is None:
            continue
        frames.append(o.fit.coefficients.assign(variant=o.variant.name))
    cols = ["variant", "term", "estimate", "std_err", "ci_low", "ci_high", "fixed"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def variant_table(outcomes: Sequence[VariantOutcome]) -> pd.DataFrame:
    """One row per variant: fixed terms, condition number, flag, refusal, residual SD, R²."""
    rows = []
    for o in outcomes:
        f = o.fit
        rows.append(
            {
                "variant": o.variant.name,
                "fixed_terms": ", ".join(f"{k}={v:g}" for k, v in o.variant.fixed.items()) or "none",
                "intercept": o.variant.intercept,
                "status": "refused" if f is None else ("near-collinear" if f.near_collinear else "ok"),
                "condition_number": np.nan if f is None else f.condition_number,
                "max_vif": np.nan if f is None or f.vif.empty else f.vif["vif"].max(),
                "resid_sd_ms": np.nan if f is None else f.resid_sd_ms,
                "r_squared": np.nan if f is None else f.r_squared,
                "note": o.refused or o.variant.note,
            }
        )
    return pd.DataFrame(rows)


def variant_by_name(name: str) -> Variant:
    """One of :func:`default_variants` by name (ValueError listing the names otherwise)."""
    found = {v.name: v for v in default_variants()}
    if name not in found:
        raise ValueError(f"unknown variant {name!r}; choose one of {sorted(found)}")
    return found[name]
