"""The job function: execute one notebook with papermill in a staging folder, return its outputs.

One papermill process per notebook, a pinned kernel, absolute paths, a per-cell execution timeout.
Warm (the default): the papermill process and its kernel are forked from this process's zygote
(``pipeline/warm.py``) with the scientific stack imported; cold (``run --cold``): both are started
afresh, papermill as ``python -c PAPERMILL_BOOT`` and the kernel as ``python -c KERNEL_BOOT``.
:func:`run_notebook` writes nothing outside its staging folder and returns the executed notebook
(made publishable) and its CSV tables as bytes with their sha256, so it may run on this machine or
on a Dask worker; ``publish`` verifies and places them on the submitting side.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import nbformat
import yaml

from iscsi_report.core.digest import code_digest, sha256_bytes
from iscsi_report.core.ingest.textio import READS_LOG_ENV
from iscsi_report.core.keep import PARSE_CACHE_ENV
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import cache, diagnose, executors, sanitize, warm, zygote
from iscsi_report.pipeline.params import NotebookJob, read_notebook

KERNEL_NAME = "iscsi-report"
# Kernel start-up failures (diagnose.KERNEL_START_FAILURES) are retried this often in all.
KERNEL_START_ATTEMPTS = 3
# How often a running job checks whether it was cancelled, and how long papermill then gets to stop.
STOP_POLL_S = 0.2
STOP_GRACE_S = 10.0
# Per-notebook start-up cut (BENCHMARKS.md, "Batch on Dask"): the kernel never loads debugpy
# (ipykernel imports it for a debugger papermill never attaches; with the module marked absent it
# starts without one), and papermill never loads pyarrow (imported only for hdfs:// paths).
KERNEL_BOOT = (
    "import sys\n"
    "sys.modules['debugpy'] = None\n"
    "if sys.path and sys.path[0] == '':\n"
    "    del sys.path[0]\n"
    "from ipykernel import kernelapp\n"
    "kernelapp.launch_new_instance()"
)
# The cold papermill process also loads the project's engine (pipeline/nbengine.py, its path the first
# argument) by path and makes it the default, as a papermill process forked from the zygote does.
PAPERMILL_BOOT = (
    "import runpy, sys\n"
    "sys.modules['pyarrow'] = None\n"
    "runpy.run_path(sys.argv.pop(1))['register']()\n"
    "from papermill.cli import papermill\n"
    "papermill(prog_name='papermill')"
)


Process = subprocess.Popen[bytes] | warm.Forked  # papermill, started cold or forked warm


@dataclass(frozen=True)
class JobResult:
    """What the job function sends back: outputs as bytes with their sha256, and where it ran."""

    ok: bool
    seconds: float
    worker: str
    detail: str = ""
    notebook: bytes = b""  # the publishable notebook if ok, else the failed one (if any)
    log: bytes = b""  # papermill's log, on failure
    tables: dict[str, bytes] = field(default_factory=dict)  # CSV name -> bytes
    sha256: dict[str, str] = field(default_factory=dict)  # "notebook" and each CSV name -> sha256
    reads: dict[str, str] = field(default_factory=dict)  # project-relative path -> sha256 as read
    source_sha256: str = ""  # the notebook source the worker executed
    code: str = ""  # the worker's package code digest (core.digest.code_digest)
    reads_repeated: dict[str, int] = field(default_factory=dict)  # files read more than once


def kernel_env(jupyter_dir: Path, warm_kernel: bool = False) -> dict[str, str]:
    """Pin the kernel to this interpreter via a private kernelspec; return the env to use it.

    ``warm_kernel``: the kernelspec's argv is the warm pool's launcher (a kernel forked from the
    zygote the env names; cold if none is named or reachable).
    """
    kdir = jupyter_dir / "kernels" / KERNEL_NAME
    kdir.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-c", KERNEL_BOOT, "-f", "{connection_file}"]
    spec = {
        "argv": warm.kernelspec_argv() if warm_kernel else argv,
        "display_name": "iscsi-report (pinned)",
        "language": "python",
    }
    (kdir / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    # Without the zygote's name (a caller's warm.ZYGOTE_ENV): a cold run's processes never see it; a
    # warm one gets the zygote actually used (warm.spawn_papermill).
    environ = {k: v for k, v in os.environ.items() if k != zygote.SOCKET_ENV}
    return {**zygote.kernel_environ(environ), "JUPYTER_PATH": str(jupyter_dir)}


def _start(args: list[str], env: dict[str, str], log: IO[bytes], cwd: Path, warm_kernel: bool) -> Process:
    """Papermill with ``args``: forked from the zygote if ``warm_kernel`` (cold if it cannot start)."""
    if warm_kernel:
        try:
            return warm.spawn_papermill(args, env, log, cwd)
        except OSError as exc:
            print(f"warm    kernel pool unavailable, running cold: {exc}", flush=True)
    cmd = [sys.executable, "-c", PAPERMILL_BOOT, str(zygote.ENGINE_FILE), *args]
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)


def _papermill(args: list[str], env: dict[str, str], log: Path, cwd: Path, warm_kernel: bool) -> int:
    """Run papermill, logging to ``log``; interrupt it (then kill it) if the job is cancelled."""
    with open(log, "wb") as fh:
        proc = _start(args, env, fh, cwd, warm_kernel)
        rc = _wait(proc)
        if isinstance(proc, warm.Forked) and proc.lost:
            fh.write(f"\n{warm.LOST_MESSAGE}\n".encode())
        return rc


def _wait(proc: Process) -> int:
    """Papermill's exit status; interrupt it (then kill it) if the job is cancelled."""
    while True:
        try:
            return proc.wait(timeout=STOP_POLL_S)
        except subprocess.TimeoutExpired:
            if executors.stop_requested():
                proc.send_signal(signal.SIGINT)  # as Ctrl-C would: papermill stops its kernel
                try:
                    return proc.wait(timeout=STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    return proc.wait()


def run_notebook(job: NotebookJob, warm_kernel: bool = True) -> JobResult:
    """The job function: execute one notebook with papermill in a staging folder; return its outputs.

    It writes nothing outside its own staging folder (removed at the end), so it may run on any
    machine that sees the project root at the same path; :func:`.publish.publish` does the rest.
    ``warm_kernel``: fork papermill and the kernel from this process's warm pool (else start cold).
    """
    started = time.monotonic()
    worker = executors.worker_name()
    project = Project.at(job.parameters["project_root"])
    if not job.source.is_file():
        detail = f"worker {worker} does not see the project at {project.root} (no {job.source})"
        return JobResult(False, 0.0, worker, detail + "; workers need it on a shared filesystem")
    work = project.cache_dir / "exec" / job.run / f"{job.notebook}-{uuid.uuid4().hex[:8]}"
    try:
        return _execute_in(project, job, work, worker, started, warm_kernel)
    except OSError as exc:
        detail = f"cannot stage outputs on worker {worker}: {type(exc).__name__}: {exc}"
        return JobResult(False, time.monotonic() - started, worker, detail)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _execute_in(
    project: Project, job: NotebookJob, work: Path, worker: str, started: float, warm_kernel: bool
) -> JobResult:
    """:func:`run_notebook` inside its staging folder ``work``."""
    staged_results = work / "results"
    staged_results.mkdir(parents=True)
    params_file = work / "parameters.yaml"
    params = {**job.parameters, "results_dir": str(staged_results)}
    params_file.write_text(yaml.safe_dump(params, sort_keys=True), encoding="utf-8")
    out_nb, log = work / "executed.ipynb", work / "papermill.log"
    source_bytes = job.source.read_bytes()
    code = code_digest(*project.notebook_code_dirs)  # the code the kernel is about to import
    source_nb = work / "source.ipynb"  # the MyST text notebook, converted in the staging folder
    nbformat.write(read_notebook(job.source), source_nb)
    args = [
        str(source_nb),
        str(out_nb),
        "-f",
        str(params_file),
        "-k",
        KERNEL_NAME,
        "--cwd",
        str(project.root),
        "--execution-timeout",
        str(job.timeout_s),
        "--no-progress-bar",
    ]
    run_env = {
        **kernel_env(work / "jupyter", warm_kernel),
        READS_LOG_ENV: str(work / "reads.log"),
        PARSE_CACHE_ENV: os.environ.get(PARSE_CACHE_ENV) or str(project.cache_dir / "parsed"),
    }
    for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
        rc = _papermill(args, run_env, log, project.root, warm_kernel)
        if rc == 0 or attempt == KERNEL_START_ATTEMPTS or not diagnose.kernel_failed_to_start(log):
            break
        print(f"retry   {job.run}/{job.notebook}: the kernel failed to start (attempt {attempt})", flush=True)
        out_nb.unlink(missing_ok=True)
        (work / "reads.log").unlink(missing_ok=True)
    seconds = time.monotonic() - started
    if rc != 0:
        detail = diagnose.failure_detail(job, out_nb, log, rc)
        failed = out_nb.read_bytes() if out_nb.exists() else b""
        return JobResult(False, seconds, worker, detail, notebook=failed, log=log.read_bytes())
    notebook = sanitize.publishable(out_nb, project.executed(job.run, job.notebook), project)
    tables = {csv.name: csv.read_bytes() for csv in sorted(staged_results.glob("*.csv"))}
    reads, repeated = cache.read_log(project, work / "reads.log")
    sha256 = {
        "notebook": sha256_bytes(notebook),
        **{name: sha256_bytes(data) for name, data in tables.items()},
    }
    return JobResult(
        True,
        seconds,
        worker,
        "",
        notebook,
        b"",
        tables,
        sha256,
        reads,
        sha256_bytes(source_bytes),
        code,
        repeated,
    )
