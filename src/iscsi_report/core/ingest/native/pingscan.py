"""The ping parser's fast path compiled from ``pingscan.c``, loaded with ctypes when it is built.

``scripts/build_pingscan.py`` (run by ``make``) compiles the C file into a library named by the
file's CRC-32, so an edited source never meets an old library: without a library built from this
very source, :func:`load` returns None and the parser keeps its numpy scanner, whose results the
compiled one equals (tests/ingest/test_pingscan.py compares them on every fixture and on
generated lines).
Setting ``ISCSI_REPORT_NATIVE=0`` keeps the numpy scanner too.
"""

from __future__ import annotations

import ctypes
import os
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).with_name("pingscan.c")
ABI_VERSION = 1  # pingscan.c's ABI_VERSION: the layout of the structures below
NATIVE_ENV = "ISCSI_REPORT_NATIVE"  # "0": never load a compiled fast path
TODO_ROWS = 4096  # room for the lines left to the careful path before a second call is needed


class _Counts(ctypes.Structure):
    """pingscan.c's pingscan_counts."""

    _fields_ = [
        ("replies", ctypes.c_int64),
        ("todo", ctypes.c_int64),
        ("others", ctypes.c_int64),
        ("short_seq_key", ctypes.c_int64),
        ("first_source_start", ctypes.c_int64),
        ("first_source_length", ctypes.c_int64),
    ]


class _Replies(ctypes.Structure):
    """pingscan.c's pingscan_replies: pointers to the caller's columns and their capacity."""

    _fields_ = [
        ("line", ctypes.c_void_p),
        ("seq", ctypes.c_void_p),
        ("rtt_ms", ctypes.c_void_p),
        ("unit_ms", ctypes.c_void_p),
        ("timestamp_s", ctypes.c_void_p),
        ("duplicate", ctypes.c_void_p),
        ("capacity", ctypes.c_int64),
    ]


@dataclass
class NativeScan:
    """What the compiled scan returns: the taken replies' columns and the rows ping.py's _Scan holds."""

    line: np.ndarray
    seq: np.ndarray
    rtt_ms: np.ndarray
    unit_ms: np.ndarray
    timestamp_s: np.ndarray
    duplicate: np.ndarray
    short_seq_key: bool
    todo: np.ndarray  # rows (line index, start, end, previous line's start, its end)
    others: np.ndarray  # rows (start, end) of taken replies whose source may differ from the first's
    source: tuple[int, int] | None  # (start, end) of the first taken reply's source


def library_path(source: Path = SOURCE) -> Path:
    """Where the library built from ``source`` lies: beside it, named by the source's CRC-32."""
    return source.with_name(f"pingscan-{zlib.crc32(source.read_bytes()):08x}.so")


@cache
def load() -> ctypes.CDLL | None:
    """The library built from the current source, its functions typed; None when there is none."""
    if os.environ.get(NATIVE_ENV) == "0":
        return None
    try:
        lib = ctypes.CDLL(str(library_path()))
    except OSError:  # not built (no compiler, or a source edited since): the numpy scanner runs
        return None
    if lib.pingscan_abi() != ABI_VERSION:
        return None
    pointer = ctypes.c_void_p
    lib.pingscan.argtypes = [
        pointer,
        ctypes.c_int64,
        pointer,
        ctypes.POINTER(_Replies),
        pointer,
        ctypes.c_int64,
        pointer,
        ctypes.c_int64,
        ctypes.POINTER(_Counts),
    ]
    lib.pingscan.restype = ctypes.c_int
    return lib


def _address(array: np.ndarray) -> int:
    """The address of a contiguous array's first element, for ctypes."""
    address: int = array.__array_interface__["data"][0]
    return address


@cache
def _utf8_of_str() -> ctypes._NamedFuncPointer:
    """CPython's PyUnicode_AsUTF8AndSize: an ASCII str's own bytes, with no copy."""
    function = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
    function.restype = ctypes.c_void_p
    function.argtypes = [ctypes.py_object, ctypes.POINTER(ctypes.c_ssize_t)]
    return function


def _text_pointer(data: str | bytes) -> int | bytes:
    """What ctypes passes as a pointer to data's bytes: the bytes object itself, or an ASCII str's
    own buffer (encoding a 27 MB log would copy it, about 12 ms)."""
    if isinstance(data, bytes):
        return data
    if not data.isascii():
        raise ValueError("pingscan: a str must be ASCII (its character offsets are byte offsets)")
    size = ctypes.c_ssize_t()
    address: int = _utf8_of_str()(data, ctypes.byref(size))
    return address


def scan(lib: ctypes.CDLL, data: str | bytes, pow10: np.ndarray, min_reply_bytes: int) -> NativeScan:
    """Run the compiled fast path over data (UTF-8 bytes, or an ASCII str read in place);
    pow10 is the scanner's table of 10**k. data must stay alive during the call (the caller's)."""
    capacity = len(data) // min_reply_bytes + 1  # no more reply lines fit in the text
    columns: dict[str, np.ndarray] = {
        "line": np.empty(capacity, np.int64),
        "seq": np.empty(capacity, np.int64),
        "rtt_ms": np.empty(capacity),
        "unit_ms": np.empty(capacity),
        "timestamp_s": np.empty(capacity),
        "duplicate": np.empty(capacity, np.uint8),
    }
    replies = _Replies(*(_address(c) for c in columns.values()), capacity)
    table = np.ascontiguousarray(pow10, dtype=np.float64)
    text = _text_pointer(data)
    todo_rows, other_rows = TODO_ROWS, TODO_ROWS
    while True:
        todo = np.empty((todo_rows, 5), np.int64)
        others = np.empty((other_rows, 2), np.int64)
        counts = _Counts()
        status = lib.pingscan(
            text, len(data), _address(table), ctypes.byref(replies),
            _address(todo), todo_rows, _address(others), other_rows, ctypes.byref(counts),
        )  # fmt: skip
        if status != 0:
            raise RuntimeError("pingscan: more reply lines than the text can hold (a bug)")
        if counts.todo <= todo_rows and counts.others <= other_rows:
            break
        todo_rows, other_rows = max(todo_rows, counts.todo), max(other_rows, counts.others)
    n = counts.replies
    first = counts.first_source_start
    return NativeScan(
        **{name: column[:n] for name, column in columns.items() if name != "duplicate"},
        duplicate=columns["duplicate"][:n].view(bool),
        short_seq_key=bool(counts.short_seq_key),
        todo=todo[: counts.todo],
        others=others[: counts.others],
        source=None if first < 0 else (first, first + counts.first_source_length),
    )
