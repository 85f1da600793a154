"""CPU of the provenance pages' tool detection over a dataset: nothing kept, then every parse kept.

PYTHONPATH=src .venv/bin/python benchmarks/provenance_kept.py [--dataset lab-iscsi-2026]

Runs ``provenance.tool_info`` over every raw file of the dataset twice in one process with a fresh
parse cache folder (``core/keep.py``): first nothing is kept (each file parsed and kept), then every
parse is kept (each read, not parsed). Prints the process CPU time of each pass.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from iscsi_report.core import keep
from iscsi_report.core.measurements import open_dataset
from iscsi_report.pipeline import provenance

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
TOOLS = ("fio", "ping", "iperf3", "iostat", "tshark")


def main() -> None:
    """Time both passes and print them."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="lab-iscsi-2026")
    args = ap.parse_args()
    os.environ[keep.PARSE_CACHE_ENV] = tempfile.mkdtemp(prefix="provenance-kept-")
    ds = open_dataset(RAW / args.dataset)
    files = [f for tool in TOOLS for f in ds.select(tool)]
    seconds = []
    for _ in range(2):
        started = time.process_time()
        for f in files:
            provenance.tool_info(f.path, f.tool)
        seconds.append(time.process_time() - started)
    print(f"{len(files)} files: nothing kept {seconds[0]:.2f} s CPU; every parse kept {seconds[1]:.2f} s CPU")


if __name__ == "__main__":
    main()
