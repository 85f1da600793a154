"""Sum a pytest ``--durations`` report by test file, to see where ``make test`` spends its time (issue 28).

Usage: ``python benchmarks/suite_durations.py BEFORE.log [AFTER.log]``: each log is the output of
``PYTEST_ADDOPTS=--durations=60 pytest -n 2 --dist loadfile --no-loadscope-reorder``. Prints, per
file, the seconds the report lists (setup, call and teardown; only the entries the report kept),
side by side when two logs are given, and each log's final "N passed ... in S s" line.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

DURATION = re.compile(r"^([0-9.]+)s (setup|call|teardown)\s+(\S+?)::")
SUMMARY = re.compile(r"^=+ (.* in [0-9.]+s.*) =+$")


def by_file_s(log: Path) -> dict[str, float]:
    """Seconds per test file, summed over the ``--durations`` entries of one log."""
    totals: dict[str, float] = defaultdict(float)
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        found = DURATION.match(line)
        if found:
            totals[found.group(3)] += float(found.group(1))
    return dict(totals)


def summary_line(log: Path) -> str:
    """The run's last summary line (passed, failed, wall seconds), or '' when the run did not end."""
    lines = [m.group(1) for m in map(SUMMARY.match, log.read_text(errors="replace").splitlines()) if m]
    return lines[-1] if lines else ""


def main(logs: list[str]) -> None:
    """Print the per-file table, heaviest first (by the first log), and the summary lines."""
    tables = [by_file_s(Path(p)) for p in logs]
    files = sorted(set().union(*tables), key=lambda f: -tables[0].get(f, 0.0))
    for name in files:
        print(f"{name:55}" + "".join(f"{t.get(name, 0.0):9.1f}" for t in tables))
    print(f"{'sum of listed entries':55}" + "".join(f"{sum(t.values()):9.1f}" for t in tables))
    for path in logs:
        print(f"{path}: {summary_line(Path(path))}")


if __name__ == "__main__":
    main(sys.argv[1:])
