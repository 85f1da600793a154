"""Why the blind sweeps' replicates scatter: the delay line or the day (issue 21, item 4).

PYTHONPATH=src .venv/bin/python benchmarks/line_scatter.py FOLDER

FOLDER holds the four sweeps declared in ``data/preregistered/delay-line-scatter/README.md``
(``compiled1``, ``python1``, ``python2``, ``compiled2``, each a dataset written by ``lab run``) and,
beside each, ``<sweep>.stat``: the first line of ``/proc/stat`` sampled every second while it ran,
each line prefixed with the Unix time. Prints the three readings declared there, each held or not.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from lab_sweeps import RAW
from scipy import stats

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab

SWEEPS = {"compiled1": "compiled", "python1": "python", "python2": "python", "compiled2": "compiled"}
REFERENCE_SWEEP = "lab-iscsi-2026-blind6"  # the compiled line's noisiest sweep, 4.4 % median scatter
FAST_POINT = (0.7, 1400.0)  # (one-way delay ms, link Mbit/s) of design 8's fast, short point
N_RESAMPLES = 10_000
CI_LEVEL = 0.95
# /proc/stat's first line after "cpu": user nice system idle iowait irq softirq steal (USER_HZ ticks)
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def scatter(folder: Path) -> pd.DataFrame:
    """Per configuration: the replicates' standard deviation of the mean latency, in % of their mean."""
    c = fm.configurations(lab.load(folder))
    return c.assign(scatter_pct=100 * c["sd_ms"] / c["measured_ms"]).set_index("key")[
        ["one_way_delay_ms", "link_mbps", "runs", "scatter_pct"]
    ]


def host_state(stat_file: Path) -> dict[str, float]:
    """Share of the two cores' time spent idle and stolen by the hypervisor while a sweep ran (%)."""
    rows = [line.split() for line in stat_file.read_text().splitlines() if line.strip()]
    ticks = np.array([[float(v) for v in r[2 : 2 + len(STAT_FIELDS)]] for r in rows])
    used = ticks[-1] - ticks[0]
    total = used.sum()
    share = dict(zip(STAT_FIELDS, 100 * used / total, strict=True))
    return {
        "idle_pct": share["idle"],
        "steal_pct": share["steal"],
        "seconds": float(rows[-1][0]) - float(rows[0][0]),
    }


def line_difference(per_sweep: dict[str, pd.DataFrame]) -> dict[str, float]:
    """Reading 1: median over configurations of compiled less Python scatter, with its paired interval."""
    by_line = {
        line: pd.concat([per_sweep[s]["scatter_pct"] for s, ln in SWEEPS.items() if ln == line], axis=1).mean(
            axis=1
        )
        for line in ("compiled", "python")
    }
    diff = (by_line["compiled"] - by_line["python"]).dropna().to_numpy()
    ci = stats.bootstrap(
        (diff,),
        np.median,
        n_resamples=N_RESAMPLES,
        confidence_level=CI_LEVEL,
        method="percentile",
        random_state=0,
    ).confidence_interval
    return {
        "configurations": len(diff),
        "median": float(np.median(diff)),
        "lo": float(ci.low),
        "hi": float(ci.high),
    }


def point_medians(per_sweep: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Median scatter per network point (rows) and sweep (columns)."""
    cols = {
        s: f.groupby(["one_way_delay_ms", "link_mbps"])["scatter_pct"].median() for s, f in per_sweep.items()
    }
    return pd.DataFrame(cols)


def line_point_medians(per_sweep: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Median per network point of each line's scatter (a configuration's mean over the line's sweeps)."""
    out = {}
    for line in ("compiled", "python"):
        frames = [per_sweep[s] for s, ln in SWEEPS.items() if ln == line]
        mean = pd.concat([f["scatter_pct"] for f in frames], axis=1).mean(axis=1)
        points = frames[0][["one_way_delay_ms", "link_mbps"]].assign(scatter_pct=mean)
        out[line] = points.groupby(["one_way_delay_ms", "link_mbps"])["scatter_pct"].median()
    return pd.DataFrame(out)


def main(folder: Path) -> None:
    """Score the three declared readings on the four sweeps in ``folder``."""
    per_sweep = {s: scatter(folder / s) for s in SWEEPS}
    reference = float(scatter(RAW / REFERENCE_SWEEP)["scatter_pct"].median())
    print("sweep       line      median scatter %   idle %   steal %   seconds")
    for s, line in SWEEPS.items():
        h = host_state(folder / f"{s}.stat")
        med = per_sweep[s]["scatter_pct"].median()
        host = f"{h['idle_pct']:>8.1f} {h['steal_pct']:>9.2f} {h['seconds']:>9.0f}"
        print(f"{s:<11} {line:<9} {med:>16.2f} {host}")
    print(f"{REFERENCE_SWEEP}: median scatter {reference:.2f} %")
    d = line_difference(per_sweep)
    verdict = (
        "compiled scatters more" if d["lo"] > 0 else "Python scatters more" if d["hi"] < 0 else "not resolved"
    )
    print(
        f"1. the line: compiled - Python, median over {d['configurations']} configurations "
        f"{d['median']:+.2f} points [{d['lo']:+.2f}, {d['hi']:+.2f}]: {verdict}"
    )
    today = float(np.median([per_sweep[s]["scatter_pct"].median() for s in ("compiled1", "compiled2")]))
    held = today < reference / 2
    said = "held" if held else "not held"
    print(f"2. the day: compiled today {today:.2f} % against half of {reference:.2f} %: {said}")
    points = point_medians(per_sweep)
    print(points.round(2).to_string())
    lines = line_point_medians(per_sweep)
    print(lines.round(2).to_string())
    fast_worst = all(lines[line].idxmax() == FAST_POINT for line in lines)
    print(f"3. the fast point stays the worst on each line: {'held' if fast_worst else 'not held'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
