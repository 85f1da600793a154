"""Time the model fit (every variant), the leave-one-out validation, the what-if grid and the
Monte Carlo intervals on a dataset's measured runs; prints median wall times over repeats.

    .venv/bin/python benchmarks/fit_and_grid.py [data/raw/blog-2023] [--repeats 20]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from iscsi_report.analyses import fit, uncertainty, whatif
from iscsi_report.core import model
from iscsi_report.core.measurements import open_dataset

ONE_WAY_MS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
LINK_MBIT = [100.0, 1000.0, 2500.0, 10000.0, 25000.0, 40000.0, 100000.0]
R2T = [1, 4, 16]
BS_KIB = [64, 128, 256, 512, 1024, 2048, 4096]
BIG_ONE_WAY_MS = [10 ** (e / 10) for e in range(-20, 8)]  # 28 values, 0.01 .. 5 ms
BIG_LINK_MBIT = [10 ** (e / 10) * 100 for e in range(31)]  # 31 values, 100 Mbit/s .. 100 Gbit/s


def timed(label: str, fn: Callable[[], object], repeats: int) -> None:
    """Run ``fn`` ``repeats`` times and print the median and minimum wall time."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    print(f"{label:<58} median {statistics.median(times) * 1000:9.2f} ms   min {min(times) * 1000:9.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("raw_dir", nargs="?", default="data/raw/blog-2023")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    ds = open_dataset(args.raw_dir)
    start = time.perf_counter()
    runs, fits = fit.runs_from_dataset(ds)
    print(f"{'read raw files -> measured inputs (once)':<58} {(time.perf_counter() - start) * 1000:9.2f} ms")
    rtt = fit.rtt_samples_by_network(ds)
    primary = fit.variant_by_name(fit.PRIMARY_VARIANT)
    result = fit.fit_variant(runs, primary)
    devices = {**whatif.profiles_from_storage(fits), "nvme": whatif.NVME_DEFAULT}
    cpu = whatif.cpu_profile_from_runs(runs)
    n = args.repeats
    timed(f"fit primary variant ({len(runs)} runs)", lambda: fit.fit_variant(runs, primary), n)
    timed("fit all default variants", lambda: fit.fit_variants(runs), n)
    timed("leave-one-out, primary (6 folds)", lambda: fit.validation_table(runs, primary), n)
    cells = len(ONE_WAY_MS) * len(LINK_MBIT) * len(devices) * len(R2T) * len(BS_KIB)
    timed(
        f"what-if grid, default axes ({cells} cells)",
        lambda: whatif.grid(
            ONE_WAY_MS,
            whatif.mbit_to_bps(LINK_MBIT),
            devices,
            R2T,
            whatif.kib_to_bytes(BS_KIB),
            result.beta,
            cpu,
            device_request_fraction=0.5,
        ),
        n,
    )
    big = len(BIG_ONE_WAY_MS) * len(BIG_LINK_MBIT) * len(devices) * len(R2T) * len(BS_KIB)
    timed(
        f"what-if grid, fine axes ({big} cells)",
        lambda: whatif.grid(
            BIG_ONE_WAY_MS,
            whatif.mbit_to_bps(BIG_LINK_MBIT),
            devices,
            R2T,
            whatif.kib_to_bytes(BS_KIB),
            result.beta,
            cpu,
            device_request_fraction=0.5,
        ),
        n,
    )
    timed(
        "same default grid by a loop of model.write_latency",
        lambda: [
            model.write_latency(
                bs, model.IscsiParams(max_outstanding_r2t=m), model.Network(ow, link_bps=lb * 1e6), 0.0, 0.0
            )
            for ow in ONE_WAY_MS
            for lb in LINK_MBIT
            for _ in devices
            for m in R2T
            for bs in whatif.kib_to_bytes(BS_KIB)
        ],
        max(1, n // 4),
    )
    configs = whatif.upgrade_configs(runs, cpu, devices, whatif.blog_questions(), 0.5)
    for kind in ("run", "operation"):
        timed(
            f"Monte Carlo intervals, {kind}, 6 configs x 10,000 draws",
            lambda kind=kind: uncertainty.project(configs, result, rtt, kind=kind),
            n,
        )


if __name__ == "__main__":
    main()
