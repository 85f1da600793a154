"""Run by test_ping.py in a fresh, single-threaded process: every ping fixture, and seeded mutations
of each, parsed by one process and by two (the second half forked), must give the same result.

Blocks of a few hundred bytes and no size threshold, so that the split and the blocks fall on
every kind of line. Prints one JSON object: how many texts were compared, how many scans forked,
and the first mismatches. With ``--child-fails`` every forked child fails before sending, and the
parent must scan its range itself.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import lzma
import os
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import ping

FIX = Path(__file__).parents[1] / "fixtures" / "ping"
BLOCK_BYTES = 300
MUTATIONS = 12
SEED = 20261127
JUNK = [
    "\n",
    "x",
    "=",
    " ms",
    " (DUP!)",
    "64 bytes from 10.9.9.9: icmp_seq=7 ttl=64 time=1.5 ms\n",
    "\u00e9",
    "",
]
SHOWN = 5


def _text(path: Path) -> str:
    """A fixture's text (plain, .gz or .xz)."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    elif path.suffix == ".xz":
        data = lzma.decompress(data)
    return data.decode()


def _outcome(text: str, processes: int) -> Any:
    """Every field of the parse, or the error's message and line."""
    try:
        result = ping.parse_text(text, "t.txt", processes=processes)
    except IngestError as exc:
        return ("error", str(exc), exc.line)
    fields = {}
    for f in dataclasses.fields(result):
        value = getattr(result, f.name)
        fields[f.name] = repr(
            value.tolist() if isinstance(value, np.ndarray) else value
        )  # NaN == NaN as text
    return fields


def main(child_fails: bool) -> None:
    """Compare one-process and two-process parses; print the tally as JSON."""
    ping._BLOCK_BYTES = BLOCK_BYTES
    ping._SPLIT_MIN_BYTES = 0
    forks = [0]
    real_fork = os.fork

    def counted_fork() -> int:
        forks[0] += 1
        return real_fork()

    ping.os.fork = counted_fork  # type: ignore[attr-defined]
    if child_fails:
        ping.pickle.dump = lambda *a, **k: os._exit(3)  # type: ignore[attr-defined]
    rng = random.Random(SEED)
    texts = []
    for path in sorted(FIX.iterdir()):
        text = _text(path)
        texts.append(text)
        for _ in range(MUTATIONS):
            pos, cut = rng.randrange(len(text) + 1), rng.randrange(len(text) // 2, len(text) + 1)
            texts.append((text[:pos] + rng.choice(JUNK) + text[pos + rng.randrange(3) :])[:cut])
    mismatches = [i for i, t in enumerate(texts) if _outcome(t, 1) != _outcome(t, 2)]
    print(json.dumps({"compared": len(texts), "forked": forks[0], "mismatches": mismatches[:SHOWN]}))


if __name__ == "__main__":
    main("--child-fails" in sys.argv[1:])
