"""Issue 28: the lab path check (``lab._path_check``) on every lab sweep, kept and compared bit for bit.

``save`` computes the path check of every ``data/raw/lab-iscsi-2026*`` sweep with the code as it
stands and pickles the frames outside the repository; ``check`` computes them again, compares each
exactly (``assert_frame_equal(check_exact=True)`` and the CSV text) and prints the CPU seconds.
Run ``save`` with ``PYTHONPATH`` at the code before a change and ``check`` with the code after it:
    PYTHONPATH=src .venv/bin/python benchmarks/path_check_speed.py save|check [OUT_FILE]
"""

from __future__ import annotations

import pickle
import sys
import time
from pathlib import Path

import pandas as pd
from pandas.testing import assert_frame_equal

from iscsi_report.analyses import lab

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
DEFAULT_OUT = Path("/tmp/iscsi_report_path_check.pkl")  # outside the repository: scratch only


def path_checks() -> tuple[dict[str, pd.DataFrame], float]:
    """Every lab sweep's path check and the CPU seconds they took (the loads not counted)."""
    out, cpu_s = {}, 0.0
    for folder in sorted(RAW.glob("lab-iscsi-2026*")):
        data = lab.load(folder)
        start = time.process_time()
        out[folder.name] = lab._path_check(data)
        cpu_s += time.process_time() - start
    return out, cpu_s


def main(mode: str, out: Path) -> None:
    """``save`` or ``check`` (see the module's docstring)."""
    frames, cpu_s = path_checks()
    print(f"{len(frames)} sweeps' path checks: {cpu_s:.2f} s of CPU")
    if mode == "save":
        out.write_bytes(pickle.dumps(frames))
        return
    kept = pickle.loads(out.read_bytes())
    assert list(kept) == list(frames), "not the same sweeps"
    for name, frame in frames.items():
        assert_frame_equal(kept[name], frame, check_exact=True)
        assert kept[name].to_csv() == frame.to_csv(), name
    print("identical")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in ("save", "check"):
        sys.exit(__doc__)
    main(sys.argv[1], Path(sys.argv[2]) if len(sys.argv) == 3 else DEFAULT_OUT)
