"""``iscsi-report project``: one iSCSI operation's latency terms, IOPS, MiB/s and queue bounds.

The options become one typed request (:func:`request_from_args`); the projection itself is
``analyses.projection_request``, which knows nothing of argparse.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iscsi_report.analyses import projection_request as pr
from iscsi_report.cli.capture import positive_int
from iscsi_report.core import model
from iscsi_report.core.errors import ReportError
from iscsi_report.core.keep import PARSE_CACHE_ENV
from iscsi_report.core.paths import Project

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


# Upper bounds of the options: beyond them a value is a typo, not a network, disk or session.
MAX_MS = 3_600_000.0  # one hour for any time per operation or one-way trip
MAX_LINK_MBPS = 10_000_000.0  # 10 Tbit/s
BITS_PER_64K = 65_536 * 8
# The least time 64 KiB can take on the link: at MAX_LINK_MBPS (a faster link is refused alike).
MIN_PER_64K_MS = BITS_PER_64K / (MAX_LINK_MBPS * 1e6) * 1e3
MAX_DEVICE_MIB_S = 1_000_000.0  # about 1 TB/s
MAX_DEVICE_IOPS = 1e9
MAX_QUEUE_DEPTH = 65_536
MAX_CPU_CORES = 4_096
MAX_R2T = 65_535  # RFC 7143: MaxOutstandingR2T is 1 to 65535
MAX_BS_BYTES = 2**31 - 4096  # the most one read or write call moves on Linux (fio cannot do more)
MAX_KEY_BYTES = 2**24 - 1  # RFC 7143: burst and segment lengths are 512 to 2**24 - 1
MAX_HEADER_BYTES = 1_048_576
PLAIN_NUMBER = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$")


def _number(minimum: float, inclusive: bool, maximum: float = MAX_MS) -> Any:
    """argparse type: a finite float above (or at) ``minimum`` and at most ``maximum``.

    Written as a plain decimal number: ``1_000`` (Python's digit grouping) and ``nan`` are refused.
    """

    def convert(text: str) -> float:
        if not PLAIN_NUMBER.match(text):
            raise argparse.ArgumentTypeError(f"{text!r} is not a plain decimal number")
        value = float(text)
        ok = value >= minimum if inclusive else value > minimum
        if not ok or not math.isfinite(value) or value > maximum:
            bound = ">=" if inclusive else ">"
            raise argparse.ArgumentTypeError(
                f"{text!r} must be a finite number {bound} {minimum:g} and at most {maximum:g}"
            )
        return value

    return convert


def _bounded_int(maximum: int) -> Callable[[str], int]:
    """argparse type: a whole number from 1 to ``maximum``."""

    def convert(text: str) -> int:
        value = positive_int(text)
        if value > maximum:
            raise argparse.ArgumentTypeError(f"{text!r} must be at most {maximum:,}")
        return value

    return convert


def _header_bytes(text: str) -> int:
    """argparse type: header bytes per PDU, 0 (the blog's model) to MAX_HEADER_BYTES."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of bytes") from None
    if not 0 <= value <= MAX_HEADER_BYTES:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 to {MAX_HEADER_BYTES:,} bytes")
    return value


def _bounded_size(maximum: int) -> Callable[[str], int]:
    """argparse type: a size (see parse_size) of at most ``maximum`` bytes."""

    def convert(text: str) -> int:
        value = parse_size(text)
        if value > maximum:
            raise argparse.ArgumentTypeError(f"{text!r} is more than {maximum:,} bytes")
        return value

    return convert


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


# Keys of a params file's model/projections notebook overrides that shape a dataset projection.
RUN_SETTINGS = ("ping_interval_s", "cpu_scenario", "cpu_reference_bs_bytes", "bs_bytes")
RUN_NOTEBOOKS = ("model", "projections")
LIST_HELP = "; a comma list sweeps"


def _dataset_options(parser: argparse.ArgumentParser) -> None:
    """--dataset, --run and the selections of a dataset projection."""
    add = parser.add_argument
    add("--dataset", default=None, help="start from this dataset's measured inputs (data/raw/NAME)")
    add(
        "--today",
        default="",
        help="with a dataset of iSCSI runs: the settings group that is today's system, as "
        "LABEL=VALUE pairs (one_way_delay_ms, link_mbps, r2t_window, iscsi_parameters); default: "
        "the group closest to the configuration asked for (the target's own runs are never read)",
    )
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
    nonneg = _listed(_number(0.0, True))
    count, size, yes_no = (
        _listed(_bounded_int(MAX_R2T)),
        _listed(_bounded_size(MAX_KEY_BYTES)),
        _listed(_yes_no),
    )
    add = parser.add_argument
    _dataset_options(parser)
    add(
        "--bs",
        type=_listed(_bounded_size(MAX_BS_BYTES)),
        default=None,
        help=f"block size: {SIZE_HELP} (with --dataset: default 2MiB)",
    )
    add("--rw", choices=("write", "read"), default="write", help="operation (default write)")
    add("--read", action="store_const", const="read", dest="rw", help="same as --rw read")
    add("--one-way-ms", type=nonneg, default=None, help=f"one-way network latency (ms){LIST_HELP}")
    speed = parser.add_mutually_exclusive_group()
    speed.add_argument(
        "--per-64k-ms",
        type=_listed(_number(MIN_PER_64K_MS, True)),
        help=f"ms to transmit 64 KiB on the link (at least {MIN_PER_64K_MS:g}: 10 Tbit/s)",
    )
    speed.add_argument(
        "--link-mbps",
        type=_listed(_number(0.0, False, MAX_LINK_MBPS)),
        help="link speed in megabits (10**6) per s",
    )
    add("--device-ms", type=nonneg, default=None, help="synchronous device ms per op (default 0)")
    device = parser.add_mutually_exclusive_group()
    device.add_argument(
        "--device-mib-s",
        type=_listed(_number(0.0, False, MAX_DEVICE_MIB_S)),
        default=None,
        help="the device's local throughput at this request size, MiB/s (its ceiling); "
        "default: the rate --device-ms implies",
    )
    device.add_argument(
        "--device-max-iops",
        type=_listed(_number(0.0, False, MAX_DEVICE_IOPS)),
        default=None,
        help="device IOPS ceiling",
    )
    add("--cpu-ms", type=nonneg, default=None, help="CPU ms per op (default 0: no CPU ceiling)")
    add(
        "--cpu-cores",
        type=_listed(_bounded_int(MAX_CPU_CORES)),
        default=None,
        help="cores for the CPU ceiling (default 1)",
    )
    add("--max-outstanding-r2t", type=count, default=None, help="negotiated MaxOutstandingR2T (default 1)")
    add(
        "--r2t-pacing",
        choices=model.PACINGS,
        default=None,
        help="sliding (LIO: a new R2T as each burst completes; the default without a capture), "
        "serial (stock tgt: one at a time) or lockstep (the blog's model: groups wait for the "
        "previous group's data); with a dataset of iSCSI runs it is read from its captures",
    )
    add(
        "--engine-version",
        type=int,
        default=None,
        help="with a dataset of iSCSI runs: the forecasting engine's version, 2 (the default) or 3 "
        "(today's host time per R2T round read from today's own captures; it passed the seventh "
        "blind sweep, declared for it); the interval's own error comes from that version's blind sweeps",
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
        type=_listed(_header_bytes),
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
    add(
        "--queue-depth",
        type=_listed(_bounded_int(MAX_QUEUE_DEPTH)),
        default=None,
        help="operations in flight (default 1)",
    )
    add(
        "--ping",
        type=Path,
        default=None,
        metavar="FILE",
        help="a ping log (at the protocol's spacing) of the network being forecast: p50/p90/p99/p99.9 of "
        "the time per operation come from it (with a dataset of iSCSI runs, over today's ping, and it "
        "sets the target's one-way delay unless --one-way-ms does)",
    )
    add("--json", action="store_true", help="print one JSON object (strict JSON) instead of text")


def _run_settings(args: argparse.Namespace) -> tuple[str | None, dict[str, Any], str]:
    """(dataset, model settings, params file) from --run; the dataset alone without it."""
    if args.run is None:
        return args.dataset, {}, ""
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


def request_from_args(args: argparse.Namespace) -> pr.ProjectionRequest:
    """The one place the parsed options become a typed request (a --run params file is read here)."""
    dataset, settings, settings_file = _run_settings(args)
    given = {f: getattr(args, pr.option_name(f)) for f in pr.SWEPT_INPUTS}  # each option's dest
    return pr.ProjectionRequest(
        **{f: None if values is None else tuple(values) for f, values in given.items()},
        rw=args.rw,
        r2t_pacing=args.r2t_pacing,
        today=args.today,
        engine_version=args.engine_version,
        ping_file=args.ping,
        dataset=dataset,
        raw_dir=Project.at(args.root).raw_dir,
        preregistered_dir=Project.at(args.root).preregistered_dir,
        run_settings=settings,
        run_settings_file=settings_file,
    )


def run(args: argparse.Namespace) -> int:
    """Print the projection(s); exit 2 with a one-line message if the inputs are inconsistent."""
    if args.dataset is not None or args.run is not None:  # parses kept across calls, as the batch does
        os.environ.setdefault(PARSE_CACHE_ENV, str(Project.at(args.root).cache_dir / "parsed"))
    try:
        doc = pr.answer(request_from_args(args))
        text = json.dumps(doc, indent=2, allow_nan=False) if args.json else pr.as_text(doc)
    except (ReportError, OverflowError, ValueError) as exc:
        print(f"iscsi-report project: error: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0
