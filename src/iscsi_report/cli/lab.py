"""``iscsi-report lab``: setup, run, smoke and teardown of the real iSCSI lab in lab/ (root only)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from iscsi_report.lab import state as st
from iscsi_report.lab.build import Tools
from iscsi_report.lab.topology import DELAY_LINES


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the lab's sub-subcommands to ``parser``."""
    subs = parser.add_subparsers(dest="lab_command", required=True)
    subs.add_parser("setup", help="install packages, build libiscsi fio and patched tgt (cached)")
    run = subs.add_parser("run", help="bring the lab up, run the sweep, write the dataset")
    run.add_argument("--out", required=True, help="dataset folder, e.g. data/raw/lab-iscsi-2026")
    run.add_argument("--quick", action="store_true", help="a small sweep (about a minute)")
    run.add_argument(
        "--confirm",
        nargs="?",
        type=int,
        const=1,
        default=0,
        metavar="N",
        help="a confirmation sweep (design N, default 1): delays, block sizes and windows earlier "
        "sweeps never measured",
    )
    run.add_argument(
        "--jitter",
        nargs="?",
        type=int,
        const=1,
        default=0,
        metavar="N",
        help="a jitter sweep (design N, default 1): 1,000 writes per configuration under four shapes "
        "of per-packet delay (lab/jitter_sweep.py)",
    )
    run.add_argument(
        "--device",
        action="store_true",
        help="the device sweep: the same traffic on the RAM LUN and two emulated slow devices, with "
        "local fio of each (lab/device_sweep.py)",
    )
    run.add_argument(
        "--reads",
        nargs="?",
        type=int,
        const=1,
        default=0,
        metavar="N",
        help="the reads diagnosis (design N, default 1): reads and writes across 1.5-4 MiB captured at both "
        "ends of the line, iperf3 both ways and local fio of the LUN's file; designs 2 and 3 with tgtd's "
        "allocator settings changed (lab/reads_sweep.py)",
    )
    run.add_argument(
        "--segments",
        nargs="?",
        type=int,
        const=1,
        default=0,
        metavar="N",
        help="the segments diagnosis (design N, default 1): iperf3 with small and large messages and iSCSI "
        "writes with both segment sizes at 1,600 and 540 Mbit/s, each write labelled with the delay line's "
        "and tgtd's CPU seconds; design 2 also captures every write at both ends (lab/segments_sweep.py)",
    )
    run.add_argument(
        "--delay-line",
        choices=DELAY_LINES,
        default=None,
        help="which delay line forwards the packets: the Python one (the default: its replicates "
        "scatter less, data/preregistered/delay-line-scatter; --jitter needs it) or the compiled one "
        "(fixed delay, less CPU per packet); a dataset whose manifest names no delay line was "
        "measured with the Python one",
    )
    smoke = subs.add_parser("smoke", help="a short check of the lab (under 90 s)")
    smoke.add_argument("--json", dest="json_out", help="also write the figures to this file")
    smoke.add_argument(
        "--delay-line", choices=DELAY_LINES, default="compiled", help="which delay line to check"
    )
    subs.add_parser("teardown", help="remove whatever a lab left behind (from its state file)")
    acc = subs.add_parser("accuracy", help="the delay line's accuracy and rate, from a dataset's ping/iperf3")
    acc.add_argument("dataset", help="a folder written by `lab run` (or to write, with --measure)")
    acc.add_argument(
        "--measure",
        action="store_true",
        help="bring the lab up and measure ping/iperf3 at a few points into DATASET first",
    )
    subs.add_parser("status", help="what the state file records")


def _say(msg: str) -> None:
    """A progress line on stderr, prefixed ``lab:``."""
    print(f"lab: {msg}", file=sys.stderr, flush=True)


def _tools(root: str) -> Tools:
    """The built tools recorded under ``root``, running ``lab setup`` first when there are none."""
    from iscsi_report.lab.build import load_tools, setup

    tools = load_tools(root)
    if tools is None:
        _say("no built tools recorded; running `lab setup` first")
        tools = setup(root, _say)
    return tools


def run(args: argparse.Namespace) -> int:
    """Dispatch ``lab <command>``; returns the exit status."""
    root = getattr(args, "root", ".")
    cmd = args.lab_command
    if cmd == "teardown":
        done = st.teardown(_say)
        left = st.lab_namespaces()
        _say(f"teardown: {len(done)} actions; lab namespaces left: {left or 'none'}")
        return 1 if left else 0
    if cmd == "accuracy":
        from iscsi_report.lab.accuracy import accuracy_table, measure

        if args.measure:
            print(measure(_tools(root), Path(args.dataset), _say))
        else:
            print(accuracy_table(Path(args.dataset)))
        return 0
    if cmd == "status":
        print(json.dumps(st.load_state(), indent=1))
        return 0
    if cmd == "setup":
        from iscsi_report.lab.build import SetupError, setup

        t0 = time.monotonic()
        try:
            tools = setup(root, _say)
        except SetupError as exc:
            _say(f"setup failed: {exc}")
            return 1
        print(json.dumps({**tools.as_dict(), "setup_s": round(time.monotonic() - t0, 1)}, indent=1))
        return 0
    tools = _tools(root)
    if cmd == "smoke":
        from iscsi_report.lab.smoke import smoke

        result = smoke(tools, _say, delay_line=args.delay_line)
        text = json.dumps(result, indent=1, default=str)
        print(text)
        if args.json_out:
            Path(args.json_out).write_text(text, encoding="utf-8")
        _say("smoke " + ("PASSED" if not result["failed"] else "FAILED: " + "; ".join(result["failed"])))
        return 0 if not result["failed"] else 1
    if cmd == "run":
        return run_sweep(args, tools, root)
    raise SystemExit(f"unknown lab command {cmd}")


def run_sweep(args: argparse.Namespace, tools: Tools, root: str) -> int:
    """``lab run``: check the design and the delay line, bring the lab up, run the sweep, write it."""
    from iscsi_report.lab.sweep import clean_out, execute
    from iscsi_report.lab.topology import DEFAULT_DELAY_LINE, Lab

    if args.jitter:
        from iscsi_report.lab.jitter_sweep import check_design

        check_design(args.jitter)  # before the lab comes up or the folder is cleaned
    if args.reads:
        from iscsi_report.lab import reads_sweep

        reads_sweep.check_design(args.reads)
    if args.segments:
        from iscsi_report.lab import segments_sweep

        segments_sweep.check_design(args.segments)
    line = args.delay_line or DEFAULT_DELAY_LINE
    if args.jitter and line != "python":
        raise SystemExit("lab run --jitter draws per-packet delays, which only the Python delay line does")
    out = Path(args.out).resolve()
    clean_out(out)
    with Lab(tools, _say, delay_line=line) as lab:
        if args.device:
            from iscsi_report.lab import device_sweep

            summary = device_sweep.execute(lab, out, _say)
        elif args.reads:
            from iscsi_report.lab import reads_sweep

            summary = reads_sweep.execute(lab, out, _say, number=args.reads)
        elif args.segments:
            from iscsi_report.lab import segments_sweep

            summary = segments_sweep.execute(lab, out, _say, number=args.segments)
        elif args.jitter:
            from iscsi_report.lab import jitter_sweep

            summary = jitter_sweep.execute(
                lab, out, _say, number=args.jitter, raw_root=Path(root) / "data" / "raw"
            )
        else:
            summary = execute(lab, out, args.quick, _say, confirm=args.confirm)
    print(json.dumps(summary, indent=1, default=str))
    return 0 if not summary["failures"] and summary.get("verify", {"passed": True})["passed"] else 1
