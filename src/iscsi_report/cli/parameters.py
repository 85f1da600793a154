"""``iscsi-report parameters``: every chapter's parameters with their defaults and meaning, as a page.

The descriptions are the comments beside each parameter in the chapters' parameters cells
(:mod:`iscsi_report.pipeline.parameter_docs`); ``--write book/parameters.md`` refreshes the book's
reference page from them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from iscsi_report.core.paths import Project
from iscsi_report.pipeline import parameter_docs

EXIT_OK = 0


def configure(parser: argparse.ArgumentParser) -> None:
    """--write PATH: write the page there instead of printing it."""
    parser.add_argument(
        "--write", type=Path, metavar="PATH", help=f"write it there (e.g. {parameter_docs.PAGE})"
    )


def run(args: argparse.Namespace) -> int:
    """Print the parameters page of the project at --root, or write it to --write."""
    text = parameter_docs.reference_page(Project.at(args.root).notebooks_dir)
    if args.write is None:
        sys.stdout.write(text)
        return EXIT_OK
    args.write.write_text(text, encoding="utf-8")
    print(f"wrote {args.write}")
    return EXIT_OK
