"""iscsi-report capture: the printed plan, refusals, and a real capture on loopback (127.0.0.1 only)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from iscsi_report.cli import capture_side, main
from iscsi_report.core import dataset

LOOPBACK = "127.0.0.1"
TOOLS = ("ping", "iperf3", "fio", "iostat")


def test_dry_run_prints_the_exact_commands_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cap"
    argv = ["capture", str(out), "--host", "10.0.0.9", "--filename", str(tmp_path / "f"), "--dry-run"]
    assert main([*argv, "--bs", "64k,2m", "--qd", "1,8", "--qd-bs", "1m", "--ping-count", "1000"]) == 0
    printed = capsys.readouterr().out.splitlines()
    notes, lines = (
        [ln for ln in printed if ln.startswith("#")],
        [ln for ln in printed if not ln.startswith("#")],
    )
    assert notes[0].startswith("# side: local (fio writes to the file ")
    assert "# needs: iperf3 -s -p 5201 running on 10.0.0.9 (the iperf3 server)" in notes
    assert lines[0] == "ping -D -i 0.002 -c 1000 -- 10.0.0.9 > ping/lan-2ms.txt"
    assert lines[1] == "ping -D -i 1 -c 10 -- 10.0.0.9 > ping/lan-1s.txt"
    assert lines[2] == "iperf3 -p 5201 -J -t 10 --client=10.0.0.9 > iperf3/lan-tcp.json"
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
    lines = [ln for ln in capsys.readouterr().out.splitlines() if not ln.startswith("#")]
    assert lines == [
        "iostat -x -o JSON 1 23 > iostat/bs64k-qd1.json",
        "iostat -x -o JSON 1 23 > iostat/bs1m-qd1.json",
    ]


def test_a_device_is_not_overwritten_without_destroy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["capture", str(tmp_path / "c"), "--target", "/dev/sdz", "--dry-run"]) == 2
    assert "--destroy" in capsys.readouterr().err


def test_loopback_capture_gives_a_valid_dataset(
    tmp_path: Path, iperf3_server: int, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    out = tmp_path / "mine"
    argv = ["capture", str(out), "--host", LOOPBACK, "--port", str(iperf3_server)]  # side inferred: local
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
    assert {f.side for f in ds.files} == {"local"}
    print(f"loopback capture to valid manifest: {time.monotonic() - started:.1f} s")


# ---- the side, inferred from where fio writes ------------------------------------------------


def _fake_host(tmp_path: Path, session: bool) -> tuple[capture_side.Host, Path]:
    """A /dev with disk sdb and a /sys whose sdb lies under an iSCSI session (or a PCI controller)."""
    dev, sys_root = tmp_path / "dev", tmp_path / "sys"
    dev.mkdir(parents=True)
    (dev / "sdb").write_text("")
    parent = "platform/host2/session1/target2:0:0/2:0:0:0" if session else "pci0000:00/0000:00:1f.2/ata1"
    real = sys_root / "devices" / parent / "block" / "sdb"
    real.mkdir(parents=True)
    (sys_root / "class" / "block").mkdir(parents=True)
    (sys_root / "class" / "block" / "sdb").symlink_to(real)
    return capture_side.Host(dev, sys_root), dev / "sdb"


def test_libiscsi_and_iscsi_urls_are_initiator_runs() -> None:
    assert capture_side.infer("libiscsi", None, "/x").side == "initiator"
    inferred = capture_side.infer("libaio", None, "iscsi://10.0.0.9/iqn.2026-01.t:lun/0")
    assert inferred.side == "initiator" and "iSCSI URL" in inferred.reason


def test_a_disk_under_an_iscsi_session_is_initiator_and_another_disk_local(tmp_path: Path) -> None:
    host, sdb = _fake_host(tmp_path / "a", session=True)
    assert capture_side.infer("libaio", str(sdb), None, host).side == "initiator"
    host, sdb = _fake_host(tmp_path / "b", session=False)
    assert capture_side.infer("libaio", str(sdb), None, host).side == "local"


def test_a_by_path_iscsi_name_is_initiator(tmp_path: Path) -> None:
    host, sdb = _fake_host(tmp_path, session=False)
    by_path = host.dev / "disk" / "by-path"
    by_path.mkdir(parents=True)
    (by_path / "ip-10.0.0.9:3260-iscsi-iqn.2026-01.t:lun-lun-0").symlink_to(sdb)
    assert capture_side.infer("libaio", str(sdb), None, host).side == "initiator"
    named = by_path / "ip-10.0.0.9:3260-iscsi-iqn.2026-01.t:lun-lun-0"
    assert capture_side.infer("libaio", str(named), None, host).side == "initiator"


def test_a_file_on_an_iscsi_disks_file_system_is_initiator(tmp_path: Path) -> None:
    folder = tmp_path / "mnt"
    folder.mkdir()
    st_dev = folder.stat().st_dev
    sys_root = tmp_path / "sys"
    real = sys_root / "devices/platform/host3/session2/target3:0:0/3:0:0:0/block/sdc"
    real.mkdir(parents=True)
    (sys_root / "dev" / "block").mkdir(parents=True)
    (sys_root / "dev" / "block" / f"{os.major(st_dev)}:{os.minor(st_dev)}").symlink_to(real)
    host = capture_side.Host(tmp_path / "dev", sys_root)
    assert capture_side.infer("libaio", None, str(folder / "fio.dat"), host).side == "initiator"


def test_an_unknown_device_is_refused_asking_for_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["capture", str(tmp_path / "c"), "--target", "/dev/no-such-disk-here", "--destroy", "--dry-run"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "cannot infer the side" in err and "pass --side" in err
    assert main([*argv, "--side", "initiator"]) == 0
    assert "# side: initiator (given with --side)" in capsys.readouterr().out


def test_a_side_that_contradicts_where_fio_writes_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["capture", str(tmp_path / "c"), "--filename", "iscsi://10.0.0.9/iqn.t/0", "--side", "local"]
    assert main([*argv, "--dry-run"]) == 2
    assert "--side local contradicts where fio writes" in capsys.readouterr().err


def test_an_initiator_dry_run_lists_what_must_run_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["capture", str(tmp_path / "c"), "--host", "target.example", "--ioengine", "libiscsi"]
    assert main([*argv, "--filename", "iscsi://10.0.0.9/iqn.t/0", "--dry-run"]) == 0
    notes = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("# needs: ")]
    assert notes[0] == "# needs: iperf3 -s -p 5201 running on target.example (the iperf3 server)"
    assert any("iscsiadm -m session" in n for n in notes)
    assert any("--side target" in n for n in notes)


# ---- hostile arguments -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--bs", "abc"], "argument --bs: not a fio size: 'abc'"),
        (["--bs", "0k"], "argument --bs: a size must be above 0 bytes"),
        (["--runtime", "nan"], "argument --runtime: expected a finite number of seconds above 0"),
        (["--runtime", "-5"], "argument --runtime: expected a finite number of seconds above 0"),
        (["--ping-count", "-3"], "argument --ping-count: expected a whole number of at least 1"),
        (["--iperf3-seconds", "0"], "argument --iperf3-seconds: expected a whole number of at least 1"),
        (["--qd", "1,-4"], "argument --qd: expected a whole number of at least 1"),
        (["--host=-f"], "argument --host: not a hostname or IP address: '-f'"),
        (["--host", "a;reboot"], "argument --host: not a hostname or IP address"),
        (["--network", "../../etc"], "argument --network: labels are letters"),
        (["--port", "70000"], "argument --port: a port is 1 to 65535"),
    ],
)
def test_hostile_arguments_are_argparse_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], said: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["capture", str(tmp_path / "c"), "--filename", str(tmp_path / "f"), "--dry-run", *extra])
    assert exc.value.code == 2
    assert said in capsys.readouterr().err


def test_the_host_follows_a_double_dash_for_ping(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capture", str(tmp_path / "c"), "--host", "fe80::1", "--dry-run"]) == 0
    pings = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("ping ")]
    assert pings and all(" -- fe80::1 > " in ln for ln in pings)


def test_colons_in_fio_filenames_are_escaped_and_iscsi_urls_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """fio splits its filename option at ':'; iSCSI by-path names and URLs are full of them."""
    url = "iscsi://10.0.0.9/iqn.2026-01.t:lun/0"
    argv = ["capture", str(tmp_path / "c"), "--ioengine", "libiscsi", "--filename", url, "--bs", "64k"]
    assert main([*argv, "--qd", "1", "--dry-run"]) == 0
    fio = [ln for ln in capsys.readouterr().out.splitlines() if "fio --name=" in ln]
    assert fio and all("--filename=iscsi\\://10.0.0.9/iqn.2026-01.t\\:lun/0" in ln for ln in fio)
    odd = tmp_path / "a:b" / "fio.dat"
    assert main(["capture", str(tmp_path / "d"), "--filename", str(odd), "--qd", "1", "--dry-run"]) == 0
    fio = [ln for ln in capsys.readouterr().out.splitlines() if "fio --name=" in ln]
    assert fio and all(f"--filename={str(odd).replace(':', chr(92) + ':')}" in ln for ln in fio)
