"""Digests for cache keys: of bytes, and of the code a result was computed with."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_bytes(data: bytes) -> str:
    """The sha256 of ``data`` as hex: how outputs and sources are compared across machines."""
    return hashlib.sha256(data).hexdigest()


def code_digest(*code_dirs: Path) -> str:
    """One sha256 over every .py file below the given folders (folder name, path and bytes), in a
    stable order: the same code gives the same digest wherever the folders sit."""
    h = hashlib.sha256()
    for folder in code_dirs:
        for p in sorted(folder.rglob("*.py")):
            h.update(f"{folder.name}/{p.relative_to(folder).as_posix()}".encode())
            h.update(p.read_bytes())
    return h.hexdigest()
