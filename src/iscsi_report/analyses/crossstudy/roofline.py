"""Roofline: IOPS ceilings of one SCST session against read size, and where CPU and network cross."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from iscsi_report.analyses.crossstudy.cpu import MODE_LABELS, MODES, CpuFit, peak_table
from iscsi_report.analyses.crossstudy.studies import Study
from iscsi_report.analyses.crossstudy.wire import WireModel, network_ceiling_iops, reply_time_us
from iscsi_report.core.units import (
    BITS_PER_GBIT,
)

ROOFLINE_MIN_BYTES = 512
ROOFLINE_MAX_BYTES = 2**20
ROOFLINE_POINTS = 49  # four per octave over 512 B .. 1 MiB
CROSSOVER_SEARCH_BYTES = (1.0, float(2**24))  # bracket for the CPU = network root


def roofline_frame(fit: CpuFit, model: WireModel, sizes_bytes: np.ndarray | None = None) -> pd.DataFrame:
    """IOPS ceilings against I/O size: the network line and one CPU line per mode (long form)."""
    if sizes_bytes is None:
        sizes_bytes = np.geomspace(ROOFLINE_MIN_BYTES, ROOFLINE_MAX_BYTES, ROOFLINE_POINTS)
    rows = []
    for size in sizes_bytes:
        rows.append(
            {
                "size_bytes": float(size),
                "ceiling": f"network ({model.link_bit_per_s / BITS_PER_GBIT:g} Gb/s)",
                "iops": network_ceiling_iops(size, model),
            }
        )
        for mode in MODES:
            rows.append(
                {
                    "size_bytes": float(size),
                    "ceiling": f"CPU, {MODE_LABELS[mode]}",
                    "iops": fit.ceiling_iops(mode, size),
                }
            )
    return pd.DataFrame(rows)


def measured_peaks_long(scst: Study) -> pd.DataFrame:
    """Measured peaks in long form: one row per size and mode ("both modes" above 2048 bytes)."""
    peaks = peak_table(scst)
    rows = []
    for rec in peaks.to_dict("records"):
        if rec["nodelay_iops"] == rec["adaptive_iops"]:
            rows.append({"size_bytes": rec["size_bytes"], "mode": "both modes", "iops": rec["nodelay_iops"]})
            continue
        for mode in MODES:
            rows.append(
                {"size_bytes": rec["size_bytes"], "mode": MODE_LABELS[mode], "iops": rec[f"{mode}_iops"]}
            )
    return pd.DataFrame(rows)


def crossover_table(fit: CpuFit, model: WireModel, clock_ghz: float | None = None) -> pd.DataFrame:
    """Size at which each mode's CPU time per read equals the link's reply time (CPU -> network)."""
    rows = []
    for mode in MODES:

        def gap(size: float, mode: str = mode) -> float:
            return fit.cpu_us(mode, size, clock_ghz) - reply_time_us(size, model)

        lo, hi = CROSSOVER_SEARCH_BYTES
        size = brentq(gap, lo, hi) if gap(lo) * gap(hi) < 0 else float("nan")
        rows.append(
            {
                "mode": mode,
                "clock_ghz": clock_ghz or fit.clock_ghz,
                "crossover_size_bytes": size,
                "crossover_iops": network_ceiling_iops(size, model) if math.isfinite(size) else float("nan"),
            }
        )
    return pd.DataFrame(rows)
