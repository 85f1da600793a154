"""The book in one step: the batch, then the strict build, under one project lock.

The site is built only when every notebook succeeded. Named runs are executed and rebuilt inside
the whole site: every other run whose chapters are all published (executed before) keeps its
pages; a run never executed is left out (it has nothing to show yet).
"""

from __future__ import annotations

import sys

from iscsi_report.core.paths import Project
from iscsi_report.pipeline.batch import run_batch
from iscsi_report.pipeline.build import build_book
from iscsi_report.pipeline.interrupt import unless_interrupted
from iscsi_report.pipeline.locking import pipeline_lock
from iscsi_report.pipeline.params import RunSpec, discover


def make_book(
    project: Project,
    selected: list[str] | None,
    n_workers: int,
    force: bool = False,
    scheduler: str | None = None,
    only: bool = False,
    kernels: str = "auto",
) -> int:
    """Run the batch (the ``selected`` runs, or all); build the book only if every notebook succeeded.

    With ``selected`` the site keeps every other run already published, unless ``only``; ``kernels``
    ("auto", "warm" or "cold") says how kernels start (:func:`.batch.run_batch`).

    A failure caused by Ctrl-C ends as KeyboardInterrupt (see :mod:`.interrupt`).
    """
    with pipeline_lock(project):
        status = unless_interrupted(run_batch(project, selected, n_workers, force, scheduler, kernels))
        if status != 0:
            print(
                "book: not built because a notebook failed; the previous site is untouched", file=sys.stderr
            )
            return status
        named = discover(project, selected) if selected else None
        chosen = named if named is None or only else with_published(project, named)
        return build_book(project, force, runs=chosen, warm_ok=kernels != "cold")


def with_published(project: Project, named: list[RunSpec]) -> list[RunSpec]:
    """The named runs and every other run whose chapters are all published, in discovery order."""
    names = {r.name for r in named}
    return [
        r
        for r in discover(project)
        if r.name in names or all(project.executed(r.name, nb).is_file() for nb in r.notebooks)
    ]
