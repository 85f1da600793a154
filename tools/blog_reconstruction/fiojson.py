"""fio's JSON printer and latency histogram, reimplemented so the files look like fio wrote them.

Layout mirrors a capture of fio 3.33 ``--output-format=json`` on the project machine: two-space
indentation, ``"key" : value``, floats as ``%.6f``, integers bare, ``}`` + newline at the end.
Latency percentiles use fio's log-linear histogram (FIO_IO_U_PLAT_BITS = 6): each reported value
is the midpoint of the bucket holding the percentile, as fio's ``calc_clat_percentiles`` does.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

PLAT_BITS = 6  # FIO_IO_U_PLAT_BITS
PLAT_VAL = 1 << PLAT_BITS
PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5,
               99.9, 99.95, 99.99)  # fmt: skip
LAT_NS_KEYS = ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000")
LAT_US_KEYS = LAT_NS_KEYS
LAT_MS_KEYS = (*LAT_NS_KEYS, "2000", ">=2000")
LAT_BOUNDS = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)  # upper bounds (exclusive) per unit
LAT_MS_BOUNDS = (*LAT_BOUNDS, 2000)
NS_PER_US = 1000
NS_PER_MS = 1_000_000


def dumps(obj: Any, level: int = 0) -> str:
    """Serialise dicts/lists/scalars the way fio's json.c prints them."""
    pad = "  " * (level + 1)
    if isinstance(obj, dict):
        items = [f"{pad}{json.dumps(k)} : {dumps(v, level + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if isinstance(obj, list):
        items = [pad + dumps(v, level + 1) for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + "  " * level + "]"
    if isinstance(obj, bool):
        raise TypeError("fio JSON has no booleans")
    if isinstance(obj, int | np.integer):
        return str(int(obj))
    if isinstance(obj, float | np.floating):
        return f"{float(obj):.6f}"
    if isinstance(obj, str):
        return json.dumps(obj)
    raise TypeError(f"cannot print {type(obj).__name__} as fio JSON")


def plat_val_to_idx(val: np.ndarray) -> np.ndarray:
    """Histogram bucket of each latency (ns), as fio's plat_val_to_idx."""
    v = np.asarray(val, dtype=np.int64)
    msb = np.frexp(np.maximum(v, 1).astype(np.float64))[1].astype(np.int64) - 1  # exact below 2**53
    error_bits = np.maximum(msb - PLAT_BITS, 0)
    base = (error_bits + 1) << PLAT_BITS
    offset = (PLAT_VAL - 1) & (v >> error_bits)
    return np.where(msb <= PLAT_BITS, v, base + offset)


def plat_idx_to_val(idx: int) -> int:
    """Midpoint value (ns) of a histogram bucket, as fio's plat_idx_to_val."""
    if idx < (PLAT_VAL << 1):
        return idx
    error_bits = (idx >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    k = idx % PLAT_VAL
    return int(base + (k + 0.5) * (1 << error_bits))


def percentiles(values_ns: np.ndarray) -> dict[str, int]:
    """fio's clat percentile table: first bucket whose cumulative count reaches p% of N."""
    idx = np.sort(plat_val_to_idx(values_ns))
    n = idx.size
    out = {}
    for p in PERCENTILES:
        rank = int(np.ceil(p / 100.0 * n)) - 1  # first position where cumulative >= p% of n
        out[f"{p:.6f}"] = plat_idx_to_val(int(idx[max(rank, 0)]))
    return out


def latency_stats(values_ns: np.ndarray, *, with_percentiles: bool) -> dict[str, Any]:
    """min/max/mean/stddev/N (and percentiles) of one latency kind, fio's field order."""
    v = np.asarray(values_ns, dtype=np.int64)
    out: dict[str, Any] = {
        "min": int(v.min()),
        "max": int(v.max()),
        "mean": float(v.mean()),
        "stddev": float(v.std(ddof=1)) if v.size > 1 else 0.0,
        "N": int(v.size),
    }
    if with_percentiles:
        out["percentile"] = percentiles(v)
    return out


def empty_latency() -> dict[str, Any]:
    """The all-zero latency block fio prints for an idle direction."""
    return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}


def latency_buckets(lat_ns: np.ndarray) -> dict[str, dict[str, float]]:
    """Share (%) of I/Os per latency band: fio's latency_ns / latency_us / latency_ms maps."""
    v = np.asarray(lat_ns, dtype=np.int64)
    n = v.size
    ns = v[v <= NS_PER_US]
    us = v[(v > NS_PER_US) & (v < NS_PER_MS)] // NS_PER_US
    ms = v[v >= NS_PER_MS] // NS_PER_MS

    def share(sel: np.ndarray, bounds: tuple[int, ...], keys: tuple[str, ...]) -> dict[str, float]:
        counts = np.bincount(np.searchsorted(bounds, sel, side="right"), minlength=len(keys))
        return {k: 100.0 * int(c) / n for k, c in zip(keys, counts[: len(keys)], strict=True)}

    return {
        "latency_ns": share(ns, LAT_BOUNDS, LAT_NS_KEYS),
        "latency_us": share(us, LAT_BOUNDS, LAT_US_KEYS),
        "latency_ms": share(ms, LAT_MS_BOUNDS, LAT_MS_KEYS),
    }
