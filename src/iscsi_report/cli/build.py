"""``iscsi-report build``: the strict jupyter-book build with an atomic swap (pipeline.build)."""

from __future__ import annotations

import argparse
import sys

from iscsi_report.core.errors import ReportError
from iscsi_report.core.paths import Project
from iscsi_report.pipeline.build import build_book
from iscsi_report.pipeline.locking import pipeline_lock


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``iscsi-report build``."""
    parser.add_argument("--force", action="store_true", help="rebuild even if nothing changed")


def run(args: argparse.Namespace) -> int:
    """Build under the project lock; 2 on a refused input."""
    project = Project.at(args.root)
    try:
        with pipeline_lock(project):
            return build_book(project, args.force)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
