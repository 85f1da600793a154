"""Paired whole-process wall times of two commands: A, B, A, B ... and the ratio A/B pair by pair.

Usage: python benchmarks/paired_wall.py PAIRS 'COMMAND A' 'COMMAND B'   (each run through bash -c)

Alternating the two spreads a shared machine's drift over both; the median of the per-pair
ratios is the figure to quote. Prints each command's median and min wall time and the ratios'
median, min and max. One warm-up run of each first (file cache, kept parses).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

WARMUP_RUNS = 1  # per command, not counted: fills the page cache and any kept results


def wall_s(command: str) -> float:
    """Wall seconds of one run of ``command`` (bash -c, output discarded); a failure stops the run."""
    start = time.perf_counter()
    subprocess.run(["bash", "-c", command], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    """Run the pairs and print the figures."""
    pairs, a, b = int(argv[0]), argv[1], argv[2]
    for _ in range(WARMUP_RUNS):
        wall_s(a), wall_s(b)
    times_a, times_b = [], []
    for _ in range(pairs):
        times_a.append(wall_s(a))
        times_b.append(wall_s(b))
    ratios = [x / y for x, y in zip(times_a, times_b, strict=True)]
    for name, times in (("A", times_a), ("B", times_b)):
        print(f"{name}: median {statistics.median(times):.3f} s, min {min(times):.3f} s")
    print(
        f"A/B per pair: median {statistics.median(ratios):.3f}, "
        f"min {min(ratios):.3f}, max {max(ratios):.3f} ({pairs} pairs)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
