"""sysstat 12.6.1 ``iostat -x -t 1 61`` text recorded on the target (the NAS) during a remote fio run.

Layout mirrors a capture of ``iostat -x -t`` on the project machine (column widths, blank lines).
The first report holds since-boot averages; the next 60 cover the 60 s fio run, one second each.

Per second, the drive under test completes ``2 x`` the fio I/Os finished in that second, each of
half the fio block size (the blog: "the drive is serving operations of half of the block size");
``w_await`` follows a per-drive service-time model, ``aqu-sz = w/s x w_await / 1000`` as iostat
defines it, and ``%util`` is a little below ``100 x aqu-sz`` (the two halves overlap). The run
of the blog's excerpt (block device, wireless, HDD, 2M) contains the excerpt line verbatim.

CPU: ``busy % = 100 - %idle - %iowait`` (i.e. %user + %nice + %system + %steal). Over the 60 run
reports its mean equals the CPU utilisation the blog publishes for libiscsi runs; for other runs
(unpublished) it is set to ``CPU_PCT_PER_MIB_S`` x MiB/s, the ratio the libiscsi runs show.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from blog_reconstruction import targets as T
from blog_reconstruction.fio import FioResult, FioRun

KERNEL = "6.2.10-1-ARCH"  # Arch Linux ARM ("alarm" in the target IQN) on the armv7l Helios4
HOSTNAME = "alarm"
ARCH = "armv7l"
N_CPU = 2  # Helios4: dual-core Armada 388
INTERVAL_S = 1
RUN_REPORTS = T.FIO_RUNTIME_S // INTERVAL_S
CPU_PCT_PER_MIB_S = 0.40  # libiscsi runs: 7% at 17.3 MiB/s ... 14% at 33.1 MiB/s
DEVICE_NAME = {"hdd": "sdb", "ssd": "sdc"}  # mmcblk0 = root SD card, sda = second HDD

CPU_HEADER = "avg-cpu:  %user   %nice %system %iowait  %steal   %idle"
DEV_HEADER = (
    "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s"
    "  %wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await"
    "  aqu-sz  %util"
)
# (field, printf width) in column order, widths from the captured sysstat 12.6.1 output
COLUMNS = (
    ("r/s", 7), ("rkB/s", 9), ("rrqm/s", 8), ("%rrqm", 6), ("r_await", 7), ("rareq-sz", 8),
    ("w/s", 7), ("wkB/s", 9), ("wrqm/s", 8), ("%wrqm", 6), ("w_await", 7), ("wareq-sz", 8),
    ("d/s", 7), ("dkB/s", 9), ("drqm/s", 8), ("%drqm", 6), ("d_await", 7), ("dareq-sz", 8),
    ("f/s", 7), ("f_await", 7), ("aqu-sz", 7), ("%util", 6),
)  # fmt: skip


@dataclass(frozen=True)
class DriveModel:
    """Service time of one write of ``kb`` kB: ``overhead_ms + kb / rate``."""

    overhead_ms: float
    rate_kb_per_ms: float

    def await_ms(self, kb: float) -> float:
        return self.overhead_ms + kb / self.rate_kb_per_ms


# HDD: 1024 kB in 6.70 ms (the excerpt); SSD: 1024 kB in about 2.7 ms (the blog's "I/O lat 1M")
DRIVES = {"hdd": DriveModel(0.45, 1024 / 6.25), "ssd": DriveModel(0.10, 1024 / 2.60)}
UTIL_OVERLAP = (0.86, 0.92)  # %util / (100 x aqu-sz): the two half-requests partly overlap


def device_line(name: str, values: dict[str, float]) -> str:
    """One device row: name left-justified in 13 columns, then each field ``%*.2f``."""
    return f"{name:<13}" + "".join(f" {values.get(k, 0.0):{w}.2f}" for k, w in COLUMNS)


def cpu_line(user: float, nice: float, system: float, iowait: float, steal: float) -> str:
    """The avg-cpu value row; %idle is what is left of 100."""
    idle = 100.0 - user - nice - system - iowait - steal
    return "       " + "".join(f" {v:7.2f}" for v in (user, nice, system, iowait, steal, idle))


def _stamp(ts: datetime) -> str:
    """iostat -t timestamp in the C locale (%x %X)."""
    return f"{ts:%m/%d/%y %H:%M:%S}"


def uses_sdc(run: FioRun) -> bool:
    """The SSD (sdc) was added after the wireless HDD runs; later files list it too."""
    return not (run.network == "wireless" and run.device == "hdd" and run.max_outstanding_r2t == 1)


def busy_target_pct(run: FioRun) -> float:
    """Mean CPU busy % over the run: published for libiscsi, otherwise scaled from MiB/s."""
    if run.cell.cpu_pct is not None:
        return float(run.cell.cpu_pct)
    return round(CPU_PCT_PER_MIB_S * run.cell.mib_per_s, 2)


def _busy_series(rng: np.random.Generator, mean: float) -> np.ndarray:
    """Per-second busy % (2 decimals) whose mean is exactly ``mean``."""
    noise = rng.normal(0, min(1.2, mean / 6), RUN_REPORTS)
    cents = np.rint((mean + noise - noise.mean()) * 100).astype(np.int64)
    residual = round(mean * 100) * RUN_REPORTS - int(cents.sum())  # rounding: |residual| < 60
    cents[: abs(residual)] += int(np.sign(residual))
    return cents / 100


def _boot_report(rng: np.random.Generator, devices: list[str]) -> tuple[str, list[str]]:
    """Since-boot averages: a lightly used NAS, a few days up."""
    cpu = cpu_line(float(rng.uniform(0.8, 1.5)), 0.0, float(rng.uniform(1.5, 3.0)),
                   float(rng.uniform(0.4, 1.2)), 0.0)  # fmt: skip
    rows = []
    for name in devices:
        w = float(rng.uniform(0.3, 3.0)) if name != "mmcblk0" else float(rng.uniform(0.5, 1.0))
        wsz = float(rng.uniform(200, 900)) if name != "mmcblk0" else float(rng.uniform(8, 20))
        r = float(rng.uniform(0.05, 0.6))
        rsz = float(rng.uniform(20, 120))
        aw = float(rng.uniform(3, 9)) if name != "mmcblk0" else float(rng.uniform(1, 4))
        rows.append(device_line(name, {
            "r/s": r, "rkB/s": r * rsz, "rrqm/s": r * 0.1, "%rrqm": 9.09, "r_await": 4.5,
            "rareq-sz": rsz, "w/s": w, "wkB/s": w * wsz, "wrqm/s": w * 0.05, "%wrqm": 4.76,
            "w_await": aw, "wareq-sz": wsz, "f/s": 0.01, "f_await": 0.5,
            "aqu-sz": w * aw / 1000, "%util": min(100.0, w * aw / 10 * 0.9),
        }))  # fmt: skip
    return cpu, rows


def _drive_row(run: FioRun, ops: int, rng: np.random.Generator) -> dict[str, float]:
    """The drive under test in one second: 2 requests of bs/2 per fio I/O."""
    w = 2.0 * ops
    kb = run.bs_bytes / 2 / 1024
    aw = DRIVES[run.device].await_ms(kb) * float(rng.uniform(0.95, 1.05)) if ops else 0.0
    aqu = w * aw / 1000
    return {"w/s": w, "wkB/s": w * kb, "w_await": aw, "wareq-sz": kb if ops else 0.0,
            "aqu-sz": aqu, "%util": min(100.0, aqu * 100 * float(rng.uniform(*UTIL_OVERLAP)))}  # fmt: skip


def _mmc_row(rng: np.random.Generator) -> dict[str, float]:
    """Root SD card: mostly idle, an occasional journal write."""
    if rng.random() > 0.1:
        return {}
    w = float(rng.integers(1, 4))
    return {"w/s": w, "wkB/s": w * 4.0, "w_await": float(rng.uniform(1, 3)), "wareq-sz": 4.0,
            "aqu-sz": 0.0, "%util": float(rng.uniform(0.1, 0.4))}  # fmt: skip


def excerpt_row() -> dict[str, float]:
    """The blog's iostat excerpt line for sdb (wireless HDD, 2M)."""
    e = T.IOSTAT_EXCERPT
    return {"w/s": e["w_per_s"], "wkB/s": e["wkB_per_s"], "w_await": e["w_await_ms"],
            "wareq-sz": e["wareq_sz_kB"], "aqu-sz": e["aqu_sz"], "%util": e["util_pct"]}  # fmt: skip


def is_excerpt_run(run: FioRun) -> bool:
    """The block-device wireless HDD 2M run (R2T=1) is the one the excerpt comes from."""
    return (run.scenario, run.network, run.device, run.bs, run.max_outstanding_r2t) == (
        "iscsi-blockdev", "wireless", "hdd", "2M", 1)  # fmt: skip


def render(run: FioRun, fio: FioResult, rng: np.random.Generator) -> str:
    """The iostat text for one remote run."""
    devices = ["mmcblk0", "sda", "sdb"] + (["sdc"] if uses_sdc(run) else [])
    start = run.start.replace(microsecond=0)
    lines = [f"Linux {KERNEL} ({HOSTNAME}) \t{start:%m/%d/%y} \t_{ARCH}_\t({N_CPU} CPU)", ""]
    cpu, rows = _boot_report(rng, devices)
    reports = [(start, cpu, rows)]
    per_second = np.bincount(
        np.minimum((fio.completion_ms // 1000).astype(int), RUN_REPORTS), minlength=RUN_REPORTS + 1
    )[:RUN_REPORTS]
    busy = _busy_series(rng, busy_target_pct(run))
    excerpt_at = int(np.argmax(per_second == 15)) if is_excerpt_run(run) else -1
    if excerpt_at >= 0 and per_second[excerpt_at] != 15:
        raise AssertionError(f"{run.path}: no second with 15 I/Os for the blog's excerpt")
    for i in range(RUN_REPORTS):
        user = float(rng.uniform(0.2, 0.8))
        iowait = float(rng.uniform(4.0, 9.0) if run.device == "hdd" else rng.uniform(1.0, 3.0))
        cpu = cpu_line(round(user, 2), 0.0, round(busy[i] - round(user, 2), 2), round(iowait, 2), 0.0)
        drive = excerpt_row() if i == excerpt_at else _drive_row(run, int(per_second[i]), rng)
        rows = []
        for name in devices:
            if name == DEVICE_NAME[run.device]:
                rows.append(device_line(name, drive))
            elif name == "mmcblk0" and i != excerpt_at:
                rows.append(device_line(name, _mmc_row(rng)))
            else:
                rows.append(device_line(name, {}))
        reports.append((start + timedelta(seconds=INTERVAL_S * (i + 1)), cpu, rows))
    for ts, cpu, rows in reports:
        lines += [_stamp(ts), CPU_HEADER, cpu, "", DEV_HEADER, *rows, "", ""]
    return "\n".join(lines) + "\n"
