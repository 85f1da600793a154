"""Post hoc what-if (issue 21, reads): the RAM LUN given a device time by direction, from a local probe.

Not an engine version and not a blind test. The lab's sweeps never measured the RAM-backed LUN
locally, so the engine charges it no device time in either direction. ``benchmarks/shm_read_probe.sh``
measured, on this (shared, 2-core) machine on 2026-11-26, what a page-cache copy of one block from a
file in /dev/shm costs: reads about three times writes above 1 MiB. This script feeds those medians
to the forecast matrix as if they had been measured with the lab: today's writes charged the
write time (so the host residual is fitted net of it), each read target charged the read time,
and prints the matrix's groups (engine and rescaled formula, whose blog formula also adds the
device time) and the direction group's median error by read size.

    PYTHONPATH=src .venv/bin/python benchmarks/reads_device_whatif.py {written|sparse|none} SWEEP [SWEEP ...]

(``none``: no device time, the engine as committed, for the comparison.)
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab
from iscsi_report.core import forecast
from iscsi_report.core.units import BYTES_PER_KIB

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
# The probe's sizes (KiB) and the median over 3 runs of fio's mean latency (ms) at each
# (benchmarks/shm_read_probe.sh 3, 2026-11-26, shared machine); 0 KiB costs nothing.
PROBE_KIB = np.array([0, 448, 1216, 2048, 3328, 4096])
READ_MS = {
    "written": np.array([0, 0.143, 1.144, 1.830, 2.901, 3.335]),
    "sparse": np.array([0, 0.031, 0.794, 0.911, 2.161, 2.789]),
}
WRITE_MS = np.array([0, 0.143, 0.367, 0.569, 0.959, 1.289])
PROBE = forecast.Source("measured", "benchmarks/shm_read_probe.sh on this machine (a what-if stand-in)")


def interpolated(ms: np.ndarray) -> Any:
    """Device time by request size (bytes), linear between the probe's sizes, flat beyond."""
    return lambda request_bytes: float(np.interp(request_bytes, PROBE_KIB * BYTES_PER_KIB, ms))


def patch(kind: str) -> None:
    """Make the matrix charge today's writes the write time and every read the read time."""
    read_device = forecast.TargetDevice("ram-read-probe", interpolated(READ_MS[kind]), None, PROBE)
    today, configuration_of = fm.today, fm.configuration_of

    def today_with_write_time(*args: Any, **kwargs: Any) -> forecast.Today:
        return replace(today(*args, **kwargs), device_ms=interpolated(WRITE_MS), device_source=PROBE)

    def reads_with_read_time(*args: Any, **kwargs: Any) -> forecast.Configuration:
        c = configuration_of(*args, **kwargs)
        return replace(c, device=read_device) if c.direction == "read" and c.device is None else c

    fm.today = today_with_write_time  # type: ignore[assignment]
    fm.configuration_of = reads_with_read_time  # type: ignore[assignment]


def main(kind: str, sweeps: list[str]) -> None:
    """Print each sweep's groups and its direction group's median error by read size."""
    if kind != "none":
        patch(kind)
    for sweep in sweeps:
        m = fm.run(lab.load(RAW / sweep), sweep)
        print(f"== {sweep}, RAM LUN device time from the probe: {kind} (file read) ==")
        cols = ["group", "targets", fm.ENGINE, fm.BLOG_SCALED]
        print(fm.summary(m)[cols].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
        e = m.pairs[(m.pairs["method"] == fm.ENGINE) & (m.pairs["group"] == "direction")]
        size = e["target"].str.extract(r"bs=(\d+)")[0].astype(int) // BYTES_PER_KIB
        print("direction, median error (%) by read size (KiB):")
        print(pd.Series(e["error_pct"].to_numpy(), index=size.to_numpy()).groupby(level=0).median().round(2))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
