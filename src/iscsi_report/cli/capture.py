"""The ``iscsi-report capture`` subcommand: measure your own iSCSI setup with the right flags.

It plans ping at 2 ms and 1 s (``-D`` timestamps), an iperf3 ``-J`` run, fio
``--output-format=json+`` writes over block sizes at queue depth 1 and a queue-depth sweep, each
with ``iostat -x -o JSON`` sampling alongside; prints the commands (``--dry-run`` stops there),
runs them into OUT and writes the manifest with the same code as ``dataset init``. With
``--side target`` it runs only the iostat of each planned fio run, for the target's CPU and disk.
"""

from __future__ import annotations

import argparse
import math
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

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


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments: OUT, what to measure and how long; --dry-run prints the plan only."""
    parser.add_argument("out", type=Path, metavar="OUT", help="folder for the raw files and manifest.yaml")
    parser.add_argument("--host", help="the target's address for ping and iperf3 (iperf3 -s must run there)")
    parser.add_argument("--port", type=int, default=5201, help="iperf3 server port")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--target", help="block device fio writes to (DESTROYS its data; needs --destroy)")
    where.add_argument("--filename", help="file fio writes to (created with --size)")
    parser.add_argument("--destroy", action="store_true", help="allow fio to overwrite the --target device")
    parser.add_argument("--side", choices=SIDES, default="initiator", help="where this capture runs")
    parser.add_argument("--network", default="lan", help="network label of ping and iperf3")
    parser.add_argument("--device", default="disk", help="device label of fio and iostat")
    parser.add_argument("--bs", default=DEFAULT_BLOCK_SIZES, help="block sizes of the queue-depth-1 sweep")
    parser.add_argument("--qd", default=DEFAULT_QUEUE_DEPTHS, help="queue depths of the sweep at --qd-bs")
    parser.add_argument("--qd-bs", default="1m", help="block size of the queue-depth sweep")
    parser.add_argument("--ioengine", default="libaio")
    parser.add_argument("--size", default="1g", help="fio size (bytes written per pass)")
    parser.add_argument("--runtime", type=float, default=20.0, help="seconds per fio run")
    parser.add_argument("--ping-count", type=int, default=5000, help="probes at 2 ms (1 s probes: a 100th)")
    parser.add_argument("--iperf3-seconds", type=int, default=10)
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")


def sizes(text: str) -> list[str]:
    """'64k,1m' -> ['64k', '1m'], each checked by fio's own size rules."""
    items = [s.strip() for s in text.split(",") if s.strip()]
    for item in items:
        parse_size_bytes(item)
    return items


def depths(text: str) -> list[int]:
    """'1,2,8' -> [1, 2, 8]; each a positive integer."""
    try:
        values = [int(s) for s in text.split(",") if s.strip()]
    except ValueError as exc:
        raise IngestError("--qd", f"expected comma-separated integers, got {text!r}") from exc
    if not values or min(values) < 1:
        raise IngestError("--qd", f"expected positive queue depths, got {text!r}")
    return values


def run_names(args: argparse.Namespace) -> list[tuple[str, str, int]]:
    """(run name, bs, iodepth) of every fio run: the bs sweep at qd 1, then the qd sweep."""
    plan = [(f"bs{bs.lower()}-qd1", bs, 1) for bs in sizes(args.bs)]
    seen = {name for name, _, _ in plan}
    for qd in depths(args.qd):
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
        argv = ("ping", "-D", "-i", f"{interval:g}", "-c", str(count), args.host)
        steps.append(Step(argv, f"ping/{args.network}-{label}.txt"))
    iperf = ("iperf3", "-c", args.host, "-p", str(args.port), "-J", "-t", str(args.iperf3_seconds))
    steps.append(Step(iperf, f"iperf3/{args.network}-tcp.json"))
    return steps


def storage_steps(args: argparse.Namespace) -> list[Step]:
    """fio json+ per planned run with iostat alongside; on the target side, the iostat only."""
    target = args.target or (str(Path(args.filename).resolve()) if args.filename else None)
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
            f"--filename={target}",
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


def plan(args: argparse.Namespace) -> list[Step]:
    """Every step of the capture, in order."""
    if args.target and not args.destroy and args.side != "target":
        raise IngestError(args.target, "fio would overwrite this device: add --destroy if that is intended")
    return [*network_steps(args), *storage_steps(args)]


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
    """Print the plan; unless --dry-run, run it into OUT and write OUT/manifest.yaml."""
    try:
        steps = plan(args)
    except IngestError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    if not steps:
        print("nothing to capture: give --host and/or --target/--filename", file=sys.stderr)
        return EXIT_BAD_INPUT
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
