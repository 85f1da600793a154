"""Issue 28: the CPU seconds of parsing the bundled fio files, and whether two code versions parse them alike.

``time [N]`` parses the first N fio JSON files of the lab datasets (default 2,000) in this process and
prints the CPU seconds; ``dump OUT`` pickles every bundled fio file's parse (jobs, bins, format,
warnings, or the refusal); ``compare A B`` says whether two dumps are identical, frames and dtypes
included. Run from the project root with ``PYTHONPATH`` naming the code version, e.g.
    PYTHONPATH=src .venv/bin/python benchmarks/fio_parse_speed.py time
    PYTHONPATH=<old checkout>/src .venv/bin/python benchmarks/fio_parse_speed.py dump old.pickle
"""

from __future__ import annotations

import pickle
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import fio

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FILES = 2000


def lab_fio_files(limit: int) -> list[Path]:
    """The first ``limit`` fio JSON files of the lab datasets, in path order."""
    found = sorted(ROOT.glob("data/raw/lab-iscsi-2026*/**/*.json"))
    return [p for p in found if "fio version" in p.read_text(encoding="utf-8", errors="replace")][:limit]


def time_parse(limit: int) -> None:
    """Print the CPU seconds of parsing ``limit`` lab fio files (the first parse warms imports only)."""
    texts = [(p.read_text(encoding="utf-8"), p) for p in lab_fio_files(limit)]
    fio.parse_text(*texts[0])
    start_s = time.process_time()
    for text, path in texts:
        fio.parse_text(text, path)
    print(f"{len(texts)} files: {time.process_time() - start_s:.2f} s CPU")


def dump(out: Path) -> None:
    """Pickle the parse (or the refusal) of every bundled fio file, by path."""
    files = sorted(ROOT.glob("data/raw/**/*.json")) + sorted((ROOT / "tests/fixtures/fio").iterdir())
    parsed: dict[str, Any] = {}
    for path in files:
        try:
            r = fio.parse(path)
            parsed[str(path.relative_to(ROOT))] = (r.jobs, r.histogram, r.format, r.warnings)
        except IngestError as exc:
            parsed[str(path.relative_to(ROOT))] = str(exc)
    out.write_bytes(pickle.dumps(parsed))
    print(f"{len(parsed)} files dumped to {out}")


def compare(a: Path, b: Path) -> int:
    """0 if two dumps hold the same files with identical frames (dtypes too) and refusals, else 1."""
    one, two = pickle.loads(a.read_bytes()), pickle.loads(b.read_bytes())
    if one.keys() != two.keys():
        print("different files")
        return 1
    for key, x in one.items():
        y = two[key]
        if isinstance(x, str) or isinstance(y, str):
            if x != y:
                print(f"{key}: refused differently")
                return 1
            continue
        pd.testing.assert_frame_equal(x[0], y[0], check_dtype=True)
        pd.testing.assert_frame_equal(x[1], y[1], check_dtype=True)
        if x[2:] != y[2:]:
            print(f"{key}: format or warnings differ")
            return 1
    print(f"identical: {len(one)} files")
    return 0


def main(argv: list[str]) -> int:
    """Dispatch ``time``, ``dump`` or ``compare``."""
    if argv[:1] == ["time"]:
        time_parse(int(argv[1]) if len(argv) > 1 else DEFAULT_FILES)
        return 0
    if argv[:1] == ["dump"] and len(argv) == 2:
        dump(Path(argv[1]))
        return 0
    if argv[:1] == ["compare"] and len(argv) == 3:
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
