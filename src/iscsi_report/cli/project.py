"""``iscsi-report project``: one iSCSI operation's latency terms, IOPS, MiB/s and queue bounds."""

from __future__ import annotations

import argparse
import json
import re
import sys
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


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the projection options to the ``project`` subcommand parser."""
    parser.description = (
        "Project one iSCSI write (or --read) with the R2T wave model: each term, op time, IOPS "
        "and MiB/s (2**20 bytes), and with --queue-depth the latency/link/device/CPU IOPS bounds."
    )
    nonneg, positive = _number(0.0, True), _number(0.0, False)
    add = parser.add_argument
    add("--bs", type=parse_size, required=True, help=f"block size: {SIZE_HELP}")
    add("--one-way-ms", type=nonneg, required=True, help="one-way network latency (ms)")
    speed = parser.add_mutually_exclusive_group(required=True)
    speed.add_argument("--per-64k-ms", type=positive, help="ms to transmit 64 KiB on the link")
    speed.add_argument("--link-mbps", type=positive, help="link speed in megabits (10**6) per s")
    add("--device-ms", type=nonneg, default=0.0, help="synchronous device ms per op (default 0)")
    add("--cpu-ms", type=nonneg, default=0.0, help="synchronous CPU ms per op (default 0)")
    add(
        "--max-outstanding-r2t",
        type=_count,
        default=model.DEFAULT_MAX_OUTSTANDING_R2T,
        help="MaxOutstandingR2T: R2Ts in flight per wave (default 1)",
    )
    first, most = model.DEFAULT_FIRST_BURST_BYTES, model.DEFAULT_MAX_BURST_BYTES
    add("--first-burst", type=parse_size, default=first, help="FirstBurstLength (default 64KiB)")
    add("--max-burst", type=parse_size, default=most, help="MaxBurstLength (default 256KiB)")
    add(
        "--max-recv-data-segment",
        type=parse_size,
        default=None,
        help="MaxRecvDataSegmentLength; caps immediate data under InitialR2T=Yes (default: none)",
    )
    add("--immediate-data", type=_yes_no, default=True, metavar="yes|no", help="default yes")
    add("--initial-r2t", type=_yes_no, default=False, metavar="yes|no", help="default no")
    add("--queue-depth", type=_count, default=None, help="also compute throughput bounds")
    add("--device-max-iops", type=positive, default=None, help="device IOPS ceiling for bounds")
    add("--cpu-cores", type=_count, default=1, help="cores for the CPU bound (default 1)")
    add("--read", action="store_true", help="project a read instead of a write")
    add("--json", action="store_true", help="print one JSON object instead of text")


def _network(args: argparse.Namespace) -> model.Network:
    """The network from --one-way-ms and exactly one of --per-64k-ms / --link-mbps."""
    if args.link_mbps is not None:
        return model.Network(args.one_way_ms, link_bps=args.link_mbps * BITS_PER_MEGABIT)
    return model.Network(args.one_way_ms, per_64k_ms=args.per_64k_ms)


def _params(args: argparse.Namespace) -> model.IscsiParams:
    """The negotiated keys from the command line."""
    return model.IscsiParams(
        first_burst_bytes=args.first_burst,
        max_burst_bytes=args.max_burst,
        immediate_data=args.immediate_data,
        initial_r2t=args.initial_r2t,
        max_outstanding_r2t=args.max_outstanding_r2t,
        max_recv_data_segment_bytes=args.max_recv_data_segment,
    )


def projection(args: argparse.Namespace) -> dict[str, Any]:
    """Compute the projection as a JSON-ready dict (the ``--json`` output)."""
    network = _network(args)
    latency = model.read_latency if args.read else model.write_latency
    b = latency(args.bs, _params(args), network, args.device_ms, args.cpu_ms)
    out: dict[str, Any] = {
        "direction": b.direction,
        "bs_bytes": b.bs_bytes,
        "op_ms": b.total_ms,
        "iops": model.iops(b.total_ms),
        "mib_per_s": model.mib_per_s(b.bs_bytes, b.total_ms),
        "terms": b.terms,
        "counts": model.breakdown_counts(b),
    }
    if args.queue_depth is not None:
        cpu = args.cpu_ms if args.cpu_ms > 0 else None
        bounds = model.throughput_bounds(
            b.bs_bytes,
            b.total_ms,
            args.queue_depth,
            network.link_bps,
            device_max_iops=args.device_max_iops,
            cpu_ms_per_op=cpu,
            cpu_cores=args.cpu_cores,
        )
        out["queue_depth"] = args.queue_depth
        out["bounds"] = bounds.as_dict()
        out["binding"] = bounds.binding
        out["achieved_iops"] = bounds.achieved_iops
        out["achieved_mib_per_s"] = bounds.achieved_iops * b.bs_bytes / model.MIB
    return out


def format_text(result: dict[str, Any]) -> str:
    """Human-readable report of :func:`projection`'s result."""
    c = result["counts"]
    lines = [
        f"iSCSI {result['direction']} of {c['bs_bytes']} bytes: {c['unsolicited_bytes']} "
        f"unsolicited, {c['solicited_bytes']} solicited in {c['bursts']} R2T bursts "
        f"/ {c['waves']} waves",
        f"{'term':<26}{'ms':>10}",
    ]
    lines += [f"{name:<26}{ms:>10.3f}" for name, ms in result["terms"].items()]
    lines += [
        f"{'op time (ms)':<26}{result['op_ms']:>10.3f}",
        f"{'IOPS':<26}{result['iops']:>10.3f}",
        f"{'MiB/s':<26}{result['mib_per_s']:>10.3f}",
    ]
    if "bounds" in result:
        lines.append(f"IOPS bounds at queue depth {result['queue_depth']}:")
        for name, value in result["bounds"].items():
            shown = "-" if value is None else f"{value:.3f}"
            mark = "  <- binding" if name == result["binding"] else ""
            lines.append(f"  {name:<24}{shown:>10}{mark}")
        lines.append(
            f"{'achieved IOPS':<26}{result['achieved_iops']:>10.3f}"
            f"  ({result['achieved_mib_per_s']:.3f} MiB/s)"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the projection; exit 2 with a one-line message if the inputs are inconsistent."""
    try:
        result = projection(args)
    except ReportError as exc:
        print(f"iscsi-report project: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2) if args.json else format_text(result))
    return 0
