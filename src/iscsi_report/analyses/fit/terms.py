"""The model's terms for one run: term groups that share a coefficient, checked inputs, the term matrix.

Each run's term values (ms) come from :func:`iscsi_report.core.model.write_latency` at its own
measured inputs; a frame with a missing, negative or invented input is refused.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.core import model
from iscsi_report.core.errors import DesignError
from iscsi_report.core.units import BITS_PER_BYTE, MS_PER_S

# Term groups of model.write_latency that share one coefficient.
TERM_GROUPS: dict[str, tuple[str, ...]] = {
    "one_way_ms": ("command_one_way_ms", "r2t_one_way_ms", "data_one_way_ms", "status_one_way_ms"),
    "transmit_ms": ("unsolicited_transmit_ms", "solicited_transmit_ms"),
    "device_ms": ("device_ms",),
    "cpu_ms": ("cpu_ms",),
}
REGRESSORS: tuple[str, ...] = tuple(TERM_GROUPS)
INTERCEPT = "intercept_ms"
PHYSICAL_COEFFICIENT = 1.0  # the model as written charges every term in full
# Columns a configuration frame must have (measured model inputs), and a runs frame (one row per
# remote fio run) in addition its observed op time; optional iSCSI key columns follow.
INPUT_COLUMNS: tuple[str, ...] = (
    "network",
    "device",
    "bs_bytes",
    "max_outstanding_r2t",
    "one_way_ms",
    "link_bps",
    "device_ms",
    "cpu_ms",
)
RUN_COLUMNS: tuple[str, ...] = ("run", *INPUT_COLUMNS, "op_ms")
ISCSI_COLUMNS: dict[str, object] = {
    "first_burst_bytes": model.DEFAULT_FIRST_BURST_BYTES,
    "max_burst_bytes": model.DEFAULT_MAX_BURST_BYTES,
    "immediate_data": True,
    "initial_r2t": False,
}
CONFIG_KEYS: tuple[str, ...] = ("network", "device", "max_outstanding_r2t", "bs_bytes")


def check_inputs(frame: pd.DataFrame, columns: Sequence[str] = INPUT_COLUMNS) -> None:
    """Refuse a frame missing a column, or with a non-finite or negative input (op time <= 0)."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DesignError(f"frame lacks column(s) {missing}; expected {list(columns)}")
    if frame.empty:
        raise DesignError("frame is empty: nothing to fit or project")
    numeric = [c for c in ("op_ms", "one_way_ms", "link_bps", "device_ms", "cpu_ms") if c in columns]
    values = frame[numeric].to_numpy(float)
    bad = ~np.isfinite(values).all(axis=1) | (values < 0).any(axis=1)
    if "op_ms" in numeric:
        bad |= frame["op_ms"].to_numpy(float) <= 0
    if bad.any():
        label = frame["run"] if "run" in frame.columns else frame.index.to_series()
        raise DesignError(f"row(s) {list(label[bad])} have a missing, negative or zero input")


INVENTED_COLUMN = "invented_inputs"  # per row: comma-separated input columns a reconstruction invented
# Which input columns each term group is computed from (the design's provenance).
REGRESSOR_INPUTS: dict[str, tuple[str, ...]] = {
    "one_way_ms": ("one_way_ms", "link_bps", "bs_bytes", "max_outstanding_r2t"),
    "transmit_ms": ("link_bps", "bs_bytes", "max_outstanding_r2t"),
    "device_ms": ("device_ms",),
    "cpu_ms": ("cpu_ms",),
}


def invented_in(runs: pd.DataFrame) -> dict[str, list[str]]:
    """Input column -> runs whose value of it a reconstruction invented (from ``invented_inputs``)."""
    out: dict[str, list[str]] = {}
    if INVENTED_COLUMN not in runs.columns:
        return out
    labels = runs["run"] if "run" in runs.columns else runs.index.to_series().astype(str)
    for label, cell in zip(labels, runs[INVENTED_COLUMN], strict=True):
        for col in str(cell or "").split(","):
            if col.strip():
                out.setdefault(col.strip(), []).append(str(label))
    return out


def check_published_only(runs: pd.DataFrame) -> None:
    """Refuse (DesignError) rows with an invented input: it would drive every coefficient of the fit."""
    invented = invented_in(runs)
    if invented:
        detail = "; ".join(f"{col} of {len(r)} run(s) ({', '.join(r[:3])}...)" for col, r in invented.items())
        raise DesignError(
            f"invented input(s) would drive the coefficients: {detail}; fix the term at a published "
            "value or pass allow_invented=True for a sensitivity fit that is reported as such"
        )


def check_runs(runs: pd.DataFrame) -> None:
    """Refuse a runs frame missing a column or holding a non-finite or non-positive op time."""
    check_inputs(runs, RUN_COLUMNS)


def iscsi_params(row: Mapping[Hashable, Any]) -> model.IscsiParams:
    """The session keys of one run: its iSCSI columns (RFC defaults where absent)."""
    keys: dict[str, Any] = {}
    for k, default in ISCSI_COLUMNS.items():
        value = row.get(k, default)
        keys[k] = default if value is None or pd.isna(value) else value
    return model.IscsiParams(
        first_burst_bytes=int(keys["first_burst_bytes"]),
        max_burst_bytes=int(keys["max_burst_bytes"]),
        immediate_data=bool(keys["immediate_data"]),
        initial_r2t=bool(keys["initial_r2t"]),
        max_outstanding_r2t=int(row["max_outstanding_r2t"]),
    )


@lru_cache(maxsize=4096)
def unit_counts(
    bs_bytes: int, params: model.IscsiParams, assumptions: model.Assumptions = model.DEFAULT_ASSUMPTIONS
) -> tuple[float, float]:
    """(one-way legs, 64-KiB transmission units) of one write at a 1 ms one-way and 1 ms per 64 KiB.

    Exact for serial and lock-step pacing and for a window that never fills the link; with a
    sliding window the exposed legs depend on the ratio of one-way to transmission time, so
    :func:`term_matrix` evaluates every run at its own inputs instead.
    """
    net = model.Network(one_way_ms=1.0, per_64k_ms=1.0)
    unit = model.write_latency(int(bs_bytes), params, net, 0.0, 0.0, assumptions=assumptions)
    return _legs_units(unit, net)


def _legs_units(b: model.LatencyBreakdown, net: model.Network) -> tuple[float, float]:
    """(one-way legs, 64-KiB units) a breakdown pays on ``net``."""
    terms = b.terms
    one_way = sum(terms[t] for t in TERM_GROUPS["one_way_ms"])
    transmit = sum(terms[t] for t in TERM_GROUPS["transmit_ms"])
    legs = one_way / net.one_way_ms if net.one_way_ms > 0 else b.one_way_trips
    assert net.per_64k_ms is not None  # set by Network.__post_init__
    return float(legs), float(transmit / float(net.per_64k_ms))


def run_legs_units(
    row: Mapping[Hashable, Any], assumptions: model.Assumptions = model.DEFAULT_ASSUMPTIONS
) -> tuple[float, float]:
    """(one-way legs, 64-KiB units) of one run's write at its own measured network inputs."""
    net = model.Network(one_way_ms=float(row["one_way_ms"]), link_bps=float(row["link_bps"]))
    b = model.write_latency(int(row["bs_bytes"]), iscsi_params(row), net, 0.0, 0.0, assumptions=assumptions)
    return _legs_units(b, net)


def term_matrix(
    runs: pd.DataFrame, assumptions: model.Assumptions = model.DEFAULT_ASSUMPTIONS
) -> pd.DataFrame:
    """Per row: the model's term-group values (ms) from its measured inputs, plus ``legs``."""
    check_inputs(runs)
    counts = [run_legs_units(r, assumptions) for r in runs.to_dict("records")]
    legs = np.array([c[0] for c in counts])
    units = np.array([c[1] for c in counts])
    per_64k_ms = model.TRANSMIT_REFERENCE_BYTES * BITS_PER_BYTE / runs["link_bps"].to_numpy(float) * MS_PER_S
    return pd.DataFrame(
        {
            "one_way_ms": legs * runs["one_way_ms"].to_numpy(float),
            "transmit_ms": units * per_64k_ms,
            "device_ms": runs["device_ms"].to_numpy(float),
            "cpu_ms": runs["cpu_ms"].to_numpy(float),
            "legs": legs,
        },
        index=runs.index,
    )
