"""Cross-study analyses: four very different iSCSI systems explained by one theory of bounds.

Every system's throughput is capped by the lowest of four ceilings: outstanding commands over
per-command latency (Little's law), the link's byte rate, the CPU time per command, and the
device's own rate. The functions here recompute what Butterfield 2017 (usermode SCST), the L3 iSCSI
post (100 GbE L3 network) and Bourbonnais 2009 (COMSTAR vs the old target daemon) print, from first
principles where possible, and place them with the Helios4 configurations of Guerri 2023; each row
gets one verdict (at a ceiling, above one, queued, or by elimination). Citations and the words
explaining each row live in the YAML.
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
from scipy.optimize import brentq

from iscsi_report.analyses import blog as blog_model
from iscsi_report.analyses.audit import printed_interval
from iscsi_report.core import published
from iscsi_report.core.errors import ReportError
from iscsi_report.core.model import BHS_BYTES
from iscsi_report.core.published import BoundText, CitationEntry, Published, PublishedNumber
from iscsi_report.core.units import (
    BITS_PER_BYTE,
    BITS_PER_GBIT,
    BITS_PER_MBIT,
    BYTES_PER_GB,
    BYTES_PER_KIB,
    BYTES_PER_MB,
    BYTES_PER_MIB,
    IOPS_PER_KIOPS,
    IOPS_PER_MIOPS,
    MS_PER_S,
    PERCENT_PER_FRACTION,
    US_PER_S,
)

NAN = float("nan")

# --- Protocol framing (bytes) ---------------------------------------------------------------------
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
    citation: CitationEntry | None = None
    cases: dict[str, BoundText] = field(default_factory=dict)

    def cite(self) -> str:
        """The short citation key of this study (the file name when the YAML gives no citation)."""
        return self.citation.key if self.citation else self.source

    def case_text(self, key: str) -> BoundText:
        """The note and explanation of bounds row ``key``; a clear error naming the file if absent."""
        if key not in self.cases:
            raise ReportError(f"{self.path}: at bounds: no entry {key!r} (have {sorted(self.cases)})")
        return self.cases[key]

    def printed_rel_tol(self, key: str) -> float:
        """Half the width of the interval the printed number ``key`` stands for, relative to it."""
        self.value(key)  # a clear error if absent
        lo, hi = printed_interval(self.numbers[key])
        return (hi - lo) / 2 / abs(self.numbers[key].value)

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
    blog: Study  # Guerri 2023, transcribed by the blog chapter; used for the four-bound table

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


def _resolve_tables(pub: Published) -> dict[str, pd.DataFrame]:
    """Each table of the file as a DataFrame, cells naming an id replaced by its value."""
    out: dict[str, pd.DataFrame] = {}
    for name, table in pub.tables.items():
        where = f"{pub.path}: at tables.{name}.rows"
        resolved = [
            {k: _resolve_cell(v, pub.numbers, f"{where}[{i}].{k}") for k, v in row.items()}
            for i, row in enumerate(table.rows)
        ]
        out[name] = pd.DataFrame(resolved)
    return out


def load_study(path: str | Path) -> Study:
    """Read one ``data/published`` YAML (strict and typed: :func:`iscsi_report.core.published.load`)."""
    pub = published.load(path)
    return Study(
        path=pub.path,
        source=pub.source,
        numbers=pub.numbers,
        tables=_resolve_tables(pub),
        citation=pub.citation,
        cases=dict(pub.bounds),
    )


def citations(cs: CrossStudy) -> pd.DataFrame:
    """One row per source of the chapter: short key, author, year, title, link, references label."""
    rows = []
    for study in cs.studies().values():
        c = study.citation
        if c is None:
            raise ReportError(f"{study.path}: no citation (key, ref, title) to cite this source by")
        rows.append(
            {"key": c.key, "author": c.author, "year": c.year, "title": c.title, "link": c.link, "ref": c.ref}
        )
    return pd.DataFrame(rows)


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

    link_bit_per_s: float = 1 * BITS_PER_GBIT
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
    return padded + pdus * BHS_BYTES


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
    Butterfield 2017's network reply column to its last digit (overhead 90 bytes at MTU 9000).
    """
    stream = size_bytes + BHS_BYTES
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
                "model_diff_pct": PERCENT_PER_FRACTION * (ours_us - paper_us) / paper_us,
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
    """The CPU cost fit of Butterfield 2017 at its standard clock."""
    return fit_cpu_cost(cpu_points(scst), scst.value("scst.setup.cpu_clock_ghz"), method)


# === Clock scaling ================================================================================


def clock_scaled_fraction(
    iops_from: float | pd.Series, iops_to: float | pd.Series, clock_from_ghz: float, clock_to_ghz: float
) -> float | pd.Series:
    """Fraction of per-op time that would have to scale with the clock to explain a measured change."""
    time_ratio = iops_from / iops_to
    clock_ratio = clock_from_ghz / clock_to_ghz
    return (time_ratio - 1.0) / (clock_ratio - 1.0)


MEASURED_PEAK, REGRESSION_LINE = "measured peak", "regression line"


def _clock_cases(scst: Study, fit: CpuFit, size: int) -> list[tuple[str, str, float, float]]:
    """(mode, basis, CPU us per read at the standard clock, IOPS measured at the reduced clock)."""
    peaks = peak_table(scst).set_index("size_bytes")
    nodelay = scst.value("scst.nagle.reduced_clock_nodelay_iops")
    return [
        ("nodelay", MEASURED_PEAK, US_PER_S / float(peaks["nodelay_iops"].loc[size]), nodelay),
        ("nodelay", REGRESSION_LINE, fit.cpu_us("nodelay", size), nodelay),
        (
            "adaptive",
            REGRESSION_LINE,
            fit.cpu_us("adaptive", size),
            scst.value("scst.nagle.reduced_clock_adaptive_iops"),
        ),
    ]


def _clock_row(
    case: tuple[str, str, float, float], size: int, ghz: tuple[float, float], net_iops: float
) -> dict[str, Any]:
    """One clock-scaling prediction: CPU time stretched by the clock ratio, capped by the network."""
    mode, basis, cpu_us_from, measured = case
    ghz_from, ghz_to = ghz
    cpu_us_to = cpu_us_from * ghz_from / ghz_to
    cpu_iops = US_PER_S / cpu_us_to
    predicted = min(cpu_iops, net_iops)
    return {
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
        "gap_pct": PERCENT_PER_FRACTION * (measured - predicted) / predicted,
    }


def clock_scaling_table(scst: Study, fit: CpuFit, model: WireModel | None = None) -> pd.DataFrame:
    """Predict the paper's reduced-clock results by scaling CPU time with the clock ratio; compare."""
    model = model or WireModel()
    size = REDUCED_CLOCK_SIZE_BYTES
    ghz = (scst.value("scst.nagle.standard_clock_ghz"), scst.value("scst.nagle.reduced_clock_ghz"))
    net_iops = network_ceiling_iops(size, model)
    out = pd.DataFrame([_clock_row(case, size, ghz, net_iops) for case in _clock_cases(scst, fit, size)])
    measured_from = US_PER_S / out["cpu_us_from"]
    out["clock_scaled_fraction"] = np.where(
        out["basis"] == MEASURED_PEAK,
        clock_scaled_fraction(measured_from, out["measured_iops"], *ghz),
        np.nan,
    )
    return out


# === Roofline =====================================================================================


def roofline_frame(fit: CpuFit, model: WireModel, sizes_bytes: np.ndarray | None = None) -> pd.DataFrame:
    """IOPS ceilings against I/O size: the network line and one CPU line per mode (long form)."""
    if sizes_bytes is None:
        sizes_bytes = np.geomspace(ROOFLINE_MIN_BYTES, ROOFLINE_MAX_BYTES, ROOFLINE_POINTS)
    rows = []
    for size in sizes_bytes:
        rows.append(
            {
                "size_bytes": float(size),
                "ceiling": f"network ({model.link_bit_per_s / BITS_PER_GBIT:g} Gb/s)",
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
        "latency_ms": little_latency_ms(in_flight, iops),
        "cpu_us_per_op": NAN,
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
    size = _size_label(c.value("comstar.read.io_kib") * BYTES_PER_KIB)
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
        size = _size_label(l3.value(f"l3.{prefix}.bs_bytes"))
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
                    _l3_system(l3),
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
            f"{_size_label(size)} {MODE_LABELS['adaptive']} peak, response time < {cap_ms:g} ms",
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
            row[f"max_latency_ms_at_{rw}_iops"] = little_latency_ms(row["in_flight_cap"], iops)
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


# === Four systems, four bounds ====================================================================

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

BLOG_FILE = "blog-2023.yaml"
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

    latency_ms: float = NAN
    floor_ms: float = NAN
    floor_basis: str = ""
    ratio: float = NAN  # given directly when only a ratio is known (a queue-depth change)

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
        bound = ceiling.bytes_per_s if ceiling else NAN
        row[f"bound_{b}_bytes_per_s"] = bound
        row[f"bound_{b}_iops"] = bound / case.io_bytes if case.io_bytes else NAN
        row[f"frac_{b}"] = case.achieved_bytes_per_s / bound if math.isfinite(bound) else NAN
        row[f"kind_{b}"] = ceiling.kind if ceiling else ""
        row[f"tol_{b}"] = case.reading_rel_tol + ceiling.rel_tol if ceiling else NAN
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
        "achieved_iops": case.achieved_bytes_per_s / case.io_bytes if case.io_bytes else NAN,
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


def _size_label(size_bytes: float) -> str:
    """Bytes below 4 KiB, KiB below 1 MiB, MiB from there: the way the seeds name their I/O sizes."""
    if size_bytes >= BYTES_PER_MIB:
        return f"{size_bytes / BYTES_PER_MIB:g} MiB"
    return f"{size_bytes / BYTES_PER_KIB:g} KiB" if size_bytes >= 4 * BYTES_PER_KIB else f"{size_bytes:g} B"


def _blog_case(blog: Study, r2t: int, setup: tuple[str, str, str, str], op_ms: float) -> Case:
    """One blog configuration: one command in flight, so IOPS <= 1 / (modelled) op time."""
    key, label, link_id, device_id = setup
    prefix = f"projection.r2t{r2t}.{key}"
    queue_depth = blog.value("setup.fio_numjobs") * FIO_DEFAULT_IODEPTH
    achieved = blog.value(f"{prefix}.actual_mib_per_s") * BYTES_PER_MIB
    ceilings = {
        "latency_qd": Ceiling(
            queue_depth / (op_ms / MS_PER_S) * BLOG_IO_BYTES, MODEL, blog.printed_rel_tol(f"{prefix}.op_ms")
        ),
        "link": Ceiling(
            blog.value(link_id) * BITS_PER_MBIT / BITS_PER_BYTE, MEASUREMENT, blog.printed_rel_tol(link_id)
        ),
        "cpu": Ceiling(MS_PER_S / blog.value(f"{prefix}.cpu_lat_ms") * BLOG_IO_BYTES, MEASUREMENT),
        "device": Ceiling(
            blog.value(device_id) * BLOG_IO_BYTES, MEASUREMENT, blog.printed_rel_tol(device_id)
        ),
    }
    return Case(
        study=blog,
        key=BLOG_CASE_KEY,
        system="Helios4 NAS",
        label=f"{label}, MaxOutstandingR2T={r2t}, {_size_label(BLOG_IO_BYTES)} writes",
        io_bytes=BLOG_IO_BYTES,
        achieved_bytes_per_s=achieved,
        reading_rel_tol=blog.printed_rel_tol(f"{prefix}.actual_mib_per_s"),
        ceilings=ceilings,
        latency=Latency(latency_ms=queue_depth * BLOG_IO_BYTES / achieved * MS_PER_S),
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
            label=f"{_size_label(size)} reads, {modes}, {ghz:g} GHz",
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


def _l3_system(l3: Study) -> str:
    """The 100 GbE system's name, its link rate read from the YAML."""
    return f"{l3.value('l3.tldr.link_gbit_per_s'):g} GbE L3"


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
        system=_l3_system(l3),
        label=f"{_size_label(size)} {rw}s, fio {jobs:g} jobs x iodepth {depth:g}",
        io_bytes=size,
        achieved_bytes_per_s=iops * size,
        reading_rel_tol=l3.printed_rel_tol(kiops_id),
        ceilings={"link": Ceiling(network_ceiling_iops(size, model) * size, FIRST_PRINCIPLES)},
        latency=Latency(
            latency_ms=little_latency_ms(l3_in_flight_at_target(l3, prefix), iops),
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
        system=_l3_system(l3),
        label=label,
        io_bytes=NAN,
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
    raised = Latency(ratio=ratio, floor_basis=f"latency at queue_depth {qd_before:g}")
    gbyte, nvme = l3.value("l3.tldr.achieved_gbyte_per_s"), l3.value("l3.bonus.nvme_gbyte_per_s")
    disks, gbit = l3.value("l3.bonus.nvme_disks"), BITS_PER_GBIT / BITS_PER_BYTE
    specs: list[tuple[str, str, str, float, Latency | None]] = [
        ("medium_block", f"medium-block transfers ({gbyte:g} GB/s)", "l3.tldr.achieved_gbyte_per_s",
         BYTES_PER_GB, None),
        ("validation_default_depth", f"table validation, queue_depth {qd_before:g}",
         "l3.analysis.load_gbit_per_s", gbit, None),
        ("validation_raised_depth", f"table validation, queue_depth {qd_after:g}",
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
        label=f"{target}, {_size_label(size)} cache-hit reads, {outstanding:g} outstanding",
        io_bytes=size,
        achieved_bytes_per_s=iops * size,
        reading_rel_tol=c.printed_rel_tol(kiops_id),
        ceilings={
            "link": Ceiling(network_ceiling_iops(size, model) * size, FIRST_PRINCIPLES),
            "cpu": Ceiling(c.value("comstar.comments.cores") / cpu_s_per_op * size, MODEL),
        },
        latency=Latency(
            latency_ms=little_latency_ms(outstanding, iops),
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


# === Audit ========================================================================================


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
