"""Which fio run an iostat file sampled, from the files' own clocks: the run its reports overlap most.

fio's JSON records when the output was written (``time``, the local wall clock, 1 s resolution)
and each job's ``job_runtime``; the run spans ``time - runtime .. time``. iostat ``-t`` stamps each
report with the local wall clock; the file spans its first to its last report. An iostat file
pairs with the fio run whose span overlaps its own for the longest time, when that overlap covers
at least :data:`MIN_COVERED_SHARE` of the run and no other run overlaps as long. Runs tied in
time (two disks written at once) are told apart by device names, fio's ``disk_util`` against the
devices iostat reported; a tie left pairs nothing (the ``run`` label then decides). Both clocks
are read as local time, so the files of one machine (or of machines with synchronised clocks in
one time zone) pair correctly. A ``run`` label is an override: the chapters use the labels first
and these clocks only when the labels leave a choice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest.textio import decode_json
from iscsi_report.core.units import MS_PER_S

MIN_COVERED_SHARE = 0.5  # of the fio run's span the iostat reports must overlap to pair
FIO_TIME_FORMAT = "%a %b %d %H:%M:%S %Y"  # fio's "time": ctime(3), e.g. "Sat Nov 21 00:09:24 2026"
CLOCK_RESOLUTION_S = 1.0  # both tools print whole seconds: a run may end up to this much later


@dataclass(frozen=True)
class Span:
    """A stretch of local wall-clock time a file covers, and the block devices the file names."""

    start: datetime
    end: datetime
    devices: frozenset[str] = frozenset()

    def overlap_s(self, other: Span) -> float:
        """Seconds both spans cover (0 when they do not meet)."""
        return max(0.0, (min(self.end, other.end) - max(self.start, other.start)).total_seconds())

    @property
    def seconds(self) -> float:
        """The span's length in seconds."""
        return (self.end - self.start).total_seconds()


def fio_span(text: str, path: str | Path) -> Span | None:
    """When a fio run wrote: its output time minus its longest job's runtime; None if not recorded."""
    start = re.search(r"^\{", text, re.MULTILINE)
    if start is None:
        return None
    try:
        doc, _ = decode_json(path, text, start.start())
    except (IngestError, ValueError):
        return None
    return fio_span_of(doc) if isinstance(doc, dict) else None


def fio_span_of(doc: Mapping[str, Any]) -> Span | None:
    """:func:`fio_span` of an already decoded fio JSON document."""
    stamp = doc.get("time")
    found = [j.get("job_runtime") for j in doc.get("jobs") or [] if isinstance(j, dict)]
    runtimes = [float(r) for r in found if isinstance(r, (int, float)) and r > 0]
    if not isinstance(stamp, str) or not runtimes:
        return None
    try:
        end = datetime.strptime(stamp.strip(), FIO_TIME_FORMAT) + timedelta(seconds=CLOCK_RESOLUTION_S)
    except ValueError:
        return None
    disks = frozenset(
        str(d["name"]) for d in doc.get("disk_util") or [] if isinstance(d, dict) and "name" in d
    )
    return Span(end - timedelta(seconds=max(runtimes) / MS_PER_S), end, disks)


def iostat_span(devices: pd.DataFrame, cpu: pd.DataFrame) -> Span | None:
    """From an iostat file's first to its last report stamp; None when it printed no stamps."""
    stamps = [df["timestamp"].dropna() for df in (devices, cpu) if "timestamp" in df]
    found = pd.concat(stamps) if stamps else pd.Series(dtype="datetime64[ns]")
    if found.empty:
        return None
    names = frozenset(str(d) for d in devices["device"].dropna()) if "device" in devices else frozenset()
    return Span(pd.Timestamp(found.min()).to_pydatetime(), pd.Timestamp(found.max()).to_pydatetime(), names)


def partner(span: Span, runs: Mapping[str, Span | None]) -> str | None:
    """The run (key of ``runs``) this iostat span sampled, or None when none or several qualify."""
    scored = {name: span.overlap_s(s) for name, s in runs.items() if s is not None}
    covering = {
        name: o for name, o in scored.items() if o > 0 and o >= MIN_COVERED_SHARE * _span_of(runs, name)
    }
    if not covering:
        return None
    best = max(covering.values())
    winners = [name for name, o in covering.items() if o == best]
    if len(winners) > 1 and span.devices:
        winners = [name for name in winners if _devices_of(runs, name) & span.devices]
    return winners[0] if len(winners) == 1 else None


def _devices_of(runs: Mapping[str, Span | None], name: str) -> frozenset[str]:
    """The block devices one run's fio reported (empty when none)."""
    s = runs[name]
    return s.devices if s is not None else frozenset()


def _span_of(runs: Mapping[str, Span | None], name: str) -> float:
    """The length of one run's span (0 when it has none)."""
    s = runs[name]
    return s.seconds if s is not None else 0.0
