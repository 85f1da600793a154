"""Digests for cache keys: of bytes, and of the code a result was computed with."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_bytes(data: bytes) -> str:
    """The sha256 of ``data`` as hex: how outputs and sources are compared across machines."""
    return hashlib.sha256(data).hexdigest()


CODE_SUFFIXES = (".py", ".c")  # Python, and the C a result may be computed with (ping's scanner)


def code_digest(*code_dirs: Path) -> str:
    """One sha256 over every source file (.py, .c) below the given folders (folder name, path and
    bytes), in a stable order: the same code gives the same digest wherever the folders sit. A
    library built from C is not hashed: its source is, and its name says which source built it."""
    h = hashlib.sha256()
    for folder in code_dirs:
        for p in sorted(p for p in folder.rglob("*") if p.suffix in CODE_SUFFIXES and p.is_file()):
            h.update(f"{folder.name}/{p.relative_to(folder).as_posix()}".encode())
            h.update(p.read_bytes())
    return h.hexdigest()
