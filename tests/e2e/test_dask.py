"""The batch on a real Dask cluster on loopback: one scheduler and two workers, each its own process.

A params set of eight runs is executed through ``--scheduler`` while one worker is SIGKILLed in the
middle of a notebook; every run must still finish (Dask reschedules the job on the other worker),
publish the same bytes as a local run, and be skipped by the cache the next time.
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

from iscsi_report.pipeline import warm
from iscsi_report.pipeline.build import FORKED_NOTE

from .projects import (
    LAB,
    add_notebook,
    cli,
    copy_package,
    make_project,
    make_study_project,
    parent_pid,
    with_tool_cache,
    without_named_zygote,
)

pytestmark = [pytest.mark.e2e]

DASK = Path(sys.executable).with_name("dask")
RUNS = [f"r{i}" for i in range(8)]
WAIT_S = 90  # upper bound for a state the test waits for (never a timed assertion)
RUN_WAIT_S = 900  # upper bound for a whole batch of tiny notebooks on one surviving worker, loaded machine
# Records which papermill process (the kernel's parent) runs it, then holds the worker a moment.
TINY = (
    "import os, pathlib, time\nimport pandas as pd\nfrom iscsi_report.presentation import report\n"
    "ctx = report.start(run_name, dataset, project_root, results_dir or None)\n"
    "busy = pathlib.Path(project_root) / 'busy'\nbusy.mkdir(exist_ok=True)\n"
    "(busy / f'{run_name}-{os.getpid()}').write_text(str(os.getppid()))\n"
    "time.sleep(1.5)\n"
    "ctx.table(pd.DataFrame({'run': [run_name], 'x_ms': [len(run_name) * 1.25]}), 'tiny_table')"
)


@dataclass
class Cluster:
    address: str
    env: dict[str, str]  # imports a private copy of the package: edits to the tree don't reach the run
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A Dask process in its own session (so that what it leaves behind can be stopped with it)."""
    with open(log, "wb") as fh:
        return subprocess.Popen(args, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True, env=env)


def _wait_for_workers(address: str, n: int) -> None:
    from distributed import Client

    with Client(address, timeout="30s") as client:
        client.wait_for_workers(n, timeout=WAIT_S)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill a Dask process and anything left in its session (papermill runs it started), by its PID."""
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=WAIT_S)


@contextmanager
def _running_cluster(folder: Path) -> Iterator[Cluster]:
    """``dask scheduler`` and two single-thread ``dask worker`` processes, loopback only, no nanny."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = folder / "dask-logs"
    logs.mkdir()
    env = without_named_zygote(copy_package(folder / "code"))  # each worker keeps its own fork server
    procs: list[subprocess.Popen[bytes]] = []
    try:
        scheduler_args = ["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]
        procs.append(_start([str(DASK), *scheduler_args], logs / "scheduler.log", env))
        for i in range(2):
            worker = [str(DASK), "worker", address, "--host", "127.0.0.1", "--no-nanny", "--nthreads", "1"]
            worker += ["--no-dashboard", "--name", f"w{i}", "--local-directory", str(folder / f"w{i}")]
            procs.append(_start(worker, logs / f"worker{i}.log", env))
        _wait_for_workers(address, 2)
        yield Cluster(address, env, procs[0], procs[1:])
    finally:
        for proc in reversed(procs):
            _stop(proc)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A cluster of this test's own, for a test that kills one of its workers."""
    with _running_cluster(tmp_path) as running:
        yield running


@pytest.fixture(scope="module")
def shared_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One cluster for the tests that leave it as they found it (each worker's fork server kept warm)."""
    with _running_cluster(tmp_path_factory.mktemp("cluster")) as running:
        yield running


def _project(dest: Path, notebook: str, code: str) -> Path:
    project = make_project(dest, runs={run: (LAB, [notebook]) for run in RUNS})
    add_notebook(project, notebook, code)
    return project


def _running_on(project: Path, worker_pid: int) -> bool:
    """True once a notebook is running under ``worker_pid`` (kernel -> papermill -> worker)."""
    busy = project / "busy"
    marks = list(busy.iterdir()) if busy.is_dir() else []
    return any(parent_pid(int(m.read_text() or 0)) == worker_pid for m in marks)


def _digests(project: Path, folder: str) -> dict[str, str]:
    root = project / folder
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_worker_killed_mid_notebook_is_retried_and_results_match_a_local_run(
    cluster: Cluster, tmp_path: Path
) -> None:
    project = _project(tmp_path / "dask", "tiny", TINY)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "iscsi_report.cli",
            "--root",
            str(project),
            "run",
            "--scheduler",
            cluster.address,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cluster.env,
    )
    victim = cluster.workers[0]
    deadline = time.monotonic() + WAIT_S
    while not _running_on(project, victim.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _running_on(project, victim.pid), "worker w0 never ran a notebook"
    os.kill(victim.pid, signal.SIGKILL)  # mid-notebook: its job must be rescheduled
    out, err = proc.communicate(timeout=RUN_WAIT_S)
    assert proc.returncode == 0, out + err
    assert victim.wait(timeout=WAIT_S) == -signal.SIGKILL
    assert out.count("ok") >= len(RUNS)
    for run in RUNS:
        assert f"{run:24} {'tiny':18}" in out and (project / "results" / run / "tiny_table.csv").is_file()

    assert not [p for p in (project / "book").rglob("*") if p.name.endswith(".tmp")]  # nothing half-written
    assert not [p for p in (project / "results").rglob("*") if p.name.endswith(".tmp")]
    assert len(list((project / ".cache" / "runs").glob("*/tiny.json"))) == len(RUNS)

    local = _project(tmp_path / "local", "tiny", TINY)
    result = cli(local, "run", "--jobs", "2", env=cluster.env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _digests(project, "results") == _digests(local, "results")
    assert _digests(project, "book/runs") == _digests(local, "book/runs")

    again = cli(project, "run", "--scheduler", cluster.address, env=cluster.env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "queued" not in again.stdout
    assert again.stdout.count("cached") == len(RUNS)


def test_failing_notebook_names_run_cell_and_worker(shared_cluster: Cluster, tmp_path: Path) -> None:
    cluster = shared_cluster
    project = make_project(tmp_path / "p", runs={"bad": (LAB, ["boom"])})
    add_notebook(project, "boom", "x = 1\nx / 0")
    result = cli(project, "run", "--scheduler", cluster.address, env=cluster.env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "FAILED bad/boom: cell 2 [x = 1]: ZeroDivisionError: division by zero (on Dask worker tcp://127.0.0.1:"
        in (result.stdout)
    )
    assert (project / ".cache" / "failed" / "bad" / "boom.ipynb").is_file()
    assert not (project / "book" / "runs" / "bad" / "boom.ipynb").exists()
    assert not (project / ".cache" / "runs" / "bad").exists()


def test_unreachable_scheduler_is_a_clear_error(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", runs={"r": (LAB, ["boom"])})
    add_notebook(project, "boom", "1")
    address = f"tcp://127.0.0.1:{_free_port()}"
    result = cli(project, "run", "--scheduler", address, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"error: --scheduler {address}: cannot reach the Dask scheduler" in result.stderr


def test_book_through_the_scheduler_builds_the_site(
    shared_cluster: Cluster, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cluster = shared_cluster
    project = make_study_project(tmp_path / "book")  # the real book pages, params and datasets
    with_tool_cache(tmp_path_factory, project)  # the bundled datasets' tools named, as after a first build
    # the submitting side builds the site: forked from the suite's fork server, if it names one (the
    # workers never see it: each job's environment is its worker's)
    named = {warm.ZYGOTE_ENV: os.environ[warm.ZYGOTE_ENV]} if os.environ.get(warm.ZYGOTE_ENV) else {}
    result = cli(project, "book", LAB, "--scheduler", cluster.address, env={**cluster.env, **named})
    assert result.returncode == 0, result.stdout + result.stderr
    chapters = [p.stem for p in sorted((project / "book" / "runs" / LAB).glob("*.ipynb"))]
    assert chapters and all(f"{LAB:24} {nb:18}" in result.stdout for nb in chapters)
    assert "on Dask worker" not in result.stdout  # no job failed
    assert (FORKED_NOTE in result.stdout) == bool(named)
    site = project / "_build" / "html"
    assert (site / "index.html").is_file()
    for nb in chapters:  # each page built, its tables came back from the workers and are linked
        page = (site / "runs" / LAB / f"{nb}.html").read_text(encoding="utf-8")
        assert "Download" in page
    assert any((project / "results" / LAB).glob("*.csv"))
    again = cli(project, "book", LAB, "--scheduler", cluster.address, env=cluster.env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "queued" not in again.stdout and again.stdout.count("cached") == len(chapters)
