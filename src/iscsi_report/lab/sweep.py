"""``lab run``: the sweep's design, its execution on a :class:`~.topology.Lab`, and the manifest.

Design (full sweep), chosen so the latency model's terms separate and configurations are left
for held-out validation:

* one-way delay D ∈ {0, 0.5, 1, 2, 4} ms at 1000 Mbit/s; D ∈ {0, 1, 4} ms also at 400 Mbit/s
  (the per-byte term: wire time vs. host cost); ping (2 ms interval) and iperf3 at each point,
  and both at D = 0 with the rate unlimited (the delay line's own ceiling);
* writes, iodepth 1: bs 64/128/256/512 KiB at window 1 (0–2 R2Ts: window cannot matter) and
  bs 1/2/4 MiB at R2T windows 1, 2, 4, 8 (4, 8, 16 R2Ts per write: the per-round term);
  each with immediate data 64 KiB (MaxRecvDataSegmentLength 256 KiB) and 8 KiB
  (MaxRecvDataSegmentLength 8 KiB: also 32× more Data-Out PDUs); 8 KiB immediate data with
  256 KiB segments at bs 1/4 MiB, windows 1/8, D ∈ {0, 2} ms separates the two;
* reads (Data-In, no R2T) at every bs and D; iodepth 4 writes (bs 256 KiB/1 MiB/4 MiB,
  windows 1/8) and reads (1 MiB) at every D;
* 3 replicates (separate fio processes and logins); each replicate visits every delay and rate
  of a target setting in its own order (rotated, every other one reversed), so load on the
  shared machine spreads over the delays; plus one captured run (tshark) of 2 I/Os per write
  configuration at 1000 Mbit/s.

``design_role`` labels the suggested split: ``fit`` for D ∈ {0, 1} ms, bs ∈ {64 KiB, 256 KiB,
1 MiB, 4 MiB} and window ∈ {1, 8}; everything else (D = 0.5, 2, 4 ms; bs 128/512 KiB, 2 MiB;
windows 2, 4) is ``holdout``.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import tshark as tshark_ingest
from iscsi_report.core.ingest.textio import sha256_file
from iscsi_report.core.labels import AT_TARGET_SUFFIX
from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB
from iscsi_report.lab import state as st
from iscsi_report.lab.slowdisk import FIO_SIZE_BYTES
from iscsi_report.lab.topology import (
    ADDR_TGT,
    DEFAULT_DELAY_LINE,
    DELAY_LINE_WORDS,
    LAB_NICE,
    NS_INI,
    NS_TGT,
    PATH_MTU_BYTES,
    TCP_INIT_WINDOW_SEGMENTS,
    TCP_SYSCTLS,
    Lab,
    fio_filename,
    target_params,
)

DELAYS_MS = (0.0, 0.5, 1.0, 2.0, 4.0)
LINK_MBPS = 1000.0
SLOW_LINK_MBPS = 400.0
SLOW_LINK_DELAYS_MS = (0.0, 1.0, 4.0)
SMALL_BS = (64 * BYTES_PER_KIB, 128 * BYTES_PER_KIB, 256 * BYTES_PER_KIB, 512 * BYTES_PER_KIB)
LARGE_BS = (1 * BYTES_PER_MIB, 2 * BYTES_PER_MIB, 4 * BYTES_PER_MIB)
WINDOWS = (1, 2, 4, 8)
IMMEDIATE = ((65536, 262144), (8192, 8192))  # (immediate_data_bytes, max_recv_data_segment_bytes)
REPLICATES = 3
CAPTURE_IOS = 2
FIO_REGION_BYTES = FIO_SIZE_BYTES  # the part of the LUN every fio run reads or writes (slowdisk's too)
PING_INTERVAL_S = 0.002
PING_COUNT = 1000
# iputils sends the next probe only after a reply when the round trip exceeds the interval, so a
# run is allowed this long per probe (a jittered line's mean round trip stays well under it)
PING_TIMEOUT_PER_PROBE_S = 0.01
IPERF3_SECONDS = 3
FIT_DELAYS_MS = (0.0, 1.0)
FIT_BS = (64 * BYTES_PER_KIB, 256 * BYTES_PER_KIB, 1 * BYTES_PER_MIB, 4 * BYTES_PER_MIB)
FIT_WINDOWS = (1, 8)


DEEP_IODEPTH = 4  # the queue depth of a confirmation design's deep writes, unless it names another


@dataclass(frozen=True)
class ConfirmDesign:
    """A confirmation sweep's values: delays, single- and multi-round block sizes, windows."""

    delays_ms: tuple[float, ...]
    single_round_bs: tuple[int, ...]
    multi_round_bs: tuple[int, ...]
    windows: tuple[int, ...]
    link_mbps: tuple[float, ...] = (1000.0,)  # every delay at every rate
    read_bs: tuple[int, ...] = ()  # reads at queue depth 1 (window 1, 64 KiB immediate data)
    deep_bs: tuple[int, ...] = ()  # writes at deep_iodepth at every window (64 KiB immediate data)
    ios: int | None = None  # I/Os per fio run (None: 16 up to 512 KiB, else 8)
    deep_iodepth: int = DEEP_IODEPTH
    replicates: int = REPLICATES  # fio runs per configuration (each its own process and login)


# The confirmation sweeps (``lab run --confirm N``): values no earlier sweep measured, collected
# after the model they test was declared (analyses.lab), so its error is a prospective test.
# Design 1 keeps some old values (128 KiB, 2 MiB, window 1) to tie it to the full sweep; design 2
# (for the second declared model) uses delays, sizes and windows neither the full sweep nor design
# 1 used, and keeps window 1 only.
CONFIRM_DESIGNS = {
    1: ConfirmDesign(
        (0.25, 3.0, 6.0),
        (128 * BYTES_PER_KIB, 192 * BYTES_PER_KIB),
        (768 * BYTES_PER_KIB, 2 * BYTES_PER_MIB, 3 * BYTES_PER_MIB),
        (1, 3, 6),
    ),
    2: ConfirmDesign(
        (0.75, 1.5, 5.0),
        (96 * BYTES_PER_KIB, 160 * BYTES_PER_KIB),
        (640 * BYTES_PER_KIB, 1280 * BYTES_PER_KIB, 2560 * BYTES_PER_KIB),
        (1, 5, 7),
    ),
    # Design 3, the blind sweep of issue 21, declared in data/preregistered/lab-iscsi-2026-blind/
    # README.md before it ran: link rates and delays no sweep used, reads and queue depth 4 inside
    # the forecast matrix, 24 I/Os per run for steadier means.
    3: ConfirmDesign(
        (0.35, 2.5),
        (112 * BYTES_PER_KIB,),
        (384 * BYTES_PER_KIB, 1536 * BYTES_PER_KIB, 2816 * BYTES_PER_KIB),
        (1, 3),
        link_mbps=(700.0, 300.0),
        read_bs=(384 * BYTES_PER_KIB, 1536 * BYTES_PER_KIB),
        deep_bs=(1536 * BYTES_PER_KIB,),
        ios=24,
    ),
    # Design 4, the second blind sweep of issue 21, declared in data/preregistered/
    # lab-iscsi-2026-blind2/README.md before it ran, for the engine's version 2 (writes in flight
    # replayed on one connection): rates, delays, sizes, a window and a queue depth no sweep used,
    # three read sizes so that reads forecast from writes are judged on more than a handful.
    4: ConfirmDesign(
        (1.25, 4.5),
        (144 * BYTES_PER_KIB,),
        (448 * BYTES_PER_KIB, 1216 * BYTES_PER_KIB, 3328 * BYTES_PER_KIB),
        (1, 6),
        link_mbps=(850.0, 380.0),
        read_bs=(448 * BYTES_PER_KIB, 1216 * BYTES_PER_KIB, 3328 * BYTES_PER_KIB),
        deep_bs=(448 * BYTES_PER_KIB, 1216 * BYTES_PER_KIB),
        ios=24,
        deep_iodepth=6,
    ),
    # Design 5, the third blind sweep of issue 21, declared in data/preregistered/
    # lab-iscsi-2026-blind3/README.md before it ran, for the engine's version 2 unchanged: a link
    # faster than any sweep used, three delays, a queue depth none used, and more targets per group
    # so that the immediate-data-and-segment comparison can be resolved. Reads stay below 3 MiB,
    # where the reads diagnosis (lab/reads_sweep.py) found no step from tgtd's allocator.
    5: ConfirmDesign(
        (0.6, 1.8, 3.5),
        (208 * BYTES_PER_KIB,),
        (576 * BYTES_PER_KIB, 1472 * BYTES_PER_KIB, 2304 * BYTES_PER_KIB),
        (1, 5),
        link_mbps=(1600.0, 540.0),
        read_bs=(576 * BYTES_PER_KIB, 1472 * BYTES_PER_KIB, 2304 * BYTES_PER_KIB),
        deep_bs=(576 * BYTES_PER_KIB, 1472 * BYTES_PER_KIB),
        ios=24,
        deep_iodepth=3,
    ),
    # Design 6, the fourth blind sweep of issue 21, declared in data/preregistered/
    # lab-iscsi-2026-blind4/README.md before it ran, for the engine's version 2 unchanged and run on
    # the compiled delay line: a link of 2 Gbit/s and delays, sizes and a queue depth no sweep used,
    # and five read sizes (all below 3 MiB) so that reads forecast from writes have more targets.
    6: ConfirmDesign(
        (0.4, 1.4, 2.8),
        (240 * BYTES_PER_KIB,),
        (960 * BYTES_PER_KIB, 1856 * BYTES_PER_KIB, 2688 * BYTES_PER_KIB),
        (1, 3),
        link_mbps=(2000.0, 800.0),
        read_bs=(
            336 * BYTES_PER_KIB,
            960 * BYTES_PER_KIB,
            1344 * BYTES_PER_KIB,
            1856 * BYTES_PER_KIB,
            2688 * BYTES_PER_KIB,
        ),
        deep_bs=(960 * BYTES_PER_KIB, 1856 * BYTES_PER_KIB),
        ios=24,
        deep_iodepth=2,
    ),
    # Design 7, the fifth blind sweep of issue 21, declared in data/preregistered/
    # lab-iscsi-2026-blind5/README.md before it ran, for the engine's version 2 unchanged on the
    # compiled line: rates, delays, sizes and a queue depth no sweep used, and means measured more
    # finely (64 I/Os per run, 5 replicates instead of 24 and 3) so that each is known to a few per cent.
    7: ConfirmDesign(
        (0.9, 2.2),
        (224 * BYTES_PER_KIB,),
        (832 * BYTES_PER_KIB, 1600 * BYTES_PER_KIB, 2496 * BYTES_PER_KIB),
        (1, 4),
        link_mbps=(1200.0, 500.0),
        read_bs=(832 * BYTES_PER_KIB, 1600 * BYTES_PER_KIB, 2496 * BYTES_PER_KIB),
        deep_bs=(832 * BYTES_PER_KIB, 1600 * BYTES_PER_KIB),
        ios=64,
        deep_iodepth=5,
        replicates=5,
    ),
    # Design 8, the sixth blind sweep of issue 21, declared in data/preregistered/
    # lab-iscsi-2026-blind6/README.md before it ran, for the engine's version 3 (today's host time
    # per R2T round read from today's captures): rates, delays, sizes and a queue depth no sweep
    # used, and a window of 5 beside 1, the change version 3 is about.
    8: ConfirmDesign(
        (0.7, 3.2),
        (272 * BYTES_PER_KIB,),
        (896 * BYTES_PER_KIB, 1728 * BYTES_PER_KIB, 2880 * BYTES_PER_KIB),
        (1, 5),
        link_mbps=(1400.0, 650.0),
        read_bs=(896 * BYTES_PER_KIB, 1728 * BYTES_PER_KIB, 2880 * BYTES_PER_KIB),
        deep_bs=(896 * BYTES_PER_KIB, 1728 * BYTES_PER_KIB),
        ios=24,
        deep_iodepth=7,
    ),
    # Design 9, the seventh blind sweep of issue 21, declared in data/preregistered/
    # lab-iscsi-2026-blind7/README.md before it ran, for the engine's version 3 unchanged and run on
    # the Python delay line (the delay-line diagnosis, data/preregistered/delay-line-scatter, found
    # the compiled line's replicates scatter more): rates, delays, sizes and a queue depth no sweep used.
    9: ConfirmDesign(
        (0.45, 2.6),
        (304 * BYTES_PER_KIB,),
        (992 * BYTES_PER_KIB, 1760 * BYTES_PER_KIB, 2720 * BYTES_PER_KIB),
        (1, 6),
        link_mbps=(1100.0, 460.0),
        read_bs=(992 * BYTES_PER_KIB, 1760 * BYTES_PER_KIB, 2720 * BYTES_PER_KIB),
        deep_bs=(992 * BYTES_PER_KIB, 1760 * BYTES_PER_KIB),
        ios=24,
        deep_iodepth=8,
    ),
}
RAM_DEVICE = "tgt-rdwr-dev-shm"  # the LUN of every sweep before the device sweep: a file in RAM
NEGOTIATED_MAX_OUTSTANDING_R2T = 1  # libiscsi proposes 1; the window beyond it is forced at the target


@dataclass(frozen=True, order=True)
class FioRun:
    """One fio process: a configuration, its replicate number and how many I/Os it issues."""

    r2t_window: int
    link_mbps: float
    one_way_delay_ms: float
    immediate_data_bytes: int
    max_recv_data_segment_bytes: int
    captured: bool
    replicate: int
    rw: str
    iodepth: int
    bs_bytes: int
    n_ios: int

    confirm: bool = False
    jitter: str = "fixed"  # the delay line's jitter shape (lab.jitter_sweep); "fixed": none
    bins: bool = False  # fio json+ (latency bins): the jitter sweep's distributions
    device: str = RAM_DEVICE  # the LUN's device (lab.device_sweep); the RAM-backed file before it
    device_emulation: str = ""  # how an emulated device was emulated (its manifest label), else ""
    role: str = ""  # a sweep's own design role (``diagnosis``: lab.reads_sweep), else by the rules below

    @property
    def design_role(self) -> str:
        """``fit``, ``holdout`` or ``confirmation`` (see the module docstring), or the run's own ``role``."""
        if self.role:
            return self.role
        if self.confirm:
            return "confirmation"
        fit = (
            self.one_way_delay_ms in FIT_DELAYS_MS
            and self.bs_bytes in FIT_BS
            and self.r2t_window in FIT_WINDOWS
        )
        return "fit" if fit else "holdout"

    def labels(self) -> dict[str, Any]:
        """Manifest labels of this run's files."""
        return (
            {
                "one_way_delay_ms": self.one_way_delay_ms,
                "link_mbps": self.link_mbps,
                "bs_bytes": self.bs_bytes,
                "rw": self.rw,
                "iodepth": self.iodepth,
                "r2t_window": self.r2t_window,
                "immediate_data_bytes": self.immediate_data_bytes,
                "max_recv_data_segment_bytes": self.max_recv_data_segment_bytes,
                "replicate": self.replicate,
                "captured": self.captured,
                "n_ios": self.n_ios,
                "design_role": self.design_role,
                "validation": self.design_role != "fit",
                "network": network_name(self.one_way_delay_ms, self.link_mbps),
                "iscsi_parameters": parameter_set(
                    self.immediate_data_bytes, self.max_recv_data_segment_bytes
                ),
                "max_outstanding_r2t": NEGOTIATED_MAX_OUTSTANDING_R2T,
                "engine": "libiscsi",
                "direct": True,
                "numjobs": 1,
                "scenario": "iscsi-libiscsi-lab",
                "device": self.device,
            }
            | ({"device_emulation": self.device_emulation} if self.device_emulation else {})
            | (
                {"jitter": self.jitter, "design_role": "jitter", "validation": True}
                if self.jitter != "fixed" or self.bins
                else {}
            )
        )

    def _jitter_part(self) -> str:
        """``-j<shape>`` for a run of the jitter sweep, else nothing (earlier file names unchanged)."""
        return f"-j{self.jitter}" if self.jitter != "fixed" or self.bins else ""

    def _device_part(self) -> str:
        """``-dev<name>`` for a run on another device than the RAM LUN, else nothing (names unchanged)."""
        return f"-dev{self.device}" if self.device != RAM_DEVICE else ""

    def stem(self) -> str:
        """File name stem, unique per run."""
        d = f"{self.one_way_delay_ms:g}".replace(".", "p")
        cap = "-cap" if self.captured else f"-r{self.replicate}"
        return (
            f"{self.rw}-qd{self.iodepth}-bs{self.bs_bytes // BYTES_PER_KIB}k-w{self.r2t_window}"
            f"-imm{self.immediate_data_bytes // BYTES_PER_KIB}k"
            f"-seg{self.max_recv_data_segment_bytes // BYTES_PER_KIB}k"
            f"-d{d}ms-l{self.link_mbps:g}{self._jitter_part()}{self._device_part()}{cap}"
        )


def network_name(one_way_delay_ms: float, link_mbps: float) -> str:
    """The ``network`` label pairing a point's ping, iperf3 and fio files."""
    rate = "unlimited" if link_mbps <= 0 else f"{link_mbps:g}mbps"
    return f"delay-line-d{one_way_delay_ms:g}ms-{rate}"


def parameter_set(immediate_data_bytes: int, max_recv_data_segment_bytes: int) -> str:
    """Key of the manifest's ``iscsi_parameters`` set a run's login negotiated."""
    imm_kib, seg_kib = immediate_data_bytes // BYTES_PER_KIB, max_recv_data_segment_bytes // BYTES_PER_KIB
    return f"tgt-libiscsi-imm{imm_kib}k-seg{seg_kib}k"


def _ios(bs_bytes: int, iodepth: int) -> int:
    base = 16 if bs_bytes <= 512 * BYTES_PER_KIB else 8
    return base * (2 if iodepth > 1 else 1)


def design(quick: bool = False, confirm: int = 0) -> tuple[list[FioRun], list[tuple[float, float]]]:
    """The fio runs and the (one_way_delay_ms, link_mbps) points measured by ping and iperf3.

    ``confirm`` picks a confirmation design from ``CONFIRM_DESIGNS`` (0: the full sweep).
    """
    runs: set[FioRun] = set()
    role = bool(confirm)  # every run of a confirmation design is labelled design_role=confirmation

    def add(
        d: float,
        link: float,
        bs: int,
        rw: str,
        qd: int,
        win: int,
        imm: tuple[int, int],
        reps: int,
        capture: bool,
        ios: int | None = None,
    ) -> None:
        n = ios or _ios(bs, qd)
        for rep in range(1, reps + 1):
            runs.add(FioRun(win, link, d, imm[0], imm[1], False, rep, rw, qd, bs, n, role))
        if capture and rw == "write":
            runs.add(FioRun(win, link, d, imm[0], imm[1], True, 0, rw, qd, bs, CAPTURE_IOS, role))

    if confirm:
        if confirm not in CONFIRM_DESIGNS:
            raise ValueError(f"--confirm {confirm}: expected one of {sorted(CONFIRM_DESIGNS)}")
        c = CONFIRM_DESIGNS[confirm]
        points = [(d, link) for link in c.link_mbps for d in c.delays_ms]
        for d, link in points:
            for imm in IMMEDIATE:
                for bs in c.single_round_bs:
                    add(d, link, bs, "write", 1, 1, imm, c.replicates, True, c.ios)
                for bs in c.multi_round_bs:
                    for win in c.windows:
                        add(d, link, bs, "write", 1, win, imm, c.replicates, True, c.ios)
            for bs in c.read_bs:
                add(d, link, bs, "read", 1, 1, IMMEDIATE[0], c.replicates, False, c.ios)
            for bs in c.deep_bs:
                for win in c.windows:
                    add(d, link, bs, "write", c.deep_iodepth, win, IMMEDIATE[0], c.replicates, False, c.ios)
        return sorted(runs), points

    if quick:
        for d in (0.0, 2.0):
            for bs in (64 * BYTES_PER_KIB, 2 * BYTES_PER_MIB):
                for win in (1, 8) if bs > 256 * BYTES_PER_KIB else (1,):
                    add(d, LINK_MBPS, bs, "write", 1, win, IMMEDIATE[0], 1, True)
            add(d, LINK_MBPS, 2 * BYTES_PER_MIB, "read", 1, 1, IMMEDIATE[0], 1, False)
            add(d, LINK_MBPS, 1 * BYTES_PER_MIB, "write", 4, 8, IMMEDIATE[0], 1, False)
        points = [(0.0, LINK_MBPS), (2.0, LINK_MBPS)]
        return sorted(runs), points
    for d in DELAYS_MS:
        for imm in IMMEDIATE:
            for bs in SMALL_BS:
                add(d, LINK_MBPS, bs, "write", 1, 1, imm, REPLICATES, True)
            for bs in LARGE_BS:
                for win in WINDOWS:
                    add(d, LINK_MBPS, bs, "write", 1, win, imm, REPLICATES, True)
        for bs in SMALL_BS + LARGE_BS:
            add(d, LINK_MBPS, bs, "read", 1, 1, IMMEDIATE[0], REPLICATES, False)
        for bs in (256 * BYTES_PER_KIB, 1 * BYTES_PER_MIB, 4 * BYTES_PER_MIB):
            for win in (1, 8):
                add(d, LINK_MBPS, bs, "write", 4, win, IMMEDIATE[0], REPLICATES, True)
        add(d, LINK_MBPS, 1 * BYTES_PER_MIB, "read", 4, 1, IMMEDIATE[0], REPLICATES, False)
    for d in (0.0, 2.0):
        for bs in (1 * BYTES_PER_MIB, 4 * BYTES_PER_MIB):
            for win in (1, 8):
                add(d, LINK_MBPS, bs, "write", 1, win, (8192, 262144), REPLICATES, True)
    for d in SLOW_LINK_DELAYS_MS:
        for bs in (256 * BYTES_PER_KIB, 1 * BYTES_PER_MIB, 4 * BYTES_PER_MIB):
            for win in (1, 8):
                add(d, SLOW_LINK_MBPS, bs, "write", 1, win, IMMEDIATE[0], REPLICATES, False)
    points = (
        [(0.0, 0.0)]
        + [(d, LINK_MBPS) for d in DELAYS_MS]
        + [(d, SLOW_LINK_MBPS) for d in SLOW_LINK_DELAYS_MS]
    )
    return sorted(runs), points


def r2t_per_write(
    bs_bytes: int, immediate_data_bytes: int, max_burst_bytes: int = 256 * BYTES_PER_KIB
) -> int:
    """R2Ts a write needs: the bytes beyond immediate data, in MaxBurstLength pieces."""
    rest = max(0, bs_bytes - min(immediate_data_bytes, bs_bytes))
    return -(-rest // max_burst_bytes)


def one_way_trips(
    bs_bytes: int, immediate_data_bytes: int, r2t_window: int, max_burst_bytes: int = 256 * BYTES_PER_KIB
) -> int:
    """One-way network trips of a write with a sliding R2T window (command ... response).

    Command (1) + per R2T round an R2T and its data (2 each) + response (1); a window of w keeps
    w R2Ts outstanding, so with the link idle the rounds are ceil(R2Ts / w).
    """
    n = r2t_per_write(bs_bytes, immediate_data_bytes, max_burst_bytes)
    rounds = -(-n // max(1, r2t_window)) if n else 0
    return 2 + 2 * rounds


def fio_cmd(fio: Path, run: FioRun, out: Path, verify: bool = False) -> list[str]:
    """fio's command line for one run (libiscsi engine, O_DIRECT, JSON output)."""
    cmd = [
        str(fio),
        f"--name={run.stem()}",
        "--ioengine=libiscsi",
        f"--filename={fio_filename()}",
        f"--rw={run.rw}",
        f"--bs={run.bs_bytes}",
        f"--size={FIO_REGION_BYTES}",
        f"--io_size={run.n_ios * run.bs_bytes}",
        f"--iodepth={run.iodepth}",
        "--direct=1",
        "--output-format=json+" if run.bins else "--output-format=json",
        f"--output={out}",
    ]
    if verify:
        cmd += ["--verify=crc32c", "--do_verify=1", "--verify_state_save=0"]
    return cmd


def point_labels(one_way_delay_ms: float, link_mbps: float) -> dict[str, Any]:
    """The labels of a ping or iperf3 file measured at one network point of the delay line."""
    labels: dict[str, Any] = {
        "one_way_delay_ms": one_way_delay_ms,
        "network": network_name(one_way_delay_ms, link_mbps),
        "path_mtu_bytes": PATH_MTU_BYTES,
    }
    if link_mbps > 0:  # 0 = no rate limit in the delay line (its own ceiling)
        labels["link_mbps"] = link_mbps
    return labels


class Runner:
    """Executes runs on a lab, writing raw files under ``out`` and collecting manifest entries."""

    def __init__(self, lab: Lab, out: Path, say=print) -> None:
        self.lab, self.out, self.say = lab, out, say
        self.entries: list[dict[str, Any]] = []
        self.login_keys: dict[str, dict[str, str]] = {}
        self.login_by_set: dict[str, dict[str, str]] = {}
        self.failures: list[str] = []

    def entry(self, path: Path, tool: str, labels: dict[str, Any], side: str = "initiator") -> None:
        """List a raw file the sweep wrote (under ``out``) for the manifest."""
        self.entries.append(
            {"path": str(path.relative_to(self.out)), "tool": tool, "side": side, "labels": labels}
        )

    def configure(self, run: FioRun) -> None:
        """Delay line and target as this run needs them."""
        lab = self.lab
        params = target_params(run.r2t_window, run.immediate_data_bytes, run.max_recv_data_segment_bytes)
        lab.set_target_keys(params)
        if (lab.one_way_delay_ms, lab.link_mbps) != (run.one_way_delay_ms, run.link_mbps):
            lab.set_link(run.one_way_delay_ms, run.link_mbps)

    def fio(self, run: FioRun, verify: bool = False) -> Path:
        """Run fio once; the JSON file goes under fio/ and into the manifest."""
        self.configure(run)
        path = self.out / "fio" / f"{run.stem()}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        timeout = 60 + run.n_ios * 2
        res = self.lab.run(NS_INI, fio_cmd(self.lab.tools.fio, run, path, verify), timeout, "fio")
        if res.returncode != 0 or not path.exists():
            msg = f"fio {run.stem()} exited {res.returncode}: {res.stderr.strip()[-300:]}"
            self.failures.append(msg)
            self.say(msg)
            return path
        self.entry(path, "fio", run.labels())
        return path

    def replicated(self, runs: list[FioRun], key: Callable[[FioRun], Any], announce: bool = False) -> None:
        """The uncaptured ``runs``: each replicate visits their (rate, delay) points in its own order.

        :func:`visit_order` rotates the points per replicate, so a burst of load on the shared
        machine spreads over the points instead of biasing one; at a point, runs go in ``key``
        order. ``announce``: a progress line per replicate and point.
        """
        plain = [r for r in runs if not r.captured]
        points = sorted({(r.link_mbps, r.one_way_delay_ms) for r in plain})
        for rep in sorted({r.replicate for r in plain}):
            for link, d in visit_order(points, rep):
                if announce:
                    self.say(f"replicate {rep}, {d:g} ms at {link:g} Mbit/s")
                here = [
                    r for r in plain if r.replicate == rep and (r.link_mbps, r.one_way_delay_ms) == (link, d)
                ]
                for run in sorted(here, key=key):
                    self.fio(run)

    def captured(self, runs: list[FioRun], at_target: bool = False) -> list[Path]:
        """Run these (captured) fio runs under one dumpcap; one tshark export file per run.

        ``at_target``: a second dumpcap on the target's TUN device at the same time (same clock),
        its exports named ``<run>-at-target.tsv``: when the target sent each PDU, not only when it
        reached the initiator.
        """
        points = [(NS_INI, "")] + ([(NS_TGT, AT_TARGET_SUFFIX)] if at_target else [])
        pcaps = {ns: Path(f"{st.SHM_PREFIX}capture-{ns}.pcapng") for ns, _ in points}
        pids: list[int] = []
        windows: list[tuple[FioRun, float, float]] = []
        try:
            for ns, _ in points:
                pids.append(self.lab.start_capture(pcaps[ns], ns))
            for run in runs:
                t0 = time.time()
                self.fio(run)
                windows.append((run, t0, time.time()))
        finally:
            for pid in pids:
                self.lab.stop_capture(pid)
        paths: list[Path] = []
        for ns, suffix in points:
            text = self.lab.export_capture(pcaps[ns], tshark_ingest.EXPORT_FIELDS)
            pcaps[ns].unlink(missing_ok=True)
            paths += self._split_capture(text, windows, ns, suffix)
        return paths

    def _split_capture(
        self, text: str, windows: list[tuple[FioRun, float, float]], ns: str, suffix: str
    ) -> list[Path]:
        """One capture's export cut into one file per run by the run's wall-clock window."""
        lines = text.splitlines()
        header, rows = lines[0], lines[1:]
        paths = []
        for run, t0, t1 in windows:
            mine = [r for r in rows if t0 <= float(r.split("\t", 2)[1]) <= t1]
            path = self.out / "tshark" / f"{run.stem()}{suffix}.tsv"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join([header, *mine]) + "\n", encoding="utf-8")
            try:
                result = tshark_ingest.parse(path)
            except IngestError as exc:  # keep the raw export; say what could not be read
                self.failures.append(f"capture {path.name}: {exc}")
                self.say(f"warning: {exc}")
                result = None
            for side, keys in result.login_keys.items() if result else ():
                self.login_keys.setdefault(side, keys)
            if result and "target" in result.login_keys:
                key = parameter_set(run.immediate_data_bytes, run.max_recv_data_segment_bytes)
                self.login_by_set.setdefault(key, result.login_keys["target"])
            self.entry(path, "tshark", {**run.labels(), "capture_point": f"{ns}:lab0"})
            paths.append(path)
        return paths

    def network(
        self,
        one_way_delay_ms: float,
        link_mbps: float,
        jitter: str = "",
        ping_count: int = PING_COUNT,
        reverse: bool = False,
    ) -> None:
        """ping (2 ms interval) and iperf3 -J across the delay line at this point (and jitter shape).

        ``reverse``: iperf3 -R as well (the target sending, as a read's data travels), each file
        labelled with its direction.
        """
        lab = self.lab
        lab.set_link(one_way_delay_ms, link_mbps)
        d = f"{one_way_delay_ms:g}".replace(".", "p") + (f"-j{jitter}" if jitter else "")
        labels = point_labels(one_way_delay_ms, link_mbps) | ({"jitter": jitter} if jitter else {})
        ping = self.out / "ping" / f"d{d}ms-l{link_mbps:g}.txt"
        ping.parent.mkdir(parents=True, exist_ok=True)
        lab.run(
            NS_INI,
            ["ping", "-n", "-D", "-i", str(PING_INTERVAL_S), "-c", str(ping_count), ADDR_TGT],
            60 + ping_count * PING_TIMEOUT_PER_PROBE_S,
            "ping",
            stdout_path=ping,
        )
        self.entry(ping, "ping", {**labels, "interval_s": PING_INTERVAL_S})
        for backwards in (False, True) if reverse else (False,):
            tail = "-reverse" if backwards else ""
            more = {"reverse": backwards} if reverse else {}
            self.iperf3(self.out / "iperf3" / f"d{d}ms-l{link_mbps:g}{tail}.json", labels | more)

    def iperf3(self, path: Path, labels: dict[str, Any], seconds: int = IPERF3_SECONDS) -> None:
        """One iperf3 -J run of ``seconds`` (-R when ``labels`` say ``reverse``) against a one-shot server."""
        lab = self.lab
        server = lab.spawn(NS_TGT, ["iperf3", "-s", "-1", "-B", ADDR_TGT], "iperf3-server")
        try:
            time.sleep(0.3)
            path.parent.mkdir(parents=True, exist_ok=True)
            flags = ["-R"] if labels.get("reverse") else []
            if labels.get("message_bytes"):  # small writes: lab.segments_sweep's diagnosis
                flags += ["-l", str(labels["message_bytes"])]
            if labels.get("nodelay"):
                flags.append("-N")
            res = lab.run(
                NS_INI,
                ["iperf3", "-J", *flags, "-c", ADDR_TGT, "-t", str(seconds)],
                seconds + 30,
                "iperf3",
                stdout_path=path,
            )
            if res.returncode == 0:
                self.entry(path, "iperf3", {**labels, "duration_s": seconds, "protocol": "tcp"})
            else:
                self.failures.append(f"iperf3 at {labels}: exit {res.returncode}")
        finally:
            lab.stop(server, grace_s=1.0)


def execute(lab: Lab, out: Path, quick: bool, say=print, confirm: int = 0) -> dict[str, Any]:
    """Run the whole design (or the confirmation sweep) into ``out``, write its manifest, summarise."""
    runs, points = design(quick, confirm)
    out.mkdir(parents=True, exist_ok=True)
    runner = Runner(lab, out, say)
    load_at_start = load_average()
    t_start = time.monotonic()
    done_points: set[tuple[float, float]] = set()
    # groups: runs sharing the target's settings (a window change restarts tgtd). Within a
    # group, each replicate visits every (rate, delay) point, in an order rotated per
    # replicate, so a burst of load on the shared machine spreads over delays instead of
    # biasing one; the captured runs follow, one dumpcap per point.
    groups: dict[tuple, list[FioRun]] = {}
    for run in runs:
        key = (run.r2t_window, run.immediate_data_bytes, run.max_recv_data_segment_bytes)
        groups.setdefault(key, []).append(run)
    lab.start_target(target_params(1, *IMMEDIATE[0]))
    for point in points:  # network first, with the target idle
        runner.network(*point)
        done_points.add(point)
    for i, (key, group) in enumerate(groups.items(), start=1):
        say(
            f"[{i}/{len(groups)}] window {key[0]}, immediate {key[1]}, segment {key[2]}: "
            f"{len(group)} runs ({time.monotonic() - t_start:.0f} s)"
        )
        by_point: dict[tuple[float, float], list[FioRun]] = {}
        for run in group:
            by_point.setdefault((run.link_mbps, run.one_way_delay_ms), []).append(run)
        group_points = sorted(by_point)
        for rep in sorted({r.replicate for r in group if not r.captured}):
            for point in visit_order(group_points, rep):
                for run in sorted(
                    (r for r in by_point[point] if not r.captured and r.replicate == rep),
                    key=lambda r: (r.rw, r.iodepth, r.bs_bytes),
                ):
                    runner.fio(run)
        for point in group_points:
            caps = [r for r in by_point[point] if r.captured]
            if caps:
                runner.configure(caps[0])
                runner.captured(caps)
    sweep_s = time.monotonic() - t_start
    verify = verify_check(runner)
    loads = {"at_start": load_at_start, "at_end": load_average()}
    manifest = write_manifest(out, runner, quick, sweep_s, verify, confirm, loads)
    return outcome(runs, runner, sweep_s, manifest) | {"verify": verify}


def outcome(runs: list[FioRun], runner: Runner, sweep_s: float, manifest: Path) -> dict[str, Any]:
    """What ``lab run`` prints when a sweep ends: runs, files, time, failures, the manifest."""
    return {
        "runs": len(runs),
        "files": len(runner.entries),
        "sweep_s": round(sweep_s, 1),
        "failures": runner.failures,
        "manifest": str(manifest),
    }


def load_average() -> list[float]:
    """The host's 1, 5 and 15 minute load averages (how busy the shared machine was)."""
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def visit_order(points: list, replicate: int) -> list:
    """The points rotated by the replicate number, every other replicate reversed."""
    if not points:
        return []
    k = replicate % len(points)
    order = points[k:] + points[:k]
    return order[::-1] if replicate % 2 == 0 else order


def verify_check(runner: Runner) -> dict[str, Any]:
    """Does stock libiscsi answer several outstanding R2Ts correctly? fio verify at window 8."""
    run = FioRun(8, LINK_MBPS, 1.0, 65536, 262144, False, 1, "write", 1, 4 * BYTES_PER_MIB, 8)
    path = runner.out / "verify.json"
    runner.configure(run)
    res = runner.lab.run(NS_INI, fio_cmd(runner.lab.tools.fio, run, path, verify=True), 120, "fio")
    ok = False
    if res.returncode == 0 and path.exists():
        job = json.loads(path.read_text())["jobs"][0]
        ok = job.get("error", 1) == 0 and job["read"]["io_bytes"] == job["write"]["io_bytes"] > 0
    path.unlink(missing_ok=True)
    return {
        "r2t_window": 8,
        "bs_bytes": run.bs_bytes,
        "writes": run.n_ios,
        "fio_verify": "crc32c",
        "passed": ok,
    }


def write_manifest(
    out: Path,
    runner: Runner,
    quick: bool,
    sweep_s: float,
    verify: dict[str, Any],
    confirm: int = 0,
    loads: dict[str, list[float]] | None = None,
    flags: str | None = None,
    extra_lab: dict[str, Any] | None = None,
    description_note: str = "",
) -> Path:
    """manifest.yaml with every raw file's tool, side, labels, sha256 and size.

    ``flags`` replaces the generator's flags (a sweep other than the designs above); ``extra_lab``
    adds to the manifest's record of how the lab ran; ``description_note`` ends the description.
    The generator names the delay line only where it is not the default one.
    """
    tools = runner.lab.tools
    files = []
    for e in sorted(runner.entries, key=lambda e: e["path"]):
        path = out / e["path"]
        files.append(
            {
                "path": e["path"],
                "tool": e["tool"],
                "side": e["side"],
                "sha256": sha256_file(path),
                "bytes": path.stat().st_size,
                "labels": e["labels"],
            }
        )
    line = runner.lab.delay_line
    doc = {
        "dataset": out.name,
        "title": "Real iSCSI on this machine: tgt and libiscsi across a userspace delay line"
        + (" (confirmation sweep)" if confirm else ""),
        "reconstructed": False,
        "generator": f"iscsi-report lab run --out {out.name}"
        + (" --quick" if quick else "")
        + (flags if flags is not None else {0: "", 1: " --confirm"}.get(confirm, f" --confirm {confirm}"))
        + (f" --delay-line {line}" if line != DEFAULT_DELAY_LINE else ""),
        "description": (
            "Real iSCSI traffic captured on the project's 2-core build machine: fio "
            f"(Debian source {tools.fio_source_version}, ioengine=libiscsi) writes and reads a "
            f"RAM-backed LUN (sparse file on /dev/shm) served by tgt (Debian source "
            f"{tools.tgt_source_version} with the project's patch tgt-r2t-window.patch, sha256 "
            f"{tools.patch_sha256[:12]}), across two network namespaces joined by a userspace "
            f"delay line ({DELAY_LINE_WORDS[line]}; TUN devices, fixed one-way delay, serialisation "
            "at the link rate, MTU 65000). The delay and the link are emulated; the protocol, its "
            f"PDUs and the software stacks are real. Sweep time {sweep_s:.0f} s."
            + (f" {description_note}" if description_note else "")
        ),
        "iscsi_parameters": iscsi_parameter_sets(runner),
        "lab": {
            "forced_at_target": {
                "r2t_window": "R2Ts the patched tgtd keeps outstanding per write (label "
                "r2t_window), whatever MaxOutstandingR2T was negotiated (1)",
            },
            "offered_by_target": {
                "InitialR2T": "Yes",
                "ImmediateData": "Yes",
                "MaxBurstLength": 262144,
                "FirstBurstLength": "65536 (8192 for 8 KiB immediate data with 256 KiB segments)",
                "MaxRecvDataSegmentLength": "label max_recv_data_segment_bytes",
                "MaxOutstandingR2T": 16,
            },
            "proposed_by_initiator": dict(runner.login_keys.get("initiator", {})),
            "fio_source_version": tools.fio_source_version,
            "tgt_source_version": tools.tgt_source_version,
            "tgt_patch_sha256": tools.patch_sha256,
            "delay_line": line,
            "path_mtu_bytes": PATH_MTU_BYTES,
            "tcp_in_both_namespaces": {
                **TCP_SYSCTLS,
                "route_initcwnd_segments": TCP_INIT_WINDOW_SEGMENTS,
                "route_initrwnd_segments": TCP_INIT_WINDOW_SEGMENTS,
            },
            "lab_process_nice_and_autogroup_nice": LAB_NICE,
            "lun": "512 MiB sparse file on /dev/shm, tgt rdwr backing store",
            "capture_point": "initiator namespace, TUN device lab0 (before the delay line)",
            "sweep_s": round(sweep_s, 1),
            "host_load_average_1_5_15_min": loads or {},
            "libiscsi_verify_at_window_8": verify,
            "failures": runner.failures,
        }
        | (extra_lab or {}),
        "files": files,
    }
    path = out / "manifest.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
    return path


def iscsi_parameter_sets(runner: Runner) -> dict[str, dict[str, Any]]:
    """Negotiated session parameters per set, from the target's login response in the captures."""
    sets: dict[str, dict[str, Any]] = {}
    used = {e["labels"].get("iscsi_parameters") for e in runner.entries}
    for imm, seg in (*IMMEDIATE, (8192, 262144)):
        key = parameter_set(imm, seg)
        if key not in used:
            continue
        seen = runner.login_by_set.get(key, {})
        params: dict[str, Any] = {
            k: (int(v) if v.isdigit() else v) for k, v in seen.items() if k != "TargetPortalGroupTag"
        }
        params.setdefault("MaxOutstandingR2T", NEGOTIATED_MAX_OUTSTANDING_R2T)
        params["MaxRecvDataSegmentLength"] = seg  # the target's declared value
        params["immediate_data_bytes"] = imm  # derived: min(FirstBurstLength, MaxRecvDataSegmentLength)
        params["Source"] = "login response in the captures" if seen else "not captured"
        sets[key] = params
    return sets


def clean_out(out: Path) -> None:
    """Remove a previous run's raw folders under ``out`` (keeps README.md)."""
    for sub in ("fio", "tshark", "ping", "iperf3"):
        shutil.rmtree(out / sub, ignore_errors=True)
    (out / "manifest.yaml").unlink(missing_ok=True)


__all__ = ["FioRun", "Runner", "asdict", "design", "execute", "one_way_trips", "r2t_per_write"]
