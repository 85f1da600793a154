"""A slow device for the lab: the slowdisk FUSE file, mounted for a block of code, and local fio on it.

``native/slowdisk.c`` (built by ``lab setup``) serves one file, ``disk.img``, whose reads and
writes each hold a single server for ``per_request + bytes / rate``; tgt's rdwr store can serve
that file as a LUN, and a local fio measures the very same device, so a user's local fio figures
and the lab's device term are the same kind of number. Requests larger than the daemon's
``max_write`` (1 MiB) reach it as 1 MiB pieces, each paying the per-request time
(:meth:`Device.expected_ms`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iscsi_report.core.ingest import fio as fio_ingest
from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S
from iscsi_report.lab.state import is_mounted

DISK_NAME = "disk.img"  # the one file the daemon serves (DISK_PATH in slowdisk.c)
MAX_REQUEST_BYTES = BYTES_PER_MIB  # the daemon's max_write (MAX_REQUEST_BYTES in slowdisk.c)
US_PER_MS = 1000
SHM_DIR = Path("/dev/shm")  # the backing file lives in RAM, as the lab's LUN does
DISK_BYTES = 512 * BYTES_PER_MIB  # the lab's LUN size (topology.LUN_BYTES), sparse
FIO_SIZE_BYTES = 256 * BYTES_PER_MIB  # the region fio writes in, as the lab's runs use
MOUNT_TIMEOUT_S = 10.0  # a mount that is not there by then has failed
STOP_TIMEOUT_S = 10.0  # how long the daemon may take to exit after the unmount
POLL_S = 0.02


class SlowDiskError(RuntimeError):
    """The daemon did not mount (or did not stop); the message holds its stderr."""


@dataclass(frozen=True)
class Device:
    """A single-server device: a fixed time per request plus its bytes at a capped rate."""

    name: str
    per_request_ms: float
    rate_bytes_per_s: float  # 0: no rate cap

    def requests(self, bs_bytes: int) -> int:
        """Requests one I/O of ``bs_bytes`` becomes (the kernel splits at MAX_REQUEST_BYTES)."""
        return max(1, -(-bs_bytes // MAX_REQUEST_BYTES))

    def expected_ms(self, bs_bytes: int) -> float:
        """Configured service time of one I/O of ``bs_bytes`` at queue depth 1 (no FUSE overhead)."""
        transfer_ms = bs_bytes / self.rate_bytes_per_s * MS_PER_S if self.rate_bytes_per_s else 0.0
        return self.requests(bs_bytes) * self.per_request_ms + transfer_ms

    def daemon_args(self) -> list[str]:
        """The daemon's options for this device."""
        return [
            f"--per-request-us={round(self.per_request_ms * US_PER_MS)}",
            f"--rate-mib-s={self.rate_bytes_per_s / BYTES_PER_MIB:g}",
        ]


# Two devices for forecasts of "SSD instead of HDD" (round figures, not a product's data sheet),
# and the daemon with no delay, whose times are FUSE's own overhead.
HDD_LIKE = Device("hdd-like", 4.0, 150 * BYTES_PER_MIB)
SSD_LIKE = Device("ssd-like", 0.1, 500 * BYTES_PER_MIB)
NO_DELAY = Device("no-delay", 0.0, 0.0)


@dataclass
class Mount:
    """A mounted slow device: the file to use, its backing file, and (after exit) request counts."""

    disk: Path
    backing: Path
    mountpoint: Path
    pid: int
    counts: dict[str, int] = field(default_factory=dict)


def wait_mounted(mountpoint: Path, alive: Callable[[], bool], log: Path) -> None:
    """Return once ``mountpoint`` is mounted; raise with the daemon's log if it dies or time runs out."""
    deadline = time.monotonic() + MOUNT_TIMEOUT_S
    while not is_mounted(mountpoint):
        if not alive() or time.monotonic() > deadline:
            raise SlowDiskError(f"slowdisk did not mount {mountpoint}: {log.read_text(errors='replace')}")
        time.sleep(POLL_S)


def _stop(proc: subprocess.Popen[bytes], mountpoint: Path) -> None:
    """Unmount and let the daemon exit; signal it (by its PID, via Popen) only if it lingers."""
    if is_mounted(mountpoint):
        subprocess.run(["fusermount3", "-u", str(mountpoint)], capture_output=True, check=False)
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if is_mounted(mountpoint):  # the daemon died with the mount up: detach the stale mount
        subprocess.run(["fusermount3", "-u", "-z", str(mountpoint)], capture_output=True, check=False)


def read_counts(log_text: str) -> dict[str, int]:
    """The request counts the daemon prints on unmount (its last JSON line), {} if none."""
    for line in reversed(log_text.splitlines()):
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):
                return {k: int(v) for k, v in json.loads(line).items()}
    return {}


def daemon_cmd(binary: Path, device: Device, backing: Path, mountpoint: Path) -> list[str]:
    """The daemon's command line: in the foreground (-f), so its PID is the daemon's."""
    return [str(binary), f"--backing={backing}", *device.daemon_args(), "-f", str(mountpoint)]


@contextlib.contextmanager
def mounted(
    binary: Path, device: Device, size_bytes: int = DISK_BYTES, shm_dir: Path = SHM_DIR
) -> Iterator[Mount]:
    """Mount ``device`` on a fresh sparse backing file; on exit unmount, stop the daemon, clean up."""
    work = Path(tempfile.mkdtemp(prefix="slowdisk-", dir=shm_dir))
    backing, mountpoint, log = work / "backing.img", work / "mnt", work / "daemon.log"
    mountpoint.mkdir()
    with backing.open("wb") as fh:
        fh.truncate(size_bytes)
    proc: subprocess.Popen[bytes] | None = None
    mount: Mount | None = None
    try:
        with log.open("wb") as log_fh:
            proc = subprocess.Popen(
                daemon_cmd(binary, device, backing, mountpoint), stdout=log_fh, stderr=log_fh
            )
        wait_mounted(mountpoint, lambda: proc.poll() is None, log)
        mount = Mount(mountpoint / DISK_NAME, backing, mountpoint, proc.pid)
        yield mount
    finally:
        if proc is not None:
            _stop(proc, mountpoint)
        if mount is not None and log.exists():
            mount.counts = read_counts(log.read_text(errors="replace"))
        if not is_mounted(mountpoint):  # never delete through a mount that is still up
            shutil.rmtree(work, ignore_errors=True)


def fio_cmd(
    fio: Path, disk: Path, rw: str, bs_bytes: int, n_ios: int, out: Path, direct: bool = True
) -> list[str]:
    """Local fio on a device's file: psync, queue depth 1, JSON output (as the lab's runs).

    ``direct`` (O_DIRECT) as a slow device is measured; False: through the page cache, as tgt's
    rdwr store reads the RAM LUN's file (lab.reads_sweep).
    """
    return [
        str(fio),
        f"--name={rw}-{bs_bytes // BYTES_PER_KIB}k",
        "--ioengine=psync",
        f"--filename={disk}",
        f"--rw={rw}",
        f"--bs={bs_bytes}",
        f"--size={FIO_SIZE_BYTES}",
        f"--io_size={n_ios * bs_bytes}",
        "--iodepth=1",
        f"--direct={int(direct)}",
        "--output-format=json",
        f"--output={out}",
    ]


def run_fio(fio: Path, disk: Path, rw: str, bs_bytes: int, n_ios: int, out: Path) -> Path:
    """Run :func:`fio_cmd` and return its JSON file (raises with fio's output if it fails)."""
    res = subprocess.run(fio_cmd(fio, disk, rw, bs_bytes, n_ios, out), capture_output=True, text=True)
    if res.returncode != 0:
        raise SlowDiskError(f"fio failed ({res.returncode}): {res.stdout[-2000:]}{res.stderr[-2000:]}")
    return out


def realised_ms(path: Path) -> dict[str, Any]:
    """A fio JSON file's block size, I/O count and mean and median completion latency (ms)."""
    result = fio_ingest.parse(path)
    jobs = result.jobs[result.jobs["io_bytes"] > 0]
    if len(jobs) != 1:
        raise SlowDiskError(f"{path}: expected one job direction with I/O, found {len(jobs)}")
    row = jobs.iloc[0]
    return {
        "direction": str(row["direction"]),
        "bs_bytes": int(row["bs_bytes"]),
        "ios": round(float(row["io_bytes"]) / float(row["bs_bytes"])),
        "mean_ms": float(row["clat_mean_ms"]),
        "p50_ms": float(row["clat_p50_ms"]),
    }


def process_alive(pid: int) -> bool:
    """True when ``pid`` is a live (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def fuse_available() -> str | None:
    """Why a slow device cannot be mounted here (no /dev/fuse, no fusermount3, not root), or None."""
    if not os.access("/dev/fuse", os.R_OK | os.W_OK):
        return "/dev/fuse is missing or not readable and writable"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is not installed (apt-get install fuse3)"
    if os.geteuid() != 0:
        return "mounting the slow device needs root here (the lab runs as root)"
    return None
