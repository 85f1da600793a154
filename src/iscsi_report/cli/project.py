"""``iscsi-report project``: one iSCSI operation's latency terms, IOPS, MiB/s and queue bounds."""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from iscsi_report.core import model
from iscsi_report.core.errors import ReportError

BITS_PER_MEGABIT = 1_000_000  # link speeds are decimal megabits, as iperf3 prints them
SIZE_UNITS = {"": 1, "b": 1, "k": model.KIB, "kib": model.KIB, "m": model.MIB, "mib": model.MIB}
SIZE_UNITS |= {"g": 2**30, "gib": 2**30}
SIZE_PATTERN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")
SIZE_HELP = "bytes, or with a binary suffix: 64k, 64KiB, 2M, 2MiB (k/M/G mean KiB/MiB/GiB as in fio)"
YES_NO = {"yes": True, "no": False}


def parse_size(text: str) -> int:
    """Bytes from ``2MiB``, ``256KiB``, ``64k``, ``2M`` or plain digits; k/M/G are binary."""
    match = SIZE_PATTERN.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size; expected {SIZE_HELP}")
    number, unit = match.groups()
    factor = SIZE_UNITS.get(unit.lower())
    if factor is None:
        raise argparse.ArgumentTypeError(
            f"{text!r}: unknown unit {unit!r}; use one of k, KiB, M, MiB, G, GiB "
            "(kB/MB are refused as ambiguous between 1000 and 1024)"
        )
    value = float(number) * factor
    if value != int(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive whole number of bytes")
    return int(value)


def _number(minimum: float, inclusive: bool) -> Any:
    """argparse type: a finite float above (or at) ``minimum``."""

    def convert(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        ok = value >= minimum if inclusive else value > minimum
        if not ok or value != value or value in (float("inf"), float("-inf")):
            bound = ">=" if inclusive else ">"
            raise argparse.ArgumentTypeError(f"{text!r} must be a finite number {bound} {minimum}")
        return value

    return convert


def _count(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be an integer >= 1")
    return value


def _yes_no(text: str) -> bool:
    """argparse type: ``yes`` or ``no`` (as iSCSI keys are written)."""
    try:
        return YES_NO[text.lower()]
    except KeyError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected yes or no") from None


def _listed(convert: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    """argparse type: one value, or a comma list of values to sweep (each converted)."""

    def convert_all(text: str) -> list[Any]:
        parts = [p.strip() for p in text.split(",")]
        if any(not p for p in parts):
            raise argparse.ArgumentTypeError(f"{text!r}: empty item in a comma list")
        return [convert(p) for p in parts]

    return convert_all


def _name(text: str) -> str:
    """argparse type: a label value (network, device or parameter set name)."""
    return text


# Used without --dataset when a flag is not given (RFC 7143 keys, no device or CPU time).
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
# Dataset selections: the flag's dest -> the name projections.dataset_inputs uses.
SELECTION_FLAGS = {"network": "network", "device": "device", "iscsi_parameters": "parameter_set"}
# Options that take a comma list (a sweep); the others are single values.
SWEEPABLE = (
    "bs",
    *SELECTION_FLAGS,
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
    "first_burst",
    "max_burst",
    "max_recv_data_segment",
    "immediate_data",
    "initial_r2t",
    "queue_depth",
)
LIST_HELP = "; a comma list sweeps"


def _dataset_options(parser: argparse.ArgumentParser) -> None:
    """--dataset, --run and the selections of a dataset projection."""
    add = parser.add_argument
    add("--dataset", default=None, help="start from this dataset's measured inputs (data/raw/NAME)")
    add(
        "--run",
        default=None,
        help="take the dataset and the model settings (ping interval, CPU scenario, block size) "
        "from params/RUN.yaml",
    )
    for flag, what in (("--network", "network"), ("--device", "device"), ("--iscsi-parameters", "set")):
        add(flag, type=_listed(_name), default=None, help=f"the dataset's {what} to use{LIST_HELP}")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the projection options to the ``project`` subcommand parser."""
    parser.description = (
        "Project one iSCSI write (or read) with the latency model: each term, the PDU counts, and "
        "at --queue-depth the throughput as the smallest of Little's law, the link, the device's "
        "local throughput and the CPU, naming the binding bound. MiB/s means 2**20 bytes per s. "
        "With --dataset every input starts from that dataset's measurements (each printed with its "
        "source files) and any flag overrides one input; comma lists sweep into a table."
    )
    nonneg, positive = _listed(_number(0.0, True)), _listed(_number(0.0, False))
    count, size, yes_no = _listed(_count), _listed(parse_size), _listed(_yes_no)
    add = parser.add_argument
    _dataset_options(parser)
    add("--bs", type=size, default=None, help=f"block size: {SIZE_HELP} (with --dataset: default 2MiB)")
    add("--rw", choices=("write", "read"), default="write", help="operation (default write)")
    add("--read", action="store_const", const="read", dest="rw", help="same as --rw read")
    add("--one-way-ms", type=nonneg, default=None, help=f"one-way network latency (ms){LIST_HELP}")
    speed = parser.add_mutually_exclusive_group()
    speed.add_argument("--per-64k-ms", type=positive, help="ms to transmit 64 KiB on the link")
    speed.add_argument("--link-mbps", type=positive, help="link speed in megabits (10**6) per s")
    add("--device-ms", type=nonneg, default=None, help="synchronous device ms per op (default 0)")
    device = parser.add_mutually_exclusive_group()
    device.add_argument(
        "--device-mib-s",
        type=positive,
        default=None,
        help="the device's local throughput at this request size, MiB/s (its ceiling); "
        "default: the rate --device-ms implies",
    )
    device.add_argument("--device-max-iops", type=positive, default=None, help="device IOPS ceiling")
    add("--cpu-ms", type=nonneg, default=None, help="CPU ms per op (default 0: no CPU ceiling)")
    add("--cpu-cores", type=count, default=None, help="cores for the CPU ceiling (default 1)")
    add("--max-outstanding-r2t", type=count, default=None, help="negotiated MaxOutstandingR2T (default 1)")
    add(
        "--r2t-pacing",
        choices=model.PACINGS,
        default=model.DEFAULT_ASSUMPTIONS.r2t_pacing,
        help="sliding (LIO: a new R2T as each burst completes, default), serial (tgt: one at a "
        "time) or lockstep (the blog's model: groups wait for the previous group's data)",
    )
    add("--target-r2t-window", type=count, default=None, help="R2Ts the target keeps outstanding")
    add(
        "--per-round-ms",
        type=nonneg,
        default=None,
        help="host time per R2T exchange (default 0); measure it on your hosts: in a capture, a "
        "write's command to its first R2T, less ping's round trip (the lab's path check)",
    )
    add(
        "--pdu-header-bytes",
        type=_listed(int),
        default=None,
        help=f"header bytes per PDU on the wire (default {model.BHS_BYTES})",
    )
    add("--first-burst", type=size, default=None, help="FirstBurstLength (default 64KiB)")
    add("--max-burst", type=size, default=None, help="MaxBurstLength (default 256KiB)")
    add(
        "--max-recv-data-segment",
        type=size,
        default=None,
        help="MaxRecvDataSegmentLength: caps immediate data and every data PDU (default 8192, RFC 7143)",
    )
    add("--immediate-data", type=yes_no, default=None, metavar="yes|no")
    add("--initial-r2t", type=yes_no, default=None, metavar="yes|no")
    add("--queue-depth", type=count, default=None, help="operations in flight (default 1)")
    add("--json", action="store_true", help="print one JSON object (strict JSON) instead of text")


def _network(args: argparse.Namespace) -> model.Network:
    """The network from --one-way-ms and exactly one of --per-64k-ms / --link-mbps."""
    if args.link_mbps is not None:
        return model.Network(args.one_way_ms, link_bps=args.link_mbps * BITS_PER_MEGABIT)
    return model.Network(args.one_way_ms, per_64k_ms=args.per_64k_ms)


def _params(args: argparse.Namespace) -> model.IscsiParams:
    """The negotiated keys of one configuration."""
    return model.IscsiParams(
        first_burst_bytes=args.first_burst,
        max_burst_bytes=args.max_burst,
        immediate_data=args.immediate_data,
        initial_r2t=args.initial_r2t,
        max_outstanding_r2t=args.max_outstanding_r2t,
        max_recv_data_segment_bytes=args.max_recv_data_segment,
    )


def _assumptions(args: argparse.Namespace) -> model.Assumptions:
    """Pacing, target window, per-round cost and PDU header size of one configuration."""
    return model.Assumptions(
        r2t_pacing=args.r2t_pacing,
        target_r2t_window=args.target_r2t_window,
        per_round_ms=args.per_round_ms,
        pdu_header_bytes=args.pdu_header_bytes,
    )


def _device_rate(args: argparse.Namespace) -> float | None:
    """Device ceiling in bytes per second from --device-mib-s or --device-max-iops (None: derived)."""
    if args.device_mib_s is not None:
        return float(args.device_mib_s * model.MIB)
    if args.device_max_iops is not None:
        return float(args.device_max_iops * args.bs)
    return None


def _device_source(args: argparse.Namespace) -> str:
    """Where the device ceiling came from, for the JSON and the text."""
    given: dict[str, str] = getattr(args, "sources", {})
    if args.device_mib_s is not None:
        return given.get("device_mib_s", "--device-mib-s (local throughput at this size)")
    if args.device_max_iops is not None:
        return "--device-max-iops"
    return "implied by --device-ms for one device request (give --device-mib-s for the measured one)"


UNBOUNDED_NOTE = {"cpu": "no CPU time given (--cpu-ms 0): no CPU ceiling"}


def _bound_entry(name: str, iops: float, bs_bytes: int) -> dict[str, Any]:
    """One bound as JSON: IOPS and MiB/s, or nulls with the reason when there is no ceiling."""
    if math.isfinite(iops):
        return {"iops": iops, "mib_per_s": iops * bs_bytes / model.MIB}
    return {"iops": None, "mib_per_s": None, "note": UNBOUNDED_NOTE.get(name, "unbounded")}


def projection(args: argparse.Namespace) -> dict[str, Any]:
    """Compute one configuration's projection as a JSON-ready dict (scalar inputs in ``args``)."""
    network = _network(args)
    b = model.operation_latency(
        args.rw,
        args.bs,
        _params(args),
        network,
        args.device_ms,
        args.cpu_ms,
        device_request_bytes=getattr(args, "device_request_bytes", None),
        assumptions=_assumptions(args),
    )
    t = model.throughput(
        b, network, args.queue_depth, device_bytes_per_s=_device_rate(args), cpu_cores=args.cpu_cores
    )
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
        "device_ceiling_source": _device_source(args),
        "binding": t.binding,
        "iops": t.iops,
        "mib_per_s": t.mib_per_s,
        "loaded_latency_ms": t.loaded_latency_ms,
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

DEFAULT_DATASET_BS_BYTES = 2 * model.MIB  # the blog's validation writes
# Keys of a params file's model/projections notebook overrides that shape a dataset projection.
RUN_SETTINGS = ("ping_interval_s", "cpu_scenario", "cpu_reference_bs_bytes", "bs_bytes")
RUN_NOTEBOOKS = ("model", "projections")


@dataclass
class Inputs:
    """One configuration's inputs: value, unit and source of each, by the flag's dest name."""

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

    def namespace(self, args: argparse.Namespace) -> argparse.Namespace:
        """Scalar inputs as :func:`projection` reads them."""
        fields = {d: self.values.get(d) for d in (*SWEEPABLE, "device_request_bytes")}
        return argparse.Namespace(**fields, rw=args.rw, r2t_pacing=args.r2t_pacing, sources=self.sources)


@dataclass(frozen=True)
class Context:
    """Where a dataset projection's inputs come from: the dataset read once, and a run's settings."""

    dataset: str | None
    sources: Any  # projections.DatasetSources, imported only with --dataset (fast start-up without)
    settings: dict[str, Any]
    settings_file: str


def _flag(dest: str) -> str:
    """The command-line flag of an argparse dest."""
    return "--" + dest.replace("_", "-")


def _run_settings(args: argparse.Namespace) -> tuple[str | None, dict[str, Any], str]:
    """(dataset, model settings, params file) from --run; the dataset alone without it."""
    if args.run is None:
        return args.dataset, {}, ""
    from iscsi_report.core.paths import Project
    from iscsi_report.pipeline.params import load_run

    path = Project.at(args.root).params_dir / f"{args.run}.yaml"
    if not path.is_file():
        raise ReportError(f"{path}: no such params file (from --run {args.run})")
    spec = load_run(path)
    if not spec.dataset:
        raise ReportError(f"{path}: run {args.run} reads no dataset (dataset: null)")
    if args.dataset is not None and args.dataset != spec.dataset:
        raise ReportError(f"{path}: run {args.run} reads dataset {spec.dataset}, not {args.dataset}")
    settings: dict[str, Any] = {}
    for notebook in RUN_NOTEBOOKS:
        settings |= {k: v for k, v in spec.notebooks.get(notebook, {}).items() if k in RUN_SETTINGS}
    return spec.dataset, settings, str(path)


def _context(args: argparse.Namespace) -> Context:
    """Read the dataset (if any) once for every configuration of the sweep."""
    name, settings, where = _run_settings(args)
    if name is None:
        return Context(None, None, {}, "")
    from iscsi_report.analyses import projections
    from iscsi_report.core.measurements import open_dataset
    from iscsi_report.core.paths import Project

    ds = open_dataset(Project.at(args.root).raw_dir / name)
    read = {k: v for k, v in settings.items() if k != "bs_bytes"}
    return Context(name, projections.read_sources(ds, **read), settings, where)


def _check_manual(args: argparse.Namespace) -> None:
    """Without --dataset: the block size, one-way latency and link speed must be given."""
    selected = [_flag(d) for d in SELECTION_FLAGS if getattr(args, d) is not None]
    if selected:
        raise ReportError(f"{', '.join(selected)} choose(s) from a dataset: give --dataset or --run")
    missing = [_flag(d) for d in ("bs", "one_way_ms") if getattr(args, d) is None]
    if missing:
        raise ReportError(f"the following arguments are required without --dataset: {', '.join(missing)}")
    if args.per_64k_ms is None and args.link_mbps is None:
        raise ReportError("one of the arguments --per-64k-ms --link-mbps is required without --dataset")


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
        inputs.put(name, value, _flag(name), "bytes" if name == "bs" else "")
    if "per_64k_ms" in combo:
        inputs.drop("link_mbps")
    if "device_max_iops" in combo:
        inputs.drop("device_mib_s")
    return inputs


def combinations(args: argparse.Namespace) -> tuple[list[str], list[dict[str, Any]]]:
    """(swept flags, one dict of single values per combination): the product of the comma lists."""
    given = {d: getattr(args, d) for d in SWEEPABLE if getattr(args, d) is not None}
    swept = [d for d, values in given.items() if len(values) > 1]
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


def single(args: argparse.Namespace, ctx: Context, combo: dict[str, Any]) -> dict[str, Any]:
    """One configuration: the projection, the dataset and every input with its source."""
    inputs = resolve(ctx, combo)
    result = projection(inputs.namespace(args))
    return {"dataset": ctx.dataset, "inputs": {n: _input_entry(inputs, n) for n in inputs.values}, **result}


def _row(swept: list[str], inputs: Inputs, result: dict[str, Any]) -> dict[str, Any]:
    """One sweep row: swept values, the results, every ceiling in MiB/s and the binding bound."""
    row = {name: inputs.values[name] for name in swept}
    row |= {"op_ms": result["op_ms"], "iops": result["iops"], "mib_per_s": result["mib_per_s"]}
    row |= {f"{b}_ceiling_mib_per_s": e["mib_per_s"] for b, e in result["bounds"].items()}
    return row | {"binding": result["binding"], "loaded_latency_ms": result["loaded_latency_ms"]}


def sweep(
    args: argparse.Namespace, ctx: Context, swept: list[str], combos: list[dict[str, Any]]
) -> dict[str, Any]:
    """Every combination: inputs common to all rows once, varying ones in the rows, one row each."""
    resolved = [resolve(ctx, c) for c in combos]
    results = [projection(i.namespace(args)) for i in resolved]
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


def run(args: argparse.Namespace) -> int:
    """Print the projection(s); exit 2 with a one-line message if the inputs are inconsistent."""
    try:
        if args.dataset is None and args.run is None:
            _check_manual(args)
        ctx = _context(args)
        swept, combos = combinations(args)
        if swept:
            doc = sweep(args, ctx, swept, combos)
            text = json.dumps(doc, indent=2, allow_nan=False) if args.json else sweep_text(doc)
        else:
            doc = single(args, ctx, combos[0])
            if args.json:
                text = json.dumps(doc, indent=2, allow_nan=False)
            else:
                title = f"inputs (dataset {ctx.dataset}):" if ctx.dataset else "inputs:"
                text = "\n".join([*_inputs_text(doc["inputs"], title), format_text(doc)])
    except (ReportError, OverflowError, ValueError) as exc:
        print(f"iscsi-report project: error: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0
