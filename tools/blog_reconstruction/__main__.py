"""``python -m blog_reconstruction [--out DIR] [--check]``: regenerate or verify the dataset."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from blog_reconstruction import DATASET, build, check

DEFAULT_OUT = Path("data") / "raw" / DATASET


def main(argv: list[str] | None = None) -> int:
    """Write the dataset (default ./data/raw/blog-2023) or, with --check, compare it byte by byte."""
    parser = argparse.ArgumentParser(prog="python -m blog_reconstruction", description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="dataset folder")
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if the folder differs from a regeneration")  # fmt: skip
    args = parser.parse_args(argv)
    if args.check:
        problems = check(args.out)
        for p in problems:
            print(p, file=sys.stderr)
        print(f"{args.out}: {'differs' if problems else 'byte-identical to a regeneration'}")
        return 1 if problems else 0
    files = build(args.out)
    total = sum(len(f.data) for f in files)
    print(f"{args.out}: wrote {len(files)} files ({total / 1e6:.1f} MB), manifest.yaml, README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
