"""Model chapter helpers: a dataset's negotiated iSCSI keys and measurements turned into model inputs.

The manifest's ``iscsi_parameters`` holds named sets of negotiated keys (values as iscsiadm or
targetcli print them: ``Yes``/``No``, integers). :func:`parameter_sets` reads them into
:class:`~iscsi_report.core.model.IscsiParams`; a dataset without any falls back to the RFC 7143
defaults as a what-if. :func:`configurations` adds the serial (MaxOutstandingR2T = 1) and
all-at-once (MaxOutstandingR2T >= bursts) variants the blog compared (Guerri 2023) when the dataset
lacks them. The measured inputs (one-way latency, transmission time, device and CPU ms) come
from ping, iperf3, the storage fit and iostat.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.analyses import network, storage
from iscsi_report.analyses.device_term import DeviceTerm
from iscsi_report.core import labels as label_contract
from iscsi_report.core import model, prose
from iscsi_report.core.errors import IngestError, ReportError
from iscsi_report.core.ingest import iperf3
from iscsi_report.core.measurements import Measurements
from iscsi_report.core.model import IscsiParams, Network
from iscsi_report.core.units import BITS_PER_BYTE, BITS_PER_MBIT, BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S

RFC7143_DEFAULTS_NAME = "RFC 7143 defaults"
# RFC 7143 section 13 defaults of the keys that shape a write's exchange.
RFC7143_DEFAULTS: dict[str, Any] = {
    "InitialR2T": "Yes",
    "ImmediateData": "Yes",
    "FirstBurstLength": model.DEFAULT_FIRST_BURST_BYTES,
    "MaxBurstLength": model.DEFAULT_MAX_BURST_BYTES,
    "MaxOutstandingR2T": model.DEFAULT_MAX_OUTSTANDING_R2T,
    "MaxRecvDataSegmentLength": 8192,
}
BOOLEAN_KEYS = {"InitialR2T": "initial_r2t", "ImmediateData": "immediate_data"}
INTEGER_KEYS = {
    "FirstBurstLength": "first_burst_bytes",
    "MaxBurstLength": "max_burst_bytes",
    "MaxOutstandingR2T": "max_outstanding_r2t",
    "MaxRecvDataSegmentLength": "max_recv_data_segment_bytes",
}
YES_NO = {"yes": True, "no": False}
SERIAL = "serial"
ALL_AT_ONCE = "all at once"
WINDOWED = "windowed"
NO_R2T = "no R2T"
DEFAULT_PING_INTERVAL_S = 0.002  # the blog's choice: close to the gap between iSCSI PDUs
# The closest ping interval stands for the model's only within this factor (either way).
PING_INTERVAL_FACTOR = 2.0
MODEL_IODEPTH = label_contract.MODEL_FIT_LABELS["iodepth"]


# ---- negotiated parameters ---------------------------------------------------------------------


def _boolean(where: Path, jp: str, value: Any) -> bool:
    """``Yes``/``No`` (any case) or a YAML boolean."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in YES_NO:
        return YES_NO[value.strip().lower()]
    raise IngestError(where, f"expected Yes or No, got {value!r}", json_path=jp)


def _integer(where: Path, jp: str, value: Any) -> int:
    """A whole number, as an integer or a string of digits."""
    if isinstance(value, bool):
        raise IngestError(where, f"expected an integer, got {value!r}", json_path=jp)
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise IngestError(where, f"expected an integer, got {value!r}", json_path=jp)


def parse_parameter_set(
    name: str, values: Mapping[str, Any], manifest: Path
) -> tuple[IscsiParams, list[dict[str, Any]]]:
    """One named set of keys -> IscsiParams, and a (key, value, source) row per key the model uses.

    Keys the set does not give take their RFC 7143 default (source says so); other keys
    (digests, AuthMethod, ...) are ignored by the model. Bad values raise naming the key.
    """
    if not isinstance(values, Mapping):
        raise IngestError(manifest, "expected a mapping of iSCSI keys", json_path=f"iscsi_parameters.{name}")
    kwargs: dict[str, Any] = {}
    rows = []
    for key, default in RFC7143_DEFAULTS.items():
        given = key in values
        raw = values[key] if given else default
        jp = f"iscsi_parameters.{name}.{key}"
        parsed = _boolean(manifest, jp, raw) if key in BOOLEAN_KEYS else _integer(manifest, jp, raw)
        kwargs[(BOOLEAN_KEYS | INTEGER_KEYS)[key]] = parsed
        rows.append(
            {
                "parameter_set": name,
                "key": key,
                "value": str(raw),
                "source": "manifest" if given else RFC7143_DEFAULTS_NAME,
            }
        )
    try:
        params = IscsiParams(**kwargs)
    except model.ModelInputError as exc:
        raise IngestError(manifest, str(exc), json_path=f"iscsi_parameters.{name}") from exc
    return params, rows


@dataclass(frozen=True)
class ParameterSets:
    """The dataset's parameter sets, whether they are the RFC 7143 what-if, and a key table."""

    sets: dict[str, IscsiParams]
    what_if: bool
    table: pd.DataFrame


def parameter_sets(iscsi_parameters: Mapping[str, Any], manifest: Path) -> ParameterSets:
    """Read every named set; an empty mapping gives the RFC 7143 defaults, flagged as a what-if."""
    if not iscsi_parameters:
        params, rows = parse_parameter_set(RFC7143_DEFAULTS_NAME, RFC7143_DEFAULTS, manifest)
        table = pd.DataFrame(rows).assign(source=RFC7143_DEFAULTS_NAME)
        return ParameterSets({RFC7143_DEFAULTS_NAME: params}, True, table)
    sets, rows = {}, []
    for name, values in iscsi_parameters.items():
        sets[str(name)], r = parse_parameter_set(str(name), values, manifest)
        rows.extend(r)
    return ParameterSets(sets, False, pd.DataFrame(rows))


# ---- configurations and the PDU exchange ----------------------------------------------------


def bursts_for(bs_bytes: int, params: IscsiParams) -> int:
    """R2T bursts a write of ``bs_bytes`` needs under ``params``."""
    return model.r2t_bursts(bs_bytes - model.unsolicited_bytes(bs_bytes, params), params)


def kind(bs_bytes: int, params: IscsiParams) -> str:
    """``serial`` (one R2T per round trip), ``all at once`` (one wave), ``windowed``, or ``no R2T``
    (everything fits in the unsolicited first burst)."""
    bursts = bursts_for(bs_bytes, params)
    if bursts == 0:
        return NO_R2T
    if params.max_outstanding_r2t >= bursts:
        return ALL_AT_ONCE
    return SERIAL if params.max_outstanding_r2t == 1 else WINDOWED


@dataclass(frozen=True)
class Configuration:
    """A labelled set of keys to model: from the manifest, or a what-if variant of one."""

    label: str
    parameter_set: str
    params: IscsiParams
    what_if: bool


def configurations(sets: ParameterSets, bs_bytes: int) -> list[Configuration]:
    """The sets as negotiated, plus serial / all-at-once what-ifs of the first set if absent."""
    out = [Configuration(name, name, p, sets.what_if) for name, p in sets.sets.items()]
    kinds = {kind(bs_bytes, c.params) for c in out}
    first_name, first = next(iter(sets.sets.items()))
    bursts = bursts_for(bs_bytes, first)
    if SERIAL not in kinds and bursts > 1:
        out.append(
            Configuration(
                f"{first_name}, MaxOutstandingR2T=1 (what-if)",
                first_name,
                replace(first, max_outstanding_r2t=1),
                True,
            )
        )
    if ALL_AT_ONCE not in kinds:
        out.append(
            Configuration(
                f"{first_name}, MaxOutstandingR2T={bursts} (what-if)",
                first_name,
                replace(first, max_outstanding_r2t=bursts),
                True,
            )
        )
    return out


def exchange_table(configs: list[Configuration], bs_list: list[int]) -> pd.DataFrame:
    """Per configuration and block size: unsolicited/solicited bytes, bursts, waves, one-way trips."""
    rows = []
    for c in configs:
        for bs in bs_list:
            unsolicited = model.unsolicited_bytes(bs, c.params)
            bursts = model.r2t_bursts(bs - unsolicited, c.params)
            waves = model.r2t_waves(bursts, c.params)
            rows.append(
                {
                    "configuration": c.label,
                    "what_if": c.what_if,
                    "bs_kib": bs / BYTES_PER_KIB,
                    "max_outstanding_r2t": c.params.max_outstanding_r2t,
                    "model": kind(bs, c.params),
                    "unsolicited_kib": unsolicited / BYTES_PER_KIB,
                    "solicited_kib": (bs - unsolicited) / BYTES_PER_KIB,
                    "bursts": bursts,
                    "waves": waves,
                    "one_way_trips": 2 + 2 * waves,
                }
            )
    return pd.DataFrame(rows)


# ---- measured inputs ---------------------------------------------------------------------------


def rtt_means(ds: Measurements) -> pd.DataFrame:
    """Mean RTT per network and ping interval over every reply (duplicates are not round trips)."""
    cols = ["network", "interval_s", "files", "replies", "mean_rtt_ms"]
    if not ds.select("ping"):
        return pd.DataFrame(columns=cols)
    samples = network.rtt_samples(ds)
    mixed = network.mixed_paths(samples)
    if mixed:
        (name, _), why = next(iter(mixed.items()))
        raise ReportError(f"dataset {ds.name}: network {name!r}: {why}")
    df = (
        samples.groupby(["network", "interval_s"], sort=True)
        .agg(files=("file", "nunique"), replies=("rtt_ms", "size"), mean_rtt_ms=("rtt_ms", "mean"))
        .reset_index()
    )
    return df[cols]


IPERF_COLUMNS = ("file", "network", "protocol", "reverse", "streams", "received_mbit_per_s", "rate_kind")


def iperf_rates(ds: Measurements) -> pd.DataFrame:
    """Received Mbit/s of every iperf3 file (iperf3's end sums): network, protocol, direction, kind."""
    rows = []
    for f in ds.select("iperf3"):
        s = iperf3.summary(ds.iperf3(f))
        if s["received_bps"] is None:
            raise IngestError(f.path, "iperf3 reports no received rate", json_path="end.sum_received")
        protocol, reverse = str(s["protocol"]), bool(s["reverse"])
        rows.append(
            {
                "file": f.rel,
                "network": f.labels.get("network"),
                "protocol": protocol,
                "reverse": reverse,
                "streams": s["streams"],
                "received_mbit_per_s": s["received_bps"] / BITS_PER_MBIT,
                "rate_kind": network.rate_kind(protocol, reverse),
            }
        )
    return pd.DataFrame(rows, columns=list(IPERF_COLUMNS))


def closest_interval(rtt: pd.DataFrame, interval_s: float) -> pd.DataFrame:
    """The row(s) of the ping interval closest (by ratio) to ``interval_s``; empty if none within 2x."""
    given = rtt[rtt["interval_s"].notna() & (rtt["interval_s"].astype(float) > 0)]
    if given.empty:
        return given
    ratio = np.abs(np.log(given["interval_s"].astype(float) / interval_s))
    best: pd.DataFrame = given[np.isclose(ratio, ratio.min())]
    return best if float(ratio.min()) <= math.log(PING_INTERVAL_FACTOR) + 1e-9 else best.iloc[0:0]


def ping_missing(rtt: pd.DataFrame, interval_s: float) -> str:
    """Why a network has no usable ping: none at all, or none within 2x of the model's interval."""
    want = f"{interval_s * 1000:g} ms"
    known = sorted(rtt["interval_s"].dropna().astype(float))
    if not known:
        return f"no ping at {want} (no ping with a known interval)"
    shown = ", ".join(f"{v * 1000:g} ms" for v in known)
    return f"no ping at {want} or within {PING_INTERVAL_FACTOR:g}x of it (intervals measured: {shown})"


def network_inputs(
    rtt: pd.DataFrame, iperf: pd.DataFrame, interval_s: float = DEFAULT_PING_INTERVAL_S
) -> pd.DataFrame:
    """Per network: one-way ms = mean RTT at the closest ping interval / 2; per-64-KiB ms from iperf3.

    ``rtt`` is :func:`rtt_means`, ``iperf`` is :func:`iperf_rates`. The ping interval used is
    the one closest to ``interval_s`` (within 2x), named in ``ping_interval_ms``; the link rate
    averages forward TCP runs only (UDP and reverse runs are counted in ``iperf3_excluded``). A
    network missing either keeps NaN there and ``missing`` says why.
    """
    rows = []
    for net in sorted(set(rtt["network"].dropna()) | set(iperf["network"].dropna())):
        p = closest_interval(rtt[rtt["network"] == net], interval_s)
        on_net = iperf[iperf["network"] == net]
        i = on_net[network.capacity_runs(on_net)]
        mean_rtt = float(p["mean_rtt_ms"].iloc[0]) if len(p) else math.nan
        mbit = float(i["received_mbit_per_s"].mean()) if len(i) else math.nan
        missing = [] if len(p) else [ping_missing(rtt[rtt["network"] == net], interval_s)]
        if i.empty:
            missing.append("no forward TCP iperf3" + (" (only UDP or reverse runs)" if len(on_net) else ""))
        rows.append(
            {
                "network": net,
                "model_interval_ms": interval_s * 1000,
                "ping_interval_ms": float(p["interval_s"].iloc[0]) * 1000 if len(p) else math.nan,
                "mean_rtt_ms": mean_rtt,
                "one_way_ms": mean_rtt / 2,
                "iperf3_files": len(i),
                "iperf3_excluded": len(on_net) - len(i),
                "received_mbit_per_s": mbit,
                "link_mib_per_s": mbit * BITS_PER_MBIT / BITS_PER_BYTE / BYTES_PER_MIB,
                "per_64k_ms": model.per_64k_ms_from_link_bps(mbit * BITS_PER_MBIT) if mbit > 0 else math.nan,
                "missing": "; ".join(missing),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "network",
            "model_interval_ms",
            "ping_interval_ms",
            "mean_rtt_ms",
            "one_way_ms",
            "iperf3_files",
            "iperf3_excluded",
            "received_mbit_per_s",
            "link_mib_per_s",
            "per_64k_ms",
            "missing",
        ],
    )


def to_network(row: Mapping[Hashable, Any]) -> Network:
    """A model Network from a :func:`network_inputs` row; ValueError if it lacks a measurement."""
    if row["missing"]:
        raise ValueError(f"network {row['network']}: {row['missing']}")
    return Network(
        one_way_ms=float(row["one_way_ms"]), link_bps=float(row["received_mbit_per_s"]) * BITS_PER_MBIT
    )


def request_bytes_for(requests: pd.DataFrame, device: str, bs_bytes: int) -> tuple[float, str]:
    """Device request size for ``bs_bytes`` writes on ``device`` as iostat saw it, with its source.

    Only iostat files of queue-depth-1 runs count (request sizes are never averaged across queue
    depths; files whose depth is unknown count too). Target-side iostat is preferred over local;
    without any, the whole block is assumed (the source says so: an assumption, not a measurement).
    """
    rows = request_rows(requests, device, bs_bytes)
    if rows.empty:
        return float(bs_bytes), "no iostat at this size: whole block assumed"
    return float(rows["request_bytes"].mean()), f"iostat wareq-sz ({prose.count(len(rows), 'file')})"


def request_rows(requests: pd.DataFrame, device: str, bs_bytes: int) -> pd.DataFrame:
    """The iostat rows :func:`request_bytes_for` averages (queue depth 1, target side preferred)."""
    rows = requests[
        (requests["device"] == device)
        & (requests["bs_bytes"] == bs_bytes)
        & requests["request_bytes"].notna()
    ]
    if "iodepth" in rows:
        depth = pd.to_numeric(rows["iodepth"], errors="coerce")
        rows = rows[depth.isna() | (depth == MODEL_IODEPTH)]
    if (rows["side"] == "target").any():
        rows = rows[rows["side"] == "target"]
    return rows


def device_inputs(terms: Mapping[str, DeviceTerm], requests: pd.DataFrame, bs_bytes: int) -> pd.DataFrame:
    """Per device: the request size it serves for ``bs_bytes`` writes, its device ms and why that value.

    ``device_ms`` is never below what the whole write took locally and ``local_block_ms`` is that
    measured time (the device ceiling); ``device_term`` is the page's sentence on which was used.
    """
    rows = []
    for name, term in terms.items():
        req, source = request_bytes_for(requests, term.device, bs_bytes)
        device_ms = term.device_ms(bs_bytes, req)
        lo, hi = _device_interval(term, bs_bytes, req)
        rows.append(
            {
                "device": name,
                "bs_kib": bs_bytes / BYTES_PER_KIB,
                "request_kib": req / BYTES_PER_KIB,
                "request_source": source,
                "device_ms": device_ms,
                "local_block_ms": term.block_ms(bs_bytes),
                "device_ms_lo": lo,
                "device_ms_hi": hi,
                "extrapolated": not min(term.measured.bs_bytes) <= req <= max(term.measured.bs_bytes),
                "device_term_method": "measured" if term.floor_binds(bs_bytes, req) else term.method,
                "device_term": term.sentence(bs_bytes, req),
            }
        )
    return pd.DataFrame(rows, columns=list(DEVICE_INPUT_COLUMNS))  # the columns even with no device


def _device_interval(term: DeviceTerm, bs_bytes: int, request_bytes: float) -> tuple[float, float]:
    """The fit's confidence interval when the fit sets the term, else NaN (a measured mean)."""
    if term.fit is None or term.method != "fit" or term.floor_binds(bs_bytes, request_bytes):
        return math.nan, math.nan
    return term.fit.predict_ci(request_bytes)


DEVICE_INPUT_COLUMNS = (
    "device",
    "bs_kib",
    "request_kib",
    "request_source",
    "device_ms",
    "local_block_ms",
    "device_ms_lo",
    "device_ms_hi",
    "extrapolated",
    "device_term_method",
    "device_term",
)


def missing_inputs(
    networks: pd.DataFrame, runs: pd.DataFrame, fits: Mapping[str, object], skipped: Mapping[str, str]
) -> list[str]:
    """What the dataset lacks for the model to add up one write (empty when something can be modelled)."""
    out = []
    usable = networks[networks["missing"] == ""] if len(networks) else networks
    if networks.empty:
        out.append("no ping or iperf3 file with a network label: no network to model")
    elif usable.empty:
        out += [f"network {row['network']}: {row['missing']}" for _, row in networks.iterrows()]
    if not fits:
        out += _device_gaps(runs, skipped)
    return out


def _device_gaps(runs: pd.DataFrame, skipped: Mapping[str, str]) -> list[str]:
    """Why no device could be fitted: no local runs, none of the model's kind, or too few of them."""
    local = runs[storage.is_local(runs)] if len(runs) else runs
    if local.empty:
        return ["no local fio run (side local) to fit a device's fixed cost and bandwidth on"]
    kind = ", ".join(f"{k}={v}" for k, v in label_contract.MODEL_FIT_LABELS.items())
    model = local[storage.is_model_run(local)]
    gaps = [
        f"no fio run at queue depth 1 ({kind}) on device {device}"
        for device in sorted(set(local["device"].fillna("unlabelled").astype(str)))
        if device not in set(model["device"].fillna("unlabelled").astype(str))
    ]
    return gaps + [f"device {name}: {why}" for name, why in skipped.items()]


@dataclass(frozen=True)
class CpuInput:
    """CPU ms charged to one operation, how it was obtained, and the run it came from."""

    cpu_ms: float
    source: str
    file: str | None = None


def cpu_input(
    cpu_per_op: pd.DataFrame, bs_bytes: int, *, scenario: str, reference_bs_bytes: int, side: str = "target"
) -> CpuInput:
    """The blog's CPU term: busy / IOPS of the ``scenario`` run at ``reference_bs_bytes``, scaled.

    The blog took 12 % at 30 IOPS of 1 MiB (4 ms) and doubled it for 2 MiB; the scale factor is
    ``bs_bytes / reference_bs_bytes``. Without a matching iostat run the term is 0 and the
    source says so.
    """
    rows = cpu_per_op[
        (cpu_per_op["scenario"] == scenario)
        & (cpu_per_op["side"] == side)
        & (cpu_per_op["bs_bytes"] == reference_bs_bytes)
    ]
    reference_mib = reference_bs_bytes / BYTES_PER_MIB
    if rows.empty:
        return CpuInput(
            0.0, f"no {side}-side avg-cpu for {scenario} at {reference_mib:g} MiB: CPU term set to 0"
        )
    per_op = float(rows["cpu_ms_per_op"].mean())
    scale = bs_bytes / reference_bs_bytes
    return CpuInput(
        per_op * scale,
        f"{side} avg-cpu busy / IOPS of {scenario} at {reference_mib:g} MiB x {scale:g}",
        ", ".join(rows["file"]),
    )


# ---- latency terms -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Inputs:
    """Everything one modelled write needs besides the iSCSI keys."""

    network_label: str
    device_label: str
    network: Network
    device_ms: float
    device_request_bytes: int
    cpu_ms: float


def latency_terms(
    configs: list[Configuration],
    inputs: list[Inputs],
    bs_bytes: int,
    assumptions: model.Assumptions = model.DEFAULT_ASSUMPTIONS,
) -> pd.DataFrame:
    """Tidy (configuration, network, device, term, ms) rows for stacked bars of every combination."""
    frames = []
    for c in configs:
        for i in inputs:
            b = model.write_latency(
                bs_bytes,
                c.params,
                i.network,
                i.device_ms,
                i.cpu_ms,
                device_request_bytes=i.device_request_bytes,
                assumptions=assumptions,
            )
            frames.append(
                b.to_frame().assign(
                    configuration=c.label,
                    network=i.network_label,
                    device=i.device_label,
                    combination=f"{c.label} | {i.network_label} | {i.device_label}",
                    total_ms=b.total_ms,
                    mib_per_s=model.mib_per_s(bs_bytes, b.total_ms),
                )
            )
    cols = ["configuration", "network", "device", "combination", "term", "ms", "total_ms", "mib_per_s"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def trips_range(exchange: pd.DataFrame, bs_bytes: int) -> tuple[float, float]:
    """Fewest and most one-way trips any configuration needs for a write of ``bs_bytes``."""
    at = exchange.loc[exchange["bs_kib"] == bs_bytes / BYTES_PER_KIB, "one_way_trips"]
    return float(at.min()), float(at.max())


def latency_totals(terms: pd.DataFrame) -> pd.DataFrame:
    """One row per combination: total ms, IOPS, MiB/s and the share of network one-way trips."""
    one_way = terms["term"].str.endswith("one_way_ms")
    keys = ["configuration", "network", "device"]
    out = (
        terms.groupby(keys, sort=False)
        .agg(total_ms=("total_ms", "first"), mib_per_s=("mib_per_s", "first"))
        .reset_index()
    )
    lat = terms[one_way].groupby(keys, sort=False)["ms"].sum().rename("one_way_ms_total").reset_index()
    out = out.merge(lat, on=keys)
    out["iops"] = MS_PER_S / out["total_ms"]
    out["one_way_share_pct"] = out["one_way_ms_total"] / out["total_ms"] * 100.0
    return out[[*keys, "total_ms", "iops", "mib_per_s", "one_way_ms_total", "one_way_share_pct"]]


def model_inputs(networks: pd.DataFrame, devices: pd.DataFrame, cpu: CpuInput) -> list[Inputs]:
    """Every measured network crossed with every measured device (networks lacking data skipped)."""
    out = []
    for _, net in networks[networks["missing"] == ""].iterrows():
        for _, dev in devices.iterrows():
            out.append(
                Inputs(
                    network_label=str(net["network"]),
                    device_label=str(dev["device"]),
                    network=to_network(net.to_dict()),
                    device_ms=float(dev["device_ms"]),
                    device_request_bytes=round(float(dev["request_kib"]) * BYTES_PER_KIB),
                    cpu_ms=cpu.cpu_ms,
                )
            )
    return out
