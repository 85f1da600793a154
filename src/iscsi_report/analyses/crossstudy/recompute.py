"""The cross-study audit: every number of the three seeds that follows from their other printed numbers.

What :func:`audit_rows` returns feeds :func:`iscsi_report.analyses.audit.audit_table`; why a
recomputed number differs from the printed one is explained in the published YAML.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from iscsi_report.analyses.crossstudy.clock import (
    MEASURED_PEAK,
    REDUCED_CLOCK_SIZE_BYTES,
    REGRESSION_LINE,
    clock_scaling_table,
)
from iscsi_report.analyses.crossstudy.cpu import MODES, peak_table, scst_cpu_fit
from iscsi_report.analyses.crossstudy.studies import Study, load_cross_study
from iscsi_report.analyses.crossstudy.wire import WireModel, network_ceiling_iops, reply_time_us
from iscsi_report.core.errors import ReportError
from iscsi_report.core.published import PublishedNumber
from iscsi_report.core.units import (
    BITS_PER_BYTE,
    BYTES_PER_MB,
    BYTES_PER_MIB,
    IOPS_PER_KIOPS,
    IOPS_PER_MIOPS,
    PERCENT_PER_FRACTION,
    US_PER_S,
)


def _pct_change(new: float, old: float) -> float:
    """Percentage by which ``new`` exceeds ``old``."""
    return PERCENT_PER_FRACTION * (new / old - 1.0)


def _net_pct(iops: float, reply_us: float) -> float:
    """Percentage of the link a read rate keeps busy, given one reply's line time."""
    return PERCENT_PER_FRACTION * iops * reply_us / US_PER_S


def _scst_table_cells(scst: Study, model: WireModel) -> dict[str, float]:
    """The peak and throughput-time table cells that follow from the peak IOPS and the wire model."""
    rec: dict[str, float] = {}
    peaks = peak_table(scst).set_index("size_bytes")
    tpt = scst.table("throughput_time")
    cpu_bound = {m: set(tpt.dropna(subset=[f"cpu_us_{m}"])["size_bytes"]) for m in MODES}
    rows_by_size: Iterable[tuple[Any, pd.Series]] = peaks.iterrows()  # index: size_bytes (int)
    for size, row in rows_by_size:
        best, nodelay = float(row["adaptive_iops"]), float(row["nodelay_iops"])
        reply = reply_time_us(size, model)
        rec[f"scst.tpt.net_reply_us.{size}"] = reply
        rec[f"scst.tpt.tpt_us.{size}"] = US_PER_S / best
        rec[f"scst.peak.mbps.{size}"] = best * size / BYTES_PER_MB
        rec[f"scst.peak.net_pct.{size}"] = _net_pct(best, reply)
        if size in cpu_bound["nodelay"]:
            rec[f"scst.tpt.cpu_us_nodelay.{size}"] = US_PER_S / nodelay
            rec[f"scst.peak.diff_pct.{size}"] = _pct_change(best, nodelay)
        if size in cpu_bound["adaptive"]:
            rec[f"scst.tpt.cpu_us_adaptive.{size}"] = US_PER_S / best
    return rec


def _scst_nagle_peaks(scst: Study, model: WireModel) -> dict[str, float]:
    """The Adaptive Nagle section's peaks and link shares at 512, 1024 and 1536 bytes."""
    peaks = peak_table(scst).set_index("size_bytes")
    nodelay, adaptive = peaks["nodelay_iops"].astype(float), peaks["adaptive_iops"].astype(float)
    reply_512 = reply_time_us(512, model)
    ceiling_1536 = network_ceiling_iops(1536, model)
    return {
        "scst.nagle.nodelay_peak_512_iops": nodelay[512],
        "scst.nagle.adaptive_peak_512_iops": adaptive[512],
        "scst.nagle.gain_512_pct": _pct_change(adaptive[512], nodelay[512]),
        "scst.nagle.adaptive_net_pct_512": _net_pct(adaptive[512], reply_512),
        "scst.nagle.nodelay_net_pct_512": _net_pct(nodelay[512], reply_512),
        "scst.nagle.nodelay_fraction_of_link_512": _net_pct(nodelay[512], reply_512) / PERCENT_PER_FRACTION,
        "scst.nagle.adaptive_peak_1024_iops": adaptive[1024],
        "scst.nagle.nodelay_peak_1024_iops": nodelay[1024],
        "scst.nagle.nodelay_peak_1536_iops": nodelay[1536],
        "scst.nagle.nodelay_cpu_bound_1536_iops": nodelay[1536],
        "scst.nagle.adaptive_peak_1536_iops": adaptive[1536],
        "scst.nagle.threshold96_1536_iops": adaptive[1536],
        "scst.nagle.full_nagle_peak_1536_iops": ceiling_1536,
        "scst.nagle.net_limit_1536_iops": ceiling_1536,
        "scst.nagle.threshold96_1536_pct_of_max": PERCENT_PER_FRACTION * adaptive[1536] / ceiling_1536,
    }


def _scst_reduced_clock(scst: Study, model: WireModel) -> dict[str, float]:
    """The reduced-clock paragraph: clock cut, IOPS drop, predicted IOPS, link share and gain."""
    ghz_from = scst.value("scst.nagle.standard_clock_ghz")
    ghz_to = scst.value("scst.nagle.reduced_clock_ghz")
    slow_nodelay = scst.value("scst.nagle.reduced_clock_nodelay_iops")
    slow_adaptive = scst.value("scst.nagle.reduced_clock_adaptive_iops")
    fast_nodelay = float(
        peak_table(scst).set_index("size_bytes")["nodelay_iops"].loc[REDUCED_CLOCK_SIZE_BYTES]
    )
    clock = clock_scaling_table(scst, scst_cpu_fit(scst), model).set_index(["mode", "basis"])[
        "predicted_iops"
    ]
    return {
        "scst.nagle.clock_reduction_pct": PERCENT_PER_FRACTION * (1 - ghz_to / ghz_from),
        "scst.nagle.reduced_clock_nodelay_drop_pct": -_pct_change(slow_nodelay, fast_nodelay),
        "scst.nagle.reduced_clock_nodelay_iops": float(clock.loc[("nodelay", MEASURED_PEAK)]),
        "scst.nagle.reduced_clock_adaptive_iops": float(clock.loc[("adaptive", REGRESSION_LINE)]),
        "scst.nagle.reduced_clock_adaptive_net_pct": _net_pct(
            slow_adaptive, reply_time_us(REDUCED_CLOCK_SIZE_BYTES, model)
        ),
        "scst.nagle.reduced_clock_adaptive_gain_pct": _pct_change(slow_adaptive, slow_nodelay),
    }


def _scst_l2_and_cpus(scst: Study) -> dict[str, float]:
    """Per-read time the L2 gains stand for at 512 bytes, and the CPU0 gain of the CPU assignment table."""
    peaks = peak_table(scst).set_index("size_bytes")
    cpus = scst.table("cpu_assignment").set_index("cpu")["iops"]
    return {
        "scst.nagle.l2_gap_nodelay_us": US_PER_S
        / float(peaks["nodelay_iops"].loc[512])
        * scst.value("scst.nagle.l2_gain_nodelay_pct")
        / PERCENT_PER_FRACTION,
        "scst.nagle.l2_gap_adaptive_us": US_PER_S
        / float(peaks["adaptive_iops"].loc[512])
        * scst.value("scst.nagle.l2_gain_adaptive_pct")
        / PERCENT_PER_FRACTION,
        "scst.cpus.cpu0_gain_pct": _pct_change(float(cpus[0]), float(cpus[[2, 3]].mean())),
    }


def _scst_recomputed(scst: Study, model: WireModel) -> dict[str, float]:
    """Every SCST number the analyses reproduce (why any differs: the published YAML)."""
    return (
        _scst_table_cells(scst, model)
        | _scst_nagle_peaks(scst, model)
        | _scst_reduced_clock(scst, model)
        | _scst_l2_and_cpus(scst)
    )


def _l3_recomputed(l3: Study) -> dict[str, float]:
    """The 100 GbE numbers that follow from other printed numbers."""
    write_iops = l3.value("l3.record.write_kiops") * IOPS_PER_KIOPS
    read_iops = l3.value("l3.reading.read_kiops") * IOPS_PER_KIOPS
    rec = {
        "l3.record.write_mib_per_s": write_iops * l3.value("l3.record.bs_bytes") / BYTES_PER_MIB,
        "l3.reading.read_mib_per_s": read_iops * l3.value("l3.reading.bs_bytes") / BYTES_PER_MIB,
        "l3.conclusions.write_million_iops": write_iops / IOPS_PER_MIOPS,
        "l3.conclusions.read_million_iops": read_iops / IOPS_PER_MIOPS,
        "l3.initial.network_utilisation_pct": PERCENT_PER_FRACTION
        * l3.value("l3.analysis.load_gbit_per_s")
        / l3.value("l3.tldr.link_gbit_per_s"),
        "l3.conclusions.medium_block_gbit_per_s": l3.value("l3.tldr.achieved_gbyte_per_s") * BITS_PER_BYTE,
    }
    return rec


def _comstar_recomputed(c: Study) -> dict[str, float]:
    """The COMSTAR ratios that follow from the printed IOPS, CPUs and MB/s."""
    daemon, comstar = c.value("comstar.read.daemon_kiops"), c.value("comstar.read.comstar_kiops")
    rec = {
        "comstar.read.outstanding": c.value("comstar.read.clients")
        * c.value("comstar.read.threads_per_client"),
        "comstar.read.improvement_x": comstar / daemon,
        "comstar.read.iops_per_cpu_improvement_x": (comstar / c.value("comstar.read.comstar_cpus"))
        / (daemon / c.value("comstar.read.daemon_cpus")),
        "comstar.write.throughput_gain_pct": _pct_change(
            c.value("comstar.write.comstar_mbyte_per_s"), c.value("comstar.write.daemon_mbyte_per_s")
        ),
    }
    return rec


def audit_rows(
    published_dir: str | Path, model: WireModel | None = None
) -> tuple[dict[str, PublishedNumber], dict[str, float]]:
    """(published, recomputed) for every number the analyses reproduce (explanations: the YAML's).

    Feed to ``audit.audit_table``; numbers only transcribed (not reproducible from the sources)
    are left out of ``published`` so the audit covers exactly what is recomputed.
    """
    cs = load_cross_study(published_dir)
    model = model or WireModel()
    rec: dict[str, float] = {}
    for r in (_scst_recomputed(cs.scst, model), _l3_recomputed(cs.l3), _comstar_recomputed(cs.comstar)):
        rec.update(r)
    numbers = cs.numbers()
    unknown = sorted(set(rec) - set(numbers))
    if unknown:
        raise ReportError(f"audit: recomputed ids with no published number: {unknown}")
    published = {k: numbers[k] for k in numbers if k in rec}
    return published, rec
