"""Cross-study analyses: four very different iSCSI systems explained by one theory of bounds.

Every system's throughput is capped by the lowest of four ceilings: outstanding commands over
per-command latency (Little's law), the link's byte rate, the CPU time per command, and the
device's own rate. The functions here recompute what seeds 001 (usermode SCST, 2017), 003 (100 GbE
L3 network) and 004 (COMSTAR vs the old target daemon, 2009) print, from first principles where
possible, and place them with the blog's Helios4 configurations (seed 002) by their binding bound.
Pure functions over ``data/published/*.yaml``; no raw-file I/O.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
import yaml
from scipy.optimize import brentq

from iscsi_report.analyses import blog as blog_model
from iscsi_report.analyses.audit import PublishedNumber, load_published
from iscsi_report.core.errors import ReportError
from iscsi_report.core.ingest.textio import read_text

# --- Units ----------------------------------------------------------------------------------------
BITS_PER_BYTE = 8
US_PER_S = 1e6
MS_PER_S = 1e3
BYTES_PER_KIB = 2**10
BYTES_PER_MIB = 2**20
BYTES_PER_MB = 1e6  # the SCST paper's MBPS column is 10**6 bytes per second
BYTES_PER_GB = 1e9
IOPS_PER_KIOPS = 1e3
IOPS_PER_MILLION = 1e6
PERCENT = 100.0

# --- Protocol framing (bytes) ---------------------------------------------------------------------
ISCSI_BHS_BYTES = 48  # basic header segment of every iSCSI PDU (RFC 7143 section 11.2)
ISCSI_PAD_ALIGN_BYTES = 4  # data segments are padded to a multiple of 4 bytes
IPV4_HEADER_BYTES = 20  # without options
TCP_HEADER_BYTES = 20  # without options
TCP_TIMESTAMPS_OPTION_BYTES = 12  # 10-byte timestamps option plus 2 bytes of NOP padding
ETH_PREAMBLE_SFD_BYTES = 8  # 7-byte preamble + start frame delimiter
ETH_HEADER_BYTES = 14  # destination, source, EtherType
ETH_FCS_BYTES = 4
ETH_INTERFRAME_GAP_BYTES = 12  # 96 bit times of idle line

REDUCED_CLOCK_SIZE_BYTES = 2048  # the paper's 1.6 GHz runs read 2048 bytes
ROOFLINE_MIN_BYTES = 512
ROOFLINE_MAX_BYTES = 2**20
ROOFLINE_POINTS = 49  # four per octave over 512 B .. 1 MiB
CROSSOVER_SEARCH_BYTES = (1.0, float(2**24))  # bracket for the CPU = network root
SATURATION_FRACTION = 0.9  # a resource running at >= 90% of its ceiling is taken as the binding one

STUDY_FILES = {
    "scst": "scst-usermode-2017.yaml",
    "l3": "l3-100gbe.yaml",
    "comstar": "comstar-2009.yaml",
}
_REFERENCE = re.compile(r"^[a-z0-9_]+(\.[A-Za-z0-9_]+)+$")

Mode = Literal["nodelay", "adaptive"]
MODES: tuple[Mode, ...] = ("nodelay", "adaptive")
MODE_LABELS = {"nodelay": "TCP_NODELAY", "adaptive": "Adaptive Nagle"}


# === Loading ======================================================================================


@dataclass(frozen=True)
class Study:
    """One seed's published numbers, plus its tables with cell ids resolved to values."""

    path: Path
    source: str
    numbers: dict[str, PublishedNumber]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    def value(self, key: str) -> float:
        """The published value of ``key``; a clear error naming the file if it is absent."""
        if key not in self.numbers:
            raise ReportError(f"{self.path}: no published number with id {key!r}")
        return self.numbers[key].value

    def table(self, name: str) -> pd.DataFrame:
        """A copy of table ``name`` (cells referencing ids already replaced by their values)."""
        if name not in self.tables:
            raise ReportError(f"{self.path}: no table {name!r} (have {sorted(self.tables)})")
        return self.tables[name].copy()


@dataclass(frozen=True)
class CrossStudy:
    """The three seeds this chapter recomputes, and the blog it compares them with."""

    scst: Study
    l3: Study
    comstar: Study
    blog: Study  # seed 002, transcribed by the blog chapter; used for the four-bound table

    def studies(self) -> dict[str, Study]:
        """The studies keyed as in :data:`STUDY_FILES`, plus ``blog``."""
        return {"scst": self.scst, "l3": self.l3, "comstar": self.comstar, "blog": self.blog}

    def numbers(self) -> dict[str, PublishedNumber]:
        """Every published number of the three files; ids are unique across them."""
        out: dict[str, PublishedNumber] = {}
        for study in self.studies().values():
            clash = set(out) & set(study.numbers)
            if clash:
                raise ReportError(f"{study.path}: ids also used by another study: {sorted(clash)}")
            out.update(study.numbers)
        return out


def _resolve_cell(cell: Any, numbers: Mapping[str, PublishedNumber], where: str) -> Any:
    """Replace an id-shaped string by the number it names; other cells pass through."""
    if isinstance(cell, str) and _REFERENCE.match(cell):
        if cell not in numbers:
            raise ReportError(f"{where}: unknown id {cell!r}")
        return numbers[cell].value
    return cell


def _load_tables(
    path: Path, doc: Mapping[str, Any], numbers: Mapping[str, PublishedNumber]
) -> dict[str, pd.DataFrame]:
    """Build each ``tables.<name>.rows`` list into a DataFrame with ids resolved."""
    tables = doc.get("tables") or {}
    if not isinstance(tables, dict):
        raise ReportError(f"{path}: at tables: expected a mapping of table name to rows")
    out: dict[str, pd.DataFrame] = {}
    for name, spec in tables.items():
        rows = spec.get("rows") if isinstance(spec, dict) else None
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise ReportError(f"{path}: at tables.{name}.rows: expected a list of mappings")
        resolved = [
            {k: _resolve_cell(v, numbers, f"{path}: at tables.{name}.rows[{i}].{k}") for k, v in r.items()}
            for i, r in enumerate(rows)
        ]
        out[name] = pd.DataFrame(resolved)
    return out


def load_study(path: str | Path) -> Study:
    """Read one ``data/published`` YAML into a :class:`Study` (numbers via ``audit.load_published``)."""
    p = Path(path)
    numbers = load_published(p)
    doc = yaml.safe_load(read_text(p))  # through textio: tracked as a read
    return Study(
        path=p,
        source=str(doc.get("source", p.name)),
        numbers=numbers,
        tables=_load_tables(p, doc, numbers),
    )


def load_cross_study(published_dir: str | Path) -> CrossStudy:
    """Load the three seed files of this chapter, and the blog's, from ``published_dir``."""
    d = Path(published_dir)
    studies = {key: load_study(d / name) for key, name in STUDY_FILES.items()}
    return CrossStudy(**studies, blog=load_study(d / BLOG_FILE))


# === Bytes on the wire ============================================================================


@dataclass(frozen=True)
class WireModel:
    """How a read reply is framed on an Ethernet link carrying TCP/IPv4.

    ``packing="stream"`` charges framing per MSS of a continuously full pipe (replies packed back
    to back, the paper's "efficiently packed"); ``"per_op"`` sends each reply in whole frames.
    ``max_data_segment_bytes`` splits a reply into Data-In PDUs of that size (None: one PDU).
    """

    link_bit_per_s: float = 1e9
    mtu_bytes: int = 9000
    tcp_timestamps: bool = True
    packing: Literal["stream", "per_op"] = "stream"
    max_data_segment_bytes: int | None = None

    @property
    def tcp_ip_header_bytes(self) -> int:
        """IPv4 + TCP headers, with the timestamps option when enabled."""
        options = TCP_TIMESTAMPS_OPTION_BYTES if self.tcp_timestamps else 0
        return IPV4_HEADER_BYTES + TCP_HEADER_BYTES + options

    @property
    def mss_bytes(self) -> int:
        """TCP payload carried by one full frame."""
        return self.mtu_bytes - self.tcp_ip_header_bytes

    @property
    def frame_overhead_bytes(self) -> int:
        """Line bytes per frame beyond its TCP payload: headers, Ethernet framing, gap."""
        ethernet = ETH_PREAMBLE_SFD_BYTES + ETH_HEADER_BYTES + ETH_FCS_BYTES + ETH_INTERFRAME_GAP_BYTES
        return ethernet + self.tcp_ip_header_bytes

    @property
    def payload_efficiency(self) -> float:
        """Fraction of line time that carries TCP payload when frames are full."""
        return self.mss_bytes / (self.mss_bytes + self.frame_overhead_bytes)


def iscsi_stream_bytes(size_bytes: float, model: WireModel) -> float:
    """TCP payload bytes of one read reply: data padded to 4 bytes plus one BHS per Data-In PDU."""
    pdus = (
        1
        if model.max_data_segment_bytes is None
        else max(1, math.ceil(size_bytes / model.max_data_segment_bytes))
    )
    padded = math.ceil(size_bytes / ISCSI_PAD_ALIGN_BYTES) * ISCSI_PAD_ALIGN_BYTES
    return padded + pdus * ISCSI_BHS_BYTES


def wire_bytes_per_read(size_bytes: float, model: WireModel) -> float:
    """Line bytes (payload, headers, framing, gap) one read reply occupies."""
    stream = iscsi_stream_bytes(size_bytes, model)
    frames = stream / model.mss_bytes if model.packing == "stream" else math.ceil(stream / model.mss_bytes)
    return stream + frames * model.frame_overhead_bytes


def reply_time_us(size_bytes: float, model: WireModel) -> float:
    """Microseconds the link needs to carry one read reply."""
    return wire_bytes_per_read(size_bytes, model) * BITS_PER_BYTE / model.link_bit_per_s * US_PER_S


def network_ceiling_iops(size_bytes: float, model: WireModel) -> float:
    """Reads per second that fill the link (one reply per reply time)."""
    return US_PER_S / reply_time_us(size_bytes, model)


def paper_style_reply_time_us(size_bytes: float, model: WireModel) -> float:
    """Our reading of the paper's arithmetic: framing charged per MTU of iSCSI stream, not per MSS.

    ``(size + 48) * (MTU + overhead) / MTU`` at the link rate reproduces every printed cell of
    seed 001's network reply column to its last digit (overhead 90 bytes at MTU 9000).
    """
    stream = size_bytes + ISCSI_BHS_BYTES
    line = stream * (model.mtu_bytes + model.frame_overhead_bytes) / model.mtu_bytes
    return line * BITS_PER_BYTE / model.link_bit_per_s * US_PER_S


def network_reply_table(scst: Study, model: WireModel | None = None) -> pd.DataFrame:
    """Per size: the paper's network reply time beside ours (stream and per-op framing), ceilings."""
    model = model or WireModel()
    per_op = WireModel(**{**model.__dict__, "packing": "per_op"})
    tpt = scst.table("throughput_time")
    peaks = peak_table(scst).set_index("size_bytes")
    rows = []
    for size, paper_us in zip(tpt["size_bytes"], tpt["net_reply_us"], strict=True):
        ours_us = reply_time_us(size, model)
        rows.append(
            {
                "size_bytes": int(size),
                "paper_reply_us": paper_us,
                "model_reply_us": ours_us,
                "model_minus_paper_us": ours_us - paper_us,
                "model_diff_pct": PERCENT * (ours_us - paper_us) / paper_us,
                "paper_style_reply_us": paper_style_reply_time_us(size, model),
                "per_op_reply_us": reply_time_us(size, per_op),
                "network_ceiling_iops": network_ceiling_iops(size, model),
                "per_op_ceiling_iops": network_ceiling_iops(size, per_op),
                "best_peak_iops": peaks.loc[size, "adaptive_iops"],
            }
        )
    out = pd.DataFrame(rows)
    out["best_peak_fraction_of_ceiling"] = out["best_peak_iops"] / out["network_ceiling_iops"]
    return out


# === SCST peaks and CPU cost =====================================================================


def peak_table(scst: Study) -> pd.DataFrame:
    """The paper's peak-IOPS table: size, both modes' peaks, difference, MB/s, %net, regime."""
    out = scst.table("peak_iops")
    out["size_bytes"] = out["size_bytes"].astype(int)
    return out


def cpu_points(scst: Study) -> pd.DataFrame:
    """Per-op CPU time (1/peak IOPS) at the sizes the paper classes as CPU bound, per mode.

    The paper lists TCP_NODELAY CPU time at 512-2048 bytes and Adaptive Nagle CPU time at 512 and
    1024 bytes (the other sizes are network bound); IOPS come from the peak table.
    """
    tpt = scst.table("throughput_time").set_index("size_bytes")
    peaks = peak_table(scst).set_index("size_bytes")
    rows = []
    for mode in MODES:
        sizes = tpt.index[tpt[f"cpu_us_{mode}"].notna()]
        for size in sizes:
            iops = float(peaks.loc[size, f"{mode}_iops"])
            rows.append(
                {
                    "mode": mode,
                    "size_bytes": int(size),
                    "size_kib": size / BYTES_PER_KIB,
                    "iops": iops,
                    "cpu_us": US_PER_S / iops,
                    "paper_cpu_us": float(tpt.loc[size, f"cpu_us_{mode}"]),
                }
            )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class CpuFit:
    """Per-op CPU time ``intercept_us + slope_us_per_kib * size_kib`` per mode at ``clock_ghz``."""

    intercept_us: Mapping[str, float]
    slope_us_per_kib: Mapping[str, float]
    clock_ghz: float
    method: str

    def cpu_us(self, mode: str, size_bytes: float, clock_ghz: float | None = None) -> float:
        """CPU microseconds per read at ``clock_ghz`` (all of it scaled by the clock ratio)."""
        ratio = self.clock_ghz / (clock_ghz or self.clock_ghz)
        size_kib = size_bytes / BYTES_PER_KIB
        return (self.intercept_us[mode] + self.slope_us_per_kib[mode] * size_kib) * ratio

    def ceiling_iops(self, mode: str, size_bytes: float, clock_ghz: float | None = None) -> float:
        """Reads per second one session thread can process when CPU bound."""
        return US_PER_S / self.cpu_us(mode, size_bytes, clock_ghz)


def _ols_rows(result: Any, model_name: str, mode: str, terms: Mapping[str, str]) -> list[dict[str, Any]]:
    """Tidy rows (estimate, 95% CI) for the named terms of a fitted statsmodels OLS."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        ci = result.conf_int(alpha=0.05)
    rows = []
    for term, label in terms.items():
        rows.append(
            {
                "model": model_name,
                "mode": mode,
                "term": label,
                "estimate": float(result.params[term]),
                "ci_low": float(ci.loc[term, 0]) if result.df_resid > 0 else float("nan"),
                "ci_high": float(ci.loc[term, 1]) if result.df_resid > 0 else float("nan"),
                "n": int(result.nobs),
                "df_resid": int(result.df_resid),
            }
        )
    return rows


def cpu_regression_table(points: pd.DataFrame) -> pd.DataFrame:
    """OLS of per-op CPU us on size (KiB): one line per mode, and a pooled common-slope model.

    A mode with two points has no residual degrees of freedom, so its CIs are NaN; the pooled
    model (mode intercepts, one slope) is the one that carries intervals for both intercepts.
    """
    rows: list[dict[str, Any]] = []
    for mode in MODES:
        sub = points[points["mode"] == mode]
        if len(sub) < 2:
            raise ReportError(f"cpu regression: need two CPU-bound sizes for {mode}, have {len(sub)}")
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = smf.ols("cpu_us ~ size_kib", data=sub).fit()
        rows += _ols_rows(
            result, "separate", mode, {"Intercept": "intercept_us", "size_kib": "slope_us_per_kib"}
        )
    pooled = smf.ols("cpu_us ~ 0 + C(mode) + size_kib", data=points).fit()
    for mode in MODES:
        rows += _ols_rows(pooled, "pooled", mode, {f"C(mode)[{mode}]": "intercept_us"})
    rows += _ols_rows(pooled, "pooled", "both", {"size_kib": "slope_us_per_kib"})
    return pd.DataFrame(rows)


def fit_cpu_cost(points: pd.DataFrame, clock_ghz: float, method: str = "separate") -> CpuFit:
    """Per-mode CPU cost lines from :func:`cpu_regression_table` (``separate`` or ``pooled``)."""
    table = cpu_regression_table(points)
    sub = table[table["model"] == method]
    if sub.empty:
        raise ReportError(f"cpu fit: unknown method {method!r} (separate or pooled)")
    intercept: dict[str, float] = {
        m: float(sub[(sub["mode"] == m) & (sub["term"] == "intercept_us")]["estimate"].iloc[0]) for m in MODES
    }
    slopes = sub[sub["term"] == "slope_us_per_kib"].set_index("mode")["estimate"]
    slope: dict[str, float] = {m: float(slopes[m] if m in slopes.index else slopes["both"]) for m in MODES}
    return CpuFit(intercept_us=intercept, slope_us_per_kib=slope, clock_ghz=clock_ghz, method=method)


def scst_cpu_fit(scst: Study, method: str = "separate") -> CpuFit:
    """The CPU cost fit of seed 001 at its standard clock."""
    return fit_cpu_cost(cpu_points(scst), scst.value("scst.setup.cpu_clock_ghz"), method)


# === Clock scaling ================================================================================


def clock_scaled_fraction(
    iops_from: float, iops_to: float | pd.Series, clock_from_ghz: float, clock_to_ghz: float
) -> float | pd.Series:
    """Fraction of per-op time that would have to scale with the clock to explain a measured change."""
    time_ratio = iops_from / iops_to
    clock_ratio = clock_from_ghz / clock_to_ghz
    return (time_ratio - 1.0) / (clock_ratio - 1.0)


def clock_scaling_table(scst: Study, fit: CpuFit, model: WireModel | None = None) -> pd.DataFrame:
    """Predict the 2048-byte results at 1.6 GHz by scaling CPU time with 2.4/1.6; compare to seed."""
    model = model or WireModel()
    size = REDUCED_CLOCK_SIZE_BYTES
    ghz_from = scst.value("scst.nagle.standard_clock_ghz")
    ghz_to = scst.value("scst.nagle.reduced_clock_ghz")
    peaks = peak_table(scst).set_index("size_bytes")
    net_iops = network_ceiling_iops(size, model)
    measured_nodelay_from = float(peaks["nodelay_iops"].loc[size])
    cases = [
        (
            "nodelay",
            "measured 2.4 GHz peak",
            US_PER_S / measured_nodelay_from,
            scst.value("scst.nagle.reduced_clock_nodelay_iops"),
        ),
        (
            "nodelay",
            "regression line",
            fit.cpu_us("nodelay", size),
            scst.value("scst.nagle.reduced_clock_nodelay_iops"),
        ),
        (
            "adaptive",
            "regression line",
            fit.cpu_us("adaptive", size),
            scst.value("scst.nagle.reduced_clock_adaptive_iops"),
        ),
    ]
    rows = []
    for mode, basis, cpu_us_from, measured in cases:
        cpu_us_to = cpu_us_from * ghz_from / ghz_to
        cpu_iops = US_PER_S / cpu_us_to
        predicted = min(cpu_iops, net_iops)
        rows.append(
            {
                "mode": mode,
                "basis": basis,
                "size_bytes": size,
                "clock_from_ghz": ghz_from,
                "clock_to_ghz": ghz_to,
                "cpu_us_from": cpu_us_from,
                "cpu_us_to": cpu_us_to,
                "cpu_ceiling_iops": cpu_iops,
                "network_ceiling_iops": net_iops,
                "predicted_iops": predicted,
                "predicted_bound": "cpu" if cpu_iops < net_iops else "network",
                "measured_iops": measured,
                "gap_pct": PERCENT * (measured - predicted) / predicted,
            }
        )
    out = pd.DataFrame(rows)
    out["clock_scaled_fraction"] = np.where(
        out["basis"] == "measured 2.4 GHz peak",
        clock_scaled_fraction(measured_nodelay_from, out["measured_iops"], ghz_from, ghz_to),
        np.nan,
    )
    return out


# === Roofline =====================================================================================

ROOFLINE_NETWORK = "network (1 Gb/s)"


def roofline_frame(fit: CpuFit, model: WireModel, sizes_bytes: np.ndarray | None = None) -> pd.DataFrame:
    """IOPS ceilings against I/O size: the network line and one CPU line per mode (long form)."""
    if sizes_bytes is None:
        sizes_bytes = np.geomspace(ROOFLINE_MIN_BYTES, ROOFLINE_MAX_BYTES, ROOFLINE_POINTS)
    rows = []
    for size in sizes_bytes:
        rows.append(
            {
                "size_bytes": float(size),
                "ceiling": ROOFLINE_NETWORK,
                "iops": network_ceiling_iops(size, model),
            }
        )
        for mode in MODES:
            rows.append(
                {
                    "size_bytes": float(size),
                    "ceiling": f"CPU, {MODE_LABELS[mode]}",
                    "iops": fit.ceiling_iops(mode, size),
                }
            )
    return pd.DataFrame(rows)


def measured_peaks_long(scst: Study) -> pd.DataFrame:
    """Measured peaks in long form: one row per size and mode ("both modes" above 2048 bytes)."""
    peaks = peak_table(scst)
    rows = []
    for rec in peaks.to_dict("records"):
        if rec["nodelay_iops"] == rec["adaptive_iops"]:
            rows.append({"size_bytes": rec["size_bytes"], "mode": "both modes", "iops": rec["nodelay_iops"]})
            continue
        for mode in MODES:
            rows.append(
                {"size_bytes": rec["size_bytes"], "mode": MODE_LABELS[mode], "iops": rec[f"{mode}_iops"]}
            )
    return pd.DataFrame(rows)


def crossover_table(fit: CpuFit, model: WireModel, clock_ghz: float | None = None) -> pd.DataFrame:
    """Size at which each mode's CPU time per read equals the link's reply time (CPU -> network)."""
    rows = []
    for mode in MODES:

        def gap(size: float, mode: str = mode) -> float:
            return fit.cpu_us(mode, size, clock_ghz) - reply_time_us(size, model)

        lo, hi = CROSSOVER_SEARCH_BYTES
        size = brentq(gap, lo, hi) if gap(lo) * gap(hi) < 0 else float("nan")
        rows.append(
            {
                "mode": mode,
                "clock_ghz": clock_ghz or fit.clock_ghz,
                "crossover_size_bytes": size,
                "crossover_iops": network_ceiling_iops(size, model) if math.isfinite(size) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


# === Little's law =================================================================================


def little_latency_ms(in_flight: float, iops: float) -> float:
    """Mean time in system (ms) of ``in_flight`` commands completing at ``iops`` (L = X * R)."""
    return in_flight / iops * MS_PER_S


def littles_law_table(cs: CrossStudy) -> pd.DataFrame:
    """Latency implied by concurrency and throughput, and CPU per op, for every system with both."""
    c, l3, scst = cs.comstar, cs.l3, cs.scst
    outstanding = c.value("comstar.read.clients") * c.value("comstar.read.threads_per_client")
    rows: list[dict[str, Any]] = []
    for target, kiops_id, cpus_id in (
        ("old target daemon", "comstar.read.daemon_kiops", "comstar.read.daemon_cpus"),
        ("COMSTAR", "comstar.read.comstar_kiops", "comstar.read.comstar_cpus"),
    ):
        iops = c.value(kiops_id) * IOPS_PER_KIOPS
        rows.append(
            {
                "system": "COMSTAR 2009",
                "case": f"{target}, 8 KiB cache-hit reads",
                "in_flight": outstanding,
                "iops": iops,
                "latency_ms": little_latency_ms(outstanding, iops),
                "cpu_us_per_op": c.value(cpus_id) / iops * US_PER_S,
                "derivation": "10 clients x 10 threads in flight; latency = in flight / IOPS; "
                "CPU = CPUs used / IOPS",
            }
        )
    sessions = l3.value("l3.tests.storage_ports") * l3.value("l3.tests.sessions_per_port")
    session_cap = sessions * l3.value("l3.tldr.cmds_max")
    for rw, prefix, kiops_id in (
        ("write", "record", "l3.record.write_kiops"),
        ("read", "reading", "l3.reading.read_kiops"),
    ):
        iops = l3.value(kiops_id) * IOPS_PER_KIOPS
        fio_in_flight = l3.value(f"l3.{prefix}.numjobs") * l3.value(f"l3.{prefix}.iodepth")
        for case, in_flight, how in (
            ("fio jobs x iodepth", fio_in_flight, "136 jobs x iodepth 256 submitted by fio"),
            (
                "iSCSI sessions x cmds_max",
                session_cap,
                "4 ports x 8 sessions x cmds_max 256 the initiator can send",
            ),
        ):
            rows.append(
                {
                    "system": "100 GbE L3",
                    "case": f"4 KiB {rw}, {case}",
                    "in_flight": in_flight,
                    "iops": iops,
                    "latency_ms": little_latency_ms(in_flight, iops),
                    "cpu_us_per_op": float("nan"),
                    "derivation": f"{how}; latency = in flight / IOPS",
                }
            )
    peaks = peak_table(scst).set_index("size_bytes")
    cap_ms = scst.value("scst.peak.response_time_cap_ms")
    iops_512 = float(peaks["adaptive_iops"].loc[512])
    rows.append(
        {
            "system": "SCST usermode 2017",
            "case": "512 B Adaptive Nagle peak, response time < 1.25 ms",
            "in_flight": iops_512 * cap_ms / MS_PER_S,
            "iops": iops_512,
            "latency_ms": cap_ms,
            "cpu_us_per_op": US_PER_S / iops_512,
            "derivation": "upper bound on commands in flight = IOPS x 1.25 ms (initiator allows 384)",
        }
    )
    prefix = "scst.measure.saturation_qd."
    for key in sorted((k for k in scst.numbers if k.startswith(prefix)), key=lambda k: int(k[len(prefix) :])):
        size = int(key[len(prefix) :])
        qd = scst.value(key)
        iops = float(peaks["nodelay_iops"].loc[size])
        rows.append(
            {
                "system": "SCST usermode 2017",
                "case": f"{size} B reads, queue depth where the link saturates",
                "in_flight": qd,
                "iops": iops,
                "latency_ms": little_latency_ms(qd, iops),
                "cpu_us_per_op": float("nan"),
                "derivation": "latency = saturating queue depth / peak IOPS "
                "(the round trip a full pipe hides)",
            }
        )
    return pd.DataFrame(rows)


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
            row[f"max_latency_ms_at_{rw}_iops"] = little_latency_ms(row["in_flight_cap"], iops)
        rows.append(row)
    return pd.DataFrame(rows)


def writer_thread_queue_depth(size_bytes: float, tcp_wmem_bytes: float) -> float:
    """Queue depth above which SCST replies can overflow the socket send buffer (seed 001)."""
    return tcp_wmem_bytes / (size_bytes + ISCSI_BHS_BYTES)


def mtu_gain_table(l3: Study) -> pd.DataFrame:
    """Goodput gain from MTU 1500 -> 9000 that framing alone allows, beside the seed's +2%."""
    rows = []
    for mtu_id in ("l3.tests.mtu_before_bytes", "l3.tests.mtu_bytes"):
        m = WireModel(
            link_bit_per_s=l3.value("l3.tldr.link_gbit_per_s") * 1e9, mtu_bytes=int(l3.value(mtu_id))
        )
        rows.append({"mtu_bytes": m.mtu_bytes, "payload_efficiency": m.payload_efficiency})
    out = pd.DataFrame(rows)
    out["framing_gain_pct"] = PERCENT * (out["payload_efficiency"] / out["payload_efficiency"].iloc[0] - 1)
    out["seed_gain_pct"] = [0.0, l3.value("l3.tests.mtu_gain_pct")]
    return out


# === Four systems, four bounds ====================================================================

BOUNDS = ("latency_qd", "link", "cpu", "device")
BOUND_LABELS = {
    "latency_qd": "latency x queue depth",
    "link": "link",
    "cpu": "CPU",
    "device": "device",
}


BLOG_FILE = "blog-2023.yaml"
BLOG_IO_BYTES = 2 * BYTES_PER_MIB  # bs=2M in the blog's fio job
FIO_DEFAULT_IODEPTH = 1  # the blog's jobs set no iodepth: one command in flight per job
MBIT = 1e6
# (projection key, label, iperf3 id, local 2 MiB device IOPS id) of the blog's measured setups
BLOG_SETUPS = (
    ("wireless_hdd", "wireless, HDD", "network.iperf3.wireless_mbit_per_s", "fio.local.hdd.2m.iops"),
    ("wired_hdd", "wired, HDD", "network.iperf3.wired_mbit_per_s", "fio.local.hdd.2m.iops"),
    ("wired_ssd", "wired, SSD", "network.iperf3.wired_mbit_per_s", "fio.local.ssd.2m.iops"),
)
BLOG_R2T_SETTINGS = (1, 16)  # MaxOutstandingR2T of the blog's two projection blocks
COMSTAR_ASSUMED_MTU_BYTES = 1500  # the seed does not give the MTU; standard frames assumed


def _bound_row(
    system: str,
    case: str,
    io_bytes: float,
    achieved_bytes_per_s: float,
    bounds_bytes_per_s: Mapping[str, float],
    note: str,
) -> dict[str, Any]:
    """One system/case with achieved rate, each bound (bytes/s), fractions and the binding bound."""
    row: dict[str, Any] = {
        "system": system,
        "case": case,
        "io_bytes": io_bytes,
        "achieved_bytes_per_s": achieved_bytes_per_s,
        "achieved_iops": achieved_bytes_per_s / io_bytes if io_bytes else float("nan"),
    }
    fractions = {}
    for b in BOUNDS:
        bound = bounds_bytes_per_s.get(b, float("nan"))
        row[f"bound_{b}_bytes_per_s"] = bound
        row[f"bound_{b}_iops"] = bound / io_bytes if io_bytes else float("nan")
        fractions[b] = achieved_bytes_per_s / bound if math.isfinite(bound) else float("nan")
        row[f"frac_{b}"] = fractions[b]
    known = {b: f for b, f in fractions.items() if math.isfinite(f)}
    top = max(known, key=known.__getitem__)
    if known[top] >= SATURATION_FRACTION:
        row.update(binding=top, binding_fraction=known[top], basis="at or above 90% of this bound")
    else:
        row.update(
            binding="latency_qd",
            binding_fraction=fractions["latency_qd"],
            basis=(
                f"by elimination: no measured resource above {SATURATION_FRACTION:.0%} "
                f"(highest {top} {known[top]:.0%})"
            ),
        )
    row["note"] = note
    return row


def _blog_rows(blog: Study) -> list[dict[str, Any]]:
    """The blog's six measured configurations: one command in flight, so IOPS <= 1 / op time."""
    queue_depth = blog.value("setup.fio_numjobs") * FIO_DEFAULT_IODEPTH
    # op times from the blog's own formula and inputs: two printed wired R2T=1 values do not
    # follow from them (see blog_model.wired_r2t1_discrepancy); the consistent ones are used.
    keys = ["max_outstanding_r2t", "network", "device"]
    formula = blog_model.projection_table(blog.path).set_index(keys)["op_ms"]
    rows = []
    for r2t in BLOG_R2T_SETTINGS:
        for key, label, link_id, device_id in BLOG_SETUPS:
            prefix = f"projection.r2t{r2t}.{key}"
            network_label, device_label = key.split("_")
            op_ms = round(float(formula[(r2t, network_label, device_label.upper())]), 2)
            bounds = {
                "latency_qd": queue_depth / (op_ms / MS_PER_S) * BLOG_IO_BYTES,
                "link": blog.value(link_id) * MBIT / BITS_PER_BYTE,
                "cpu": MS_PER_S / blog.value(f"{prefix}.cpu_lat_ms") * BLOG_IO_BYTES,
                "device": blog.value(device_id) * BLOG_IO_BYTES,
            }
            rows.append(
                _bound_row(
                    "Helios4 blog (seed 002)",
                    f"{label}, MaxOutstandingR2T={r2t}, 2 MiB writes",
                    BLOG_IO_BYTES,
                    blog.value(f"{prefix}.actual_mib_per_s") * BYTES_PER_MIB,
                    bounds,
                    f"modelled op time {op_ms} ms at queue depth {queue_depth:g}; link is iperf3 goodput",
                )
            )
    return rows


def _scst_rows(scst: Study, fit: CpuFit, model: WireModel) -> list[dict[str, Any]]:
    """SCST single session on 1 Gb: CPU and link bounds (no device: /dev/zero)."""
    peaks = peak_table(scst).set_index("size_bytes")
    slow_ghz = scst.value("scst.nagle.reduced_clock_ghz")
    cases = [
        ("512 B reads, TCP_NODELAY, 2.4 GHz", 512, float(peaks["nodelay_iops"].loc[512]), "nodelay", None),
        (
            "512 B reads, Adaptive Nagle, 2.4 GHz",
            512,
            float(peaks["adaptive_iops"].loc[512]),
            "adaptive",
            None,
        ),
        (
            "2048 B reads, TCP_NODELAY, 1.6 GHz",
            2048,
            scst.value("scst.nagle.reduced_clock_nodelay_iops"),
            "nodelay",
            slow_ghz,
        ),
        ("64 KiB reads, 2.4 GHz", 65536, float(peaks["nodelay_iops"].loc[65536]), "nodelay", None),
    ]
    rows = []
    for case, size, iops, mode, ghz in cases:
        bounds = {
            "link": network_ceiling_iops(size, model) * size,
            "cpu": fit.ceiling_iops(mode, size, ghz) * size,
        }
        rows.append(
            _bound_row(
                "SCST usermode (seed 001)",
                case,
                size,
                iops * size,
                bounds,
                "CPU bound from the per-op CPU regression (clock-scaled where 1.6 GHz); "
                "/dev/zero has no device bound",
            )
        )
    return rows


def _l3_rows(l3: Study) -> list[dict[str, Any]]:
    """100 GbE: only the link bound is measurable from the seed."""
    link_bit_per_s = l3.value("l3.tldr.link_gbit_per_s") * 1e9
    model = WireModel(link_bit_per_s=link_bit_per_s, mtu_bytes=int(l3.value("l3.tests.mtu_bytes")))
    goodput = link_bit_per_s / BITS_PER_BYTE * model.payload_efficiency
    rows = []
    for rw, prefix, kiops_id in (
        ("read", "reading", "l3.reading.read_kiops"),
        ("write", "record", "l3.record.write_kiops"),
    ):
        size = l3.value(f"l3.{prefix}.bs_bytes")
        iops = l3.value(kiops_id) * IOPS_PER_KIOPS
        rows.append(
            _bound_row(
                "100 GbE L3 (seed 003)",
                f"4 KiB {rw}s, fio 136 jobs x iodepth 256",
                size,
                iops * size,
                {"link": network_ceiling_iops(size, model) * size},
                "CPU and array limits are not reported by the seed",
            )
        )
    for case, gbyte_per_s_bytes, note in (
        (
            "medium-block transfers (12.3 GB/s)",
            l3.value("l3.tldr.achieved_gbyte_per_s") * BYTES_PER_GB,
            "read as bytes: the conclusions' '12.3Gb/s' would be 12% of the link, "
            "contradicting 'almost 100%'",
        ),
        (
            "table validation, queue_depth 32",
            l3.value("l3.analysis.load_gbit_per_s") * 1e9 / BITS_PER_BYTE,
            "out-of-the-box iscsid settings",
        ),
        (
            "table validation, queue_depth 256",
            l3.value("l3.analysis.after_gbit_per_s") * 1e9 / BITS_PER_BYTE,
            "later found: second port of each card underloaded until 4x8 sessions",
        ),
        (
            "NVMe/TCP comparison (9 GB/s, 4 disks)",
            l3.value("l3.bonus.nvme_gbyte_per_s") * BYTES_PER_GB,
            "not iSCSI: same fio parameters over NVMe/TCP, for scale",
        ),
    ):
        rows.append(
            _bound_row(
                "100 GbE L3 (seed 003)", case, float("nan"), gbyte_per_s_bytes, {"link": goodput}, note
            )
        )
    return rows


def _comstar_rows(c: Study) -> list[dict[str, Any]]:
    """COMSTAR and the daemon: link (10 GbE, MTU assumed 1500) and CPU (16 cores) bounds."""
    size = c.value("comstar.read.io_kib") * BYTES_PER_KIB
    cores = c.value("comstar.comments.cores")
    model = WireModel(
        link_bit_per_s=c.value("comstar.comments.link_gbit_per_s") * 1e9, mtu_bytes=COMSTAR_ASSUMED_MTU_BYTES
    )
    rows = []
    for target, kiops_id, cpus_id in (
        ("old target daemon", "comstar.read.daemon_kiops", "comstar.read.daemon_cpus"),
        ("COMSTAR", "comstar.read.comstar_kiops", "comstar.read.comstar_cpus"),
    ):
        iops = c.value(kiops_id) * IOPS_PER_KIOPS
        cpu_s_per_op = c.value(cpus_id) / iops
        rows.append(
            _bound_row(
                "COMSTAR 2009 (seed 004)",
                f"{target}, 8 KiB cache-hit reads, 100 outstanding",
                size,
                iops * size,
                {"link": network_ceiling_iops(size, model) * size, "cpu": cores / cpu_s_per_op * size},
                "cache hits: no device bound; CPU bound = all 16 cores at the measured CPU per op",
            )
        )
    return rows


def bounds_table(cs: CrossStudy, fit: CpuFit | None = None, model: WireModel | None = None) -> pd.DataFrame:
    """Every system's achieved rate as a fraction of each bound, and the bound that binds."""
    model = model or WireModel()
    fit = fit or scst_cpu_fit(cs.scst)
    rows = _blog_rows(cs.blog) + _scst_rows(cs.scst, fit, model) + _l3_rows(cs.l3) + _comstar_rows(cs.comstar)
    return pd.DataFrame(rows)


def _binding_label(rec: Mapping[Hashable, Any]) -> str:
    """Short text naming a row's binding bound and whether it was measured or inferred."""
    label = BOUND_LABELS[rec["binding"]]
    return label if math.isfinite(rec["binding_fraction"]) else f"{label} (by elimination)"


def bounds_long(bounds: pd.DataFrame) -> pd.DataFrame:
    """Long form of :func:`bounds_table` for charts: one row per case and known bound."""
    rows = []
    for rec in bounds.to_dict("records"):
        for b in BOUNDS:
            if math.isfinite(rec[f"frac_{b}"]):
                rows.append(
                    {
                        "system": rec["system"],
                        "case": rec["case"],
                        "bound": BOUND_LABELS[b],
                        "fraction": rec[f"frac_{b}"],
                        "binding": rec["binding"] == b,
                        "binding_label": _binding_label(rec),
                    }
                )
    return pd.DataFrame(rows)


# === Audit ========================================================================================


def _pct_change(new: float, old: float) -> float:
    """Percentage by which ``new`` exceeds ``old``."""
    return PERCENT * (new / old - 1.0)


def _scst_recomputed(scst: Study, model: WireModel) -> dict[str, float]:
    """Every SCST number the analyses reproduce (why any differs: the published YAML)."""
    rec: dict[str, float] = {}
    peaks = peak_table(scst).set_index("size_bytes")
    tpt = scst.table("throughput_time")
    cpu_bound = {m: set(tpt.dropna(subset=[f"cpu_us_{m}"])["size_bytes"]) for m in MODES}
    rows_by_size: Iterable[tuple[Any, pd.Series]] = peaks.iterrows()  # index: size_bytes (int)
    for size, row in rows_by_size:
        best = float(row["adaptive_iops"])
        reply = reply_time_us(size, model)
        rec[f"scst.tpt.net_reply_us.{size}"] = reply
        rec[f"scst.tpt.tpt_us.{size}"] = US_PER_S / best
        rec[f"scst.peak.mbps.{size}"] = best * size / BYTES_PER_MB
        rec[f"scst.peak.net_pct.{size}"] = PERCENT * best * reply / US_PER_S
        if size in cpu_bound["nodelay"]:
            rec[f"scst.tpt.cpu_us_nodelay.{size}"] = US_PER_S / float(row["nodelay_iops"])
            rec[f"scst.peak.diff_pct.{size}"] = _pct_change(best, float(row["nodelay_iops"]))
        if size in cpu_bound["adaptive"]:
            rec[f"scst.tpt.cpu_us_adaptive.{size}"] = US_PER_S / best

    nodelay_512 = float(peaks["nodelay_iops"].loc[512])
    adaptive_512 = float(peaks["adaptive_iops"].loc[512])
    reply_512 = reply_time_us(512, model)
    rec["scst.nagle.nodelay_peak_512_iops"] = nodelay_512
    rec["scst.nagle.adaptive_peak_512_iops"] = adaptive_512
    rec["scst.nagle.gain_512_pct"] = _pct_change(adaptive_512, nodelay_512)
    rec["scst.nagle.adaptive_net_pct_512"] = PERCENT * adaptive_512 * reply_512 / US_PER_S
    rec["scst.nagle.nodelay_net_pct_512"] = PERCENT * nodelay_512 * reply_512 / US_PER_S
    rec["scst.nagle.nodelay_fraction_of_link_512"] = nodelay_512 * reply_512 / US_PER_S
    rec["scst.nagle.adaptive_peak_1024_iops"] = float(peaks["adaptive_iops"].loc[1024])
    rec["scst.nagle.nodelay_peak_1024_iops"] = float(peaks["nodelay_iops"].loc[1024])

    ceiling_1536 = network_ceiling_iops(1536, model)
    rec["scst.nagle.nodelay_peak_1536_iops"] = float(peaks["nodelay_iops"].loc[1536])
    rec["scst.nagle.nodelay_cpu_bound_1536_iops"] = float(peaks["nodelay_iops"].loc[1536])
    rec["scst.nagle.adaptive_peak_1536_iops"] = float(peaks["adaptive_iops"].loc[1536])
    rec["scst.nagle.threshold96_1536_iops"] = float(peaks["adaptive_iops"].loc[1536])
    rec["scst.nagle.full_nagle_peak_1536_iops"] = ceiling_1536
    rec["scst.nagle.net_limit_1536_iops"] = ceiling_1536
    rec["scst.nagle.threshold96_1536_pct_of_max"] = (
        PERCENT * float(peaks["adaptive_iops"].loc[1536]) / ceiling_1536
    )

    ghz_from = scst.value("scst.nagle.standard_clock_ghz")
    ghz_to = scst.value("scst.nagle.reduced_clock_ghz")
    slow_nodelay = scst.value("scst.nagle.reduced_clock_nodelay_iops")
    slow_adaptive = scst.value("scst.nagle.reduced_clock_adaptive_iops")
    clock = clock_scaling_table(scst, scst_cpu_fit(scst), model).set_index(["mode", "basis"])
    rec["scst.nagle.clock_reduction_pct"] = PERCENT * (1 - ghz_to / ghz_from)
    rec["scst.nagle.reduced_clock_nodelay_drop_pct"] = -_pct_change(
        slow_nodelay, float(peaks["nodelay_iops"].loc[2048])
    )
    rec["scst.nagle.reduced_clock_nodelay_iops"] = float(
        clock["predicted_iops"].loc[("nodelay", "measured 2.4 GHz peak")]
    )
    rec["scst.nagle.reduced_clock_adaptive_iops"] = float(
        clock["predicted_iops"].loc[("adaptive", "regression line")]
    )
    rec["scst.nagle.reduced_clock_adaptive_net_pct"] = (
        PERCENT * slow_adaptive * reply_time_us(2048, model) / US_PER_S
    )
    rec["scst.nagle.reduced_clock_adaptive_gain_pct"] = _pct_change(slow_adaptive, slow_nodelay)

    t_nodelay_512 = US_PER_S / nodelay_512
    t_adaptive_512 = US_PER_S / adaptive_512
    rec["scst.nagle.l2_gap_nodelay_us"] = (
        t_nodelay_512 * scst.value("scst.nagle.l2_gain_nodelay_pct") / PERCENT
    )
    rec["scst.nagle.l2_gap_adaptive_us"] = (
        t_adaptive_512 * scst.value("scst.nagle.l2_gain_adaptive_pct") / PERCENT
    )
    cpus = scst.table("cpu_assignment").set_index("cpu")["iops"]
    rec["scst.cpus.cpu0_gain_pct"] = _pct_change(float(cpus[0]), float(cpus[[2, 3]].mean()))
    return rec


def _l3_recomputed(l3: Study) -> dict[str, float]:
    """The 100 GbE numbers that follow from other printed numbers."""
    write_iops = l3.value("l3.record.write_kiops") * IOPS_PER_KIOPS
    read_iops = l3.value("l3.reading.read_kiops") * IOPS_PER_KIOPS
    rec = {
        "l3.record.write_mib_per_s": write_iops * l3.value("l3.record.bs_bytes") / BYTES_PER_MIB,
        "l3.reading.read_mib_per_s": read_iops * l3.value("l3.reading.bs_bytes") / BYTES_PER_MIB,
        "l3.conclusions.write_million_iops": write_iops / IOPS_PER_MILLION,
        "l3.conclusions.read_million_iops": read_iops / IOPS_PER_MILLION,
        "l3.initial.network_utilisation_pct": PERCENT
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

    Feed to ``audit.audit_table``; numbers only transcribed (not reproducible from the seeds)
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
