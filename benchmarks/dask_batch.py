"""Per-notebook overhead, and N notebook runs on the local pool vs a two-worker Dask cluster on loopback.

Usage: nice -n 5 .venv/bin/python benchmarks/dask_batch.py [--runs 40] [--workers 2] [--rounds 3]
       [--batch-only | --overhead-only] [--baseline REV] [--dask-defaults] [--cold] [--out FILE.json]

1. Where a notebook's seconds go (best of 3 each): Python start, kernel start to kernel_info (the
   stock ipykernel launcher, and the runner's without debugpy), papermill's own import (stock, and
   without pyarrow as the runner starts it), each import a chapter makes (pandas, altair,
   statsmodels, the analyses package), one small chart rendered to SVG, and the runner end to end on
   a notebook holding only its parameters and on a one-table notebook. With ``--baseline REV`` the
   runner is also timed with the package as of REV (before/after the start-up cut: the whole
   package, since the runner's one module of then is several now), the two interleaved.
2. ``--runs`` one-table notebooks through ``iscsi-report run``, ``--rounds`` times each way,
   interleaved (local, Dask, local, Dask, ...): locally with ``--jobs W`` and through ``--scheduler``
   on W single-thread ``dask worker`` processes (127.0.0.1 only, stopped by PID). Per run: wall
   seconds, CPU seconds of the process trees (the runner and what it waited for; for Dask also the
   scheduler and the workers with the papermill processes they waited for), the load average before
   and after. Medians, min and max are reported; the ratio is of the medians.
3. A paper estimate of a fleet (1,000 hosts x 3 chapters) on N workers from the measured cost.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import jupytext
import nbformat
import psutil
import yaml

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
DASK = Path(PY).with_name("dask")
LAB = "lab-veth-2026"
CHAPTER = (
    "import pandas as pd\nfrom iscsi_report.presentation import report\n"
    "ctx = report.start(run_name, dataset, project_root, results_dir or None)\n"
    "ctx.table(pd.DataFrame({'run': [run_name], 'x_ms': [len(run_name) * 1.25]}), 'bench_table')"
)
IMPORTS = {
    "pandas": "import pandas",
    "altair": "import altair",
    "statsmodels": "import statsmodels.api",
    "analyses_report": "import iscsi_report.presentation.report",
    "all_four": "import pandas, altair, statsmodels.api, iscsi_report.presentation.report",
}
PAPERMILL_STOCK = "import papermill.__main__"
PAPERMILL_RUNNER = "import sys; sys.modules['pyarrow'] = None; import papermill.cli"
CHART = (
    "import time, altair as alt, pandas as pd, vl_convert as vlc\n"
    "c = alt.Chart(pd.DataFrame({'x': range(50), 'y': range(50)})).mark_line().encode(x='x', y='y')\n"
    "t = time.perf_counter(); vlc.vegalite_to_svg(c.to_dict()); print(time.perf_counter() - t)"
)
KERNEL = (
    "import os, sys, tempfile, time\nfrom pathlib import Path\n"
    "from iscsi_report.pipeline import execute\n"
    "os.environ.update(execute.kernel_env(Path(tempfile.mkdtemp()) / 'jupyter'))\n"
    "from jupyter_client.manager import start_new_kernel\n"
    "t = time.perf_counter(); km, kc = start_new_kernel(kernel_name=sys.argv[1])\n"
    "print(time.perf_counter() - t); kc.stop_channels(); km.shutdown_kernel(now=True)"
)
FLEET_HOSTS, FLEET_CHAPTERS = 1000, 3
# Dask's own background work on each process, off for a batch of papermill runs: the statistical
# profiler (a stack sample every 10 ms), the GIL monitor and the 20 ms event-loop tick. Measured idle:
# a default worker 0.031 CPU-s per s, a tuned one 0.007; the scheduler 0.017 vs 0.004.
DASK_BATCH_ENV = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__GIL__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
}
LAB_CHAPTER_IMPORTS = "import iscsi_report.analyses.lab, iscsi_report.presentation.charts.lab"


LAST_STDOUT: list[str] = [""]  # the output of the last command _seconds ran


def _seconds(cmd: list[str]) -> float:
    """Wall-clock seconds of one command, which must succeed (else its output is shown)."""
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    LAST_STDOUT[0] = proc.stdout
    return time.perf_counter() - t


def _job_seconds(summary: str) -> list[float]:
    """Each notebook's own seconds (staging to result) from the runner's summary table."""
    return [float(m) for m in re.findall(r"^\S+\s+bench\s+([0-9.]+)\s+ok$", summary, flags=re.M)]


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


def _run(project: Path, *args: str, pythonpath: str | None = None) -> float:
    """Seconds of ``iscsi-report --root project run --force ARGS`` (which must succeed)."""
    cmd = [PY, "-m", "iscsi_report.cli", "--root", str(project), "run", "--force", *args]
    if pythonpath is None:
        return _seconds(cmd)
    saved = os.environ["PYTHONPATH"]
    os.environ["PYTHONPATH"] = pythonpath
    try:
        return _seconds(cmd)
    finally:
        os.environ["PYTHONPATH"] = saved


def _printed(code: str, *args: str) -> float:
    """The number a Python snippet prints (its own timing of the part it measures)."""
    out = subprocess.check_output([PY, "-c", code, *args], text=True, stderr=subprocess.DEVNULL)
    return float(out.strip().splitlines()[-1])


def _baseline_package(tmp: Path, rev: str) -> Path:
    """The package as of git revision ``rev`` (the per-notebook start-up cut: kernel without debugpy,
    papermill without pyarrow, statsmodels only where the lab fits, came in one revision)."""
    dest = tmp / "baseline"
    dest.mkdir()
    archive = subprocess.check_output(["git", "-C", str(ROOT), "archive", rev, "src/iscsi_report"])
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest / "src"


def _import_s(code: str, pythonpath: str) -> float:
    """Seconds to run ``python -c code`` importing from ``pythonpath``."""
    return _seconds(["env", f"PYTHONPATH={pythonpath}", PY, "-c", code])


def overhead(tmp: Path, baseline: str | None = None) -> dict[str, float]:
    """The floor of each per-notebook cost (best of 3), in seconds."""
    empty = _project(tmp / "empty", 1, None)
    one = _project(tmp / "one", 1, CHAPTER)
    python = _best(3, lambda: _seconds([PY, "-c", "pass"]))
    out = {
        "python_start_s": python,
        "kernel_start_stock_s": _best(3, lambda: _printed(KERNEL, "python3")),
        "kernel_start_runner_s": _best(3, lambda: _printed(KERNEL, "iscsi-report")),
        "papermill_import_stock_s": _best(3, lambda: _seconds([PY, "-c", PAPERMILL_STOCK])) - python,
        "papermill_import_runner_s": _best(3, lambda: _seconds([PY, "-c", PAPERMILL_RUNNER])) - python,
        **{
            f"import_{name}_s": _best(3, lambda code=code: _seconds([PY, "-c", code])) - python
            for name, code in IMPORTS.items()
        },
        "chart_svg_s": _best(3, lambda: _printed(CHART)),
        "runner_empty_notebook_s": _best(3, lambda: _run(empty, "--jobs", "1")),
        "runner_one_table_notebook_s": _best(3, lambda: _run(one, "--jobs", "1")),
    }
    if baseline:
        old = str(_baseline_package(tmp, baseline))
        new = os.environ["PYTHONPATH"]
        before, after, lab_before, lab_after = [], [], [], []
        for _ in range(5):  # interleaved: background load falls on both
            before.append(_run(one, "--jobs", "1", pythonpath=old))
            after.append(_run(one, "--jobs", "1", pythonpath=new))
            lab_before.append(_import_s(LAB_CHAPTER_IMPORTS, old))
            lab_after.append(_import_s(LAB_CHAPTER_IMPORTS, new))
        out.update(
            {
                "one_table_before_median_s": statistics.median(before),
                "one_table_after_median_s": statistics.median(after),
                "one_table_before_min_s": min(before),
                "one_table_after_min_s": min(after),
                "lab_chapter_imports_before_median_s": statistics.median(lab_before),
                "lab_chapter_imports_after_median_s": statistics.median(lab_after),
            }
        )
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_workers(address: str, n: int) -> None:
    from distributed import Client

    with Client(address, timeout="30s") as client:
        client.wait_for_workers(n, timeout=60)


def _tree_cpu_s(pids: list[int]) -> float:
    """CPU seconds of running processes and of the children they have waited for."""
    total = 0.0
    for pid in pids:
        t = psutil.Process(pid).cpu_times()
        total += t.user + t.system + t.children_user + t.children_system
    return total


def _measured(project: Path, args: list[str], long_lived: list[int]) -> dict[str, float]:
    """One batch: wall s, CPU s of the runner's tree plus ``long_lived`` processes, load before/after."""
    load_before = os.getloadavg()[0]
    cpu_before = _tree_cpu_s(long_lived)
    own = psutil.Process().cpu_times()
    wall = _run(project, *args)
    own_after = psutil.Process().cpu_times()
    children = own_after.children_user + own_after.children_system - own.children_user - own.children_system
    cpu = children + _tree_cpu_s(long_lived) - cpu_before
    jobs = _job_seconds(LAST_STDOUT[0])
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "job_s_median": statistics.median(jobs) if jobs else math.nan,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }


def _stats(runs: list[dict[str, float]], key: str) -> dict[str, float]:
    values = [r[key] for r in runs]
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def batch(
    tmp: Path, runs: int, workers: int, rounds: int = 1, tuned: bool = True, extra: tuple[str, ...] = ()
) -> dict[str, object]:
    """``runs`` notebooks: a local pool of ``workers`` vs ``workers`` Dask workers, ``rounds`` times each.

    The order alternates local, Dask, local, ... so that a change in the machine's background load
    falls on both; every batch is reported, with medians and the spread. ``tuned`` starts the
    scheduler and workers with :data:`DASK_BATCH_ENV` (as README recommends for a batch cluster).
    ``extra``: more arguments for every ``run`` (``--cold``: today's kernels, not the warm pool).
    """
    env = {**os.environ, **(DASK_BATCH_ENV if tuned else {})}
    project = _project(tmp / "batch", runs, CHAPTER)
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = []
    local: list[dict[str, float]] = []
    dask: list[dict[str, float]] = []
    try:
        scheduler = [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]
        procs.append(subprocess.Popen(scheduler, stderr=subprocess.DEVNULL, start_new_session=True, env=env))
        for i in range(workers):
            worker = [str(DASK), "worker", address, "--host", "127.0.0.1", "--no-nanny", "--nthreads", "1"]
            worker += ["--no-dashboard", "--local-directory", str(tmp / f"w{i}")]
            procs.append(subprocess.Popen(worker, stderr=subprocess.DEVNULL, start_new_session=True, env=env))
        _wait_for_workers(address, workers)
        cluster = [p.pid for p in procs]
        for r in range(rounds):
            local.append(_measured(project, ["--jobs", str(workers), *extra], []))
            dask.append(_measured(project, ["--scheduler", address, *extra], cluster))
            print(f"round {r + 1}: local {local[-1]} dask {dask[-1]}", flush=True)
    finally:
        for proc in reversed(procs):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    summary = {
        "runs_per_batch": runs,
        "workers": workers,
        "rounds": rounds,
        "dask_env": DASK_BATCH_ENV if tuned else {},
        "local": local,
        "dask": dask,
        **{
            f"{mode}_{key}": _stats(b, key)
            for mode, b in (("local", local), ("dask", dask))
            for key in ("wall_s", "cpu_s", "job_s_median")
        },
    }
    lw, dw = summary["local_wall_s"], summary["dask_wall_s"]
    lc, dc = summary["local_cpu_s"], summary["dask_cpu_s"]
    assert isinstance(lw, dict) and isinstance(dw, dict) and isinstance(lc, dict) and isinstance(dc, dict)
    summary["wall_ratio_of_medians"] = dw["median"] / lw["median"]
    summary["cpu_ratio_of_medians"] = dc["median"] / lc["median"]
    summary["load_range"] = [
        min(r["load_before"] for r in local + dask),
        max(r["load_after"] for r in local + dask),
    ]
    return summary


def fleet(per_notebook_s: float) -> list[dict[str, float]]:
    """Hours for 1,000 hosts x 3 chapters on N single-thread workers at the measured per-notebook cost."""
    total_s = FLEET_HOSTS * FLEET_CHAPTERS * per_notebook_s
    return [{"workers": n, "hours": total_s / n / 3600} for n in (1, 2, 8, 32, 128)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="alternate local and Dask this many times")
    parser.add_argument("--batch-only", action="store_true", help="skip the per-notebook overhead part")
    parser.add_argument("--overhead-only", action="store_true", help="skip the local vs Dask batches")
    parser.add_argument("--baseline", help="git revision whose package is the 'before' runner")
    parser.add_argument("--dask-defaults", action="store_true", help="workers with Dask's default config")
    parser.add_argument("--cold", action="store_true", help="batches with `run --cold` (no warm kernel pool)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    doc: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="dask-batch-") as tmp:
        _private_package(Path(tmp))
        if not args.batch_only:
            doc["overhead"] = overhead(Path(tmp), args.baseline)
            print(json.dumps(doc["overhead"], indent=1), flush=True)
        if not args.overhead_only:
            extra = ("--cold",) if args.cold else ()
            result = batch(Path(tmp), args.runs, args.workers, args.rounds, not args.dask_defaults, extra)
            doc["batch"] = result
            print(
                json.dumps({k: v for k, v in result.items() if k not in ("local", "dask")}, indent=1),
                flush=True,
            )
            wall = result["dask_wall_s"]
            assert isinstance(wall, dict)
            per_notebook_s = wall["median"] * args.workers / args.runs  # worker-seconds per notebook
            doc["per_notebook_s"] = per_notebook_s
            doc["fleet"] = plan = fleet(per_notebook_s)
            print(
                f"fleet {FLEET_HOSTS} hosts x {FLEET_CHAPTERS} chapters at "
                f"{per_notebook_s:.2f} worker-s/notebook:"
            )
            for row in plan:
                print(f"  {row['workers']:4d} workers: {row['hours']:.2f} h")
    if args.out:
        args.out.write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
