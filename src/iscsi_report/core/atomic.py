"""Atomic file replacement: a reader sees the old content or the new, never a half-written file."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def temporary_name(path: Path) -> Path:
    """A name beside ``path`` no other process or thread uses: pid, then a random uuid."""
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` (UTF-8 if text) beside ``path`` in a temporary file, then rename it into place.

    Safe with concurrent writers of the same path, in other processes or threads: each writes its own
    temporary file (created exclusively), the last rename wins, and no temporary file is left behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(path)
    try:
        with open(tmp, "xb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
