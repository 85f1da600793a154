"""Compile the ping parser's fast path (src/iscsi_report/core/ingest/native/pingscan.c) with cc.

The library is written beside the source under the name the loader looks for (the source's
CRC-32), through a temporary file renamed into place. Without a C compiler it says so and exits 0:
the parser then keeps its numpy scanner, which gives the same results more slowly.
Usage: python scripts/build_pingscan.py [CC]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from iscsi_report.core.ingest.native.pingscan import SOURCE, library_path

CFLAGS = ("-O2", "-Wall", "-Wextra", "-fPIC", "-shared")  # no -ffast-math: exact doubles


def main(argv: list[str]) -> int:
    """Build the library unless it is there already; 0 on success or without a compiler."""
    target = library_path()
    if target.exists():
        return 0
    cc = argv[0] if argv else os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        print(f"no C compiler ({cc}): ping logs parse with the numpy scanner", file=sys.stderr)
        return 0
    for stale in SOURCE.parent.glob("pingscan-*.so"):
        stale.unlink()
    with tempfile.TemporaryDirectory(dir=SOURCE.parent) as tmp:
        built = Path(tmp) / target.name
        subprocess.run([cc, *CFLAGS, "-o", str(built), str(SOURCE)], check=True)
        built.replace(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
