"""``iscsi-report project``: one iSCSI operation's latency terms, IOPS, MiB/s and queue bounds."""

from __future__ import annotations

import argparse
import json
import math
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
        "Project one iSCSI write (or read) with the latency model: each term, the PDU counts, and "
        "at --queue-depth the throughput as the smallest of Little's law, the link, the device's "
        "local throughput and the CPU, naming the binding bound. MiB/s means 2**20 bytes per s."
    )
    nonneg, positive = _number(0.0, True), _number(0.0, False)
    add = parser.add_argument
    add("--bs", type=parse_size, required=True, help=f"block size: {SIZE_HELP}")
    add("--rw", choices=("write", "read"), default="write", help="operation (default write)")
    add("--read", action="store_const", const="read", dest="rw", help="same as --rw read")
    add("--one-way-ms", type=nonneg, required=True, help="one-way network latency (ms)")
    speed = parser.add_mutually_exclusive_group(required=True)
    speed.add_argument("--per-64k-ms", type=positive, help="ms to transmit 64 KiB on the link")
    speed.add_argument("--link-mbps", type=positive, help="link speed in megabits (10**6) per s")
    add("--device-ms", type=nonneg, default=0.0, help="synchronous device ms per op (default 0)")
    device = parser.add_mutually_exclusive_group()
    device.add_argument(
        "--device-mib-s",
        type=positive,
        default=None,
        help="the device's local throughput at this request size, MiB/s (its ceiling); "
        "default: the rate --device-ms implies",
    )
    device.add_argument("--device-max-iops", type=positive, default=None, help="device IOPS ceiling")
    add("--cpu-ms", type=nonneg, default=0.0, help="CPU ms per op (default 0: no CPU ceiling)")
    add("--cpu-cores", type=_count, default=1, help="cores for the CPU ceiling (default 1)")
    add(
        "--max-outstanding-r2t",
        type=_count,
        default=model.DEFAULT_MAX_OUTSTANDING_R2T,
        help="negotiated MaxOutstandingR2T (default 1)",
    )
    add(
        "--r2t-pacing",
        choices=model.PACINGS,
        default=model.DEFAULT_ASSUMPTIONS.r2t_pacing,
        help="sliding (LIO: a new R2T as each burst completes, default), serial (tgt: one at a "
        "time) or lockstep (the blog's model: groups wait for the previous group's data)",
    )
    add("--target-r2t-window", type=_count, default=None, help="R2Ts the target keeps outstanding")
    add("--per-round-ms", type=nonneg, default=0.0, help="processing ms per R2T exchange (default 0)")
    add(
        "--pdu-header-bytes",
        type=int,
        default=model.BHS_BYTES,
        help=f"header bytes per PDU on the wire (default {model.BHS_BYTES})",
    )
    first, most = model.DEFAULT_FIRST_BURST_BYTES, model.DEFAULT_MAX_BURST_BYTES
    add("--first-burst", type=parse_size, default=first, help="FirstBurstLength (default 64KiB)")
    add("--max-burst", type=parse_size, default=most, help="MaxBurstLength (default 256KiB)")
    add(
        "--max-recv-data-segment",
        type=parse_size,
        default=model.DEFAULT_MAX_RECV_DATA_SEGMENT_BYTES,
        help="MaxRecvDataSegmentLength: caps immediate data and every data PDU (default 8192, RFC 7143)",
    )
    add("--immediate-data", type=_yes_no, default=model.DEFAULT_IMMEDIATE_DATA, metavar="yes|no")
    add("--initial-r2t", type=_yes_no, default=model.DEFAULT_INITIAL_R2T, metavar="yes|no")
    add("--queue-depth", type=_count, default=1, help="operations in flight (default 1)")
    add("--json", action="store_true", help="print one JSON object (strict JSON) instead of text")


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


def _assumptions(args: argparse.Namespace) -> model.Assumptions:
    """Pacing, target window, per-round cost and PDU header size from the command line."""
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
    if args.device_mib_s is not None:
        return "--device-mib-s (local throughput at this size)"
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
    """Compute the projection as a JSON-ready dict (the ``--json`` output)."""
    network = _network(args)
    b = model.operation_latency(
        args.rw, args.bs, _params(args), network, args.device_ms, args.cpu_ms, assumptions=_assumptions(args)
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


def run(args: argparse.Namespace) -> int:
    """Print the projection; exit 2 with a one-line message if the inputs are inconsistent."""
    try:
        result = projection(args)
        text = json.dumps(result, indent=2, allow_nan=False) if args.json else format_text(result)
    except (ReportError, OverflowError, ValueError) as exc:
        print(f"iscsi-report project: error: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0
