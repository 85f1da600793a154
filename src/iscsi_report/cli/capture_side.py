"""Which side a capture runs on, from where fio writes: ``iscsi-report capture`` infers ``--side``.

fio writing over iSCSI (``ioengine=libiscsi``, an ``iscsi:`` filename, a ``/dev/disk/by-path``
name with ``iscsi`` in it, or a disk whose sysfs path lies under an iSCSI session) runs on the
initiator; fio writing to a file or a block device that is none of these runs on the device itself
(local). When this host cannot tell (the device does not exist here), the capture refuses and asks
for ``--side``. The target side only samples iostat and is never inferred.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

INITIATOR, LOCAL = "initiator", "local"
ISCSI_ENGINE = "libiscsi"
BY_PATH = "disk/by-path"  # under /dev: udev's names, "ip-10.0.0.9:3260-iscsi-iqn...-lun-0" for iSCSI
SESSION_PART = "session"  # an iSCSI disk's sysfs path: .../host2/session1/target2:0:0/2:0:0:0/block/sdb


@dataclass(frozen=True)
class Inferred:
    """The side inferred (None: cannot tell) and the reason, shown in the plan or the refusal."""

    side: str | None
    reason: str


@dataclass(frozen=True)
class Host:
    """Where to look on this host: /dev and /sys (a test points them at a fake tree)."""

    dev: Path = Path("/dev")
    sys: Path = Path("/sys")


def infer(ioengine: str, target: str | None, filename: str | None, host: Host | None = None) -> Inferred:
    """The side fio's destination implies; network-only captures run on the initiator."""
    host = host or Host()
    if ioengine.lower() == ISCSI_ENGINE:
        return Inferred(INITIATOR, f"fio's ioengine {ISCSI_ENGINE} writes over iSCSI")
    where = target or filename
    if where is None:
        return Inferred(INITIATOR, "ping and iperf3 only, from this host to --host (the initiator's view)")
    if where.lower().startswith("iscsi:"):
        return Inferred(INITIATOR, f"fio writes to the iSCSI URL {where}")
    if target is not None:
        return _block_device(target, host)
    return _file(where, host)


def _block_device(device: str, host: Host) -> Inferred:
    """A block device: iSCSI by its udev name or its sysfs path, else local; unknown if absent."""
    path = Path(device)
    if _iscsi_name(path, host):
        return Inferred(INITIATOR, f"{device} is an iSCSI disk (its /dev/{BY_PATH} name)")
    if not path.exists():
        return Inferred(None, f"{device} does not exist on this host, so it cannot tell local from iSCSI")
    if _under_session(host.sys / "class" / "block" / path.resolve().name):
        return Inferred(INITIATOR, f"{device} is an iSCSI disk (it sits under an iSCSI session in sysfs)")
    return Inferred(LOCAL, f"{device} is a block device of this host, not an iSCSI disk")


def _file(filename: str, host: Host) -> Inferred:
    """A file: on an iSCSI disk's file system the initiator, else local."""
    folder = _existing_parent(Path(filename).resolve())
    st_dev = folder.stat().st_dev
    block = host.sys / "dev" / "block" / f"{os.major(st_dev)}:{os.minor(st_dev)}"
    if _under_session(block):
        return Inferred(INITIATOR, f"{filename} is on a file system of an iSCSI disk")
    return Inferred(LOCAL, f"fio writes to the file {filename}, on a file system of this host")


def _existing_parent(path: Path) -> Path:
    """``path`` or its nearest existing parent (the file fio creates may not exist yet)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _iscsi_name(device: Path, host: Host) -> bool:
    """True when the device is named, or linked from, /dev/disk/by-path with 'iscsi' in the name."""
    if BY_PATH in device.as_posix() and "iscsi" in device.name.lower():
        return True
    by_path = host.dev / BY_PATH
    if not device.exists() or not by_path.is_dir():
        return False
    real = device.resolve()
    return any("iscsi" in link.name.lower() and link.resolve() == real for link in by_path.iterdir())


def _under_session(sys_path: Path) -> bool:
    """True when the sysfs entry of a block device (or partition) lies under an iSCSI session."""
    if not sys_path.exists():
        return False
    return any(part.startswith(SESSION_PART) for part in sys_path.resolve().parts)


def check(given: str | None, inferred: Inferred) -> tuple[str | None, str]:
    """The side to record, or (None, why) when it is ambiguous or contradicts fio's destination."""
    if given is None:
        if inferred.side is None:
            return None, f"cannot infer the side: {inferred.reason}; pass --side initiator|local|target"
        return inferred.side, ""
    if given == "target" or inferred.side is None or given == inferred.side:
        return given, ""
    return None, (
        f"--side {given} contradicts where fio writes ({inferred.reason}: side {inferred.side}); "
        "fix --side or the destination"
    )
