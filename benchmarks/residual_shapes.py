"""Post hoc (issue 21): would another shape of today's host residual break the engine's ties?

PYTHONPATH=src .venv/bin/python benchmarks/residual_shapes.py [--sweeps S ...] [--out CSV]

The engine (version 2) charges a target today's host residual fitted as a + b x bytes over today's
block sizes. On the fourth blind sweep its block-size and segment groups tie with the rescaled
formula. This script runs each sweep's forecast matrix again with the residual swapped for
another shape, every other part of the engine unchanged:

- ``v2``: the engine as declared (a + b x bytes);
- ``edge``: the line inside today's sizes; outside them, the nearest edge's residual scaled in
  proportion to the target's bytes (no extrapolated intercept);
- ``per-byte``: b x bytes through the origin (host time proportional to the bytes moved);
- ``constant``: today's mean residual at every size.

Not a forecast method of the project: the swap is made by replacing ``forecast.host_residual``
for the length of one matrix, and nothing here is declared or frozen. Prints each group's median
absolute error per shape and the paired difference against the rescaled formula.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
from lab_sweeps import MATRIX_SWEEPS, RAW

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab
from iscsi_report.core import forecast

DECLARED = forecast.host_residual.__wrapped__  # the engine's own fit, uncached


@dataclass(frozen=True)
class EdgeResidual(forecast.Residual):
    """The declared line inside today's sizes; beyond them the edge's residual per byte."""

    low_bytes: int = 0
    high_bytes: int = 0

    def at(self, bs_bytes: int) -> tuple[float, float]:
        """The line's value inside [low, high]; outside, the nearest edge's, scaled by bytes."""
        if self.low_bytes <= bs_bytes <= self.high_bytes:
            return forecast.Residual.at(self, bs_bytes)
        edge = self.low_bytes if bs_bytes < self.low_bytes else self.high_bytes
        value, se = forecast.Residual.at(self, edge)
        return value * bs_bytes / edge, se * bs_bytes / edge


def _points(today: forecast.Today) -> tuple[np.ndarray, np.ndarray, float]:
    """Today's block sizes, residuals (measured less modelled) and mean measurement variance."""
    bs = np.array([m.bs_bytes for m in today.measured], dtype=float)
    modelled = [forecast._loaded_ms(today, replace(today.configuration, bs_bytes=int(b))) for b in bs]
    r = np.array([m.op_ms.value for m in today.measured]) - np.array(modelled)
    return bs, r, float(np.mean([m.op_ms.se**2 for m in today.measured]))


def _edge(today: forecast.Today) -> forecast.Residual:
    """See :class:`EdgeResidual`."""
    fit = DECLARED(today)
    if fit.sizes < 2:
        return fit
    sizes = [m.bs_bytes for m in today.measured]
    return EdgeResidual(fit.a_ms, fit.b_ms_per_byte, fit.cov, fit.sizes, min(sizes), max(sizes))


def _per_byte(today: forecast.Today) -> forecast.Residual:
    """Least squares through the origin: r = b x bytes."""
    fit = DECLARED(today)
    if fit.sizes < 2:
        return fit
    bs, r, var = _points(today)
    ss = float(bs @ bs)
    return forecast.Residual(0.0, float(bs @ r) / ss, ((0.0, 0.0), (0.0, var / ss)), fit.sizes)


def _constant(today: forecast.Today) -> forecast.Residual:
    """Today's mean residual at every block size."""
    fit = DECLARED(today)
    if fit.sizes < 2:
        return fit
    _, r, var = _points(today)
    return forecast.Residual(float(r.mean()), 0.0, ((var / len(r), 0.0), (0.0, 0.0)), fit.sizes)


SHAPES: dict[str, Callable[[forecast.Today], forecast.Residual]] = {
    "v2": DECLARED,
    "edge": _edge,
    "per-byte": _per_byte,
    "constant": _constant,
}


@contextlib.contextmanager
def residual_shape(fit: Callable[[forecast.Today], forecast.Residual]) -> Iterator[None]:
    """The engine with ``fit`` in place of its declared residual, for the block's length only."""
    declared = forecast.host_residual
    forecast.host_residual = functools.lru_cache(maxsize=4096)(fit)  # type: ignore[assignment]
    try:
        yield
    finally:
        forecast.host_residual = declared


def shape_table(sweep: str) -> pd.DataFrame:
    """Each group's median errors and the engine-minus-rescaled difference, per residual shape."""
    data = lab.load(RAW / sweep)
    rows = []
    for name, fit in SHAPES.items():
        with residual_shape(fit):
            s = fm.summary(fm.run(data, sweep))
        for _, r in s.iterrows():
            rows.append(
                {
                    "sweep": sweep,
                    "shape": name,
                    "group": r["group"],
                    "targets": int(r["targets"]),
                    "engine %": r[fm.ENGINE],
                    "rescaled %": r[fm.BLOG_SCALED],
                    "engine - rescaled": f"{r['diff_vs_scaled']:+.2f} "
                    f"[{r['diff_vs_scaled_low']:+.2f}, {r['diff_vs_scaled_high']:+.2f}]",
                    "better": bool(r["better_than_scaled"]),
                }
            )
    return pd.DataFrame(rows)


def main() -> None:
    """Print (and optionally write) the shapes' table over the sweeps."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweeps", nargs="*", default=MATRIX_SWEEPS)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    table = pd.concat([shape_table(s) for s in args.sweeps], ignore_index=True)
    with pd.option_context("display.width", 200, "display.max_rows", 1000):
        print(
            table.sort_values(["sweep", "group", "shape"]).to_string(
                index=False, float_format="{:.2f}".format
            )
        )
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
