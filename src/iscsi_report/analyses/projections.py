"""Projections chapter: the blog's six validation configurations modelled twice and its questions.

(a) with the blog's rounded inputs and its own assumptions (:mod:`iscsi_report.analyses.blog`) and
(b) with inputs measured from the dataset's raw files: one-way latency = mean RTT of the
2 ms-interval ping / 2, the per-64-KiB time from iperf3's received rate, the device term from
the storage fit at the request size iostat shows, and the CPU term from target-side avg-cpu
over IOPS (the blog's method, Guerri 2023). Measured MiB/s come from the fio runs labelled
``validation``. Missing pieces raise :class:`MissingDataError` listing all of them. Every
projection is capped by the link, the device's local throughput and the CPU, and names the
bound that sets it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from iscsi_report.analyses import blog, device_term, r2t, storage
from iscsi_report.analyses import network as network_analysis
from iscsi_report.core import model, prose
from iscsi_report.core.errors import IngestError, ReportError
from iscsi_report.core.measurements import Measurements
from iscsi_report.core.model import LatencyBreakdown, Network
from iscsi_report.core.units import BITS_PER_BYTE, BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S

DEFAULT_BS_BYTES = 2 * BYTES_PER_MIB  # the blog validated its model with 2 MiB writes
DEFAULT_CPU_SCENARIO = "iscsi-libiscsi"  # the only runs with a published CPU figure
DEFAULT_CPU_REFERENCE_BS_BYTES = BYTES_PER_MIB  # the blog's "CPU lat (1M*2)"
KEYS = ["max_outstanding_r2t", "network", "device"]
TERM_GROUPS = {
    "command_one_way_ms": "one-way trips",
    "r2t_one_way_ms": "one-way trips",
    "data_one_way_ms": "one-way trips",
    "status_one_way_ms": "one-way trips",
    "r2t_processing_ms": "per-round processing",
    "unsolicited_transmit_ms": "transmission",
    "solicited_transmit_ms": "transmission",
    "device_ms": "device",
    "cpu_ms": "CPU",
}


class MissingDataError(ReportError):
    """The dataset lacks what a projection needs; the message lists every missing piece."""


@dataclass(frozen=True)
class Projection:
    """One modelled configuration: its labels, the inputs used, the breakdown and the measurement."""

    max_outstanding_r2t: int
    network: str
    device: str
    parameter_set: str
    network_in: Network
    breakdown: LatencyBreakdown
    measured_mib_per_s: float
    source: str
    throughput: model.Throughput

    @property
    def mib_per_s(self) -> float:
        """Estimated MiB/s of back-to-back writes, capped by the link, device and CPU."""
        return self.throughput.mib_per_s


# ---- (a) the blog's inputs ---------------------------------------------------------------------


def blog_projections(published: str | Path | None = None) -> list[Projection]:
    """The blog's six rows through its own model (lock-step, shadowing), its printed inputs and MiB/s."""
    inputs = blog.inputs(published)
    out = []
    for row in blog.projection_rows(published):
        b = blog.row_breakdown(inputs, row)
        out.append(
            Projection(
                row.max_outstanding_r2t,
                row.network,
                row.device,
                "blog defaults",
                row.network_in,
                b,
                row.measured_mib_per_s,
                "blog's rounded inputs and assumptions",
                model.throughput(b, row.network_in),
            )
        )
    return out


def published_values(published: str | Path | None = None) -> pd.DataFrame:
    """What the blog printed for each of its six rows, keyed like the projection tables."""
    return pd.DataFrame(
        [
            {
                "max_outstanding_r2t": r.max_outstanding_r2t,
                "network": r.network,
                "device": r.device,
                "published_op_ms": r.published_op_ms,
                "published_mib_per_s": r.published_mib_per_s,
                "published_measured_mib_per_s": r.measured_mib_per_s,
                "published_error_pct": r.published_error_pct,
            }
            for r in blog.projection_rows(published)
        ]
    )


# ---- (b) measured inputs -----------------------------------------------------------------------


@dataclass(frozen=True)
class MeasuredInputs:
    """Everything derived from raw files that the measured projection uses, for display too."""

    bs_bytes: int
    parameter_sets: r2t.ParameterSets
    networks: pd.DataFrame
    devices: pd.DataFrame
    cpu: r2t.CpuInput
    cpu_table: pd.DataFrame
    validation: pd.DataFrame


def validation_runs(runs: pd.DataFrame, bs_bytes: int) -> pd.DataFrame:
    """Validation fio runs at ``bs_bytes`` grouped by R2T, network, device and parameter set."""
    val = runs[storage.is_validation(runs) & (runs["bs_bytes"] == bs_bytes)]
    cols = [*KEYS, "iscsi_parameters", "runs", "measured_mib_per_s", "files"]
    if val.empty:
        return pd.DataFrame(columns=cols)
    keyed = val.assign(iscsi_parameters=val["iscsi_parameters"].fillna(""))
    out = (
        keyed.groupby([*KEYS, "iscsi_parameters"], sort=True, dropna=False)
        .agg(runs=("file", "size"), measured_mib_per_s=("mib_per_s", "mean"), files=("file", ", ".join))
        .reset_index()
    )
    return out[cols]


def measured_inputs(
    ds: Measurements,
    bs_bytes: int = DEFAULT_BS_BYTES,
    *,
    ping_interval_s: float = r2t.DEFAULT_PING_INTERVAL_S,
    cpu_scenario: str = DEFAULT_CPU_SCENARIO,
    cpu_reference_bs_bytes: int = DEFAULT_CPU_REFERENCE_BS_BYTES,
    cpu_cores: int = 1,
) -> MeasuredInputs:
    """Read the dataset once and derive every measured input of the projection."""
    runs = storage.fio_runs(ds)
    terms, _ = device_term.device_terms(runs)
    requests = storage.iostat_requests(ds)
    cpu_table = storage.cpu_ms_per_op(storage.iostat_cpu(ds), cores=cpu_cores)
    return MeasuredInputs(
        bs_bytes=bs_bytes,
        parameter_sets=r2t.parameter_sets(ds.iscsi_parameters, ds.root / "manifest.yaml"),
        networks=r2t.network_inputs(r2t.rtt_means(ds), r2t.iperf_rates(ds), ping_interval_s),
        devices=r2t.device_inputs(terms, requests, bs_bytes),
        cpu=r2t.cpu_input(
            cpu_table, bs_bytes, scenario=cpu_scenario, reference_bs_bytes=cpu_reference_bs_bytes
        ),
        cpu_table=cpu_table,
        validation=validation_runs(runs, bs_bytes),
    )


def _missing(inputs: MeasuredInputs) -> list[str]:
    """Every piece the measured projection needs and the dataset lacks."""
    val = inputs.validation
    out = [] if inputs.cpu.file is not None else [f"CPU term: {inputs.cpu.source}"]
    if val.empty:
        out.append(f"no fio runs labelled validation: true at {inputs.bs_bytes} bytes")
    nets = inputs.networks.set_index("network")
    for net in sorted(set(val["network"])):
        if net not in nets.index:
            out.append(f"network {net}: no ping or iperf3 files")
        elif nets.loc[net, "missing"]:
            out.append(f"network {net}: {nets.loc[net, 'missing']}")
    for dev in sorted(set(val["device"]) - set(inputs.devices["device"])):
        out.append(f"device {dev}: no local sequential direct queue-depth-1 fio run to measure it")
    for _, row in val[val["iscsi_parameters"] == ""].iterrows():
        out.append(f"no iscsi_parameters label on the validation files {row['files']}")
    for name in sorted(set(val["iscsi_parameters"]) - {""} - set(inputs.parameter_sets.sets)):
        out.append(f"parameter set {name!r} is not under the manifest's iscsi_parameters")
    return out


def _params_for(ds: Measurements, inputs: MeasuredInputs, row: pd.Series) -> model.IscsiParams:
    """The run's parameter set, checked against its max_outstanding_r2t label."""
    params = inputs.parameter_sets.sets[row["iscsi_parameters"]]
    label = row["max_outstanding_r2t"]
    if label is not None and not pd.isna(label) and int(label) != params.max_outstanding_r2t:
        raise IngestError(
            ds.root / "manifest.yaml",
            f"{row['files']}: label max_outstanding_r2t={label} "
            f"but set {row['iscsi_parameters']!r} has MaxOutstandingR2T="
            f"{params.max_outstanding_r2t}",
        )
    return params


def measured_projections(
    ds: Measurements, inputs: MeasuredInputs, assumptions: model.Assumptions = model.DEFAULT_ASSUMPTIONS
) -> list[Projection]:
    """Model every validation configuration with the measured inputs; MissingDataError if lacking.

    The device ceiling is the device's measured local throughput at the whole block.
    """
    missing = _missing(inputs)
    if missing:
        raise MissingDataError(f"dataset {ds.name} cannot be projected: " + "; ".join(missing))
    nets = inputs.networks.set_index("network")
    devs = inputs.devices.set_index("device")
    out = []
    for _, row in inputs.validation.iterrows():
        params = _params_for(ds, inputs, row)
        net = r2t.to_network(nets.loc[row["network"]].to_dict() | {"network": row["network"]})
        dev = devs.loc[row["device"]]
        b = model.write_latency(
            inputs.bs_bytes,
            params,
            net,
            float(dev["device_ms"]),
            inputs.cpu.cpu_ms,
            device_request_bytes=round(float(dev["request_kib"]) * BYTES_PER_KIB),
            assumptions=assumptions,
        )
        local_ms = float(dev["local_block_ms"]) if "local_block_ms" in dev else math.nan
        rate = inputs.bs_bytes / (local_ms / MS_PER_S) if local_ms > 0 else None
        out.append(
            Projection(
                int(params.max_outstanding_r2t),
                str(row["network"]),
                str(row["device"]),
                str(row["iscsi_parameters"]),
                net,
                b,
                float(row["measured_mib_per_s"]),
                "measured from raw files",
                model.throughput(b, net, device_bytes_per_s=rate),
            )
        )
    return out


# ---- tables ------------------------------------------------------------------------------------


def projection_table(projections: list[Projection]) -> pd.DataFrame:
    """The six-configuration table: inputs, estimated op ms, IOPS, MiB/s, measured, error %."""
    rows = []
    for p in projections:
        b = p.breakdown
        rows.append(
            {
                "max_outstanding_r2t": p.max_outstanding_r2t,
                "network": p.network,
                "device": p.device,
                "device_ms": b.device_ms,
                "cpu_ms": b.cpu_ms,
                "one_way_ms": p.network_in.one_way_ms,
                "per_64k_ms": p.network_in.per_64k_ms,
                "waves": b.waves,
                "exposed_rounds": b.exposed_rounds,
                "op_ms": b.total_ms,
                "iops": p.throughput.iops,
                "latency_mib_per_s": model.mib_per_s(b.bs_bytes, b.total_ms),
                **{
                    f"{k}_ceiling_mib_per_s": v
                    for k, v in p.throughput.ceilings_mib_per_s().items()
                    if k != "latency"
                },
                "mib_per_s": p.mib_per_s,
                "binding": p.throughput.binding,
                "measured_mib_per_s": p.measured_mib_per_s,
                "error_pct": model.error_pct(p.measured_mib_per_s, p.mib_per_s),
            }
        )
    out = pd.DataFrame(rows)
    # the blog's order: serial first, slowest configuration first within each R2T setting
    return out.sort_values(["max_outstanding_r2t", "op_ms"], ascending=[True, False], ignore_index=True)


def with_published(table: pd.DataFrame, published: str | Path | None = None) -> pd.DataFrame:
    """The table with the blog's printed values beside it and the differences (NaN where unmatched)."""
    out = table.merge(published_values(published), on=KEYS, how="left")
    out["op_ms_minus_published"] = out["op_ms"] - out["published_op_ms"]
    out["mib_per_s_minus_published"] = out["mib_per_s"] - out["published_mib_per_s"]
    out["error_pct_minus_published"] = out["error_pct"] - out["published_error_pct"]
    return out


def compare_inputs(blog: pd.DataFrame, measured: pd.DataFrame) -> pd.DataFrame:
    """Blog-input and measured-input projections side by side, per configuration."""
    cols = [
        "device_ms",
        "cpu_ms",
        "one_way_ms",
        "per_64k_ms",
        "op_ms",
        "mib_per_s",
        "measured_mib_per_s",
        "error_pct",
    ]
    out = blog[[*KEYS, *cols]].merge(
        measured[[*KEYS, *cols]], on=KEYS, how="outer", sort=False, suffixes=("_blog", "_measured")
    )
    out["mib_per_s_difference"] = out["mib_per_s_measured"] - out["mib_per_s_blog"]
    return out


def terms_table(projections: list[Projection]) -> pd.DataFrame:
    """Tidy (configuration, term, group, ms) rows of every projection, for stacked bars."""
    frames = []
    for p in projections:
        f = p.breakdown.to_frame()
        frames.append(
            f.assign(
                max_outstanding_r2t=p.max_outstanding_r2t,
                network=p.network,
                device=p.device,
                group=f["term"].map(TERM_GROUPS),
                configuration=f"R2T={p.max_outstanding_r2t}, {p.network}, {p.device}",
            )
        )
    return pd.concat(frames, ignore_index=True)


def term_shares(terms: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and term group: ms and share of the op time (per cent)."""
    g = terms.groupby([*KEYS, "group"], sort=False)["ms"].sum().reset_index()
    g["share_pct"] = g["ms"] / g.groupby(KEYS)["ms"].transform("sum") * 100.0
    return g


# ---- the blog's three questions ----------------------------------------------------------------


@dataclass(frozen=True)
class QuestionSetup:
    """Which labels play the roles in the blog's questions (its slow and fast options)."""

    slow_network: str = "wireless"
    fast_network: str = "wired"
    slow_device: str = "hdd"
    fast_device: str = "ssd"
    serial_r2t: int = 1


def _pick(table: pd.DataFrame, r2t_value: int, network: str, device: str) -> pd.Series:
    """The single row of one configuration; MissingDataError naming it if absent."""
    rows = table[
        (table["max_outstanding_r2t"] == r2t_value)
        & (table["network"] == network)
        & (table["device"] == device)
    ]
    if len(rows) != 1:
        raise MissingDataError(f"no projection for R2T={r2t_value}, {network}, {device}")
    return rows.iloc[0]


def _gain_pct(new: float, old: float) -> float:
    """Relative gain of ``new`` over ``old`` in per cent."""
    return (new / old - 1.0) * 100.0


def blog_questions(
    table: pd.DataFrame,
    terms: pd.DataFrame,
    setup: QuestionSetup,
    local: pd.DataFrame,
    bs_bytes: int = DEFAULT_BS_BYTES,
) -> pd.DataFrame:
    """The blog's three questions answered from one projection table: (glue_key, question, quantity, value).

    1. why the serial slow-network slow-device run is slow: measured MiB/s beside the link's and
       the local device's, and the share of each term group; 2. the fast network's gain; 3. the
       fast device's gain on the fast network, beside the local gain. Gain keys name the R2T
       setting by role: ``serial``, ``burst`` (the largest MaxOutstandingR2T), else ``r2t<n>``.
    """
    s = setup
    base = _pick(table, s.serial_r2t, s.slow_network, s.slow_device)
    shares = term_shares(terms)
    base_shares = shares[
        (shares["max_outstanding_r2t"] == s.serial_r2t)
        & (shares["network"] == s.slow_network)
        & (shares["device"] == s.slow_device)
    ]
    local_bs = local[local["bs_bytes"] == bs_bytes].set_index("device")["mib_per_s"]
    link_mib = model.link_bps_from_per_64k_ms(base["per_64k_ms"]) / BITS_PER_BYTE / BYTES_PER_MIB
    rows: list[dict[str, Any]] = [
        {
            "glue_key": "q1_measured_mib_per_s",
            "question": 1,
            "quantity": "measured MiB/s",
            "value": base["measured_mib_per_s"],
        },
        {
            "glue_key": "q1_estimated_mib_per_s",
            "question": 1,
            "quantity": "estimated MiB/s",
            "value": base["mib_per_s"],
        },
        {
            "glue_key": "q1_link_mib_per_s",
            "question": 1,
            "quantity": "link MiB/s (model input)",
            "value": link_mib,
        },
        {
            "glue_key": "q1_local_device_mib_per_s",
            "question": 1,
            "quantity": "local device MiB/s",
            "value": float(local_bs.get(s.slow_device, math.nan)),
        },
        {"glue_key": "q1_op_ms", "question": 1, "quantity": "estimated op ms", "value": base["op_ms"]},
    ]
    for _, g in base_shares.iterrows():
        slug = g["group"].replace(" ", "_").replace("-", "_").lower()
        rows.append(
            {
                "glue_key": f"q1_{slug}_share_pct",
                "question": 1,
                "quantity": f"share of op time: {g['group']} (%)",
                "value": g["share_pct"],
            }
        )
    r2t_values = sorted(int(v) for v in table["max_outstanding_r2t"].unique())
    for r2t_value in r2t_values:
        role = (
            "serial"
            if r2t_value == s.serial_r2t
            else "burst"
            if r2t_value == r2t_values[-1]
            else f"r2t{r2t_value}"
        )
        for q, (old_net, old_dev, new_net, new_dev) in (
            (2, (s.slow_network, s.slow_device, s.fast_network, s.slow_device)),
            (3, (s.fast_network, s.slow_device, s.fast_network, s.fast_device)),
        ):
            old, new = _pick(table, r2t_value, old_net, old_dev), _pick(table, r2t_value, new_net, new_dev)
            for what, col in (("estimated", "mib_per_s"), ("measured", "measured_mib_per_s")):
                rows.append(
                    {
                        "glue_key": f"q{q}_{role}_{what}_gain_pct",
                        "question": q,
                        "quantity": f"R2T={r2t_value}: {what} gain of {new_net} {new_dev} over "
                        f"{old_net} {old_dev} (%)",
                        "value": _gain_pct(new[col], old[col]),
                    }
                )
    rows.append(
        {
            "glue_key": "q3_local_gain_pct",
            "question": 3,
            "quantity": f"local gain of {s.fast_device} over {s.slow_device} (%)",
            "value": _gain_pct(
                float(local_bs.get(s.fast_device, math.nan)), float(local_bs.get(s.slow_device, math.nan))
            ),
        }
    )
    return pd.DataFrame(rows)


def dominant_group(terms: pd.DataFrame, setup: QuestionSetup) -> str:
    """The term group taking the largest share of the serial slow configuration's op time."""
    shares = term_shares(terms)
    base = shares[
        (shares["max_outstanding_r2t"] == setup.serial_r2t)
        & (shares["network"] == setup.slow_network)
        & (shares["device"] == setup.slow_device)
    ]
    if base.empty:
        raise MissingDataError(
            f"no terms for R2T={setup.serial_r2t}, {setup.slow_network}, {setup.slow_device}"
        )
    return str(base.set_index("group")["share_pct"].idxmax())


def questions_side_by_side(blog: pd.DataFrame, measured: pd.DataFrame) -> pd.DataFrame:
    """Answers from the blog's inputs and from measured inputs in two columns."""
    return blog.rename(columns={"value": "blog_inputs"}).merge(
        measured[["glue_key", "value"]].rename(columns={"value": "measured_inputs"}),
        on="glue_key",
        how="left",
        sort=False,
    )


# ---- one configuration from a dataset's measured inputs (``iscsi-report project --dataset``) ----

# iSCSI keys of a parameter set -> the name of the matching model input (the project flag's dest).
PARAMETER_INPUTS = {
    "FirstBurstLength": ("first_burst", "bytes"),
    "MaxBurstLength": ("max_burst", "bytes"),
    "MaxRecvDataSegmentLength": ("max_recv_data_segment", "bytes"),
    "ImmediateData": ("immediate_data", "yes/no"),
    "InitialR2T": ("initial_r2t", "yes/no"),
    "MaxOutstandingR2T": ("max_outstanding_r2t", "R2Ts"),
}
SELECTIONS = ("network", "device", "parameter_set")  # what a dataset projection is made for


@dataclass(frozen=True)
class ModelInput:
    """One input of a projection: its value, unit and where it came from (files or a rule)."""

    name: str
    value: float | int | bool | str
    unit: str
    source: str


@dataclass(frozen=True)
class DatasetSources:
    """A dataset read once for projections: networks, device fits, iostat requests, CPU, key sets."""

    dataset: str
    networks: pd.DataFrame
    ping_files: dict[tuple[str, float], list[str]]
    link_files: dict[str, list[str]]
    terms: dict[str, device_term.DeviceTerm]
    fit_files: dict[str, list[str]]
    skipped: dict[str, str]
    requests: pd.DataFrame
    cpu_table: pd.DataFrame
    parameter_sets: r2t.ParameterSets
    cpu_scenario: str
    cpu_reference_bs_bytes: int

    def choices(self) -> dict[str, list[str]]:
        """What a projection can be made for: measured networks, fitted devices, parameter sets."""
        usable = self.networks[self.networks["missing"] == ""]
        return {
            "network": sorted(str(n) for n in usable["network"]),
            "device": sorted(self.terms),
            "parameter_set": list(self.parameter_sets.sets),
        }


def read_sources(
    ds: Measurements,
    *,
    ping_interval_s: float = r2t.DEFAULT_PING_INTERVAL_S,
    cpu_scenario: str = DEFAULT_CPU_SCENARIO,
    cpu_reference_bs_bytes: int = DEFAULT_CPU_REFERENCE_BS_BYTES,
    cpu_cores: int = 1,
) -> DatasetSources:
    """Read every raw file a dataset projection draws on, once (the model chapter's selections)."""
    iperf = r2t.iperf_rates(ds)
    capacity = iperf[network_analysis.capacity_runs(iperf)] if len(iperf) else iperf
    no_pings = pd.DataFrame(columns=["network", "interval_s", "file"])
    samples = network_analysis.rtt_samples(ds) if ds.select("ping") else no_pings
    runs = storage.fio_runs(ds)
    terms, skipped = device_term.device_terms(runs)
    model_runs = runs[storage.is_model_run(runs)]
    return DatasetSources(
        dataset=ds.name,
        networks=r2t.network_inputs(r2t.rtt_means(ds), iperf, ping_interval_s),
        ping_files=_files_by_interval(samples),
        link_files={str(k): sorted(g["file"]) for k, g in capacity.groupby("network", sort=True)},
        terms=terms,
        fit_files={
            name: sorted(model_runs.loc[model_runs["device"] == term.device, "file"])
            for name, term in terms.items()
        },
        skipped=skipped,
        requests=storage.iostat_requests(ds),
        cpu_table=storage.cpu_ms_per_op(storage.iostat_cpu(ds), cores=cpu_cores),
        parameter_sets=r2t.parameter_sets(ds.iscsi_parameters, ds.root / "manifest.yaml"),
        cpu_scenario=cpu_scenario,
        cpu_reference_bs_bytes=cpu_reference_bs_bytes,
    )


def _files_by_interval(samples: pd.DataFrame) -> dict[tuple[str, float], list[str]]:
    """Ping files per (network, interval_s), from :func:`network.rtt_samples`."""
    out: dict[tuple[str, float], list[str]] = {}
    for net, interval, file in (
        samples[["network", "interval_s", "file"]].drop_duplicates().itertuples(index=False)
    ):
        out.setdefault((str(net), float(interval)), []).append(str(file))
    return {k: sorted(v) for k, v in out.items()}


def _choose(src: DatasetSources, what: str, given: str | None) -> str:
    """The named network/device/parameter set, or the only one; MissingDataError listing the choices."""
    options = src.choices()[what]
    if given is not None and given in options:
        return given
    shown = ", ".join(options) or "none"
    if given is not None:
        raise MissingDataError(f"dataset {src.dataset}: no {what} {given!r} to project (usable: {shown})")
    if len(options) == 1:
        return options[0]
    if not options:
        raise MissingDataError(f"dataset {src.dataset}: no usable {what}: {_why_none(src, what)}")
    flag = "--" + what.replace("_set", "s").replace("parameters", "iscsi-parameters").replace("_", "-")
    raise MissingDataError(f"dataset {src.dataset} has several {what}s ({shown}): choose with {flag}")


def _why_none(src: DatasetSources, what: str) -> str:
    """Why a dataset offers no network or no device to project."""
    if what == "network":
        nets = src.networks
        return "; ".join(f"{r['network']}: {r['missing']}" for _, r in nets.iterrows()) or "no ping or iperf3"
    reasons = [f"{k}: {v}" for k, v in src.skipped.items()]
    return "; ".join(reasons) or "no local sequential direct queue-depth-1 fio runs to fit"


def _network_inputs(src: DatasetSources, name: str) -> list[ModelInput]:
    """One-way ms from the closest-interval ping and link Mbit/s from forward TCP iperf3, with files."""
    row = src.networks.set_index("network").loc[name].to_dict()
    interval_s = float(row["ping_interval_ms"]) / 1000
    pings = ", ".join(src.ping_files.get((name, interval_s), []))
    links = src.link_files.get(name, [])
    left_out = int(row["iperf3_excluded"])
    return [
        ModelInput(
            "one_way_ms",
            float(row["one_way_ms"]),
            "ms",
            f"mean RTT {float(row['mean_rtt_ms']):.4g} ms / 2 of the ping at {interval_s * 1000:g} ms "
            f"intervals (the closest to the model's {float(row['model_interval_ms']):g} ms): {pings}",
        ),
        ModelInput(
            "link_mbps",
            float(row["received_mbit_per_s"]),
            "Mbit/s",
            f"mean received rate of {prose.count(len(links), 'forward TCP iperf3 run')}: {', '.join(links)}"
            + (f" ({prose.count(left_out, 'UDP or reverse run')} left out)" if left_out else ""),
        ),
    ]


def _device_inputs(src: DatasetSources, name: str, bs_bytes: int) -> list[ModelInput]:
    """Device ms for the request size iostat shows, never below local, and the local throughput."""
    term = src.terms[name]
    rows = r2t.request_rows(src.requests, term.device, bs_bytes)
    request, req_source = r2t.request_bytes_for(src.requests, term.device, bs_bytes)
    if len(rows):
        req_source += ": " + ", ".join(rows["file"])
    measured = f"queue-depth-1 local fio runs of {name}: " + ", ".join(src.fit_files.get(name, []))
    return [
        *_fit_inputs(term, measured),
        ModelInput("device_request_bytes", round(request), "bytes", req_source),
        ModelInput("device_ms", term.device_ms(bs_bytes, request), "ms", term.sentence(bs_bytes, request)),
        ModelInput(
            "device_mib_s",
            term.bytes_per_s(bs_bytes) / BYTES_PER_MIB,
            "MiB/s",
            f"local throughput measured {term.measured.where(bs_bytes)} (the device ceiling): {measured}",
        ),
    ]


def _fit_inputs(term: device_term.DeviceTerm, measured: str) -> list[ModelInput]:
    """The fit's coefficients when the fit stands for the device (nothing when it was refused)."""
    if term.fit is None or term.method != "fit":
        return []
    fit = term.fit
    return [
        ModelInput("device_fixed_ms", fit.fixed_ms, "ms", f"fit (R² {fit.r_squared:.2f}) of {measured}"),
        ModelInput("device_streaming_mib_s", fit.streaming_mib_per_s, "MiB/s", "slope of the same fit"),
    ]


def _parameter_inputs(src: DatasetSources, name: str) -> list[ModelInput]:
    """The named set's keys the model uses, each with manifest or RFC 7143 default as its source."""
    params = src.parameter_sets.sets[name]
    table = src.parameter_sets.table
    rows = table[table["parameter_set"] == name].set_index("key")
    out = []
    for key, (field_name, unit) in PARAMETER_INPUTS.items():
        attr = r2t.BOOLEAN_KEYS.get(key) or r2t.INTEGER_KEYS[key]
        given = rows.loc[key, "source"] == "manifest"
        where = f"manifest iscsi_parameters.{name}.{key}" if given else f"{r2t.RFC7143_DEFAULTS_NAME}"
        if src.parameter_sets.what_if:
            where += " (the manifest has no iscsi_parameters)"
        out.append(ModelInput(field_name, getattr(params, attr), unit, where))
    return out


def dataset_inputs(
    src: DatasetSources,
    bs_bytes: int,
    *,
    network_name: str | None = None,
    device: str | None = None,
    parameter_set: str | None = None,
) -> dict[str, ModelInput]:
    """Every measured input of one configuration with its source; MissingDataError if one is lacking."""
    net = _choose(src, "network", network_name)
    dev = _choose(src, "device", device)
    keys = _choose(src, "parameter_set", parameter_set)
    cpu = r2t.cpu_input(
        src.cpu_table, bs_bytes, scenario=src.cpu_scenario, reference_bs_bytes=src.cpu_reference_bs_bytes
    )
    cpu_source = cpu.source + (f": {cpu.file}" if cpu.file else "")
    chosen = [
        ModelInput("network", net, "", "ping and iperf3 files labelled network"),
        ModelInput("device", dev, "", "local fio runs labelled device"),
        ModelInput("parameter_set", keys, "", "manifest iscsi_parameters"),
    ]
    found = [
        *chosen,
        *_network_inputs(src, net),
        *_device_inputs(src, dev, bs_bytes),
        ModelInput("cpu_ms", cpu.cpu_ms, "ms", cpu_source),
        *_parameter_inputs(src, keys),
    ]
    return {i.name: i for i in found}
