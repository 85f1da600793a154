"""Clock scaling: the SCST paper's reduced-clock results predicted by stretching CPU time with the clock."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.analyses.crossstudy.cpu import CpuFit, peak_table
from iscsi_report.analyses.crossstudy.studies import Study
from iscsi_report.analyses.crossstudy.wire import WireModel, network_ceiling_iops
from iscsi_report.core.units import (
    PERCENT_PER_FRACTION,
    US_PER_S,
)

REDUCED_CLOCK_SIZE_BYTES = 2048  # the paper's 1.6 GHz runs read 2048 bytes


def clock_scaled_fraction(
    iops_from: float | pd.Series, iops_to: float | pd.Series, clock_from_ghz: float, clock_to_ghz: float
) -> float | pd.Series:
    """Fraction of per-op time that would have to scale with the clock to explain a measured change."""
    time_ratio = iops_from / iops_to
    clock_ratio = clock_from_ghz / clock_to_ghz
    return (time_ratio - 1.0) / (clock_ratio - 1.0)


MEASURED_PEAK, REGRESSION_LINE = "measured peak", "regression line"


def _clock_cases(scst: Study, fit: CpuFit, size: int) -> list[tuple[str, str, float, float]]:
    """(mode, basis, CPU us per read at the standard clock, IOPS measured at the reduced clock)."""
    peaks = peak_table(scst).set_index("size_bytes")
    nodelay = scst.value("scst.nagle.reduced_clock_nodelay_iops")
    return [
        ("nodelay", MEASURED_PEAK, US_PER_S / float(peaks["nodelay_iops"].loc[size]), nodelay),
        ("nodelay", REGRESSION_LINE, fit.cpu_us("nodelay", size), nodelay),
        (
            "adaptive",
            REGRESSION_LINE,
            fit.cpu_us("adaptive", size),
            scst.value("scst.nagle.reduced_clock_adaptive_iops"),
        ),
    ]


def _clock_row(
    case: tuple[str, str, float, float], size: int, ghz: tuple[float, float], net_iops: float
) -> dict[str, Any]:
    """One clock-scaling prediction: CPU time stretched by the clock ratio, capped by the network."""
    mode, basis, cpu_us_from, measured = case
    ghz_from, ghz_to = ghz
    cpu_us_to = cpu_us_from * ghz_from / ghz_to
    cpu_iops = US_PER_S / cpu_us_to
    predicted = min(cpu_iops, net_iops)
    return {
        "mode": mode,
        "basis": basis,
        "size_bytes": size,
        "clock_from_ghz": ghz_from,
        "clock_to_ghz": ghz_to,
        "cpu_us_from": cpu_us_from,
        "cpu_us_to": cpu_us_to,
        "cpu_ceiling_iops": cpu_iops,
        "network_ceiling_iops": net_iops,
        "predicted_iops": predicted,
        "predicted_bound": "cpu" if cpu_iops < net_iops else "network",
        "measured_iops": measured,
        "gap_pct": PERCENT_PER_FRACTION * (measured - predicted) / predicted,
    }


def clock_scaling_table(scst: Study, fit: CpuFit, model: WireModel | None = None) -> pd.DataFrame:
    """Predict the paper's reduced-clock results by scaling CPU time with the clock ratio; compare."""
    model = model or WireModel()
    size = REDUCED_CLOCK_SIZE_BYTES
    ghz = (scst.value("scst.nagle.standard_clock_ghz"), scst.value("scst.nagle.reduced_clock_ghz"))
    net_iops = network_ceiling_iops(size, model)
    out = pd.DataFrame([_clock_row(case, size, ghz, net_iops) for case in _clock_cases(scst, fit, size)])
    measured_from = US_PER_S / out["cpu_us_from"]
    out["clock_scaled_fraction"] = np.where(
        out["basis"] == MEASURED_PEAK,
        clock_scaled_fraction(measured_from, out["measured_iops"], *ghz),
        np.nan,
    )
    return out
