"""Issue 28: where a whole test run's Python time goes, by function, from a py-spy recording.

py-spy (a sampling profiler, not in the lock: ``pip download py-spy`` gives a wheel holding one
static binary) follows pytest's workers, the kernels forked from the fork servers and every command
line process. Record from a fresh clone whose venv and lab are set up, then summarise::

    make venv sysdeps && make -j 2 labsetup bytecode
    py-spy record --subprocesses --rate 20 --format raw -o /tmp/suite.raw -- \\
        .venv/bin/pytest -n 2 --dist loadfile --no-loadscope-reorder
    python3 benchmarks/suite_profile.py functions /tmp/suite.raw [SUBSTRING]
    python3 benchmarks/suite_profile.py compare /tmp/before.raw /tmp/after.raw NAME...

``functions`` prints the seconds of samples under each function whose frame contains SUBSTRING
(default: the project's own), counted once per sample; ``compare`` the same for the named functions
in two recordings. A sample is one thread seen running, so waits py-spy cannot tell from work (a
thread polling its sockets) count too: compare a function with itself, not with the run's wall time.
Standard library only.
"""

from __future__ import annotations

import collections
import re
import sys
from collections.abc import Iterator
from pathlib import Path

RATE_HZ = 20  # the --rate of the recording: samples per second of a running thread
PROCESS = re.compile(r'process \d+:"(.*?)";', re.S)  # py-spy's frame for each process in the chain
LINE = re.compile(r":\d+\)$")  # a frame's line number, dropped so a function is counted as one
OWN = "iscsi_report/"


def samples(raw: Path) -> Iterator[tuple[list[str], int]]:
    """(frames below the last process, count) of each recorded stack; a command line may hold newlines."""
    record = ""
    for line in raw.read_text(encoding="utf-8", errors="replace").split("\n"):
        if line.startswith("process ") and record:
            yield from _stack(record)
            record = line
        else:
            record = f"{record} {line}" if record else line
    if record:
        yield from _stack(record)


def _stack(record: str) -> Iterator[tuple[list[str], int]]:
    """The frames and count of one record (nothing for a malformed one)."""
    stack, _, count = record.rstrip().rpartition(" ")
    if not count.isdigit():
        return
    end = 0
    for found in PROCESS.finditer(stack + ";"):
        end = found.end()
    rest = (stack + ";")[end:].rstrip(";")
    yield (rest.split(";") if rest else []), int(count)


def inclusive_s(raw: Path, wanted: str) -> dict[str, float]:
    """Seconds of samples under each function whose frame contains ``wanted``, once per sample."""
    totals: collections.Counter[str] = collections.Counter()
    for frames, count in samples(raw):
        for name in {LINE.sub(")", f) for f in frames if wanted in f}:
            totals[name] += count
    return {name: n / RATE_HZ for name, n in totals.items()}


def main(argv: list[str]) -> int:
    """``functions RAW [SUBSTRING]`` or ``compare RAW_A RAW_B NAME...``."""
    if len(argv) >= 2 and argv[0] == "functions":
        totals = inclusive_s(Path(argv[1]), argv[2] if len(argv) > 2 else OWN)
        for name, seconds in sorted(totals.items(), key=lambda kv: -kv[1])[:60]:
            print(f"{seconds:8.1f}  {name}")
        return 0
    if len(argv) >= 4 and argv[0] == "compare":
        before, after = inclusive_s(Path(argv[1]), ""), inclusive_s(Path(argv[2]), "")
        print(f"{'before':>8}  {'after':>8}  function")
        for wanted in argv[3:]:
            names = sorted({n for n in (*before, *after) if n.startswith(wanted)})
            for name in names or [wanted]:
                print(f"{before.get(name, 0.0):8.1f}  {after.get(name, 0.0):8.1f}  {name}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
