"""Issue 28, fifteenth session: each cut's old and new way, timed on the bundled data in one process.

Prints the best of REPEATS CPU times (``time.process_time``: every thread of this process, so the
V8 threads of vl-convert count too) of:

- the chart runtime: vl-convert's bundle made, against the kept bundle read back;
- ping's samples frame checked by pandera, against ``schemas.validate`` (a first pandera call in a
  process also imports its pandas backend, timed apart);
- a ping log's header lines: ``splitlines()[:5]`` of the whole text, against ``textio.first_lines``;
- a lab manifest's paths: ``Path.resolve`` of each, against ``dataset.resolved``.

Run from the project root: ``PYTHONPATH=src .venv/bin/python benchmarks/suite_cuts.py``.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iscsi_report.core import dataset
from iscsi_report.core.ingest import ping, schemas, textio
from iscsi_report.pipeline import assets

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
REPEATS = 5  # best of: the machine is shared, the minimum is the least disturbed
PING_LOG = RAW / "blog-2023" / "ping"  # its largest log is the one timed
LAB = RAW / "lab-iscsi-2026"


def best_cpu_s(work: Callable[[], Any], repeats: int = REPEATS) -> float:
    """The least CPU time of ``repeats`` calls of ``work``."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def row(what: str, old_s: float, new_s: float) -> None:
    """One line of the table: old, new, and what it is."""
    print(f"| {what} | {old_s * 1000:.1f} | {new_s * 1000:.1f} |")


def chart_runtime() -> None:
    """vl-convert's bundle made, against the kept bundle read back."""
    import vl_convert as vlc

    made = best_cpu_s(lambda: vlc.javascript_bundle(assets.BUNDLE_SNIPPET), repeats=2)
    with tempfile.TemporaryDirectory() as kept:
        assets.vega_bundle(Path(kept))
        read = best_cpu_s(lambda: assets.vega_bundle(Path(kept)))
    row("chart runtime: made by vl-convert, against read from the kept copy", made, read)


def ping_samples() -> None:
    """The samples frame of the largest bundled ping log, checked both ways."""
    log = max(PING_LOG.iterdir(), key=lambda p: p.stat().st_size)
    text = textio.read_text(log)  # read once: the parse and the header timings share it
    frame = ping.parse_text(text, str(log)).samples.copy()
    first = time.process_time()
    schemas.PING_SAMPLES.validate(frame.head(3))
    row(
        "pandera's first call in a process, its backend imported (not paid where the fast check passes)",
        time.process_time() - first,
        0.0,
    )
    pandera = best_cpu_s(lambda: schemas.PING_SAMPLES.validate(frame))
    fast = best_cpu_s(lambda: schemas.validate(schemas.PING_SAMPLES, frame))
    row(
        f"ping samples checked, {len(frame):,} replies ({log.name}): pandera, against schemas.validate",
        pandera,
        fast,
    )
    n = ping.HEADER_SEARCH_LINES
    whole = best_cpu_s(lambda: text.splitlines()[:n])
    head = best_cpu_s(lambda: textio.first_lines(text, n))
    row(f"the header of {log.name}: splitlines()[:{n}], against first_lines", whole, head)


def manifest_paths() -> None:
    """Every path of the lab's manifest resolved both ways."""
    rels = [f.rel for f in dataset.load(LAB).files]
    one_by_one = best_cpu_s(lambda: [(LAB / rel).resolve() for rel in rels])
    by_folder = best_cpu_s(lambda: _resolved_all(rels))
    row(
        f"{len(rels):,} paths of {LAB.name}'s manifest: Path.resolve, against dataset.resolved",
        one_by_one,
        by_folder,
    )


def _resolved_all(rels: list[str]) -> list[Path]:
    """Every path resolved through one folder memo, as one manifest load does."""
    folders: dict[str, str] = {}
    return [dataset.resolved(LAB, rel, folders) for rel in rels]


def main() -> None:
    """The table, in milliseconds of CPU."""
    print("| what | old (ms CPU) | new (ms CPU) |\n|---|---:|---:|")
    chart_runtime()
    ping_samples()
    manifest_paths()


if __name__ == "__main__":
    main()
