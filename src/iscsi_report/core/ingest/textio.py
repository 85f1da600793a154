"""Reading raw files: transparent .gz/.xz decompression, UTF-8 with a clear error, read tracking.

Every parser opens raw files through :func:`read_text`, so the batch runner can learn exactly
which raw files a notebook read (for the content-keyed cache and the provenance page).
Reads are bounded: only regular files are opened (a FIFO, a device such as ``/dev/zero`` or a
directory is refused before opening, without blocking), and the bytes, the decompressed bytes,
the number of lines and the longest line are capped, each with an error naming the limit.
Text is UTF-8; UTF-16 (with or without a byte-order mark, as Windows tools write it) and a UTF-8
BOM are decoded, CR-only line endings read as lines; other compressions (bzip2, zstd, zip) and a
second gzip/xz layer are named, not called binary. JSON objects that repeat a key with two
different values are refused with the key's JSON path (JSON itself keeps the last silently).
"""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from iscsi_report.core.errors import IngestError

if TYPE_CHECKING:  # lzma and hashlib load shared libraries: imported where used, not for every read
    import lzma

READS_LOG_ENV = "ISCSI_REPORT_READS_LOG"
_READS: dict[Path, None] = {}  # files read by this process, in first-read order
# Limits on one raw file (after decompression). The largest real input, a 450,000-reply ping
# log, is 30 MB and 450,005 lines; the limits leave a wide margin above it.
MAX_RAW_BYTES = 512 * 1024 * 1024
MAX_RAW_LINES = 10_000_000
MAX_LINE_BYTES = 4 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_XZ_MAGIC = b"\xfd7zXZ\x00"
_BLOCK_BYTES = 1 << 20
MAX_JSON_DEPTH = 64  # fio json+ nests 6 levels deep, iperf3 and iostat 5
INT64_MAX = 2**63 - 1
# Compressions recognised by magic number only to be named (gzip and xz are the ones read).
_FOREIGN_COMPRESSION = {
    re.compile(rb"BZh[1-9](?:1AY&SY|\x17rE8P\x90)"): "bzip2",
    re.compile(rb"\x28\xb5\x2f\xfd"): "zstd",
    re.compile(rb"PK\x03\x04"): "zip",
    re.compile(rb"\x04\x22\x4d\x18"): "lz4",
    re.compile(rb"7z\xbc\xaf\x27\x1c"): "7-Zip",
}
_TEXT_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
UTF16_SNIFF_BYTES = 4096  # a BOM-less UTF-16 file is recognised from its first bytes
UTF16_NUL_SHARE = 0.9  # share of NUL high bytes in ASCII-heavy UTF-16 text (tool output is ASCII)


def record_read(path: str | Path, resolved: bool = False) -> None:
    """Remember the file as read by this process, and append it to $ISCSI_REPORT_READS_LOG if set.

    ``resolved``: the caller passes a path already resolved (a manifest's raw file), not resolved again.
    """
    real = Path(path) if resolved else Path(path).resolve()  # resolving walks every folder of the path
    _READS.setdefault(real, None)
    log = os.environ.get(READS_LOG_ENV)
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{real}\n")


def record_listing(folder: str | Path) -> None:
    """Append a folder whose entries this process enumerated to $ISCSI_REPORT_READS_LOG: a run that
    chose its inputs by listing a folder (the fleet, every dataset) is stale once an entry is added
    or removed. Not a file read: the chapter's list of raw files leaves it out."""
    log = os.environ.get(READS_LOG_ENV)
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{Path(folder).resolve()}\n")


def files_read() -> list[Path]:
    """Every raw file this process has read so far (a chapter lists them as its sources)."""
    return list(_READS)


def file_kind(mode: int) -> str:
    """A file type in words, for the refusal of anything but a regular file."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _refuse_special(p: Path, mode: int) -> None:
    """IngestError unless mode is a regular file's."""
    if not stat.S_ISREG(mode):
        raise IngestError(p, f"{file_kind(mode)}; expected a regular file holding a tool's output")


def _read_regular(p: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file, at most max_bytes (stat before open, O_NONBLOCK, fstat after)."""
    try:
        _refuse_special(p, os.stat(p).st_mode)
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise IngestError(p, f"cannot read file: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        _refuse_special(p, info.st_mode)  # replaced between stat and open
        if info.st_size > max_bytes:
            raise IngestError(p, f"file is {info.st_size} bytes; the limit for one raw file is {max_bytes}")
        try:
            data = _read_capped(fh, info.st_size, max_bytes)
        except OSError as exc:
            raise IngestError(p, f"cannot read file: {exc.strerror or exc}") from exc
    if len(data) > max_bytes:
        raise IngestError(p, f"file grew beyond the limit of {max_bytes} bytes while being read")
    return data


def _read_capped(fh: BinaryIO, size_bytes: int, max_bytes: int) -> bytes:
    """At most max_bytes + 1 bytes of fh, asking first for the size fstat gave (plus one byte).

    read(max_bytes + 1) asks for a buffer of the whole limit first (the 27 MB ping log read
    again and again in one process: 62 ms against 19 ms a read); a file longer than fstat said
    (one still growing, or a /proc file of size 0) is read on to the limit.
    """
    first_bytes = size_bytes + 1
    data = fh.read(first_bytes)
    if len(data) < first_bytes:  # at the end of the file, as fstat said
        return data
    return data + fh.read(max_bytes + 1 - len(data))


def _decoder(raw: bytes) -> zlib._Decompress | lzma.LZMADecompressor | None:
    """A streaming decoder for gzip/xz data (by magic number), None for plain data."""
    if raw[:2] == _GZIP_MAGIC:
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if raw[:6] == _XZ_MAGIC:
        import lzma

        return lzma.LZMADecompressor()
    return None


def _refuse_compressed(p: Path, data: bytes, inside: str | None) -> None:
    """IngestError naming a compression this reader does not undo (or a second gzip/xz layer)."""
    name = next((n for magic, n in _FOREIGN_COMPRESSION.items() if magic.match(data)), None)
    if name is None and inside is not None and _decoder(data) is not None:
        name = "gzip" if data[:2] == _GZIP_MAGIC else "xz"
    if name is None:
        return
    if inside is not None:
        raise IngestError(
            p, f"{name} data inside {inside} (compressed twice): decompress it once and keep one layer"
        )
    raise IngestError(
        p, f"{name}-compressed data; only gzip (.gz) and xz (.xz) are read: recompress with gzip"
    )


def _decompress(p: Path, raw: bytes, max_bytes: int) -> bytes:
    """gzip/xz payloads (by magic number, every concatenated member) decompressed to max_bytes."""
    decoder = _decoder(raw)
    if decoder is None:
        _refuse_compressed(p, raw, None)
        return raw
    import lzma  # its error class is caught below

    outer = "gzip" if raw[:2] == _GZIP_MAGIC else "xz"
    parts: list[bytes] = []
    size = 0
    while decoder is not None:
        try:
            part = decoder.decompress(raw, max_bytes - size + 1)
        except (zlib.error, lzma.LZMAError, EOFError) as exc:
            raise IngestError(p, f"corrupt compressed file: {exc}") from exc
        size += len(part)
        parts.append(part)
        if size > max_bytes:
            raise IngestError(p, f"decompresses to more than the limit of {max_bytes} bytes")
        if not decoder.eof:
            raise IngestError(p, "corrupt compressed file: truncated (no end of stream)")
        raw = decoder.unused_data
        decoder = _decoder(raw)
        if decoder is None and raw.strip(b"\x00"):
            raise IngestError(p, f"{len(raw)} bytes of trailing garbage after the compressed data")
    data = b"".join(parts)
    _refuse_compressed(p, data, outer)
    return data


def read_bytes(path: str | Path, max_bytes: int = MAX_RAW_BYTES) -> bytes:
    """Return the decompressed bytes of a raw file (.gz and .xz by magic number, not by name)."""
    p = Path(path)
    raw = _read_regular(p, max_bytes)
    record_read(p)
    return _decompress(p, raw, max_bytes)


def check_lines(path: str | Path, data: bytes, max_lines: int, max_line_bytes: int) -> None:
    """IngestError if data has more than max_lines lines or a line longer than max_line_bytes."""
    n_lines = data.count(b"\n") + 1
    if n_lines > max_lines:
        raise IngestError(path, f"{n_lines} lines; the limit for one raw file is {max_lines}")
    start = 0  # always the start of a line; each step jumps to the last line start in reach
    while len(data) - start > max_line_bytes:
        last = data.rfind(b"\n", start, start + max_line_bytes + 1)
        if last < 0:
            line = data.count(b"\n", 0, start) + 1
            raise IngestError(path, f"line longer than the limit of {max_line_bytes} bytes", line=line)
        start = last + 1


def read_text(
    path: str | Path,
    max_bytes: int = MAX_RAW_BYTES,
    max_lines: int = MAX_RAW_LINES,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> str:
    """Return the text of a raw file, decompressed, decoded (UTF-8 or UTF-16; Latin-1 refused clearly).

    No checksum: a caller that checks one reads through :func:`read_checked` (hashing a 27 MB
    log costs about a third of what parsing it does).
    """
    p = Path(path)
    raw = _read_regular(p, max_bytes)
    record_read(p)
    return decode_text(path, raw, max_lines, max_line_bytes, max_bytes)


def read_checked(
    path: str | Path, max_bytes: int = MAX_RAW_BYTES, resolved: bool = False
) -> tuple[bytes, str]:
    """The file's stored bytes (a recorded read) and their sha256: one read serves check and parse.

    ``resolved`` as for :func:`record_read`.
    """
    import hashlib

    p = Path(path)
    raw = _read_regular(p, max_bytes)
    record_read(p, resolved)
    return raw, hashlib.sha256(raw).hexdigest()


def decode_text(
    path: str | Path,
    raw: bytes,
    max_lines: int = MAX_RAW_LINES,
    max_line_bytes: int = MAX_LINE_BYTES,
    max_bytes: int = MAX_RAW_BYTES,
) -> str:
    """Stored bytes of a raw file as text: decompressed, UTF-16 or a BOM decoded, CR-only lines
    split, line limits checked, decoded as UTF-8."""
    data = _as_utf8(path, _decompress(Path(path), raw, max_bytes))
    if b"\x00" in data[:4096]:
        raise IngestError(path, "binary data (NUL bytes); expected the text or JSON output of a tool")
    if b"\r" in data and b"\n" not in data:  # classic Mac (CR-only) line endings
        data = data.replace(b"\r", b"\n")
    check_lines(path, data, max_lines, max_line_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise IngestError(path, f"not UTF-8 text (byte 0x{data[exc.start]:02x})", line=line) from exc


def _utf16_order(data: bytes) -> str | None:
    """'utf-16-le'/'utf-16-be' for BOM-less UTF-16 of mostly ASCII text (NUL in every other byte)."""
    head = data[: UTF16_SNIFF_BYTES - UTF16_SNIFF_BYTES % 2]
    if len(head) < 4 or len(data) % 2:
        return None
    for order, high, low in (("utf-16-le", head[1::2], head[0::2]), ("utf-16-be", head[0::2], head[1::2])):
        if high.count(0) >= UTF16_NUL_SHARE * len(high) and 0 not in low:
            return order
    return None


def _as_utf8(path: str | Path, data: bytes) -> bytes:
    """data as UTF-8 without a byte-order mark: UTF-16 (with or without BOM) is decoded, not refused."""
    encoding = next((enc for bom, enc in _TEXT_BOMS if data.startswith(bom)), None)
    if encoding == "utf-8":
        return data[len(codecs.BOM_UTF8) :]
    if encoding is not None:
        data = data[2:]
    encoding = encoding or _utf16_order(data)
    if encoding is None:
        return data
    try:
        return data.decode(encoding).encode("utf-8")
    except UnicodeError as exc:
        raise IngestError(
            path, f"starts as {encoding.upper()} text but is not valid {encoding.upper()}"
        ) from exc


def sha256_file(path: Path) -> str:
    """Hex sha256 of a regular file's bytes, streamed (anything else is refused, never opened)."""
    p = Path(path)
    try:
        _refuse_special(p, os.stat(p).st_mode)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise IngestError(p, f"cannot read file: {getattr(exc, 'strerror', None) or exc}") from exc
    import hashlib

    h = hashlib.sha256()
    try:
        with open(p, "rb") as fh:
            for block in iter(lambda: fh.read(_BLOCK_BYTES), b""):
                h.update(block)
    except OSError as exc:
        raise IngestError(p, f"cannot read file: {exc.strerror or exc}") from exc
    return h.hexdigest()


FIRST_LINES_PREFIX_CHARS = 4096  # the first prefix :func:`first_lines` splits; doubled until enough


def first_lines(text: str, n: int) -> list[str]:
    """``text.splitlines()[:n]`` without splitting the rest of the text (a header in a 27 MB log).

    A prefix is split, doubled until it holds more than ``n`` lines (so the n-th has ended, even
    at a ``\r\n`` cut in two) or is the whole text.
    """
    size = FIRST_LINES_PREFIX_CHARS
    while True:
        lines = text[:size].splitlines()
        if len(lines) > n or size >= len(text):
            return lines[:n]
        size *= 2


def decode_json(path: str | Path, text: str, start: int = 0) -> tuple[Any, int]:
    """json raw_decode at start, with nesting capped at MAX_JSON_DEPTH (IngestError naming the
    JSON path) instead of a RecursionError; JSONDecodeError is left to the caller's message."""
    try:
        doc, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError:
        raise
    except RecursionError as exc:
        line = text.count("\n", 0, start) + 1
        raise IngestError(path, f"JSON nested deeper than {MAX_JSON_DEPTH} levels", line=line) from exc
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise IngestError(path, f"JSON number out of range: {str(exc)[:120]}") from exc
    _check_depth(path, doc)
    return doc, end


class _DuplicateKeys(dict[str, Any]):
    """A JSON object one of whose keys was written twice with different values (json would keep
    the last silently)."""

    duplicate: str = ""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """object_pairs_hook: a plain dict, or a _DuplicateKeys naming the first key written twice
    with two different values (tools repeat some keys with the same value: fio's padded "0.00"
    percentiles, iperf3 3.6's sock_bufsize; that loses nothing and is accepted)."""
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    first: dict[str, Any] = {}
    for key, value in pairs:
        if key in first and (first[key] != value or type(first[key]) is not type(value)):
            marked = _DuplicateKeys(obj)
            marked.duplicate = key
            return marked
        first.setdefault(key, value)
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_object)


def _check_depth(path: str | Path, doc: Any) -> None:
    """IngestError naming the first JSON path nested deeper than MAX_JSON_DEPTH, or the first
    key written twice in one object (which of the two values the tool meant is unknown)."""
    stack: list[tuple[Any, str, int]] = [(doc, "", 0)]
    while stack:
        node, where, depth = stack.pop()
        if isinstance(node, _DuplicateKeys):
            key = f"{where}.{node.duplicate}" if where else node.duplicate
            raise IngestError(
                path,
                f"duplicate key {node.duplicate!r} with two different values in one JSON object: "
                "which one the tool meant is unknown",
                json_path=key,
            )
        if isinstance(node, dict):
            items: Any = ((f"{where}.{k}" if where else str(k), v) for k, v in node.items())
        elif isinstance(node, list):
            items = ((f"{where}[{i}]", v) for i, v in enumerate(node))
        else:
            continue
        if depth >= MAX_JSON_DEPTH:
            raise IngestError(
                path, f"JSON nested deeper than {MAX_JSON_DEPTH} levels", json_path=where or "$"
            )
        stack.extend((v, w, depth + 1) for w, v in items)


def loads_json(path: str | Path, text: str) -> Any:
    """json.loads with decode_json's limits: the whole text is one JSON value."""
    start = len(text) - len(text.lstrip())
    doc, end = decode_json(path, text, start)
    rest = text[end:]
    if rest.strip():
        raise json.JSONDecodeError("Extra data", text, end + len(rest) - len(rest.lstrip()))
    return doc
