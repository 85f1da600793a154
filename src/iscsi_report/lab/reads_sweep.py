"""``lab run --reads``: where a large read's missing host time goes (a diagnosis, not a forecast test).

Reads of 3,328 and 4,096 KiB take about 3 ms more than the engine carries from writes, on two
sweeps run on different days, flat in the link rate and the delay; between 2 MiB and 3.25 MiB the
read's host time per Data-In PDU doubles (BENCHMARKS.md, issue 21, "Post hoc: why reads fall
short"). Nothing a writes-only today showed explains it. This sweep measures what would:

- reads and writes of the same sizes, closely spaced across the step (:data:`SIZES`), at the two
  network points of the second blind sweep (:data:`POINTS`), window 1, 64 KiB immediate data;
- every size captured at **both ends of the line at once** (one dumpcap per namespace, one
  clock): when the target sent its first Data-In after the command (time at the target, before
  the line) against when the initiator saw it, and how the Data-In PDUs are spaced on each side;
- iperf3 in both directions at each point (``-R``: the target sending, as a read's data travels);
- local fio of the RAM LUN's file itself in the target's namespace (psync, buffered like tgt's
  rdwr store, queue depth 1), reads and writes at every size: the store's own time.

The question and what would answer it are written in ``data/preregistered/<out>/README.md``
before the sweep runs.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from iscsi_report.core.units import BYTES_PER_KIB
from iscsi_report.lab import slowdisk
from iscsi_report.lab import sweep as sw
from iscsi_report.lab import topology as tp
from iscsi_report.lab.topology import Lab, target_params

POINTS: tuple[tuple[float, float], ...] = ((1.25, 850.0), (4.5, 380.0))  # (one-way ms, Mbit/s): blind2's
SIZES = tuple(k * BYTES_PER_KIB for k in (1536, 2048, 2560, 2816, 3072, 3328, 4096))  # across the step
REPLICATES = 3
IOS = 24  # I/Os per fio run, as the blind sweeps
CAPTURE_IOS = 8  # captured I/Os per size and direction: enough to see whether every one steps
LOCAL_IOS = 48  # local fio I/Os per size and direction on the LUN's file
FLAGS = " --reads"
# Design 2 is design 1 with tgtd's allocator told to serve every buffer of these sizes from its
# heap (glibc's mmap threshold fixed at 64 MiB, which also stops it moving): the test of whether a
# large read's extra time at the target is its fresh buffer's page faults.
# Design 3 also fixes the trim threshold there, so a freed buffer stays in the heap for the next
# command (design 2 left it at glibc's 128 KiB: every buffer went back to the kernel).
MMAP_THRESHOLD_ENV = "MALLOC_MMAP_THRESHOLD_"
TRIM_THRESHOLD_ENV = "MALLOC_TRIM_THRESHOLD_"
FIXED_MMAP_THRESHOLD_BYTES = 64 << 20
TGTD_ENV: dict[int, dict[str, str]] = {
    1: {},
    2: {MMAP_THRESHOLD_ENV: str(FIXED_MMAP_THRESHOLD_BYTES)},
    3: {
        MMAP_THRESHOLD_ENV: str(FIXED_MMAP_THRESHOLD_BYTES),
        TRIM_THRESHOLD_ENV: str(FIXED_MMAP_THRESHOLD_BYTES),
    },
}
ROLE = "diagnosis"  # every run's design_role: a look for a cause, not a test of a forecast
PREFILL_BS = 1 << 20  # the LUN's first FIO_REGION_BYTES are written once before any run, in 1 MiB writes


def design() -> list[sw.FioRun]:
    """Every fio run: reads and writes at each size and point, replicated, plus one captured run each."""
    imm, seg = sw.IMMEDIATE[0]
    runs: list[sw.FioRun] = []
    for d, link in POINTS:
        for bs in SIZES:
            for rw in ("read", "write"):
                for rep in range(1, REPLICATES + 1):
                    runs.append(sw.FioRun(1, link, d, imm, seg, False, rep, rw, 1, bs, IOS, role=ROLE))
                runs.append(sw.FioRun(1, link, d, imm, seg, True, 0, rw, 1, bs, CAPTURE_IOS, role=ROLE))
    return sorted(runs)


def prefill(runner: sw.Runner) -> None:
    """Write the region fio's runs use once, so every read reads written pages (never a sparse hole)."""
    cmd = [
        str(runner.lab.tools.fio),
        "--name=prefill",
        "--ioengine=psync",
        f"--filename={tp.LUN_FILE}",
        "--rw=write",
        f"--bs={PREFILL_BS}",
        f"--size={sw.FIO_REGION_BYTES}",
        "--output-format=json",
    ]
    res = runner.lab.run(tp.NS_TGT, cmd, 120, "fio")
    if res.returncode != 0:
        runner.failures.append(f"prefill of {tp.LUN_FILE} exited {res.returncode}: {res.stderr[-300:]}")


def local_labels(rw: str, bs_bytes: int) -> dict[str, Any]:
    """Manifest labels of one local fio run on the RAM LUN's file."""
    return {
        "device": sw.RAM_DEVICE,
        "rw": rw,
        "bs_bytes": bs_bytes,
        "iodepth": 1,
        "direct": False,
        "numjobs": 1,
        "engine": "psync",
        "scenario": "local-psync",
        "n_ios": LOCAL_IOS,
    }


def local_fio(runner: sw.Runner) -> None:
    """Reads then writes of every size on the LUN's file, in the target's namespace (side ``local``)."""
    for rw in ("read", "write"):
        for bs in SIZES:
            path = runner.out / "fio" / f"local-{sw.RAM_DEVICE}-{rw}-bs{bs // BYTES_PER_KIB}k.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            cmd = slowdisk.fio_cmd(
                runner.lab.tools.fio, Path(tp.LUN_FILE), rw, bs, LOCAL_IOS, path, direct=False
            )
            res = runner.lab.run(tp.NS_TGT, cmd, 60 + LOCAL_IOS, "fio")
            if res.returncode != 0 or not path.exists():
                runner.failures.append(f"local fio {path.name} exited {res.returncode}: {res.stderr[-300:]}")
                continue
            runner.entry(path, "fio", local_labels(rw, bs), side="local")


def note(number: int = 1) -> str:
    """The end of the manifest's description: what this sweep adds to the earlier ones."""
    env = " ".join(f"{k}={v}" for k, v in TGTD_ENV[number].items())
    return (
        "A diagnosis of large reads (lab run --reads): reads and writes of the same sizes, each size "
        "captured on both sides of the line at once (files ending -at-target.tsv were captured on the "
        "target's TUN device), iperf3 in both directions, and local fio of the LUN's file."
        + (f" tgtd ran with {env} in its environment." if env else "")
    )


def check_design(number: int) -> None:
    """Refuse a design number that does not exist (before the lab comes up)."""
    if number not in TGTD_ENV:
        raise ValueError(f"--reads {number}: expected one of {sorted(TGTD_ENV)}")


def execute(lab: Lab, out: Path, say: Any = print, number: int = 1) -> dict[str, Any]:
    """Run the reads diagnosis (design ``number``: :data:`TGTD_ENV`) into ``out`` and write its manifest."""
    check_design(number)
    lab.tgtd_env = dict(TGTD_ENV[number])
    out.mkdir(parents=True, exist_ok=True)
    runner = sw.Runner(lab, out, say)
    loads = {"at_start": sw.load_average()}
    t0 = time.monotonic()
    prefill(runner)
    lab.start_target(target_params(1, *sw.IMMEDIATE[0]))
    for point in POINTS:
        runner.network(*point, reverse=True)
    runs = design()
    runner.replicated(runs, key=lambda r: (r.bs_bytes, r.rw), announce=True)
    for d, link in POINTS:
        caps = [r for r in runs if r.captured and (r.one_way_delay_ms, r.link_mbps) == (d, link)]
        runner.configure(caps[0])
        runner.captured(caps, at_target=True)
    local_fio(runner)
    loads["at_end"] = sw.load_average()
    sweep_s = time.monotonic() - t0
    extra = {
        "ios_per_run": IOS,
        "captured_ios": CAPTURE_IOS,
        "local_fio_ios": LOCAL_IOS,
        "lun_prefilled_bytes": sw.FIO_REGION_BYTES,
        "tgtd_environment": lab.tgtd_env,
    }
    flags = FLAGS if number == 1 else f"{FLAGS} {number}"
    manifest = sw.write_manifest(
        out, runner, False, sweep_s, {}, 0, loads, flags=flags, extra_lab=extra, description_note=note(number)
    )
    return sw.outcome(runs, runner, sweep_s, manifest)
