"""The warm kernel pool (issue 28): marginal cost per minimal notebook cold vs warm, and warm == cold outputs.

Usage: nice -n 5 .venv/bin/python benchmarks/warm_pool.py [--pairs 3] [--skip-dask] [--compare]
       [--compare-only] [--out FILE.json]

1. Marginal cost per minimal notebook (a parameters cell and ``import pandas``), ``(T6 - T1) / 5``:
   ``T_n`` is the wall time of ``iscsi-report run --force --jobs 1`` on a project of ``n`` params
   files with that one notebook each. Cold (``--cold``) and warm are measured in pairs, alternating
   (cold T1, cold T6, warm T1, warm T6, then the next pair), so background load falls on both;
   medians over the pairs are reported with the ratio.
2. The same through ``--scheduler`` on a loopback Dask cluster of one single-thread worker (stopped
   by PID): the worker keeps its zygote between batches, so a warm-up batch runs first.
3. ``--compare``: every chapter of every params file executed cold and warm in two copies of the
   study (``run --jobs 2``); every published notebook and CSV table compared byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dask_batch  # the sibling benchmark: its project builder and cluster helpers

ROOT = dask_batch.ROOT
PY = dask_batch.PY
MINIMAL = "import pandas"  # the minimal notebook: its parameters cell and one import
SMALL, LARGE = 1, 6  # notebooks per batch: the marginal cost is (T6 - T1) / 5
STUDY_FOLDERS = ("notebooks", "params", "data/published", "data/preregistered", "data/raw")


def _batch_s(project: Path, mode: str, extra: list[str]) -> float:
    """Wall seconds of one forced batch, cold or warm."""
    return dask_batch._run(project, *extra, f"--{mode}")


def marginal(tmp: Path, pairs: int, extra: list[str], label: str) -> dict[str, object]:
    """(T6 - T1) / 5 cold and warm, ``pairs`` alternating pairs; medians, each pair's figures, ratio."""
    one = dask_batch._project(tmp / f"{label}-1", SMALL, MINIMAL)
    six = dask_batch._project(tmp / f"{label}-6", LARGE, MINIMAL)
    rows: dict[str, list[dict[str, float]]] = {"cold": [], "warm": []}
    for i in range(pairs):
        for mode in ("cold", "warm"):
            t1, t6 = _batch_s(one, mode, extra), _batch_s(six, mode, extra)
            rows[mode].append({"t1_s": t1, "t6_s": t6, "marginal_s": (t6 - t1) / (LARGE - SMALL)})
            print(f"{label} pair {i + 1} {mode}: {rows[mode][-1]} load {os.getloadavg()[0]:.1f}", flush=True)
    med = {mode: statistics.median(r["marginal_s"] for r in rows[mode]) for mode in rows}
    return {
        "pairs": rows,
        "marginal_median_s": med,
        "t1_median_s": {mode: statistics.median(r["t1_s"] for r in rows[mode]) for mode in rows},
        "warm_over_cold": med["warm"] / med["cold"],
    }


def on_dask(tmp: Path, pairs: int) -> dict[str, object]:
    """:func:`marginal` through a loopback scheduler and one single-thread worker (the batch settings)."""
    env = {**os.environ, **dask_batch.DASK_BATCH_ENV}
    port = dask_batch._free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = []
    try:
        scheduler = [str(dask_batch.DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port)]
        procs.append(
            subprocess.Popen(
                [*scheduler, "--no-dashboard"], stderr=subprocess.DEVNULL, start_new_session=True, env=env
            )
        )
        worker = [str(dask_batch.DASK), "worker", address, "--host", "127.0.0.1", "--no-nanny"]
        worker += ["--nthreads", "1", "--no-dashboard", "--local-directory", str(tmp / "w0")]
        procs.append(subprocess.Popen(worker, stderr=subprocess.DEVNULL, start_new_session=True, env=env))
        dask_batch._wait_for_workers(address, 1)
        warmup = dask_batch._project(tmp / "dask-warmup", SMALL, MINIMAL)
        _batch_s(warmup, "warm", ["--scheduler", address])  # the worker starts its zygote once
        return marginal(tmp, pairs, ["--scheduler", address], "dask")
    finally:
        for proc in reversed(procs):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _study(dest: Path) -> Path:
    """A copy of the real params, chapters, datasets and package (as the e2e tests' study project).

    The package is copied inside it: chapters find ``data/published`` beside their package's ``src``.
    """
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for folder in (*STUDY_FOLDERS, "src"):
        shutil.copytree(ROOT / folder, dest / folder, ignore=skip)
    shutil.copytree(ROOT / "book", dest / "book", ignore=shutil.ignore_patterns("runs"))
    shutil.copy(ROOT / "_config.yml", dest / "_config.yml")
    return dest


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def compare(tmp: Path) -> dict[str, object]:
    """Every chapter of every params file, cold and warm: which published files differ (none, hoped)."""
    seen: dict[str, dict[str, str]] = {}
    seconds: dict[str, float] = {}
    for mode in ("cold", "warm"):
        project = _study(tmp / f"study-{mode}")
        started = time.perf_counter()
        cmd = [PY, "-m", "iscsi_report.cli", "--root", str(project), "run", "--jobs", "2"]
        env = {**os.environ, "PYTHONPATH": str(project / "src")}
        args = [*cmd, f"--{mode}"]
        proc = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
        seconds[mode] = time.perf_counter() - started
        if proc.returncode != 0:
            sys.exit(f"{mode} study run failed:\n{proc.stdout[-4000:]}{proc.stderr[-2000:]}")
        seen[mode] = {
            **{f"book/runs/{k}": v for k, v in _digests(project / "book" / "runs").items()},
            **{f"results/{k}": v for k, v in _digests(project / "results").items()},
        }
    cold, warm = seen["cold"], seen["warm"]
    differing = sorted(k for k in cold.keys() | warm.keys() if cold.get(k) != warm.get(k))
    return {
        "files_compared": len(cold),
        "notebooks": sum(k.endswith(".ipynb") for k in cold),
        "tables": sum(k.endswith(".csv") for k in cold),
        "differing": differing,
        "wall_s": seconds,
    }


def _summary(result: dict[str, object]) -> dict[str, object]:
    """A marginal-cost result without its per-pair rows."""
    return {k: v for k, v in result.items() if k != "pairs"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="alternating cold/warm pairs")
    parser.add_argument("--skip-dask", action="store_true", help="only the local pool")
    parser.add_argument("--compare", action="store_true", help="also every chapter cold vs warm")
    parser.add_argument("--compare-only", action="store_true", help="only the cold vs warm comparison")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    doc: dict[str, object] = {"load_start": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="warm-pool-") as tmp:
        dask_batch._private_package(Path(tmp))
        if not args.compare_only:
            doc["local"] = local = marginal(Path(tmp), args.pairs, ["--jobs", "1"], "local")
            print("local", json.dumps(_summary(local)), flush=True)
            if not args.skip_dask:
                doc["dask"] = dask = on_dask(Path(tmp), args.pairs)
                print("dask", json.dumps(_summary(dask)), flush=True)
        if args.compare or args.compare_only:
            doc["compare"] = compare(Path(tmp))
            print(json.dumps(doc["compare"], indent=1), flush=True)
    doc["load_end"] = os.getloadavg()[0]
    if args.out:
        args.out.write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
