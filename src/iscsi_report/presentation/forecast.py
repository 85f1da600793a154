"""The forecast chapter's tables for people: human headers, the paired test in words."""

from __future__ import annotations

import pandas as pd

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab
from iscsi_report.core import prose
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


def versions_table(declared: pd.DataFrame, later: pd.DataFrame, versions: tuple[int, int]) -> pd.DataFrame:
    """Per group, the engine as declared beside a later version scored on the same pairs (post hoc)."""
    old, new = versions
    after = later.set_index("group")
    return pd.DataFrame(
        {
            "What differs from today": declared["group"],
            "Configurations forecast": declared["targets"].astype(int),
            f"Engine version {old}, as declared (%)": declared[fm.ENGINE],
            f"Engine version {new}, written after (%)": [after.loc[g, fm.ENGINE] for g in declared["group"]],
            "Blog formula, rescaled on today (%)": declared[fm.BLOG_SCALED],
            f"Version {new} better than rescaled formula": [
                "yes" if after.loc[g, "better_than_scaled"] else "no" for g in declared["group"]
            ],
        }
    )


def device_name(device: str) -> str:
    """A lab device in words: the RAM LUN says what it is, the emulated ones keep their names."""
    return "RAM-backed file (no device time)" if device == lab.RAM_DEVICE else f"{device} (emulated)"


def device_added_table(added: pd.DataFrame) -> pd.DataFrame:
    """Local fio's time per write beside the time the device added to iSCSI writes, per size."""
    return pd.DataFrame(
        {
            "Device": added["device"].map(device_name),
            "Block size (KiB)": (added["bs_bytes"] // BYTES_PER_KIB).astype(int),
            "Local fio per write (ms)": added["local_ms"],
            "Added to an iSCSI write (ms)": added["added_ms"],
            "Local less added (ms)": added["local_less_added_ms"],
            "Device ceiling, local fio (MiB/s)": added["ceiling_mib_per_s"],
        }
    )


def device_moves_table(moves: pd.DataFrame) -> pd.DataFrame:
    """The engine's errors when only the device changes, per pair of devices, misses beside hits."""
    return pd.DataFrame(
        {
            "Today's device": moves["today_device"].map(device_name),
            "Forecast for device": moves["target_device"].map(device_name),
            "Forecasts": moves["pairs"].astype(int),
            "Median error (%)": moves["median_pct"],
            "Most under (%)": moves["lowest_pct"],
            "Most over (%)": moves["highest_pct"],
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


def _listed(values: list[str], unit: str) -> str:
    """'a, b and c unit': a sweep's values in words."""
    head = ", ".join(values[:-1])
    return (f"{head} and {values[-1]} {unit}" if head else f"{values[-1]} {unit}").rstrip()


def design_words(m: fm.Matrix) -> dict[str, str]:
    """What a sweep measured, in words read off its configurations (never typed into a page)."""
    c = m.configurations
    writes, reads = c[c["rw"] == "write"], c[c["rw"] == "read"]
    deep = sorted(int(q) for q in writes["iodepth"].unique() if q > 1)
    per_run = c["writes"] / c["runs"]  # I/Os (writes or reads) per fio run
    return {
        "links": _listed([f"{v:,.0f}" for v in sorted(c["link_mbps"].unique(), reverse=True)], "Mbit/s"),
        "delays": _listed([f"{v:g}" for v in sorted(c["one_way_delay_ms"].unique())], "ms"),
        "write_sizes": _listed(
            [f"{v // BYTES_PER_KIB:,}" for v in sorted(writes["bs_bytes"].unique())], "KiB"
        ),
        "windows": _listed([str(int(v)) for v in sorted(writes["r2t_window"].unique())], ""),
        "read_sizes": _listed([f"{v // BYTES_PER_KIB:,}" for v in sorted(reads["bs_bytes"].unique())], "KiB"),
        "queue_depths": _listed([str(q) for q in deep], "") if deep else "none",
        "ios_per_run": prose.span(per_run.min(), per_run.max()),
    }


def _signed_columns(signed: pd.DataFrame) -> dict[str, pd.Series]:
    """Each method's median signed error from fm.signed_by, under the headers every such table uses."""
    return {
        "Engine: median signed error (%)": signed[fm.ENGINE],
        "Blog formula (%)": signed[fm.BLOG],
        "Blog formula, rescaled on today (%)": signed[fm.BLOG_SCALED],
    }


def segment_misses_table(signed: pd.DataFrame) -> pd.DataFrame:
    """fm.signed_by over link rate and the target's segment size, with human headers."""
    return pd.DataFrame(
        {
            "Link (Mbit/s)": signed["link_mbps"].map(prose.number),
            "Target's segment size (KiB)": (signed["max_recv_data_segment_bytes"] // BYTES_PER_KIB).astype(
                int
            ),
            **_signed_columns(signed),
        }
    )


def apart_table(apart: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """fm.forecasts_apart beside the paired test's verdict, with human headers (rows in the same order)."""
    better = summary.set_index("group")["better_than_scaled"]
    return pd.DataFrame(
        {
            "What differs from today": apart["group"],
            "Configurations forecast": apart["targets"].astype(int),
            "Engine and rescaled formula apart: median (% of the measured mean)": apart["apart_pct"],
            "Measured mean's standard error: median (%)": apart["se_pct"],
            "Engine better than rescaled formula": ["yes" if better[g] else "no" for g in apart["group"]],
        }
    )


def precision_table(rows: list[dict[str, object]]) -> pd.DataFrame:
    """fm.precision of several sweeps, one row each, with human headers."""
    p = pd.DataFrame(rows)
    return pd.DataFrame(
        {
            "Sweep": p["sweep"],
            "Configurations": p["configurations"].astype(int),
            "Runs per configuration": [
                prose.span(a, b) for a, b in zip(p["runs_min"], p["runs_max"], strict=True)
            ],
            "I/Os per run": [
                prose.span(a, b) for a, b in zip(p["ios_per_run_min"], p["ios_per_run_max"], strict=True)
            ],
            "Runs of one configuration: median spread, sd (% of the mean)": p["median_run_sd_pct"],
            "95 % interval of a mean: median half-width (%)": p["median_half_width_pct"],
            "Widest half-width (%)": p["max_half_width_pct"],
        }
    )


def means_table(means: pd.DataFrame) -> pd.DataFrame:
    """fm.measured_means with human headers (the download behind the precision table)."""
    return pd.DataFrame(
        {
            "Direction": means["rw"],
            "Block (KiB)": (means["bs_bytes"] // BYTES_PER_KIB).astype(int),
            "Queue depth": means["iodepth"].astype(int),
            "One-way delay (ms)": means["one_way_delay_ms"],
            "Link (Mbit/s)": means["link_mbps"].map(prose.number),
            "R2T window": means["r2t_window"].astype(int),
            "Parameter set": means["iscsi_parameters"],
            "Runs": means["runs"],
            "I/Os per run": means["ios_per_run"],
            "Measured mean latency (ms)": means["measured_ms"],
            "95 % interval, low (ms)": means["ci_low_ms"],
            "95 % interval, high (ms)": means["ci_high_ms"],
            "Half-width (% of the mean)": means["half_width_pct"],
        }
    )


def window_misses_table(signed: pd.DataFrame) -> pd.DataFrame:
    """fm.signed_by over link rate, delay and the target's R2T window, with human headers."""
    return pd.DataFrame(
        {
            "Link (Mbit/s)": signed["link_mbps"].map(prose.number),
            "One-way delay (ms)": signed["one_way_delay_ms"],
            "Target's R2T window": signed["r2t_window"].astype(int),
            **_signed_columns(signed),
        }
    )
