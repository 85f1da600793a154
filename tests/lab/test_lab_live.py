"""The live lab: `lab smoke`, and teardown leaving nothing behind (also after SIGTERM).

These need root, network namespaces, /dev/net/tun and the tools built by `iscsi-report lab
setup`; otherwise they skip with the reason. A file lock keeps two lab tests (or xdist workers)
from using the lab at once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fast_yaml import load_yaml
from filelock import FileLock

from iscsi_report.core.ingest import ping
from iscsi_report.lab import state
from iscsi_report.lab.build import load_tools

PROJECT_ROOT = Path(__file__).resolve().parents[2]
LOCK = Path("/tmp/iscsi-report-lab-tests.lock")


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "the lab needs root"
    if not Path("/dev/net/tun").exists():
        return "no /dev/net/tun"
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"network namespaces unavailable: {probe.stderr.strip()}"
    if load_tools(PROJECT_ROOT) is None:
        return "lab tools not built: run `iscsi-report lab setup` (as root) first"
    prior = state.load_state()
    owner = int((prior or {}).get("owner_pid", 0))
    if owner and state.pid_alive(owner, None):
        return f"another lab run (pid {owner}) is using the lab"
    return None


@pytest.fixture
def lab_lock() -> Iterator[None]:
    """Hold the lab lock, then skip unless the lab can run here (another test's lab is not a reason)."""
    with FileLock(str(LOCK), timeout=600):
        why = _why_not()
        if why:
            pytest.skip(why)
        yield


def _cli(*args: str, timeout_s: float) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "iscsi_report.cli", "--root", str(PROJECT_ROOT), "lab", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        cwd=PROJECT_ROOT,
    )


def _python(script: str, timeout_s: float) -> subprocess.CompletedProcess:
    """``script`` run by this interpreter from the project root, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        cwd=PROJECT_ROOT,
    )


def _assert_nothing_left(recorded_pids: list[tuple[int, int | None]]) -> None:
    assert state.lab_namespaces() == []
    assert not [p for p in Path("/dev/shm").glob("iscsilab-*")]
    assert not state.STATE_FILE.exists()
    for pid, ticks in recorded_pids:
        assert not state.pid_alive(pid, ticks), f"pid {pid} still alive"


def test_lab_smoke(lab_lock: None, tmp_path: Path) -> None:
    """On the wire: 8 R2Ts per 2 MiB write at window 1, >= 4 outstanding at window 8; D adds trips × ΔD."""
    blackhole_before = state.blackhole_present()
    t0 = time.monotonic()
    out = tmp_path / "smoke.json"
    res = _cli("smoke", "--json", str(out), timeout_s=180)
    took = time.monotonic() - t0
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["failed"] == [] and doc["delay_line"] == "compiled"
    assert doc["window_1"]["r2t_per_write"] == [8] and doc["window_1"]["max_outstanding_r2t"] == 1
    assert doc["window_8"]["max_outstanding_r2t"] >= 4
    assert abs(doc["added_latency"]["relative_error"]) <= 0.20
    assert took < 90
    _assert_nothing_left([])
    assert state.blackhole_present() == blackhole_before


def _ping_script(line: str, one_way_delay_ms: float) -> str:
    """Bring the lab up on ``line``, set the delay, print ping's output for 20 pings across it."""
    return (
        "from iscsi_report.lab.build import load_tools\n"
        "from iscsi_report.lab.topology import ADDR_TGT, NS_INI, Lab\n"
        f"tools = load_tools({str(PROJECT_ROOT)!r})\n"
        f"with Lab(tools, say=lambda m: None, delay_line={line!r}) as lab:\n"
        f"    lab.set_link({one_way_delay_ms}, 1000.0)\n"
        "    res = lab.run(NS_INI, ['ping', '-n', '-i', '0.01', '-c', '20', ADDR_TGT], 30, 'ping')\n"
        "    print(res.stdout)\n"
    )


@pytest.mark.parametrize("line", ["compiled", "python"])
def test_either_delay_line_holds_every_packet_for_the_set_delay(lab_lock: None, line: str) -> None:
    """Both lines forward, and no packet crosses sooner than the delay each way (late: load; early: a bug)."""
    one_way_delay_ms = 1.5
    res = _python(_ping_script(line, one_way_delay_ms), timeout_s=120)
    assert res.returncode == 0, res.stderr[-2000:]
    rtts_ms = ping.parse_text(res.stdout).rtt_ms
    assert len(rtts_ms) == 20, "every ping answered"
    assert min(rtts_ms) >= 2 * one_way_delay_ms
    _assert_nothing_left([])


def _lab_holder_script() -> str:
    return (
        "import sys, time, json\n"
        "from iscsi_report.lab.build import load_tools\n"
        "from iscsi_report.lab.topology import Lab, target_params\n"
        f"tools = load_tools({str(PROJECT_ROOT)!r})\n"
        "with Lab(tools, say=lambda m: None) as lab:\n"
        "    lab.start_target(target_params(8, 65536, 262144))\n"
        "    print(json.dumps(lab.state.data['processes']), flush=True)\n"
        "    time.sleep(120)\n"
    )


@pytest.mark.parametrize("how", ["sigterm", "sigint", "teardown-command"])
def test_teardown_leaves_nothing_behind(lab_lock: None, how: str) -> None:
    """Namespaces, tgtd, delay line, /dev/shm files and the state file all go."""
    blackhole_before = state.blackhole_present()
    proc = subprocess.Popen(
        [sys.executable, "-c", _lab_holder_script()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=PROJECT_ROOT,
    )
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        recorded = [(p["pid"], p["start_ticks"]) for p in json.loads(line)]
        assert {p["what"] for p in json.loads(line)} >= {"delayline", "tgtd"}
        assert sorted(state.lab_namespaces()) == ["iscsilab-ini", "iscsilab-tgt"]
        assert state.blackhole_present()
        assert all(state.pid_alive(pid, ticks) for pid, ticks in recorded)
        if how == "sigterm":
            proc.send_signal(signal.SIGTERM)
        elif how == "sigint":
            proc.send_signal(signal.SIGINT)
        else:
            proc.kill()  # the owner dies without cleaning up: `lab teardown` must
            proc.wait(timeout=10)
            res = _cli("teardown", timeout_s=60)
            assert res.returncode == 0, res.stderr
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            _cli("teardown", timeout_s=60)
    _assert_nothing_left(recorded)
    assert state.blackhole_present() == blackhole_before


def _tiny_device_sweep_script(out: Path) -> str:
    """A device sweep cut to one size, window, point and replicate, on the RAM LUN and hdd-like."""
    return (
        "import json\n"
        "from pathlib import Path\n"
        "from iscsi_report.lab import device_sweep as ds\n"
        "from iscsi_report.lab.build import load_tools\n"
        "from iscsi_report.lab.topology import Lab\n"
        "ds.POINTS = ds.POINTS[:1]\n"
        "ds.WRITE_BS = ds.WRITE_BS[:1]\n"
        "ds.DEEP_BS = ds.READ_BS = ds.CAPTURE_BS = ds.WRITE_BS[0]\n"
        "ds.WINDOWS = (1,)\n"
        "ds.REPLICATES = 1\n"
        "ds.IOS = ds.LOCAL_IOS = 4\n"
        "ds.DEVICES = (ds.RAM_DEVICE, 'hdd-like')\n"
        f"tools = load_tools({str(PROJECT_ROOT)!r})\n"
        "with Lab(tools, say=lambda m: None) as lab:\n"
        f"    summary = ds.execute(lab, Path({str(out)!r}))\n"
        "hdd = [r for r in ds.design() if r.device == 'hdd-like']\n"
        "expected = {'writes': ds.LOCAL_IOS + sum(r.n_ios for r in hdd if r.rw == 'write'),\n"
        "            'reads': sum(r.n_ios for r in hdd if r.rw == 'read')}\n"
        "print(json.dumps({'summary': summary, 'expected': expected}))\n"
    )


def test_a_slow_device_is_served_as_the_lun_measured_locally_and_torn_down(
    lab_lock: None, tmp_path: Path
) -> None:
    """The device sweep's path, cut small: the LUN on the FUSE device, its local fio, exact request counts."""
    out = tmp_path / "device"
    res = _python(_tiny_device_sweep_script(out), timeout_s=300)
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads(res.stdout.strip().splitlines()[-1])
    assert doc["summary"]["failures"] == []
    manifest = load_yaml(out / "manifest.yaml")
    served = manifest["lab"]["requests_served_by_each_slow_device"]["hdd-like"]
    # every I/O the design sent to the device arrived there, once (sizes under 1 MiB: one request each)
    assert (served["writes"], served["reads"]) == (doc["expected"]["writes"], doc["expected"]["reads"])
    local = [f for f in manifest["files"] if f["side"] == "local"]
    assert [f["labels"]["device"] for f in local] == ["hdd-like"]
    on_hdd = [f for f in manifest["files"] if f["labels"].get("device") == "hdd-like" and f["tool"] == "fio"]
    assert all("slowdisk" in f["labels"]["device_emulation"] for f in on_hdd)
    assert not [line for line in Path("/proc/self/mounts").read_text().splitlines() if "iscsilab" in line]
    _assert_nothing_left([])
