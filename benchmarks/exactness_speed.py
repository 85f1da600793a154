"""Issue 28: the lab chapters' hot paths sped up without changing a single bit of their results.

``save`` computes, with the code as it stands, the forecast matrices the Forecasts chapter builds
(``fm.run`` on the judged confirmation sweep, the second blind sweep and the device sweep, each at
the current engine version and at version 1 where the chapter asks for it; the verdict over the
training and confirmation sweeps; the blind sweeps' frozen forecasts scored) and the reads
diagnosis table, and pickles them outside the repository. ``check`` computes them again and
compares every frame exactly (``check_exact=True``), so a speed-up that moves any float fails.

Run from the project root, ``save`` before the change and ``check`` after it (or ``save`` with
``PYTHONPATH`` at an unpacked copy of the code before the change):
    PYTHONPATH=src .venv/bin/python benchmarks/exactness_speed.py save|check [OUT_DIR]
"""

from __future__ import annotations

import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from pandas.testing import assert_frame_equal

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab, read_time
from iscsi_report.core.measurements import open_dataset

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
PREREGISTERED = ROOT / "data" / "preregistered"
TRAINING = "lab-iscsi-2026"  # the chapter's training sweep, then the sweeps it judges
JUDGED = ("lab-iscsi-2026-confirm3", "lab-iscsi-2026-confirm2", "lab-iscsi-2026-confirm")
FROZEN = ("lab-iscsi-2026-blind", "lab-iscsi-2026-blind2")  # sweeps whose frozen forecasts are scored
DEFAULT_OUT = Path("/tmp/iscsi_report_exactness_speed")  # outside the repository: scratch only
MATRIX_SWEEPS = ("lab-iscsi-2026-confirm3", "lab-iscsi-2026-blind2", "lab-iscsi-2026-device")
DECLARED_V1 = ("lab-iscsi-2026-blind2", "lab-iscsi-2026-device")  # the chapter also runs these at version 1
ENGINE_V1 = 1  # the engine version pre-registered for the device sweep (notebooks/lab_forecast.md)
READS_SWEEPS = ("lab-iscsi-2026-reads", "lab-iscsi-2026-reads2", "lab-iscsi-2026-reads3")
READ_SIZES_KIB = (2048, 3328, 4096)  # the sizes the chapter's reads table shows


def _matrix_frames(sweep: str, engine_version: int) -> dict[str, pd.DataFrame]:
    """Both frames of one sweep's forecast matrix at one engine version."""
    m = fm.run(lab.load(RAW / sweep), sweep, engine_version=engine_version)
    tag = f"{sweep}@v{engine_version}"
    return {f"{tag}/configurations": m.configurations, f"{tag}/pairs": m.pairs}


def _verdict_frames() -> dict[str, pd.DataFrame]:
    """The verdict's matrices, summaries, declared error and coverage, as the chapter builds them."""
    v = fm.verdict({s: lab.load(RAW / s) for s in (TRAINING, *JUDGED)}, TRAINING)
    out = {f"verdict/{s}/pairs": m.pairs for s, m in v.matrices.items()}
    out.update({f"verdict/{s}/summary": frame for s, frame in v.summaries.items()})
    error = v.model_error
    out["verdict/model_error"] = pd.DataFrame({"value": [error.value], "se": [error.se]})
    out["verdict/coverage_pct"] = pd.DataFrame(
        {"sweep": list(v.coverage_pct), "pct": list(v.coverage_pct.values())}
    )
    return out


def _frozen_frames(sweep: str) -> dict[str, pd.DataFrame]:
    """A blind sweep's frozen forecasts scored against what it measured."""
    m = fm.score_frozen(fm.load_frozen(PREREGISTERED / sweep), lab.load(RAW / sweep), sweep)
    return {f"frozen/{sweep}/pairs": m.pairs, f"frozen/{sweep}/summary": fm.summary(m)}


def frames() -> dict[str, pd.DataFrame]:
    """Every frame the check compares, by name, each timed on stderr."""
    jobs: list[tuple[str, Callable[[], dict[str, pd.DataFrame]]]] = []
    for sweep in MATRIX_SWEEPS:
        jobs.append((sweep, lambda s=sweep: _matrix_frames(s, fm.ENGINE_VERSION)))  # type: ignore[misc]
    for sweep in DECLARED_V1:
        jobs.append((f"{sweep}@v1", lambda s=sweep: _matrix_frames(s, ENGINE_V1)))  # type: ignore[misc]
    jobs.append(("verdict", _verdict_frames))
    for sweep in FROZEN:
        jobs.append((f"frozen {sweep}", lambda s=sweep: _frozen_frames(s)))  # type: ignore[misc]
    jobs.append(
        (
            "reads",
            lambda: {"reads": read_time.table([open_dataset(RAW / s) for s in READS_SWEEPS], READ_SIZES_KIB)},
        )
    )
    out: dict[str, pd.DataFrame] = {}
    for name, job in jobs:
        start_s = time.perf_counter()
        out.update(job())
        print(f"{name}: {time.perf_counter() - start_s:.2f} s", file=sys.stderr)
    return out


def main(argv: list[str]) -> int:
    """Save the frames, or check them against the saved ones."""
    mode = argv[0] if argv else ""
    out_dir = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    path = out_dir / "frames.pkl"
    if mode == "save":
        out_dir.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(frames()))
        print(f"saved to {path}")
        return 0
    if mode == "check":
        saved: dict[str, pd.DataFrame] = pickle.loads(path.read_bytes())
        now = frames()
        assert saved.keys() == now.keys(), (sorted(saved), sorted(now))
        for name, frame in saved.items():
            assert_frame_equal(now[name], frame, check_exact=True)
            print(f"identical: {name} {frame.shape}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
