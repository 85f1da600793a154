"""``iscsi-report run``: execute each params file's notebooks with papermill, in parallel (pipeline.batch)."""

from __future__ import annotations

import argparse
import os
import sys

from iscsi_report.core.errors import ReportError
from iscsi_report.core.paths import Project
from iscsi_report.pipeline.batch import WARM_MIN_LOCAL_NOTEBOOKS, run_batch
from iscsi_report.pipeline.executors import check_address
from iscsi_report.pipeline.interrupt import INTERRUPTED_STATUS, unless_interrupted, watch_sigint
from iscsi_report.pipeline.locking import pipeline_lock
from iscsi_report.pipeline.warm import COLD_ENV, ZYGOTE_ENV


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``iscsi-report run``."""
    parser.add_argument("params", nargs="*", help="params files or run names (default: all)")
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=os.cpu_count() or 1,
        help="notebooks executed at once (default: number of CPUs)",
    )
    parser.add_argument("--force", action="store_true", help="ignore the cache, run everything")
    add_scheduler_argument(parser)
    add_cold_argument(parser)


def add_cold_argument(parser: argparse.ArgumentParser) -> None:
    """``--cold`` / ``--warm``: how kernels start (default: warm for batches big enough to gain)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--cold",
        dest="kernels",
        action="store_const",
        const="cold",
        default="auto",
        help=f"start a fresh papermill process and kernel per notebook instead of forking them from the "
        f"warm pool (the stack pre-imported); also when {COLD_ENV} is set. Default: warm on Dask and "
        f"for a local batch of {WARM_MIN_LOCAL_NOTEBOOKS} notebooks or more, where the pool's start pays "
        f"off, or any batch when {ZYGOTE_ENV} names a running fork server",
    )
    group.add_argument(
        "--warm",
        dest="kernels",
        action="store_const",
        const="warm",
        help="fork every notebook's papermill process and kernel from the warm pool, however small the batch",
    )


def add_scheduler_argument(parser: argparse.ArgumentParser) -> None:
    """``--scheduler``: run the notebooks on an existing Dask cluster instead of this machine."""
    parser.add_argument(
        "--scheduler",
        type=scheduler_address,
        metavar="tcp://HOST:PORT",
        help="execute the notebooks on this Dask scheduler's workers (they must see the project at the "
        "same path and run the same environment: see pipeline/executors.py); --jobs is then ignored",
    )


def scheduler_address(text: str) -> str:
    """argparse type of --scheduler: a malformed address is refused before anything starts."""
    try:
        return check_address(text)
    except ReportError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--scheduler ")) from exc


def run(args: argparse.Namespace) -> int:
    """Run the batch under the project lock; 2 on a refused input, 130 when interrupted."""
    project = Project.at(args.root)
    try:
        watch_sigint()
        with pipeline_lock(project):
            selected = args.params or None
            status = run_batch(project, selected, args.jobs, args.force, args.scheduler, args.kernels)
            return unless_interrupted(status)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "run: interrupted; submitted notebooks were cancelled and unfinished ones published nothing; "
            "run again to finish",
            file=sys.stderr,
            flush=True,
        )
        return INTERRUPTED_STATUS
