"""The submitting side of a job: verify its outputs, publish them atomically, write the run record last.

A failed job publishes nothing; its notebook and papermill log are kept under ``.cache/failed/``.
Workers never write into ``book/`` or ``results/``: only this module does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from iscsi_report.core.atomic import write_atomic
from iscsi_report.core.digest import sha256_bytes
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import cache, executors
from iscsi_report.pipeline.execute import JobResult
from iscsi_report.pipeline.params import NotebookJob


@dataclass
class Outcome:
    """How one notebook job ended."""

    job: NotebookJob
    status: str  # "ok", "cached", "FAILED"
    seconds: float
    detail: str = ""
    failed_notebook: Path | None = None


def _publish_tables(
    project: Project, job: NotebookJob, tables: dict[str, bytes], previous: set[str]
) -> list[str]:
    """Write each CSV atomically into results/<run>/; drop this job's tables that it no longer makes."""
    dest_dir = project.results_dir / job.run
    dest_dir.mkdir(parents=True, exist_ok=True)
    made = []
    for name in sorted(tables):
        dest = dest_dir / name
        write_atomic(dest, tables[name])
        made.append(project.relative(dest))
    for rel in previous - set(made):
        if rel.endswith(".csv"):
            (project.root / rel).unlink(missing_ok=True)
    return made


def _mismatch(job: NotebookJob, result: JobResult, code: str) -> str:
    """Why a returned result must not be published ('' if it may): corrupted bytes, other code."""
    blobs = {"notebook": result.notebook, **result.tables}
    if set(blobs) != set(result.sha256):
        return "the returned outputs do not match their list of sha256"
    for name, data in blobs.items():
        if sha256_bytes(data) != result.sha256[name]:
            return f"the returned {name} does not match its sha256 (corrupted in transit)"
    if result.source_sha256 != sha256_bytes(job.source.read_bytes()):
        return f"the worker executed another version of {job.source.name} than this checkout's"
    if result.code != code:
        return (
            f"the worker ran package code {result.code[:12]}, this checkout has {code[:12]} (code changed "
            "during the run, or the worker has another commit installed)"
        )
    return ""


def _on_worker(detail: str, worker: str) -> str:
    """``detail`` with the worker named, when the job ran on a Dask worker."""
    return detail if worker == executors.LOCAL else f"{detail} (on Dask worker {worker})"


def publish(project: Project, job: NotebookJob, result: JobResult, code: str) -> Outcome:
    """On the submitting side: verify a job's outputs, publish them atomically, write the record last.

    A failed job publishes nothing; its notebook and log are saved under ``.cache/failed/``.
    """
    if not result.ok:
        failed = project.cache_dir / "failed" / job.run / f"{job.notebook}.ipynb"
        if result.notebook:
            write_atomic(failed, result.notebook)
        if result.log:
            write_atomic(failed.with_suffix(".log"), result.log)
        saved = failed if result.notebook else None
        return Outcome(job, "FAILED", result.seconds, _on_worker(result.detail, result.worker), saved)
    problem = _mismatch(job, result, code)
    if problem:
        return Outcome(job, "FAILED", result.seconds, _on_worker(f"not published: {problem}", result.worker))
    previous = cache.load_record(project, job)
    dest_nb = project.executed(job.run, job.notebook)
    write_atomic(dest_nb, result.notebook)
    tables = _publish_tables(project, job, result.tables, set(previous.outputs) if previous else set())
    outputs = cache.digests(project, [project.relative(dest_nb), *tables])
    cache.save_record(
        project,
        job,
        cache.Record(
            cache.static_key(job, code), result.reads, outputs, result.seconds, result.reads_repeated
        ),
    )
    return Outcome(job, "ok", result.seconds)
