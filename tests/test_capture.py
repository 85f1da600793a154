"""iscsi-report capture: the printed plan, refusals, and a real capture on loopback (127.0.0.1 only)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from iscsi_report.cli import main
from iscsi_report.core import dataset

LOOPBACK = "127.0.0.1"
TOOLS = ("ping", "iperf3", "fio", "iostat")


def test_dry_run_prints_the_exact_commands_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cap"
    argv = ["capture", str(out), "--host", "10.0.0.9", "--filename", str(tmp_path / "f"), "--dry-run"]
    assert main([*argv, "--bs", "64k,2m", "--qd", "1,8", "--qd-bs", "1m", "--ping-count", "1000"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "ping -D -i 0.002 -c 1000 10.0.0.9 > ping/lan-2ms.txt"
    assert lines[1] == "ping -D -i 1 -c 10 10.0.0.9 > ping/lan-1s.txt"
    assert lines[2] == "iperf3 -c 10.0.0.9 -p 5201 -J -t 10 > iperf3/lan-tcp.json"
    fio_lines = [ln for ln in lines if "fio --name=" in ln]
    assert [ln.split("--name=")[1].split()[0] for ln in fio_lines] == [
        "bs64k-qd1",
        "bs2m-qd1",
        "bs1m-qd1",
        "bs1m-qd8",
    ]
    assert all("--output-format=json+" in ln and "--direct=1" in ln for ln in fio_lines)
    assert fio_lines[0].startswith("iostat -x -o JSON 1 23 > iostat/bs64k-qd1.json &")
    assert not out.exists()


def test_target_side_runs_iostat_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "capture",
        str(tmp_path / "t"),
        "--side",
        "target",
        "--target",
        "/dev/sdz",
        "--bs",
        "64k",
        "--qd",
        "1",
    ]
    assert main([*argv, "--host", "10.0.0.9", "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "iostat -x -o JSON 1 23 > iostat/bs64k-qd1.json",
        "iostat -x -o JSON 1 23 > iostat/bs1m-qd1.json",
    ]


def test_a_device_is_not_overwritten_without_destroy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["capture", str(tmp_path / "c"), "--target", "/dev/sdz", "--dry-run"]) == 2
    assert "--destroy" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


@pytest.fixture
def iperf3_server() -> Iterator[int]:
    """iperf3 -s on 127.0.0.1 on a free port, stopped by its PID."""
    port = _free_port()
    proc = subprocess.Popen(
        ["iperf3", "-s", "-B", LOOPBACK, "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex((LOOPBACK, port)) == 0:
                break
        time.sleep(0.1)
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_loopback_capture_gives_a_valid_dataset(
    tmp_path: Path, iperf3_server: int, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    out = tmp_path / "mine"
    argv = ["capture", str(out), "--host", LOOPBACK, "--port", str(iperf3_server), "--side", "local"]
    argv += ["--filename", str(tmp_path / "fio.dat"), "--size", "4m", "--runtime", "1", "--bs", "4k,16k,64k"]
    argv += ["--qd", "1,4", "--qd-bs", "16k", "--ping-count", "200", "--iperf3-seconds", "1"]
    argv += ["--network", "loopback", "--device", "tmpfile"]
    started = time.monotonic()
    status = main(argv)
    text = capsys.readouterr()
    assert status == 0, text.out + text.err
    assert "wrote" in text.out
    assert main(["dataset", "check", str(out)]) == 0
    ds = dataset.load(out)
    by = {f.rel: f for f in ds.files}
    assert {f.tool for f in ds.files} == set(TOOLS)
    assert by["ping/loopback-2ms.txt"].labels["interval_s"] == 0.002
    assert by["fio/bs16k-qd4.json"].labels["iodepth"] == 4
    assert by["fio/bs16k-qd4.json"].labels["scenario"] == "qd4-local-libaio"
    assert by["iostat/bs4k-qd1.json"].labels["bs_bytes"] == 4096
    print(f"loopback capture to valid manifest: {time.monotonic() - started:.1f} s")
