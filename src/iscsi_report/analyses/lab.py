"""The real iSCSI lab (``data/raw/lab-iscsi-2026``): tidy frames, the latency model's fit and its validation.

Loading: one row per fio run (per-write latency and the configuration labels), the network
measured at each (delay, rate) point (ping RTT, iperf3 rate), and the captured writes reduced by
:mod:`iscsi_report.core.ingest.tshark` (R2Ts per write, most outstanding, PDU timeline).

The primary model (fixed before any held-out error was computed, see the validation chapter)::

    latency_ms = b_trip * one_way_ms_paid + b_wire * wire_ms + b_round * exposed_rounds + b_fixed

where ``one_way_ms_paid`` is (one-way trips the write pays) x one-way delay, ``wire_ms`` the
write's bytes with PDU headers at the iperf3 rate and ``exposed_rounds`` the R2T rounds the
latency pays in full, all three from :func:`iscsi_report.core.model.write_latency` for the
configuration (sliding R2T pacing with the window the patched target enforces). The measured
one-way delay is ping's median RTT / 2 at that point; the link rate is iperf3's. Coefficients
come from OLS (statsmodels) with HC3 intervals, on training rows only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.core import dataset as datasets
from iscsi_report.core import model
from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import iperf3, tshark
from iscsi_report.core.measurements import Measurements, open_dataset
from iscsi_report.core.units import BITS_PER_BYTE, BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S

CONFIG_KEYS = [
    "rw",
    "iodepth",
    "bs_bytes",
    "r2t_window",
    "immediate_data_bytes",
    "max_recv_data_segment_bytes",
    "one_way_delay_ms",
    "link_mbps",
]
NETWORK_KEYS = ["one_way_delay_ms", "link_mbps"]
PACING: model.Pacing = "sliding"  # the patched tgtd issues a new R2T as each burst completes
PRIMARY = "primary"
WITH_PDU = "primary + per-PDU"
VARIANTS: dict[str, list[str]] = {
    PRIMARY: ["one_way_ms_paid", "wire_ms", "exposed_rounds"],
    WITH_PDU: ["one_way_ms_paid", "wire_ms", "exposed_rounds", "data_pdus"],
}
NESTED = "nested selection"
# Declared after the held-out errors of the primary model were seen (validation chapter says so):
# the one-way coefficient fixed at 1 (a trip costs one measured one-way delay), the rest fitted.
REVISED = "revised after seeing errors: one-way coefficient fixed at 1"
FIXED_ONE_WAY = "one_way_ms_paid"
# The confirmation model, declared on 2026-11-22 BEFORE the confirmation sweep
# (data/raw/lab-iscsi-2026-confirm: delays, block sizes and windows never measured before) was
# collected, from what the held-out folds of the first sweep showed: a one-way trip costs the
# measured one-way delay (coefficient fixed at 1, not fitted), plus a cost per data PDU (the
# 8 KiB-segment runs carry 32 times more PDUs). Fitted once on every write run of the first
# sweep; the confirmation sweep is predicted without refitting. Do not change after the sweep.
CONFIRMATION = "first declared model (one-way coefficient 1, per-PDU term)"
CONFIRMATION_TERMS = ["wire_ms", "exposed_rounds", "data_pdus"]
CONFIRMATION_OFFSET = "one_way_ms_paid"
# Quality gate, added after the first confirmation sweep (run on a heavily loaded host) was seen:
# a sweep is a fair test only if the captured command-to-first-R2T time exceeds ping's round trip
# by at most this much at every delay (the first sweep: under 0.7 ms everywhere).
PATH_EXCESS_LIMIT_MS = 1.0
BLOG = "blog formula"
BLOG_SCALED = "blog formula, rescaled"
CONFIRMATION_METHODS = (CONFIRMATION, PRIMARY, BLOG, BLOG_SCALED)
# The second declared model, committed on 2026-11-22 BEFORE data/raw/lab-iscsi-2026-confirm3 was
# collected (its README holds the rule). What the first test taught: the time a host spends per R2T
# round belongs to the host's state, not to the protocol (0.57 ms a round fitted on the busier first
# sweep, about zero when refitted on the quiet second attempt). So a round is charged the host time
# the sweep's own captures measure, the path check's excess at that delay (captured command to
# first R2T, less ping's round trip), with coefficient 1 like the one-way delay; the wire, per-data
# -PDU and fixed costs are fitted once on every sweep that passed the path check
# (SECOND_TRAINING), and the new sweep is predicted without refitting. Do not change after the sweep.
SECOND = "second declared model (host time per round measured)"
SECOND_TERMS = ["wire_ms", "data_pdus"]
SECOND_OFFSET = "one_way_and_host_ms_paid"
SECOND_TRAINING = ("lab-iscsi-2026", "lab-iscsi-2026-confirm2")
METHODS = (PRIMARY, NESTED, BLOG, BLOG_SCALED, REVISED, SECOND)
TRAIN_DELAYS_MS = (0.0, 1.0)
HELD_OUT_MIN_DELAY_MS = 2.0
CI_LEVEL = 0.95


# ---- loading -----------------------------------------------------------------------------------


@dataclass
class LabData:
    """The lab dataset as tidy frames."""

    dataset: Measurements
    runs: pd.DataFrame  # one row per fio run
    networks: pd.DataFrame  # one row per (one_way_delay_ms, link_mbps) point
    captures: pd.DataFrame  # one row per captured complete write
    capture_files: dict[str, tshark.TsharkResult] = field(default_factory=dict)

    @cached_property
    def path(self) -> pd.DataFrame:
        """The path check (:func:`path_check`), computed once: several chapter sections ask."""
        return _path_check(self)


def _fio_row(m: Measurements, f: datasets.RawFile) -> dict[str, Any]:
    """Per-write latency of one fio run: fio's median completion latency plus mean submission."""
    res = m.fio(f)
    jobs = res.jobs
    if len(jobs) != 1:
        raise IngestError(f.path, f"expected one job and direction, found {len(jobs)}", json_path="jobs")
    j = jobs.iloc[0]
    if j["direction"] != f.labels["rw"]:
        raise IngestError(f.path, f"fio direction {j['direction']!r} contradicts label rw={f.labels['rw']!r}")
    slat_ms = float(j["lat_mean_ms"] - j["clat_mean_ms"])
    return {
        **f.labels,
        "file": f.rel,
        "clat_mean_ms": float(j["clat_mean_ms"]),
        "clat_p50_ms": float(j["clat_p50_ms"]),
        "clat_p99_ms": float(j["clat_p99_ms"]),
        "lat_mean_ms": float(j["lat_mean_ms"]),
        "slat_mean_ms": slat_ms,
        "latency_ms": float(j["clat_p50_ms"]) + slat_ms,
        "iops": float(j["iops"]),
    }


def fio_runs(ds: Measurements) -> pd.DataFrame:
    """One row per fio file: its labels, fio's latencies and ``latency_ms`` (the per-write latency)."""
    rows = [_fio_row(ds, f) for f in ds.select("fio")]
    if not rows:
        raise IngestError(ds.root / datasets.MANIFEST, "no fio file in the manifest")
    return pd.DataFrame(rows)


def networks(ds: Measurements) -> pd.DataFrame:
    """Per (delay, rate) point: ping RTT (median, mean), measured one-way delay, iperf3 rate."""
    rows: dict[tuple[float, float], dict[str, Any]] = {}
    for f in ds.select("ping"):
        key = (float(f.labels["one_way_delay_ms"]), float(f.labels.get("link_mbps", 0.0)))
        rtt = ds.ping(f).rtt_ms
        rows.setdefault(key, {})["ping_rtt_p50_ms"] = float(np.median(rtt))
        rows[key]["ping_rtt_mean_ms"] = float(np.mean(rtt))
        rows[key]["ping_file"] = f.rel
    for f in ds.select("iperf3"):
        key = (float(f.labels["one_way_delay_ms"]), float(f.labels.get("link_mbps", 0.0)))
        bps = iperf3.summary(ds.iperf3(f))["received_bps"]
        rows.setdefault(key, {})["iperf3_bps"] = bps
        rows[key]["iperf3_file"] = f.rel
    out = pd.DataFrame([{"one_way_delay_ms": d, "link_mbps": r, **v} for (d, r), v in sorted(rows.items())])
    out["one_way_ms"] = out["ping_rtt_p50_ms"] / 2.0
    return out


def captures(ds: Measurements) -> tuple[pd.DataFrame, dict[str, tshark.TsharkResult]]:
    """One row per complete captured write (labels + R2Ts, most outstanding, latency); parsed files."""
    frames, parsed = [], {}
    for f in ds.select("tshark"):
        res = ds.tshark(f)
        parsed[f.rel] = res
        w = tshark.writes(res)
        frames.append(w.assign(file=f.rel, **{k: f.labels[k] for k in CONFIG_KEYS}))
    if not frames:
        return pd.DataFrame(columns=[*tshark.WRITE_COLUMNS, "file", *CONFIG_KEYS]), parsed
    return pd.concat(frames, ignore_index=True), parsed


def load(raw_dir: str | Path) -> LabData:
    """Read the whole lab dataset through the measurements layer: every file checked against its sha256."""
    ds = open_dataset(raw_dir)
    caps, parsed = captures(ds)
    return LabData(ds, fio_runs(ds), networks(ds), caps, parsed)


# ---- the model for one configuration ------------------------------------------------------------


def iscsi_params(ds: Measurements, row: pd.Series | dict[str, Any]) -> model.IscsiParams:
    """Negotiated keys of a run, with the target's forced window as the window on the wire."""
    keys = ds.iscsi_parameters.get(str(row["iscsi_parameters"]))
    if keys is None:
        raise IngestError(
            ds.root / datasets.MANIFEST, f"iscsi_parameters has no set {row['iscsi_parameters']!r}"
        )
    params = model.IscsiParams(
        first_burst_bytes=int(keys["FirstBurstLength"]),
        max_burst_bytes=int(keys["MaxBurstLength"]),
        immediate_data=keys["ImmediateData"] == "Yes",
        initial_r2t=keys["InitialR2T"] == "Yes",
        max_outstanding_r2t=int(row["r2t_window"]),
        max_recv_data_segment_bytes=int(keys["MaxRecvDataSegmentLength"]),
    )
    imm = model.immediate_bytes(int(row["bs_bytes"]), params)
    if imm != min(int(row["immediate_data_bytes"]), int(row["bs_bytes"])):
        raise IngestError(
            ds.root / datasets.MANIFEST,
            f"label immediate_data_bytes={row['immediate_data_bytes']} "
            f"but set {row['iscsi_parameters']} implies {imm}",
        )
    return params


def breakdown(
    ds: Measurements,
    row: pd.Series | dict[str, Any],
    one_way_ms: float,
    link_bps: float,
    assumptions: model.Assumptions | None = None,
) -> model.LatencyBreakdown:
    """The model's terms for a run's configuration at a measured one-way delay and link rate."""
    a = assumptions or model.Assumptions(r2t_pacing=PACING)
    net = model.Network(one_way_ms=one_way_ms, link_bps=link_bps)
    params, bs = iscsi_params(ds, row), int(row["bs_bytes"])
    if row["rw"] == "read":
        return model.read_latency(bs, params, net, 0.0, 0.0, assumptions=a)
    return model.write_latency(bs, params, net, 0.0, 0.0, assumptions=a)


def features(data: LabData, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Runs joined with their network point and the model's regressors and the blog formula."""
    frame = (data.runs if runs is None else runs).merge(
        data.networks, on=NETWORK_KEYS, how="left", validate="many_to_one"
    )
    missing = frame[frame["one_way_ms"].isna() | frame["iperf3_bps"].isna()]
    if len(missing):
        raise IngestError(
            data.dataset.root / datasets.MANIFEST,
            f"no ping or iperf3 for {missing.iloc[0]['file']}'s point "
            f"(one_way_delay_ms, link_mbps)={tuple(missing.iloc[0][NETWORK_KEYS])}",
        )
    rows = []
    for _, r in frame.iterrows():
        b = breakdown(data.dataset, r, float(r["one_way_ms"]), float(r["iperf3_bps"]))
        blog = breakdown(
            data.dataset, r, float(r["one_way_ms"]), float(r["iperf3_bps"]), model.LOCKSTEP_SHADOWING
        )
        rows.append(
            {
                "one_way_trips": b.one_way_trips,
                "one_way_ms_paid": b.one_way_trips * float(r["one_way_ms"]),
                "wire_ms": b.unsolicited_transmit_ms + b.solicited_transmit_ms,
                "exposed_rounds": b.exposed_rounds,
                "model_r2ts": b.bursts,
                "data_pdus": b.data_pdus,
                "effective_window": b.effective_r2t_window,
                "blog_ms": blog.total_ms,
            }
        )
    return pd.concat([frame.reset_index(drop=True), pd.DataFrame(rows)], axis=1)


def write_fit_rows(feat: pd.DataFrame) -> pd.DataFrame:
    """The rows the fit and validation use: writes at iodepth 1, not captured (dumpcap running)."""
    keep = (feat["rw"] == "write") & (feat["iodepth"] == 1) & (~feat["captured"].astype(bool))
    return feat[keep].copy()


# ---- fitting -------------------------------------------------------------------------------------


def design_matrix(rows: pd.DataFrame, terms: list[str]) -> pd.DataFrame:
    """The regressors ``terms`` plus a constant (the fixed cost)."""
    import statsmodels.api as sm  # only where fitting: the protocol chapter never pays its import

    x: pd.DataFrame = sm.add_constant(rows[terms].astype(float), has_constant="add")
    return x


def identifiable(train: pd.DataFrame, terms: list[str]) -> bool:
    """Whether every coefficient of ``terms`` is determined by ``train`` (full column rank)."""
    x = design_matrix(train, terms).to_numpy(float)
    return len(x) > x.shape[1] and int(np.linalg.matrix_rank(x)) == x.shape[1]


def fit_ols(train: pd.DataFrame, terms: list[str], offset: str | None = None) -> Any:
    """OLS of ``latency_ms`` (less ``offset``) on ``terms`` + fixed cost, HC3, training rows only."""
    import statsmodels.api as sm

    y = train["latency_ms"].astype(float)
    if offset is not None:
        y = y - train[offset].astype(float)
    return sm.OLS(y, design_matrix(train, terms)).fit(cov_type="HC3")


def predict_with_offset(train: pd.DataFrame, rows: pd.DataFrame, terms: list[str], offset: str) -> np.ndarray:
    """Fit ``terms`` on ``train`` with ``offset`` at coefficient 1; predict ``rows`` (offset added back)."""
    res = fit_ols(train, terms, offset)
    predicted: np.ndarray = predict_ols(res, rows, terms) + rows[offset].to_numpy(float)
    return predicted


def predict_ols(result: Any, rows: pd.DataFrame, terms: list[str]) -> np.ndarray:
    """Predictions of a fitted OLS for ``rows``."""
    return np.asarray(result.predict(design_matrix(rows, terms)), dtype=float)


def fit_scale(train: pd.DataFrame) -> float:
    """One factor s minimising the squared error of s x blog formula (least squares through 0)."""
    x, y = train["blog_ms"].to_numpy(float), train["latency_ms"].to_numpy(float)
    return float(x @ y / (x @ x))


TERM_NAMES = {
    "const": "fixed cost (ms)",
    "one_way_ms_paid": "x one-way trips x delay",
    "wire_ms": "x wire time at the iperf3 rate",
    "exposed_rounds": "ms per exposed R2T round",
    "data_pdus": "ms per data PDU",
    "one_way_and_host_ms_paid": "x (one-way trips x delay + exposed rounds x measured host time)",
}


def _coefficient_table(res: Any) -> pd.DataFrame:
    """A fitted OLS as one row per term: name, coefficient, HC3 interval and runs."""
    ci = res.conf_int(alpha=1 - CI_LEVEL)
    return pd.DataFrame(
        {
            "term": [TERM_NAMES[k] for k in res.params.index],
            "coefficient": res.params.to_numpy(),
            "ci_low": ci[0].to_numpy(),
            "ci_high": ci[1].to_numpy(),
            "n_runs": int(res.nobs),
        }
    )


def coefficients(train: pd.DataFrame, variant: str = PRIMARY) -> pd.DataFrame:
    """Per-term coefficients with HC3 confidence intervals from a fit on ``train``."""
    return _coefficient_table(fit_ols(train, VARIANTS[variant]))


# ---- folds and validation ----------------------------------------------------------------------


@dataclass(frozen=True)
class Fold:
    """A held-out split: training and held-out row labels of the fit frame, and how it was made."""

    kind: str
    name: str
    train: pd.Index
    test: pd.Index
    inner: Callable[[pd.DataFrame], list[tuple[pd.Index, pd.Index]]]


def _leave_one_value_out(column: str) -> Callable[[pd.DataFrame], list[tuple[pd.Index, pd.Index]]]:
    """Inner splits of a training set: leave out each value of ``column`` in turn."""

    def splits(train: pd.DataFrame) -> list[tuple[pd.Index, pd.Index]]:
        values = sorted(train[column].unique())
        return (
            [(train.index[train[column] != v], train.index[train[column] == v]) for v in values]
            if len(values) > 1
            else []
        )

    return splits


def folds(rows: pd.DataFrame) -> list[Fold]:
    """Whole delays, whole block sizes, whole windows, and the lab's design split."""
    out = []
    d = rows["one_way_delay_ms"]
    train = rows.index[d.isin(TRAIN_DELAYS_MS)]
    test = rows.index[d >= HELD_OUT_MIN_DELAY_MS]
    out.append(
        Fold(
            "delay",
            "fit D in {0, 1} ms, predict D >= 2 ms",
            train,
            test,
            _leave_one_value_out("one_way_delay_ms"),
        )
    )
    for bs in sorted(rows["bs_bytes"].unique()):
        out.append(
            Fold(
                "block size",
                f"hold out {int(bs) // 1024} KiB",
                rows.index[rows["bs_bytes"] != bs],
                rows.index[rows["bs_bytes"] == bs],
                _leave_one_value_out("bs_bytes"),
            )
        )
    w = rows["r2t_window"]
    for fit_w, test_w in (((1, 8), (2, 4)), ((1, 2), (4, 8))):
        out.append(
            Fold(
                "window",
                f"fit windows {fit_w}, predict {test_w}",
                rows.index[w.isin(fit_w)],
                rows.index[w.isin(test_w)],
                _leave_one_value_out("r2t_window"),
            )
        )
    role = rows["design_role"]
    out.append(
        Fold(
            "design split",
            "the lab's fit/holdout labels",
            rows.index[role == "fit"],
            rows.index[role == "holdout"],
            _leave_one_value_out("one_way_delay_ms"),
        )
    )
    return [f for f in out if len(f.train) and len(f.test)]


def median_ape(measured: pd.Series | np.ndarray, predicted: pd.Series | np.ndarray) -> float:
    """Median absolute percentage error."""
    m, p = np.asarray(measured, float), np.asarray(predicted, float)
    return float(np.median(np.abs(p - m) / m) * 100.0)


def select_variant(train: pd.DataFrame, fold: Fold) -> str:
    """The variant with the lowest inner held-out error, on the training rows of ``fold`` only."""
    splits = fold.inner(train)
    if not splits:
        return PRIMARY
    scores = {}
    for name, terms in VARIANTS.items():
        errs = []
        if not all(identifiable(train.loc[tr], terms) for tr, _ in splits):
            scores[name] = math.inf  # not every inner fit can determine this variant's terms
            continue
        for tr, te in splits:
            res = fit_ols(train.loc[tr], terms)
            held = per_configuration(train.loc[te], predict_ols(res, train.loc[te], terms))
            errs.append(held)
        allheld = pd.concat(errs)
        scores[name] = median_ape(allheld["measured_ms"], allheld["predicted_ms"])
    return min(scores, key=lambda k: (scores[k], list(VARIANTS).index(k)))


def per_configuration(rows: pd.DataFrame, predicted: np.ndarray) -> pd.DataFrame:
    """Per configuration: measured per-write latency (median over replicates) and the prediction."""
    t = rows[CONFIG_KEYS].assign(latency_ms=rows["latency_ms"].to_numpy(), predicted_ms=predicted)
    g = t.groupby(CONFIG_KEYS, as_index=False).agg(
        measured_ms=("latency_ms", "median"),
        predicted_ms=("predicted_ms", "mean"),
        n_runs=("latency_ms", "size"),
    )
    return g


@dataclass
class Validation:
    """Held-out predictions of every method on identical folds, and what each fold trained on."""

    per_config: pd.DataFrame  # fold_kind, fold, method, CONFIG_KEYS, measured_ms, predicted_ms, error_pct
    train_index: dict[str, pd.Index]
    test_index: dict[str, pd.Index]
    chosen: dict[str, str]


def _held_out(fold: Fold, rows: pd.DataFrame, method: str, predicted: np.ndarray) -> pd.DataFrame:
    t = per_configuration(rows.loc[fold.test], predicted)
    t["error_pct"] = (t["predicted_ms"] - t["measured_ms"]) / t["measured_ms"] * 100.0
    return t.assign(fold_kind=fold.kind, fold=fold.name, method=method)


def validate(rows: pd.DataFrame) -> Validation:
    """Fit every method on each fold's training rows only and predict its held-out rows."""
    parts, train_idx, test_idx, chosen = [], {}, {}, {}
    for fold in folds(rows):
        train = rows.loc[fold.train]  # the only rows any fit below sees
        test = rows.loc[fold.test].drop(columns=["latency_ms"])  # held-out inputs, without the answer
        train_idx[fold.name], test_idx[fold.name] = fold.train, fold.test
        primary = predict_ols(fit_ols(train, VARIANTS[PRIMARY]), test, VARIANTS[PRIMARY])
        pick = select_variant(train, fold)
        chosen[fold.name] = pick
        nested = predict_ols(fit_ols(train, VARIANTS[pick]), test, VARIANTS[pick])
        blog = test["blog_ms"].to_numpy(float)
        scaled = fit_scale(train) * blog
        rev_terms = [t for t in VARIANTS[PRIMARY] if t != FIXED_ONE_WAY]
        revised = predict_with_offset(train, test, rev_terms, FIXED_ONE_WAY)
        preds = [
            (PRIMARY, primary),
            (NESTED, nested),
            (BLOG, blog),
            (BLOG_SCALED, scaled),
            (REVISED, revised),
        ]
        if SECOND_OFFSET in rows.columns:  # rows carry the measured host time (with_host_time)
            preds.append((SECOND, predict_with_offset(train, test, SECOND_TERMS, SECOND_OFFSET)))
        for method, pred in preds:
            parts.append(_held_out(fold, rows, method, pred))
    return Validation(pd.concat(parts, ignore_index=True), train_idx, test_idx, chosen)


def summary(v: Validation) -> pd.DataFrame:
    """Median (and largest) absolute held-out error per fold type and method, in percent."""
    pc = v.per_config.assign(abs_error_pct=v.per_config["error_pct"].abs())
    g = (
        pc.groupby(["fold_kind", "method"], sort=False)
        .agg(
            median_abs_error_pct=("abs_error_pct", "median"),
            max_abs_error_pct=("abs_error_pct", "max"),
            configurations=("abs_error_pct", "size"),
        )
        .reset_index()
    )
    return g


def summary_wide(v: Validation) -> pd.DataFrame:
    """Median absolute held-out error (%), one row per fold type, one column per method."""
    s = summary(v).pivot(index="fold_kind", columns="method", values="median_abs_error_pct")
    return s[[m for m in METHODS if m in s.columns]].reset_index()


def goal_met(v: Validation, goal_pct: float) -> pd.DataFrame:
    """Per fold type: does the primary model reach ``goal_pct`` and beat both baselines?"""
    w = summary_wide(v)
    w["meets_goal"] = w[PRIMARY] <= goal_pct
    w["beats_baselines"] = (w[PRIMARY] < w[BLOG]) & (w[PRIMARY] < w[BLOG_SCALED])
    return w


# ---- the prospective test on the confirmation sweep ----------------------------------------------


def _scored(new: pd.DataFrame, preds: dict[str, np.ndarray], seen: pd.DataFrame) -> pd.DataFrame:
    """Per configuration of ``new`` and method: prediction, error, and which values ``seen`` lacked."""
    parts = []
    for method, pred in preds.items():
        t = per_configuration(new, np.asarray(pred, float))
        t["error_pct"] = (t["predicted_ms"] - t["measured_ms"]) / t["measured_ms"] * 100.0
        parts.append(t.assign(method=method))
    out = pd.concat(parts, ignore_index=True)
    return out.assign(
        new_delay=~out["one_way_delay_ms"].isin(seen["one_way_delay_ms"].unique()),
        new_block_size=~out["bs_bytes"].isin(seen["bs_bytes"].unique()),
        new_window=~out["r2t_window"].isin(seen["r2t_window"].unique()),
    )


def confirmation_predictions(train: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Fit each method on ``train`` (the first sweep) only; predict every configuration of ``new``."""
    held = new.drop(columns=["latency_ms"])  # the new runs' inputs, without the answer
    preds = {
        CONFIRMATION: predict_with_offset(train, held, CONFIRMATION_TERMS, CONFIRMATION_OFFSET),
        PRIMARY: predict_ols(fit_ols(train, VARIANTS[PRIMARY]), held, VARIANTS[PRIMARY]),
        BLOG: held["blog_ms"].to_numpy(float),
        BLOG_SCALED: fit_scale(train) * held["blog_ms"].to_numpy(float),
    }
    return _scored(new, preds, train)


def confirmation_summary(pred: pd.DataFrame) -> pd.DataFrame:
    """Median absolute error (%) per method, over all configurations and per kind of novelty."""
    groups = {
        "every configuration": pred.index == pred.index,
        "unseen delay": pred["new_delay"],
        "unseen block size": pred["new_block_size"],
        "unseen window": pred["new_window"],
        "unseen delay, block size and window": pred["new_delay"]
        & pred["new_block_size"]
        & pred["new_window"],
    }
    rows = []
    for name, mask in groups.items():
        sub = pred[mask]
        if sub.empty:
            continue
        row: dict[str, Any] = {"configurations": name, "n": int(len(sub) / pred["method"].nunique())}
        for method in pred["method"].unique():
            e = sub.loc[sub["method"] == method, "error_pct"].abs()
            row[method] = float(e.median())
        rows.append(row)
    return pd.DataFrame(rows)


def path_check(data: LabData) -> pd.DataFrame:
    """Per delay: ping's RTT (measured before the fio runs) against the captured command-to-first-R2T time.

    The difference is the target's time to answer a command plus whatever the path added during
    the runs beyond what ping saw; on a quiet machine it is a fraction of a millisecond at every
    delay. A difference that grows with the delay means the delay line ran late while fio ran
    (a busy host), so the ping-based one-way delay the model is fed understates the real one.
    """
    return data.path.copy()


def _path_check(data: LabData) -> pd.DataFrame:
    """:func:`path_check`, computed."""
    out = []
    for rel, res in data.capture_files.items():
        ev = tshark.timeline(res)
        for _, g in ev.groupby(["stream", "itt"]):
            cmd, r2t = g[g["event"] == "command"], g[g["event"] == "r2t"]
            if len(cmd) and len(r2t):
                gap_ms = (float(r2t["time_s"].min()) - float(cmd["time_s"].min())) * MS_PER_S
                out.append({"file": rel, "command_to_first_r2t_ms": gap_ms})
    if not out:
        return pd.DataFrame()
    caps = data.captures[["file", *NETWORK_KEYS]].drop_duplicates("file")
    t = pd.DataFrame(out).merge(caps, on="file", how="inner", validate="many_to_one")
    g = t.groupby(NETWORK_KEYS, as_index=False).agg(
        command_to_first_r2t_ms=("command_to_first_r2t_ms", "median"), writes=("file", "size")
    )
    g = g.merge(data.networks[[*NETWORK_KEYS, "one_way_ms"]], on=NETWORK_KEYS, how="left")
    g["ping_rtt_ms"] = 2.0 * g["one_way_ms"]
    g["excess_ms"] = g["command_to_first_r2t_ms"] - g["ping_rtt_ms"]
    return g.drop(columns=["one_way_ms"])


def rule_findings(summ: pd.DataFrame, goal_pct: float, declared: str = CONFIRMATION) -> dict[str, str]:
    """The success rule, part by part, in words: groups above the goal, and groups a baseline wins."""
    s = summ.set_index("configurations")
    above = [g for g in s.index if s.loc[g, declared] > goal_pct]
    lost = []
    for g in s.index:
        winners = [b for b in (BLOG, BLOG_SCALED) if s.loc[g, b] <= s.loc[g, declared]]
        if winners:
            scores = ", ".join(f"{b} {s.loc[g, b]:.2f} %" for b in winners)
            lost.append(f"{g} ({scores}, against {s.loc[g, declared]:.2f} %)")
    return {
        "goal": (
            f"within {goal_pct:g} % in every group"
            if not above
            else f"above {goal_pct:g} % in: {'; '.join(above)}"
        ),
        "baselines": (
            "better than both baselines in every group"
            if not lost
            else "not better than both baselines in: " + "; ".join(lost)
        ),
    }


def confirmation_table(
    preds: dict[str, pd.DataFrame],
    sweeps: dict[str, LabData],
    goal_pct: float,
    declared: str = CONFIRMATION,
) -> pd.DataFrame:
    """One row per confirmation sweep: host load, path check, R2T counts, errors and the verdict.

    ``preds`` holds each sweep's predictions (from :func:`confirmation_predictions` or
    :func:`second_predictions`), ``declared`` the method the rule judges.
    """
    out = []
    for name, data in sweeps.items():
        pred = preds[name]
        summ = confirmation_summary(pred).set_index("configurations")
        every = summ.loc["every configuration"].to_dict()
        methods = list(pred["method"].unique())
        path = path_check(data)
        caps = capture_check(data)
        loads = data.dataset.lab.get("host_load_average_1_5_15_min") or {}
        worst = float(summ[declared].max())
        beats = bool((summ[declared] < summ[[BLOG, BLOG_SCALED]].min(axis=1)).all())
        excess = float(path["excess_ms"].max()) if len(path) else float("nan")
        out.append(
            {
                "sweep": name,
                "runs": int(pred.loc[pred["method"] == declared, "n_runs"].sum()),
                "configurations": int(every["n"]),
                "load_average_at_start": (loads.get("at_start") or [float("nan")])[0],
                "load_average_at_end": (loads.get("at_end") or [float("nan")])[0],
                "path_excess_max_ms": excess,
                "r2t_counts_matching_capture": int(caps["matches"].sum()) if len(caps) else 0,
                "captured_configurations": len(caps),
                **{m: float(every[m]) for m in methods},
                "worst_group_pct": worst,
                "path_ok": bool(excess <= PATH_EXCESS_LIMIT_MS),
                "meets_rule": bool(worst <= goal_pct and beats),
            }
        )
    return pd.DataFrame(out)


def _with_fixed(fitted: pd.DataFrame, offset: str) -> pd.DataFrame:
    """A coefficient table plus the offset's row: coefficient 1, fixed, not fitted."""
    fixed = {
        "term": f"{TERM_NAMES[offset]} (fixed, not fitted)",
        "coefficient": 1.0,
        "ci_low": 1.0,
        "ci_high": 1.0,
        "n_runs": int(fitted["n_runs"].iloc[0]),
    }
    return pd.concat([fitted, pd.DataFrame([fixed])], ignore_index=True)


def confirmation_coefficients(train: pd.DataFrame) -> pd.DataFrame:
    """The declared model's coefficients (HC3 95 % CI) from its one fit on the first sweep."""
    fitted = _coefficient_table(fit_ols(train, CONFIRMATION_TERMS, CONFIRMATION_OFFSET))
    return _with_fixed(fitted, CONFIRMATION_OFFSET)


# ---- the second prospective test ----------------------------------------------------------------


def host_ms_per_round(data: LabData) -> pd.Series:
    """Per one-way delay: the host time one R2T round costs, measured (the path check's excess)."""
    pc = path_check(data)
    if pc.empty:
        return pd.Series(dtype=float)
    return pc.groupby("one_way_delay_ms")["excess_ms"].median()


def with_host_time(rows: pd.DataFrame, data: LabData) -> pd.DataFrame:
    """``rows`` with the measured host time per round at their delay, and the offset it adds."""
    per_round = rows["one_way_delay_ms"].map(host_ms_per_round(data))
    if per_round.isna().any():
        bad = rows.loc[per_round.isna()].iloc[0]
        raise IngestError(
            data.dataset.root / datasets.MANIFEST,
            f"no captured write at one_way_delay_ms={bad['one_way_delay_ms']:g} to measure the host "
            f"time per R2T round that {bad['file']} needs (expected a tshark capture at that delay)",
        )
    paid = rows["exposed_rounds"].astype(float) * per_round
    return rows.assign(
        host_ms_per_round=per_round,
        host_ms_paid=paid,
        one_way_and_host_ms_paid=rows["one_way_ms_paid"].astype(float) + paid,
    )


def host_rows(data: LabData) -> pd.DataFrame:
    """A sweep's fit rows (:func:`write_fit_rows`) with the measured host time per round."""
    return with_host_time(write_fit_rows(features(data)), data)


def second_training(sweeps: dict[str, LabData]) -> pd.DataFrame:
    """The second model's training rows: every write run of the sweeps it names, with host time."""
    return pd.concat([host_rows(sweeps[n]) for n in SECOND_TRAINING], ignore_index=True)


def second_predictions(first: pd.DataFrame, train: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """The second declared model and both baselines fitted on ``train``, the first declared model
    as declared (fitted on ``first``); every configuration of ``new`` predicted, nothing refitted."""
    held = new.drop(columns=["latency_ms"])
    preds = {
        SECOND: predict_with_offset(train, held, SECOND_TERMS, SECOND_OFFSET),
        CONFIRMATION: predict_with_offset(first, held, CONFIRMATION_TERMS, CONFIRMATION_OFFSET),
        BLOG: held["blog_ms"].to_numpy(float),
        BLOG_SCALED: fit_scale(train) * held["blog_ms"].to_numpy(float),
    }
    return _scored(new, preds, train)


def worst_configuration(pred: pd.DataFrame, method: str) -> pd.Series:
    """The configuration ``method`` predicts worst (largest absolute error), with its error."""
    own = pred[pred["method"] == method].reset_index(drop=True)
    worst: pd.Series = own.iloc[int(np.argmax(own["error_pct"].abs().to_numpy()))]
    return worst


def second_coefficients(train: pd.DataFrame) -> pd.DataFrame:
    """The second declared model's coefficients (HC3 95 % CI) from its one fit on its training."""
    return _with_fixed(_coefficient_table(fit_ols(train, SECOND_TERMS, SECOND_OFFSET)), SECOND_OFFSET)


# ---- views for the chapters --------------------------------------------------------------------


def capture_check(data: LabData) -> pd.DataFrame:
    """Per captured configuration: R2Ts per write on the wire vs the model, most outstanding vs window."""
    c = data.captures
    if c.empty:
        return pd.DataFrame()
    g = c.groupby(["file", *CONFIG_KEYS], as_index=False).agg(
        writes=("r2t_count", "size"),
        r2t_min=("r2t_count", "min"),
        r2t_max=("r2t_count", "max"),
        max_outstanding=("max_outstanding_r2t", "max"),
    )
    model_r2t, window = [], []
    for _, r in g.iterrows():
        row = {**{str(k): v for k, v in r.items()}, "iscsi_parameters": _param_set(data, r)}
        b = breakdown(data.dataset, row, 0.0, 1e9)
        model_r2t.append(b.bursts)
        window.append(min(b.effective_r2t_window, b.bursts))
    return g.assign(
        model_r2ts=model_r2t,
        window_on_wire=window,
        matches=(g["r2t_min"] == np.array(model_r2t)) & (g["r2t_max"] == np.array(model_r2t)),
    )


def _param_set(data: LabData, row: pd.Series) -> str:
    """The ``iscsi_parameters`` label of the capture file behind ``row``."""
    f = next(f for f in data.dataset.select("tshark") if f.rel == row["file"])
    return str(f.labels["iscsi_parameters"])


def capture_file(data: LabData, **labels: Any) -> str:
    """The capture file whose labels equal ``labels`` (error naming them if none)."""
    hits = data.dataset.select("tshark", **labels)
    if len(hits) != 1:
        raise IngestError(
            data.dataset.root / datasets.MANIFEST, f"expected one capture with {labels}, found {len(hits)}"
        )
    return hits[0].rel


def write_timeline(data: LabData, rel: str, which: int = -1) -> pd.DataFrame:
    """Events of one complete write of a capture (default: the last), times in ms from its command."""
    res = data.capture_files[rel]
    done = tshark.writes(res)
    if done.empty:
        raise IngestError(rel, "no complete write in this capture")
    w = done.iloc[which]
    ev = tshark.timeline(res)
    ev = ev[(ev["stream"] == w["stream"]) & (ev["itt"] == w["itt"])].copy()
    ev["time_ms"] = ev["time_s"] * MS_PER_S
    ev["offset_kib"] = ev["offset_bytes"].astype(float) / BYTES_PER_KIB
    ev["length_kib"] = ev["length_bytes"].astype(float) / BYTES_PER_KIB
    out: pd.DataFrame = ev.reset_index(drop=True)
    return out


def model_lines(data: LabData, coef: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and delay: measured median latency and the primary model's prediction."""
    res_terms = VARIANTS[PRIMARY]
    b = dict(zip(["const", *res_terms], coef["coefficient"], strict=True))
    pred = b["const"] + sum(b[t] * rows[t].astype(float) for t in res_terms)
    return per_configuration(rows, np.asarray(pred, float))


def reads_vs_writes(feat: pd.DataFrame) -> pd.DataFrame:
    """Reads and writes at iodepth 1, window 1, 64 KiB immediate data, 1000 Mbit/s: median latency."""
    keep = (
        (feat["iodepth"] == 1)
        & (feat["r2t_window"] == 1)
        & (feat["immediate_data_bytes"] == 65536)
        & (feat["link_mbps"] == 1000.0)
        & (~feat["captured"].astype(bool))
    )
    t = feat[keep]
    return t.groupby(["rw", "bs_bytes", "one_way_delay_ms"], as_index=False).agg(
        latency_ms=("latency_ms", "median"),
        one_way_trips=("one_way_trips", "first"),
        wire_ms=("wire_ms", "first"),
        one_way_ms=("one_way_ms", "first"),
    )


def queue_depth(feat: pd.DataFrame, data: LabData) -> pd.DataFrame:
    """iodepth 4 vs 1 on the same configurations: MiB/s measured, and the model's pipeline bound."""
    keep = (
        (~feat["captured"].astype(bool))
        & (feat["link_mbps"] == 1000.0)
        & (feat["immediate_data_bytes"] == 65536)
    )
    t = feat[keep]
    qd4 = t[t["iodepth"] > 1][["rw", "bs_bytes", "r2t_window", "one_way_delay_ms"]].drop_duplicates()
    t = t.merge(qd4, on=list(qd4.columns))
    t = t.assign(mib_per_s=t["iops"] * t["bs_bytes"] / BYTES_PER_MIB)
    g = t.groupby(["rw", "bs_bytes", "r2t_window", "one_way_delay_ms", "iodepth"], as_index=False).agg(
        mib_per_s=("mib_per_s", "median"),
        latency_ms=("latency_ms", "median"),
        iperf3_bps=("iperf3_bps", "first"),
    )
    g["link_mib_per_s"] = g["iperf3_bps"] / BITS_PER_BYTE / BYTES_PER_MIB
    return g.drop(columns=["iperf3_bps"])


def finite(x: float) -> float:
    """``x`` or NaN when it is not finite (glue-friendly)."""
    return x if math.isfinite(x) else float("nan")
