"""Little's law across the studies: latency from commands in flight and throughput, and session depths."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from iscsi_report.analyses.crossstudy.cpu import MODE_LABELS, peak_table
from iscsi_report.analyses.crossstudy.studies import CrossStudy, Study, size_label
from iscsi_report.analyses.crossstudy.wire import WireModel
from iscsi_report.core.model import BHS_BYTES, littles_law_latency_ms
from iscsi_report.core.units import (
    BITS_PER_GBIT,
    BYTES_PER_KIB,
    IOPS_PER_KIOPS,
    MS_PER_S,
    PERCENT_PER_FRACTION,
    US_PER_S,
)


def _little_row(
    system: str, study: Study, case: str, in_flight: float, iops: float, **extra: Any
) -> dict[str, Any]:
    """One Little's-law row: latency from commands in flight and IOPS (CPU per op etc. in ``extra``)."""
    row: dict[str, Any] = {
        "system": system,
        "source": study.cite(),
        "case": case,
        "in_flight": in_flight,
        "iops": iops,
        "latency_ms": littles_law_latency_ms(in_flight, iops),
        "cpu_us_per_op": math.nan,
        "derivation": "",
    }
    return row | extra


COMSTAR_TARGETS = (
    ("old target daemon", "comstar.read.daemon_kiops", "comstar.read.daemon_cpus"),
    ("COMSTAR", "comstar.read.comstar_kiops", "comstar.read.comstar_cpus"),
)


def _comstar_little(c: Study) -> list[dict[str, Any]]:
    """COMSTAR and the daemon: the clients' outstanding reads, and CPUs used per read."""
    clients, threads = c.value("comstar.read.clients"), c.value("comstar.read.threads_per_client")
    size = size_label(c.value("comstar.read.io_kib") * BYTES_PER_KIB)
    rows = []
    for target, kiops_id, cpus_id in COMSTAR_TARGETS:
        iops = c.value(kiops_id) * IOPS_PER_KIOPS
        derivation = (
            f"in flight = {clients:g} clients x {threads:g} threads; latency = in flight / IOPS; "
            "CPU = CPUs used / IOPS"
        )
        rows.append(
            _little_row(
                "COMSTAR appliance",
                c,
                f"{target}, {size} cache-hit reads",
                clients * threads,
                iops,
                cpu_us_per_op=c.value(cpus_id) / iops * US_PER_S,
                derivation=derivation,
            )
        )
    return rows


def _l3_little(l3: Study) -> list[dict[str, Any]]:
    """100 GbE fio records: what fio submits, and what the sessions let the initiator send."""
    ports, per_port = l3.value("l3.tests.storage_ports"), l3.value("l3.tests.sessions_per_port")
    cmds_max = l3.value("l3.tldr.cmds_max")
    rows = []
    for rw, prefix, kiops_id in (
        ("write", "record", "l3.record.write_kiops"),
        ("read", "reading", "l3.reading.read_kiops"),
    ):
        iops = l3.value(kiops_id) * IOPS_PER_KIOPS
        jobs, depth = l3.value(f"l3.{prefix}.numjobs"), l3.value(f"l3.{prefix}.iodepth")
        size = size_label(l3.value(f"l3.{prefix}.bs_bytes"))
        for case, in_flight, how in (
            ("fio jobs x iodepth", jobs * depth, f"{jobs:g} fio jobs x iodepth {depth:g}"),
            (
                "iSCSI sessions x cmds_max",
                ports * per_port * cmds_max,
                f"{ports:g} ports x {per_port:g} sessions x cmds_max {cmds_max:g}",
            ),
        ):
            rows.append(
                _little_row(
                    l3_system(l3),
                    l3,
                    f"{size} {rw}, {case}",
                    in_flight,
                    iops,
                    derivation=f"in flight = {how}; latency = in flight / IOPS",
                )
            )
    return rows


def _scst_little(scst: Study) -> list[dict[str, Any]]:
    """SCST: the response-time cap of the smallest peak, and the queue depths that saturate the link."""
    peaks = peak_table(scst).set_index("size_bytes")
    cap_ms = scst.value("scst.peak.response_time_cap_ms")
    size = int(peaks.index.min())
    iops = float(peaks["adaptive_iops"].loc[size])
    allowed = scst.value("scst.initiator.random_queue_depth")
    rows = [
        _little_row(
            "SCST usermode",
            scst,
            f"{size_label(size)} {MODE_LABELS['adaptive']} peak, response time < {cap_ms:g} ms",
            iops * cap_ms / MS_PER_S,
            iops,
            cpu_us_per_op=US_PER_S / iops,
            derivation=f"upper bound: in flight = IOPS x {cap_ms:g} ms (the initiator allows {allowed:g})",
        )
    ]
    prefix = "scst.measure.saturation_qd."
    for key in sorted((k for k in scst.numbers if k.startswith(prefix)), key=lambda k: int(k[len(prefix) :])):
        size = int(key[len(prefix) :])
        rows.append(
            _little_row(
                "SCST usermode",
                scst,
                f"{size} B reads, queue depth where the link saturates",
                scst.value(key),
                float(peaks["nodelay_iops"].loc[size]),
                derivation="latency = saturating queue depth / peak IOPS",
            )
        )
    return rows


def littles_law_table(cs: CrossStudy) -> pd.DataFrame:
    """Latency implied by concurrency and throughput, and CPU per op, for every system with both."""
    return pd.DataFrame(_comstar_little(cs.comstar) + _l3_little(cs.l3) + _scst_little(cs.scst))


def queue_depth_change_table(l3: Study) -> pd.DataFrame:
    """What raising node.session.queue_depth 32 -> 256 did, read through Little's law."""
    t = l3.table("queue_depth_change")
    t["link_fraction"] = t["gbit_per_s"] / l3.value("l3.tldr.link_gbit_per_s")
    base = t.iloc[0]
    t["depth_ratio"] = t["queue_depth"] / base["queue_depth"]
    t["throughput_ratio"] = t["gbit_per_s"] / base["gbit_per_s"]
    t["latency_ratio_if_depth_filled"] = t["depth_ratio"] / t["throughput_ratio"]
    return t


def session_depth_table(l3: Study) -> pd.DataFrame:
    """Commands the initiator can keep in flight over 4x8 sessions to the 48 LUNs, default vs tuned.

    Per session the cap is ``min(cmds_max, LUNs x queue_depth)``; the latency column is the
    largest mean latency that still sustains the fio 4 KiB IOPS at that cap (Little's law).
    """
    sessions = l3.value("l3.tests.storage_ports") * l3.value("l3.tests.sessions_per_port")
    luns = l3.value("l3.synthetic.disks")
    rows = []
    for label, cmds_id, depth_id in (
        ("default", "l3.analysis.default_cmds_max", "l3.analysis.default_queue_depth"),
        ("tuned", "l3.tldr.cmds_max", "l3.tldr.queue_depth"),
    ):
        cmds_max, depth = l3.value(cmds_id), l3.value(depth_id)
        per_session = min(cmds_max, luns * depth)
        row: dict[str, Any] = {
            "settings": label,
            "cmds_max": cmds_max,
            "queue_depth": depth,
            "sessions": sessions,
            "per_session_cap": per_session,
            "binding_setting": "cmds_max" if cmds_max <= luns * depth else "queue_depth",
            "in_flight_cap": sessions * per_session,
        }
        for rw, kiops_id in (("write", "l3.record.write_kiops"), ("read", "l3.reading.read_kiops")):
            iops = l3.value(kiops_id) * IOPS_PER_KIOPS
            row[f"max_latency_ms_at_{rw}_iops"] = littles_law_latency_ms(row["in_flight_cap"], iops)
        rows.append(row)
    return pd.DataFrame(rows)


def writer_thread_queue_depth(size_bytes: float, tcp_wmem_bytes: float) -> float:
    """Queue depth above which SCST replies can overflow the socket send buffer (Butterfield 2017)."""
    return tcp_wmem_bytes / (size_bytes + BHS_BYTES)


def mtu_gain_table(l3: Study) -> pd.DataFrame:
    """Goodput gain from MTU 1500 -> 9000 that framing alone allows, beside the seed's +2%."""
    rows = []
    for mtu_id in ("l3.tests.mtu_before_bytes", "l3.tests.mtu_bytes"):
        m = WireModel(
            link_bit_per_s=l3.value("l3.tldr.link_gbit_per_s") * BITS_PER_GBIT,
            mtu_bytes=int(l3.value(mtu_id)),
        )
        rows.append({"mtu_bytes": m.mtu_bytes, "payload_efficiency": m.payload_efficiency})
    out = pd.DataFrame(rows)
    out["framing_gain_pct"] = PERCENT_PER_FRACTION * (
        out["payload_efficiency"] / out["payload_efficiency"].iloc[0] - 1
    )
    out["published_gain_pct"] = [0.0, l3.value("l3.tests.mtu_gain_pct")]
    return out


def l3_system(l3: Study) -> str:
    """The 100 GbE system's name, its link rate read from the YAML."""
    return f"{l3.value('l3.tldr.link_gbit_per_s'):g} GbE L3"
