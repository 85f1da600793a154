"""core.atomic.write_atomic: concurrent writers of one file, in threads, never tear or lose it."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from iscsi_report.core.atomic import write_atomic

WRITERS = 8
ROUNDS = 40
SIZE = 256 * 1024  # large enough that a shared temporary file would be caught half-written


def _payload(writer: int, round_: int) -> bytes:
    """A body whose every byte names its writer and round, so a mix of two is seen at once."""
    return bytes([(writer * ROUNDS + round_) % 256]) * SIZE


def test_threads_writing_one_file_leave_a_whole_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "shared.json"
    write_atomic(target, _payload(0, 0))
    whole = {_payload(w, r) for w in range(WRITERS) for r in range(ROUNDS)}
    start = threading.Barrier(WRITERS + 1)
    done = threading.Event()
    seen: list[bytes] = []

    def writer(w: int) -> None:
        start.wait()
        for r in range(ROUNDS):
            write_atomic(target, _payload(w, r))
            write_atomic(tmp_path / f"own-{w}.txt", f"writer {w} round {r}")  # distinct files at once

    def reader() -> None:
        start.wait()
        while not done.is_set():
            seen.append(target.read_bytes())

    with ThreadPoolExecutor(WRITERS + 1) as pool:
        watching = pool.submit(reader)
        writers = [pool.submit(writer, w) for w in range(WRITERS)]
        try:
            for fut in writers:
                fut.result()  # a writer whose temporary file another thread renamed away raises here
        finally:
            done.set()
        watching.result()

    assert seen and all(body in whole for body in seen)  # every read saw one writer's whole body
    assert target.read_bytes() in {_payload(w, ROUNDS - 1) for w in range(WRITERS)}
    for w in range(WRITERS):
        assert (tmp_path / f"own-{w}.txt").read_text() == f"writer {w} round {ROUNDS - 1}"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["shared.json", *(f"own-{w}.txt" for w in range(WRITERS))]
    )  # no temporary file left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "kept.txt"
    write_atomic(target, "old")
    with pytest.raises(TypeError):
        write_atomic(target, 42)  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["kept.txt"]
