"""The engine's declared versions side by side on the committed lab sweeps (issue 21).

PYTHONPATH=src .venv/bin/python benchmarks/engine_versions.py [--versions 2 3] [SWEEP ...]

For each sweep, the forecast matrix (``analyses.forecast_matrix.run``) by each version: every
group's median error of the engine beside both baselines, and the engine-minus-rescaled difference
with its 95 % paired bootstrap interval; then each later version less the first, paired over
targets (``forecast_matrix.versions_compared``). A version chosen after looking at a sweep is post hoc on
it; only a sweep declared for a version judges it.
"""

from __future__ import annotations

import argparse

from lab_sweeps import MATRIX_SWEEPS, RAW

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab


def main() -> None:
    """Print one line per sweep, version and group."""
    ap = argparse.ArgumentParser()
    ap.add_argument("sweeps", nargs="*", default=MATRIX_SWEEPS)
    ap.add_argument("--versions", nargs="*", type=int, default=[2, 3])
    args = ap.parse_args()
    for name in args.sweeps:
        data = lab.load(RAW / name)
        matrices = {version: fm.run(data, name, engine_version=version) for version in args.versions}
        for version, m in matrices.items():
            for _, r in fm.summary(m).iterrows():
                low, high = r["diff_vs_scaled_low"], r["diff_vs_scaled_high"]
                diff = f"{r['diff_vs_scaled']:+.2f} [{low:+.2f}, {high:+.2f}]"
                print(
                    f"{name:24} v{version} {r['group']:28} {int(r['targets']):4d}  engine {r[fm.ENGINE]:6.2f}"
                    f"  blog {r[fm.BLOG]:6.2f}  rescaled {r[fm.BLOG_SCALED]:6.2f}  engine - rescaled {diff}"
                )
        first, *later = args.versions
        for version in later:
            c = fm.versions_compared(matrices[version], matrices[first])
            verdict = "better" if c["better"] else "not shown better"
            print(
                f"{name:24} v{version} - v{first} over {c['targets']} targets: {c['diff']:+.2f} "
                f"[{c['low']:+.2f}, {c['high']:+.2f}] points, {verdict}"
            )


if __name__ == "__main__":
    main()
