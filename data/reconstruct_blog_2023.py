"""Regenerate data/raw/blog-2023 (reconstructed from the blog's published statistics).

Thin wrapper around ``tools/blog_reconstruction`` (not part of the importable library);
pass ``--check`` to verify the committed bytes instead.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

from blog_reconstruction.__main__ import main  # noqa: E402

if __name__ == "__main__":
    out = Path(__file__).resolve().parent / "raw" / "blog-2023"
    sys.exit(main(["--out", str(out), *sys.argv[1:]]))
