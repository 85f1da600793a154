"""Numbers as a sentence shows them: thousands separators, plurals, and ranges whose ends are equal.

Chapters glue these strings (``report.glue("devices_text", prose.count(n, "device"))``) instead of
templating ``{n} device(s)`` or ``{lo} to {hi} KiB`` in the notebook, where a single device or an
equal low and high end would read wrongly. Pure text with no dependency, in core so that both the
page layer (:mod:`iscsi_report.presentation`) and a chapter computation that names its sources in
words (``"iostat wareq-sz (3 files)"`` in :mod:`iscsi_report.analyses.r2t`) use the same phrasing.
"""

from __future__ import annotations

import math


def number(value: float, decimals: int = 0) -> str:
    """``value`` with thousands separators and ``decimals`` digits after the point (NaN as an em dash)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:,.{decimals}f}"


def plural(n: float, singular: str, plural_form: str | None = None) -> str:
    """``singular`` for exactly one, else ``plural_form`` (default: ``singular`` + "s")."""
    return singular if n == 1 else (plural_form or singular + "s")


def count(n: float, singular: str, plural_form: str | None = None) -> str:
    """``n`` and its noun, pluralised: "1 device", "6 devices", "901,800 replies"."""
    return f"{number(n)} {plural(n, singular, plural_form)}"


def span(low: float, high: float, unit: str = "", decimals: int = 0) -> str:
    """A range in words: "64 to 1,024 KiB", or "1,024 KiB" when both ends print the same."""
    lo, hi = number(low, decimals), number(high, decimals)
    shown = lo if lo == hi else f"{lo} to {hi}"
    return f"{shown} {unit}".rstrip()


BINARY_UNITS = (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def size(n_bytes: float) -> str:
    """A byte count in the largest binary unit it reaches: "2 MiB", "64 KiB", "1.5 MiB", "512 B"."""
    for unit, factor in BINARY_UNITS:
        if n_bytes >= factor:
            return f"{n_bytes / factor:,.10g} {unit}"
    return f"{n_bytes:,.10g} B"


def sizes(values: list[float]) -> str:
    """Distinct byte sizes in words, smallest first: "2 MiB", "64 KiB and 2 MiB", "a, b and c"."""
    shown = [size(v) for v in sorted(set(values))]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1] if shown else "—"


def duration_ms(ms: float) -> str:
    """A time given in ms, in µs below 0.1 ms (one decimal) so sub-microsecond steps stay visible."""
    return f"{number(ms * 1000, 1)} µs" if abs(ms) < 0.1 else f"{number(ms, 3)} ms"
