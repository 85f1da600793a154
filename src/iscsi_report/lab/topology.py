"""The lab's network and target: two namespaces joined by the delay line, tgtd with a RAM-backed LUN.

::

    iscsilab-ini (198.18.0.1, lab0 TUN) <-> delay line process <-> (lab0 TUN, 198.18.0.2) iscsilab-tgt
      fio (libiscsi), ping, iperf3 -c, dumpcap                       tgtd, iperf3 -s

Safety by construction: addresses come from 198.18.0.0/15 only, every tool runs under
``ip netns exec`` in a lab namespace, the root namespace holds a blackhole route for the range
while the lab is up, and everything started is recorded in the state file (:mod:`.state`) and
removed by :meth:`Lab.close` on success, error and SIGINT/SIGTERM.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iscsi_report.core.atomic import write_atomic
from iscsi_report.lab import state as st
from iscsi_report.lab.build import Tools

NS_INI = f"{st.NS_PREFIX}ini"
NS_TGT = f"{st.NS_PREFIX}tgt"
ADDR_INI = "198.18.0.1"
ADDR_TGT = "198.18.0.2"
TUN_DEV = "lab0"
PATH_MTU_BYTES = 65000
# The two implementations of the delay line, same rule: "compiled" (native/delayline.c, fixed delay
# only, less CPU per packet) and "python" (lab/delayline.py, with jitter).
DELAY_LINES = ("compiled", "python")
# The line every sweep runs on unless --delay-line says otherwise: jitter needs the Python one, and
# without jitter its replicates scatter less than the compiled line's (the diagnosis declared in
# data/preregistered/delay-line-scatter: +1.29 points [+0.71, +2.05] for the compiled line, most at
# fast links and short delays). The compiled line stays a choice.
DEFAULT_DELAY_LINE = "python"
DELAY_LINE_WORDS = {
    "compiled": "the project's C program native/delayline.c",
    "python": "the project's Python program lab/delayline.py",
}


ISCSI_PORT = 3260
TGT_CONTROL_PORT = 7326  # tgtd -C: its own management socket, apart from any system tgtd
TARGET_IQN = "iqn.2026-11.org.example.iscsilab:lun"
LUN_FILE = f"{st.SHM_PREFIX}lun0.img"
LUN_BYTES = 512 << 20
TGT_SOCKET_DIR = Path("/run/tgtd")
# fio logs in afresh for every run, so each run is a new TCP connection; a real iSCSI session is
# long-lived and its congestion window warm. A large initial window (in segments of ~64 KB at
# this MTU), socket buffers that start large (8 MiB instead of 128 KiB: no wait for buffer
# auto-tuning) and no slow start after idle make the first I/O of a run behave like a later one.
TCP_INIT_WINDOW_SEGMENTS = 64
# The VM is shared and the kernel groups processes by session (sched_autogroup): every lab
# process gets its own session and that autogroup's nice value, so other sessions' work on the
# two cores delays the lab's wake-ups less. Only the lab's own processes are affected.
LAB_NICE = -10
TCP_SYSCTLS = {
    "net.ipv4.tcp_slow_start_after_idle": "0",
    "net.ipv4.tcp_rmem": "4096 8388608 16777216",
    "net.ipv4.tcp_wmem": "4096 8388608 16777216",
}


@dataclass(frozen=True)
class TargetParams:
    """Login keys the target offers (applied at the next login) and its forced R2T window."""

    r2t_window: int = 1
    immediate_data_bytes: int = 65536  # = min(FirstBurstLength, MaxRecvDataSegmentLength)
    max_recv_data_segment_bytes: int = 262144
    first_burst_bytes: int = 65536
    max_burst_bytes: int = 262144
    max_outstanding_r2t: int = 16  # what the target offers at login (libiscsi proposes 1)
    initial_r2t: bool = True
    immediate_data: bool = True

    def keys(self) -> dict[str, str]:
        """tgtadm target keys (iSCSI login keys) for these parameters."""
        return {
            "MaxRecvDataSegmentLength": str(self.max_recv_data_segment_bytes),
            "FirstBurstLength": str(self.first_burst_bytes),
            "MaxBurstLength": str(self.max_burst_bytes),
            "MaxOutstandingR2T": str(self.max_outstanding_r2t),
            "InitialR2T": "Yes" if self.initial_r2t else "No",
            "ImmediateData": "Yes" if self.immediate_data else "No",
        }


def target_params(
    r2t_window: int, immediate_data_bytes: int, max_recv_data_segment_bytes: int
) -> TargetParams:
    """Target settings giving this immediate-data size with this data segment size.

    Immediate data = min(FirstBurstLength, MaxRecvDataSegmentLength) (RFC 7143): with a 64 KiB
    FirstBurstLength, an 8 KiB segment size caps it at 8 KiB; with 256 KiB segments, 8 KiB
    immediate data needs FirstBurstLength = 8 KiB.
    """
    first_burst = 65536
    if min(first_burst, max_recv_data_segment_bytes) != immediate_data_bytes:
        first_burst = immediate_data_bytes
    if min(first_burst, max_recv_data_segment_bytes) != immediate_data_bytes:
        raise ValueError(
            f"immediate data {immediate_data_bytes} impossible with "
            f"MaxRecvDataSegmentLength {max_recv_data_segment_bytes}"
        )
    return TargetParams(
        r2t_window=r2t_window,
        immediate_data_bytes=immediate_data_bytes,
        max_recv_data_segment_bytes=max_recv_data_segment_bytes,
        first_burst_bytes=first_burst,
    )


def fio_filename() -> str:
    """fio's libiscsi URL for the lab LUN (colons escaped for fio)."""
    return f"iscsi\\://{ADDR_TGT}\\:{ISCSI_PORT}/{TARGET_IQN.replace(':', chr(92) + ':')}/1"


def boost(pid: int, nice: int = LAB_NICE) -> None:
    """Raise a lab process's CPU priority: its nice value and its autogroup's (best effort)."""
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, pid, nice)
    with contextlib.suppress(OSError), open(f"/proc/{pid}/autogroup", "w") as fh:
        fh.write(str(nice))


def _wait_for(pred: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.02)
    raise RuntimeError(f"timed out after {timeout_s} s waiting for {what}")


class Lab:
    """A running lab; use as a context manager (teardown on exit, error and signals)."""

    def __init__(
        self, tools: Tools, say: Callable[[str], None] = print, delay_line: str = "compiled"
    ) -> None:
        if delay_line not in DELAY_LINES:
            raise ValueError(f"delay line {delay_line!r}: expected one of {DELAY_LINES}")
        self.tools = tools
        self.say = say
        self.delay_line = delay_line  # which implementation forwards the packets (DELAY_LINES)
        self.state: st.LabState | None = None
        self.delayline_pid: int | None = None
        self.tgtd_pid: int | None = None
        self.params_file = st.STATE_DIR / "delayline.json"
        self.one_way_delay_ms = 0.0
        self.link_mbps = 1000.0
        self.jitter: dict[str, Any] | None = None  # the delay line's jitter object (None: fixed delay)
        self.target: TargetParams | None = None
        self.lun_file = LUN_FILE  # the file tgt serves as the LUN (a slow device's, lab.device_sweep)
        self.tgtd_env: dict[str, str] = {}  # environment tgtd starts with (lab.reads_sweep's allocator test)
        self._stack = contextlib.ExitStack()

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> Lab:
        self._stack.enter_context(st.signals_raise())
        try:
            self.up()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Tear down everything recorded (best effort, idempotent)."""
        if self.tgtd_pid is not None:
            self._stop_tgtd()
        for line in st.teardown():
            self.say(f"teardown: {line}")
        self._stack.close()

    def up(self, one_way_delay_ms: float = 0.0, link_mbps: float = 1000.0) -> None:
        """Namespaces, blackhole route, delay line, addresses, LUN file."""
        if os.geteuid() != 0:
            raise RuntimeError("the lab needs root (network namespaces)")
        prior = st.load_state()
        owner = int((prior or {}).get("owner_pid", 0))
        if owner and owner != os.getpid() and st.pid_alive(owner, None):
            raise RuntimeError(
                f"another lab run (pid {owner}) is using the lab; "
                "wait for it or run `iscsi-report lab teardown`"
            )
        stale = st.teardown()
        for line in stale:
            self.say(f"stale lab removed: {line}")
        self.state = st.LabState()
        if not st.blackhole_present():
            self.state.set_blackhole(True)
            self._ip(["route", "add", "blackhole", st.LAB_NET])
        for ns in (NS_INI, NS_TGT):
            if ns in st.lab_namespaces():
                raise RuntimeError(
                    f"namespace {ns} exists but is not recorded by the lab; "
                    f"remove it (ip netns del {ns}) if it is a leftover"
                )
            self.state.add_namespace(ns)
            self._ip(["netns", "add", ns])
            self._ip(["-n", ns, "link", "set", "lo", "up"])
        self.state.add_file(self.params_file)
        self._write_params(one_way_delay_ms, link_mbps)
        log = st.STATE_DIR / "delayline.log"
        self.state.add_file(log)
        self.delayline_pid = self.spawn(NS_INI, self.delay_line_cmd(), "delayline", log)
        _wait_for(lambda: "ready" in log.read_text(errors="replace"), 10, "the delay line")
        for ns, mine, peer in ((NS_INI, ADDR_INI, ADDR_TGT), (NS_TGT, ADDR_TGT, ADDR_INI)):
            self._ip(["-n", ns, "link", "set", TUN_DEV, "mtu", str(PATH_MTU_BYTES), "up"])
            self._ip(["-n", ns, "addr", "add", mine, "peer", peer, "dev", TUN_DEV])
            self._ip(
                [
                    "-n",
                    ns,
                    "route",
                    "replace",
                    f"{peer}/32",
                    "dev",
                    TUN_DEV,
                    "src",
                    mine,
                    "initcwnd",
                    str(TCP_INIT_WINDOW_SEGMENTS),
                    "initrwnd",
                    str(TCP_INIT_WINDOW_SEGMENTS),
                ]
            )
            for key, value in TCP_SYSCTLS.items():
                res = subprocess.run(
                    ["ip", "netns", "exec", ns, "sysctl", "-qw", f"{key}={value}"],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if res.returncode != 0:
                    raise RuntimeError(f"sysctl {key} in {ns}: {res.stderr.strip()}")
        self.state.add_file(LUN_FILE)
        with open(LUN_FILE, "wb") as fh:
            fh.truncate(LUN_BYTES)

    # -- processes -------------------------------------------------------------------------
    def spawn(
        self, ns: str, cmd: list[str], what: str, log: Path | None = None, own_mounts: bool = True
    ) -> int:
        """Start ``cmd`` in namespace ``ns`` in the background; record its PID.

        ``own_mounts=False`` enters the network namespace only (``nsenter --net``): ``ip netns
        exec`` gives each command a mount namespace of its own, so a FUSE mount made inside it
        would be invisible to tgtd (the slow device's daemon, which opens no socket).
        """
        assert self.state is not None and ns in (NS_INI, NS_TGT)
        enter = ["ip", "netns", "exec", ns] if own_mounts else ["nsenter", f"--net=/run/netns/{ns}"]
        out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
        try:
            proc = subprocess.Popen(
                [*enter, *cmd],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            if log:
                out.close()
        self.state.add_process(proc.pid, what)
        boost(proc.pid)
        self._procs = getattr(self, "_procs", {})
        self._procs[proc.pid] = proc
        return proc.pid

    def stop(self, pid: int, grace_s: float = 3.0) -> None:
        """Stop a process the lab started (by PID) and forget it."""
        assert self.state is not None
        rec = next((p for p in self.state.data["processes"] if p["pid"] == pid), None)
        st.stop_pid(pid, rec.get("start_ticks") if rec else None, grace_s)
        proc = getattr(self, "_procs", {}).pop(pid, None)
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1)
        self.state.drop_process(pid)

    def run(
        self, ns: str, cmd: list[str], timeout_s: float, what: str, stdout_path: Path | None = None
    ) -> subprocess.CompletedProcess:
        """Run ``cmd`` in ``ns`` to completion (PID recorded while it runs)."""
        assert self.state is not None and ns in (NS_INI, NS_TGT)
        out = open(stdout_path, "wb") if stdout_path else subprocess.PIPE  # noqa: SIM115
        try:
            proc = subprocess.Popen(
                ["ip", "netns", "exec", ns, *cmd],
                stdout=out,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            self.state.add_process(proc.pid, what)
            boost(proc.pid)
            try:
                stdout, stderr = proc.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                stdout, stderr = proc.communicate()
                raise RuntimeError(f"{what} timed out after {timeout_s} s: {' '.join(cmd)}") from None
            finally:
                self.state.drop_process(proc.pid)
        finally:
            if stdout_path:
                out.close()
        return subprocess.CompletedProcess(
            cmd,
            proc.returncode,
            stdout.decode(errors="replace") if stdout else "",
            stderr.decode(errors="replace") if stderr else "",
        )

    def _ip(self, args: list[str]) -> None:
        res = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise RuntimeError(f"ip {' '.join(args)}: {res.stderr.strip()}")

    # -- delay line ------------------------------------------------------------------------
    def delay_line_cmd(self) -> list[str]:
        """The command of this lab's delay line: the compiled program or the Python module."""
        program = (
            [str(self.tools.delayline)]
            if self.delay_line == "compiled"
            else [sys.executable, "-m", "iscsi_report.lab.delayline"]
        )
        return [*program, "--ns-b", NS_TGT, "--dev", TUN_DEV, "--params", str(self.params_file)]

    def _write_params(self, one_way_delay_ms: float, link_mbps: float) -> None:
        params: dict[str, Any] = {"one_way_delay_ms": one_way_delay_ms, "link_mbps": link_mbps}
        if self.jitter:
            params["jitter"] = self.jitter
        write_atomic(self.params_file, json.dumps(params))  # the delay line re-reads it on SIGHUP
        self.one_way_delay_ms, self.link_mbps = one_way_delay_ms, link_mbps

    def set_jitter(self, jitter: dict[str, Any] | None) -> None:
        """Per-packet jitter of the delay line (see lab.jitter), kept across later set_link calls."""
        if jitter and jitter.get("shape", "fixed") != "fixed" and self.delay_line != "python":
            raise ValueError(
                f"jitter shape {jitter.get('shape')!r} needs the Python delay line; "
                f"this lab runs the {self.delay_line} one (fixed delay only)"
            )
        self.jitter = jitter
        self.set_link(self.one_way_delay_ms, self.link_mbps)

    def set_link(self, one_way_delay_ms: float, link_mbps: float) -> None:
        """Change the delay line's one-way delay and rate (SIGHUP; takes effect at once)."""
        self._write_params(one_way_delay_ms, link_mbps)
        if self.delayline_pid is not None:
            os.kill(self.delayline_pid, 1)
            time.sleep(0.05)

    # -- target ----------------------------------------------------------------------------
    def tgtadm(self, *args: str) -> str:
        """Run tgtadm against the lab's tgtd (inside the target namespace)."""
        res = self.run(
            NS_TGT,
            [str(self.tools.tgtadm), "-C", str(TGT_CONTROL_PORT), "--lld", "iscsi", *args],
            20,
            "tgtadm",
        )
        if res.returncode != 0:
            raise RuntimeError(f"tgtadm {' '.join(args)}: {res.stdout}{res.stderr}".strip())
        return res.stdout

    def _stop_tgtd(self) -> None:
        if self.tgtd_pid is None:
            return
        with contextlib.suppress(Exception):
            self.run(
                NS_TGT,
                [str(self.tools.tgtadm), "-C", str(TGT_CONTROL_PORT), "--op", "delete", "--mode", "system"],
                5,
                "tgtadm",
            )
        self.stop(self.tgtd_pid, grace_s=1.0)
        self.tgtd_pid = None

    def start_target(self, params: TargetParams) -> None:
        """(Re)start tgtd with this R2T window and configure the target and its LUN."""
        assert self.state is not None
        self._stop_tgtd()
        if not TGT_SOCKET_DIR.exists():
            self.state.add_dir(TGT_SOCKET_DIR)
            TGT_SOCKET_DIR.mkdir(parents=True)
        for suffix in ("", ".lock"):
            self.state.add_file(f"{TGT_SOCKET_DIR}/socket.{TGT_CONTROL_PORT}{suffix}")
        log = st.STATE_DIR / "tgtd.log"
        self.state.add_file(log)
        env = ["env", *(f"{k}={v}" for k, v in sorted(self.tgtd_env.items()))] if self.tgtd_env else []
        self.tgtd_pid = self.spawn(
            NS_TGT,
            [
                *env,
                str(self.tools.tgtd),
                "-f",
                "-C",
                str(TGT_CONTROL_PORT),
                "--iscsi",
                f"portal={ADDR_TGT}:{ISCSI_PORT},r2t_window={params.r2t_window}",
            ],
            "tgtd",
            log,
        )
        sock = TGT_SOCKET_DIR / f"socket.{TGT_CONTROL_PORT}"
        _wait_for(sock.exists, 10, "tgtd's control socket")
        time.sleep(0.1)
        self.tgtadm("--op", "new", "--mode", "target", "--tid", "1", "-T", TARGET_IQN)
        self.tgtadm("--op", "new", "--mode", "logicalunit", "--tid", "1", "--lun", "1", "-b", self.lun_file)
        self.tgtadm("--op", "bind", "--mode", "target", "--tid", "1", "-I", ADDR_INI)
        self.target = None
        self.set_target_keys(params)

    def use_lun(self, path: str) -> None:
        """Serve ``path`` as the LUN from now on (tgtd restarts with it if it runs with another)."""
        if path == self.lun_file:
            return
        self.lun_file = path
        if self.tgtd_pid is not None and self.target is not None:
            self.start_target(self.target)
        elif self.tgtd_pid is not None:
            self._stop_tgtd()

    # -- slow devices (lab.device_sweep) ---------------------------------------------------
    def mount_slow_device(self, work: Path, mountpoint: Path) -> None:
        """Record and create a slow device's folder and mount point (under the lab's /dev/shm prefix)."""
        assert self.state is not None
        self.state.add_dir(work)
        self.state.add_mount(mountpoint)
        self.state.add_dir(mountpoint)
        mountpoint.mkdir(parents=True, exist_ok=True)
        self.state.add_file(work / "backing.img")
        self.state.add_file(work / "daemon.log")

    def unmount_slow_device(self, mountpoint: Path) -> None:
        """Unmount a slow device (its daemon then exits) and forget the mount."""
        assert self.state is not None
        if st.is_mounted(mountpoint):
            res = subprocess.run(
                ["fusermount3", "-u", str(mountpoint)], capture_output=True, text=True, check=False
            )
            if res.returncode != 0:
                subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True, check=False)
        self.state.drop_mount(mountpoint)

    def set_target_keys(self, params: TargetParams) -> None:
        """Offer these login keys from the next login on (restarting tgtd if the window changes)."""
        if self.tgtd_pid is None or (self.target and self.target.r2t_window != params.r2t_window):
            self.start_target(params)
            return
        for key, value in params.keys().items():
            if self.target is None or self.target.keys().get(key) != value:
                self.tgtadm(
                    "--op", "update", "--mode", "target", "--tid", "1", "--name", key, "--value", value
                )
        self.target = params

    # -- capture ---------------------------------------------------------------------------
    def start_capture(self, pcap: Path, ns: str = NS_INI) -> int:
        """dumpcap on ``ns``'s TUN device (the initiator's unless said), writing ``pcap``; its PID."""
        assert self.state is not None
        self.state.add_file(pcap)
        log = pcap.with_suffix(".log")
        self.state.add_file(log)
        log.write_bytes(b"")
        pid = self.spawn(ns, ["dumpcap", "-i", TUN_DEV, "-B", "64", "-w", str(pcap)], "dumpcap", log)
        _wait_for(lambda: "Capturing on" in log.read_text(errors="replace"), 15, "dumpcap")
        # "Capturing on" is printed before packets are really captured: probe with pings until
        # the capture file grows (the probes are ICMP, outside the iSCSI export)
        size0 = pcap.stat().st_size if pcap.exists() else 0
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            self.run(NS_INI, ["ping", "-n", "-c", "1", "-W", "1", ADDR_TGT], 5, "ping")
            time.sleep(0.2)
            if pcap.exists() and pcap.stat().st_size > size0:
                break
        else:
            self.say("warning: dumpcap's file did not grow after probe pings")
        return pid

    def stop_capture(self, pid: int) -> None:
        """Stop dumpcap (it closes its file on SIGTERM); first let it drain the kernel buffer."""
        time.sleep(0.8)
        self.stop(pid, grace_s=5.0)

    def export_capture(self, pcap: Path, fields: tuple[str, ...]) -> str:
        """tshark's field export (header line first) of the capture's iSCSI PDUs, as text."""
        cmd = [
            "tshark",
            "-n",
            "-r",
            str(pcap),
            "-Y",
            "iscsi",
            "-T",
            "fields",
            "-E",
            "header=y",
            "-E",
            "separator=/t",
            "-E",
            "occurrence=a",
            "-E",
            "aggregator=;",
        ]
        for f in fields:
            cmd += ["-e", f]
        res = self.run(NS_INI, cmd, 300, "tshark")
        if res.returncode != 0:
            raise RuntimeError(f"tshark export failed: {res.stderr.strip()[-500:]}")
        return res.stdout
