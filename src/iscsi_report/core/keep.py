"""Results kept across processes: a parse of the same bytes by the same code is not done twice.

The batch points its kernels at ``<project>/.cache/parsed`` through :data:`PARSE_CACHE_ENV`; with
the variable unset nothing is kept. Entries are keyed by the sha256 of the input and a digest of
the code that produced them, so a changed file or a changed parser never meets an old entry. The
raw file itself is still read and checked against its manifest on every use: only the work of
parsing it is saved. A costly result (:func:`once`) is computed by one process at a time: a
chapter that asks while another computes it waits and reads it instead of doing the work twice.
Entries are pickles written by this module into the project's own cache
folder (never a file from elsewhere); one that cannot be read is recomputed.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock

from iscsi_report.core.atomic import write_atomic
from iscsi_report.core.digest import code_digest, sha256_bytes

PARSE_CACHE_ENV = "ISCSI_REPORT_PARSE_CACHE"
_CORE = Path(__file__).resolve().parent


@functools.cache
def code_of(relative: str) -> str:
    """Digest of a core source folder or file (relative to core/), for the keys of what it produces."""
    target = _CORE / relative
    if target.is_dir():
        return code_digest(target)[:16]
    return sha256_bytes(target.read_bytes())[:16]


def path_for(kind: str, code: str, sha256: str) -> Path | None:
    """Where the result of ``kind`` for input ``sha256`` by ``code`` is kept; None when nothing is kept."""
    folder = os.environ.get(PARSE_CACHE_ENV)
    if not folder:
        return None
    return Path(folder) / code / kind / f"{sha256}.pickle"


def load(path: Path | None) -> Any:
    """A kept result, or None (absent, unreadable, or nothing kept)."""
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError):
        return None


def store(path: Path | None, result: Any) -> None:
    """Keep ``result`` for later processes; a cache that cannot be written is no error."""
    if path is None:
        return
    with contextlib.suppress(OSError):
        write_atomic(path, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))


def once(path: Path | None, compute: Callable[[], Any], valid: Callable[[Any], bool]) -> Any:
    """The kept result at ``path`` if ``valid``, else ``compute()`` kept there, by one process at a time.

    Chapters executed side by side often need the same dataset: the first computes under a lock
    beside the entry, the others wait and then read what it kept (a lock dies with its holder).
    """
    if path is None:
        return compute()
    kept = load(path)
    if valid(kept):
        return kept
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path.with_suffix(".lock")))
        lock.acquire()
    except OSError:  # a cache folder that cannot hold a lock: compute without sharing
        return compute()
    try:
        kept = load(path)
        if valid(kept):
            return kept
        result = compute()
        store(path, result)
        return result
    finally:
        lock.release()
