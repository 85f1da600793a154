"""Storage chapter analyses: fio throughput by block size, the per-device latency fit, iostat.

A write of ``bs`` bytes on a device at queue depth 1 takes roughly a fixed time plus ``bs``
over a streaming bandwidth; :func:`fit_devices` estimates both by OLS with confidence intervals,
and :meth:`DeviceFit.predict_ms` gives the model the device time at the request size that iostat
shows the drive actually served (the blog's drive saw half-size requests, Guerri 2023).
Everything takes a :class:`~iscsi_report.core.measurements.Measurements` or tidy DataFrames;
notebooks only show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.core import labels as label_contract
from iscsi_report.core import pairing
from iscsi_report.core.dataset import RawFile
from iscsi_report.core.errors import DesignError, IngestError
from iscsi_report.core.ingest import fio, iostat
from iscsi_report.core.measurements import Measurements
from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S, NS_PER_MS

CI_LEVEL = 0.95
MIN_FIT_RUNS = 3  # two coefficients and at least one residual degree of freedom for a CI
LOCAL_SCENARIO_PART = label_contract.LOCAL_PREFIX  # "local-sg", "qd4-local-libaio", "buffered-local-psync"
LOCAL_SIDE = "local"
# How a fio run was made (rw, iodepth, engine, direct, numjobs): from the manifest, else the file.
RUN_KIND = label_contract.FIO_RUN_LABELS
MODEL_FIT_LABELS = label_contract.MODEL_FIT_LABELS
# Why a run kind other than MODEL_FIT_LABELS cannot stand for the model's device term.
EXCLUSION_WHY = {
    "rw": "the model writes sequentially",
    "iodepth": "the model's device term is one request at a time",
    "direct": "buffered writes time the page cache, not the device",
    "numjobs": "several jobs share the device",
}
# Labels copied from the manifest onto each run row (absent ones become None).
RUN_LABELS = (
    "scenario",
    "device",
    "engine",
    "network",
    "max_outstanding_r2t",
    "iscsi_parameters",
    "validation",
    "run",
)
RUN_COLUMNS = (
    "file",
    "side",
    *RUN_LABELS,
    *(k for k in RUN_KIND if k not in RUN_LABELS),
    "bs_bytes",
    "iops",
    "mib_per_s",
    "op_ms",
    "clat_mean_ms",
    "usr_cpu_pct",
    "sys_cpu_pct",
)
GROUP_KEYS = label_contract.THROUGHPUT_KEYS
FIT_KEYS = label_contract.DEVICE_FIT_KEYS


# ---- fio runs --------------------------------------------------------------------------------


def _write_row(f: RawFile, jobs: pd.DataFrame) -> pd.Series:
    """The single write job of a fio file; several jobs or none is an error (no silent pick)."""
    writes = jobs[jobs["direction"] == "write"]
    if len(writes) != 1:
        raise IngestError(
            f.path,
            f"expected exactly one job doing writes (numjobs=1 or group_reporting), found {len(writes)}",
            json_path="jobs",
        )
    return writes.iloc[0]


def _bs_bytes(f: RawFile, parsed: float) -> int:
    """Block size from the label, checked against fio's recorded bs; one of them must exist."""
    label = f.labels.get("bs_bytes")
    if label is None and (parsed is None or pd.isna(parsed)):
        raise IngestError(f.path, "block size unknown: no bs_bytes label and fio recorded no bs")
    if label is not None and parsed is not None and not pd.isna(parsed) and int(label) != int(parsed):
        raise IngestError(
            f.path,
            f"manifest label bs_bytes={label} but fio ran with bs={int(parsed)}",
            json_path="jobs[0].job options.bs",
        )
    return int(label if label is not None else parsed)


def run_kind(m: Measurements, f: RawFile, result: fio.FioResult) -> dict[str, Any]:
    """rw, iodepth, engine, direct, numjobs: the manifest's label, else what the fio file records."""
    inferred = label_contract.fio_labels(result, m.text(f)).labels
    return {k: f.labels[k] if f.labels.get(k) is not None else inferred.get(k) for k in RUN_KIND}


def run_row(m: Measurements, f: RawFile) -> dict[str, Any]:
    """One fio file as a row: labels, run kind, block size, IOPS, MiB/s, per-op ms, latency and CPU."""
    result = m.fio(f)
    job = _write_row(f, result.jobs)
    if not job["iops"] > 0:
        raise IngestError(f.path, "the write job reports 0 IOPS", json_path="jobs[0].write.iops")
    return {
        "file": f.rel,
        "side": f.side,
        **{k: f.labels.get(k) for k in RUN_LABELS},
        **run_kind(m, f, result),
        "bs_bytes": _bs_bytes(f, job["bs_bytes"]),
        "iops": float(job["iops"]),
        "mib_per_s": float(job["bw_bytes_per_s"]) / BYTES_PER_MIB,
        "op_ms": MS_PER_S / float(job["iops"]),
        "clat_mean_ms": float(job["clat_mean_ms"]),
        "usr_cpu_pct": float(job["usr_cpu_pct"]),
        "sys_cpu_pct": float(job["sys_cpu_pct"]),
    }


def fio_runs(ds: Measurements, **labels: Any) -> pd.DataFrame:
    """Every fio file of the dataset matching ``labels``, one row each (see :data:`RUN_COLUMNS`)."""
    rows = [run_row(ds, f) for f in ds.select("fio", **labels)]
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


def is_local(runs: pd.DataFrame) -> pd.Series:
    """Rows of fio on the device itself: side ``local``, or ``local`` as a part of the scenario."""
    parts = runs["scenario"].fillna("").astype(str).str.split("-")
    by_scenario = parts.apply(lambda p: LOCAL_SCENARIO_PART in p).astype(bool)
    side = runs["side"] if "side" in runs else pd.Series(None, index=runs.index)
    return by_scenario | (side == LOCAL_SIDE)


def exclusion_reason(row: pd.Series | dict[str, Any]) -> str:
    """Why a local run kind is not what the model's device fit reads ('' when it is)."""
    reasons = []
    for key, wanted in MODEL_FIT_LABELS.items():
        value = row.get(key)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            reasons.append(f"{key} unknown (the model fits {key}={_show(wanted)} runs)")
        elif not _same(value, wanted):
            reasons.append(f"{key}={_show(value)}: {EXCLUSION_WHY[key]}")
    return "; ".join(reasons)


def _same(value: Any, wanted: Any) -> bool:
    """Equal as label values: booleans only with booleans, numbers numerically, text ignoring case."""
    if isinstance(wanted, bool) or isinstance(value, (bool, np.bool_)):
        return isinstance(value, (bool, np.bool_)) and bool(value) is wanted
    if isinstance(wanted, (int, float)):
        return isinstance(value, (int, float, np.integer, np.floating)) and float(value) == float(wanted)
    return str(value).lower() == str(wanted).lower()


def _show(value: Any) -> str:
    """A label value as written in a manifest."""
    return str(value).lower() if isinstance(value, (bool, np.bool_)) else str(value)


def is_model_run(runs: pd.DataFrame) -> pd.Series:
    """Local rows of the run kind the model's device term is fitted on (see MODEL_FIT_LABELS)."""
    if runs.empty:
        return pd.Series(False, index=runs.index, dtype=bool)
    ok = runs.apply(lambda r: exclusion_reason(r) == "", axis=1).astype(bool)
    return is_local(runs) & ok


def is_validation(runs: pd.DataFrame) -> pd.Series:
    """Rows labelled as validation runs (the blog's 2 MiB projection checks)."""
    return runs["validation"].fillna(False).astype(bool)


# How each run label reads in a chart's legend (the labels that vary within the chart only).
_KIND_WORDS: dict[str, Any] = {
    "rw": str,
    "iodepth": lambda v: f"queue depth {v:g}" if isinstance(v, (int, float)) else f"queue depth {v}",
    "engine": str,
    "direct": lambda v: "direct" if _same(v, True) else "buffered",
    "numjobs": lambda v: f"{v} jobs",
}


def run_kind_words(rows: pd.DataFrame) -> pd.Series:
    """Each row's run kind in words, naming only the labels that vary between the rows ('' if none).

    A chart draws one series per kind, so a queue-depth-8 or buffered run never joins the line of
    the queue-depth-1 direct writes the model reads.
    """
    varying = [k for k in RUN_KIND if k in rows and rows[k].astype(str).nunique() > 1]
    if not varying:
        return pd.Series("", index=rows.index, dtype=str)
    return rows.apply(lambda r: ", ".join(_KIND_WORDS[k](r[k]) for k in varying), axis=1).astype(str)


def fitted_points(local: pd.DataFrame) -> pd.DataFrame:
    """The rows of the run kind the device fit reads (MODEL_FIT_LABELS): the points its line is drawn over."""
    if local.empty:
        return local
    return local[local.apply(lambda r: exclusion_reason(r) == "", axis=1).astype(bool)]


def throughput_by_bs(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean MiB/s, IOPS and per-op ms per scenario, device, network, R2T, run kind and block size."""
    if runs.empty:
        return pd.DataFrame(columns=[*GROUP_KEYS, "bs_kib", "runs", "mib_per_s", "iops", "op_ms"])
    keyed = _keyed(runs, GROUP_KEYS)
    out = (
        keyed.groupby(list(GROUP_KEYS), sort=True)
        .agg(
            runs=("file", "size"),
            mib_per_s=("mib_per_s", "mean"),
            iops=("iops", "mean"),
            op_ms=("op_ms", "mean"),
        )
        .reset_index()
    )
    out.insert(len(GROUP_KEYS), "bs_kib", out["bs_bytes"] / BYTES_PER_KIB)
    return out


def local_throughput(runs: pd.DataFrame) -> pd.DataFrame:
    """Local (on-device) throughput by device and block size."""
    local = throughput_by_bs(runs[is_local(runs)])
    return local.drop(columns=["network", "max_outstanding_r2t"])


def remote_throughput(runs: pd.DataFrame) -> pd.DataFrame:
    """Remote (iSCSI) runs by block size, beside the local MiB/s of the same device and size.

    Validation runs are included: they are ordinary remote runs (one may double as a point of
    a block-size series), grouped apart by their network and MaxOutstandingR2T labels.
    """
    remote = throughput_by_bs(runs[~is_local(runs)])
    same = ["device", "rw", "iodepth", "direct", "numjobs", "bs_bytes"]  # engines differ by design
    local = local_throughput(runs)
    local = local.groupby(same, sort=True)["mib_per_s"].mean().rename("local_mib_per_s").reset_index()
    out = remote.merge(local, on=same, how="left")
    out["share_of_local_pct"] = out["mib_per_s"] / out["local_mib_per_s"] * 100.0
    return out


# ---- per-device latency fit --------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceFit:
    """OLS of per-op ms on request MiB for one device: ``op_ms = fixed_ms + ms_per_mib * MiB``."""

    device: str
    runs: int
    block_sizes: int
    fixed_ms: float
    ms_per_mib: float
    cov: tuple[tuple[float, float], tuple[float, float]]
    df_resid: float
    r_squared: float
    min_bs_bytes: int
    max_bs_bytes: int

    def _t(self, level: float) -> float:
        from scipy import stats as sps  # here, not at import: scipy.stats alone takes about 0.4 s

        return float(sps.t.ppf(0.5 + level / 2, self.df_resid))

    def coefficient_ci(self, level: float = CI_LEVEL) -> dict[str, tuple[float, float]]:
        """Two-sided t intervals of fixed_ms and ms_per_mib."""
        t = self._t(level)
        se = np.sqrt(np.diag(np.array(self.cov)))
        return {
            "fixed_ms": (self.fixed_ms - t * se[0], self.fixed_ms + t * se[0]),
            "ms_per_mib": (self.ms_per_mib - t * se[1], self.ms_per_mib + t * se[1]),
        }

    @property
    def streaming_mib_per_s(self) -> float:
        """Bandwidth implied by the slope (NaN if the slope is not positive: no bandwidth, never inf)."""
        return MS_PER_S / self.ms_per_mib if self.ms_per_mib > 0 else math.nan

    def streaming_ci(self, level: float = CI_LEVEL) -> tuple[float, float]:
        """Interval of the streaming MiB/s, the slope's interval inverted (inf where it reaches 0).

        NaN where the slope's interval holds no positive value: no bandwidth, never an infinite one.
        """
        lo, hi = self.coefficient_ci(level)["ms_per_mib"]
        if not hi > 0:
            return math.nan, math.nan
        return MS_PER_S / hi, MS_PER_S / lo if lo > 0 else math.inf

    def predict_ms(self, request_bytes: float) -> float:
        """Fitted per-op ms of a request of ``request_bytes``."""
        return self.fixed_ms + self.ms_per_mib * request_bytes / BYTES_PER_MIB

    def predict_ci(self, request_bytes: float, level: float = CI_LEVEL) -> tuple[float, float]:
        """Confidence interval of the fitted mean per-op ms at ``request_bytes``."""
        x = np.array([1.0, request_bytes / BYTES_PER_MIB])
        se = math.sqrt(float(x @ np.array(self.cov) @ x))
        mid, t = self.predict_ms(request_bytes), self._t(level)
        return mid - t * se, mid + t * se


def fit_device(device: str, op_ms: np.ndarray, bs_bytes: np.ndarray) -> DeviceFit:
    """OLS of per-op ms on block size (MiB) for one device; DesignError if not identifiable."""
    sizes = np.unique(bs_bytes)
    if len(op_ms) < MIN_FIT_RUNS or len(sizes) < 2:
        raise DesignError(
            f"device {device}: need at least {MIN_FIT_RUNS} runs over at least 2 "
            f"block sizes to fit fixed ms + size / bandwidth, got {len(op_ms)} runs "
            f"over {len(sizes)} size(s)"
        )
    import statsmodels.api as sm  # here, not at import: the lab's forecasts load this module, never fit

    x = sm.add_constant(np.asarray(bs_bytes, dtype=float) / BYTES_PER_MIB)
    res = sm.OLS(np.asarray(op_ms, dtype=float), x).fit()
    cov = np.asarray(res.cov_params())
    return DeviceFit(
        device=str(device),
        runs=len(op_ms),
        block_sizes=len(sizes),
        fixed_ms=float(res.params[0]),
        ms_per_mib=float(res.params[1]),
        cov=((float(cov[0, 0]), float(cov[0, 1])), (float(cov[1, 0]), float(cov[1, 1]))),
        df_resid=float(res.df_resid),
        r_squared=float(res.rsquared),
        min_bs_bytes=int(sizes.min()),
        max_bs_bytes=int(sizes.max()),
    )


def _keyed(runs: pd.DataFrame, keys: tuple[str, ...]) -> pd.DataFrame:
    """Runs with missing group keys shown as '-' (so groupby keeps them, in their own group)."""
    missing = pd.Series(None, index=runs.index, dtype=object)
    columns = {k: runs.get(k, missing) for k in keys}
    return runs.assign(**{k: c.astype(object).where(c.notna(), "-") for k, c in columns.items()})


def model_groups(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Model-kind local runs per device, keyed ``device`` or ``device (engine)`` (never pooled)."""
    chosen = _keyed(runs[is_model_run(runs)], FIT_KEYS)
    engines = {str(d): int(n) for d, n in chosen.groupby("device")["engine"].nunique().items()}
    out: dict[str, pd.DataFrame] = {}
    for key, group in chosen.groupby(list(FIT_KEYS), sort=True):
        device, engine = str(key[0]), str(key[FIT_KEYS.index("engine")])
        out[device if engines[device] == 1 else f"{device} ({engine})"] = group
    return out


def fit_devices(runs: pd.DataFrame) -> tuple[dict[str, DeviceFit], dict[str, str]]:
    """Fit each device on its model-kind local runs (one fit per device and engine, never pooled).

    Returns (fits, skipped): a fit is keyed by its device, or ``device (engine)`` when one device
    has model-kind runs of several engines; ``skipped`` says why a group has no fit.
    """
    fits: dict[str, DeviceFit] = {}
    skipped: dict[str, str] = {}
    for name, group in model_groups(runs).items():
        device = str(group["device"].iloc[0])
        try:
            fits[name] = fit_device(device, group["op_ms"].to_numpy(), group["bs_bytes"].to_numpy())
        except DesignError as exc:
            skipped[name] = str(exc)
    return fits, skipped


GROUPING_COLUMNS = (
    "place",
    *FIT_KEYS,
    "runs",
    "block_sizes",
    "used_for",
    "excluded_because",
    "files",
)


def grouping_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Every group of fio runs the chapter keeps apart, what it is used for, and why not otherwise."""
    if runs.empty:
        return pd.DataFrame(columns=list(GROUPING_COLUMNS))
    keyed = _keyed(runs.assign(place=np.where(is_local(runs), "local", "remote")), FIT_KEYS)
    model = is_model_run(runs)
    rows = []
    for key, group in keyed.groupby(["place", *FIT_KEYS], sort=True):
        local = key[0] == "local"
        why = exclusion_reason(runs.loc[group.index[0]]) if local else ""
        in_model = local and bool(model.loc[group.index].all())
        rows.append(
            {
                **dict(zip(["place", *FIT_KEYS], key, strict=True)),
                "runs": len(group),
                "block_sizes": int(group["bs_bytes"].nunique()),
                "used_for": "throughput, device fit for the model" if in_model else "throughput table only",
                "excluded_because": why if local else "not on the device itself (remote runs are not fitted)",
                "files": ", ".join(group["file"]),
            }
        )
    return pd.DataFrame(rows, columns=list(GROUPING_COLUMNS))


def fit_table(fits: dict[str, DeviceFit], level: float = CI_LEVEL) -> pd.DataFrame:
    """Coefficient table: fixed ms and streaming MiB/s with their intervals, per device."""
    rows = []
    for fit in fits.values():
        ci = fit.coefficient_ci(level)
        s_lo, s_hi = fit.streaming_ci(level)
        rows.append(
            {
                "device": fit.device,
                "runs": fit.runs,
                "block_sizes": fit.block_sizes,
                "fixed_ms": fit.fixed_ms,
                "fixed_ms_lo": ci["fixed_ms"][0],
                "fixed_ms_hi": ci["fixed_ms"][1],
                "streaming_mib_per_s": fit.streaming_mib_per_s,
                "streaming_mib_per_s_lo": s_lo,
                "streaming_mib_per_s_hi": s_hi,
                "r_squared": fit.r_squared,
                "ci_level": level,
            }
        )
    return pd.DataFrame(rows)


def fit_curves(fits: dict[str, DeviceFit], points: int = 40, level: float = CI_LEVEL) -> pd.DataFrame:
    """Fitted line and its confidence band over each device's measured size range (for charts)."""
    frames = []
    for fit in fits.values():
        sizes = np.linspace(fit.min_bs_bytes, fit.max_bs_bytes, points)
        bands = [fit.predict_ci(s, level) for s in sizes]
        frames.append(
            pd.DataFrame(
                {
                    "device": fit.device,
                    "bs_kib": sizes / BYTES_PER_KIB,
                    "op_ms": [fit.predict_ms(s) for s in sizes],
                    "op_ms_lo": [b[0] for b in bands],
                    "op_ms_hi": [b[1] for b in bands],
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=["device", "bs_kib", "op_ms", "op_ms_lo", "op_ms_hi"])
    return pd.concat(frames, ignore_index=True)


def device_latency_at(
    fits: dict[str, DeviceFit], device: str, request_bytes: float, level: float = CI_LEVEL
) -> dict[str, str | float | bool]:
    """Device ms at a request size from its fit, with the interval; KeyError names the missing fit."""
    if device not in fits:
        raise KeyError(f"no storage fit for device {device!r} (fitted: {sorted(fits)})")
    fit = fits[device]
    lo, hi = fit.predict_ci(request_bytes, level)
    return {
        "device": device,
        "request_bytes": float(request_bytes),
        "device_ms": fit.predict_ms(request_bytes),
        "device_ms_lo": lo,
        "device_ms_hi": hi,
        "extrapolated": not fit.min_bs_bytes <= request_bytes <= fit.max_bs_bytes,
    }


# ---- iostat ------------------------------------------------------------------------------------

IOSTAT_COLUMNS = (
    "file",
    "side",
    *RUN_LABELS,
    "bs_bytes",
    "iodepth",
    "block_device",
    "reports",
    "since_boot_only",
    "active_reports",
    "w_per_s",
    "wkb_per_s",
    "wareq_sz_kb",
    "request_bytes",
    "request_fraction",
    "w_await_ms",
    "util_pct",
    "fio_file",
)


def _interval_rows(df: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
    """Interval reports (the since-boot average dropped), or the since-boot one if it is alone."""
    if df.empty or df["since_boot"].all():
        return df, not df.empty
    return df[~df["since_boot"]], False


def _busiest_device(path: str, devices: pd.DataFrame) -> str | None:
    """The block device that wrote the most kB (the one under test); None if none wrote."""
    if "wkb_per_s" not in devices.columns:
        raise IngestError(path, "iostat has no write throughput column (wkB/s); run iostat -x")
    totals = devices.groupby("device", sort=True)["wkb_per_s"].sum()
    totals = totals[totals > 0]
    return None if totals.empty else str(totals.idxmax())


def _weighted(values: pd.Series, weights: pd.Series) -> float:
    """Mean of ``values`` weighted by ``weights`` (NaN when the weights sum to zero)."""
    total = float(weights.sum())
    return float((values * weights).sum() / total) if total > 0 else math.nan


def matching_fio(ds: Measurements, f: RawFile) -> RawFile | None:
    """The fio file whose labels agree with this iostat file's on every key both carry.

    The labels choose first (a ``run`` label is an override); when several fio files agree, the
    one whose run the iostat reports overlap in time (:mod:`iscsi_report.core.pairing`) is chosen.
    """

    def agrees(g: RawFile) -> bool:
        return all(g.labels[k] == v for k, v in f.labels.items() if k in g.labels)

    found = [g for g in ds.select("fio") if agrees(g)]
    if len(found) > 1:
        by_clock = _clock_partner(ds, f, found)
        if by_clock is not None:
            return by_clock
        raise IngestError(
            ds.root / "manifest.yaml",
            f"iostat file {f.rel} matches several fio "
            f"runs ({', '.join(g.rel for g in found)}) and the files' clocks (iostat -t, fio's time) "
            "do not settle which; add a distinguishing 'run' label",
        )
    return found[0] if found else None


def _clock_partner(ds: Measurements, f: RawFile, candidates: list[RawFile]) -> RawFile | None:
    """The candidate fio run this iostat file's reports overlap in time; None if the clocks cannot tell."""
    result = ds.iostat(f)
    span = pairing.iostat_span(result.devices, result.cpu)
    if span is None:
        return None
    chosen = pairing.partner(span, {g.rel: pairing.fio_span(ds.text(g), g.path) for g in candidates})
    return next((g for g in candidates if g.rel == chosen), None)


def _iostat_bs(m: Measurements, f: RawFile, partner: RawFile | None) -> float | None:
    """Block size of an iostat file: its own label, else that of the fio run beside it."""
    if f.labels.get("bs_bytes") is not None:
        return float(f.labels["bs_bytes"])
    return float(run_row(m, partner)["bs_bytes"]) if partner else None


def _iostat_iodepth(m: Measurements, f: RawFile, partner: RawFile | None) -> Any:
    """Queue depth of an iostat file: its own label, else that of the fio run beside it (None if neither)."""
    if f.labels.get("iodepth") is not None:
        return f.labels["iodepth"]
    return run_row(m, partner)["iodepth"] if partner else None


def iostat_row(ds: Measurements, f: RawFile) -> dict[str, Any]:
    """Device-side view of one iostat file: request size, writes/s, await of the busiest device."""
    result = ds.iostat(f)
    rows, since_boot_only = _interval_rows(result.devices)
    partner = matching_fio(ds, f)
    bs = _iostat_bs(ds, f, partner)
    base = {
        "file": f.rel,
        "side": f.side,
        **{k: f.labels.get(k) for k in RUN_LABELS},
        "bs_bytes": float(bs) if bs is not None else math.nan,
        "iodepth": _iostat_iodepth(ds, f, partner),
        "reports": int(rows["report"].nunique()),
        "since_boot_only": since_boot_only,
        "fio_file": partner.rel if partner else None,
    }
    name = _busiest_device(str(f.path), rows) if not rows.empty else None
    if name is None:
        return {**base, "block_device": None, "active_reports": 0}
    dev = rows[rows["device"] == name]
    active = dev[dev["w_per_s"] > 0]
    req_kb = (
        _weighted(active["wareq_sz_kb"], active["w_per_s"])
        if "wareq_sz_kb" in active
        else float(active["wkb_per_s"].sum() / active["w_per_s"].sum())
    )
    return {
        **base,
        "block_device": name,
        "active_reports": len(active),
        "w_per_s": float(active["w_per_s"].mean()),
        "wkb_per_s": float(active["wkb_per_s"].mean()),
        "wareq_sz_kb": req_kb,
        "request_bytes": req_kb * BYTES_PER_KIB,
        "request_fraction": req_kb * BYTES_PER_KIB / float(bs) if bs else math.nan,
        "w_await_ms": _weighted(active.get("w_await_ms", pd.Series(np.nan, active.index)), active["w_per_s"]),
        "util_pct": float(active["util_pct"].mean()) if "util_pct" in active else math.nan,
    }


def iostat_requests(ds: Measurements, **labels: Any) -> pd.DataFrame:
    """One row per iostat file: the busiest device's write request size against the fio block size.

    The request size is iostat's wareq-sz averaged over the active reports weighted by w/s (or
    kB written over writes when the column is absent), so idle seconds do not bias it.
    """
    rows = [iostat_row(ds, f) for f in ds.select("iostat", **labels)]
    return pd.DataFrame(rows, columns=list(IOSTAT_COLUMNS))


CPU_COLUMNS = (
    "file",
    "side",
    *RUN_LABELS,
    "bs_bytes",
    "reports",
    "cpu_count",
    "user_pct",
    "nice_pct",
    "system_pct",
    "iowait_pct",
    "steal_pct",
    "idle_pct",
    "busy_pct",
    "fio_file",
    "fio_iops",
)


def iostat_cpu(ds: Measurements, **labels: Any) -> pd.DataFrame:
    """avg-cpu means of every iostat file that has them; busy = user + nice + system (per cent).

    iowait and steal are not counted as busy: the CPU was idle waiting for I/O, or running
    another guest. The matching fio run's IOPS is joined so CPU ms per operation can follow.
    """
    rows = []
    for f in ds.select("iostat", **labels):
        result = ds.iostat(f)
        cpu, _ = _interval_rows(result.cpu)
        if cpu.empty:
            continue
        partner = matching_fio(ds, f)
        means = {f"{c}_pct": float(cpu[f"{c}_pct"].mean()) for c in iostat.CPU_COLUMNS}
        rows.append(
            {
                "file": f.rel,
                "side": f.side,
                **{k: f.labels.get(k) for k in RUN_LABELS},
                "bs_bytes": _iostat_bs(ds, f, partner),
                "reports": int(cpu["report"].nunique()),
                "cpu_count": result.cpu_count,
                **means,
                "busy_pct": means["user_pct"] + means["nice_pct"] + means["system_pct"],
                "fio_file": partner.rel if partner else None,
                "fio_iops": run_row(ds, partner)["iops"] if partner else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=list(CPU_COLUMNS))


def cpu_ms_per_op(cpu: pd.DataFrame, cores: int = 1) -> pd.DataFrame:
    """CPU ms per operation = busy fraction x cores / IOPS x 1000, and per MiB written."""
    out = cpu[cpu["fio_iops"].notna()].copy()
    out["cpu_ms_per_op"] = out["busy_pct"] / 100.0 * cores / out["fio_iops"] * MS_PER_S
    out["cpu_ms_per_mib"] = out["cpu_ms_per_op"] / (out["bs_bytes"].astype(float) / BYTES_PER_MIB)
    out["cores_counted"] = cores
    return out


def _zero_in_interval(fit: pd.DataFrame, column: str) -> int:
    """How many devices' interval of ``column`` holds zero (a coefficient the data cannot tell from 0)."""
    if fit.empty or f"{column}_lo" not in fit:
        return 0
    return int(((fit[f"{column}_lo"] <= 0.0) & (fit[f"{column}_hi"] >= 0.0)).sum())


def headline(local: pd.DataFrame, fit: pd.DataFrame, requests: pd.DataFrame) -> dict[str, float]:
    """Numbers the chapter's prose quotes (NaN when the dataset lacks that part)."""

    def stat(df: pd.DataFrame, col: str, how: str) -> float:
        values = df[col].dropna() if col in df else pd.Series(dtype=float)
        return float(getattr(values, how)()) if len(values) else math.nan

    largest = requests[requests["bs_bytes"] == requests["bs_bytes"].max()] if len(requests) else requests
    return {
        "local_devices": float(local["device"].nunique()) if len(local) else 0.0,
        "local_block_sizes": float(local["bs_bytes"].nunique()) if len(local) else 0.0,
        "local_min_mib_per_s": stat(local, "mib_per_s", "min"),
        "local_max_mib_per_s": stat(local, "mib_per_s", "max"),
        "fit_min_fixed_ms": stat(fit, "fixed_ms", "min"),
        "fit_max_fixed_ms": stat(fit, "fixed_ms", "max"),
        "fit_min_fixed_lo_ms": stat(fit, "fixed_ms_lo", "min"),
        "fit_max_fixed_hi_ms": stat(fit, "fixed_ms_hi", "max"),
        "fit_fixed_zero_devices": float(_zero_in_interval(fit, "fixed_ms")),
        "fit_devices": float(len(fit)),
        "fit_min_streaming_mib_per_s": stat(fit, "streaming_mib_per_s", "min"),
        "fit_max_streaming_mib_per_s": stat(fit, "streaming_mib_per_s", "max"),
        "fit_min_r_squared": stat(fit, "r_squared", "min"),
        "iostat_files": float(len(requests)),
        "largest_bs_kib": stat(largest, "bs_bytes", "max") / BYTES_PER_KIB,
        "largest_bs_min_request_kib": stat(largest, "wareq_sz_kb", "min"),
        "largest_bs_max_request_kib": stat(largest, "wareq_sz_kb", "max"),
    }


# ---- latency percentiles from fio json+ bins ---------------------------------------------------

# Percentile name -> level (per cent); fio prints p50, p99 and p99.9 too (core.ingest.fio.PERCENTILES).
PERCENTILE_LEVELS = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p99_9": 99.9}
FIO_PERCENTILE_COLUMNS = {"p50": "clat_p50_ms", "p99": "clat_p99_ms", "p99_9": "clat_p999_ms"}
MAX_CDF_POINTS = 120  # per run: the CDF chart thins a histogram to this many points


def bin_percentiles(bins: pd.DataFrame, levels: dict[str, float] = PERCENTILE_LEVELS) -> dict[str, float]:
    """Completion-latency percentiles (ms) from json+ bins, by fio's own rule.

    fio reports, for level p, the value of the first bin at which the running count of
    completions reaches p/100 of all of them; the json+ keys are those bin values (ns).
    """
    counts = bins.groupby("lat_ns", sort=True)["count"].sum()
    total = int(counts.sum())
    if total == 0:
        return dict.fromkeys(levels, math.nan)
    cumulative = counts.cumsum().to_numpy()
    values = counts.index.to_numpy()
    return {
        name: float(values[int(np.searchsorted(cumulative, level / 100.0 * total, side="left"))]) / NS_PER_MS
        for name, level in levels.items()
    }


def _write_bins(f: RawFile, result: fio.FioResult) -> tuple[pd.Series, pd.DataFrame]:
    """The write job of a fio file and its json+ bins (empty without json+)."""
    job = _write_row(f, result.jobs)
    h = result.histogram
    return job, h[(h["job"] == job["job"]) & (h["direction"] == "write")] if len(h) else h


PERCENTILE_COLUMNS = (
    "file",
    "side",
    "scenario",
    "device",
    "bs_bytes",
    "iodepth",
    "completions",
    *(f"bins_{p}_ms" for p in PERCENTILE_LEVELS),
    *(f"fio_{p}_ms" for p in FIO_PERCENTILE_COLUMNS),
    "source",
)


def latency_percentiles(ds: Measurements) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per fio run: p50/p90/p99/p99.9 from json+ bins beside fio's own percentiles; and a thinned CDF.

    Runs without bins keep NaN there and ``source`` says whether fio's own percentiles are all
    there is. The CDF frame (file, lat_ms, cumulative_pct) is for charts, at most
    :data:`MAX_CDF_POINTS` points per run.
    """
    rows, cdfs = [], []
    for f in ds.select("fio"):
        result = ds.fio(f)
        job, bins = _write_bins(f, result)
        fio_own = {f"fio_{p}_ms": float(job[c]) for p, c in FIO_PERCENTILE_COLUMNS.items()}
        from_bins = {f"bins_{p}_ms": v for p, v in bin_percentiles(bins).items()} if len(bins) else {}
        kind = run_kind(ds, f, result)
        rows.append(
            {
                "file": f.rel,
                "side": f.side,
                "scenario": f.labels.get("scenario"),
                "device": f.labels.get("device"),
                "bs_bytes": _bs_bytes(f, job["bs_bytes"]),
                "iodepth": kind.get("iodepth"),
                "completions": int(bins["count"].sum()) if len(bins) else None,
                **from_bins,
                **fio_own,
                "source": _percentile_source(bool(len(bins)), fio_own),
            }
        )
        if len(bins):
            cdfs.append(_thinned_cdf(bins).assign(file=f.rel, device=f.labels.get("device")))
    table = pd.DataFrame(rows, columns=list(PERCENTILE_COLUMNS))
    cdf_cols = ["file", "device", "lat_ms", "cumulative_pct"]
    return table, (pd.concat(cdfs, ignore_index=True)[cdf_cols] if cdfs else pd.DataFrame(columns=cdf_cols))


def _percentile_source(has_bins: bool, fio_own: dict[str, float]) -> str:
    """Which percentiles a run has: from bins, fio's printed ones, both or neither."""
    printed = any(not math.isnan(v) for v in fio_own.values())
    if has_bins:
        return "json+ bins and fio's percentiles" if printed else "json+ bins"
    return "fio's percentiles only (no json+ bins)" if printed else "none (no percentiles in the file)"


def _thinned_cdf(bins: pd.DataFrame, points: int = MAX_CDF_POINTS) -> pd.DataFrame:
    """Cumulative share of completions at each bin value, thinned to about ``points`` rows."""
    counts = bins.groupby("lat_ns", sort=True)["count"].sum()
    cumulative = counts.cumsum() / counts.sum() * 100.0
    frame = pd.DataFrame(
        {"lat_ms": counts.index.to_numpy() / NS_PER_MS, "cumulative_pct": cumulative.to_numpy()}
    )
    if len(frame) <= points:
        return frame
    keep = np.unique(np.searchsorted(frame["cumulative_pct"].to_numpy(), np.linspace(0, 100, points)))
    keep = np.union1d(keep[keep < len(frame)], [0, len(frame) - 1])  # the fastest and slowest bins stay
    return frame.iloc[keep].reset_index(drop=True)


# ---- iostat over time --------------------------------------------------------------------------

MAX_TIME_POINTS = 300  # per chart: a file's reports are averaged in consecutive groups to fit
OVER_TIME_COLUMNS = (
    "file",
    "scenario",
    "device",
    "bs_kib",
    "block_device",
    "elapsed_s",
    "reports_averaged",
    "w_mib_per_s",
    "w_await_ms",
    "util_pct",
)


def _elapsed_s(dev: pd.DataFrame) -> np.ndarray:
    """Seconds since the file's first interval report (iostat -t), else the report count from 0."""
    if "timestamp" in dev and dev["timestamp"].notna().all():
        return np.asarray((dev["timestamp"] - dev["timestamp"].iloc[0]).dt.total_seconds(), dtype=float)
    return np.asarray(dev["report"] - dev["report"].iloc[0], dtype=float)


def _over_time_rows(ds: Measurements, f: RawFile, per_file: int) -> pd.DataFrame:
    """One iostat file's busiest device per interval, averaged in groups to at most ``per_file`` rows."""
    result = ds.iostat(f)
    rows, _ = _interval_rows(result.devices)
    name = _busiest_device(str(f.path), rows) if not rows.empty else None
    if name is None:
        return pd.DataFrame(columns=list(OVER_TIME_COLUMNS))
    dev = rows[rows["device"] == name].sort_values("report").reset_index(drop=True)
    frame = pd.DataFrame(
        {
            "elapsed_s": _elapsed_s(dev),
            "w_mib_per_s": dev["wkb_per_s"].to_numpy(float) * BYTES_PER_KIB / BYTES_PER_MIB,
            "w_await_ms": dev.get("w_await_ms", pd.Series(np.nan, index=dev.index)).to_numpy(float),
            "util_pct": dev.get("util_pct", pd.Series(np.nan, index=dev.index)).to_numpy(float),
        }
    )
    group = np.arange(len(frame)) * per_file // max(len(frame), 1)
    out = frame.groupby(group).mean().assign(reports_averaged=frame.groupby(group).size().to_numpy())
    bs = _iostat_bs(ds, f, matching_fio(ds, f))
    return out.assign(
        file=f.rel,
        scenario=f.labels.get("scenario"),
        device=f.labels.get("device"),
        bs_kib=bs / BYTES_PER_KIB if bs else math.nan,
        block_device=name,
    )[list(OVER_TIME_COLUMNS)]


def iostat_over_time(ds: Measurements, max_points: int = MAX_TIME_POINTS) -> pd.DataFrame:
    """Write MiB/s, w_await and %util of each iostat file's busiest device per interval report.

    Reports are averaged in consecutive groups so the whole dataset stays within ``max_points``
    rows (``reports_averaged`` says how many each row holds); the since-boot report is dropped.
    """
    files = ds.select("iostat")
    if not files:
        return pd.DataFrame(columns=list(OVER_TIME_COLUMNS))
    per_file = max(2, max_points // len(files))
    frames = [_over_time_rows(ds, f, per_file) for f in files]
    return pd.concat(frames, ignore_index=True)


def percentile_points(table: pd.DataFrame) -> pd.DataFrame:
    """Local runs' percentiles, tidy (device, bs_kib, percentile, ms, source): from bins, else fio's."""
    local = table[is_local(table)] if len(table) else table
    kinds = run_kind_words(local).tolist() if len(local) else []
    rows = []
    for kind, (_, r) in zip(kinds, local.iterrows(), strict=True):
        at = (r["device"], r["bs_bytes"] / BYTES_PER_KIB)
        for name in PERCENTILE_LEVELS:
            from_bins = r.get(f"bins_{name}_ms")
            if from_bins is not None and not pd.isna(from_bins):
                rows.append((*at, name, float(from_bins), "json+ bins", kind))
            elif name in FIO_PERCENTILE_COLUMNS and not pd.isna(r[f"fio_{name}_ms"]):
                rows.append((*at, name, float(r[f"fio_{name}_ms"]), "fio", kind))
    return pd.DataFrame(rows, columns=["device", "bs_kib", "percentile", "ms", "source", "kind"])


def percentile_summary(table: pd.DataFrame, tolerance_ms: float = 1e-9) -> dict[str, float]:
    """Counts the page quotes: runs, runs with bins, runs with both, runs where both agree."""
    both = table.dropna(subset=[f"bins_{p}_ms" for p in FIO_PERCENTILE_COLUMNS]) if len(table) else table
    both = both.dropna(subset=list(f"fio_{p}_ms" for p in FIO_PERCENTILE_COLUMNS)) if len(both) else both
    agree = [
        all(abs(r[f"bins_{p}_ms"] - r[f"fio_{p}_ms"]) <= tolerance_ms for p in FIO_PERCENTILE_COLUMNS)
        for _, r in both.iterrows()
    ]
    return {
        "percentile_runs": float(len(table)),
        "percentile_runs_bins": float(table["completions"].notna().sum()) if len(table) else 0.0,
        "percentile_runs_both": float(len(both)),
        "percentile_runs_agree": float(sum(agree)),
    }
