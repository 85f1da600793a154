"""Issue 28: wall times of the lab chapters' hot paths, for the code on ``PYTHONPATH``.

Prints the best of several repeats of: the queueing replay (``replay_mean_ms``) over a fixed set
of exchanges and queue depths; ``read_time.operations`` over every capture of the three reads
sweeps; and one ``fm.run`` on ``lab-iscsi-2026-confirm3`` (loaded first, so parsing is left out).
Run it alternately with ``PYTHONPATH`` at an unpacked copy of the code before a change and at
``src`` to pair the figures; ``benchmarks/exactness_speed.py`` shows the results are identical.

Run from the project root:
    ISCSI_REPORT_PARSE_CACHE=<dir> PYTHONPATH=src .venv/bin/python benchmarks/speed_hot_paths.py
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab, read_time
from iscsi_report.core import model, queueing
from iscsi_report.core.measurements import open_dataset
from iscsi_report.core.units import BITS_PER_MBIT, BYTES_PER_KIB

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
REPEATS = 5  # best of: the machine is shared, the minimum is the least disturbed
LINK_MBPS = 700.0  # a lab-like link rate for the replayed exchanges
PER_ROUND_MS = 0.2  # the target's processing per R2T exchange
DEVICE_MS = 0.1  # one write's service at the device
REST_MS = 0.3  # host time outside the exchange
QUEUE_DEPTHS = (2, 4, 8, 16)
SHAPES = ((704, 4, 2.5), (2304, 3, 0.7), (4096, 1, 3.1), (64, 1, 1.0))  # KiB, R2T window, one-way ms
PARAMS = model.IscsiParams(
    first_burst_bytes=65536, max_burst_bytes=262144, max_recv_data_segment_bytes=262144
)
READS_SWEEPS = ("lab-iscsi-2026-reads", "lab-iscsi-2026-reads2", "lab-iscsi-2026-reads3")
CONFIRM = "lab-iscsi-2026-confirm3"


def exchanges() -> list[queueing.WriteExchange]:
    """Every pacing at each shape."""
    out = []
    for pacing in ("sliding", "serial", "lockstep"):
        for kib, window, one_way_ms in SHAPES:
            net = model.Network(one_way_ms=one_way_ms, link_bps=LINK_MBPS * BITS_PER_MBIT)
            a = model.Assumptions(r2t_pacing=pacing, target_r2t_window=window, per_round_ms=PER_ROUND_MS)
            out.append(queueing.exchange_of(kib * BYTES_PER_KIB, PARAMS, net, a, DEVICE_MS))
    return out


def best_s(job: Callable[[], object]) -> float:
    """The shortest wall time of ``REPEATS`` runs of ``job`` (s)."""
    times = []
    for _ in range(REPEATS):
        start_s = time.perf_counter()
        job()
        times.append(time.perf_counter() - start_s)
    return min(times)


def main() -> None:
    """Time each hot path and print one line each."""
    xs = exchanges()
    replays_s = best_s(lambda: [queueing.replay_mean_ms(x, qd, REST_MS) for x in xs for qd in QUEUE_DEPTHS])
    print(f"replay_mean_ms, {len(xs) * len(QUEUE_DEPTHS)} replays: {replays_s:.3f} s")
    captures = []
    for sweep in READS_SWEEPS:
        ds = open_dataset(RAW / sweep)
        captures += [ds.tshark(f).pdus for f in ds.select("tshark")]
    operations_s = best_s(lambda: [read_time.operations(p) for p in captures])
    print(f"read_time.operations, {len(captures)} captures: {operations_s:.3f} s")
    data = lab.load(RAW / CONFIRM)
    print(f"fm.run {CONFIRM}: {best_s(lambda: fm.run(data, CONFIRM)):.3f} s")


if __name__ == "__main__":
    main()
