"""What-if grid: projected throughput of one iSCSI write over latency × link × device × R2T × block size.

Every cell is the fitted model: each term group of :func:`iscsi_report.core.model.write_latency`
times its fitted coefficient. The model is linear in the one-way latency and the per-64-KiB
time, so the grid takes the message counts of each (block size, MaxOutstandingR2T) from
:func:`iscsi_report.analyses.fit.unit_counts` (the model itself, evaluated at unit inputs) and
broadcasts them over the other axes with numpy: no Python loop per cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.api as sm

from iscsi_report.analyses import fit, storage
from iscsi_report.core import model
from iscsi_report.core.units import BITS_PER_BYTE, BITS_PER_MBIT, BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S


@dataclass(frozen=True)
class DeviceProfile:
    """A device's synchronous time per request: ``fixed_ms + ms_per_mib × MiB``; ``source`` says whence."""

    name: str
    fixed_ms: float
    ms_per_mib: float
    source: str

    def ms(self, request_bytes: np.ndarray | float) -> np.ndarray:
        """Device ms of requests of ``request_bytes`` (clipped at zero: a fit's intercept may be < 0)."""
        return np.maximum(
            self.fixed_ms + self.ms_per_mib * np.asarray(request_bytes, float) / BYTES_PER_MIB, 0.0
        )


# Named default for a device the blog did not measure: a datacentre NVMe drive writing ~2 GiB/s
# sequentially with ~20 µs of fixed latency (order of magnitude of PCIe 3.0 x4 datasheets).
NVME_DEFAULT = DeviceProfile(
    "nvme",
    fixed_ms=0.02,
    ms_per_mib=MS_PER_S / 2048.0,
    source="named default (not measured): 20 µs + 2 GiB/s",
)


def profiles_from_storage(fits: Mapping[str, storage.DeviceFit]) -> dict[str, DeviceProfile]:
    """Device profiles from the local-device OLS fits (:mod:`iscsi_report.analyses.storage`)."""
    return {name: DeviceProfile(name, f.fixed_ms, f.ms_per_mib, "local fio fit") for name, f in fits.items()}


@dataclass(frozen=True)
class CpuProfile:
    """Target CPU time charged per write: ``fixed_ms + ms_per_mib × MiB`` of the block."""

    fixed_ms: float
    ms_per_mib: float

    def ms(self, bs_bytes: np.ndarray | float) -> np.ndarray:
        """CPU ms of writes of ``bs_bytes`` (clipped at zero)."""
        return np.maximum(self.fixed_ms + self.ms_per_mib * np.asarray(bs_bytes, float) / BYTES_PER_MIB, 0.0)


def cpu_profile_from_runs(runs: pd.DataFrame) -> CpuProfile:
    """OLS of the measured CPU ms per op on the block size (MiB) over the remote runs."""
    x = sm.add_constant(runs["bs_bytes"].to_numpy(float) / BYTES_PER_MIB)
    res = sm.OLS(runs["cpu_ms"].to_numpy(float), x).fit()
    return CpuProfile(float(res.params[0]), float(res.params[1]))


TERM_COLUMNS = {  # grid column -> fitted regressor
    "one_way_term_ms": "one_way_ms",
    "transmit_term_ms": "transmit_ms",
    "device_term_ms": "device_ms",
    "cpu_term_ms": "cpu_ms",
}
CEILING_COLUMNS = {  # bound name -> grid column (MiB/s)
    "latency": "latency_mib_per_s",
    "link": "link_mib_per_s",
    "device": "device_mib_per_s",
    "cpu": "cpu_mib_per_s",
}


def _network_terms(
    one_way_ms: float, link_bps: float, bs: int, params: model.IscsiParams, assumptions: model.Assumptions
) -> tuple[float, float, int]:
    """(one-way ms, transmission ms, wire bytes) of one write on one network, from the model."""
    net = model.Network(one_way_ms=one_way_ms, link_bps=link_bps)
    b = model.write_latency(bs, params, net, 0.0, 0.0, assumptions=assumptions)
    terms = b.terms
    one_way = sum(terms[t] for t in fit.TERM_GROUPS["one_way_ms"]) + b.r2t_processing_ms
    transmit = sum(terms[t] for t in fit.TERM_GROUPS["transmit_ms"])
    return one_way, transmit, b.wire_bytes


def grid(
    one_way_ms: Sequence[float],
    link_bps: Sequence[float],
    devices: Mapping[str, DeviceProfile],
    max_outstanding_r2t: Sequence[int],
    bs_bytes: Sequence[int],
    beta: Mapping[str, float],
    cpu: CpuProfile,
    *,
    device_request_fraction: float | None = None,
    base_params: model.IscsiParams | None = None,
    assumptions: model.Assumptions = model.DEFAULT_ASSUMPTIONS,
    queue_depth: int = 1,
    cpu_cores: int = 1,
) -> pd.DataFrame:
    """Every combination of the axes: fitted terms, op_ms, each ceiling, MiB/s and the binding bound.

    The network terms of each (one-way, link, R2T, block) come from the model itself (sliding
    windows are not linear in the inputs); the device and CPU terms from their profiles. The
    projected MiB/s is the smallest of Little's law at ``queue_depth``, the link (wire bytes),
    the device's local throughput at the block size and the CPU: no cell exceeds hardware.
    """
    base = base_params or model.IscsiParams(initial_r2t=False)
    fraction = (
        assumptions.device_request_fraction if device_request_fraction is None else device_request_fraction
    )
    names = list(devices)
    rows = []
    for m in max_outstanding_r2t:
        params = replace(base, max_outstanding_r2t=int(m))
        for bs in bs_bytes:
            req = model.default_device_request_bytes(int(bs), fraction)
            for ow in one_way_ms:
                for link in link_bps:
                    one_way, transmit, wire = _network_terms(
                        float(ow), float(link), int(bs), params, assumptions
                    )
                    for name in names:
                        rows.append(
                            {
                                "one_way_ms": float(ow),
                                "link_bps": float(link),
                                "per_64k_ms": model.per_64k_ms_from_link_bps(float(link)),
                                "device": name,
                                "max_outstanding_r2t": int(m),
                                "bs_bytes": int(bs),
                                "wire_bytes": wire,
                                "one_way_term_ms": beta["one_way_ms"] * one_way,
                                "transmit_term_ms": beta["transmit_ms"] * transmit,
                                "device_term_ms": beta["device_ms"] * float(devices[name].ms(req)),
                                "cpu_term_ms": beta["cpu_ms"] * float(cpu.ms(bs)),
                                "device_local_ms": float(devices[name].ms(bs)),
                                "cpu_ms": float(cpu.ms(bs)),
                            }
                        )
    out = pd.DataFrame(rows)
    out["link_mbit_per_s"] = out["link_bps"] / BITS_PER_MBIT
    return finish(out, beta, queue_depth=queue_depth, cpu_cores=cpu_cores)


def finish(
    cells: pd.DataFrame, beta: Mapping[str, float], *, queue_depth: int = 1, cpu_cores: int = 1
) -> pd.DataFrame:
    """Add op_ms (terms + intercept), every ceiling in MiB/s, the achieved MiB/s and IOPS, and names.

    ``device_local_ms`` (the device's own time for a whole block, one at a time) and ``cpu_ms``
    give the device and CPU ceilings; ``wire_bytes`` (default the block) the link's.
    """
    terms = cells[list(TERM_COLUMNS)].to_numpy(float)
    cells["op_ms"] = terms.sum(axis=1) + float(beta.get(fit.INTERCEPT, 0.0))
    bs = cells["bs_bytes"].to_numpy(float)
    wire = cells["wire_bytes"].to_numpy(float) if "wire_bytes" in cells else bs
    with np.errstate(divide="ignore"):
        cells["latency_mib_per_s"] = queue_depth * MS_PER_S / cells["op_ms"] * bs / BYTES_PER_MIB
        cells["link_mib_per_s"] = cells["link_bps"] / BITS_PER_BYTE / wire * bs / BYTES_PER_MIB
        cells["device_mib_per_s"] = bs / (cells["device_local_ms"].to_numpy(float) / MS_PER_S) / BYTES_PER_MIB
        cpu_ms = cells["cpu_ms"].to_numpy(float)
        cells["cpu_mib_per_s"] = np.where(
            cpu_ms > 0, cpu_cores * MS_PER_S / cpu_ms * bs / BYTES_PER_MIB, np.inf
        )
    ceilings = cells[list(CEILING_COLUMNS.values())].to_numpy(float)
    if not (np.isfinite(ceilings[:, :3]).all() and (ceilings > 0).all()):
        raise ValueError("a what-if cell has a non-positive or undefined latency, link or device ceiling")
    cells["mib_per_s"] = ceilings.min(axis=1)
    cells["binding"] = np.array(list(CEILING_COLUMNS))[np.argmin(ceilings, axis=1)]
    cells["iops"] = cells["mib_per_s"] * BYTES_PER_MIB / bs
    cells["queue_depth"] = queue_depth
    cells["dominant_term"] = dominant_terms(cells)
    return cells


def dominant_terms(cells: pd.DataFrame) -> np.ndarray:
    """Per cell the largest term group: 'one-way latency', 'transmission', 'device' or 'CPU'."""
    labels = np.array(list(DOMINANT_LABELS.values()))
    dominant: np.ndarray = labels[np.argmax(cells[list(DOMINANT_LABELS)].to_numpy(float), axis=1)]
    return dominant


DOMINANT_LABELS = {
    "one_way_term_ms": "one-way latency",
    "transmit_term_ms": "transmission",
    "device_term_ms": "device",
    "cpu_term_ms": "CPU",
}


def log_cell_edges(values: Sequence[float] | np.ndarray) -> pd.DataFrame:
    """Edges of heatmap cells centred (geometrically) on sorted positive ``values``, for log axes."""
    v = np.sort(np.asarray(values, float))
    if v.size == 0 or np.any(v <= 0):
        raise ValueError("values must be non-empty and positive for a log axis")
    logs = np.log10(v)
    if v.size == 1:
        mids = np.array([logs[0] - 0.5, logs[0] + 0.5])
    else:
        inner = (logs[1:] + logs[:-1]) / 2
        mids = np.concatenate([[logs[0] - (inner[0] - logs[0])], inner, [logs[-1] + (logs[-1] - inner[-1])]])
    return pd.DataFrame({"value": v, "lo": 10 ** mids[:-1], "hi": 10 ** mids[1:]})


def heatmap_cells(cells: pd.DataFrame, bs_bytes: int) -> pd.DataFrame:
    """Grid cells of one block size with rectangle edges on the one-way and link axes."""
    sel = cells[cells["bs_bytes"] == bs_bytes].copy()
    if sel.empty:
        raise ValueError(f"block size {bs_bytes} is not on the grid")
    ow = log_cell_edges(sel["one_way_ms"].unique()).set_index("value")
    link = log_cell_edges(sel["link_mbit_per_s"].unique()).set_index("value")
    sel["one_way_lo"] = sel["one_way_ms"].map(ow["lo"])
    sel["one_way_hi"] = sel["one_way_ms"].map(ow["hi"])
    sel["link_lo"] = sel["link_mbit_per_s"].map(link["lo"])
    sel["link_hi"] = sel["link_mbit_per_s"].map(link["hi"])
    return sel


def mbit_to_bps(values: Sequence[float]) -> list[float]:
    """Mbit/s (notebook parameters) to bits per second."""
    return [float(v) * BITS_PER_MBIT for v in values]


def kib_to_bytes(values: Sequence[int]) -> list[int]:
    """KiB (notebook parameters) to bytes."""
    return [int(v) * BYTES_PER_KIB for v in values]


def upgrade_configs(
    runs: pd.DataFrame,
    cpu: CpuProfile,
    devices: Mapping[str, DeviceProfile],
    questions: Sequence[Mapping[str, Any]],
    device_request_fraction: float,
) -> pd.DataFrame:
    """Configurations for the blog's upgrade questions, with measured network inputs by name.

    Each question maps: label, network (a measured network label), device, max_outstanding_r2t,
    bs_bytes and optionally link_bps (a faster link with the same latency).
    """
    nets = runs.groupby("network")[["one_way_ms", "link_bps"]].first()
    rows = []
    for q in questions:
        network = str(q["network"])
        if network not in nets.index:
            raise KeyError(f"question {q['label']!r}: network {network!r} not measured ({list(nets.index)})")
        bs = int(q["bs_bytes"])
        req = model.default_device_request_bytes(bs, device_request_fraction)
        rows.append(
            {
                "label": q["label"],
                "network": network,
                "device": q["device"],
                "max_outstanding_r2t": int(q["max_outstanding_r2t"]),
                "bs_bytes": bs,
                "one_way_ms": float(nets["one_way_ms"].loc[network]),
                "link_bps": float(q.get("link_bps") or nets["link_bps"].loc[network]),
                "device_ms": float(devices[str(q["device"])].ms(req)),
                "device_local_ms": float(devices[str(q["device"])].ms(bs)),
                "cpu_ms": float(cpu.ms(bs)),
            }
        )
    return pd.DataFrame(rows)


FASTER_LINK_BPS = 10e9  # the "faster link" question: 10 Gbit/s Ethernet
BLOG_QUESTION_BS_BYTES = 2 * BYTES_PER_MIB  # the blog asked its questions of 2 MiB writes


def blog_questions(
    bs_bytes: int = BLOG_QUESTION_BS_BYTES, faster_link_bps: float = FASTER_LINK_BPS
) -> list[dict[str, object]]:
    """The blog's upgrade questions at its 2 MiB block: network, device, R2T and a faster link.

    The SSD replaces the HDD on the wired network, as in the blog's own measurement and on the
    front page: its gain is over the wired row (:data:`GAIN_BASE_ROW`), the others' over today.
    """
    base = {"bs_bytes": bs_bytes}
    return [
        {
            **base,
            "label": "today: wireless, HDD, R2T 1",
            "network": "wireless",
            "device": "hdd",
            "max_outstanding_r2t": 1,
        },
        {
            **base,
            "label": "wired instead of wireless",
            "network": "wired",
            "device": "hdd",
            "max_outstanding_r2t": 1,
        },
        {
            **base,
            "label": "SSD instead of HDD (wired)",
            "network": "wired",
            "device": "ssd",
            "max_outstanding_r2t": 1,
        },
        {
            **base,
            "label": "R2T 16 instead of 1 (wireless)",
            "network": "wireless",
            "device": "hdd",
            "max_outstanding_r2t": 16,
        },
        {
            **base,
            "label": "wired + SSD + R2T 16",
            "network": "wired",
            "device": "ssd",
            "max_outstanding_r2t": 16,
        },
        {
            **base,
            "label": f"as above on a {faster_link_bps / 1e9:g} Gbit/s link (wired latency)",
            "network": "wired",
            "device": "ssd",
            "max_outstanding_r2t": 16,
            "link_bps": faster_link_bps,
        },
    ]


def measured_points(
    runs: pd.DataFrame, bs_bytes: int, devices: Sequence[str], max_outstanding_r2t: Sequence[int]
) -> pd.DataFrame:
    """Measured runs at one block size on the heatmap's panels, with their link in Mbit/s."""
    sel = runs[
        (runs["bs_bytes"] == bs_bytes)
        & runs["device"].isin(list(devices))
        & runs["max_outstanding_r2t"].isin(list(max_outstanding_r2t))
    ]
    return sel.assign(link_mbit_per_s=sel["link_bps"] / BITS_PER_MBIT)


def upgrade_table(run_interval: pd.DataFrame, op_interval: pd.DataFrame) -> pd.DataFrame:
    """Projection per question with its run interval and the per-operation interval beside it."""
    cols = [
        "label",
        "network",
        "device",
        "max_outstanding_r2t",
        "link_bps",
        "op_ms",
        "mib_per_s",
        "binding",
        "mib_per_s_lo",
        "mib_per_s_hi",
        "iops_lo",
        "iops_hi",
    ]
    return run_interval[cols].assign(
        op_mib_per_s_lo=op_interval["mib_per_s_lo"].to_numpy(),
        op_mib_per_s_hi=op_interval["mib_per_s_hi"].to_numpy(),
    )


# The row of blog_questions each upgrade's gain is measured from (0: today; the SSD: the wired row).
UPGRADE_ROWS = {"wired": 1, "ssd": 2, "r2t": 3}
GAIN_BASE_ROW = {"wired": 0, "ssd": 1, "r2t": 0}


def gain_pct(table: pd.DataFrame, row: int, base_row: int = 0) -> float:
    """Per cent change of projected MiB/s of ``row`` over ``base_row``."""
    return float((table.iloc[row]["mib_per_s"] / table.iloc[base_row]["mib_per_s"] - 1.0) * 100.0)


def upgrade_gain_pct(table: pd.DataFrame, upgrade: str) -> float:
    """Per cent gain of one upgrade of :func:`blog_questions` (wired, ssd, r2t) over its base row."""
    return gain_pct(table, UPGRADE_ROWS[upgrade], GAIN_BASE_ROW[upgrade])


def device_table(devices: Mapping[str, DeviceProfile]) -> pd.DataFrame:
    """Device profiles as a table (name, fixed ms, ms per MiB, source)."""
    return pd.DataFrame(
        [
            {"device": p.name, "fixed_ms": p.fixed_ms, "ms_per_mib": p.ms_per_mib, "source": p.source}
            for p in devices.values()
        ]
    )


def cpu_table(cpu: CpuProfile) -> pd.DataFrame:
    """The CPU profile as a one-row table."""
    return pd.DataFrame([{"cpu_fixed_ms": cpu.fixed_ms, "cpu_ms_per_mib": cpu.ms_per_mib}])


def pivot_mib_per_s(cells: pd.DataFrame, bs_bytes: int) -> pd.DataFrame:
    """Projected MiB/s at one block size: a row per device, R2T and one-way latency, a column per link."""
    sel = cells[cells["bs_bytes"] == bs_bytes]
    wide = sel.pivot_table(
        index=["device", "max_outstanding_r2t", "one_way_ms"],
        columns="link_mbit_per_s",
        values="mib_per_s",
        sort=True,
    )
    wide.columns = [f"{c:g} Mbit/s" for c in wide.columns]
    return wide.reset_index()
