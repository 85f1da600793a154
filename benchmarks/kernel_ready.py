"""Issue 28: how long a notebook waits for its kernel, papermill's own engine against the project's.

Usage: PYTHONPATH=src .venv/bin/python benchmarks/kernel_ready.py [--rounds 10]

In one process, a one-cell notebook is executed by papermill ``rounds`` times with each engine,
alternating (papermill's default nbclient engine, then ``pipeline/nbengine.py``'s), each with a cold
kernel of this interpreter. Printed per engine: the median time spent in the kernel client's
``wait_for_ready`` and the median wall time of the whole ``execute_notebook``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import nbformat
import papermill as pm
from jupyter_client.asynchronous.client import AsyncKernelClient

from iscsi_report.pipeline import nbengine

ENGINES = {"papermill's nbclient engine": None, "the project's engine": nbengine.ENGINE_NAME}
Ready = Callable[[Any, float | None], Coroutine[Any, Any, None]]


def _timed(ready: Ready, into: list[float]) -> Ready:
    """``ready`` that appends its own duration (seconds) to ``into``."""

    async def wrapper(self: Any, timeout: float | None = None) -> None:
        start = time.perf_counter()
        await ready(self, timeout)
        into.append(time.perf_counter() - start)

    return wrapper


def main() -> None:
    """Alternate the two engines and print each one's medians."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    nbengine.register()
    pm.engines.papermill_engines.register(None, pm.engines.NBClientEngine)  # keep papermill's default
    ready_s: dict[str, list[float]] = {name: [] for name in ENGINES}
    whole_s: dict[str, list[float]] = {name: [] for name in ENGINES}
    waits: list[float] = []
    AsyncKernelClient.wait_for_ready = _timed(AsyncKernelClient.wait_for_ready, waits)
    nbengine.QuickKernelClient.wait_for_ready = _timed(nbengine.QuickKernelClient.wait_for_ready, waits)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "in.ipynb"
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell("x = 1")]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, source)
        for _ in range(args.rounds):
            for name, engine in ENGINES.items():
                start = time.perf_counter()
                pm.execute_notebook(source, Path(tmp) / "out.ipynb", progress_bar=False, engine_name=engine)
                whole_s[name].append(time.perf_counter() - start)
                ready_s[name].append(waits.pop())
    for name in ENGINES:
        print(
            f"{name}: wait_for_ready median {statistics.median(ready_s[name]):.3f} s, "
            f"whole notebook median {statistics.median(whole_s[name]):.3f} s ({args.rounds} rounds)"
        )


if __name__ == "__main__":
    main()
