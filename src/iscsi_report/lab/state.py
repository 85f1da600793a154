"""What the lab started, in a state file, so teardown removes exactly that and nothing else.

Every resource is recorded *before* it is created (namespaces, the blackhole route, files) or
right after (processes, with their start time so a reused PID is never signalled). Teardown
reads the file, stops the recorded processes by PID, deletes the recorded namespaces and files,
removes the blackhole route only if the lab added it, and deletes the state file.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from iscsi_report.core.atomic import write_atomic

STATE_DIR = Path(os.environ.get("ISCSI_REPORT_LAB_STATE_DIR", "/run/iscsi-report-lab"))
STATE_FILE = STATE_DIR / "state.json"
NS_PREFIX = "iscsilab-"
SHM_PREFIX = "/dev/shm/iscsilab-"
LAB_NET = "198.18.0.0/15"  # RFC 2544 benchmarking range
# teardown removes recorded files only under these prefixes (never anything else)
REMOVABLE_PREFIXES = (SHM_PREFIX, f"{STATE_DIR}/", "/run/tgtd/socket.")


def _empty() -> dict[str, Any]:
    return {
        "namespaces": [],
        "blackhole_added": False,
        "processes": [],
        "files": [],
        "dirs": [],
        "owner_pid": os.getpid(),
    }


def load_state() -> dict[str, Any] | None:
    """The recorded state, or None when no lab is recorded."""
    try:
        return json.loads(STATE_FILE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except json.JSONDecodeError:
        return _empty()


def _save(state: dict[str, Any]) -> None:
    """Write the state file atomically: a teardown never reads half of it."""
    write_atomic(STATE_FILE, json.dumps(state, indent=1))


def proc_start_ticks(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (start time in clock ticks), None if the PID is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return int(raw.rsplit(")", 1)[1].split()[19])


def pid_alive(pid: int, start_ticks: int | None) -> bool:
    """True when PID exists, is not a zombie and is the same process that was recorded."""
    ticks = proc_start_ticks(pid)
    if ticks is None or (start_ticks is not None and ticks != start_ticks):
        return False
    try:
        status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return status != "Z"


class LabState:
    """The live record: mutate through these methods only (each change is saved at once)."""

    def __init__(self) -> None:
        self.data = load_state() or _empty()
        self.data["owner_pid"] = os.getpid()
        _save(self.data)

    def add_namespace(self, name: str) -> None:
        """Record a namespace about to be created."""
        if not name.startswith(NS_PREFIX):
            raise ValueError(f"lab namespaces must start with {NS_PREFIX!r}: {name}")
        if name not in self.data["namespaces"]:
            self.data["namespaces"].append(name)
            _save(self.data)

    def set_blackhole(self, added: bool) -> None:
        """Record whether the lab added the root namespace's blackhole route."""
        self.data["blackhole_added"] = added
        _save(self.data)

    def add_file(self, path: str | Path) -> None:
        """Record a file the lab is about to create (removed at teardown)."""
        if str(path) not in self.data["files"]:
            self.data["files"].append(str(path))
            _save(self.data)

    def add_dir(self, path: str | Path) -> None:
        """Record a directory the lab is about to create (removed at teardown if empty)."""
        if str(path) not in self.data.setdefault("dirs", []):
            self.data["dirs"].append(str(path))
            _save(self.data)

    def add_mount(self, path: str | Path) -> None:
        """Record a mount point the lab is about to mount (a slow device: lazily unmounted at teardown)."""
        if not str(path).startswith(SHM_PREFIX):
            raise ValueError(f"lab mount points must be under {SHM_PREFIX!r}: {path}")
        if str(path) not in self.data.setdefault("mounts", []):
            self.data["mounts"].append(str(path))
            _save(self.data)

    def drop_mount(self, path: str | Path) -> None:
        """Forget a mount point that was unmounted."""
        self.data["mounts"] = [m for m in self.data.get("mounts", []) if m != str(path)]
        _save(self.data)

    def add_process(self, pid: int, what: str) -> None:
        """Record a process the lab started."""
        self.data["processes"].append({"pid": pid, "start_ticks": proc_start_ticks(pid), "what": what})
        _save(self.data)

    def drop_process(self, pid: int) -> None:
        """Forget a process that has exited."""
        self.data["processes"] = [p for p in self.data["processes"] if p["pid"] != pid]
        _save(self.data)


def stop_pid(pid: int, start_ticks: int | None, grace_s: float = 3.0) -> bool:
    """SIGTERM, then SIGKILL after ``grace_s``, one recorded process; True if it is gone."""
    if not pid_alive(pid, start_ticks):
        return True
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 2.0)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)  # reap if it is our child
            if not pid_alive(pid, start_ticks):
                return True
            time.sleep(0.05)
    return not pid_alive(pid, start_ticks)


def is_mounted(path: str | Path) -> bool:
    """True when ``path`` is a mount point of this mount namespace (/proc/self/mounts)."""
    lines = Path("/proc/self/mounts").read_text(encoding="utf-8").splitlines()
    return any(len(parts) > 1 and parts[1] == str(path) for parts in (line.split() for line in lines))


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def lab_namespaces() -> list[str]:
    """Namespaces on this machine whose name has the lab prefix."""
    out = _run(["ip", "netns", "list"]).stdout
    return [
        line.split()[0] for line in out.splitlines() if line.strip() and line.split()[0].startswith(NS_PREFIX)
    ]


def blackhole_present() -> bool:
    """True when the root namespace routes the lab range to a blackhole."""
    out = _run(["ip", "route", "show", "type", "blackhole"]).stdout
    return any(line.split()[:2] == ["blackhole", LAB_NET] for line in out.splitlines())


def teardown(log: Any = None) -> list[str]:
    """Remove everything recorded in the state file (best effort); return what was done."""
    done: list[str] = []
    state = load_state()
    if state is None:
        return done
    say = log or (lambda _msg: None)
    for proc in reversed(state.get("processes", [])):
        pid, ticks = int(proc["pid"]), proc.get("start_ticks")
        if pid_alive(pid, ticks):
            ok = stop_pid(pid, ticks)
            done.append(f"stopped {proc.get('what', '?')} pid {pid}" + ("" if ok else " (FAILED)"))
    for path in state.get("mounts", []):
        if str(path).startswith(SHM_PREFIX) and is_mounted(path):
            res = _run(["umount", "-l", str(path)])
            done.append(f"unmounted {path}" + ("" if res.returncode == 0 else f" ({res.stderr.strip()})"))
    for path in state.get("files", []):
        if str(path).startswith(REMOVABLE_PREFIXES):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
                done.append(f"removed {path}")
    for ns in state.get("namespaces", []):
        if ns.startswith(NS_PREFIX) and ns in lab_namespaces():
            res = _run(["ip", "netns", "del", ns])
            done.append(f"deleted netns {ns}" + ("" if res.returncode == 0 else f" ({res.stderr.strip()})"))
    if state.get("blackhole_added") and blackhole_present():
        _run(["ip", "route", "del", "blackhole", LAB_NET])
        done.append(f"removed blackhole route {LAB_NET}")
    for path in reversed(state.get("dirs", [])):  # a folder inside another was recorded after it
        with contextlib.suppress(OSError):
            os.rmdir(path)
            done.append(f"removed {path}/")
    with contextlib.suppress(FileNotFoundError):
        STATE_FILE.unlink()
    with contextlib.suppress(OSError):
        STATE_DIR.rmdir()
    for line in done:
        say(line)
    return done


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Within the block, SIGTERM/SIGHUP raise SystemExit (SIGINT raises KeyboardInterrupt)."""

    def _raise(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    signal.signal(signal.SIGTERM, _raise)
    signal.signal(signal.SIGHUP, _raise)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
