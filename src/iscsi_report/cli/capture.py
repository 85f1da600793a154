"""The ``iscsi-report capture`` subcommand: measure your own iSCSI setup with the right flags.

It plans ping at 2 ms and 1 s (``-D`` timestamps), an iperf3 ``-J`` run, fio
``--output-format=json+`` writes over block sizes at queue depth 1 and a queue-depth sweep, each
with ``iostat -x -o JSON`` sampling alongside; prints what must already be running and the
commands (``--dry-run`` stops there), runs them into OUT and writes the manifest with the same code
as ``dataset init``. The side is inferred from where fio writes (:mod:`capture_side`) unless
``--side`` is given; with ``--side target`` it runs only the iostat of each planned fio run, for the
target's CPU and disk. Every argument is checked by argparse: a host is a hostname or an address
(never an option), sizes are fio sizes, times and counts are positive and finite.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from iscsi_report.cli import capture_side
from iscsi_report.cli.dataset import EXIT_BAD_INPUT, write_manifest
from iscsi_report.core import labels
from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest.fio import parse_size_bytes

DEFAULT_BLOCK_SIZES = "64k,128k,256k,512k,1m,2m"
DEFAULT_QUEUE_DEPTHS = "1,2,4,8,16"
PING_INTERVALS_S = (0.002, 1.0)  # the model's interval and a slow one
IOSTAT_SLACK_S = 3  # iostat samples this many seconds beyond fio's runtime (set-up, flush)
SIDES = ("initiator", "target", "local")


@dataclass(frozen=True)
class Step:
    """One command: its argv, the file its standard output goes to (or None), a background iostat."""

    argv: tuple[str, ...]
    out: str | None
    alongside: tuple[tuple[str, ...], str] | None = None  # iostat argv and its output file

    def text(self) -> str:
        """The command as a shell line."""
        line = shlex.join(self.argv) + (f" > {shlex.quote(self.out)}" if self.out else "")
        if self.alongside is None:
            return line
        argv, out = self.alongside
        return f"{shlex.join(argv)} > {shlex.quote(out)} &  {line};  wait"


HOST_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"  # RFC 1123: never starts with '-'
HOSTNAME_RE = re.compile(rf"^(?=.{{1,253}}$){HOST_LABEL}(?:\.{HOST_LABEL})*\.?$")
LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # a label becomes part of a file name
MAX_PORT = 65535


def host_name(text: str) -> str:
    """A hostname (RFC 1123) or an IPv4/IPv6 address; anything else, an option above all, refused."""
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    if not HOSTNAME_RE.match(text):
        raise argparse.ArgumentTypeError(f"not a hostname or IP address: {text!r}")
    return text


def label(text: str) -> str:
    """A network or device label: letters, digits, '.', '_' and '-' (it names the raw files)."""
    if not LABEL_RE.match(text):
        raise argparse.ArgumentTypeError(f"labels are letters, digits, '.', '_' or '-', got {text!r}")
    return text


def positive_seconds(text: str) -> float:
    """A finite number of seconds above zero ('nan', 'inf', 0 and negatives refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds above 0, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def port(text: str) -> int:
    """A TCP port, 1 to 65535."""
    value = positive_int(text)
    if value > MAX_PORT:
        raise argparse.ArgumentTypeError(f"a port is 1 to {MAX_PORT}, got {text!r}")
    return value


def fio_size(text: str) -> str:
    """One fio size above zero ('64k', '1m'), checked by fio's own size rules."""
    try:
        value = parse_size_bytes(text.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"a size must be above 0 bytes, got {text!r}")
    return text.strip()


def sizes(text: str) -> list[str]:
    """'64k,1m' -> ['64k', '1m'], each a fio size above zero; none at all refused."""
    items = [fio_size(s) for s in text.split(",") if s.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected comma-separated fio sizes, got {text!r}")
    return items


def depths(text: str) -> list[int]:
    """'1,2,8' -> [1, 2, 8]; each a positive integer."""
    values = [positive_int(s) for s in text.split(",") if s.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"expected comma-separated queue depths, got {text!r}")
    return values


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments: OUT, what to measure and how long; --dry-run prints the plan only."""
    parser.add_argument("out", type=Path, metavar="OUT", help="folder for the raw files and manifest.yaml")
    parser.add_argument(
        "--host", type=host_name, help="the target's address for ping and iperf3 (iperf3 -s must run there)"
    )
    parser.add_argument("--port", type=port, default=5201, help="iperf3 server port")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--target", help="block device fio writes to (DESTROYS its data; needs --destroy)")
    where.add_argument("--filename", help="file fio writes to (created with --size)")
    parser.add_argument("--destroy", action="store_true", help="allow fio to overwrite the --target device")
    parser.add_argument(
        "--side",
        choices=SIDES,
        help="where this capture runs (default: inferred from where fio writes; refused when unclear)",
    )
    parser.add_argument("--network", type=label, default="lan", help="network label of ping and iperf3")
    parser.add_argument("--device", type=label, default="disk", help="device label of fio and iostat")
    parser.add_argument(
        "--bs", type=sizes, default=DEFAULT_BLOCK_SIZES, help="block sizes of the queue-depth-1 sweep"
    )
    parser.add_argument(
        "--qd", type=depths, default=DEFAULT_QUEUE_DEPTHS, help="queue depths of the sweep at --qd-bs"
    )
    parser.add_argument("--qd-bs", type=fio_size, default="1m", help="block size of the queue-depth sweep")
    parser.add_argument("--ioengine", type=label, default="libaio")
    parser.add_argument("--size", type=fio_size, default="1g", help="fio size (bytes written per pass)")
    parser.add_argument("--runtime", type=positive_seconds, default=20.0, help="seconds per fio run")
    parser.add_argument(
        "--ping-count", type=positive_int, default=5000, help="probes at 2 ms (1 s probes: a 100th)"
    )
    parser.add_argument("--iperf3-seconds", type=positive_int, default=10)
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")


def run_names(args: argparse.Namespace) -> list[tuple[str, str, int]]:
    """(run name, bs, iodepth) of every fio run: the bs sweep at qd 1, then the qd sweep."""
    plan = [(f"bs{bs.lower()}-qd1", bs, 1) for bs in args.bs]
    seen = {name for name, _, _ in plan}
    for qd in args.qd:
        name = f"bs{args.qd_bs.lower()}-qd{qd}"
        if name not in seen:
            plan.append((name, args.qd_bs, qd))
            seen.add(name)
    return plan


def _iostat(seconds: float) -> tuple[str, ...]:
    """iostat extended device and CPU reports as JSON, one a second, for ``seconds``."""
    return ("iostat", "-x", "-o", "JSON", "1", str(math.ceil(seconds) + IOSTAT_SLACK_S))


def network_steps(args: argparse.Namespace) -> list[Step]:
    """ping at 2 ms and 1 s with -D timestamps, then iperf3 -J against --host."""
    if not args.host or args.side == "target":
        return []
    steps = []
    for interval in PING_INTERVALS_S:
        count = args.ping_count if interval < 1 else max(args.ping_count // 100, 10)
        label = f"{interval * 1000:g}ms" if interval < 1 else f"{interval:g}s"
        argv = ("ping", "-D", "-i", f"{interval:g}", "-c", str(count), "--", args.host)
        steps.append(Step(argv, f"ping/{args.network}-{label}.txt"))
    iperf = ("iperf3", "-p", str(args.port), "-J", "-t", str(args.iperf3_seconds), f"--client={args.host}")
    steps.append(Step(iperf, f"iperf3/{args.network}-tcp.json"))
    return steps


def _local_path(filename: str) -> str:
    """A file's absolute path; an iSCSI URL (libiscsi) as given."""
    return filename if filename.lower().startswith("iscsi:") else str(Path(filename).resolve())


def fio_filename(name: str) -> str:
    """``name`` as fio's filename option reads it: ':' separates files there, so it is escaped.

    iSCSI names have colons (``/dev/disk/by-path/ip-10.0.0.9:3260-iscsi-...``, ``iscsi://h/iqn.x:t/0``).
    """
    return name.replace("\\:", ":").replace(":", "\\:")


def storage_steps(args: argparse.Namespace) -> list[Step]:
    """fio json+ per planned run with iostat alongside; on the target side, the iostat only."""
    target = args.target or (_local_path(args.filename) if args.filename else None)
    if target is None:
        return []
    steps = []
    for name, bs, qd in run_names(args):
        iostat = (_iostat(args.runtime), f"iostat/{name}.json")
        if args.side == "target":
            steps.append(Step(iostat[0], iostat[1]))
            continue
        argv = (
            "fio",
            f"--name={name}",
            f"--filename={fio_filename(target)}",
            "--rw=write",
            f"--bs={bs}",
            f"--iodepth={qd}",
            f"--ioengine={args.ioengine}",
            "--direct=1",
            f"--size={args.size}",
            f"--runtime={args.runtime:g}",
            "--time_based",
            "--output-format=json+",
            f"--output=fio/{name}.json",
        )
        steps.append(Step(argv, None, iostat))
    return steps


def refuse_overwrite(args: argparse.Namespace) -> None:
    """IngestError when fio would write to a block device without --destroy (the target side reads only)."""
    if args.target and not args.destroy and args.side != "target":
        raise IngestError(args.target, "fio would overwrite this device: add --destroy if that is intended")


def plan(args: argparse.Namespace) -> list[Step]:
    """Every step of the capture, in order (``args.side`` already resolved)."""
    refuse_overwrite(args)
    return [*network_steps(args), *storage_steps(args)]


def resolve_side(args: argparse.Namespace) -> tuple[str, str]:
    """(side, why): --side checked against where fio writes, else inferred; IngestError when unclear."""
    inferred = capture_side.infer(args.ioengine, args.target, args.filename)
    side, refusal = capture_side.check(args.side, inferred)
    if side is None:
        raise IngestError("--side", refusal)
    return side, "given with --side" if args.side else inferred.reason


def prerequisites(args: argparse.Namespace) -> list[str]:
    """What must already be running (or run beside this capture) for its commands to work."""
    out = []
    if args.host and args.side != "target":
        out.append(f"iperf3 -s -p {args.port} running on {args.host} (the iperf3 server)")
    storage = bool(args.target or args.filename)
    if storage and args.side == "initiator":
        out.append("the iSCSI session logged in, the LUN attached (iscsiadm -m session lists it)")
        out.append(
            "for the target's CPU and disk, on the target: iscsi-report capture OUT --side target "
            "--target <its backing device> with the same --bs, --qd and --runtime, started with this one"
        )
    if storage and args.side == "target":
        out.append("the initiator's capture started with this one (each iostat here samples one fio run)")
    return out


def execute(step: Step, out_dir: Path) -> None:
    """Run one step in out_dir; a failing command raises IngestError naming it and its stderr."""
    background = None
    if step.alongside is not None:
        argv, out = step.alongside
        background = subprocess.Popen(argv, cwd=out_dir, stdout=(out_dir / out).open("w"))
    try:
        stdout = (out_dir / step.out).open("w") if step.out else subprocess.DEVNULL
        done = subprocess.run(step.argv, cwd=out_dir, stdout=stdout, stderr=subprocess.PIPE, text=True)
    finally:
        if background is not None:
            background.wait()
    if done.returncode != 0:
        said = done.stderr.strip()
        raise IngestError(step.out or step.argv[0], f"{step.text()} failed ({done.returncode}): {said}")


def run(args: argparse.Namespace) -> int:
    """Print what must run first and the plan; unless --dry-run, run it into OUT and write the manifest."""
    try:
        refuse_overwrite(args)  # before any question of side
        side, why = resolve_side(args)
        args = argparse.Namespace(**{**vars(args), "side": side})
        steps = plan(args)
    except IngestError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    if not steps:
        print("nothing to capture: give --host and/or --target/--filename", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"# side: {side} ({why})")
    for need in prerequisites(args):
        print(f"# needs: {need}")
    for step in steps:
        print(step.text())
    if args.dry_run:
        return 0
    out_dir = args.out.resolve()
    for sub in ("ping", "iperf3", "fio", "iostat"):
        (out_dir / sub).mkdir(parents=True, exist_ok=True)
    try:
        for step in steps:
            execute(step, out_dir)
    except IngestError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    defaults: dict[str, dict[str, str | float]] = {
        labels.ALL_FILES: {labels.SIDE_KEY: args.side},
        "ping": {"network": args.network},
        "iperf3": {"network": args.network},
        **{s.out: {"interval_s": float(s.argv[3])} for s in steps if s.argv[0] == "ping" and s.out},
        "fio": {"device": args.device},
        "iostat": {"device": args.device},
    }
    return write_manifest(out_dir, out_dir.name, defaults)
