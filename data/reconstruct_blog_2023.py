"""Regenerate data/raw/blog-2023 (reconstructed from the blog's published statistics).

Thin wrapper around ``python -m iscsi_report.reconstruct``; pass ``--check`` to verify instead.
"""

import sys
from pathlib import Path

from iscsi_report.reconstruct.__main__ import main

if __name__ == "__main__":
    out = Path(__file__).resolve().parent / "raw" / "blog-2023"
    sys.exit(main(["--out", str(out), *sys.argv[1:]]))
