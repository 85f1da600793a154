"""Per-notebook overhead, and N notebook runs on the local pool vs a two-worker Dask cluster on loopback.

Usage: nice -n 19 .venv/bin/python benchmarks/dask_batch.py [--runs 40] [--workers 2] [--rounds 1]
       [--batch-only] [--out FILE.json]

1. Where a notebook's seconds go: Python start, kernel start (to kernel_info), the imports a chapter
   makes (pandas, altair, statsmodels, the analyses package), one small chart rendered to SVG, and a
   papermill run of a notebook that only holds its parameters (papermill's own I/O and kernel).
2. ``--runs`` one-table notebooks through ``iscsi-report run``: locally with ``--jobs W`` and through
   ``--scheduler`` on W single-thread ``dask worker`` processes (127.0.0.1 only, stopped by PID).
3. A paper estimate of a fleet (1,000 hosts x 3 chapters) on N workers from the measured cost.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import jupytext
import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
DASK = Path(PY).with_name("dask")
LAB = "lab-veth-2026"
CHAPTER = (
    "import pandas as pd\nfrom iscsi_report.analyses import report\n"
    "ctx = report.start(run_name, dataset, project_root, results_dir or None)\n"
    "ctx.table(pd.DataFrame({'run': [run_name], 'x_ms': [len(run_name) * 1.25]}), 'bench_table')"
)
IMPORTS = "import pandas, altair, statsmodels.api, iscsi_report.analyses.report"
CHART = (
    "import time, altair as alt, pandas as pd, vl_convert as vlc\n"
    "c = alt.Chart(pd.DataFrame({'x': range(50), 'y': range(50)})).mark_line().encode(x='x', y='y')\n"
    "t = time.perf_counter(); vlc.vegalite_to_svg(c.to_dict()); print(time.perf_counter() - t)"
)
KERNEL = (
    "import time\nfrom jupyter_client.manager import start_new_kernel\n"
    "t = time.perf_counter(); km, kc = start_new_kernel(kernel_name='python3')\n"
    "print(time.perf_counter() - t); kc.stop_channels(); km.shutdown_kernel(now=True)"
)
FLEET_HOSTS, FLEET_CHAPTERS = 1000, 3


def _seconds(cmd: list[str]) -> float:
    """Wall-clock seconds of one command, which must succeed (else its output is shown)."""
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return time.perf_counter() - t


def _private_package(tmp: Path) -> None:
    """Every process started from here imports a copy of src/: edits to the tree don't reach the runs."""
    shutil.copytree(ROOT / "src", tmp / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    os.environ["PYTHONPATH"] = str(tmp / "src")


def _best(n: int, fn: Callable[[], float]) -> float:
    """The lowest of ``n`` measurements: the floor, without other processes' noise."""
    return min(fn() for _ in range(n))


def _notebook(path: Path, code: str | None) -> None:
    """A chapter notebook with the runner's parameters cell and, if given, one code cell."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('run_name = ""\ndataset = ""\nproject_root = ""\nresults_dir = ""')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# bench"), params]
    if code:
        nb.cells.append(nbformat.v4.new_code_cell(code))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    jupytext.write(nb, path, fmt="md:myst")


def _project(dest: Path, runs: int, code: str | None) -> Path:
    """``runs`` params files over the lab dataset, each executing one ``bench`` notebook."""
    (dest / "notebooks").mkdir(parents=True)
    (dest / "params").mkdir()
    shutil.copytree(ROOT / "data" / "raw" / LAB, dest / "data" / "raw" / LAB)
    _notebook(dest / "notebooks" / "bench.md", code)
    for i in range(runs):
        doc = {"title": f"bench {i}", "dataset": LAB, "timeout_s": 300, "notebooks": ["bench"]}
        (dest / "params" / f"b{i:03d}.yaml").write_text(yaml.safe_dump(doc))
    return dest


def _run(project: Path, *args: str) -> float:
    """Seconds of ``iscsi-report --root project run --force ARGS`` (which must succeed)."""
    return _seconds([PY, "-m", "iscsi_report.cli", "--root", str(project), "run", "--force", *args])


def overhead(tmp: Path) -> dict[str, float]:
    """The floor of each per-notebook cost (best of 3), in seconds."""
    empty = _project(tmp / "empty", 1, None)
    one = _project(tmp / "one", 1, CHAPTER)
    python = _best(3, lambda: _seconds([PY, "-c", "pass"]))
    return {
        "python_start_s": python,
        "kernel_start_s": _best(
            3,
            lambda: float(subprocess.check_output([PY, "-c", KERNEL], text=True, stderr=subprocess.DEVNULL)),
        ),
        "chapter_imports_s": _best(3, lambda: _seconds([PY, "-c", IMPORTS])) - python,
        "chart_svg_s": _best(3, lambda: float(subprocess.check_output([PY, "-c", CHART], text=True))),
        "runner_empty_notebook_s": _best(3, lambda: _run(empty, "--jobs", "1")),
        "runner_one_table_notebook_s": _best(3, lambda: _run(one, "--jobs", "1")),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_workers(address: str, n: int) -> None:
    from distributed import Client

    with Client(address, timeout="30s") as client:
        client.wait_for_workers(n, timeout=60)


def batch(tmp: Path, runs: int, workers: int, rounds: int = 1) -> dict[str, float]:
    """Seconds for ``runs`` notebooks: local pool of ``workers`` vs ``workers`` Dask workers.

    With ``rounds`` > 1 the two alternate (local, Dask, local, ...) so that a change in the
    machine's background load falls on both; the totals over all rounds are compared.
    """
    project = _project(tmp / "batch", runs, CHAPTER)
    local_s = dask_s = 0.0
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = []
    try:
        scheduler = [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]
        procs.append(subprocess.Popen(scheduler, stderr=subprocess.DEVNULL, start_new_session=True))
        for i in range(workers):
            worker = [str(DASK), "worker", address, "--host", "127.0.0.1", "--no-nanny", "--nthreads", "1"]
            worker += ["--no-dashboard", "--local-directory", str(tmp / f"w{i}")]
            procs.append(subprocess.Popen(worker, stderr=subprocess.DEVNULL, start_new_session=True))
        _wait_for_workers(address, workers)
        for _ in range(rounds):
            local_s += _run(project, "--jobs", str(workers))
            dask_s += _run(project, "--scheduler", address)
    finally:
        for proc in reversed(procs):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return {
        "runs": runs * rounds,
        "workers": workers,
        "local_s": local_s,
        "dask_s": dask_s,
        "ratio": dask_s / local_s,
    }


def fleet(per_notebook_s: float) -> list[dict[str, float]]:
    """Hours for 1,000 hosts x 3 chapters on N single-thread workers at the measured per-notebook cost."""
    total_s = FLEET_HOSTS * FLEET_CHAPTERS * per_notebook_s
    return [{"workers": n, "hours": total_s / n / 3600} for n in (1, 2, 8, 32, 128)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1, help="alternate local and Dask this many times")
    parser.add_argument("--batch-only", action="store_true", help="skip the per-notebook overhead part")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dask-batch-") as tmp:
        _private_package(Path(tmp))
        costs = {} if args.batch_only else overhead(Path(tmp))
        print(json.dumps(costs, indent=1), flush=True)
        result = batch(Path(tmp), args.runs, args.workers, args.rounds)
        print(json.dumps(result, indent=1), flush=True)
    per_notebook_s = result["dask_s"] * args.workers / result["runs"]  # worker-seconds per notebook
    plan = fleet(per_notebook_s)
    print(f"fleet {FLEET_HOSTS} hosts x {FLEET_CHAPTERS} chapters at {per_notebook_s:.2f} worker-s/notebook:")
    for row in plan:
        print(f"  {row['workers']:4d} workers: {row['hours']:.2f} h")
    if args.out:
        doc = {"overhead": costs, "batch": result, "per_notebook_s": per_notebook_s, "fleet": plan}
        args.out.write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
