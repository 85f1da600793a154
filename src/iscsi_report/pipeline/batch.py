"""The batch behind ``iscsi-report run``: each params file's notebooks executed with papermill, in parallel.

The orchestrator: plan the jobs (every params file validated first), skip those the run cache
(``cache``) finds fresh, submit the others' job function (``execute.run_notebook``) to an
executor, publish each result as it completes (``publish``), print a progress line per event and
a one-line-per-run summary. A failure prints the run, the failing cell's error (``diagnose``), the
worker (on Dask) and the saved failed notebook's path. Over all params files, outputs of runs that
no longer exist are removed first (``prune``).

Where jobs run is an executor (``pipeline/executors.py``): by default a local thread pool; with
``--scheduler tcp://HOST:PORT`` an existing Dask cluster. The local pool is not an embedded Dask
cluster because it needs nothing more: the same job function and the same publish path run either
way, and a thread waiting on a papermill process is all a local worker would do.
"""

from __future__ import annotations

import functools
import shutil
import sys
import uuid
from typing import Any, TextIO

from iscsi_report.core.digest import code_digest
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import cache, executors, warm
from iscsi_report.pipeline.execute import run_notebook
from iscsi_report.pipeline.params import NotebookJob, discover, jobs_for
from iscsi_report.pipeline.prune import prune
from iscsi_report.pipeline.publish import Outcome, publish
from iscsi_report.pipeline.warm import cold_by_default

# Fewest notebooks a local batch runs warm by default: the pool's start (5 s and more under load)
# outweighed its gain on the test suite's batches of two to six notebooks (BENCHMARKS.md, issue 28).
WARM_MIN_LOCAL_NOTEBOOKS = 8


def plan(project: Project, selected: list[str] | None) -> list[NotebookJob]:
    """Every job of the selected params files, all validated before anything runs."""
    return [job for spec in discover(project, selected) for job in jobs_for(project, spec)]


def _outcome(
    project: Project, job: NotebookJob, fut: Any, code: str, executor: executors.Executor
) -> Outcome:
    """A finished future as an Outcome; an output that cannot be published is the job's failure.

    No cache record is written in that case, so whatever was half published is re-executed next time.
    """
    try:
        result = fut.result()
    except Exception as exc:  # the job itself broke (a dead worker, an error outside papermill)
        return Outcome(job, "FAILED", 0.0, executor.failure(exc))
    try:
        return publish(project, job, result, code)
    except OSError as exc:
        detail = f"cannot publish outputs: {type(exc).__name__}: {exc}"
        return Outcome(job, "FAILED", result.seconds, detail)


def _execute_all(
    project: Project,
    todo: list[NotebookJob],
    code: str,
    pool: executors.Executor,
    stream: TextIO,
    warm_kernel: bool,
) -> list[Outcome]:
    """Submit every job to ``pool``, publish each as it completes; on Ctrl-C cancel them all."""
    progress = executors.Progress(len(todo), stream)
    job_fn = functools.partial(run_notebook, warm_kernel=warm_kernel)
    futures = {
        pool.submit(job_fn, job, key=f"{job.run}/{job.notebook}-{uuid.uuid4().hex[:8]}"): job for job in todo
    }
    outcomes = []
    try:
        for fut in pool.as_completed(futures):
            outcome = _outcome(project, futures[fut], fut, code, pool)
            outcomes.append(outcome)
            progress.update(
                outcome.status == "ok", f"{outcome.job.run}/{outcome.job.notebook}", outcome.seconds
            )
    except BaseException:  # Ctrl-C: start nothing more; running notebooks are interrupted
        pool.cancel(list(futures))
        raise
    return outcomes


def run_jobs(
    project: Project,
    jobs: list[NotebookJob],
    n_workers: int,
    force: bool = False,
    stream: TextIO = sys.stdout,
    executor: executors.Executor | None = None,
    warm_kernel: bool = True,
    warm_min_local: int = 1,
) -> list[Outcome]:
    """Execute stale jobs in parallel, print progress and return every job's outcome.

    ``executor`` defaults to the local pool of ``n_workers`` threads; a :class:`DaskExecutor` runs
    the same job function on a cluster, and the outputs are published here either way.
    ``warm_kernel``: notebooks run in kernels forked from each executing process's warm pool; on
    this machine's pool only when at least ``warm_min_local`` notebooks are to run, or a running
    fork server is named in the environment (:data:`.warm.ZYGOTE_ENV`).
    """
    code = code_digest(*project.notebook_code_dirs)
    shutil.rmtree(project.cache_dir / "exec", ignore_errors=True)  # leftovers of killed runs
    outcomes: list[Outcome] = []
    todo: list[NotebookJob] = []
    for job in jobs:
        reason = "forced" if force else cache.why_stale(project, job, code)
        if reason is None:
            outcomes.append(Outcome(job, "cached", 0.0, "unchanged"))
        else:
            todo.append(job)
            print(f"queued  {job.run}/{job.notebook}: {reason}", file=stream, flush=True)
    if todo:  # a batch with nothing to run never contacts a cluster
        pool = executor or executors.LocalExecutor(n_workers)
        # A local batch starts its fork server once (5 s and more: the imports), which a few
        # notebooks do not repay; a Dask worker keeps its server across batches.
        # A fork server named in the environment (warm.ZYGOTE_ENV) is already up: any batch uses it.
        local = isinstance(pool, executors.LocalExecutor)
        big = not local or len(todo) >= warm_min_local
        warm_kernel = warm_kernel and (big or warm.NAMED.socket(project.root) is not None)
        with pool:
            outcomes += _execute_all(project, todo, code, pool, stream, warm_kernel)
    order = {(j.run, j.notebook): i for i, j in enumerate(jobs)}
    return sorted(outcomes, key=lambda o: order[(o.job.run, o.job.notebook)])


def print_summary(outcomes: list[Outcome], stream: TextIO = sys.stdout) -> None:
    """One line per run: run, notebook, seconds, status; then each failure's details."""
    print(f"{'run':24} {'notebook':18} {'seconds':>8}  status", file=stream)
    for o in outcomes:
        print(f"{o.job.run:24} {o.job.notebook:18} {o.seconds:8.1f}  {o.status}", file=stream)
    for o in outcomes:
        if o.status == "FAILED":
            print(f"\nFAILED {o.job.run}/{o.job.notebook}: {o.detail}", file=stream)
            if o.failed_notebook:
                print(f"  failed notebook saved at {o.failed_notebook}", file=stream)
    stream.flush()


def run_batch(
    project: Project,
    selected: list[str] | None,
    n_workers: int,
    force: bool = False,
    scheduler: str | None = None,
    kernels: str = "auto",
) -> int:
    """Validate, execute (locally, or on the Dask scheduler given) and summarise; 1 if any notebook failed.

    Over all params files (none selected), outputs of runs that no longer exist are removed first.
    ``kernels``: "cold" (or :data:`.warm.COLD_ENV` set) starts every kernel afresh, "warm" forks
    every one from the warm pool, "auto" forks them on Dask and in a local batch of at least
    :data:`WARM_MIN_LOCAL_NOTEBOOKS` notebooks (below that the pool's start costs more than it saves),
    and in any local batch when a running fork server is named in :data:`.warm.ZYGOTE_ENV`.
    """
    jobs = plan(project, selected)
    if selected is None:
        prune(project, jobs)
    outcomes = run_jobs(
        project,
        jobs,
        n_workers,
        force,
        executor=executors.executor_for(scheduler, n_workers),
        warm_kernel=not (kernels == "cold" or cold_by_default()),
        warm_min_local=1 if kernels == "warm" else WARM_MIN_LOCAL_NOTEBOOKS,
    )
    print_summary(outcomes)
    return 1 if any(o.status == "FAILED" for o in outcomes) else 0
