"""The slow device's configured against realised time per I/O, by local fio (issue 21, item 4).

sudo PYTHONPATH=src .venv/bin/python benchmarks/slowdisk_realised.py [--rounds 3]

Needs root, /dev/fuse and ``iscsi-report lab setup`` (slowdisk and fio under .cache/lab). For
each device (no delay: FUSE's own cost; SSD-like; HDD-like), write then read at each block size
with the project's fio (psync, O_DIRECT, queue depth 1). The devices alternate within each round
and each round mounts them afresh; the table gives per cell the median over rounds of fio's mean
and median completion latency, beside Device.expected_ms. Then two writers (and then two readers)
of 1 MiB O_DIRECT I/Os at once on the HDD-like device: their combined rate against its cap.
"""

from __future__ import annotations

import argparse
import mmap
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB
from iscsi_report.lab import slowdisk as sd
from iscsi_report.lab.build import load_tools

ROOT = Path(__file__).resolve().parents[1]
DEVICES = (sd.NO_DELAY, sd.SSD_LIKE, sd.HDD_LIKE)
BLOCK_SIZES_BYTES = (
    4 * BYTES_PER_KIB,
    64 * BYTES_PER_KIB,
    128 * BYTES_PER_KIB,
    BYTES_PER_MIB,
    4 * BYTES_PER_MIB,
)
LARGE_BYTES = BYTES_PER_MIB  # from this size on, fewer I/Os per run (they take longer)
IOS_SMALL, IOS_LARGE = 100, 30
WRITERS, WRITES_EACH = 2, 20


def one_round(tools, work: Path) -> dict[tuple[str, str, int], dict]:
    """Every device, direction and block size once; the realised figures by (device, rw, bs)."""
    out: dict[tuple[str, str, int], dict] = {}
    for dev in DEVICES:
        with sd.mounted(tools.slowdisk, dev) as mount:
            for rw in ("write", "read"):
                for bs in BLOCK_SIZES_BYTES:
                    n = IOS_SMALL if bs < LARGE_BYTES else IOS_LARGE
                    path = sd.run_fio(tools.fio, mount.disk, rw, bs, n, work / f"{dev.name}-{rw}-{bs}.json")
                    out[(dev.name, rw, bs)] = sd.realised_ms(path)
    return out


def table(rounds: list[dict[tuple[str, str, int], dict]]) -> None:
    """Markdown table: configured and realised (median over rounds) per device, direction, size."""
    print(
        "| device | rw | block | requests | configured ms | realised mean ms | realised p50 ms | p50 over |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for dev in DEVICES:
        for rw in ("write", "read"):
            for bs in BLOCK_SIZES_BYTES:
                mean = statistics.median(r[(dev.name, rw, bs)]["mean_ms"] for r in rounds)
                p50 = statistics.median(r[(dev.name, rw, bs)]["p50_ms"] for r in rounds)
                want = dev.expected_ms(bs)
                over = f"+{p50 - want:.3f} ms" + (f" ({(p50 - want) / want:+.1%})" if want else "")
                print(
                    f"| {dev.name} | {rw} | {bs // BYTES_PER_KIB} KiB | {dev.requests(bs)} | {want:.3f} "
                    f"| {mean:.3f} | {p50:.3f} | {over} |"
                )


def _worker(disk: Path, rw: str, first: int, step: int) -> None:
    """WRITES_EACH O_DIRECT 1 MiB pwrites (or preads) at every ``step``-th MiB from ``first``."""
    buf = mmap.mmap(-1, BYTES_PER_MIB)
    fd = os.open(disk, os.O_RDWR | os.O_DIRECT)
    try:
        for i in range(WRITES_EACH):
            off = (first + i * step) * BYTES_PER_MIB
            if rw == "write":
                os.pwrite(fd, buf, off)
            else:
                os.preadv(fd, [buf], off)
    finally:
        os.close(fd)
        buf.close()


def concurrent(tools, rw: str) -> None:
    """Combined rate of WRITERS concurrent 1 MiB writers (or readers) on the HDD-like device."""
    dev = sd.HDD_LIKE
    with sd.mounted(tools.slowdisk, dev) as mount:
        threads = [
            threading.Thread(target=_worker, args=(mount.disk, rw, w, WRITERS)) for w in range(WRITERS)
        ]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed_s = time.monotonic() - t0
    total = WRITERS * WRITES_EACH * BYTES_PER_MIB
    one = dev.expected_ms(BYTES_PER_MIB)
    print(
        f"\n{WRITERS} {'writers' if rw == 'write' else 'readers'} x {WRITES_EACH} x 1 MiB on {dev.name}: "
        f"{elapsed_s:.3f} s "
        f"(serialised service time {WRITERS * WRITES_EACH * one / 1000:.3f} s), combined "
        f"{total / elapsed_s / BYTES_PER_MIB:.1f} MiB/s; the device at queue depth 1 gives "
        f"{BYTES_PER_MIB / one * 1000 / BYTES_PER_MIB:.1f} MiB/s, cap "
        f"{dev.rate_bytes_per_s / BYTES_PER_MIB:.0f} MiB/s; daemon counted {mount.counts}"
    )


def main() -> None:
    """Run the rounds, print the table and the concurrent writers' and readers' figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    why = sd.fuse_available()
    tools = load_tools(ROOT)
    if why or tools is None:
        raise SystemExit(why or "run `iscsi-report lab setup` first")
    print(f"fio {tools.fio}, slowdisk {tools.slowdisk}, {args.rounds} rounds")
    with tempfile.TemporaryDirectory(prefix="slowdisk-bench-") as tmp:
        rounds = [one_round(tools, Path(tmp)) for _ in range(args.rounds)]
    table(rounds)
    for rw in ("write", "read"):
        concurrent(tools, rw)


if __name__ == "__main__":
    main()
