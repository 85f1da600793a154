"""Deterministic ``.tar.gz`` archives: the same bytes in, the same archive out.

Members sorted, owner 0, one fixed mtime, no gzip name or time: a release and a dataset's download
are functions of their contents, so their sha256 can be quoted and checked.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from collections.abc import Mapping
from pathlib import Path


def _tarinfo(name: str, size: int, executable: bool, mtime: int) -> tarfile.TarInfo:
    """A member header that depends only on name, size and mode: owner 0, fixed mtime."""
    info = tarfile.TarInfo(name)
    info.size, info.mtime = size, mtime
    info.mode = 0o755 if executable else 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def write_archive(
    path: Path, folder: str, blobs: Mapping[str, bytes], modes: Mapping[str, bool], mtime: int
) -> None:
    """Write ``blobs`` under ``folder/`` into a deterministic ``.tar.gz`` at ``path`` (atomic rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with (
            open(part, "wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz,
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            for name in sorted(blobs):
                info = _tarinfo(f"{folder}/{name}", len(blobs[name]), modes.get(name, False), mtime)
                tar.addfile(info, io.BytesIO(blobs[name]))
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)
