"""Console script ``iscsi-report``: batch runs, book build, ingest summaries, model projections.

Each subcommand's logic lives in its own module; this file only wires argparse to them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Any

# Subcommands that work in the project folder given by --root (and those that write there);
# ``project`` needs it only for --run/--dataset, so its default root (the current folder) is not checked.
ROOT_COMMANDS = ("run", "build", "book", "project")
ROOT_WRITING_COMMANDS = ("run", "build", "book")
ROOT_DEFAULT = "."
EXIT_BAD_ROOT = 2
# subcommand -> (module, help); each module provides configure(parser) and run(args) -> int
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "run": ("iscsi_report.cli.run", "execute the params files' notebooks with papermill"),
    "build": ("iscsi_report.cli.build", "build the book strictly into _build/html (atomic swap)"),
    "book": ("iscsi_report.cli.book", "run the batch, then build the book, under one lock"),
    "summarize": ("iscsi_report.cli.summarize", "summarize raw ping/iperf3/fio/iostat files"),
    "project": ("iscsi_report.cli.project", "project iSCSI write latency and throughput"),
    "dataset": ("iscsi_report.cli.dataset", "init, check or update a raw dataset's manifest; label page"),
    "parameters": (
        "iscsi_report.cli.parameters",
        "every chapter's parameters and their meaning (a book page)",
    ),
    "capture": ("iscsi_report.cli.capture", "capture ping, iperf3, fio and iostat of your own setup"),
    "lab": ("iscsi_report.cli.lab", "a real iSCSI target and initiator in network namespaces"),
    "release": ("iscsi_report.cli.release", "build a citable, verifiable release archive, or verify one"),
}


def _loader(module: str, attr: str) -> Callable[..., Any]:
    loaded: Callable[..., Any] = getattr(import_module(module), attr)
    return loaded


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser; only the chosen subcommand's module is imported (fast start-up)."""
    parser = argparse.ArgumentParser(prog="iscsi-report", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root", default=ROOT_DEFAULT, help="project root (folder with params/, notebooks/, book/)"
    )
    subs = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in SUBCOMMANDS.items():
        sub = subs.add_parser(name, help=help_text)
        if name == chosen:
            _loader(module, "configure")(sub)
            sub.set_defaults(_run=_loader(module, "run"))
    return parser


def _chosen(argv: Sequence[str]) -> str | None:
    """The first argument naming a subcommand (skipping ``--root DIR``), if any."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--root":
            skip = True
        elif arg in SUBCOMMANDS:
            return arg
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and dispatch; returns the process exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(_chosen(argv)).parse_args(argv)
    if args.command in ROOT_WRITING_COMMANDS or (args.command in ROOT_COMMANDS and args.root != ROOT_DEFAULT):
        from iscsi_report.core.errors import ReportError
        from iscsi_report.core.paths import check_root

        try:
            check_root(args.root, writable=args.command in ROOT_WRITING_COMMANDS)
        except ReportError as exc:
            print(f"iscsi-report: error: {exc}", file=sys.stderr)
            return EXIT_BAD_ROOT
    return int(args._run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
