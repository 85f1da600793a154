"""SCST peaks and CPU cost: the paper's peak-IOPS table and the per-read CPU time regressed on size."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

from iscsi_report.analyses.crossstudy.studies import Study
from iscsi_report.core.errors import ReportError
from iscsi_report.core.units import (
    BYTES_PER_KIB,
    US_PER_S,
)

Mode = Literal["nodelay", "adaptive"]
MODES: tuple[Mode, ...] = ("nodelay", "adaptive")
MODE_LABELS = {"nodelay": "TCP_NODELAY", "adaptive": "Adaptive Nagle"}


def peak_table(scst: Study) -> pd.DataFrame:
    """The paper's peak-IOPS table: size, both modes' peaks, difference, MB/s, %net, regime."""
    out = scst.table("peak_iops")
    out["size_bytes"] = out["size_bytes"].astype(int)
    return out


def cpu_points(scst: Study) -> pd.DataFrame:
    """Per-op CPU time (1/peak IOPS) at the sizes the paper classes as CPU bound, per mode.

    The paper lists TCP_NODELAY CPU time at 512-2048 bytes and Adaptive Nagle CPU time at 512 and
    1024 bytes (the other sizes are network bound); IOPS come from the peak table.
    """
    tpt = scst.table("throughput_time").set_index("size_bytes")
    peaks = peak_table(scst).set_index("size_bytes")
    rows = []
    for mode in MODES:
        sizes = tpt.index[tpt[f"cpu_us_{mode}"].notna()]
        for size in sizes:
            iops = float(peaks.loc[size, f"{mode}_iops"])
            rows.append(
                {
                    "mode": mode,
                    "size_bytes": int(size),
                    "size_kib": size / BYTES_PER_KIB,
                    "iops": iops,
                    "cpu_us": US_PER_S / iops,
                    "paper_cpu_us": float(tpt.loc[size, f"cpu_us_{mode}"]),
                }
            )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class CpuFit:
    """Per-op CPU time ``intercept_us + slope_us_per_kib * size_kib`` per mode at ``clock_ghz``."""

    intercept_us: Mapping[str, float]
    slope_us_per_kib: Mapping[str, float]
    clock_ghz: float
    method: str

    def cpu_us(self, mode: str, size_bytes: float, clock_ghz: float | None = None) -> float:
        """CPU microseconds per read at ``clock_ghz`` (all of it scaled by the clock ratio)."""
        ratio = self.clock_ghz / (clock_ghz or self.clock_ghz)
        size_kib = size_bytes / BYTES_PER_KIB
        return (self.intercept_us[mode] + self.slope_us_per_kib[mode] * size_kib) * ratio

    def ceiling_iops(self, mode: str, size_bytes: float, clock_ghz: float | None = None) -> float:
        """Reads per second one session thread can process when CPU bound."""
        return US_PER_S / self.cpu_us(mode, size_bytes, clock_ghz)


def _ols_rows(result: Any, model_name: str, mode: str, terms: Mapping[str, str]) -> list[dict[str, Any]]:
    """Tidy rows (estimate, 95% CI) for the named terms of a fitted statsmodels OLS."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        ci = result.conf_int(alpha=0.05)
    rows = []
    for term, label in terms.items():
        rows.append(
            {
                "model": model_name,
                "mode": mode,
                "term": label,
                "estimate": float(result.params[term]),
                "ci_low": float(ci.loc[term, 0]) if result.df_resid > 0 else float("nan"),
                "ci_high": float(ci.loc[term, 1]) if result.df_resid > 0 else float("nan"),
                "n": int(result.nobs),
                "df_resid": int(result.df_resid),
            }
        )
    return rows


def cpu_regression_table(points: pd.DataFrame) -> pd.DataFrame:
    """OLS of per-op CPU us on size (KiB): one line per mode, and a pooled common-slope model.

    A mode with two points has no residual degrees of freedom, so its CIs are NaN; the pooled
    model (mode intercepts, one slope) is the one that carries intervals for both intercepts.
    """
    rows: list[dict[str, Any]] = []
    for mode in MODES:
        sub = points[points["mode"] == mode]
        if len(sub) < 2:
            raise ReportError(f"cpu regression: need two CPU-bound sizes for {mode}, have {len(sub)}")
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = smf.ols("cpu_us ~ size_kib", data=sub).fit()
        rows += _ols_rows(
            result, "separate", mode, {"Intercept": "intercept_us", "size_kib": "slope_us_per_kib"}
        )
    pooled = smf.ols("cpu_us ~ 0 + C(mode) + size_kib", data=points).fit()
    for mode in MODES:
        rows += _ols_rows(pooled, "pooled", mode, {f"C(mode)[{mode}]": "intercept_us"})
    rows += _ols_rows(pooled, "pooled", "both", {"size_kib": "slope_us_per_kib"})
    return pd.DataFrame(rows)


def fit_cpu_cost(points: pd.DataFrame, clock_ghz: float, method: str = "separate") -> CpuFit:
    """Per-mode CPU cost lines from :func:`cpu_regression_table` (``separate`` or ``pooled``)."""
    table = cpu_regression_table(points)
    sub = table[table["model"] == method]
    if sub.empty:
        raise ReportError(f"cpu fit: unknown method {method!r} (separate or pooled)")
    intercept: dict[str, float] = {
        m: float(sub[(sub["mode"] == m) & (sub["term"] == "intercept_us")]["estimate"].iloc[0]) for m in MODES
    }
    slopes = sub[sub["term"] == "slope_us_per_kib"].set_index("mode")["estimate"]
    slope: dict[str, float] = {m: float(slopes[m] if m in slopes.index else slopes["both"]) for m in MODES}
    return CpuFit(intercept_us=intercept, slope_us_per_kib=slope, clock_ghz=clock_ghz, method=method)


def scst_cpu_fit(scst: Study, method: str = "separate") -> CpuFit:
    """The CPU cost fit of Butterfield 2017 at its standard clock."""
    return fit_cpu_cost(cpu_points(scst), scst.value("scst.setup.cpu_clock_ghz"), method)
