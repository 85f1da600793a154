"""``iscsi-report release``: build a citable, verifiable release archive, or verify one (pipeline.release)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from iscsi_report.core.errors import ReportError
from iscsi_report.core.paths import Project
from iscsi_report.pipeline.locking import pipeline_lock
from iscsi_report.pipeline.release import Verification, build_release, verify_release

DIST = "dist"


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``iscsi-report release build|verify``."""
    actions = parser.add_subparsers(dest="action", required=True)
    build = actions.add_parser(
        "build", help="pack code, lock, raw data, site, results and manifest into dist/"
    )
    build.add_argument("--version", required=True, help="the release's version, e.g. 0.1.0")
    build.add_argument(
        "--run", action="append", dest="runs", metavar="NAME", help="release only this run (repeatable)"
    )
    build.add_argument("--out", default=None, help="where the archive goes (default: dist/ in the project)")
    verify = actions.add_parser(
        "verify", help="unpack, check every sha256, re-execute offline, compare numbers"
    )
    verify.add_argument("archive", help="a release .tar.gz")
    verify.add_argument("--jobs", "-j", type=int, default=1, help="notebooks re-executed at once")


def _build(args: argparse.Namespace) -> int:
    """Pack the release under the project lock and say what it holds and what changed."""
    project = Project.at(args.root)
    out = Path(args.out) if args.out else project.root / DIST
    with pipeline_lock(project):
        release = build_release(project, args.version, args.runs, out)
    print(f"release: {release.path} ({release.size_bytes} bytes, {release.members} members)")
    print(f"release: code from {release.tree}")
    print(f"release: the report in one file: {release.report} ({release.report.stat().st_size} bytes)")
    since = f"since {release.previous}" if release.previous else "(first release: nothing to compare with)"
    print(f"release: {len(release.changed)} published numbers changed {since}")
    for difference in release.changed:
        print(f"  {difference}")
    for note in release.notes:
        print(f"note: {note}")
    return 0


def _print_verification(report: Verification) -> None:
    """Each problem and difference on its own line, then the verdict."""
    for note in report.notes:
        print(f"note: {note}")
    for problem in report.problems:
        print(f"PROBLEM: {problem}")
    if report.differences:
        print("each difference: file: row and column, or glue name: archived -> re-executed")
    for difference in report.differences:
        print(f"DIFFERENT: {difference}")
    if report.ok:
        runs = ", ".join(report.runs)
        print(f"verify: OK, every sha256 matches and every published number of {runs} reproduced")
    else:
        print(f"verify: FAILED, {len(report.problems)} problems, {len(report.differences)} numbers differ")


def run(args: argparse.Namespace) -> int:
    """``build``: 0, or 2 on a refused input; ``verify``: 0 when everything matched, else 1."""
    try:
        if args.action == "build":
            return _build(args)
        report = verify_release(Path(args.archive), jobs=args.jobs)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _print_verification(report)
    return 0 if report.ok else 1
