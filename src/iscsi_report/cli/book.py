"""``iscsi-report book [RUN...]``: the batch, then the strict build, under one lock; what `make book` runs.

Named runs are executed and built alone: the site's toc then holds only their parts (and the
hand-written pages), so a user sees their own chapters without waiting for the bundled studies.
"""

from __future__ import annotations

import argparse
import os
import sys

from iscsi_report.cli.run import add_cold_argument, add_scheduler_argument
from iscsi_report.core.errors import ReportError
from iscsi_report.core.paths import Project
from iscsi_report.pipeline.book import make_book
from iscsi_report.pipeline.interrupt import INTERRUPTED_STATUS, watch_sigint


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``iscsi-report book``."""
    parser.add_argument(
        "params",
        nargs="*",
        metavar="RUN",
        help="params files or run names: execute only these runs, then rebuild the site with them and "
        "every other run already published (default: every params file without 'enabled: false')",
    )
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--force", action="store_true", help="re-execute and rebuild everything")
    parser.add_argument(
        "--only",
        action="store_true",
        help="with RUN names: the site holds only those runs (the others' published pages left out)",
    )
    add_scheduler_argument(parser)
    add_cold_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Run the batch and build the book; 2 on a refused input, 130 when interrupted."""
    project = Project.at(args.root)
    try:
        watch_sigint()
        return make_book(
            project, args.params or None, args.jobs, args.force, args.scheduler, args.only, args.kernels
        )
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "book: interrupted; unfinished notebooks published nothing and the previous site is "
            "untouched; run again to finish",
            file=sys.stderr,
            flush=True,
        )
        return INTERRUPTED_STATUS
