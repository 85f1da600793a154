"""``lab run --device``: the same iSCSI traffic on three devices, so the device term meets the network.

The devices: the RAM-backed LUN of every earlier sweep (its device time taken as zero) and two
emulated ones, :data:`slowdisk.HDD_LIKE` and :data:`slowdisk.SSD_LIKE` (:mod:`.slowdisk`: a FUSE
file that serves one request at a time, each taking a fixed time plus its bytes at a capped rate).
tgt's rdwr store serves the FUSE file as the LUN, and fio measures the same file locally (psync,
O_DIRECT, queue depth 1) at every block size the sweep writes: the number a user has of a disk,
measured on the disk alone. The forecast matrix (:mod:`iscsi_report.analyses.forecast_matrix`)
then forecasts, for instance, the SSD-like device over iSCSI from the HDD-like device's iSCSI runs
and the SSD-like device's local fio, and the device's ceiling at queue depth 4.

Design (pre-registered in ``data/preregistered/lab-iscsi-2026-device/README.md`` before it ran):
network points no sweep used, one-way 0.6 ms at 1000 Mbit/s and 3.5 ms at 450 Mbit/s; 64 KiB
immediate data with 256 KiB segments; per device and point, writes at queue depth 1 of 80 KiB,
704 KiB and 2,304 KiB (sizes no sweep used) at R2T windows 1 and 4, writes of 704 KiB at queue
depth 4 (window 4) and reads of 704 KiB at queue depth 1; :data:`REPLICATES` replicates of
:data:`IOS` I/Os; one captured run per device (the login keys and per-trip times).

The slow device's daemon runs in the target's network namespace only (``nsenter --net``), not in
a mount namespace of its own, so tgtd (started after the mount) sees the mounted file.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB
from iscsi_report.lab import slowdisk
from iscsi_report.lab import sweep as sw
from iscsi_report.lab import topology as tp
from iscsi_report.lab.topology import Lab, target_params

RAM_DEVICE = sw.RAM_DEVICE
EMULATED = (slowdisk.HDD_LIKE, slowdisk.SSD_LIKE)
DEVICES = (RAM_DEVICE, *(d.name for d in EMULATED))
POINTS: tuple[tuple[float, float], ...] = ((0.6, 1000.0), (3.5, 450.0))  # (one-way ms, Mbit/s)
WRITE_BS = (80 * BYTES_PER_KIB, 704 * BYTES_PER_KIB, 2304 * BYTES_PER_KIB)
WINDOWS = (1, 4)
DEEP_BS = 704 * BYTES_PER_KIB
DEEP_WINDOW = 4
READ_BS = 704 * BYTES_PER_KIB
REPLICATES = 3
IOS = 24
LOCAL_IOS = 48  # local fio writes per block size and device
CAPTURE_BS = 704 * BYTES_PER_KIB


def note() -> str:
    """The end of the manifest's description: what else this sweep's LUN was (emulated devices)."""
    settings = ", ".join(
        f"{d.name} {d.per_request_ms:g} ms and {d.rate_bytes_per_s / BYTES_PER_MIB:g} MiB/s" for d in EMULATED
    )
    return (
        "Besides the RAM-backed LUN, the same target served two emulated slow devices (slowdisk, the "
        "project's FUSE file answering one request at a time after a fixed time plus its bytes at a "
        f"capped rate: {settings}), each also measured alone by local fio (side local). The devices "
        "are emulated."
    )


def design() -> list[sw.FioRun]:
    """Every fio run of the device sweep (captured ones included), device by device."""
    imm, seg = sw.IMMEDIATE[0]
    runs: list[sw.FioRun] = []

    def add(d: float, link: float, bs: int, rw: str, qd: int, win: int, dev: str) -> None:
        on = {"device": dev, "device_emulation": emulation(dev) if dev != RAM_DEVICE else ""}
        for rep in range(1, REPLICATES + 1):
            runs.append(sw.FioRun(win, link, d, imm, seg, False, rep, rw, qd, bs, IOS, True, **on))

    for dev in DEVICES:
        for d, link in POINTS:
            for bs in WRITE_BS:
                for win in WINDOWS:
                    add(d, link, bs, "write", 1, win, dev)
            add(d, link, DEEP_BS, "write", sw.DEEP_IODEPTH, DEEP_WINDOW, dev)
            add(d, link, READ_BS, "read", 1, 1, dev)
        d, link = POINTS[0]
        on = {"device": dev, "device_emulation": emulation(dev) if dev != RAM_DEVICE else ""}
        runs.append(
            sw.FioRun(1, link, d, imm, seg, True, 0, "write", 1, CAPTURE_BS, sw.CAPTURE_IOS, True, **on)
        )
    return sorted(runs)


def emulation(device: str) -> str:
    """The ``device_emulation`` label of a file on an emulated device: the emulator and its settings."""
    d = next(d for d in EMULATED if d.name == device)
    rate_mib_s = d.rate_bytes_per_s / BYTES_PER_MIB
    return (
        f"slowdisk (FUSE): {d.per_request_ms:g} ms per request, {rate_mib_s:g} MiB/s, one request at a time"
    )


def local_labels(device: str, bs_bytes: int) -> dict[str, Any]:
    """Manifest labels of one local fio run on ``device`` (the device term's run kind)."""
    return {
        "device_emulation": emulation(device),
        "device": device,
        "rw": "write",
        "bs_bytes": bs_bytes,
        "iodepth": 1,
        "direct": True,
        "numjobs": 1,
        "engine": "psync",
        "scenario": "local-psync",
        "n_ios": LOCAL_IOS,
    }


@contextlib.contextmanager
def device_lun(lab: Lab, device: slowdisk.Device, counts: dict[str, Any]) -> Iterator[Path]:
    """``device`` mounted (its daemon in the target's network namespace) and served as the LUN.

    ``counts`` gets the requests the daemon served (its last log line at unmount), for the manifest.
    """
    work = Path(f"{tp.st.SHM_PREFIX}{device.name}")
    mountpoint, backing = work / "mnt", work / "backing.img"
    lab.mount_slow_device(work, mountpoint)
    with backing.open("wb") as fh:
        fh.truncate(tp.LUN_BYTES)
    cmd = slowdisk.daemon_cmd(lab.tools.slowdisk, device, backing, mountpoint)
    pid = lab.spawn(tp.NS_TGT, cmd, f"slowdisk {device.name}", work / "daemon.log", own_mounts=False)
    try:
        slowdisk.wait_mounted(mountpoint, lambda: tp.st.pid_alive(pid, None), work / "daemon.log")
        lab.use_lun(str(mountpoint / slowdisk.DISK_NAME))
        yield mountpoint / slowdisk.DISK_NAME
    finally:
        lab.use_lun(tp.LUN_FILE)  # tgtd lets go of the file before the unmount
        lab.unmount_slow_device(mountpoint)
        lab.stop(pid, grace_s=5.0)
        if (work / "daemon.log").exists():
            counts.update(slowdisk.read_counts((work / "daemon.log").read_text(errors="replace")))
        shutil.rmtree(work, ignore_errors=True)


def describe(device: slowdisk.Device) -> dict[str, Any]:
    """A slow device's settings for the manifest."""
    return {
        "emulated_by": "slowdisk (FUSE, the project's native/slowdisk.c) on a sparse file in /dev/shm, "
        "served by tgt's rdwr store",
        "per_request_ms": device.per_request_ms,
        "rate_mib_per_s": device.rate_bytes_per_s / BYTES_PER_MIB,
        "max_request_bytes": slowdisk.MAX_REQUEST_BYTES,
        "one_request_at_a_time": True,
    }


def local_fio(runner: sw.Runner, device: str, disk: Path) -> None:
    """fio on the device itself at every block size the sweep writes (side ``local``)."""
    for bs in WRITE_BS:
        path = runner.out / "fio" / f"local-{device}-write-bs{bs // BYTES_PER_KIB}k.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        cmd = slowdisk.fio_cmd(runner.lab.tools.fio, disk, "write", bs, LOCAL_IOS, path)
        res = runner.lab.run(tp.NS_TGT, cmd, 60 + LOCAL_IOS, "fio")
        if res.returncode != 0 or not path.exists():
            runner.failures.append(
                f"local fio {path.name} exited {res.returncode}: {res.stderr.strip()[-300:]}"
            )
            continue
        runner.entry(path, "fio", local_labels(device, bs), side="local")


def _device_runs(runner: sw.Runner, runs: list[sw.FioRun]) -> None:
    """One device's runs: per window, each replicate visits the points in its own order; then the capture."""
    for win in sorted({r.r2t_window for r in runs}):
        runner.replicated(
            [r for r in runs if r.r2t_window == win], key=lambda r: (r.rw, r.iodepth, r.bs_bytes)
        )
    caps = [r for r in runs if r.captured]
    runner.configure(caps[0])
    runner.captured(caps)


def execute(lab: Lab, out: Path, say: Any = print) -> dict[str, Any]:
    """Run the device sweep into ``out`` and write its manifest."""
    out.mkdir(parents=True, exist_ok=True)
    runner = sw.Runner(lab, out, say)
    loads = {"at_start": sw.load_average()}
    t0 = time.monotonic()
    lab.start_target(target_params(1, *sw.IMMEDIATE[0]))
    for point in POINTS:
        runner.network(*point)
    runs = design()
    by_name = {d.name: d for d in EMULATED}
    served: dict[str, dict[str, Any]] = {}
    for name in DEVICES:
        say(f"device {name} ({time.monotonic() - t0:.0f} s)")
        mine = [r for r in runs if r.device == name]
        if name == RAM_DEVICE:
            _device_runs(runner, mine)
            continue
        with device_lun(lab, by_name[name], served.setdefault(name, {})) as disk:
            local_fio(runner, name, disk)
            _device_runs(runner, mine)
    loads["at_end"] = sw.load_average()
    sweep_s = time.monotonic() - t0
    extra = {
        "devices": {RAM_DEVICE: "512 MiB sparse file on /dev/shm, tgt rdwr backing store"}
        | {d.name: describe(d) for d in EMULATED},
        "requests_served_by_each_slow_device": served,
        "ios_per_run": IOS,
        "local_fio_ios": LOCAL_IOS,
    }
    manifest = sw.write_manifest(
        out, runner, False, sweep_s, {}, 0, loads, flags=" --device", extra_lab=extra, description_note=note()
    )
    return sw.outcome(runs, runner, sweep_s, manifest)
