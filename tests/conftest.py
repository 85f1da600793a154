"""Shared fixtures: project paths, the third-party corpus (skipped if ../shared is absent), a fork server."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from iscsi_report.core.keep import PARSE_CACHE_ENV
from iscsi_report.pipeline import warm
from iscsi_report.pipeline.assets import ASSET_CACHE_ENV

PROJECT_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = PROJECT_ROOT / "tests" / "fixtures"
CORPUS = PROJECT_ROOT.parent / "shared" / "corpus"
LOOPBACK = "127.0.0.1"  # the only address the capture tests send to
SERVER_START_S = 10  # how long iperf3 -s may take to listen
# Parses kept across the test processes (both xdist workers, and the chapters they execute), inside
# the project's own git-ignored cache folder; keyed by bytes and parser code, so never stale.
os.environ.setdefault(PARSE_CACHE_ENV, str(PROJECT_ROOT / ".cache" / "parsed"))
# The chart runtime every built site carries, made once by vl-convert for all the suite's project
# copies (about 2 CPU-seconds a build otherwise); keyed by vl-convert's version and what it is made with.
os.environ.setdefault(ASSET_CACHE_ENV, str(PROJECT_ROOT / ".cache" / "assets"))


@pytest.fixture(scope="session", autouse=True)
def shared_zygote(request: pytest.FixtureRequest) -> Iterator[warm.Served | None]:
    """One warm fork server per test process, named in ``warm.ZYGOTE_ENV`` for each ``iscsi-report`` started.

    Each ``cli`` process of the e2e tests would otherwise run its few notebooks cold, or start its own
    server (about 5 s of imports). Only when e2e tests were collected, and none is named already;
    stopped by its PID at the end. Tests of cold runs, of a server's death and of Dask workers' own
    servers remove the variable from the environment they pass.
    """
    wanted = any(item.get_closest_marker("e2e") for item in request.session.items)
    if not wanted or os.environ.get(warm.ZYGOTE_ENV):
        yield None
        return
    try:
        served = warm.start_server()
    except OSError as exc:  # the suite still runs, every batch as without a named server
        print(f"no shared fork server: {exc}")
        yield None
        return
    os.environ[warm.ZYGOTE_ENV] = str(served.socket)
    try:
        yield served
    finally:
        os.environ.pop(warm.ZYGOTE_ENV, None)
        served.stop()


@pytest.fixture(scope="session")
def project_root() -> Path:
    """The repository root."""
    return PROJECT_ROOT


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """Real tool outputs captured on this project's machines, committed under tests/fixtures."""
    return FIXTURES


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """Third-party real outputs in ../shared/corpus; tests using it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent")
    return CORPUS


def _free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


@pytest.fixture
def iperf3_server() -> Iterator[int]:
    """``iperf3 -s`` on 127.0.0.1 on a free port (its port), stopped by its own PID."""
    port = _free_port()
    proc = subprocess.Popen(
        ["iperf3", "-s", "-B", LOOPBACK, "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex((LOOPBACK, port)) == 0:
                break
        time.sleep(0.1)
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=SERVER_START_S)


# Test files that execute or build books, heaviest first. `make test` runs the suite with
# `--dist loadfile --no-loadscope-reorder`: xdist hands whole files to the workers in collection
# order, so these start first on both workers and the many quick files fill the gaps at the end.
# The first worker executes the study (test_chapters.py) on two kernels; the second meanwhile takes
# the files that mostly wait (a 1 s ping, a Dask worker's death, a slow device's deadlines), whose
# waits then leave no core idle (benchmarks/suite_idle.py measures idle cores by running test).
# test_site.py and test_front_page.py come last among them: they wait for what test_reader.py and
# test_chapters.py build (build_once: the lab site, the executed study), not blocking a worker meanwhile.
SLOW_FIRST = [
    "tests/e2e/test_chapters.py",
    "tests/test_capture.py",
    # its first minute names the tool of every bundled file (with_tool_cache): parses that the study's
    # chapters then find kept, a cold parse shared between the two workers (BENCHMARKS.md)
    "tests/e2e/test_own_capture.py",
    "tests/e2e/test_dask.py",
    "tests/lab/test_slowdisk.py",  # asserts no time a load could break (never faster than configured)
    "tests/e2e/test_reproducible_site.py",  # builds the lab pair test_safety.py's last tests read
    "tests/browser/test_reader.py",
    "tests/browser/test_hostile_site.py",
    "tests/e2e/test_safety.py",
    "tests/e2e/test_pipeline.py",
    "tests/e2e/test_warm.py",  # its same-bytes test reads the study test_chapters.py executes
    "tests/e2e/test_provenance.py",
    "tests/e2e/test_run_selection.py",
    "tests/e2e/test_release.py",
    "tests/browser/test_site.py",
    "tests/browser/test_front_page.py",
]

# Files without the e2e mark that still take tens of seconds (--durations of a whole run, 2026-11-26): they
# start after the e2e files and before the many quick files, so that neither worker picks one of
# them up last while the other has nothing left to do.
HEAVY_OTHERS = [
    "tests/test_fit.py",
    "tests/test_dataset_forecast.py",
    "tests/test_reconstruct.py",
    "tests/test_lab_tails_fifo.py",
    "tests/test_lab_analysis.py",
    "tests/lab/test_dataset.py",
    "tests/test_lab_tails.py",
    "tests/e2e/test_fleet_staleness.py",
]


def _start_rank(item: pytest.Item) -> int:
    """Where the item's file starts: SLOW_FIRST in order, other e2e files, HEAVY_OTHERS, then the rest."""
    rel = item.path.relative_to(PROJECT_ROOT).as_posix() if item.path.is_relative_to(PROJECT_ROOT) else ""
    if rel in SLOW_FIRST:
        return SLOW_FIRST.index(rel)
    if item.get_closest_marker("e2e"):
        return len(SLOW_FIRST)
    if rel in HEAVY_OTHERS:
        return len(SLOW_FIRST) + 1 + HEAVY_OTHERS.index(rel)
    return len(SLOW_FIRST) + 1 + len(HEAVY_OTHERS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order files heaviest first (stable: a file's tests keep their order and stay together)."""
    items.sort(key=_start_rank)
