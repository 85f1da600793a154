"""Issue 28: the CPU of reading the bundled tshark exports, and whether two code versions read them alike.

``time [N]`` parses the first N captures of the lab datasets (default 200) and derives each one's
timeline and writes, in this process, and prints the CPU milliseconds per file; ``dump OUT`` pickles
every bundled capture's timeline, writes (from the capture and from its timeline) and summary;
``compare A B`` says whether two dumps are identical, frames, dtypes and cell types included. Run
from the project root with ``PYTHONPATH`` naming the code version, e.g.
    PYTHONPATH=src .venv/bin/python benchmarks/tshark_parse_speed.py time
    PYTHONPATH=<old checkout>/src .venv/bin/python benchmarks/tshark_parse_speed.py dump old.pickle
"""

from __future__ import annotations

import pickle
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from iscsi_report.core.ingest import tshark

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FILES = 200


def captures(limit: int | None = None) -> list[Path]:
    """The bundled tshark exports in path order (the first ``limit``)."""
    return sorted(ROOT.glob("data/raw/*/tshark/*"))[:limit]


def time_parse(limit: int) -> None:
    """Print the CPU milliseconds per capture of parsing it and deriving its timeline and writes."""
    texts = [(p.read_text(encoding="utf-8"), p) for p in captures(limit)]
    start_s = time.process_time()
    for text, path in texts:
        result = tshark.parse_text(text, path)
        tshark.writes(result, tshark.timeline(result))
    per_file_ms = (time.process_time() - start_s) / len(texts) * 1000
    print(f"{len(texts)} captures: {per_file_ms:.1f} ms of CPU each")


def dump(out: Path) -> None:
    """Pickle every bundled capture's derived frames and summary, by path."""
    found: dict[str, Any] = {}
    for path in captures():
        result = tshark.parse(path)
        events = tshark.timeline(result)
        found[str(path.relative_to(ROOT))] = (
            events,
            tshark.writes(result),
            tshark.writes(result, events),
            tshark.summary(result),
        )
    out.write_bytes(pickle.dumps(found))
    print(f"{len(found)} captures dumped to {out}")


def _cell_types(frame: pd.DataFrame) -> list[list[type]]:
    """Each cell's Python type, row by row (dtypes alone would not see an int turned into a float)."""
    return [[type(v) for v in row] for row in frame.itertuples(index=False)]


def compare(a: Path, b: Path) -> None:
    """Exit 1 unless both dumps hold the same captures with identical frames and summaries."""
    left, right = pickle.loads(a.read_bytes()), pickle.loads(b.read_bytes())
    if left.keys() != right.keys():
        sys.exit("the dumps hold different captures")
    for name in left:
        *frames_a, summary_a = left[name]
        *frames_b, summary_b = right[name]
        for x, y in zip(frames_a, frames_b, strict=True):
            pd.testing.assert_frame_equal(x, y, check_dtype=True, check_exact=True, check_index_type=True)
            if _cell_types(x) != _cell_types(y):
                sys.exit(f"{name}: cell types differ")
        if summary_a != summary_b:
            sys.exit(f"{name}: summaries differ")
    print(f"identical: {len(left)} captures")


def main(argv: list[str]) -> None:
    """``time [N]``, ``dump OUT`` or ``compare A B``."""
    if argv[:1] == ["time"]:
        time_parse(int(argv[1]) if len(argv) > 1 else DEFAULT_FILES)
    elif argv[:1] == ["dump"] and len(argv) == 2:
        dump(Path(argv[1]))
    elif argv[:1] == ["compare"] and len(argv) == 3:
        compare(Path(argv[1]), Path(argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
