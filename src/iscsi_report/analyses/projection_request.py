"""``iscsi-report project`` as a typed question: one iSCSI operation's latency terms, IOPS, MiB/s and
queue bounds, for one configuration or a sweep, from given values alone or from a dataset's measurements.

A :class:`ProjectionRequest` names every input with its unit; :func:`answer` returns a JSON-ready
document in which inputs carry the names of the command's options (``bs``, ``first_burst``, ...)
with their value, unit and source, so that a source or an error names the flag the user gave.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from iscsi_report.core import model
from iscsi_report.core.errors import ReportError
from iscsi_report.core.units import BITS_PER_MBIT

DEFAULT_DATASET_BS_BYTES = 2 * model.MIB  # the blog's validation writes
MAX_COMBINATIONS = 10_000  # a sweep's rows: beyond this the table is unreadable and memory grows without end
MIN_PINGS = 100  # replies a latency distribution needs: fewer cannot place a p99
UNBOUNDED_NOTE = {"cpu": "no CPU time given (--cpu-ms 0): no CPU ceiling"}


@dataclass(frozen=True)
class ProjectionRequest:
    """What to project. Each swept input is None when not given, else its values (several: a sweep).

    ``dataset`` (a folder under ``raw_dir``) starts every input from its measurements;
    ``run_settings`` are a params file's model settings (ping interval, CPU scenario, block size)
    read from ``run_settings_file``.
    """

    bs_bytes: tuple[int, ...] | None = None
    network: tuple[str, ...] | None = None
    device: tuple[str, ...] | None = None
    iscsi_parameters: tuple[str, ...] | None = None
    one_way_ms: tuple[float, ...] | None = None
    per_64k_ms: tuple[float, ...] | None = None
    link_mbps: tuple[float, ...] | None = None
    device_ms: tuple[float, ...] | None = None
    device_mib_s: tuple[float, ...] | None = None
    device_max_iops: tuple[float, ...] | None = None
    cpu_ms: tuple[float, ...] | None = None
    cpu_cores: tuple[int, ...] | None = None
    max_outstanding_r2t: tuple[int, ...] | None = None
    target_r2t_window: tuple[int, ...] | None = None
    per_round_ms: tuple[float, ...] | None = None
    pdu_header_bytes: tuple[int, ...] | None = None
    first_burst_bytes: tuple[int, ...] | None = None
    max_burst_bytes: tuple[int, ...] | None = None
    max_recv_data_segment_bytes: tuple[int, ...] | None = None
    immediate_data: tuple[bool, ...] | None = None
    initial_r2t: tuple[bool, ...] | None = None
    queue_depth: tuple[int, ...] | None = None
    rw: model.Direction = "write"
    r2t_pacing: model.Pacing | None = None  # None: detected from a dataset's captures, else the default
    ping_file: Path | None = None  # --ping: a ping log whose spread gives the latency percentiles
    today: str = ""  # --today: the settings group of a dataset of iSCSI runs that is today's system
    engine_version: int | None = None  # --engine-version: one of forecast.ENGINE_VERSIONS; None: the default
    dataset: str | None = None
    raw_dir: Path = Path("data", "raw")
    preregistered_dir: Path = Path("data", "preregistered")  # the blind sweeps' frozen forecasts
    run_settings: Mapping[str, Any] = field(default_factory=dict)
    run_settings_file: str = ""


# The request's swept inputs, in the order the document lists them.
SWEPT_INPUTS = (
    "bs_bytes",
    "network",
    "device",
    "iscsi_parameters",
    "one_way_ms",
    "per_64k_ms",
    "link_mbps",
    "device_ms",
    "device_mib_s",
    "device_max_iops",
    "cpu_ms",
    "cpu_cores",
    "max_outstanding_r2t",
    "target_r2t_window",
    "per_round_ms",
    "pdu_header_bytes",
    "first_burst_bytes",
    "max_burst_bytes",
    "max_recv_data_segment_bytes",
    "immediate_data",
    "initial_r2t",
    "queue_depth",
)
# Inputs the command's options (and the document) name without their unit.
_OPTION_NAMES = {
    "bs_bytes": "bs",
    "first_burst_bytes": "first_burst",
    "max_burst_bytes": "max_burst",
    "max_recv_data_segment_bytes": "max_recv_data_segment",
}
# Dataset selections: the option's name -> the name projections.dataset_inputs uses.
SELECTIONS = {"network": "network", "device": "device", "iscsi_parameters": "parameter_set"}
# Used without a dataset when an input is not given (RFC 7143 keys, no device or CPU time).
MANUAL_DEFAULTS: dict[str, Any] = {
    "device_ms": 0.0,
    "cpu_ms": 0.0,
    "max_outstanding_r2t": model.DEFAULT_MAX_OUTSTANDING_R2T,
    "first_burst": model.DEFAULT_FIRST_BURST_BYTES,
    "max_burst": model.DEFAULT_MAX_BURST_BYTES,
    "max_recv_data_segment": model.DEFAULT_MAX_RECV_DATA_SEGMENT_BYTES,
    "immediate_data": model.DEFAULT_IMMEDIATE_DATA,
    "initial_r2t": model.DEFAULT_INITIAL_R2T,
}
# Used in both modes when not given: how the pipeline is driven, not a measured input.
SETTING_DEFAULTS: dict[str, Any] = {
    "queue_depth": 1,
    "cpu_cores": 1,
    "per_round_ms": 0.0,
    "pdu_header_bytes": model.BHS_BYTES,
    "target_r2t_window": None,
}


def option_name(field_name: str) -> str:
    """The name of a request input as the command's option and the document name it."""
    return _OPTION_NAMES.get(field_name, field_name)


def flag(name: str) -> str:
    """The command-line flag of an option name: ``first_burst`` -> ``--first-burst``."""
    return "--" + name.replace("_", "-")


# ---- one configuration -------------------------------------------------------------------------


@dataclass
class Inputs:
    """One configuration's inputs: value, unit and source of each, by option name."""

    values: dict[str, Any] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def put(self, name: str, value: Any, source: str, unit: str = "") -> None:
        """Set (or override) one input."""
        self.values[name], self.sources[name] = value, source
        self.units[name] = unit or self.units.get(name, "")

    def drop(self, name: str) -> None:
        """Remove an input another flag replaces (e.g. the link rate when --per-64k-ms is given)."""
        for table in (self.values, self.units, self.sources):
            table.pop(name, None)


@dataclass(frozen=True)
class Configuration:
    """One configuration's values as the model takes them (dataset, defaults, then flags applied)."""

    rw: model.Direction
    r2t_pacing: model.Pacing
    bs_bytes: int
    one_way_ms: float
    per_64k_ms: float | None
    link_mbps: float | None
    device_ms: float
    device_mib_s: float | None
    device_max_iops: float | None
    device_request_bytes: int | None
    cpu_ms: float
    cpu_cores: int
    max_outstanding_r2t: int
    target_r2t_window: int | None
    per_round_ms: float
    pdu_header_bytes: int
    first_burst_bytes: int
    max_burst_bytes: int
    max_recv_data_segment_bytes: int
    immediate_data: bool
    initial_r2t: bool
    queue_depth: int
    sources: Mapping[str, str]

    @classmethod
    def of(cls, inputs: Inputs, request: ProjectionRequest) -> Configuration:
        """The resolved inputs' values (absent ones None), with the request's direction and pacing."""
        names = (*SWEPT_INPUTS, "device_request_bytes")
        given: dict[str, Any] = {f: inputs.values.get(option_name(f)) for f in names if f not in SELECTIONS}
        pacing = request.r2t_pacing or model.DEFAULT_ASSUMPTIONS.r2t_pacing
        return cls(rw=request.rw, r2t_pacing=pacing, sources=inputs.sources, **given)


def _network(c: Configuration) -> model.Network:
    """The network from the one-way latency and exactly one of per-64k time / link rate."""
    if c.link_mbps is not None:
        return model.Network(c.one_way_ms, link_bps=c.link_mbps * BITS_PER_MBIT)
    return model.Network(c.one_way_ms, per_64k_ms=c.per_64k_ms)


def _params(c: Configuration) -> model.IscsiParams:
    """The negotiated keys of one configuration."""
    return model.IscsiParams(
        first_burst_bytes=c.first_burst_bytes,
        max_burst_bytes=c.max_burst_bytes,
        immediate_data=c.immediate_data,
        initial_r2t=c.initial_r2t,
        max_outstanding_r2t=c.max_outstanding_r2t,
        max_recv_data_segment_bytes=c.max_recv_data_segment_bytes,
    )


def _assumptions(c: Configuration) -> model.Assumptions:
    """Pacing, target window, per-round cost and PDU header size of one configuration."""
    return model.Assumptions(
        r2t_pacing=c.r2t_pacing,
        target_r2t_window=c.target_r2t_window,
        per_round_ms=c.per_round_ms,
        pdu_header_bytes=c.pdu_header_bytes,
    )


def _device_rate(c: Configuration) -> float | None:
    """Device ceiling in bytes per second from --device-mib-s or --device-max-iops (None: derived)."""
    if c.device_mib_s is not None:
        return float(c.device_mib_s * model.MIB)
    if c.device_max_iops is not None:
        return float(c.device_max_iops * c.bs_bytes)
    return None


def _device_source(c: Configuration) -> str:
    """Where the device ceiling came from, for the JSON and the text."""
    if c.device_mib_s is not None:
        return c.sources.get("device_mib_s", "--device-mib-s (local throughput at this size)")
    if c.device_max_iops is not None:
        return "--device-max-iops"
    return "implied by --device-ms for one device request (give --device-mib-s for the measured one)"


def _bound_entry(name: str, iops: float, bs_bytes: int) -> dict[str, Any]:
    """One bound as JSON: IOPS and MiB/s, or nulls with the reason when there is no ceiling."""
    if math.isfinite(iops):
        return {"iops": iops, "mib_per_s": iops * bs_bytes / model.MIB}
    return {"iops": None, "mib_per_s": None, "note": UNBOUNDED_NOTE.get(name, "unbounded")}


def projection(c: Configuration) -> dict[str, Any]:
    """Compute one configuration's projection as a JSON-ready dict."""
    network = _network(c)
    b = model.operation_latency(
        c.rw,
        c.bs_bytes,
        _params(c),
        network,
        c.device_ms,
        c.cpu_ms,
        device_request_bytes=c.device_request_bytes,
        assumptions=_assumptions(c),
    )
    t = model.throughput(b, network, c.queue_depth, device_bytes_per_s=_device_rate(c), cpu_cores=c.cpu_cores)
    return {
        "direction": b.direction,
        "bs_bytes": b.bs_bytes,
        "r2t_pacing": b.r2t_pacing,
        "op_ms": b.total_ms,
        "terms": b.terms,
        "counts": model.breakdown_counts(b),
        "exposed_rounds": b.exposed_rounds,
        "queue_depth": t.queue_depth,
        "bounds": {name: _bound_entry(name, v, b.bs_bytes) for name, v in t.bounds.as_dict().items()},
        "device_ceiling_source": _device_source(c),
        "binding": t.binding,
        "iops": t.iops,
        "mib_per_s": t.mib_per_s,
        "loaded_latency_ms": t.loaded_latency_ms,
        "one_way_trips": b.one_way_trips,
    }


def format_text(result: dict[str, Any]) -> str:
    """Human-readable report of :func:`projection`'s result."""
    c = result["counts"]
    lines = [
        f"iSCSI {result['direction']} of {c['bs_bytes']} bytes: {c['immediate_bytes']} immediate, "
        f"{c['unsolicited_data_out_bytes']} unsolicited Data-Out, {c['solicited_bytes']} solicited "
        f"in {c['bursts']} R2T bursts (window {c['effective_r2t_window']}, {result['r2t_pacing']}, "
        f"{result['exposed_rounds']:.2f} round trips exposed), {c['data_pdus']} data PDUs",
        f"{'term':<26}{'ms':>10}",
    ]
    lines += [f"{name:<26}{ms:>10.3f}" for name, ms in result["terms"].items()]
    lines += [f"{'op time (ms)':<26}{result['op_ms']:>10.3f}"]
    lines.append(f"ceilings at queue depth {result['queue_depth']} (IOPS, MiB/s):")
    for name, entry in result["bounds"].items():
        shown = "-" if entry["iops"] is None else f"{entry['iops']:.3f}{entry['mib_per_s']:>12.3f}"
        mark = "  <- binding" if name == result["binding"] else ""
        lines.append(f"  {name:<24}{shown:>22}{mark}")
    lines.append(f"{'achieved':<26}{result['iops']:>10.3f} IOPS  {result['mib_per_s']:.3f} MiB/s")
    return "\n".join(lines)


# ---- inputs: a dataset's measurements, defaults and flags ---------------------------------------


@dataclass(frozen=True)
class Context:
    """Where a dataset projection's inputs come from: the dataset read once, and a run's settings."""

    dataset: str | None
    sources: Any  # projections.DatasetSources, imported only with a dataset (fast start-up without)
    settings: Mapping[str, Any]
    settings_file: str


def check_manual(request: ProjectionRequest) -> None:
    """Without a dataset: the block size, one-way latency and link speed must be given."""
    selected = [flag(d) for d in SELECTIONS if getattr(request, d) is not None]
    if selected:
        raise ReportError(f"{', '.join(selected)} choose(s) from a dataset: give --dataset or --run")
    missing = [flag(option_name(f)) for f in ("bs_bytes", "one_way_ms") if getattr(request, f) is None]
    if missing:
        raise ReportError(f"the following arguments are required without --dataset: {', '.join(missing)}")
    if request.per_64k_ms is None and request.link_mbps is None:
        raise ReportError("one of the arguments --per-64k-ms --link-mbps is required without --dataset")


def _context(request: ProjectionRequest) -> Context:
    """Read the dataset (if any) once for every configuration of the sweep."""
    if request.dataset is None:
        return Context(None, None, {}, "")
    from iscsi_report.analyses import projections
    from iscsi_report.core.measurements import open_dataset

    ds = open_dataset(request.raw_dir / request.dataset)
    read = {k: v for k, v in request.run_settings.items() if k != "bs_bytes"}
    sources = projections.read_sources(ds, **read)
    return Context(request.dataset, sources, request.run_settings, request.run_settings_file)


def _dataset_inputs(ctx: Context, combo: dict[str, Any], inputs: Inputs) -> None:
    """The dataset's measured inputs at this combination's block size and selections."""
    from iscsi_report.analyses import projections

    bs = combo.get("bs")
    if bs is None:
        bs = int(ctx.settings.get("bs_bytes", DEFAULT_DATASET_BS_BYTES))
        source = (
            f"{ctx.settings_file} bs_bytes" if "bs_bytes" in ctx.settings else "default (the blog's 2 MiB)"
        )
        inputs.put("bs", bs, source, "bytes")
    found = projections.dataset_inputs(
        ctx.sources,
        bs,
        network_name=combo.get("network"),
        device=combo.get("device"),
        parameter_set=combo.get("iscsi_parameters"),
    )
    for i in found.values():
        inputs.put("iscsi_parameters" if i.name == "parameter_set" else i.name, i.value, i.source, i.unit)


def resolve(ctx: Context, combo: dict[str, Any]) -> Inputs:
    """One configuration's inputs: the dataset's (or manual defaults), settings, then the flags."""
    inputs = Inputs()
    if ctx.dataset is not None:
        _dataset_inputs(ctx, combo, inputs)
    else:
        for name, value in MANUAL_DEFAULTS.items():
            inputs.put(name, value, "default (no --dataset)")
    for name, value in SETTING_DEFAULTS.items():
        inputs.put(name, value, "default")
    for name, value in combo.items():
        inputs.put(name, value, flag(name), "bytes" if name == "bs" else "")
    if "per_64k_ms" in combo:
        inputs.drop("link_mbps")
    if "device_max_iops" in combo:
        inputs.drop("device_mib_s")
    return inputs


def combinations(request: ProjectionRequest) -> tuple[list[str], list[dict[str, Any]]]:
    """(swept options, one dict of single values per combination): the product of the given values."""
    given = {option_name(f): values for f in SWEPT_INPUTS if (values := getattr(request, f)) is not None}
    swept = [name for name, values in given.items() if len(values) > 1]
    size = math.prod(len(values) for values in given.values())
    if size > MAX_COMBINATIONS:
        lists = " x ".join(f"{len(given[n])} {flag(n)}" for n in swept)
        raise ReportError(
            f"a sweep of {size:,} combinations ({lists}) is over the limit of {MAX_COMBINATIONS:,}"
        )
    names = list(given)
    return swept, [dict(zip(names, values, strict=True)) for values in itertools.product(*given.values())]


# ---- output ------------------------------------------------------------------------------------


def _input_entry(inputs: Inputs, name: str) -> dict[str, Any]:
    """One input as JSON: value, unit and source."""
    return {"value": inputs.values[name], "unit": inputs.units[name], "source": inputs.sources[name]}


def _shown(value: Any) -> str:
    """An input value as text: yes/no for booleans, 6 significant digits for floats."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _inputs_text(entries: dict[str, dict[str, Any]], title: str) -> list[str]:
    """Lines of name, value, unit and source."""
    lines = [title]
    for name, e in entries.items():
        lines.append(f"  {name:<24}{_shown(e['value']):>18} {e['unit']:<7}{e['source']}")
    return lines


def single(request: ProjectionRequest, ctx: Context, combo: dict[str, Any]) -> dict[str, Any]:
    """One configuration: the projection, the dataset and every input with its source."""
    inputs = resolve(ctx, combo)
    result = projection(Configuration.of(inputs, request))
    result |= ping_percentiles(request.ping_file, result)
    return {"dataset": ctx.dataset, "inputs": {n: _input_entry(inputs, n) for n in inputs.values}, **result}


def _ping_sample(path: Path) -> tuple[Any, str]:
    """A ping log's round trips (ms, finite) and its path as text; an error names a log of too few replies."""
    import numpy as np

    from iscsi_report.core.ingest import ping

    rtt = ping.parse(path).rtt_ms
    rtt = rtt[np.isfinite(rtt)]
    if rtt.size < MIN_PINGS:
        raise ReportError(
            f"{path}: {rtt.size} ping replies; a latency distribution needs at least {MIN_PINGS}"
        )
    return rtt, str(path)


def ping_percentiles(path: Path | None, result: dict[str, Any]) -> dict[str, Any]:
    """p50/p90/p99/p99.9 of one operation at queue depth 1 from a ping log (--ping), else {}.

    The one tail model (:func:`distribution.forecast_tail`) with the log as both today's network
    and the target's: each round meets one whole round trip drawn from it.
    """
    if path is None:
        return {}
    import numpy as np

    from iscsi_report.core import distribution

    if result["queue_depth"] != 1:
        return {"p50_ms": None, "p99_ms": None, "percentiles_note": "forecast at queue depth 1 only"}
    rtt, _ = _ping_sample(path)
    rounds = distribution.round_trips(result["one_way_trips"])
    d, rule = distribution.forecast_tail(result["op_ms"], rtt, rtt, [np.zeros(1)] * rounds)
    out: dict[str, Any] = {distribution.percentile_key(p): v for p, v in d.quantiles.items()}
    out["percentiles_rule"] = rule
    out["percentiles_note"] = (
        f"{rounds} round trips per operation, each drawn from {path} (no per-packet extra: one network "
        "only); the mean is the model's"
    )
    return out


def _row(swept: list[str], inputs: Inputs, result: dict[str, Any]) -> dict[str, Any]:
    """One sweep row: swept values, the results, every ceiling in MiB/s and the binding bound."""
    row = {name: inputs.values[name] for name in swept}
    row |= {"op_ms": result["op_ms"], "iops": result["iops"], "mib_per_s": result["mib_per_s"]}
    row |= {f"{b}_ceiling_mib_per_s": e["mib_per_s"] for b, e in result["bounds"].items()}
    return row | {"binding": result["binding"], "loaded_latency_ms": result["loaded_latency_ms"]}


def sweep(
    request: ProjectionRequest, ctx: Context, swept: list[str], combos: list[dict[str, Any]]
) -> dict[str, Any]:
    """Every combination: inputs common to all rows once, varying ones in the rows, one row each."""
    resolved = [resolve(ctx, c) for c in combos]
    results = [projection(Configuration.of(i, request)) for i in resolved]
    names = list(dict.fromkeys(n for i in resolved for n in i.values))
    varying = [n for n in names if n not in swept and len({repr(i.values.get(n)) for i in resolved}) > 1]
    first = resolved[0]
    common = {n: _input_entry(first, n) for n in names if n not in swept and n not in varying}
    rows = [
        _row(swept, i, r) | {n: i.values.get(n) for n in varying}
        for i, r in zip(resolved, results, strict=True)
    ]
    sources = {n: sorted({i.sources[n] for i in resolved if n in i.sources}) for n in [*swept, *varying]}
    return {"dataset": ctx.dataset, "swept": swept, "inputs": common, "row_sources": sources, "rows": rows}


def sweep_text(doc: dict[str, Any]) -> str:
    """The sweep as text: common inputs with sources, then the table (one row per combination)."""
    import pandas as pd

    lines = _inputs_text(doc["inputs"], "inputs (the same in every row):")
    lines.append("varying per row (sources):")
    lines += [f"  {name:<24}{' | '.join(srcs)}" for name, srcs in doc["row_sources"].items()]
    table = pd.DataFrame(doc["rows"]).drop(columns=["loaded_latency_ms"])
    table = table.map(lambda v: "-" if v is None else v)
    table.columns = [c.replace("_ceiling_mib_per_s", " MiB/s cap") for c in table.columns]
    lines.append(f"{len(table)} combinations (MiB/s = the smallest cap; binding names it):")
    lines.append(table.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="-"))
    return "\n".join(lines)


def answer(request: ProjectionRequest) -> dict[str, Any]:
    """The projection document: one configuration, or a sweep when an input has several values.

    ReportError (naming the flags) when inputs are missing or inconsistent.
    """
    if request.dataset is None:
        check_manual(request)
    elif (ds := _engine_dataset(request)) is not None or request.today:
        return engine_answer(request, ds)
    if request.engine_version is not None:
        raise ReportError(
            "--engine-version: the forecasting engine runs from a dataset of labelled iSCSI runs "
            "(--dataset NAME); this projection uses the latency model's own inputs"
        )
    ctx = _context(request)
    swept, combos = combinations(request)
    return sweep(request, ctx, swept, combos) if swept else single(request, ctx, combos[0])


def as_text(doc: dict[str, Any]) -> str:
    """:func:`answer`'s document for people: the inputs with their sources, then the results."""
    if "r2t_pacing_source" in doc or "engine_rows" in doc:
        from iscsi_report.analyses import dataset_forecast

        return dataset_forecast.text(doc) if "engine_rows" not in doc else engine_sweep_text(doc)
    if "rows" in doc:
        return sweep_text(doc)
    title = f"inputs (dataset {doc['dataset']}):" if doc["dataset"] else "inputs:"
    return "\n".join([*_inputs_text(doc["inputs"], title), format_text(doc)])


# ---- a dataset of iSCSI runs: the forecasting engine ---------------------------------------------


def _engine_dataset(request: ProjectionRequest) -> Any:
    """The dataset's measurements when it holds labelled iSCSI runs (the engine forecasts it), else None."""
    from iscsi_report.analyses import dataset_forecast
    from iscsi_report.core.measurements import open_dataset

    ds = open_dataset(request.raw_dir / str(request.dataset))
    return ds if dataset_forecast.has_iscsi_runs(ds) else None


ENGINE_ROW = (
    "op_ms",
    "ci_low_ms",
    "ci_high_ms",
    "p50_ms",
    "p99_ms",
    "iops",
    "mib_per_s",
    "binding",
    "r2t_pacing",
)


def engine_answer(request: ProjectionRequest, ds: Any) -> dict[str, Any]:
    """``project --dataset`` on iSCSI runs (``ds``): one engine forecast per combination."""
    from iscsi_report.analyses import dataset_forecast as df
    from iscsi_report.analyses import forecast_matrix
    from iscsi_report.core import forecast

    if ds is None:
        raise ReportError(f"--today: dataset {request.dataset} has no fio files labelled as iSCSI runs")
    target_ping = None if request.ping_file is None else df.TargetPing(*_ping_sample(request.ping_file))
    swept, combos = combinations(request)
    df.refuse_unsupported(combos[0])
    selection = df.parse_today(request.today)
    seen: dict[str, Any] = {}  # each capture's pacing counts, read once for the whole sweep
    version = forecast.ENGINE_VERSION if request.engine_version is None else request.engine_version
    if version not in df.BLIND_SWEEPS_BY_VERSION:
        known = ", ".join(str(v) for v in df.BLIND_SWEEPS_BY_VERSION)
        raise ReportError(f"--engine-version {version}: expected one of {known}")
    sweeps = df.BLIND_SWEEPS_BY_VERSION[version]  # the version's own error, from the forecasts it froze
    errors = df.blind_errors(request.raw_dir, request.preregistered_dir, sweeps)
    # today's captured writes, read once for the whole sweep (version 3's host time per round)
    first = (
        forecast_matrix.captured_first_r2t_ms(ds) if version >= forecast_matrix.ROUND_HOST_VERSION else None
    )
    tails = df.tail_errors(request.raw_dir) if target_ping is not None else {}  # the tail model's own
    docs = [
        df.document(
            ds,
            replace(
                df.prepare(
                    ds,
                    combo,
                    request.rw,
                    selection,
                    request.r2t_pacing,
                    seen,
                    errors,
                    target_ping,
                    version,
                    first,
                ),
                tail_error=tails,
            ),
        )
        for combo in combos
    ]
    if not swept:
        return docs[0]
    rows = [
        {name: combo[name] for name in swept}
        | {k: d[k] for k in ENGINE_ROW}
        | {"today": d["today"]["settings"]}
        for combo, d in zip(combos, docs, strict=True)
    ]
    return {"dataset": ds.name, "method": docs[0]["method"], "swept": swept, "engine_rows": rows}


def engine_sweep_text(doc: dict[str, Any]) -> str:
    """An engine sweep as a table, one row per combination."""
    import pandas as pd

    table = pd.DataFrame(doc["engine_rows"])
    return f"{doc['method']}, dataset {doc['dataset']}:\n" + table.to_string(
        index=False, float_format=lambda v: f"{v:.3f}"
    )
