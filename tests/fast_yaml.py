"""YAML the project wrote, read by libyaml: a lab manifest of a thousand entries in a tenth of the time.

The tests read manifests to know what a dataset lists; pure-Python ``yaml.safe_load`` took about 3 s
for the largest (0.8 MB) and 15 s for all of them, libyaml about a tenth of that with the same result
for these plain documents. The project's own reader (``core.yamlio``) is what the tests check; this is
only how they look inside.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def load_yaml(path: Path) -> Any:
    """The YAML document at ``path`` (UTF-8), parsed by libyaml's safe loader."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
