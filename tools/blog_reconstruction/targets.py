"""The blog's published figures that the reconstruction must reproduce, and the study's setup.

Source: /work/shared/seeds/002_622d3d8e8edc3cfb.txt (markdown-table copy 000_437e632f38637111.txt).
tests/test_reconstruct.py checks these against data/published/blog-2023.yaml, so the two cannot
drift apart silently.
"""

from __future__ import annotations

from dataclasses import dataclass

SEED = 20231231  # master seed: the blog's publication date
SOURCE = "002_622d3d8e8edc3cfb.txt"

KIB = 1024
MIB = 1024 * KIB

NAS_IP = "192.168.1.220"  # the iSCSI target, from the blog's libiscsi URL
ISCSI_PORT = 3260
TARGET_IQN = "iqn.2003-01.org.linux-iscsi.alarm.armv7l:sn.2a40443560f5"
INITIATOR_IP = {"wired": "192.168.1.105", "wireless": "192.168.1.132"}  # invented, private

FIO_VERSION_BLOCKDEV = "fio-3.30"  # block-device and local runs
FIO_VERSION_LIBISCSI = "fio-3.36-17"  # "built from sources fio-3.36-17" (git hash unknown)
FIO_RUNTIME_S = 60
FIO_SIZE = "5G"

BLOCK_SIZES = ("64k", "128k", "256k", "512k", "1M", "2M")
BS_BYTES = {
    "64k": 64 * KIB,
    "128k": 128 * KIB,
    "256k": 256 * KIB,
    "512k": 512 * KIB,
    "1M": MIB,
    "2M": 2 * MIB,
}


@dataclass(frozen=True)
class RttTarget:
    """One row of the blog's latency table (ms, except cv_pct)."""

    mean_ms: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    sstdev_ms: float
    cv_pct: float


LATENCY: dict[tuple[str, float], RttTarget] = {
    ("wired", 1.0): RttTarget(0.31, 0.32, 0.54, 0.90, 0.06, 19.5),
    ("wireless", 1.0): RttTarget(5.50, 4.42, 34.61, 299, 12.95, 234.5),
    ("wired", 0.002): RttTarget(0.22, 0.18, 0.35, 0.77, 0.05, 22.7),
    ("wireless", 0.002): RttTarget(2.95, 2.64, 7.63, 133, 3.32, 112.5),
}
PING_DURATION_S = 15 * 60

IPERF3_MBIT_PER_S = {"wireless": 600.0, "wired": 930.0}


@dataclass(frozen=True)
class FioCell:
    """A published (MiB/s, IOPS[, CPU%]) cell; ``mib_decimals`` is how many decimals were printed."""

    mib_per_s: float
    iops: int
    mib_decimals: int
    cpu_pct: float | None = None


def _cells(spec: dict[str, tuple]) -> dict[str, FioCell]:
    """Build FioCell entries from (mib, iops[, cpu]) tuples, taking decimals from the text."""
    out = {}
    for bs, t in spec.items():
        text = t[0]
        decimals = len(text.split(".")[1]) if "." in text else 0
        out[bs] = FioCell(float(text), t[1], decimals, t[2] if len(t) > 2 else None)
    return out


FIO_LOCAL_HDD = _cells(
    {"64k": ("128", 2055), "128k": ("135", 1082), "256k": ("137", 546),
     "512k": ("137", 273), "1M": ("136", 136), "2M": ("136", 67)}
)  # fmt: skip
FIO_LOCAL_SSD = _cells(
    {"64k": ("329", 5268), "128k": ("348", 2786), "256k": ("359", 1434),
     "512k": ("363", 726), "1M": ("360", 360), "2M": ("354", 176)}
)  # fmt: skip
FIO_LIBISCSI_HDD = _cells(
    {"64k": ("18.3", 292, 7), "128k": ("17", 138, 7), "256k": ("24.4", 97, 8),
     "512k": ("28.7", 57, 10), "1M": ("30.8", 30, 12), "2M": ("33.1", 16, 14)}
)  # fmt: skip
FIO_BLOCKDEV_HDD = _cells(
    {"64k": ("15.5", 237), "128k": ("15.1", 121), "256k": ("22.6", 90),
     "512k": ("27.5", 54), "1M": ("30.1", 30), "2M": ("31.0", 15)}
)  # fmt: skip
FIO_BLOCKDEV_SSD = _cells(
    {"64k": ("13.7", 219), "128k": ("14.8", 118), "256k": ("21.8", 87),
     "512k": ("29.3", 58), "1M": ("33.4", 33), "2M": ("34.5", 17)}
)  # fmt: skip


@dataclass(frozen=True)
class ValidationRun:
    """One of the six 2M validation runs of the projection table (actual MiB/s as published)."""

    network: str
    device: str
    max_outstanding_r2t: int
    mib_per_s: float


VALIDATION_RUNS = (
    ValidationRun("wireless", "hdd", 1, 31.0),  # same measurement as block-dev HDD 2M
    ValidationRun("wired", "hdd", 1, 62.0),
    ValidationRun("wired", "ssd", 1, 72.0),
    ValidationRun("wireless", "hdd", 16, 42.0),
    ValidationRun("wired", "hdd", 16, 70.0),
    ValidationRun("wired", "ssd", 16, 82.0),
)

# The iostat excerpt of the blog (target side, wireless HDD, 2M writes, sdb is the HDD).
IOSTAT_EXCERPT = {
    "w_per_s": 30.0,
    "wkB_per_s": 30720.0,
    "w_await_ms": 6.70,
    "wareq_sz_kB": 1024.0,
    "aqu_sz": 0.20,
    "util_pct": 18.0,
}

# The blog's default "parameters" table of the LIO target (values exactly as printed).
LIO_DEFAULT_PARAMETERS: dict[str, str | int] = {
    "AuthMethod": "CHAP,None",
    "DataDigest": "CRC32C,None",
    "DataPDUInOrder": "Yes",
    "DataSequenceInOrder": "Yes",
    "DefaultTime2Retain": 20,
    "DefaultTime2Wait": 2,
    "ErrorRecoveryLevel": 0,
    "FirstBurstLength": 65536,
    "HeaderDigest": "CRC32C,None",
    "IFMarkInt": "Reject",
    "IFMarker": "No",
    "ImmediateData": "Yes",
    "InitialR2T": "No",
    "MaxBurstLength": 262144,
    "MaxConnections": 1,
    "MaxOutstandingR2T": 1,
    "MaxRecvDataSegmentLength": 8192,
    "MaxXmitDataSegmentLength": 262144,
    "OFMarkInt": "Reject",
    "OFMarker": "No",
    "TargetAlias": "LIO Target",
}
R2T_BURST = 16  # the MaxOutstandingR2T of the blog's "Reducing R2T latency" runs

_BS_LABEL = {"64k": "64k", "128k": "128k", "256k": "256k", "512k": "512k", "1M": "1m", "2M": "2m"}
_FIO_TABLES = (
    ("fio.local.hdd", FIO_LOCAL_HDD),
    ("fio.local.ssd", FIO_LOCAL_SSD),
    ("fio.wireless.libiscsi_hdd", FIO_LIBISCSI_HDD),
    ("fio.wireless.blockdev_hdd", FIO_BLOCKDEV_HDD),
    ("fio.wireless.blockdev_ssd", FIO_BLOCKDEV_SSD),
)
# Published numbers the blog derived from a single generation target by its own arithmetic (a
# copy, a unit change, 1000 / IOPS, RTT / 2): recomputing them from the files only replays that
# arithmetic on a value the generator was told to hit.
_DERIVED_FROM_ONE_TARGET = (
    "latency.wireless_1s.upper_mode_ms",  # the mixture puts its upper mode near 4 ms on purpose
    "latency.wireless_initial_estimate_ms",  # read as the wireless 1 s median
    "intro.observed_mib_per_s",  # block-dev HDD 1M cell
    "discussion.end_to_end_iops_2m",  # block-dev HDD 2M cell
    "discussion.hdd_raw_iops_2m",  # local HDD 2M cell
    "discussion.cpu_pct_2m",  # libiscsi 2M CPU cell
    "model.cpu_pct_ref",  # libiscsi 1M CPU cell
    "model.cpu_ref_iops",  # libiscsi 1M IOPS cell
    "model.hdd.iops_1m",  # local HDD 1M cell
    "model.hdd.io_1m_ms",  # 1000 / local HDD 1M IOPS
    *(f"projection.r2t{m}.{k}_hdd.io_lat_ms" for m in (1, 16) for k in ("wireless", "wired")),
)


def published_target_ids() -> list[str]:
    """Ids in data/published/blog-2023.yaml that the generator reproduces by construction."""
    ids = [f"latency.{net}_{'1s' if iv == 1.0 else '2ms'}.{stat}" for net, iv in LATENCY
           for stat in ("mean_ms", "p50_ms", "p99_ms", "max_ms", "sstdev_ms", "cv_pct")]  # fmt: skip
    ids += [f"network.iperf3.{net}_mbit_per_s" for net in IPERF3_MBIT_PER_S]
    for prefix, table in _FIO_TABLES:
        for bs, cell in table.items():
            ids += [f"{prefix}.{_BS_LABEL[bs]}.mib_per_s", f"{prefix}.{_BS_LABEL[bs]}.iops"]
            ids += [f"{prefix}.{_BS_LABEL[bs]}.cpu_pct"] if cell.cpu_pct is not None else []
    for v in VALIDATION_RUNS:
        ids.append(f"projection.r2t{v.max_outstanding_r2t}.{v.network}_{v.device}.actual_mib_per_s")
        if v.network == "wireless":
            ids.append(f"model.r2t{v.max_outstanding_r2t}.wireless_hdd.actual_mib_per_s")
    ids += [f"iostat.excerpt.{k}" for k in IOSTAT_EXCERPT]
    return sorted({*ids, *_DERIVED_FROM_ONE_TARGET})
