"""Fit the latency model's term coefficients on remote fio runs, check identifiability, validate.

Each remote run gives an observed operation time ``op_ms`` and the model's own term values
computed from *measured* inputs (ping one-way latency, iperf3 link rate, local device time at the
device's request size, target CPU time per op). The model says ``op_ms = Σ terms``; the fit asks
how much of each term group the runs actually pay::

    op_ms ≈ β_one_way·one_way_ms + β_transmit·transmit_ms + β_device·device_ms + β_cpu·cpu_ms

so β = 1 is the model as written, β < 1 a term partly overlapped (asynchronous). Within one
network the transmission time and any per-byte device or CPU cost all grow with the block size,
so they are nearly collinear; only runs across networks and devices separate them. A singular
design is refused (:class:`~iscsi_report.core.errors.DesignError`); a near-collinear one is flagged;
constrained variants fix the unidentifiable coefficients at their physical value, 1.

On a *reconstructed* dataset (manifest ``reconstructed: true``) only quantities the source
published may drive a coefficient: :func:`runs_from_dataset` replaces the target CPU time per
operation (invented for most runs) by the published figure, and a fit refuses any row whose
``invented_inputs`` column names an input (:func:`check_published_only`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.api as sm
from statsmodels.stats.outliers_influence import OLSInfluence

from iscsi_report.analyses import audit, blog, r2t, storage
from iscsi_report.core import model
from iscsi_report.core.errors import DesignError
from iscsi_report.core.measurements import Measurements
from iscsi_report.core.published import PublishedNumber
from iscsi_report.core.units import BITS_PER_BYTE, BITS_PER_MBIT, BYTES_PER_MIB, KIB_PER_MIB

# Term groups of model.write_latency that share one coefficient.
TERM_GROUPS: dict[str, tuple[str, ...]] = {
    "one_way_ms": ("command_one_way_ms", "r2t_one_way_ms", "data_one_way_ms", "status_one_way_ms"),
    "transmit_ms": ("unsolicited_transmit_ms", "solicited_transmit_ms"),
    "device_ms": ("device_ms",),
    "cpu_ms": ("cpu_ms",),
}
REGRESSORS: tuple[str, ...] = tuple(TERM_GROUPS)
INTERCEPT = "intercept_ms"
PHYSICAL_COEFFICIENT = 1.0  # the model as written charges every term in full

# Belsley, Kuh & Welsch (1980): a scaled condition index above 30 signals a strong dependency.
CONDITION_NUMBER_THRESHOLD = 30.0
VIF_THRESHOLD = 10.0  # conventional rule of thumb for a variance inflation factor
RANK_TOLERANCE = 1e-10  # relative singular-value cut-off for rank deficiency
CONFIDENCE = 0.95
COV_TYPE = "HC3"  # MacKinnon & White: robust to heteroscedasticity, good for small n

# Columns a configuration frame must have (measured model inputs), and a runs frame (one row per
# remote fio run) in addition its observed op time; optional iSCSI key columns follow.
INPUT_COLUMNS: tuple[str, ...] = (
    "network",
    "device",
    "bs_bytes",
    "max_outstanding_r2t",
    "one_way_ms",
    "link_bps",
    "device_ms",
    "cpu_ms",
)
RUN_COLUMNS: tuple[str, ...] = ("run", *INPUT_COLUMNS, "op_ms")
ISCSI_COLUMNS: dict[str, object] = {
    "first_burst_bytes": model.DEFAULT_FIRST_BURST_BYTES,
    "max_burst_bytes": model.DEFAULT_MAX_BURST_BYTES,
    "immediate_data": True,
    "initial_r2t": False,
}
CONFIG_KEYS: tuple[str, ...] = ("network", "device", "max_outstanding_r2t", "bs_bytes")


def check_inputs(frame: pd.DataFrame, columns: Sequence[str] = INPUT_COLUMNS) -> None:
    """Refuse a frame missing a column, or with a non-finite or negative input (op time <= 0)."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DesignError(f"frame lacks column(s) {missing}; expected {list(columns)}")
    if frame.empty:
        raise DesignError("frame is empty: nothing to fit or project")
    numeric = [c for c in ("op_ms", "one_way_ms", "link_bps", "device_ms", "cpu_ms") if c in columns]
    values = frame[numeric].to_numpy(float)
    bad = ~np.isfinite(values).all(axis=1) | (values < 0).any(axis=1)
    if "op_ms" in numeric:
        bad |= frame["op_ms"].to_numpy(float) <= 0
    if bad.any():
        label = frame["run"] if "run" in frame.columns else frame.index.to_series()
        raise DesignError(f"row(s) {list(label[bad])} have a missing, negative or zero input")


INVENTED_COLUMN = "invented_inputs"  # per row: comma-separated input columns a reconstruction invented
# Which input columns each term group is computed from (the design's provenance).
REGRESSOR_INPUTS: dict[str, tuple[str, ...]] = {
    "one_way_ms": ("one_way_ms", "link_bps", "bs_bytes", "max_outstanding_r2t"),
    "transmit_ms": ("link_bps", "bs_bytes", "max_outstanding_r2t"),
    "device_ms": ("device_ms",),
    "cpu_ms": ("cpu_ms",),
}


def invented_in(runs: pd.DataFrame) -> dict[str, list[str]]:
    """Input column -> runs whose value of it a reconstruction invented (from ``invented_inputs``)."""
    out: dict[str, list[str]] = {}
    if INVENTED_COLUMN not in runs.columns:
        return out
    labels = runs["run"] if "run" in runs.columns else runs.index.to_series().astype(str)
    for label, cell in zip(labels, runs[INVENTED_COLUMN], strict=True):
        for col in str(cell or "").split(","):
            if col.strip():
                out.setdefault(col.strip(), []).append(str(label))
    return out


def check_published_only(runs: pd.DataFrame) -> None:
    """Refuse (DesignError) rows with an invented input: it would drive every coefficient of the fit."""
    invented = invented_in(runs)
    if invented:
        detail = "; ".join(f"{col} of {len(r)} run(s) ({', '.join(r[:3])}...)" for col, r in invented.items())
        raise DesignError(
            f"invented input(s) would drive the coefficients: {detail}; fix the term at a published "
            "value or pass allow_invented=True for a sensitivity fit that is reported as such"
        )


def check_runs(runs: pd.DataFrame) -> None:
    """Refuse a runs frame missing a column or holding a non-finite or non-positive op time."""
    check_inputs(runs, RUN_COLUMNS)


def iscsi_params(row: Mapping[Hashable, Any]) -> model.IscsiParams:
    """The session keys of one run: its iSCSI columns (RFC defaults where absent)."""
    keys: dict[str, Any] = {}
    for k, default in ISCSI_COLUMNS.items():
        value = row.get(k, default)
        keys[k] = default if value is None or pd.isna(value) else value
    return model.IscsiParams(
        first_burst_bytes=int(keys["first_burst_bytes"]),
        max_burst_bytes=int(keys["max_burst_bytes"]),
        immediate_data=bool(keys["immediate_data"]),
        initial_r2t=bool(keys["initial_r2t"]),
        max_outstanding_r2t=int(row["max_outstanding_r2t"]),
    )


@lru_cache(maxsize=4096)
def unit_counts(
    bs_bytes: int, params: model.IscsiParams, assumptions: model.Assumptions = model.DEFAULT_ASSUMPTIONS
) -> tuple[float, float]:
    """(one-way legs, 64-KiB transmission units) of one write at a 1 ms one-way and 1 ms per 64 KiB.

    Exact for serial and lock-step pacing and for a window that never fills the link; with a
    sliding window the exposed legs depend on the ratio of one-way to transmission time, so
    :func:`term_matrix` evaluates every run at its own inputs instead.
    """
    net = model.Network(one_way_ms=1.0, per_64k_ms=1.0)
    unit = model.write_latency(int(bs_bytes), params, net, 0.0, 0.0, assumptions=assumptions)
    return _legs_units(unit, net)


def _legs_units(b: model.LatencyBreakdown, net: model.Network) -> tuple[float, float]:
    """(one-way legs, 64-KiB units) a breakdown pays on ``net``."""
    terms = b.terms
    one_way = sum(terms[t] for t in TERM_GROUPS["one_way_ms"])
    transmit = sum(terms[t] for t in TERM_GROUPS["transmit_ms"])
    legs = one_way / net.one_way_ms if net.one_way_ms > 0 else b.one_way_trips
    assert net.per_64k_ms is not None  # set by Network.__post_init__
    return float(legs), float(transmit / float(net.per_64k_ms))


def run_legs_units(
    row: Mapping[Hashable, Any], assumptions: model.Assumptions = model.DEFAULT_ASSUMPTIONS
) -> tuple[float, float]:
    """(one-way legs, 64-KiB units) of one run's write at its own measured network inputs."""
    net = model.Network(one_way_ms=float(row["one_way_ms"]), link_bps=float(row["link_bps"]))
    b = model.write_latency(int(row["bs_bytes"]), iscsi_params(row), net, 0.0, 0.0, assumptions=assumptions)
    return _legs_units(b, net)


def term_matrix(
    runs: pd.DataFrame, assumptions: model.Assumptions = model.DEFAULT_ASSUMPTIONS
) -> pd.DataFrame:
    """Per row: the model's term-group values (ms) from its measured inputs, plus ``legs``."""
    check_inputs(runs)
    counts = [run_legs_units(r, assumptions) for r in runs.to_dict("records")]
    legs = np.array([c[0] for c in counts])
    units = np.array([c[1] for c in counts])
    per_64k_ms = model.TRANSMIT_REFERENCE_BYTES * BITS_PER_BYTE / runs["link_bps"].to_numpy(float) * 1e3
    return pd.DataFrame(
        {
            "one_way_ms": legs * runs["one_way_ms"].to_numpy(float),
            "transmit_ms": units * per_64k_ms,
            "device_ms": runs["device_ms"].to_numpy(float),
            "cpu_ms": runs["cpu_ms"].to_numpy(float),
            "legs": legs,
        },
        index=runs.index,
    )


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


# ---- Measured inputs from a dataset ------------------------------------------------------------

MODEL_PING_INTERVAL_S = r2t.DEFAULT_PING_INTERVAL_S  # the blog's 2 ms pings
CPU_CORES_COUNTED = 1  # the blog reads iostat's busy % as one core's seconds per second


def rtt_samples_by_network(
    ds: Measurements, interval_s: float = MODEL_PING_INTERVAL_S
) -> dict[str, np.ndarray]:
    """RTT samples (ms, duplicates excluded) of each network's ping files at ``interval_s``."""
    out: dict[str, list[np.ndarray]] = {}
    for f in ds.select("ping", interval_s=interval_s):
        result = ds.ping(f)
        out.setdefault(str(f.labels["network"]), []).append(result.rtt_ms[~result.duplicate])
    if not out:
        raise DesignError(f"dataset {ds.name}: no ping files with interval_s={interval_s}")
    return {k: np.concatenate(v) for k, v in out.items()}


def _parameter_set(sets: Mapping[str, model.IscsiParams], run: Mapping[Hashable, Any]) -> model.IscsiParams:
    """The run's named manifest parameter set (RFC defaults if unnamed), checked against its R2T label."""
    name = run.get("iscsi_parameters")
    if name is None or (isinstance(name, float) and np.isnan(name)):
        return model.IscsiParams(max_outstanding_r2t=int(run["max_outstanding_r2t"]))
    if name not in sets:
        raise DesignError(
            f"run {run['run']}: parameter set {name!r} is not under the manifest's iscsi_parameters"
        )
    params = sets[str(name)]
    if params.max_outstanding_r2t != int(run["max_outstanding_r2t"]):
        raise DesignError(
            f"run {run['run']}: label max_outstanding_r2t={run['max_outstanding_r2t']} but "
            f"set {name!r} has MaxOutstandingR2T={params.max_outstanding_r2t}"
        )
    return params


# Published figures that stand in for what a reconstruction invented (data/published/blog-2023.yaml).
PUBLISHED_CPU_ID = "model.cpu_2m_ms"  # the blog's 8 ms of target CPU per 2 MiB operation
PUBLISHED_BLOCK_ID = "model.block_mib"  # ... for a block of this many MiB
PUBLISHED_REQUEST_ID = "iostat.excerpt.wareq_sz_kB"  # the one published iostat line: request size
PUBLISHED_REQUEST_BLOCK_ID = "model.block_mib"  # ... during 2 MiB writes

# Where each model input of a run comes from on the reconstructed blog dataset: the published
# figures it was generated to reproduce, or the published rule that replaces an invented value.
PUBLISHED_INPUTS: dict[str, str] = {
    "op_ms": "published fio MiB/s of each run (fio.*.mib_per_s, projection.*.actual_mib_per_s)",
    "one_way_ms": "published mean RTT of the 2 ms pings / 2 (latency.*_2ms.mean_ms)",
    "link_bps": "published iperf3 rate (network.iperf3.*_mbit_per_s)",
    "device_ms": (
        "local-device fit on the published local fio table (fio.local.*), at the request size of "
        f"the published iostat line ({PUBLISHED_REQUEST_ID} per {PUBLISHED_REQUEST_BLOCK_ID})"
    ),
    "cpu_ms": f"published rule: {PUBLISHED_CPU_ID} per {PUBLISHED_BLOCK_ID}, in proportion to the block size",
}
INVENTED_INSTEAD: dict[str, str] = {
    "cpu_ms": "the iostat CPU share of the block-device runs (the blog published CPU for libiscsi runs only)",
    "device_ms": "the iostat request sizes of every run but the published excerpt",
}


def _published_numbers(published: str | Path | None) -> dict[str, PublishedNumber]:
    """The blog's published numbers by id."""
    return audit.load_published(blog.published_path(published))


def published_cpu_ms(bs_bytes: np.ndarray, published: str | Path | None = None) -> np.ndarray:
    """Target CPU ms per operation by the blog's published rule, in proportion to the block size."""
    n = _published_numbers(published)
    per_mib = n[PUBLISHED_CPU_ID].value / n[PUBLISHED_BLOCK_ID].value
    out: np.ndarray = np.asarray(bs_bytes, dtype=float) / BYTES_PER_MIB * per_mib
    return out


def published_cpu_rule(published: str | Path | None = None) -> tuple[float, float]:
    """(CPU ms per operation, block MiB) as the blog published them: its 8 ms per 2 MiB."""
    n = _published_numbers(published)
    return float(n[PUBLISHED_CPU_ID].value), float(n[PUBLISHED_BLOCK_ID].value)


def published_request_fraction(published: str | Path | None = None) -> float:
    """Device request size over block size in the blog's published iostat line (1024 kB at 2 MiB)."""
    n = _published_numbers(published)
    return float(n[PUBLISHED_REQUEST_ID].value / (n[PUBLISHED_REQUEST_BLOCK_ID].value * KIB_PER_MIB))


def input_provenance(reconstructed: bool) -> pd.DataFrame:
    """Per model input: where its value comes from, and what the reconstruction invented instead."""
    rows = []
    for col in ("op_ms", "one_way_ms", "link_bps", "device_ms", "cpu_ms"):
        if reconstructed:
            rows.append(
                {"input": col, "source": PUBLISHED_INPUTS[col], "not used": INVENTED_INSTEAD.get(col, "")}
            )
        else:
            rows.append({"input": col, "source": "measured (raw files of the dataset)", "not used": ""})
    return pd.DataFrame(rows)


def runs_from_dataset(
    ds: Measurements, published: str | Path | None = None
) -> tuple[pd.DataFrame, dict[str, storage.DeviceFit]]:
    """One row per remote fio run with its model inputs (see :data:`RUN_COLUMNS`).

    one_way_ms = mean 2 ms-interval RTT / 2 of its network and link_bps from iperf3 (both via
    :mod:`iscsi_report.analyses.r2t`, as the projections chapter reads them); device_ms from
    the local-device fit (:mod:`iscsi_report.analyses.storage`) at the request size iostat saw; cpu_ms from
    the target's iostat busy share over the run's IOPS. On a reconstructed dataset the two
    quantities the reconstruction invented for most runs are replaced by published ones: the
    request size by the published iostat line's share of the block and cpu_ms by the published
    CPU rule (:data:`PUBLISHED_INPUTS`); the invented iostat CPU is kept as ``cpu_ms_invented``
    for sensitivity studies only.
    """
    runs = storage.fio_runs(ds)
    fits, _ = storage.fit_devices(runs)
    remote = runs[~storage.is_local(runs)].copy()
    nets = r2t.network_inputs(r2t.rtt_means(ds), r2t.iperf_rates(ds), MODEL_PING_INTERVAL_S)
    nets = nets.set_index("network")
    for network in remote["network"].unique():
        if network not in nets.index or nets.loc[network, "missing"]:
            raise DesignError(f"network {network!r} has fio runs but no 2 ms ping or iperf3 file")
    req = storage.iostat_requests(ds).set_index("run")["request_bytes"]
    cpu_table = storage.cpu_ms_per_op(storage.iostat_cpu(ds), cores=CPU_CORES_COUNTED)
    cpu = cpu_table.set_index("run")["cpu_ms_per_op"]
    remote["one_way_ms"] = remote["network"].map(nets["one_way_ms"])
    remote["link_bps"] = remote["network"].map(nets["received_mbit_per_s"] * BITS_PER_MBIT)
    remote["device_request_bytes"] = remote["run"].map(req)
    remote["cpu_ms"] = remote["run"].map(cpu)
    missing = remote["device_request_bytes"].isna() | remote["cpu_ms"].isna()
    if missing.any():
        raise DesignError(f"run(s) {list(remote.loc[missing, 'run'])} have no matching iostat file")
    if ds.reconstructed:
        bs = remote["bs_bytes"].to_numpy(float)
        remote["cpu_ms_invented"] = remote["cpu_ms"]
        remote["cpu_ms"] = published_cpu_ms(bs, published)
        remote["device_request_bytes"] = np.rint(bs * published_request_fraction(published)).astype(int)
    remote[INVENTED_COLUMN] = ""
    for device in remote["device"].unique():
        if device not in fits:
            raise DesignError(f"device {device!r} has remote runs but no local fit")
    remote["device_ms"] = [
        fits[d].predict_ms(b) for d, b in zip(remote["device"], remote["device_request_bytes"], strict=True)
    ]
    sets = r2t.parameter_sets(ds.iscsi_parameters, ds.root / "manifest.yaml").sets
    params = [_parameter_set(sets, r) for r in remote.to_dict("records")]
    for col in ISCSI_COLUMNS:
        remote[col] = [getattr(p, col) for p in params]
    remote["validation"] = storage.is_validation(remote)
    return remote.reset_index(drop=True), fits


def with_guessed_cpu(
    runs: pd.DataFrame, published_runs: Sequence[str], guess_ms_per_mib: float
) -> pd.DataFrame:
    """Runs whose CPU is the reconstruction's (``cpu_ms_invented``) where published, a guess elsewhere.

    The guessed rows are marked in ``invented_inputs``, so only a fit with ``allow_invented``
    accepts them: for the sensitivity table, never for a reported coefficient.
    """
    out = runs.copy()
    known = out["run"].isin(list(published_runs)).to_numpy()
    guessed = out["bs_bytes"].to_numpy(float) / BYTES_PER_MIB * guess_ms_per_mib
    out["cpu_ms"] = np.where(known, out["cpu_ms_invented"].to_numpy(float), guessed)
    out[INVENTED_COLUMN] = np.where(known, "", "cpu_ms")
    return out


def cpu_sensitivity(
    runs: pd.DataFrame,
    published_runs: Sequence[str],
    guesses_ms_per_mib: Sequence[float],
    variant: Variant,
) -> pd.DataFrame:
    """β of ``variant`` (CPU coefficient free) under each guess of the unpublished CPU per MiB.

    A range over guesses, not a finding: shows how far an invented CPU figure would move the fit.
    """
    rows = []
    for guess in guesses_ms_per_mib:
        f = fit_variant(with_guessed_cpu(runs, published_runs, guess), variant, allow_invented=True)
        rows.append({"guess_cpu_ms_per_mib": guess, **{f"beta_{k}": v for k, v in f.beta.items()}})
    return pd.DataFrame(rows)


# ---- Leave-one-configuration-out validation ------------------------------------------------


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
            "measured_mib_per_s": _mib(target),
            "est_mib_per_s": np.nan,
            "error_pct": np.nan,
            "refused": str(exc),
        }
    est_ms = float(fit.predict(term_matrix(held))[0])
    est = model.mib_per_s(int(target["bs_bytes"]), est_ms) if est_ms > 0 else np.nan
    measured = _mib(target)
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


def _mib(run: pd.Series) -> float:
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


# ---- Nested leave-one-configuration-out: selection inside each fold, baselines on the same folds ----

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
        measured = _mib(target)
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
        measured = _mib(target)
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


def variant_by_name(name: str) -> Variant:
    """One of :func:`default_variants` by name (ValueError listing the names otherwise)."""
    found = {v.name: v for v in default_variants()}
    if name not in found:
        raise ValueError(f"unknown variant {name!r}; choose one of {sorted(found)}")
    return found[name]


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
