"""The forecast chapter's tables for people: human headers, the paired test in words."""

from __future__ import annotations

import pandas as pd

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.core.units import BYTES_PER_KIB


def interval_text(row: pd.Series, name: str) -> str:
    """A paired difference and its bootstrap interval, in points."""
    low, high = row[f"diff_vs_{name}_low"], row[f"diff_vs_{name}_high"]
    if pd.isna(low):
        return f"{row[f'diff_vs_{name}']:+.2f} (too few configurations for an interval)"
    return f"{row[f'diff_vs_{name}']:+.2f} [{low:+.2f}, {high:+.2f}]"


def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per group: configurations, each method's median error, the paired tests in words."""
    return pd.DataFrame(
        {
            "What differs from today": summary["group"],
            "Configurations forecast": summary["targets"].astype(int),
            "Engine: median error (%)": summary[fm.ENGINE],
            "Blog formula (%)": summary[fm.BLOG],
            "Blog formula, rescaled on today (%)": summary[fm.BLOG_SCALED],
            "Engine less rescaled formula, points [95 % interval]": [
                interval_text(r, "scaled") for _, r in summary.iterrows()
            ],
            "Engine better than rescaled formula": [
                "yes" if b else "no" for b in summary["better_than_scaled"]
            ],
            "Engine less blog formula, points [95 % interval]": [
                interval_text(r, "blog") for _, r in summary.iterrows()
            ],
        }
    )


def device_table(terms: pd.DataFrame) -> pd.DataFrame:
    """Each locally measured device per block size: its time per write and its ceiling."""
    return pd.DataFrame(
        {
            "Device": terms["device"],
            "Block size (KiB)": (terms["bs_bytes"] // BYTES_PER_KIB).astype(int),
            "Device time per write (ms)": terms["device_ms"],
            "Device ceiling (MiB/s)": terms["ceiling_mib_per_s"],
        }
    )


def coverage_table(v: fm.Verdict) -> pd.DataFrame:
    """Per judged sweep: forecasts made and the share of 95 % intervals holding the measured mean."""
    return pd.DataFrame(
        {
            "Sweep": list(v.coverage_pct),
            "Forecasts": [len(v.matrices[n].pairs) // len(fm.METHODS) for n in v.coverage_pct],
            "Intervals holding the measurement (%)": list(v.coverage_pct.values()),
        }
    )
