"""The real iSCSI lab (``data/raw/lab-iscsi-2026``): tidy frames, the latency model's terms and its fit.

Loading: one row per fio run (per-write latency and the configuration labels), the network
measured at each (delay, rate) point (ping RTT, iperf3 rate), and the captured writes reduced by
:mod:`iscsi_report.core.ingest.tshark` (R2Ts per write, most outstanding, PDU timeline). With a
parse cache folder (:mod:`iscsi_report.core.keep`) the assembled frames are kept too, keyed by
every file's checked sha256 and labels and by the code that assembles them; every raw file is
still read and checked against its manifest on every load.

The primary model (fixed before any held-out error was computed, see the validation chapter)::

    latency_ms = b_trip * one_way_ms_paid + b_wire * wire_ms + b_round * exposed_rounds + b_fixed

where ``one_way_ms_paid`` is (one-way trips the write pays) x one-way delay, ``wire_ms`` the
write's bytes with PDU headers at the iperf3 rate and ``exposed_rounds`` the R2T rounds the
latency pays in full, all three from :func:`iscsi_report.core.model.write_latency` for the
configuration (sliding R2T pacing with the window the patched target enforces). The measured
one-way delay is ping's median RTT / 2 at that point; the link rate is iperf3's. Coefficients
come from OLS (statsmodels) with HC3 intervals, on training rows only. The held-out folds and the
prospective tests of the validation chapter are in :mod:`iscsi_report.analyses.lab_validation`.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.analyses import device_term, storage
from iscsi_report.core import dataset as datasets
from iscsi_report.core import forecast, keep, model
from iscsi_report.core.digest import sha256_bytes
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
RAM_DEVICE = "tgt-rdwr-dev-shm"  # the LUN every sweep before the device sweep used: a file in RAM
PRIMARY = "primary"
WITH_PDU = "primary + per-PDU"
VARIANTS: dict[str, list[str]] = {
    PRIMARY: ["one_way_ms_paid", "wire_ms", "exposed_rounds"],
    WITH_PDU: ["one_way_ms_paid", "wire_ms", "exposed_rounds", "data_pdus"],
}
TRAIN_DELAYS_MS = (0.0, 1.0)
CI_LEVEL = 0.95
# The tools whose files :func:`load` reads (and checks), and the kept assembly's cache kind.
LOADED_TOOLS = ("fio", "ping", "iperf3", "tshark")
ASSEMBLED_KIND = "lab-assembled"
# Core code the assembled frames depend on besides this module (parsers, the measurements layer,
# the manifest's labels): a change to any of them is a new key.
ASSEMBLY_CORE_CODE = ("ingest", "measurements.py", "dataset.py")


# ---- loading -----------------------------------------------------------------------------------


class Captures(Mapping[str, tshark.TsharkResult]):
    """Each capture file's parse by rel path, parsed (or loaded from the parse cache) when first asked.

    A load served from the kept assembly parses no capture; the views that need the PDUs ask.
    """

    def __init__(self, ds: Measurements) -> None:
        self._ds = ds
        self._files = {f.rel: f for f in ds.select("tshark")}

    def __getitem__(self, rel: str) -> tshark.TsharkResult:
        return self._ds.tshark(self._files[rel])

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def timeline(self, rel: str) -> pd.DataFrame:
        """The capture's per-command events, kept like a parse (computed once per bytes and code)."""
        events: pd.DataFrame = self._ds.tshark_timeline(self._files[rel])
        return events

    def writes(self, rel: str) -> pd.DataFrame:
        """The capture's complete writes, kept like a parse."""
        done: pd.DataFrame = self._ds.tshark_writes(self._files[rel])
        return done


@dataclass
class LabData:
    """The lab dataset as tidy frames."""

    dataset: Measurements
    runs: pd.DataFrame  # one row per fio run
    networks: pd.DataFrame  # one row per (one_way_delay_ms, link_mbps) point
    captures: pd.DataFrame  # one row per captured complete write
    capture_files: Captures  # each capture's parse, timeline and writes, kept like a parse

    @cached_property
    def path(self) -> pd.DataFrame:
        """The path check (:func:`path_check`), computed once: several chapter sections ask."""
        return _path_check(self)


def fio_row(m: Measurements, f: datasets.RawFile) -> dict[str, Any]:
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
    """One row per iSCSI fio file: its labels, fio's latencies and ``latency_ms`` (the per-write latency).

    fio on the device itself (side ``local``) is the device's measurement, not an iSCSI run: it is
    read by :func:`devices`. A run made before the lab had several devices is on the RAM-backed LUN.
    """
    rows = [fio_row(ds, f) for f in ds.select("fio") if f.side != storage.LOCAL_SIDE]
    if not rows:
        raise IngestError(ds.root / datasets.MANIFEST, "no fio file in the manifest")
    out = pd.DataFrame(rows)
    out["device"] = out["device"].fillna(RAM_DEVICE) if "device" in out else RAM_DEVICE
    return out


@functools.lru_cache(maxsize=16)
def devices(ds: Measurements) -> dict[str, forecast.TargetDevice]:
    """Each device the lab's fio measured locally (side ``local``), as the forecasting engine takes it.

    The device term of :mod:`device_term` (a sane fit of per-op time on size, else the measured
    sizes; never faster than local fio), the ceiling local fio's throughput. The RAM-backed LUN of
    the earlier sweeps has no local run and is not here: its device time is taken as zero.
    """
    local = [f for f in ds.select("fio") if f.side == storage.LOCAL_SIDE]
    if not local:
        return {}
    terms, _ = device_term.device_terms(pd.DataFrame([storage.run_row(ds, f) for f in local]))
    return {
        name: forecast.TargetDevice(
            name,
            term.write_ms,
            term.bytes_per_s,
            forecast.Source(
                "measured",
                f"local fio of {name}, direct writes at queue depth 1: "
                + ", ".join(sorted(str(f.rel) for f in local if f.labels.get("device") == term.device)),
            ),
        )
        for name, term in terms.items()
    }


def link_rate_run(f: datasets.RawFile) -> bool:
    """An iperf3 file that measures the link's rate: forward, default messages (not -R, not -l)."""
    return not f.labels.get("reverse", False) and not f.labels.get("message_bytes")


def networks(ds: Measurements) -> pd.DataFrame:
    """Per (delay, rate) point: ping RTT (median, mean), measured one-way delay, iperf3 rate."""
    rows: dict[tuple[float, float], dict[str, Any]] = {}
    for f in ds.select("ping"):
        key = (float(f.labels["one_way_delay_ms"]), float(f.labels.get("link_mbps", 0.0)))
        rtt = ds.ping(f).rtt_ms
        rows.setdefault(key, {})["ping_rtt_p50_ms"] = float(np.median(rtt))
        rows[key]["ping_rtt_mean_ms"] = float(np.mean(rtt))
        rows[key]["ping_file"] = f.rel
    for f in filter(link_rate_run, ds.select("iperf3")):
        key = (float(f.labels["one_way_delay_ms"]), float(f.labels.get("link_mbps", 0.0)))
        bps = iperf3.summary(ds.iperf3(f))["received_bps"]
        rows.setdefault(key, {})["iperf3_bps"] = bps
        rows[key]["iperf3_file"] = f.rel
    out = pd.DataFrame([{"one_way_delay_ms": d, "link_mbps": r, **v} for (d, r), v in sorted(rows.items())])
    out["one_way_ms"] = out["ping_rtt_p50_ms"] / 2.0
    return out


def captures(ds: Measurements) -> pd.DataFrame:
    """One row per complete captured write: the capture's labels, R2Ts, most outstanding, latency."""
    frames: list[pd.DataFrame] = []
    for f in ds.select("tshark"):
        w: pd.DataFrame = ds.tshark_writes(f)
        frames.append(w.assign(file=f.rel, **{k: f.labels[k] for k in CONFIG_KEYS}))
    if not frames:
        return pd.DataFrame(columns=[*tshark.WRITE_COLUMNS, "file", *CONFIG_KEYS])
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class Assembled:
    """The frames :func:`load` assembles from the parses: what the kept assembly holds."""

    runs: pd.DataFrame
    networks: pd.DataFrame
    captures: pd.DataFrame


def assemble(ds: Measurements) -> Assembled:
    """The frames of a dataset, from its parses (each file checked and parsed through ``ds``)."""
    return Assembled(fio_runs(ds), networks(ds), captures(ds))


@functools.cache
def assembly_code() -> str:
    """Digest of the code behind :func:`assemble` (this module, the parsers, pandas and numpy)."""
    parts = [keep.code_of(p) for p in ASSEMBLY_CORE_CODE]
    parts += [sha256_bytes(Path(__file__).read_bytes()), pd.__version__, np.__version__]
    return sha256_bytes("\n".join(parts).encode())[:16]


def checked_inputs(ds: Measurements) -> str:
    """Read and check every file :func:`load` uses (a changed byte fails); a key over them all.

    The key covers each file's path, tool, checked sha256 and labels: everything of the
    manifest the frames are built from.
    """
    entries = []
    for f in ds.files:
        if f.tool in LOADED_TOOLS:
            ds.text(f)  # a recorded read, checked against the manifest's sha256
            entries.append([f.rel, f.tool, f.sha256, f.labels])
    return sha256_bytes(json.dumps(entries, sort_keys=True, default=repr).encode())


def load(raw_dir: str | Path) -> LabData:
    """Read the whole lab dataset through the measurements layer: every file checked against its sha256.

    The frames come from the kept assembly when one was kept for the same checked inputs by the
    same code; otherwise they are assembled from the parses and kept, by one process at a time
    (chapters executed side by side wait for one assembly instead of each parsing the sweep).
    """
    ds = open_dataset(raw_dir)
    stored = keep.path_for(ASSEMBLED_KIND, assembly_code(), checked_inputs(ds))
    frames = keep.once(stored, lambda: assemble(ds), lambda kept: isinstance(kept, Assembled))
    return LabData(ds, frames.runs, frames.networks, frames.captures, Captures(ds))


# ---- the model for one configuration ------------------------------------------------------------


NEGOTIATED_KEYS = (
    "FirstBurstLength",
    "MaxBurstLength",
    "ImmediateData",
    "InitialR2T",
    "MaxRecvDataSegmentLength",
)


def iscsi_params(ds: Measurements, row: pd.Series | dict[str, Any]) -> model.IscsiParams:
    """Negotiated keys of a run, with the target's forced window as the window on the wire."""
    keys = ds.iscsi_parameters.get(str(row["iscsi_parameters"]))
    if keys is None:
        raise IngestError(
            ds.root / datasets.MANIFEST, f"iscsi_parameters has no set {row['iscsi_parameters']!r}"
        )
    missing = [k for k in NEGOTIATED_KEYS if k not in keys]
    if missing:
        raise IngestError(
            ds.root / datasets.MANIFEST,
            f"iscsi_parameters.{row['iscsi_parameters']} has no {', '.join(missing)}: expected the "
            "keys the login negotiated (this sweep captured no login)",
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


def coefficient_table(res: Any) -> pd.DataFrame:
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
    return coefficient_table(fit_ols(train, VARIANTS[variant]))


def per_configuration(rows: pd.DataFrame, predicted: np.ndarray) -> pd.DataFrame:
    """Per configuration: measured per-write latency (median over replicates) and the prediction."""
    t = rows[CONFIG_KEYS].assign(latency_ms=rows["latency_ms"].to_numpy(), predicted_ms=predicted)
    g = t.groupby(CONFIG_KEYS, as_index=False).agg(
        measured_ms=("latency_ms", "median"),
        predicted_ms=("predicted_ms", "mean"),
        n_runs=("latency_ms", "size"),
    )
    return g


# ---- views for the chapters --------------------------------------------------------------------


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
    gaps = _first_r2t_gaps_ms({rel: data.capture_files.timeline(rel) for rel in data.capture_files})
    if gaps.empty:
        return pd.DataFrame()
    caps = data.captures[["file", *NETWORK_KEYS]].drop_duplicates("file")
    t = gaps.merge(caps, on="file", how="inner", validate="many_to_one")
    g = t.groupby(NETWORK_KEYS, as_index=False).agg(
        command_to_first_r2t_ms=("command_to_first_r2t_ms", "median"), writes=("file", "size")
    )
    g = g.merge(data.networks[[*NETWORK_KEYS, "one_way_ms"]], on=NETWORK_KEYS, how="left")
    g["ping_rtt_ms"] = 2.0 * g["one_way_ms"]
    g["excess_ms"] = g["command_to_first_r2t_ms"] - g["ping_rtt_ms"]
    return g.drop(columns=["one_way_ms"])


def _first_r2t_gaps_ms(timelines: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per command (file, stream, itt) with both: its first R2T's time less its own (ms), in that key order.

    One groupby over every capture's events instead of a loop over commands (issue 28: it cost seconds).
    """
    rels = list(timelines)
    frames = [ev[["stream", "itt", "event", "time_s"]] for ev in timelines.values()]
    if not frames:
        return pd.DataFrame(columns=["file", "command_to_first_r2t_ms"])
    events = pd.concat(frames, ignore_index=True)
    events["file_i"] = np.repeat(np.arange(len(frames)), [len(f) for f in frames])
    keys = ["file_i", "stream", "itt"]

    def first_s(kind: str) -> pd.Series:
        return events[events["event"] == kind].groupby(keys)["time_s"].min().astype("float64")

    both = pd.concat(
        {"command": first_s("command"), "r2t": first_s("r2t")}, axis=1, join="inner"
    ).sort_index()
    gap_ms = (both["r2t"].to_numpy() - both["command"].to_numpy()) * MS_PER_S
    files = [rels[i] for i in both.index.get_level_values("file_i")]
    return pd.DataFrame({"file": files, "command_to_first_r2t_ms": gap_ms})


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
    done = data.capture_files.writes(rel)
    if done.empty:
        raise IngestError(rel, "no complete write in this capture")
    w = done.iloc[which]
    ev = data.capture_files.timeline(rel)
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
