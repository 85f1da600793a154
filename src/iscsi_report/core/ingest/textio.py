"""Reading raw files: transparent .gz/.xz decompression, UTF-8 with a clear error, read tracking.

Every parser opens raw files through :func:`read_text`, so the batch runner can learn exactly
which raw files a notebook read (for the content-keyed cache and the provenance page).
"""

from __future__ import annotations

import gzip
import hashlib
import lzma
import os
from pathlib import Path

from iscsi_report.core.errors import IngestError

READS_LOG_ENV = "ISCSI_REPORT_READS_LOG"
_READS: dict[Path, None] = {}  # files read by this process, in first-read order


def record_read(path: str | Path) -> None:
    """Remember the file as read by this process, and append it to $ISCSI_REPORT_READS_LOG if set."""
    _READS.setdefault(Path(path).resolve(), None)
    log = os.environ.get(READS_LOG_ENV)
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(str(Path(path).resolve()) + "\n")


def files_read() -> list[Path]:
    """Every raw file this process has read so far (a chapter lists them as its sources)."""
    return list(_READS)


def read_bytes(path: str | Path) -> bytes:
    """Return the decompressed bytes of a raw file (.gz and .xz by magic number, not by name)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise IngestError(p, f"cannot read file: {exc.strerror or exc}") from exc
    record_read(p)
    try:
        if raw[:2] == b"\x1f\x8b":
            return gzip.decompress(raw)
        if raw[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(raw)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise IngestError(p, f"corrupt compressed file: {exc}") from exc
    return raw


def read_text(path: str | Path) -> str:
    """Return the text of a raw file, decompressed, decoded as UTF-8 (Latin-1 refused clearly)."""
    data = read_bytes(path)
    if b"\x00" in data[:4096]:
        raise IngestError(path, "binary data (NUL bytes); expected the text or JSON output of a tool")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise IngestError(path, f"not UTF-8 text (byte 0x{data[exc.start]:02x})", line=line) from exc


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes, streamed."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
