"""One pipeline at a time per project: concurrent ``make book`` runs wait instead of clobbering."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from filelock import FileLock, Timeout

from iscsi_report.core.paths import Project

LOCK_WAIT_S = 3600  # a whole batch may hold the lock this long


@contextmanager
def pipeline_lock(project: Project) -> Iterator[None]:
    """Hold ``.cache/pipeline.lock`` (an OS lock: released if the holder dies)."""
    project.cache_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(project.cache_dir / "pipeline.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        print(f"waiting for another run to finish ({lock.lock_file})", file=sys.stderr, flush=True)
        lock.acquire(timeout=LOCK_WAIT_S)
    try:
        yield
    finally:
        lock.release()
