"""Four systems, four bounds: each measured configuration against latency x depth, link, CPU and device.

Every row gets one verdict by the chapter's rule (:func:`row_verdict`): above a ceiling (what is
wrong then depends on how the ceiling was obtained), at one, queued at a saturated resource, or
by elimination. The blog's rows take their four ceilings from
:func:`iscsi_report.core.model.throughput_bounds`, the model chapter's theory of bounds.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from iscsi_report.analyses import blog as blog_model
from iscsi_report.analyses.crossstudy.clock import REDUCED_CLOCK_SIZE_BYTES
from iscsi_report.analyses.crossstudy.cpu import MODE_LABELS, CpuFit, cpu_points, scst_cpu_fit
from iscsi_report.analyses.crossstudy.little import l3_system, queue_depth_change_table
from iscsi_report.analyses.crossstudy.studies import CrossStudy, Study, size_label
from iscsi_report.analyses.crossstudy.wire import WireModel, network_ceiling_iops, reply_time_us
from iscsi_report.core.errors import ReportError
from iscsi_report.core.model import cpu_bound_iops, littles_law_latency_ms, throughput_bounds
from iscsi_report.core.units import (
    BITS_PER_BYTE,
    BITS_PER_GBIT,
    BITS_PER_MBIT,
    BYTES_PER_GB,
    BYTES_PER_KIB,
    BYTES_PER_MIB,
    IOPS_PER_KIOPS,
    MS_PER_S,
    US_PER_S,
)

SATURATION_FRACTION = 0.9  # a resource running at >= 90% of its ceiling is taken as the binding one
BOUNDS = ("latency_qd", "link", "cpu", "device")
BOUND_LABELS = {
    "latency_qd": "latency x queue depth",
    "link": "link",
    "cpu": "CPU",
    "device": "device",
}
# How a ceiling was obtained decides what a reading above it means (the chapter states the rule).
CeilingKind = Literal["first principles", "model", "measurement"]
FIRST_PRINCIPLES: CeilingKind = "first principles"
MODEL: CeilingKind = "model"
MEASUREMENT: CeilingKind = "measurement"
# Row verdicts of the bounds table, in the order the chapter defines them.
AT_CEILING = "at the ceiling"
CEILING_WRONG = "above the ceiling: the ceiling is wrong"
READING_WRONG = "above the ceiling: the reading is wrong"
READINGS_DISAGREE = "above the ceiling: two measurements disagree"
QUEUED = "queued at a saturated resource"
BY_ELIMINATION = "latency x queue depth (by elimination)"
ROW_VERDICTS = (AT_CEILING, CEILING_WRONG, READING_WRONG, READINGS_DISAGREE, QUEUED, BY_ELIMINATION)
ABOVE_VERDICT = {FIRST_PRINCIPLES: READING_WRONG, MODEL: CEILING_WRONG, MEASUREMENT: READINGS_DISAGREE}
# A command whose Little's-law latency is at least this multiple of the time it needs with no queue
# spends longer waiting than being served: something it waits for is saturated.
QUEUED_LATENCY_FACTOR = 2.0
BLOG_IO_BYTES = 2 * BYTES_PER_MIB  # bs=2M in the blog's fio job
FIO_DEFAULT_IODEPTH = 1  # the blog's jobs set no iodepth: one command in flight per job
OP_MS_DECIMALS = 2  # the blog prints operation times to 0.01 ms
# (projection key, label, iperf3 id, local 2 MiB device IOPS id) of the blog's measured setups
BLOG_SETUPS = (
    ("wireless_hdd", "wireless, HDD", "network.iperf3.wireless_mbit_per_s", "fio.local.hdd.2m.iops"),
    ("wired_hdd", "wired, HDD", "network.iperf3.wired_mbit_per_s", "fio.local.hdd.2m.iops"),
    ("wired_ssd", "wired, SSD", "network.iperf3.wired_mbit_per_s", "fio.local.ssd.2m.iops"),
)
BLOG_R2T_SETTINGS = (1, 16)  # MaxOutstandingR2T of the blog's two projection blocks
BLOG_CASE_KEY = "projection"  # one YAML entry explains all six blog rows
COMSTAR_ASSUMED_MTU_BYTES = 1500  # the post does not give the MTU; standard frames assumed


@dataclass(frozen=True)
class Ceiling:
    """One ceiling on a case's rate (bytes/s), how it was obtained, and how closely it is known (relative)."""

    bytes_per_s: float
    kind: CeilingKind
    rel_tol: float = 0.0


@dataclass(frozen=True)
class Latency:
    """Little's-law latency of a case's commands beside the time they need with no queue (the floor)."""

    latency_ms: float = math.nan
    floor_ms: float = math.nan
    floor_basis: str = ""
    ratio: float = math.nan  # given directly when only a ratio is known (a queue-depth change)

    @property
    def over_floor(self) -> float:
        """Latency as a multiple of the floor (NaN when neither is known)."""
        return self.ratio if math.isfinite(self.ratio) else self.latency_ms / self.floor_ms


@dataclass(frozen=True)
class Case:
    """One measured configuration of one study, placed against its ceilings."""

    study: Study
    key: str  # entry of the study YAML's ``bounds`` mapping
    system: str
    label: str
    io_bytes: float
    achieved_bytes_per_s: float
    reading_rel_tol: float  # half the printed precision of the reading, relative
    ceilings: Mapping[str, Ceiling]
    latency: Latency = field(default_factory=Latency)


def row_verdict(
    fractions: Mapping[str, float], ceilings: Mapping[str, Ceiling], reading_rel_tol: float, over_floor: float
) -> tuple[str, str]:
    """(verdict, bound it concerns) by the chapter's rule: above a ceiling, at one, queued, elimination."""
    known = {b: f for b, f in fractions.items() if math.isfinite(f)}
    above = {b: f for b, f in known.items() if f > 1.0 + reading_rel_tol + ceilings[b].rel_tol}
    if above:
        worst = max(above, key=above.__getitem__)
        return ABOVE_VERDICT[ceilings[worst].kind], worst
    top = max(known, key=known.__getitem__)
    if known[top] >= SATURATION_FRACTION:
        return AT_CEILING, top
    if math.isfinite(over_floor) and over_floor >= QUEUED_LATENCY_FACTOR:
        return QUEUED, ""
    return BY_ELIMINATION, "latency_qd"


def _bound_columns(case: Case) -> dict[str, float | str]:
    """Per bound: its rate (bytes/s and IOPS), the achieved fraction, how it was obtained, its tolerance."""
    row: dict[str, float | str] = {}
    for b in BOUNDS:
        ceiling = case.ceilings.get(b)
        bound = ceiling.bytes_per_s if ceiling else math.nan
        row[f"bound_{b}_bytes_per_s"] = bound
        row[f"bound_{b}_iops"] = bound / case.io_bytes if case.io_bytes else math.nan
        row[f"frac_{b}"] = case.achieved_bytes_per_s / bound if math.isfinite(bound) else math.nan
        row[f"kind_{b}"] = ceiling.kind if ceiling else ""
        row[f"tol_{b}"] = case.reading_rel_tol + ceiling.rel_tol if ceiling else math.nan
    return row


def _bound_row(case: Case) -> dict[str, Any]:
    """One bounds-table row: rates, fractions, the tightest ceiling, the verdict and the YAML's words."""
    text = case.study.case_text(case.key)
    bounds = _bound_columns(case)
    fractions = {b: float(bounds[f"frac_{b}"]) for b in BOUNDS}
    known = {b: f for b, f in fractions.items() if math.isfinite(f)}
    tightest = max(known, key=known.__getitem__)
    verdict, concerns = row_verdict(fractions, case.ceilings, case.reading_rel_tol, case.latency.over_floor)
    if verdict != AT_CEILING and not text.explanation:
        raise ReportError(
            f"{case.study.path}: at bounds.{case.key}: verdict {verdict!r} needs an explanation"
        )
    return {
        "system": case.system,
        "source": case.study.cite(),
        "case_key": case.key,
        "case": case.label,
        "io_bytes": case.io_bytes,
        "achieved_bytes_per_s": case.achieved_bytes_per_s,
        "achieved_iops": case.achieved_bytes_per_s / case.io_bytes if case.io_bytes else math.nan,
        "reading_rel_tol": case.reading_rel_tol,
        **bounds,
        "latency_ms": case.latency.latency_ms,
        "floor_ms": case.latency.floor_ms,
        "latency_over_floor": case.latency.over_floor,
        "floor_basis": case.latency.floor_basis,
        "tightest": tightest,
        "tightest_fraction": known[tightest],
        "verdict": verdict,
        "verdict_bound": concerns,
        "note": text.note,
        "explanation": text.explanation if verdict != AT_CEILING else "",
    }


def _blog_case(blog: Study, r2t: int, setup: tuple[str, str, str, str], op_ms: float) -> Case:
    """One blog configuration: core.model's four bounds at the blog's inputs, one write in flight."""
    key, label, link_id, device_id = setup
    prefix = f"projection.r2t{r2t}.{key}"
    queue_depth = int(blog.value("setup.fio_numjobs")) * FIO_DEFAULT_IODEPTH
    achieved = blog.value(f"{prefix}.actual_mib_per_s") * BYTES_PER_MIB
    iops = throughput_bounds(
        BLOG_IO_BYTES,
        op_ms,
        queue_depth,
        blog.value(link_id) * BITS_PER_MBIT,  # iperf3's goodput: no headers on top (wire = block)
        device_bytes_per_s=blog.value(device_id) * BLOG_IO_BYTES,
        cpu_ms_per_op=blog.value(f"{prefix}.cpu_lat_ms"),
    ).as_dict()
    rate = {bound: iops[bound] * BLOG_IO_BYTES for bound in iops}
    ceilings = {
        "latency_qd": Ceiling(rate["latency"], MODEL, blog.printed_rel_tol(f"{prefix}.op_ms")),
        "link": Ceiling(rate["link"], MEASUREMENT, blog.printed_rel_tol(link_id)),
        "cpu": Ceiling(rate["cpu"], MEASUREMENT),
        "device": Ceiling(rate["device"], MEASUREMENT, blog.printed_rel_tol(device_id)),
    }
    return Case(
        study=blog,
        key=BLOG_CASE_KEY,
        system="Helios4 NAS",
        label=f"{label}, MaxOutstandingR2T={r2t}, {size_label(BLOG_IO_BYTES)} writes",
        io_bytes=BLOG_IO_BYTES,
        achieved_bytes_per_s=achieved,
        reading_rel_tol=blog.printed_rel_tol(f"{prefix}.actual_mib_per_s"),
        ceilings=ceilings,
        latency=Latency(latency_ms=littles_law_latency_ms(queue_depth, achieved / BLOG_IO_BYTES)),
    )


def _blog_rows(blog: Study) -> list[dict[str, Any]]:
    """The blog's six measured configurations against op time, link, CPU and device ceilings."""
    # op times from the blog's own formula and inputs: two printed wired R2T=1 values do not
    # follow from them (see blog_model.wired_r2t1_discrepancy); the consistent ones are used.
    keys = ["max_outstanding_r2t", "network", "device"]
    formula = blog_model.projection_table(blog.path).set_index(keys)["op_ms"]
    rows = []
    for r2t in BLOG_R2T_SETTINGS:
        for setup in BLOG_SETUPS:
            network_label, device_label = setup[0].split("_")
            op_ms = round(float(formula[(r2t, network_label, device_label.upper())]), OP_MS_DECIMALS)
            rows.append(_bound_row(_blog_case(blog, r2t, setup, op_ms)))
    return rows


def cpu_fit_rel_residual(points: pd.DataFrame, fit: CpuFit, mode: str) -> float:
    """Largest distance of a fitted mode's own points from its CPU line, relative to the line."""
    sub = points[points["mode"] == mode]
    line = np.array([fit.cpu_us(mode, s) for s in sub["size_bytes"]])
    return float(np.max(np.abs(sub["cpu_us"].to_numpy() - line) / line))


# (row key, mode, size, reading id, clock id or None) of the SCST rows
SCST_CASES = (
    ("nodelay_512", "nodelay", 512, "scst.peak.nodelay_iops.512", None),
    ("adaptive_512", "adaptive", 512, "scst.peak.adaptive_iops.512", None),
    (
        "nodelay_reduced_clock",
        "nodelay",
        REDUCED_CLOCK_SIZE_BYTES,
        "scst.nagle.reduced_clock_nodelay_iops",
        "scst.nagle.reduced_clock_ghz",
    ),
    ("both_largest", "nodelay", 65536, "scst.peak.both_iops.65536", None),
)


def _scst_rows(scst: Study, fit: CpuFit, model: WireModel) -> list[dict[str, Any]]:
    """SCST single session: CPU (regression, clock-scaled) and link ceilings; /dev/zero has no device."""
    points = cpu_points(scst)
    rows = []
    for key, mode, size, reading_id, clock_id in SCST_CASES:
        ghz = scst.value(clock_id) if clock_id else fit.clock_ghz
        modes = MODE_LABELS[mode] if size <= REDUCED_CLOCK_SIZE_BYTES else "both modes"
        cpu = fit.ceiling_iops(mode, size, ghz) * size
        case = Case(
            study=scst,
            key=key,
            system="SCST usermode",
            label=f"{size_label(size)} reads, {modes}, {ghz:g} GHz",
            io_bytes=size,
            achieved_bytes_per_s=scst.value(reading_id) * size,
            reading_rel_tol=scst.printed_rel_tol(reading_id),
            ceilings={
                "link": Ceiling(network_ceiling_iops(size, model) * size, FIRST_PRINCIPLES),
                "cpu": Ceiling(cpu, MODEL, cpu_fit_rel_residual(points, fit, mode)),
            },
        )
        rows.append(_bound_row(case))
    return rows


def _l3_link(l3: Study) -> WireModel:
    """The L3 system's link: its rate and jumbo MTU."""
    return WireModel(
        link_bit_per_s=l3.value("l3.tldr.link_gbit_per_s") * BITS_PER_GBIT,
        mtu_bytes=int(l3.value("l3.tests.mtu_bytes")),
    )


def l3_in_flight_at_target(l3: Study, prefix: str) -> float:
    """Commands the target can hold: fio's submissions, capped by sessions x cmds_max of the initiator."""
    sessions = l3.value("l3.tests.storage_ports") * l3.value("l3.tests.sessions_per_port")
    fio = l3.value(f"l3.{prefix}.numjobs") * l3.value(f"l3.{prefix}.iodepth")
    return min(fio, sessions * l3.value("l3.tldr.cmds_max"))


def _l3_fio_case(l3: Study, key: str, rw: str, prefix: str, kiops_id: str) -> Case:
    """One fio 4 KiB record: link ceiling, and latency at the target against the wire time per command."""
    model = _l3_link(l3)
    size = l3.value(f"l3.{prefix}.bs_bytes")
    iops = l3.value(kiops_id) * IOPS_PER_KIOPS
    jobs, depth = l3.value(f"l3.{prefix}.numjobs"), l3.value(f"l3.{prefix}.iodepth")
    return Case(
        study=l3,
        key=key,
        system=l3_system(l3),
        label=f"{size_label(size)} {rw}s, fio {jobs:g} jobs x iodepth {depth:g}",
        io_bytes=size,
        achieved_bytes_per_s=iops * size,
        reading_rel_tol=l3.printed_rel_tol(kiops_id),
        ceilings={"link": Ceiling(network_ceiling_iops(size, model) * size, FIRST_PRINCIPLES)},
        latency=Latency(
            latency_ms=littles_law_latency_ms(l3_in_flight_at_target(l3, prefix), iops),
            floor_ms=reply_time_us(size, model) / US_PER_S * MS_PER_S,
            floor_basis="wire time per command",
        ),
    )


def _l3_rate_case(
    l3: Study, key: str, label: str, reading_id: str, bytes_per_unit: float, latency: Latency | None = None
) -> Case:
    """One L3 rate without an I/O size: only the link ceiling (goodput of full frames)."""
    model = _l3_link(l3)
    goodput = model.link_bit_per_s / BITS_PER_BYTE * model.payload_efficiency
    return Case(
        study=l3,
        key=key,
        system=l3_system(l3),
        label=label,
        io_bytes=math.nan,
        achieved_bytes_per_s=l3.value(reading_id) * bytes_per_unit,
        reading_rel_tol=l3.printed_rel_tol(reading_id),
        ceilings={"link": Ceiling(goodput, FIRST_PRINCIPLES)},
        latency=latency or Latency(),
    )


def _l3_rate_cases(l3: Study) -> list[Case]:
    """The L3 rates without an I/O size: medium blocks, the two table validations, NVMe/TCP."""
    depth = queue_depth_change_table(l3)
    qd_before, qd_after = (float(q) for q in depth["queue_depth"].iloc[[0, -1]])
    ratio = float(depth["latency_ratio_if_depth_filled"].iloc[-1])
    raised = Latency(ratio=ratio, floor_basis=f"latency at a queue depth of {qd_before:g}")
    gbyte, nvme = l3.value("l3.tldr.achieved_gbyte_per_s"), l3.value("l3.bonus.nvme_gbyte_per_s")
    disks, gbit = l3.value("l3.bonus.nvme_disks"), BITS_PER_GBIT / BITS_PER_BYTE
    specs: list[tuple[str, str, str, float, Latency | None]] = [
        ("medium_block", f"medium-block transfers ({gbyte:g} GB/s)", "l3.tldr.achieved_gbyte_per_s",
         BYTES_PER_GB, None),
        ("validation_default_depth", f"table validation, queue depth {qd_before:g}",
         "l3.analysis.load_gbit_per_s", gbit, None),
        ("validation_raised_depth", f"table validation, queue depth {qd_after:g}",
         "l3.analysis.after_gbit_per_s", gbit, raised),
        ("nvme_tcp", f"NVMe/TCP comparison ({nvme:g} GB/s, {disks:g} disks)", "l3.bonus.nvme_gbyte_per_s",
         BYTES_PER_GB, None),
    ]  # fmt: skip
    return [_l3_rate_case(l3, *spec) for spec in specs]


def _l3_rows(l3: Study) -> list[dict[str, Any]]:
    """100 GbE: the link ceiling, commands queued at the target, and the queue-depth experiment."""
    cases = [
        _l3_fio_case(l3, "fio_read", "read", "reading", "l3.reading.read_kiops"),
        _l3_fio_case(l3, "fio_write", "write", "record", "l3.record.write_kiops"),
        *_l3_rate_cases(l3),
    ]
    return [_bound_row(c) for c in cases]


def _comstar_case(c: Study, key: str, target: str, kiops_id: str, cpus_id: str) -> Case:
    """One target's cache-hit reads: link and all-cores CPU ceilings, latency against wire + CPU time."""
    size = c.value("comstar.read.io_kib") * BYTES_PER_KIB
    model = WireModel(
        link_bit_per_s=c.value("comstar.comments.link_gbit_per_s") * BITS_PER_GBIT,
        mtu_bytes=COMSTAR_ASSUMED_MTU_BYTES,
    )
    iops = c.value(kiops_id) * IOPS_PER_KIOPS
    cpu_s_per_op = c.value(cpus_id) / iops
    outstanding = c.value("comstar.read.clients") * c.value("comstar.read.threads_per_client")
    return Case(
        study=c,
        key=key,
        system="COMSTAR appliance",
        label=f"{target}, {size_label(size)} cache-hit reads, {outstanding:g} outstanding",
        io_bytes=size,
        achieved_bytes_per_s=iops * size,
        reading_rel_tol=c.printed_rel_tol(kiops_id),
        ceilings={
            "link": Ceiling(network_ceiling_iops(size, model) * size, FIRST_PRINCIPLES),
            "cpu": Ceiling(
                cpu_bound_iops(cpu_s_per_op * MS_PER_S, c.value("comstar.comments.cores")) * size, MODEL
            ),
        },
        latency=Latency(
            latency_ms=littles_law_latency_ms(outstanding, iops),
            floor_ms=(reply_time_us(size, model) / US_PER_S + cpu_s_per_op) * MS_PER_S,
            floor_basis="wire + CPU time per command",
        ),
    )


def _comstar_rows(c: Study) -> list[dict[str, Any]]:
    """COMSTAR and the old daemon: link (10 GbE, MTU assumed 1500) and CPU (all cores) ceilings."""
    return [
        _bound_row(
            _comstar_case(
                c, "daemon_read", "old target daemon", "comstar.read.daemon_kiops", "comstar.read.daemon_cpus"
            )
        ),
        _bound_row(
            _comstar_case(
                c, "comstar_read", "COMSTAR", "comstar.read.comstar_kiops", "comstar.read.comstar_cpus"
            )
        ),
    ]


def bounds_table(cs: CrossStudy, fit: CpuFit | None = None, model: WireModel | None = None) -> pd.DataFrame:
    """Every system's achieved rate as a fraction of each ceiling, its tightest ceiling and verdict."""
    model = model or WireModel()
    fit = fit or scst_cpu_fit(cs.scst)
    rows = _blog_rows(cs.blog) + _scst_rows(cs.scst, fit, model) + _l3_rows(cs.l3) + _comstar_rows(cs.comstar)
    return pd.DataFrame(rows)


def verdict_counts(bounds: pd.DataFrame) -> pd.Series:
    """Rows per bounds verdict, every verdict listed (zero included)."""
    return bounds["verdict"].value_counts().reindex(list(ROW_VERDICTS), fill_value=0)


def _verdict_label(rec: Mapping[Hashable, Any]) -> str:
    """Short text naming a row's verdict and the ceiling it concerns."""
    bound = rec["verdict_bound"]
    return (
        f"{BOUND_LABELS[bound]}: {rec['verdict']}"
        if bound and rec["verdict"] != BY_ELIMINATION
        else rec["verdict"]
    )


def bounds_long(bounds: pd.DataFrame) -> pd.DataFrame:
    """Long form of :func:`bounds_table` for charts: one row per case and known bound."""
    rows = []
    for rec in bounds.to_dict("records"):
        for b in BOUNDS:
            if math.isfinite(rec[f"frac_{b}"]):
                rows.append(
                    {
                        "system": rec["system"],
                        "source": rec["source"],
                        "case": rec["case"],
                        "bound": BOUND_LABELS[b],
                        "fraction": rec[f"frac_{b}"],
                        "binding": rec["verdict_bound"] == b,
                        "binding_label": _verdict_label(rec),
                    }
                )
    return pd.DataFrame(rows)
