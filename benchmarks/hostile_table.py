"""Run the hostile-input catalogue (tests/hostile/cases.py) and print the BENCHMARKS.md table.

Usage: nice -n 19 .venv/bin/python benchmarks/hostile_table.py [--by-group] [--failures]

Each case is classified as a clear error, a correct result, or a failure: an unclear error (the
message lacks the file, line, JSON path or expectation), a wrong result, a silently accepted bad
input, a traceback (any exception but the project's own) or a hang (over the per-case alarm).
Exit status 1 if any case failed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "hostile"))

from cases import CASES, OUTCOMES, run_case

FAILURES = ("unclear_error", "wrong_result", "silent", "traceback", "hang")
ROWS = (
    ("cases tried", None),
    ("clear errors (file, line or JSON path, what was expected)", "clear_error"),
    ("correct results", "correct"),
    ("unclear errors", "unclear_error"),
    ("wrong results", "wrong_result"),
    ("silent (bad input accepted)", "silent"),
    ("tracebacks", "traceback"),
    ("hangs", "hang"),
)


def main() -> int:
    """Run every case in its own temporary folder; print the table (and per group if asked)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--by-group", action="store_true", help="one column per group of reader")
    parser.add_argument("--failures", action="store_true", help="list every failing case")
    args = parser.parse_args()
    started = time.perf_counter()
    outcomes: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        for i, case in enumerate(CASES):
            outcome = run_case(case, Path(tmp) / str(i))
            outcomes.append((case.id, case.group, outcome.kind, outcome.detail))
    seconds = time.perf_counter() - started
    total = Counter(kind for _, _, kind, _ in outcomes)
    assert set(total) <= set(OUTCOMES)
    print("| outcome | cases |")
    print("| --- | ---: |")
    for label, kind in ROWS:
        print(f"| {label} | {len(outcomes) if kind is None else total[kind]} |")
    print(f"\n{len(outcomes)} cases in {seconds:.1f} s")
    if args.by_group:
        groups = sorted({g for _, g, _, _ in outcomes})
        print("\n| group | cases | clear errors | correct | failures |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for g in groups:
            kinds = Counter(k for _, gg, k, _ in outcomes if gg == g)
            failed = sum(kinds[k] for k in FAILURES)
            print(f"| {g} | {sum(kinds.values())} | {kinds['clear_error']} | {kinds['correct']} | {failed} |")
    failed = [(cid, kind, detail) for cid, _, kind, detail in outcomes if kind in FAILURES]
    if args.failures:
        for cid, kind, detail in failed:
            print(f"{cid}: {kind}: {detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
