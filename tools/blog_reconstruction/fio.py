"""fio JSON files of every run the blog reports: local sg, wireless libiscsi/block device, 2M checks.

Per run the published (MiB/s, IOPS) cell fixes the underlying IOPS (see :func:`choose_iops`);
everything else is derived so the file is internally consistent the way fio's own is:

* ``total_ios`` and ``runtime`` (ms): remote runs stop at ``runtime=60`` (throughput below
  5 GiB / 60 s); local runs write the whole ``size=5G`` and their runtime follows from the IOPS;
  ``bw_bytes = io_bytes * 1000 // runtime`` and ``iops = total_ios * 1000 / runtime`` as in fio;
* per-I/O latencies are seeded log-normal draws (integer arithmetic, see ``exact``) rescaled so
  that, at queue depth 1, they fill the runtime (mean latency = runtime / total_ios minus a small
  per-I/O gap);
* bandwidth/IOPS samples are per 500 ms window (fio's default ``bw_avg_time``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from blog_reconstruction import exact, fiojson
from blog_reconstruction import targets as T

NS_PER_MS = 1_000_000
MS_PER_S = 1000
BW_AVG_TIME_MS = 500  # fio's default bw_avg_time / iops_avg_time
SIZE_BYTES = 5 * 1024**3  # size=5G
IDLE_GAP_NUMERATOR, IDLE_GAP_DENOMINATOR = 2, 1000  # share of the runtime fio spends between I/Os
IDLE_GAP_FRACTION = IDLE_GAP_NUMERATOR / IDLE_GAP_DENOMINATOR


@dataclass(frozen=True)
class FioRun:
    """One fio run: what it measured, which published cell it reproduces, where it is written."""

    scenario: str  # local-sg | iscsi-libiscsi | iscsi-blockdev
    network: str  # local | wired | wireless
    device: str  # hdd | ssd
    bs: str
    cell: T.FioCell
    start: datetime
    max_outstanding_r2t: int | None = None
    validation: bool = False
    lat_sigma_ln: float = 0.1  # spread of per-I/O latency

    @property
    def bs_bytes(self) -> int:
        return T.BS_BYTES[self.bs]

    @property
    def engine(self) -> str:
        return {"local-sg": "sg", "iscsi-libiscsi": "libiscsi", "iscsi-blockdev": "psync"}[self.scenario]

    @property
    def run_id(self) -> str:
        kind = {"local-sg": "local", "iscsi-libiscsi": "libiscsi", "iscsi-blockdev": "blockdev"}
        net = "" if self.network == "local" else f"-{self.network}"
        r2t = f"-r2t{self.max_outstanding_r2t}" if self.max_outstanding_r2t == T.R2T_BURST else ""
        return f"{kind[self.scenario]}{net}-{self.device}-{self.bs.lower()}{r2t}"

    @property
    def path(self) -> str:
        return f"fio/{self.run_id}.json"

    @property
    def fio_version(self) -> str:
        if self.scenario == "iscsi-libiscsi":
            return T.FIO_VERSION_LIBISCSI
        return T.FIO_VERSION_BLOCKDEV

    @property
    def iscsi_parameters(self) -> str | None:
        if self.scenario == "local-sg":
            return None
        return "lio-r2t16" if self.max_outstanding_r2t == T.R2T_BURST else "lio-default"

    def labels(self) -> dict[str, Any]:
        """Manifest labels (the keys the loader relies on)."""
        out: dict[str, Any] = {
            "scenario": self.scenario,
            "network": self.network,
            "device": self.device,
            "engine": self.engine,
            "bs_bytes": self.bs_bytes,
        }
        if self.scenario != "local-sg":
            out["max_outstanding_r2t"] = self.max_outstanding_r2t
            out["iscsi_parameters"] = self.iscsi_parameters
        out["validation"] = self.validation
        out["run"] = self.run_id
        return out


@dataclass(frozen=True)
class IopsChoice:
    """The underlying IOPS picked for a published cell, and how the cell was read."""

    iops: float
    reading: str  # "MiB/s" or "MB/s": which unit the published bandwidth matches
    conflict: str  # empty when both published numbers hold as printed


def _interval(cell: T.FioCell, bs_bytes: int, unit_bytes: float) -> tuple[float, float] | None:
    """IOPS range where floor(iops) is the published IOPS and bw rounds to the published value."""
    half = 0.5 * 10.0 ** (-cell.mib_decimals)
    lo = max(cell.iops, (cell.mib_per_s - half) * unit_bytes / bs_bytes)
    hi = min(cell.iops + 1, (cell.mib_per_s + half) * unit_bytes / bs_bytes)
    return (lo, hi) if lo < hi else None


def choose_iops(cell: T.FioCell, bs_bytes: int) -> IopsChoice:
    """Mid-point of the IOPS range consistent with both numbers (MiB/s first, then fio's MB/s)."""
    iv = _interval(cell, bs_bytes, T.MIB)
    if iv:
        return IopsChoice((iv[0] + iv[1]) / 2, "MiB/s", "")
    iv = _interval(cell, bs_bytes, 1e6)
    if iv:
        mib = (iv[0] + iv[1]) / 2 * bs_bytes / T.MIB
        note = (
            f"{cell.mib_per_s}/{cell.iops}: {cell.iops} x {bs_bytes // T.KIB} KiB = "
            f"{cell.iops * bs_bytes / T.MIB:.2f} MiB/s; {cell.mib_per_s} is the decimal MB/s fio "
            f"prints beside MiB/s, so bw is {mib:.2f} MiB/s"
        )
        return IopsChoice((iv[0] + iv[1]) / 2, "MB/s", note)
    raise ValueError(f"no IOPS satisfies {cell}; add an explicit rule")


def _validation_cell(v: T.ValidationRun) -> T.FioCell:
    """A 2M validation run publishes MiB/s only; IOPS is MiB/s / 2 (floored)."""
    return T.FioCell(v.mib_per_s, math.floor(v.mib_per_s * T.MIB / T.BS_BYTES["2M"]), 0)


def all_runs() -> list[FioRun]:
    """Every fio run of the dataset, in a fixed order."""
    runs: list[FioRun] = []
    day = {"local": 2, "libiscsi": 9, "blockdev-hdd": 10, "blockdev-ssd": 16, "wired": 23}
    for i, bs in enumerate(T.BLOCK_SIZES):
        for dev, table, sigma in (("hdd", T.FIO_LOCAL_HDD, 0.04), ("ssd", T.FIO_LOCAL_SSD, 0.06)):
            start = datetime(2023, 12, day["local"], 10 + (dev == "ssd") * 3, 5 * i, tzinfo=UTC)
            runs.append(FioRun("local-sg", "local", dev, bs, table[bs], start, lat_sigma_ln=sigma))
    for i, bs in enumerate(T.BLOCK_SIZES):
        start = datetime(2023, 12, day["libiscsi"], 15, 3 * i, tzinfo=UTC)
        runs.append(
            FioRun("iscsi-libiscsi", "wireless", "hdd", bs, T.FIO_LIBISCSI_HDD[bs], start,
                   max_outstanding_r2t=1, lat_sigma_ln=0.3)
        )  # fmt: skip
    for dev, table in (("hdd", T.FIO_BLOCKDEV_HDD), ("ssd", T.FIO_BLOCKDEV_SSD)):
        for i, bs in enumerate(T.BLOCK_SIZES):
            start = datetime(2023, 12, day[f"blockdev-{dev}"], 16, 3 * i, tzinfo=UTC)
            is_check = dev == "hdd" and bs == "2M"  # the wireless HDD R2T=1 validation run
            runs.append(
                FioRun("iscsi-blockdev", "wireless", dev, bs, table[bs], start,
                       max_outstanding_r2t=1, validation=is_check, lat_sigma_ln=0.3)
            )  # fmt: skip
    for i, v in enumerate(T.VALIDATION_RUNS):
        if v.network == "wireless" and v.max_outstanding_r2t == 1:
            continue  # same measurement as block-dev HDD 2M above
        start = datetime(2023, 12, day["wired"], 11, 4 * i, tzinfo=UTC)
        sigma = 0.3 if v.network == "wireless" else 0.12
        runs.append(
            FioRun("iscsi-blockdev", v.network, v.device, "2M", _validation_cell(v), start,
                   max_outstanding_r2t=v.max_outstanding_r2t, validation=True, lat_sigma_ln=sigma)
        )  # fmt: skip
    return runs


def _counts(run: FioRun, iops: float) -> tuple[int, int]:
    """(total_ios, runtime_ms): 60 s time limit for slow runs, the whole 5 GiB for fast ones."""
    if iops * run.bs_bytes * T.FIO_RUNTIME_S < SIZE_BYTES:
        runtime_ms = T.FIO_RUNTIME_S * MS_PER_S + 1  # fio stops at the first I/O past 60 s
        return round(iops * runtime_ms / MS_PER_S), runtime_ms
    total = SIZE_BYTES // run.bs_bytes
    return total, round(total * MS_PER_S / iops)


def _fit_runtime(run: FioRun, choice: IopsChoice) -> tuple[int, int]:
    """Counts whose printed iops/bw still satisfy the published cell (nudging by 1 I/O or 1 ms)."""
    total, runtime_ms = _counts(run, choice.iops)
    unit = T.MIB if choice.reading == "MiB/s" else 1e6
    for d_total in (0, 1, -1, 2, -2):
        for d_rt in (0, 1, -1, 2, -2, 3, -3):
            t, r = total + d_total, runtime_ms + d_rt
            iops = t * MS_PER_S / r
            bw = (t * run.bs_bytes * MS_PER_S // r) / unit
            if math.floor(iops) == run.cell.iops and round(bw, run.cell.mib_decimals) == round(
                run.cell.mib_per_s, run.cell.mib_decimals
            ):
                return t, r
    raise ValueError(f"{run.path}: cannot hit {run.cell} with whole I/Os and milliseconds")


SPIKE_PER_MILLE = 3  # rare slow I/Os (retransmits, head seeks)
SPIKE_FACTOR_PER_MILLE = (2000, 6000)  # a spike multiplies the latency by 2.000 .. 5.999


def _latencies_ns(run: FioRun, rng: np.random.Generator, total: int, runtime_ms: int) -> np.ndarray:
    """Per-I/O completion latency (ns): log-normal shape, mean filling the runtime at QD1.

    Integer arithmetic only (exp from a Decimal table), so the bytes do not depend on the float build.
    """
    shape = exact.lognormal_shape(rng, str(run.lat_sigma_ln), total)
    spikes = rng.integers(0, 1000, size=total) < SPIKE_PER_MILLE
    factor = rng.integers(*SPIKE_FACTOR_PER_MILLE, size=int(spikes.sum()))
    shape[spikes] = shape[spikes] * factor // 1000
    busy_ns = runtime_ms * NS_PER_MS * (IDLE_GAP_DENOMINATOR - IDLE_GAP_NUMERATOR)
    return _rescale(shape, busy_ns, IDLE_GAP_DENOMINATOR)


def _rescale(shape: np.ndarray, numerator: int, denominator: int) -> np.ndarray:
    """round(shape_i * numerator / (denominator * sum(shape))), exactly, half up."""
    den = denominator * int(shape.sum())
    return np.array([(2 * int(x) * numerator + den) // (2 * den) for x in shape], dtype=np.int64)


def _window_samples(
    run: FioRun, rng: np.random.Generator, lat_ns: np.ndarray, runtime_ms: int
) -> dict[str, Any]:
    """bw (KiB/s) and IOPS statistics over 500 ms windows, as fio's bw_* / iops_* fields."""
    done_ms = completion_times_ms(lat_ns)
    n_windows = runtime_ms // BW_AVG_TIME_MS
    counts = np.bincount(
        np.minimum((done_ms // BW_AVG_TIME_MS).astype(int), n_windows), minlength=n_windows + 1
    )[:n_windows]
    bw = counts * (run.bs_bytes // T.KIB) * MS_PER_S // BW_AVG_TIME_MS
    iops = counts * MS_PER_S // BW_AVG_TIME_MS
    return {
        "bw_min": int(bw.min()),
        "bw_max": int(bw.max()),
        "bw_agg": 100.0,
        "bw_mean": float(bw.mean()),
        "bw_dev": float(bw.std(ddof=1)),
        "bw_samples": int(n_windows),
        "iops_min": int(iops.min()),
        "iops_max": int(iops.max()),
        "iops_mean": float(iops.mean()),
        "iops_stddev": float(iops.std(ddof=1)),
        "iops_samples": int(n_windows),
    }


def _idle_direction() -> dict[str, Any]:
    """The all-zero block fio prints for read and trim in a write-only job."""
    block: dict[str, Any] = {
        "io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0,
        "total_ios": 0, "short_ios": 0, "drop_ios": 0,
        "slat_ns": fiojson.empty_latency(), "clat_ns": fiojson.empty_latency(),
        "lat_ns": fiojson.empty_latency(),
        "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0, "bw_samples": 0,
        "iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0, "iops_samples": 0,
    }  # fmt: skip
    return block


def _write_direction(run: FioRun, rng: np.random.Generator) -> tuple[dict[str, Any], np.ndarray]:
    """The ``write`` block and the per-I/O total latencies (for the latency_* maps)."""
    choice = choose_iops(run.cell, run.bs_bytes)
    total, runtime_ms = _fit_runtime(run, choice)
    lat = _latencies_ns(run, rng, total, runtime_ms)
    async_engine = run.engine == "libiscsi"
    slat = rng.integers(9_000, 30_000, size=total) if async_engine else None
    overhead = slat if slat is not None else rng.integers(15_000, 40_000, size=total)
    clat = lat - overhead
    io_bytes = total * run.bs_bytes
    bw_bytes = io_bytes * MS_PER_S // runtime_ms
    block: dict[str, Any] = {
        "io_bytes": io_bytes,
        "io_kbytes": io_bytes >> 10,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes // T.KIB,
        "iops": total * MS_PER_S / runtime_ms,
        "runtime": runtime_ms,
        "total_ios": total,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": (
            fiojson.latency_stats(slat, with_percentiles=False)
            if slat is not None
            else fiojson.empty_latency()
        ),
        "clat_ns": fiojson.latency_stats(clat, with_percentiles=True),
        "lat_ns": fiojson.latency_stats(lat, with_percentiles=False),
    }
    block.update(_window_samples(run, rng, lat, runtime_ms))
    return block, lat


def job_options(run: FioRun) -> dict[str, str]:
    """The job file options in file order (fio leaves ``group_reporting`` out of the JSON)."""
    opts = {"rw": "write", "size": T.FIO_SIZE, "direct": "1", "numjobs": "1",
            "name": "sequential-write-direct", "bs": run.bs, "sync": "0",
            "runtime": str(T.FIO_RUNTIME_S)}  # fmt: skip
    if run.scenario == "iscsi-libiscsi":
        opts["ioengine"] = "libiscsi"
        iqn = T.TARGET_IQN.replace(":", "\\:")  # the blog's job file escapes every colon
        opts["filename"] = f"iscsi\\://{T.NAS_IP}\\:{T.ISCSI_PORT}/{iqn}/0"
    elif run.scenario == "local-sg":
        opts["ioengine"] = "sg"
        opts["filename"] = {"hdd": "/dev/sg1", "ssd": "/dev/sg2"}[run.device]
    else:  # block device: default engine (psync), the iSCSI disk as seen on the initiator
        opts["filename"] = "/dev/sdc"
    return opts


def _ctime(ts: datetime) -> str:
    """C ``ctime`` text without the newline: ``Sat Dec  9 15:03:01 2023``."""
    return f"{ts:%a %b} {ts.day:2d} {ts:%H:%M:%S %Y}"


def _disk_util(write: dict[str, Any], lat_ns: np.ndarray, rng: np.random.Generator) -> list:
    """The initiator's view of the iSCSI disk (block-device runs only)."""
    ticks = int(lat_ns.sum() // NS_PER_MS)
    runtime_ms = write["runtime"]
    return [
        {
            "name": "sdc",
            "read_ios": int(rng.integers(0, 4)),
            "write_ios": write["total_ios"],
            "read_merges": 0,
            "write_merges": 0,
            "read_ticks": int(rng.integers(0, 6)),
            "write_ticks": ticks,
            "in_queue": ticks + int(rng.integers(0, 40)),
            "util": min(99.9, 100.0 * ticks / runtime_ms * float(rng.uniform(0.985, 0.995))),
        }
    ]


@dataclass(frozen=True)
class FioResult:
    """A rendered run: the JSON text, its ``write`` block, and when each I/O completed."""

    text: str
    write: dict[str, Any]
    completion_ms: np.ndarray  # since the job started, one per I/O (for the iostat writer)


def completion_times_ms(lat_ns: np.ndarray) -> np.ndarray:
    """When each I/O of a QD1 job completed, in ms since the start (latencies plus fio's gap)."""
    return np.cumsum(lat_ns) / NS_PER_MS / (1 - IDLE_GAP_FRACTION)


def render(run: FioRun, rng: np.random.Generator) -> FioResult:
    """The fio JSON of one run, with the numbers the iostat writer needs to stay consistent."""
    write, lat = _write_direction(run, rng)
    end = run.start.timestamp() + write["runtime"] / MS_PER_S + 1
    end_ms = int(end * MS_PER_S) + int(rng.integers(0, 1000))
    cpu_total = float(rng.uniform(1.5, 4.0)) if run.scenario != "local-sg" else 8.0
    job: dict[str, Any] = {"jobname": "sequential-write-direct", "groupid": 0}
    if run.scenario == "iscsi-libiscsi":
        job["job_start"] = int(run.start.timestamp() * MS_PER_S) + int(rng.integers(0, 1000))
    job.update({
        "error": 0, "eta": 0, "elapsed": write["runtime"] // MS_PER_S + 1,
        "job options": job_options(run),
        "read": _idle_direction(), "write": write, "trim": _idle_direction(),
        "sync": {"total_ios": 0, "lat_ns": fiojson.empty_latency()},
        "job_runtime": write["runtime"],
        "usr_cpu": cpu_total * 0.3, "sys_cpu": cpu_total * 0.7,
        "ctx": write["total_ios"] * (3 if run.scenario == "iscsi-libiscsi" else 1)
        + int(rng.integers(20, 90)),
        "majf": 0, "minf": int(rng.integers(10, 40)),
        "iodepth_level": {"1": 100.0, "2": 0.0, "4": 0.0, "8": 0.0, "16": 0.0, "32": 0.0,
                          ">=64": 0.0},
        "iodepth_submit": {"0": 0.0, "4": 100.0, "8": 0.0, "16": 0.0, "32": 0.0, "64": 0.0,
                           ">=64": 0.0},
        "iodepth_complete": {"0": 0.0, "4": 100.0, "8": 0.0, "16": 0.0, "32": 0.0, "64": 0.0,
                             ">=64": 0.0},
    })  # fmt: skip
    job.update(fiojson.latency_buckets(lat))
    job.update({"latency_depth": 1, "latency_target": 0, "latency_percentile": 100.0,
                "latency_window": 0})  # fmt: skip
    doc: dict[str, Any] = {
        "fio version": run.fio_version,
        "timestamp": end_ms // MS_PER_S,
        "timestamp_ms": end_ms,
        "time": _ctime(datetime.fromtimestamp(end_ms // MS_PER_S, tz=UTC)),
        "jobs": [job],
    }
    if run.scenario == "iscsi-blockdev":
        doc["disk_util"] = _disk_util(write, lat, rng)
    return FioResult(fiojson.dumps(doc) + "\n", write, completion_times_ms(lat))
