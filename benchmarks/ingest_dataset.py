"""Time to verify and parse every raw file of a dataset with the project's parsers.

Usage: .venv/bin/python benchmarks/ingest_dataset.py data/raw/blog-2023
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from importlib import import_module

from iscsi_report.core import dataset


def main(raw_dir: str) -> None:
    """Parse each manifest entry once, print per-tool counts and seconds, and the total."""
    started = time.perf_counter()
    ds = dataset.load(raw_dir)
    seconds: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for f in ds.files:
        t0 = time.perf_counter()
        import_module(f"iscsi_report.core.ingest.{f.tool}").parse(dataset.verify(f))
        seconds[f.tool] += time.perf_counter() - t0
        counts[f.tool] += 1
    for tool in sorted(counts):
        print(f"{tool:8} {counts[tool]:3d} files {seconds[tool]:7.2f} s")
    print(f"total    {sum(counts.values()):3d} files {time.perf_counter() - started:7.2f} s")


if __name__ == "__main__":
    main(sys.argv[1])
