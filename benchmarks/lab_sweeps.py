"""The committed lab sweeps the forecast benchmarks read, named once (imported by the scripts beside it)."""

from __future__ import annotations

from pathlib import Path

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
# Sweeps whose forecast matrix the engine is scored on: training, the quiet confirmations, blind 2 to 7.
MATRIX_SWEEPS = [
    "lab-iscsi-2026",
    "lab-iscsi-2026-confirm2",
    "lab-iscsi-2026-confirm3",
    "lab-iscsi-2026-blind2",
    "lab-iscsi-2026-blind3",
    "lab-iscsi-2026-blind4",
    "lab-iscsi-2026-blind5",
    "lab-iscsi-2026-blind6",
    "lab-iscsi-2026-blind7",
]
# Every sweep the Forecasts chapter scores, in its order (the loaded confirmation, the first blind
# sweep and the device sweep too).
SCORED_SWEEPS = [
    *MATRIX_SWEEPS[:3],
    "lab-iscsi-2026-confirm",
    "lab-iscsi-2026-blind",
    "lab-iscsi-2026-device",
    *MATRIX_SWEEPS[3:],
]
