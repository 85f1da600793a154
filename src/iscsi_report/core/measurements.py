"""Measurements: a dataset's raw files, each checked against its sha256 and parsed once per process.

This is the one seam between raw bytes and every computation. Chapter functions receive a
:class:`Measurements` and ask it for parsed results (``m.fio(f)``, ``m.ping(f)``, ...); they never
open, verify or parse a raw file themselves. The first request for a file checks its bytes
against the manifest's sha256 (:func:`iscsi_report.core.dataset.verify`), parses it with the
tool's parser and keeps the result for the life of the process; later requests return the kept
result as long as the file's size, inode and modification time are unchanged (a file changed in
place is verified and parsed again, so a changed byte still fails). Every read goes through
:mod:`iscsi_report.core.ingest.textio`, so the batch runner records it for the run cache, the
dataset's ``notes.yaml`` included.

:func:`open_dataset` keeps one :class:`Measurements` per dataset folder for the process, so the
cells of one notebook, or several chapter functions, share the parses.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from iscsi_report.core import dataset as datasets
from iscsi_report.core import keep, yamlio
from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import fio, iostat, iperf3, ping, textio, tshark

NOTES = datasets.NOTES
# The parser of each tool a manifest may name (core.dataset.TOOLS), from the file's text.
PARSERS: dict[str, Callable[[str, Path], Any]] = {
    "ping": ping.parse_text,
    "iperf3": iperf3.parse_text,
    "fio": fio.parse_text,
    "iostat": iostat.parse_text,
    "tshark": tshark.parse_text,
}
Signature = tuple[int, int, int]  # (inode, size in bytes, modification time in ns)
T = TypeVar("T")


def _signature(path: Path) -> Signature:
    """What identifies a file's current bytes cheaply: inode, size and modification time."""
    st = os.stat(path)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class Measurements:
    """One dataset: its manifest, and each raw file verified and parsed at most once per process."""

    def __init__(self, dataset: datasets.Dataset) -> None:
        self.dataset = dataset
        self._text: dict[str, tuple[Signature, str]] = {}
        self._parsed: dict[str, tuple[str, Any]] = {}
        self._derived: dict[tuple[str, str], tuple[str, Any]] = {}
        self._notes: tuple[Signature | None, dict[str, Any]] | None = None
        # Reads and parses per file (rel path): tests and benchmarks count them.
        self.read_counts: Counter[str] = Counter()
        self.parse_counts: Counter[str] = Counter()

    # ---- the manifest, as the chapters read it -------------------------------------------------

    @property
    def name(self) -> str:
        return self.dataset.name

    @property
    def root(self) -> Path:
        return self.dataset.root

    @property
    def title(self) -> str:
        return self.dataset.title

    @property
    def reconstructed(self) -> bool:
        return self.dataset.reconstructed

    @property
    def description(self) -> str:
        return self.dataset.description

    @property
    def iscsi_parameters(self) -> dict[str, dict[str, Any]]:
        return self.dataset.iscsi_parameters

    @property
    def files(self) -> list[datasets.RawFile]:
        return self.dataset.files

    @property
    def lab(self) -> dict[str, Any]:
        return self.dataset.lab

    def select(self, tool: str | None = None, **labels: Any) -> list[datasets.RawFile]:
        """Files of ``tool`` whose labels equal every given label (manifest order)."""
        return self.dataset.select(tool, **labels)

    def frame(self) -> Any:
        """One row per file: rel, tool, side, sha256 and each label as a column."""
        return self.dataset.frame()

    # ---- parsed raw files --------------------------------------------------------------------

    def text(self, f: datasets.RawFile) -> str:
        """The text of ``f``, read once and checked against its sha256 (a changed byte is an error)."""
        kept = self._text.get(f.rel)
        if kept is not None and kept[0] == _signature(f.path):
            return kept[1]
        before = _signature(f.path)
        # A recorded read (the run cache sees it); core.dataset resolved the manifest's paths.
        raw, sha256 = textio.read_checked(f.path, resolved=True)
        datasets.check_sha256(f, sha256)
        text = textio.decode_text(f.path, raw)
        self.read_counts[f.rel] += 1
        self._text[f.rel] = (before, text)
        return text

    def parsed(self, f: datasets.RawFile) -> Any:
        """The parse of ``f`` by its tool's parser, from :meth:`text` (so checked), kept for the process.

        With a parse cache folder (:mod:`iscsi_report.core.keep`) a parse of the same bytes by the
        same parser code is loaded from there instead of being parsed again.
        """
        if f.tool not in PARSERS:
            raise IngestError(f.path, f"no parser for tool {f.tool!r}; expected one of {sorted(PARSERS)}")
        text = self.text(f)
        kept = self._parsed.get(f.rel)
        if kept is not None and kept[0] is text:
            return kept[1]
        result = _kept(f.tool, f, lambda: PARSERS[f.tool](text, f.path))
        self.parse_counts[f.rel] += 1
        self._parsed[f.rel] = (text, result)
        return result

    def _typed(self, f: datasets.RawFile, tool: str, kind: type[T]) -> T:
        """``parsed(f)`` for a file that must be of ``tool`` (a clear error naming the file otherwise)."""
        if f.tool != tool:
            raise IngestError(f.path, f"expected a {tool} file, the manifest says tool: {f.tool}")
        result = self.parsed(f)
        assert isinstance(result, kind)
        return result

    def ping(self, f: datasets.RawFile) -> ping.PingResult:
        """ping's replies and statistics of ``f``."""
        return self._typed(f, "ping", ping.PingResult)

    def iperf3(self, f: datasets.RawFile) -> iperf3.Iperf3Result:
        """iperf3's intervals and end summary of ``f``."""
        return self._typed(f, "iperf3", iperf3.Iperf3Result)

    def fio(self, f: datasets.RawFile) -> fio.FioResult:
        """fio's jobs (and latency bins) of ``f``."""
        return self._typed(f, "fio", fio.FioResult)

    def iostat(self, f: datasets.RawFile) -> iostat.IostatResult:
        """iostat's device and CPU reports of ``f``."""
        return self._typed(f, "iostat", iostat.IostatResult)

    def tshark(self, f: datasets.RawFile) -> tshark.TsharkResult:
        """The iSCSI PDUs tshark captured in ``f``."""
        return self._typed(f, "tshark", tshark.TsharkResult)

    def tshark_writes(self, f: datasets.RawFile) -> Any:
        """:func:`iscsi_report.core.ingest.tshark.writes` of ``f``: one row per complete captured write."""
        return self._derive(f, "writes", lambda res: tshark.writes(res, self.tshark_timeline(f)))

    def tshark_timeline(self, f: datasets.RawFile) -> Any:
        """:func:`iscsi_report.core.ingest.tshark.timeline` of ``f``: each command's PDU events."""
        return self._derive(f, "timeline", tshark.timeline)

    def _derive(self, f: datasets.RawFile, what: str, reduce: Callable[[Any], Any]) -> Any:
        """``reduce`` of ``f``'s capture, kept for the process and across processes like a parse."""
        kept = self._derived.get((f.rel, what))
        if kept is not None and kept[0] is self.text(f):
            return kept[1]
        result = _kept(f"tshark-{what}", f, lambda: reduce(self.tshark(f)))
        self._derived[(f.rel, what)] = (self.text(f), result)
        return result

    # ---- the dataset's reader notes ------------------------------------------------------------

    def notes_doc(self) -> dict[str, Any]:
        """``notes.yaml`` strictly loaded (a duplicate key is an error), {} when absent; a recorded read."""
        path = self.root / NOTES
        sig = _signature(path) if path.is_file() else None
        if self._notes is not None and self._notes[0] == sig:
            return self._notes[1]
        doc: dict[str, Any] = {}
        if sig is not None:
            loaded = yamlio.load_file(path).data  # through textio: the batch records the read
            if not isinstance(loaded, dict):
                raise IngestError(path, "expected a mapping with a 'chapters' mapping of chapter to text")
            doc = loaded
            self.read_counts[NOTES] += 1
        self._notes = (sig, doc)
        return doc


def _kept(kind: str, f: datasets.RawFile, compute: Callable[[], Any]) -> Any:
    """``compute()`` for ``f``'s checked bytes, or the result kept for them by the same ingest code."""
    return kept_parse(kind, f.sha256, f.path, compute)


def kept_parse(kind: str, sha256: str, path: Path, compute: Callable[[], Any]) -> Any:
    """``compute()`` for the bytes of digest ``sha256``, or the result kept for them by the same
    ingest code (the provenance pages ask too). A kept result that names a file is renamed to
    ``path``: the same bytes may sit in another dataset."""
    stored = keep.path_for(kind, keep.code_of("ingest"), sha256)
    result = keep.load(stored)
    if result is None:
        result = compute()
        keep.store(stored, result)
    elif dataclasses.is_dataclass(result) and not isinstance(result, type) and hasattr(result, "path"):
        result = dataclasses.replace(result, path=str(path))
    return result


_OPEN: dict[Path, tuple[Signature, Measurements]] = {}


def open_dataset(raw_dir: str | Path) -> Measurements:
    """The dataset at ``raw_dir``, one :class:`Measurements` per folder per process.

    The manifest is read again when it changed (size, inode or time), with a new, empty parse cache.
    """
    root = Path(raw_dir).resolve()
    manifest = root / datasets.MANIFEST
    try:
        sig = _signature(manifest)
    except OSError:
        sig = None
    kept = _OPEN.get(root)
    if kept is not None and sig is not None and kept[0] == sig:
        return kept[1]
    m = Measurements(datasets.load(root))
    if sig is not None:
        _OPEN[root] = (sig, m)
    return m


def forget() -> None:
    """Drop every kept dataset (tests that count parses start from an empty process cache)."""
    _OPEN.clear()
