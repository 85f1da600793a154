"""The slow device: arithmetic, fio command, build key; with FUSE and the built daemon, its behaviour."""

from __future__ import annotations

import json
import mmap
import os
import threading
import time
from pathlib import Path

import pytest

from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S
from iscsi_report.lab import build
from iscsi_report.lab import slowdisk as sd

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The integration tests' device: 2 ms per request and 100 MiB/s (a 1 MiB write: 12 ms).
TEST_DEVICE = sd.Device("test", 2.0, 100 * BYTES_PER_MIB)
BLOCK_SIZES_BYTES = (4 * BYTES_PER_KIB, 128 * BYTES_PER_KIB, BYTES_PER_MIB)
IOS_PER_SIZE = 20
WRITES_PER_WRITER = 8
SMALL_DISK_BYTES = 64 * BYTES_PER_MIB


# --- pure -------------------------------------------------------------------------------------


def test_expected_ms_is_per_request_time_plus_transfer() -> None:
    dev = sd.Device("d", 4.0, 150 * BYTES_PER_MIB)
    assert dev.expected_ms(4 * BYTES_PER_KIB) == pytest.approx(4.0 + 4 / (150 * 1024) * MS_PER_S)
    assert dev.expected_ms(BYTES_PER_MIB) == pytest.approx(4.0 + MS_PER_S / 150)


def test_expected_ms_counts_one_request_per_max_write_piece() -> None:
    dev = sd.Device("d", 2.0, 100 * BYTES_PER_MIB)
    assert dev.requests(BYTES_PER_MIB) == 1
    assert dev.requests(BYTES_PER_MIB + 1) == 2
    assert dev.expected_ms(4 * BYTES_PER_MIB) == pytest.approx(4 * 2.0 + 40.0)


def test_expected_ms_without_rate_cap_is_the_request_time() -> None:
    assert sd.Device("d", 0.1, 0.0).expected_ms(BYTES_PER_MIB) == pytest.approx(0.1)
    assert sd.NO_DELAY.expected_ms(4 * BYTES_PER_MIB) == 0.0


def test_daemon_command_carries_the_device_in_its_units(tmp_path: Path) -> None:
    cmd = sd.daemon_cmd(Path("/x/slowdisk"), sd.HDD_LIKE, tmp_path / "b.img", tmp_path / "mnt")
    assert cmd == [
        "/x/slowdisk",
        f"--backing={tmp_path / 'b.img'}",
        "--per-request-us=4000",
        "--rate-mib-s=150",
        "-f",
        str(tmp_path / "mnt"),
    ]
    assert "--per-request-us=100" in sd.daemon_cmd(Path("s"), sd.SSD_LIKE, Path("b"), Path("m"))


def test_fio_command_is_psync_direct_queue_depth_one(tmp_path: Path) -> None:
    out = tmp_path / "o.json"
    cmd = sd.fio_cmd(Path("/f/fio"), Path("/m/disk.img"), "read", 128 * BYTES_PER_KIB, 50, out)
    assert cmd[0] == "/f/fio"
    for opt in (
        "--ioengine=psync",
        "--direct=1",
        "--iodepth=1",
        "--rw=read",
        f"--bs={128 * BYTES_PER_KIB}",
        f"--io_size={50 * 128 * BYTES_PER_KIB}",
        "--filename=/m/disk.img",
        "--output-format=json",
        f"--output={out}",
    ):
        assert opt in cmd


def test_build_key_follows_the_source_and_the_flags(tmp_path: Path) -> None:
    src = tmp_path / "slowdisk.c"
    src.write_text("int main(void) { return 0; }\n")
    key = build.slowdisk_key(src)
    assert build.slowdisk_key(src) == key
    assert build.slowdisk_key(src, ("-O0",)) != key
    src.write_text("int main(void) { return 1; }\n")
    assert build.slowdisk_key(src) != key


def _stub(path: Path) -> Path:
    """An executable stand-in for a built tool."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_older_tools_json_without_a_native_tool_asks_for_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ISCSI_REPORT_LAB_CACHE", str(tmp_path))
    exe = _stub(tmp_path / "tool")
    old = {
        "fio": str(exe),
        "tgtd": str(exe),
        "tgtadm": str(exe),
        "fio_source_version": "3.33-3",
        "tgt_source_version": "1.0.85-1",
        "patch_sha256": build.patch_sha256(),
    }
    (tmp_path / "tools.json").write_text(json.dumps(old))
    assert build.load_tools(tmp_path) is None
    current = _stub(tmp_path / f"slowdisk-{build.slowdisk_key()}" / "slowdisk")
    (tmp_path / "tools.json").write_text(json.dumps({**old, "slowdisk": str(current)}))
    assert build.load_tools(tmp_path) is None  # a tools.json from before the compiled delay line
    line = _stub(tmp_path / f"delayline-{build.delayline_key()}" / "delayline")
    both = {**old, "slowdisk": str(current), "delayline": str(line)}
    (tmp_path / "tools.json").write_text(json.dumps(both))
    tools = build.load_tools(tmp_path)
    assert tools is not None and tools.slowdisk == current and tools.delayline == line
    stale = _stub(tmp_path / "slowdisk-0000000000000000" / "slowdisk")
    (tmp_path / "tools.json").write_text(json.dumps({**both, "slowdisk": str(stale)}))
    assert build.load_tools(tmp_path) is None
    stale_line = _stub(tmp_path / "delayline-0000000000000000" / "delayline")
    (tmp_path / "tools.json").write_text(json.dumps({**both, "delayline": str(stale_line)}))
    assert build.load_tools(tmp_path) is None
    (tmp_path / "tools.json").write_text("{not json")
    assert build.load_tools(tmp_path) is None


def test_read_counts_takes_the_daemons_last_json_line() -> None:
    log = 'Ignoring invalid max threads value 4294967295 > max (100000).\n{"reads": 3, "writes": 5}\n'
    assert sd.read_counts(log) == {"reads": 3, "writes": 5}
    assert sd.read_counts("no counts\n") == {}


def test_a_daemon_that_does_not_mount_raises_and_leaves_nothing(tmp_path: Path) -> None:
    with (
        pytest.raises(sd.SlowDiskError, match="did not mount"),
        sd.mounted(Path("/bin/false"), TEST_DEVICE, SMALL_DISK_BYTES, tmp_path),
    ):
        pytest.fail("the body must not run without a mount")
    assert list(tmp_path.iterdir()) == []


# --- with FUSE and the built daemon ----------------------------------------------------------


def _binaries() -> build.Tools:
    """The project's built tools, or skip saying why the integration tests cannot run."""
    why = sd.fuse_available()
    if why:
        pytest.skip(why)
    tools = build.load_tools(PROJECT_ROOT)
    if tools is None:
        pytest.skip("no built slowdisk/fio recorded: run `iscsi-report lab setup` (root) first")
    return tools


def _direct_reads(disk: Path, offsets: list[int]) -> None:
    """O_DIRECT preads of 1 MiB at ``offsets``."""
    buf = mmap.mmap(-1, BYTES_PER_MIB)
    fd = os.open(disk, os.O_RDONLY | os.O_DIRECT)
    try:
        for off in offsets:
            assert os.preadv(fd, [buf], off) == BYTES_PER_MIB
    finally:
        os.close(fd)
        buf.close()


def _run_together(threads: list[threading.Thread]) -> float:
    """Start the threads together and return the seconds until the last one ends."""
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - t0


def _direct_writes(disk: Path, offsets: list[int], fill: int) -> None:
    """O_DIRECT pwrites of 1 MiB of byte ``fill`` at ``offsets`` (an mmap buffer is page-aligned)."""
    buf = mmap.mmap(-1, BYTES_PER_MIB)
    buf.write(bytes([fill]) * BYTES_PER_MIB)
    fd = os.open(disk, os.O_RDWR | os.O_DIRECT)
    try:
        for off in offsets:
            assert os.pwrite(fd, buf, off) == BYTES_PER_MIB
    finally:
        os.close(fd)
        buf.close()


def test_realised_time_per_io_is_the_configured_time(tmp_path: Path) -> None:
    tools = _binaries()
    with sd.mounted(tools.slowdisk, TEST_DEVICE) as mount:
        for rw in ("write", "read"):
            for bs in BLOCK_SIZES_BYTES:
                got = sd.realised_ms(
                    sd.run_fio(tools.fio, mount.disk, rw, bs, IOS_PER_SIZE, tmp_path / f"{rw}{bs}.json")
                )
                want = TEST_DEVICE.expected_ms(bs)
                assert (got["direction"], got["bs_bytes"], got["ios"]) == (rw, bs, IOS_PER_SIZE)
                # never faster than configured (deterministic: the daemon sleeps to a deadline); how
                # much slower is FUSE's cost and the machine's load, measured in BENCHMARKS.md ("A slow
                # device for the lab"), not asserted here
                assert got["mean_ms"] >= want and got["p50_ms"] >= want, (rw, bs, got, want)
    assert mount.counts["writes"] == mount.counts["reads"] == IOS_PER_SIZE * len(BLOCK_SIZES_BYTES)
    assert mount.counts["max_write_bytes"] == BYTES_PER_MIB


def test_a_write_larger_than_max_write_reaches_the_device_in_pieces() -> None:
    tools = _binaries()
    with sd.mounted(tools.slowdisk, sd.NO_DELAY, SMALL_DISK_BYTES) as mount:
        buf = mmap.mmap(-1, 4 * BYTES_PER_MIB)
        buf.write(b"\x5a" * (4 * BYTES_PER_MIB))
        fd = os.open(mount.disk, os.O_RDWR | os.O_DIRECT)
        try:
            assert os.pwrite(fd, buf, 0) == 4 * BYTES_PER_MIB
            os.fdatasync(fd)  # tgt's rdwr store flushes so on SYNCHRONIZE CACHE
        finally:
            os.close(fd)
            buf.close()
        assert mount.backing.read_bytes()[: 4 * BYTES_PER_MIB] == b"\x5a" * (4 * BYTES_PER_MIB)
    assert (mount.counts["writes"], mount.counts["max_write_bytes"]) == (4, BYTES_PER_MIB)


def test_concurrent_writers_share_one_server_and_the_bytes_reach_the_backing_file() -> None:
    tools = _binaries()
    with sd.mounted(tools.slowdisk, TEST_DEVICE, SMALL_DISK_BYTES) as mount:
        writers = [
            threading.Thread(
                target=_direct_writes,
                args=(mount.disk, [(2 * i + w) * BYTES_PER_MIB for i in range(WRITES_PER_WRITER)], w + 1),
            )
            for w in range(2)
        ]
        elapsed_s = _run_together(writers)
        backing = mount.backing.read_bytes()
    total_bytes = 2 * WRITES_PER_WRITER * BYTES_PER_MIB
    # every write holds the device for its whole service time, so the two writers' writes take
    # at least the sum of their service times and together never beat the rate cap
    assert elapsed_s >= 2 * WRITES_PER_WRITER * TEST_DEVICE.expected_ms(BYTES_PER_MIB) / MS_PER_S
    assert total_bytes / elapsed_s <= TEST_DEVICE.rate_bytes_per_s
    assert mount.counts["writes"] == 2 * WRITES_PER_WRITER
    for i in range(2 * WRITES_PER_WRITER):
        block = backing[i * BYTES_PER_MIB : (i + 1) * BYTES_PER_MIB]
        assert block == bytes([i % 2 + 1]) * BYTES_PER_MIB, i
    assert set(backing[total_bytes:]) == {0}


def test_concurrent_readers_share_one_server() -> None:
    # The kernel already serialises O_DIRECT writes to one FUSE file (its inode lock, as libfuse
    # 3.14 cannot ask for parallel direct writes); reads reach the daemon in parallel, so only the
    # daemon's single server keeps them from overlapping.
    tools = _binaries()
    with sd.mounted(tools.slowdisk, TEST_DEVICE, SMALL_DISK_BYTES) as mount:
        readers = [
            threading.Thread(
                target=_direct_reads,
                args=(mount.disk, [(2 * i + r) * BYTES_PER_MIB for i in range(WRITES_PER_WRITER)]),
            )
            for r in range(2)
        ]
        elapsed_s = _run_together(readers)
    assert elapsed_s >= 2 * WRITES_PER_WRITER * TEST_DEVICE.expected_ms(BYTES_PER_MIB) / MS_PER_S
    assert mount.counts["reads"] == 2 * WRITES_PER_WRITER


def test_teardown_leaves_no_mount_and_no_process_even_when_the_body_raises() -> None:
    tools = _binaries()
    with (
        pytest.raises(RuntimeError, match="body failed"),
        sd.mounted(tools.slowdisk, TEST_DEVICE, SMALL_DISK_BYTES) as mount,
    ):
        assert sd.process_alive(mount.pid) and mount.disk.stat().st_size == SMALL_DISK_BYTES
        raise RuntimeError("body failed")
    assert not sd.process_alive(mount.pid)
    assert not mount.mountpoint.exists() and not mount.backing.exists()
    assert str(mount.mountpoint) not in Path("/proc/self/mounts").read_text()
