"""``iscsi-report run``: execute each params file's notebooks with papermill, in parallel.

One papermill process per notebook, a pinned kernel, absolute paths, a per-cell execution
timeout, a progress line per event and a one-line-per-run summary. The job function
(:func:`run_notebook`) executes a notebook in a staging folder and returns its outputs (executed
notebook, CSV tables) as bytes with their sha256; :func:`publish` verifies them and moves them into
place only on success, the cache record last. A failure prints the run, the failing cell's error,
the worker (on Dask) and the saved failed notebook's path.

Where jobs run is an executor (``pipeline/executors.py``): by default a local thread pool; with
``--scheduler tcp://HOST:PORT`` an existing Dask cluster. The local pool is not an embedded Dask
cluster because it needs nothing more: the same job function and the same publish path run either
way, and a thread waiting on a papermill process is all a local worker would do.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import nbformat
import yaml

from iscsi_report.core.errors import ReportError
from iscsi_report.core.ingest.textio import READS_LOG_ENV
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import cache, executors
from iscsi_report.pipeline.locking import pipeline_lock
from iscsi_report.pipeline.params import NotebookJob, discover, jobs_for, read_notebook

KERNEL_NAME = "iscsi-report"
# Parallel kernels started at the same instant can race for ports and die before replying;
# only such start-up failures are retried (a failing cell never is).
KERNEL_START_ATTEMPTS = 3
KERNEL_START_FAILURES = ("Kernel died before replying to kernel_info", "Kernel didn't respond in")
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
PAPERMILL_BOOT = (
    "import sys\n"
    "sys.modules['pyarrow'] = None\n"
    "from papermill.cli import papermill\n"
    "papermill(prog_name='papermill')"
)
INTERRUPTED_STATUS = 130  # the shell's status for a command ended by Ctrl-C (128 + SIGINT)
# Set by Ctrl-C: a job whose papermill got the same SIGINT can fail and be reported before the
# runner's KeyboardInterrupt is handled; the command must still end as interrupted (130).
SIGINT_SEEN = threading.Event()


def watch_sigint() -> None:
    """Remember Ctrl-C (then raise KeyboardInterrupt as Python's default handler does)."""
    SIGINT_SEEN.clear()

    def _handler(signum: int, frame: Any) -> None:
        SIGINT_SEEN.set()
        signal.default_int_handler(signum, frame)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _handler)


# Cells papermill adds (the parameters it injects, the red banners it puts around a failed cell).
PAPERMILL_CELL_TAGS = {"injected-parameters", "papermill-error-cell-tag"}
# Tags that keep the runner's plumbing off the published page. Other code cells get no tag: the site
# hides all code behind one "Show the code" switch per page (book/_static/code-toggle.js).
HIDDEN_CELL_TAGS = {"injected-parameters": "remove-cell", "parameters": "remove-cell"}
# Metadata of an execution, not of its result (times, durations, staging paths): never published,
# so that the same inputs publish the same bytes.
EXECUTION_METADATA = ("papermill", "execution")
# The runner's path parameters, rewritten in the published notebook so that it names no path of
# the building machine and runs again from where it sits in the book (book/runs/<run>/).
PATH_PARAMETERS = ("project_root", "results_dir")


@dataclass
class Outcome:
    """How one notebook job ended."""

    job: NotebookJob
    status: str  # "ok", "cached", "FAILED"
    seconds: float
    detail: str = ""
    failed_notebook: Path | None = None


def _kernel_failed_to_start(log: Path) -> bool:
    """True if papermill failed before any cell ran because the kernel did not come up."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return False
    return any(marker in text for marker in KERNEL_START_FAILURES)


def _cell_label(nb: nbformat.NotebookNode, index: int) -> str:
    """'cell N [first line]', N the 0-based index in the source notebook (papermill's cells skipped)."""
    number = sum(
        not set(c.get("metadata", {}).get("tags", [])) & PAPERMILL_CELL_TAGS for c in nb.cells[:index]
    )
    first = nb.cells[index].source.strip().splitlines()[:1]
    return f"cell {number}" + (f" [{first[0][:60]}]" if first else "")


def _failed_cell(path: Path) -> tuple[str, str]:
    """(label, 'Ename: message') of the cell that failed, else of the last cell that started.

    A timeout shows as an error output (the kernel is interrupted); a killed kernel leaves no
    error output, so the cell running at the time is the last one papermill started.
    """
    try:
        nb = nbformat.read(path, as_version=4)
    except (OSError, ValueError):
        return "", ""
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return _cell_label(nb, index), f"{out.get('ename')}: {out.get('evalue')}"
    started = [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and c.get("metadata", {}).get("papermill", {}).get("start_time")
    ]
    return (_cell_label(nb, started[-1]), "") if started else ("", "")


def _error_from_notebook(path: Path) -> str:
    """The failing cell's error as 'cell N [first line]: Ename: message' ('' if none)."""
    label, error = _failed_cell(path)
    return f"{label}: {error}" if error else ""


def _failure_detail(job: NotebookJob, out_nb: Path, log: Path, rc: int) -> str:
    """One line saying which cell failed and how: its error, the execution timeout or a dead kernel."""
    try:
        log_text = log.read_text(errors="replace")
    except OSError:
        log_text = ""
    label, error = _failed_cell(out_nb) if out_nb.exists() else ("", "")
    where = label or "a cell"
    if "CellTimeoutError" in log_text:
        return (
            f"{where}: timed out after {job.timeout_s} s (the execution timeout, `timeout_s` in "
            f"params/{job.run}.yaml); the cell was interrupted"
        )
    if "DeadKernelError" in log_text:
        return f"{where}: the kernel died while running it (killed, or out of memory)"
    if error:
        return f"{where}: {error}"
    return _error_from_log(log) or f"papermill exited with status {rc}"


def _error_from_log(log: Path) -> str:
    """Last meaningful line of papermill's log (timeouts and kernel deaths are reported there)."""
    try:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    for ln in reversed(lines):
        if "Error" in ln or "timed out" in ln or "died" in ln:
            return ln.strip()[:300]
    return lines[-1].strip()[:300] if lines else ""


def _portable_parameters(source: str, project_root: str) -> str:
    """The injected-parameters cell with the path parameters relative to the published notebook."""
    values = {"project_root": project_root, "results_dir": ""}
    lines = []
    for line in source.splitlines():
        name = line.split("=", 1)[0].strip()
        lines.append(f"{name} = {values[name]!r}" if name in PATH_PARAMETERS and "=" in line else line)
    return "\n".join(lines)


def machine_paths(project: Project) -> dict[str, str]:
    """Paths of the building machine -> what the published notebook shows instead (longest first)."""
    places = {
        str(project.root): "$PROJECT",
        sys.prefix: "$PYTHON",
        sys.base_prefix: "$PYTHON",
        str(Path.home()): "~",
    }
    return {k: places[k] for k in sorted(places, key=len, reverse=True) if len(k) > 1}


def _without_machine_paths(value: object, paths: dict[str, str]) -> object:
    """``value`` (a notebook's JSON) with every machine path in its strings replaced."""
    if isinstance(value, str):
        for path, shown in paths.items():
            value = value.replace(path, shown)
        return value
    if isinstance(value, list):
        return [_without_machine_paths(v, paths) for v in value]
    if isinstance(value, dict):
        return {k: _without_machine_paths(v, paths) for k, v in value.items()}
    return value


def _publishable(src: Path, dest: Path, project: Project) -> bytes:
    """The executed notebook made reproducible and portable, plumbing hidden: the bytes ``dest`` gets.

    Execution metadata (timings, papermill's paths and environment) is dropped, cell ids are
    numbered instead of random, the path parameters become relative, and any other path of the
    building machine (in an output, say) is replaced by a placeholder (:func:`machine_paths`).
    """
    nb = nbformat.read(src, as_version=4)
    for key in EXECUTION_METADATA:
        nb.metadata.pop(key, None)
    root_from_page = Path(os.path.relpath(project.root, dest.parent)).as_posix()
    for index, cell in enumerate(nb.cells):
        cell.id = f"cell-{index}"  # not the random id the conversion gave it
        for key in EXECUTION_METADATA:
            cell.get("metadata", {}).pop(key, None)
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "injected-parameters" in tags:
            cell.source = _portable_parameters(cell.source, root_from_page)
        for tag, hide in HIDDEN_CELL_TAGS.items():
            if tag in tags and hide not in tags:
                tags.append(hide)
    nb = nbformat.from_dict(_without_machine_paths(nb, machine_paths(project)))
    text: str = nbformat.writes(nb)
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")  # as nbformat.write


def _relative(project: Project, path: Path) -> str:
    try:
        return path.resolve().relative_to(project.root).as_posix()
    except ValueError:
        return str(path.resolve())


def _publish_tables(
    project: Project, job: NotebookJob, tables: dict[str, bytes], previous: set[str]
) -> list[str]:
    """Write each CSV atomically into results/<run>/; drop this job's tables that it no longer makes."""
    dest_dir = project.results_dir / job.run
    dest_dir.mkdir(parents=True, exist_ok=True)
    made = []
    for name in sorted(tables):
        dest = dest_dir / name
        _write_atomically(dest, tables[name])
        made.append(_relative(project, dest))
    for rel in previous - set(made):
        if rel.endswith(".csv"):
            (project.root / rel).unlink(missing_ok=True)
    return made


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
    code: str = ""  # the worker's package code digest (cache.code_digest)
    reads_repeated: dict[str, int] = field(default_factory=dict)  # files read more than once


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _kernel_env(jupyter_dir: Path) -> dict[str, str]:
    """Pin the kernel to this interpreter via a private kernelspec; return the env to use it."""
    kdir = jupyter_dir / "kernels" / KERNEL_NAME
    kdir.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-c", KERNEL_BOOT, "-f", "{connection_file}"],
        "display_name": "iscsi-report (pinned)",
        "language": "python",
    }
    (kdir / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return {**os.environ, "JUPYTER_PATH": str(jupyter_dir), "PYTHONHASHSEED": "0"}


def _papermill(cmd: list[str], env: dict[str, str], log: Path, cwd: Path) -> int:
    """Run papermill, logging to ``log``; interrupt it (then kill it) if the job is cancelled."""
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=cwd)
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


def run_notebook(job: NotebookJob) -> JobResult:
    """The job function: execute one notebook with papermill in a staging folder; return its outputs.

    It writes nothing outside its own staging folder (removed at the end), so it may run on any
    machine that sees the project root at the same path; :func:`publish` does the rest.
    """
    started = time.monotonic()
    worker = executors.worker_name()
    project = Project.at(job.parameters["project_root"])
    if not job.source.is_file():
        detail = f"worker {worker} does not see the project at {project.root} (no {job.source})"
        return JobResult(False, 0.0, worker, detail + "; workers need it on a shared filesystem")
    work = project.cache_dir / "exec" / job.run / f"{job.notebook}-{uuid.uuid4().hex[:8]}"
    try:
        return _execute_in(project, job, work, worker, started)
    except OSError as exc:
        detail = f"cannot stage outputs on worker {worker}: {type(exc).__name__}: {exc}"
        return JobResult(False, time.monotonic() - started, worker, detail)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _execute_in(project: Project, job: NotebookJob, work: Path, worker: str, started: float) -> JobResult:
    """:func:`run_notebook` inside its staging folder ``work``."""
    staged_results = work / "results"
    staged_results.mkdir(parents=True)
    params_file = work / "parameters.yaml"
    params = {**job.parameters, "results_dir": str(staged_results)}
    params_file.write_text(yaml.safe_dump(params, sort_keys=True), encoding="utf-8")
    out_nb, log = work / "executed.ipynb", work / "papermill.log"
    source_bytes = job.source.read_bytes()
    code = cache.code_digest(*project.notebook_code_dirs)  # the code the kernel is about to import
    source_nb = work / "source.ipynb"  # the MyST text notebook, converted in the staging folder
    nbformat.write(read_notebook(job.source), source_nb)
    cmd = [
        sys.executable,
        "-c",
        PAPERMILL_BOOT,
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
    run_env = {**_kernel_env(work / "jupyter"), READS_LOG_ENV: str(work / "reads.log")}
    for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
        rc = _papermill(cmd, run_env, log, project.root)
        if rc == 0 or attempt == KERNEL_START_ATTEMPTS or not _kernel_failed_to_start(log):
            break
        print(f"retry   {job.run}/{job.notebook}: the kernel failed to start (attempt {attempt})", flush=True)
        out_nb.unlink(missing_ok=True)
        (work / "reads.log").unlink(missing_ok=True)
    seconds = time.monotonic() - started
    if rc != 0:
        detail = _failure_detail(job, out_nb, log, rc)
        failed = out_nb.read_bytes() if out_nb.exists() else b""
        return JobResult(False, seconds, worker, detail, notebook=failed, log=log.read_bytes())
    notebook = _publishable(out_nb, project.executed(job.run, job.notebook), project)
    tables = {csv.name: csv.read_bytes() for csv in sorted(staged_results.glob("*.csv"))}
    reads, repeated = cache.read_log(project, work / "reads.log")
    sha256 = {"notebook": _sha256(notebook), **{name: _sha256(data) for name, data in tables.items()}}
    return JobResult(
        True, seconds, worker, "", notebook, b"", tables, sha256, reads, _sha256(source_bytes), code, repeated
    )


def _write_atomically(dest: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``dest``, then rename it into place."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, dest)


def _mismatch(job: NotebookJob, result: JobResult, code: str) -> str:
    """Why a returned result must not be published ('' if it may): corrupted bytes, other code."""
    blobs = {"notebook": result.notebook, **result.tables}
    if set(blobs) != set(result.sha256):
        return "the returned outputs do not match their list of sha256"
    for name, data in blobs.items():
        if _sha256(data) != result.sha256[name]:
            return f"the returned {name} does not match its sha256 (corrupted in transit)"
    if result.source_sha256 != _sha256(job.source.read_bytes()):
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
            _write_atomically(failed, result.notebook)
        if result.log:
            _write_atomically(failed.with_suffix(".log"), result.log)
        saved = failed if result.notebook else None
        return Outcome(job, "FAILED", result.seconds, _on_worker(result.detail, result.worker), saved)
    problem = _mismatch(job, result, code)
    if problem:
        return Outcome(job, "FAILED", result.seconds, _on_worker(f"not published: {problem}", result.worker))
    previous = cache.load_record(project, job)
    dest_nb = project.executed(job.run, job.notebook)
    _write_atomically(dest_nb, result.notebook)
    tables = _publish_tables(project, job, result.tables, set(previous.outputs) if previous else set())
    outputs = cache.digests(project, [_relative(project, dest_nb), *tables])
    cache.save_record(
        project,
        job,
        cache.Record(
            cache.static_key(job, code), result.reads, outputs, result.seconds, result.reads_repeated
        ),
    )
    return Outcome(job, "ok", result.seconds)


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


def plan(project: Project, selected: list[str] | None) -> list[NotebookJob]:
    """Every job of the selected params files, all validated before anything runs."""
    return [job for spec in discover(project, selected) for job in jobs_for(project, spec)]


def _execute_all(
    project: Project, todo: list[NotebookJob], code: str, pool: executors.Executor, stream: TextIO
) -> list[Outcome]:
    """Submit every job to ``pool``, publish each as it completes; on Ctrl-C cancel them all."""
    progress = executors.Progress(len(todo), stream)
    futures = {
        pool.submit(run_notebook, job, key=f"{job.run}/{job.notebook}-{uuid.uuid4().hex[:8]}"): job
        for job in todo
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
) -> list[Outcome]:
    """Execute stale jobs in parallel, print progress and return every job's outcome.

    ``executor`` defaults to the local pool of ``n_workers`` threads; a :class:`DaskExecutor` runs
    the same job function on a cluster, and the outputs are published here either way.
    """
    code = cache.code_digest(*project.notebook_code_dirs)
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
        with executor or executors.LocalExecutor(n_workers) as pool:
            outcomes += _execute_all(project, todo, code, pool, stream)
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


def prune(project: Project, jobs: list[NotebookJob], stream: TextIO = sys.stdout) -> list[str]:
    """Remove what no params file asks for any more: executed notebooks, their tables and records.

    A deleted params file (or a notebook dropped from one) must not stay published. Returns the
    removed paths, relative to the project root.
    """
    current = {(j.run, j.notebook) for j in jobs}
    runs = {j.run for j in jobs}
    removed: list[Path] = []
    for nb in sorted(project.runs_dir.glob("*/*.ipynb")):
        run, notebook = nb.parent.name, nb.stem
        if (run, notebook) in current:
            continue
        record = project.cache_dir / "runs" / run / f"{notebook}.json"
        try:
            outputs = json.loads(record.read_text(encoding="utf-8")).get("outputs", {})
        except (OSError, ValueError, AttributeError):
            outputs = {}
        for rel in outputs:
            if rel.endswith(".csv") and (project.root / rel).is_file():
                (project.root / rel).unlink()
                removed.append(project.root / rel)
        nb.unlink()
        record.unlink(missing_ok=True)
        removed.append(nb)
    for folder in (project.runs_dir, project.results_dir, project.cache_dir / "runs"):
        for d in sorted(folder.glob("*")) if folder.is_dir() else []:
            if d.is_dir() and d.name not in runs:
                removed.extend(sorted(p for p in d.rglob("*") if p.is_file()))
                shutil.rmtree(d)
    rels = sorted({_relative(project, p) for p in removed})
    for rel in rels:
        print(f"removed {rel}: no params file asks for it", file=stream, flush=True)
    return rels


def run_batch(
    project: Project,
    selected: list[str] | None,
    n_workers: int,
    force: bool = False,
    scheduler: str | None = None,
) -> int:
    """Validate, execute (locally, or on the Dask scheduler given) and summarise; 1 if any notebook failed.

    Over all params files (none selected), outputs of runs that no longer exist are removed first.
    """
    jobs = plan(project, selected)
    if selected is None:
        prune(project, jobs)
    outcomes = run_jobs(
        project, jobs, n_workers, force, executor=executors.executor_for(scheduler, n_workers)
    )
    print_summary(outcomes)
    return 1 if any(o.status == "FAILED" for o in outcomes) else 0


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


def add_scheduler_argument(parser: argparse.ArgumentParser) -> None:
    """``--scheduler``: run the notebooks on an existing Dask cluster instead of this machine."""
    parser.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="execute the notebooks on this Dask scheduler's workers (they must see the project at the "
        "same path and run the same environment: see pipeline/executors.py); --jobs is then ignored",
    )


def batch_from_args(project: Project, args: argparse.Namespace) -> int:
    """The batch ``run`` and ``book`` share; a failure caused by Ctrl-C ends as KeyboardInterrupt."""
    status = run_batch(project, args.params or None, args.jobs, args.force, args.scheduler)
    if status != 0 and SIGINT_SEEN.is_set():
        raise KeyboardInterrupt
    return status


def run(args: argparse.Namespace) -> int:
    """Entry point of ``iscsi-report run``."""
    project = Project.at(args.root)
    try:
        watch_sigint()
        with pipeline_lock(project):
            return batch_from_args(project, args)
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
