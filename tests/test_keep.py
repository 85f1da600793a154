"""Kept results shared across processes: computed once when several ask at the same time."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from iscsi_report.core import keep

HOLD_S = 0.5  # how long the computation holds the lock: long enough for the other process to ask


def _slow_compute(log: Path) -> dict[str, int]:
    """A costly result: records that it ran, then takes a while."""
    with open(log, "a") as fh:
        fh.write("computed\n")
    time.sleep(HOLD_S)
    return {"answer": 42}


def _ask(entry: Path, log: Path, out: Path) -> None:
    """One process asking for the kept result; writes what it got."""
    result = keep.once(entry, lambda: _slow_compute(log), lambda kept: isinstance(kept, dict))
    out.write_text(repr(result))


def test_two_processes_asking_at_once_compute_once(tmp_path: Path) -> None:
    entry, log = tmp_path / "kept" / "code" / "kind" / "abc.pickle", tmp_path / "log"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_ask, args=(entry, log, tmp_path / f"out{i}")) for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert log.read_text() == "computed\n"  # the second waited and read the first's result
    assert {(tmp_path / f"out{i}").read_text() for i in range(2)} == {"{'answer': 42}"}


def test_an_invalid_kept_result_is_computed_again_and_replaced(tmp_path: Path) -> None:
    entry, log = tmp_path / "kept" / "abc.pickle", tmp_path / "log"
    keep.store(entry, ["not", "the", "right", "kind"])
    assert keep.once(entry, lambda: _slow_compute(log), lambda kept: isinstance(kept, dict)) == {"answer": 42}
    assert keep.load(entry) == {"answer": 42}
    assert log.read_text() == "computed\n"


def test_nothing_kept_means_computed_each_time(tmp_path: Path) -> None:
    log = tmp_path / "log"
    for _ in range(2):
        keep.once(None, lambda: _slow_compute(log), lambda kept: True)
    assert log.read_text() == "computed\ncomputed\n"
