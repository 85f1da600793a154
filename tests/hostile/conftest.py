"""Make the case catalogue importable as ``cases`` (tests/ is not a package)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
