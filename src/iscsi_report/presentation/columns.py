"""How a table column is shown to a reader: a human header with its unit, a scale and a number format.

Tables keep machine column names (snake_case with the unit as a suffix: ``bw_bytes_per_s``,
``rtt_ms``) in their CSVs; pages show :func:`spec_for` of each name instead. The registry
:data:`SPECS` names the frequent columns; any other name is derived from its words and its unit
suffix (:func:`derived_spec`), so no snake_case name ever reaches a page as a header. A name that
extends a registered one (``published_op_ms``, ``device_ms_lo``, ``mib_per_s_blog``) keeps the
registered header and unit and adds its extra words.

Numbers are formatted per column (:func:`format_column`): an explicit number of decimals, or a
number of significant digits per cell, or by default the caller's decimals with the trailing zeros
every value of the column shares removed (``16.000`` shows as ``16``); thousands are separated
by commas, except in numbers that are names (years, ports). A count column shows its whole numbers
without decimals; float noise (far below the column's largest value) shows as 0. Missing values
(None, NaN, NA, empty text) show as :data:`DASH`.

Cells are words too: an id written for code (``latency_device_free``, ``cpu_ms``) is shown through
:data:`VALUE_WORDS` or as the header of the column it names (:func:`value_words`), and a column the
registry marks ``internal`` (a glue key) stays in the CSV but never reaches the page.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, SupportsFloat, TypeGuard

import pandas as pd

from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB

DASH = "\u2014"  # what a missing value shows as
# Below this fraction of a column's largest magnitude a value is float noise (sums of ms and
# shares cancel to about 1e-16 of their terms), and shows as 0, not as -0.00000000000000033.
FLOAT_NOISE = 1e-9


@dataclass(frozen=True)
class ColumnSpec:
    """How one column is shown: header words, unit, scale, number format, and its place in the table."""

    header: str
    unit: str = ""
    scale: float = 1.0  # multiplies the stored value before it is shown (bytes -> KiB: 1/1024)
    decimals: int | None = None  # fixed decimals for every cell (trailing zeros shared by all cells cut)
    digits: int | None = None  # significant digits, per cell (for columns mixing magnitudes)
    thousands: bool = True  # False for numbers that are names (ports, years, seeds)
    rank: int | None = None  # identifying columns shown first, lowest rank leftmost
    detail: bool = False  # left out of the page's main view of a wide table (kept in the full one)
    internal: bool = False  # a key for code (glue names, joins): kept in the CSV, never shown
    count: bool = False  # things counted: a whole number shows without decimals ("100", not "100.000")

    @property
    def title(self) -> str:
        """The header as shown: words, then the unit in parentheses."""
        return f"{self.header} ({self.unit})" if self.unit else self.header


def _s(header: str, unit: str = "", **kw: Any) -> ColumnSpec:
    """Shorthand for the registry."""
    return ColumnSpec(header, unit, **kw)


def _n(header: str, **kw: Any) -> ColumnSpec:
    """Shorthand for a count (runs, files, commands in flight)."""
    return ColumnSpec(header, count=True, **kw)


# Identifying columns, in the order they lead a table (rank = position here).
KEY_ORDER = (
    "verdict",
    "question",
    "configuration",
    "label",
    "id",
    "parameter_set",
    "place",
    "scenario",
    "network",
    "host",
    "family",
    "device",
    "side",
    "term",
    "method",
    "variant",
    "input",
    "quantity",
    "explanation",  # after the identifying columns, before the numbers it explains
)

SPECS: dict[str, ColumnSpec] = {
    # identifying columns
    "verdict": _s("Verdict"),
    "question": _s("Question"),
    "configuration": _s("Configuration"),
    "label": _s("Label"),
    "id": _s("Published number"),
    "parameter_set": _s("Parameter set"),
    "place": _s("Where"),
    "scenario": _s("Scenario"),
    "network": _s("Network"),
    "host": _s("Host pinged"),
    "family": _s("Address family"),
    "device": _s("Device"),
    "side": _s("Side"),
    "term": _s("Term"),
    "method": _s("Method"),
    "variant": _s("Variant"),
    "input": _s("Input"),
    "quantity": _s("Quantity"),
    # keys for code, never shown (the rows say the same in words)
    "glue_key": _s("Glue key", internal=True),
    "case_key": _s("Case key", internal=True),
    # audit
    "explanation": _s("Explanation"),
    "section": _s("Section of the source"),
    "unit": _s("Unit"),
    "published": _s("Published", digits=6),
    "recomputed": _s("Recomputed", digits=6),
    "difference": _s("Difference", digits=3),
    "difference_pct": _s("Difference", "%", digits=3),
    "max_abs_difference_pct": _s("Largest absolute difference", "%", digits=3),
    "numbers": _s("Numbers"),
    "printed_as": _s("Printed as", detail=True),
    "printed_low": _s("Printed interval, low", digits=6, detail=True),
    "printed_high": _s("Printed interval, high", digits=6, detail=True),
    "basis": _s("Basis"),
    "recomputed_from": _s("Recomputed from", detail=True),
    "source": _s("Source", detail=True),
    "note": _s("Note"),
    # runs and files
    "file": _s("File", detail=True),
    "files": _n("Files", detail=True),
    "fio_file": _s("fio file", detail=True),
    "run": _s("Run"),
    "runs": _n("Runs"),
    "rw": _s("I/O pattern"),
    "iodepth": _s("Queue depth"),
    "engine": _s("fio engine", detail=True),
    "direct": _s("Direct I/O", detail=True),
    "numjobs": _s("fio jobs", detail=True),
    "iscsi_parameters": _s("iSCSI parameter set", detail=True),
    "validation": _s("Validation run", detail=True),
    "block_device": _s("Block device", detail=True),
    "block_sizes": _s("Block sizes"),
    "reports": _n("iostat reports", detail=True),
    "reports_averaged": _n("iostat reports averaged"),
    "active_reports": _n("Active iostat reports", detail=True),
    "since_boot_only": _s("Since-boot report only", detail=True),
    "cpu_count": _n("CPUs", detail=True),
    "cores_counted": _n("Cores counted", detail=True),
    "completions": _n("Completions"),
    "samples": _n("Samples"),
    "transmitted": _n("Transmitted"),
    "received": _n("Received"),
    "forecasts": _n("Forecasts"),
    "in_flight": _n("In flight"),  # Little's law: a mean, whole when it is a product of settings
    "in_flight_cap": _n("In flight cap"),
    "per_session_cap": _n("Per session cap"),
    "exposed_rounds": _n("Exposed rounds"),
    "n": _n("Observations"),
    "df_resid": _n("Residual degrees of freedom"),
    "interval_s": _s("Ping interval", "s"),
    "elapsed_s": _s("Elapsed", "s"),
    # sizes and rates
    "bs_bytes": _s("Block size", "KiB", scale=1 / BYTES_PER_KIB),
    # numbers that are names: never grouped by thousands ("2017", not "2,017")
    "year": _s("Year", thousands=False, decimals=0),
    "seed": _s("Seed", thousands=False, decimals=0),
    "port": _s("Port", thousands=False, decimals=0),
    "bs_kib": _s("Block size", "KiB"),
    "request_bytes": _s("Request size", "KiB", scale=1 / BYTES_PER_KIB),
    "request_kib": _s("Request size", "KiB"),
    "device_request_bytes": _s("Device request size", "KiB", scale=1 / BYTES_PER_KIB),
    "mib_per_s": _s("Throughput", "MiB/s", decimals=2),
    "bw_bytes_per_s": _s("Throughput", "MiB/s", scale=1 / BYTES_PER_MIB, decimals=2),
    "iops": _s("IOPS", decimals=2),
    "fio_iops": _s("fio IOPS", decimals=2),
    "link_bps": _s("Link rate", "Mbit/s", scale=1e-6),
    "received_mbit_per_s": _s("Received", "Mbit/s", decimals=1),
    "sent_mbit_per_s": _s("Sent", "Mbit/s", decimals=1),
    "link_mib_per_s": _s("Link rate", "MiB/s", decimals=2),
    "w_per_s": _s("Writes per second", decimals=1),
    "wkb_per_s": _s("Written", "kB/s", decimals=0),
    "wareq_sz_kb": _s("Mean write request", "kB"),
    "w_mib_per_s": _s("Written", "MiB/s", decimals=2),
    "w_await_ms": _s("Write wait", "ms"),
    "util_pct": _s("Device utilisation", "%", decimals=1),
    "request_fraction": _s("Share of the block size", decimals=3),
    # protocol
    "max_outstanding_r2t": _s("MaxOutstandingR2T"),
    "effective_r2t_window": _s("Effective R2T window"),
    "r2t_pacing": _s("R2T pacing"),
    "one_way_trips": _s("One-way trips"),
    "unsolicited_kib": _s("Unsolicited data", "KiB"),
    "solicited_kib": _s("Solicited data", "KiB"),
    # times
    "op_ms": _s("Time per write", "ms", decimals=2),
    "ms": _s("Time", "ms"),
    "total_ms": _s("Total time", "ms"),
    "one_way_ms": _s("One-way latency", "ms"),
    "mean_rtt_ms": _s("Mean RTT", "ms"),
    "per_64k_ms": _s("Time per 64 KiB", "ms"),
    "device_ms": _s("Device time", "ms"),
    "cpu_ms": _s("Target CPU time", "ms"),
    "transmit_ms": _s("Transmit time", "ms"),
    "mean_ms": _s("Mean", "ms"),
    "p50_ms": _s("Median", "ms"),
    "p90_ms": _s("p90", "ms"),
    "p99_ms": _s("p99", "ms"),
    "p99_9_ms": _s("p99.9", "ms"),
    "bins_p50_ms": _s("Median from histogram bins", "ms"),
    "bins_p90_ms": _s("p90 from histogram bins", "ms"),
    "bins_p99_ms": _s("p99 from histogram bins", "ms"),
    "bins_p99_9_ms": _s("p99.9 from histogram bins", "ms"),
    "fio_p50_ms": _s("Median reported by fio", "ms"),
    "fio_p99_ms": _s("p99 reported by fio", "ms"),
    "fio_p99_9_ms": _s("p99.9 reported by fio", "ms"),
    "max_ms": _s("Max", "ms"),
    "sstdev_ms": _s("Standard deviation", "ms"),
    "cv_pct": _s("Coefficient of variation", "%", decimals=1),
    "loss_pct": _s("Loss", "%"),
    "error_pct": _s("Error", "%", decimals=2),
    "share_pct": _s("Share", "%", decimals=1),
    "cpu_ms_per_op": _s("CPU time per write", "ms"),
    "cpu_ms_per_mib": _s("CPU time per MiB", "ms"),
    "ms_per_mib": _s("Time per MiB", "ms"),
    "latency_mib_per_s": _s("Latency bound", "MiB/s", decimals=2),
    "link_ceiling_mib_per_s": _s("Link ceiling", "MiB/s", decimals=2),
    "device_ceiling_mib_per_s": _s("Device ceiling", "MiB/s", decimals=2),
    "cpu_ceiling_mib_per_s": _s("CPU ceiling", "MiB/s", decimals=2),
    "n_train": _n("Training runs"),
    # statistics
    "r_squared": _s("R²"),
    "ci_level": _s("Confidence level"),
    "ci_low": _s("95 % CI, low"),
    "ci_high": _s("95 % CI, high"),
    "std_err": _s("Standard error"),
    "estimate": _s("Estimate"),
    "cooks_d": _s("Cook's distance"),
    "hat": _s("Leverage"),
    "student_resid": _s("Studentised residual"),
    "max_vif": _s("Largest VIF"),
    "condition_number": _s("Condition number", digits=3),
    "bimodality_coefficient": _s("Bimodality coefficient"),
    # ceilings (cross-study bounds)
    "gbit_per_s": _s("Rate", "Gbit/s"),
    "mbit_per_s": _s("Rate", "Mbit/s"),
    "frac_latency_qd": _s("Share of the latency × depth ceiling", decimals=3),
    "frac_link": _s("Share of the link ceiling", decimals=3),
    "frac_cpu": _s("Share of the CPU ceiling", decimals=3),
    "frac_device": _s("Share of the device ceiling", decimals=3),
    "tightest": _s("Tightest ceiling"),
    "tightest_fraction": _s("Share of the tightest ceiling", decimals=3),
}

# Unit suffixes of machine names (longest first): tokens -> (unit shown, scale).
UNIT_SUFFIXES: tuple[tuple[tuple[str, ...], str, float], ...] = (
    (("bytes", "per", "s"), "MiB/s", 1 / BYTES_PER_MIB),
    (("bits", "per", "s"), "Mbit/s", 1e-6),
    (("mbit", "per", "s"), "Mbit/s", 1.0),
    (("gbit", "per", "s"), "Gbit/s", 1.0),
    (("mib", "per", "s"), "MiB/s", 1.0),
    (("kib", "per", "s"), "KiB/s", 1.0),
    (("mb", "per", "s"), "MB/s", 1.0),
    (("kb", "per", "s"), "kB/s", 1.0),
    (("ms", "per", "op"), "ms per operation", 1.0),
    (("ms", "per", "mib"), "ms per MiB", 1.0),
    (("us", "per", "kib"), "µs per KiB", 1.0),
    (("per", "s"), "/s", 1.0),
    (("mbps",), "Mbit/s", 1.0),
    (("gbps",), "Gbit/s", 1.0),
    (("bps",), "bit/s", 1.0),
    (("ms",), "ms", 1.0),
    (("us",), "µs", 1.0),
    (("ns",), "ns", 1.0),
    (("s",), "s", 1.0),
    (("bytes",), "bytes", 1.0),
    (("bits",), "bits", 1.0),
    (("kib",), "KiB", 1.0),
    (("mib",), "MiB", 1.0),
    (("gib",), "GiB", 1.0),
    (("kb",), "kB", 1.0),
    (("mb",), "MB", 1.0),
    (("pct",), "%", 1.0),
    (("ghz",), "GHz", 1.0),
    (("mhz",), "MHz", 1.0),
    (("hz",), "Hz", 1.0),
    (("krpm",), "krpm", 1.0),
)

# Words of machine names as a reader writes them.
WORDS = {
    "rtt": "RTT",
    "iops": "IOPS",
    "cpu": "CPU",
    "r2t": "R2T",
    "r2ts": "R2Ts",
    "pdu": "PDU",
    "pdus": "PDUs",
    "ssd": "SSD",
    "hdd": "HDD",
    "mtu": "MTU",
    "tcp": "TCP",
    "udp": "UDP",
    "id": "ID",
    "ols": "OLS",
    "hc3": "HC3",
    "ci": "CI",
    "sd": "SD",
    "loo": "LOO",
    "vif": "VIF",
    "iscsi": "iSCSI",
    "lun": "LUN",
    "nic": "NIC",
    "io": "I/O",
    "mib": "MiB",
    "kib": "KiB",
    "gib": "GiB",
    "bs": "block size",
    "bw": "throughput",
    "lo": "low",
    "hi": "high",
    "avg": "mean",
    "stdev": "SD",
    "sstdev": "sample SD",
    "std": "SD",
    "err": "error",
    "abs": "absolute",
    "frac": "fraction of",
    "tol": "tolerance",
    "rel": "relative",
    "diff": "difference",
    "cmds": "commands",
    "qd": "queue depth",
    "iowait": "I/O wait",
    "beta": "β",
    "op": "operation",
    "ops": "operations",
    "resid": "residual",
    "num": "number",
    "req": "request",
    "sz": "size",
    "iodepth": "queue depth",
    "fio": "fio",
    "iostat": "iostat",
    "iperf3": "iperf3",
    "64k": "64 KiB",
}
_PERCENTILE = re.compile(r"p\d+")
MACHINE_NAME = re.compile(r"[a-z0-9_]+")
# An id written for code, as a cell's whole text: lower-case first, words joined by underscores.
MACHINE_ID = re.compile(r"[a-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")
# The same inside a sentence; never part of a dotted reference or a path (``fio.local.op_ms``).
_ID_TOKEN = re.compile(r"(?<![\w./*-])[a-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w/-]|\.\w)")

# Ids that name things in table cells (model variants, validation methods, fit terms, ceilings,
# tool fields), as a reader reads them. Any other id in a cell is read as a column name (spec_for).
VALUE_WORDS = {
    # model variants (analyses.fit.variants)
    "blog_as_written": "the blog's model as written",
    "device_free": "device free",
    "latency_device_free": "latency and device free",
    "network_device_free": "network and device free",
    "latency_device_free_intercept": "latency and device free, with a constant",
    # validation methods (analyses.fit.nested)
    "blog_formula": "the blog's formula",
    "blog_formula_scaled": "the blog's formula, scaled",
    "nested_selection": "variant chosen by nested validation",
    # fit terms without a column of their own
    "intercept_ms": "Constant per operation (ms)",
    "intercept_us": "Constant per operation (µs)",
    "slope_us_per_kib": "Slope (µs per KiB)",
    # ceilings (analyses.crossstudy.bounds.BOUND_LABELS)
    "latency_qd": "latency × queue depth",
    # iostat fields as iostat names them
    "aqu_sz": "aqu-sz (mean queue length)",
    "wkB_per_s": "wkB/s (kB written per second)",
    "wareq_sz_kB": "wareq-sz (mean write request, kB)",
    "w_await_ms": "w_await (mean write wait, ms)",
    "w_per_s": "w/s (writes per second)",
    "util_pct": "%util (device utilisation)",
}


def _words(tokens: Sequence[str]) -> str:
    """Machine-name tokens as reader's words (``p99_9`` as p99.9, abbreviations spelled out)."""
    out: list[str] = []
    for tok in tokens:
        if out and tok.isdigit() and _PERCENTILE.fullmatch(out[-1]):
            out[-1] += "." + tok
        else:
            out.append(WORDS.get(tok, tok))
    return " ".join(w for w in out if w).replace("one way", "one-way")


def _capitalised(text: str) -> str:
    """``text`` with its first letter upper case (unless it is a lower-case tool or unit name)."""
    first = text.split(" ", 1)[0]
    keep = first in ("fio", "iostat", "iperf3", "iSCSI") or _PERCENTILE.fullmatch(first.split(".")[0])
    if not text or keep or not text[0].isascii():
        return text
    return text[0].upper() + text[1:]


def _lowered(text: str) -> str:
    """``text`` with its first letter lower case, unless its first word is an acronym (RTT, IOPS)."""
    first = text.split(" ", 1)[0]
    if len(first) > 1 and first[1:].lower() != first[1:]:
        return text
    return text[:1].lower() + text[1:]


def value_words(text: str) -> str:
    """A cell's text as a reader reads it: an id in words, registered ids inside a sentence in words.

    A whole-cell id is :data:`VALUE_WORDS`' entry, else the header words of the column it would
    name (``cpu_ms``: "Target CPU time"; no unit, the row's own columns give it); inside longer
    text only registered ids are replaced, so the names of real settings (``cmds_max``) stay.
    """
    if text in VALUE_WORDS:
        return VALUE_WORDS[text]
    if MACHINE_ID.fullmatch(text):
        return spec_for(text.lower()).header
    return _ID_TOKEN.sub(_token_words, text)


def _token_words(match: re.Match[str]) -> str:
    """One id inside a sentence in words, if it is registered; else as it is."""
    token = match.group(0)
    if token in VALUE_WORDS:
        return VALUE_WORDS[token]
    return _lowered(SPECS[token].header) if token in SPECS else token


def _unit_at(tokens: Sequence[str], i: int) -> tuple[int, str, float] | None:
    """The longest unit suffix starting at token ``i``: (its length, unit shown, scale)."""
    for pattern, unit, scale in UNIT_SUFFIXES:
        if tuple(tokens[i : i + len(pattern)]) == pattern:
            return len(pattern), unit, scale
    return None


def _units_in(tokens: Sequence[str]) -> list[tuple[int, int, str, float]]:
    """Unit suffixes among ``tokens`` as (start, length, unit, scale), best first.

    Best is the longest one ending the name (``_bytes_per_s``, not ``_s``), then one inside it
    from the end (``p50_ms_blog``). A unit never stands first: ``ms_total`` is a total.
    """
    found = [(i, *hit) for i in range(1, len(tokens)) if (hit := _unit_at(tokens, i))]
    ending = [f for f in found if f[0] + f[1] == len(tokens)]
    inside = sorted((f for f in found if f not in ending), key=lambda f: -f[0])
    return ending + inside


def derived_spec(name: str) -> ColumnSpec:
    """A spec made from the name alone: its words, and the unit of its last unit suffix.

    A name that is not a machine name (spaces, capitals, punctuation: ``100 Mbit/s``) is already
    written for people and is kept, its first letter capitalised.
    """
    if not MACHINE_NAME.fullmatch(name) and ("_" not in name or " " in name.strip()):
        return ColumnSpec(_capitalised(name.strip()) or "(unnamed)")
    tokens = [t for t in re.split(r"[_\s]+", name.strip().lower()) if t]
    n_count = tokens[:1] == ["n"] and len(tokens) > 1
    if n_count:
        tokens = tokens[1:]
    words, unit, scale = _words(tokens), "", 1.0
    if units := _units_in(tokens):
        i, length, unit, scale = units[0]
        words = _words(tokens[:i] + tokens[i + length :])
    if n_count:
        words = "number of " + words
    header = _capitalised(words) if words else "(unnamed)"
    return ColumnSpec(header, unit, scale, digits=3 if unit == "%" else None, count=n_count)


def _extended(name: str) -> ColumnSpec | None:
    """The spec of a registered name this one extends (prefix and suffix words added), else None."""
    tokens = name.split("_")
    best: tuple[int, int] | None = None
    for start in range(len(tokens)):
        for stop in range(len(tokens), start + 1, -1):  # registered names of two tokens or more
            known = (start, stop) != (0, len(tokens)) and "_".join(tokens[start:stop]) in SPECS
            if known and (best is None or stop - start > best[1] - best[0]):
                best = (start, stop)
    if best is None:
        return None
    start, stop = best
    base = SPECS["_".join(tokens[start:stop])]
    prefix, suffix = _words(tokens[:start]), _words(tokens[stop:])
    header = f"{prefix} {_lowered(base.header)}" if prefix else base.header
    header = f"{header}, {suffix}" if suffix else header
    return replace(base, header=_capitalised(header), rank=None, detail=False)


def spec_for(name: object) -> ColumnSpec:
    """The display spec of a column: the registry's, else extended from it, else derived from the name."""
    key = str(name)
    rank = KEY_ORDER.index(key) if key in KEY_ORDER else None
    if key in SPECS:
        return replace(SPECS[key], rank=rank)
    return _extended(key) or derived_spec(key)


def header(name: object) -> str:
    """The header a page shows for a column name."""
    return spec_for(name).title


def shown_order(names: Sequence[object]) -> list[object]:
    """Column names with the identifying ones first (by their rank), the others in their order."""
    ranked = sorted((spec_for(n).rank, i) for i, n in enumerate(names) if spec_for(n).rank is not None)
    first = [names[i] for _, i in ranked]
    return first + [n for n in names if n not in first]


def is_missing(value: object) -> bool:
    """None, NaN, NaT, pd.NA and blank text are missing."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, str):
        return not value.strip()
    return _is_number(value) and math.isnan(float(value))


def _is_number(value: object) -> TypeGuard[SupportsFloat]:
    """A real number that is not a bool."""
    if isinstance(value, bool):
        return False
    return isinstance(value, numbers.Real)


def _significant(value: float, digits: int, thousands: bool) -> str:
    """``value`` to ``digits`` significant digits, trailing zeros of the decimals cut."""
    if value == 0 or not math.isfinite(value):
        return _plain(value, 0, thousands)
    places = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return _trimmed(_plain(value, places, thousands))


def _plain(value: float, places: int, thousands: bool) -> str:
    """``value`` with ``places`` decimals (``inf`` as ∞), separators if asked."""
    if math.isinf(value):
        return "\u221e" if value > 0 else "\u2212\u221e"
    text = f"{value:,.{places}f}" if thousands else f"{value:.{places}f}"
    return "0" + text[2:] if text.startswith("-0") and float(text.replace(",", "")) == 0 else text


def _trimmed(text: str) -> str:
    """A decimal string without trailing zeros after the point (nor a bare point)."""
    return text.rstrip("0").rstrip(".") if "." in text else text


def column_places(values: Sequence[float], decimals: int) -> int:
    """Fewest decimals (at most ``decimals``) that show every value as it rounds to ``decimals``."""
    finite = [v for v in values if math.isfinite(v)]
    for places in range(decimals + 1):
        if all(round(v, places) == round(v, decimals) for v in finite):
            return places
    return decimals


def denoised(values: Sequence[float]) -> list[float]:
    """``values`` with float noise (below :data:`FLOAT_NOISE` of the largest magnitude) as 0."""
    finite = [abs(v) for v in values if math.isfinite(v)]
    floor = FLOAT_NOISE * max(finite, default=0.0)
    return [0.0 if math.isfinite(v) and abs(v) < floor else v for v in values]


def format_column(values: Sequence[object], spec: ColumnSpec, decimals: int = 3) -> list[str | None]:
    """Each value as shown (None where missing): scaled, formatted by the spec, else by ``decimals``.

    Float noise shows as 0 (:func:`denoised`); in a count column a whole number shows without
    decimals whatever the other cells need.
    """
    scaled = [float(v) * spec.scale if _is_number(v) and not is_missing(v) else math.nan for v in values]
    clean = denoised(scaled)
    numeric = [x for v, x in zip(values, clean, strict=True) if _is_number(v) and not is_missing(v)]
    integral = all(float(v).is_integer() for v in numeric if math.isfinite(v))
    if spec.decimals is not None:
        places = column_places(numeric, spec.decimals)
    else:
        places = 0 if integral else column_places(numeric, decimals)
    out: list[str | None] = []
    for v, x in zip(values, clean, strict=True):
        if is_missing(v):
            out.append(None)
        elif isinstance(v, bool) or type(v).__name__ == "bool_":
            out.append("yes" if v else "no")
        elif _is_number(v):
            if spec.count and x.is_integer():
                out.append(_plain(x, 0, spec.thousands))
            elif spec.digits is not None:
                out.append(_significant(x, spec.digits, spec.thousands))
            elif x != 0 and math.isfinite(x) and round(x, places) == 0:
                out.append(_significant(x, 2, spec.thousands))  # never a nonzero value shown as 0
            else:
                out.append(_plain(x, places, spec.thousands))
        else:
            out.append(value_words(str(v)))
    return out
