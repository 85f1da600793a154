"""``iscsi-report book``: the batch, then the strict build, under one lock; what `make book` runs."""

from __future__ import annotations

import argparse
import os
import sys

from iscsi_report.core.errors import ReportError
from iscsi_report.pipeline.batch import run_batch
from iscsi_report.pipeline.build import build_book
from iscsi_report.pipeline.locking import pipeline_lock
from iscsi_report.pipeline.paths import Project

INTERRUPTED_STATUS = 130  # the shell's status for a command ended by Ctrl-C (128 + SIGINT)


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``iscsi-report book``."""
    parser.add_argument("params", nargs="*", help="params files or run names (default: all)")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--force", action="store_true", help="re-execute and rebuild everything")


def run(args: argparse.Namespace) -> int:
    """Run the batch; build the book only if every notebook succeeded."""
    project = Project.at(args.root)
    try:
        with pipeline_lock(project):
            status = run_batch(project, args.params or None, args.jobs, args.force)
            if status != 0:
                print(
                    "book: not built because a notebook failed; the previous site is untouched",
                    file=sys.stderr,
                )
                return status
            return build_book(project, args.force)
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
