"""Parser for sysstat ``iostat`` output: ``-x`` (old and new columns) and plain text, ``-o JSON``.

Columns are read by their header NAME and renamed with units (``rkb_per_s``, ``w_await_ms``);
``-m`` values are converted to kB. The first report (averages since boot) is flagged.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import lazy_attributes
from iscsi_report.core.ingest.textio import decode_json, loads_json, read_text
from iscsi_report.core.units import KIB_PER_MIB

if TYPE_CHECKING:
    import pandera.pandas as pa

FORMAT_TEXT = "iostat-text"
FORMAT_JSON = "iostat-json"
# sysstat's units: kB = 1024 bytes, MB = 1024 kB; a sector is 512 bytes.
KB_PER_SECTOR = 0.5
# A device percentage (%util, %rrqm, ...) is at most 100; old sysstat could print a few tenths
# above it from tick skew between two /proc/diskstats reads, so the bound allows 1 point more.
MAX_DEVICE_PCT = 101.0
# The avg-cpu shares add up to 100 % (each is rounded to 0.01, so six of them stray by 0.03).
CPU_TOTAL_PCT = 100.0
CPU_SUM_TOLERANCE_PCT = 1.0

# header name (text or JSON key) -> (column name with unit, factor to that unit)
DEVICE_COLUMNS: dict[str, tuple[str, float]] = {
    "tps": ("tps", 1.0),
    "r/s": ("r_per_s", 1.0),
    "w/s": ("w_per_s", 1.0),
    "d/s": ("d_per_s", 1.0),
    "f/s": ("f_per_s", 1.0),
    "rkB/s": ("rkb_per_s", 1.0),
    "wkB/s": ("wkb_per_s", 1.0),
    "dkB/s": ("dkb_per_s", 1.0),
    "rMB/s": ("rkb_per_s", KIB_PER_MIB),
    "wMB/s": ("wkb_per_s", KIB_PER_MIB),
    "dMB/s": ("dkb_per_s", KIB_PER_MIB),
    "rsec/s": ("rkb_per_s", KB_PER_SECTOR),
    "wsec/s": ("wkb_per_s", KB_PER_SECTOR),
    "kB_read/s": ("rkb_per_s", 1.0),
    "kB_wrtn/s": ("wkb_per_s", 1.0),
    "kB_dscd/s": ("dkb_per_s", 1.0),
    "MB_read/s": ("rkb_per_s", KIB_PER_MIB),
    "MB_wrtn/s": ("wkb_per_s", KIB_PER_MIB),
    "MB_dscd/s": ("dkb_per_s", KIB_PER_MIB),
    "Blk_read/s": ("rkb_per_s", KB_PER_SECTOR),
    "Blk_wrtn/s": ("wkb_per_s", KB_PER_SECTOR),
    "kB_read": ("rkb", 1.0),
    "kB_wrtn": ("wkb", 1.0),
    "kB_dscd": ("dkb", 1.0),
    "MB_read": ("rkb", KIB_PER_MIB),
    "MB_wrtn": ("wkb", KIB_PER_MIB),
    "MB_dscd": ("dkb", KIB_PER_MIB),
    "Blk_read": ("rkb", KB_PER_SECTOR),
    "Blk_wrtn": ("wkb", KB_PER_SECTOR),
    "kB/s": ("kb_per_s", 1.0),
    "MB/s": ("kb_per_s", KIB_PER_MIB),
    "rqm/s": ("rqm_per_s", 1.0),
    "rrqm/s": ("rrqm_per_s", 1.0),
    "wrqm/s": ("wrqm_per_s", 1.0),
    "drqm/s": ("drqm_per_s", 1.0),
    "%rrqm": ("rrqm_pct", 1.0),
    "%wrqm": ("wrqm_pct", 1.0),
    "%drqm": ("drqm_pct", 1.0),
    "rrqm": ("rrqm_pct", 1.0),  # JSON spelling of %rrqm
    "wrqm": ("wrqm_pct", 1.0),
    "drqm": ("drqm_pct", 1.0),
    "await": ("await_ms", 1.0),
    "r_await": ("r_await_ms", 1.0),
    "w_await": ("w_await_ms", 1.0),
    "d_await": ("d_await_ms", 1.0),
    "f_await": ("f_await_ms", 1.0),
    "areq-sz": ("areq_sz_kb", 1.0),
    "rareq-sz": ("rareq_sz_kb", 1.0),
    "wareq-sz": ("wareq_sz_kb", 1.0),
    "dareq-sz": ("dareq_sz_kb", 1.0),
    "avgrq-sz": ("avgrq_sz_kb", KB_PER_SECTOR),
    "avgqu-sz": ("aqu_sz", 1.0),
    "aqu-sz": ("aqu_sz", 1.0),
    "svctm": ("svctm_ms", 1.0),
    "%util": ("util_pct", 1.0),
    "util": ("util_pct", 1.0),
}
CPU_COLUMNS = ("user", "nice", "system", "iowait", "steal", "idle")
# avg-cpu header names across sysstat versions (very old ones print %sys and lack %steal).
CPU_HEADER = {f"%{c}": c for c in CPU_COLUMNS} | {"%sys": "system"}
SUMMARY_DEVICE_COLUMNS = (
    "r_per_s",
    "w_per_s",
    "rkb_per_s",
    "wkb_per_s",
    "wareq_sz_kb",
    "w_await_ms",
    "util_pct",
)
SUMMARY_CPU_COLUMNS = ("user", "system", "iowait", "idle")
# Timestamp formats iostat -t prints: C/en_US month-first (24 h or AM/PM), European dotted,
# ISO (S_TIME_FORMAT=ISO). Day-first slashed dates (en_GB) are used only when some timestamp
# of the file cannot be month-first; a file whose dates fit both is read month-first, warned.
MONTH_FIRST_FORMATS = (
    "%m/%d/%y %H:%M:%S",
    "%m/%d/%Y %H:%M:%S",
    "%m/%d/%y %I:%M:%S %p",
    "%m/%d/%Y %I:%M:%S %p",
    "%d.%m.%Y %H:%M:%S",
    "%d.%m.%y %H:%M:%S",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M:%S%z",
)
DAY_FIRST_FORMATS = (
    "%d/%m/%y %H:%M:%S",
    "%d/%m/%Y %H:%M:%S",
    "%d/%m/%y %I:%M:%S %p",
    "%d/%m/%Y %I:%M:%S %p",
)

_HEADER_RE = re.compile(
    r"^(?P<sysname>Linux|\S+) (?P<kernel>\S+) \((?P<host>[^)]*)\)\s+(?P<date>\S+)"
    r"(?:\s+(?P<arch>_\S+_))?(?:\s+\((?P<cpus>\d+) CPU\))?\s*$"
)
_TS_RE = re.compile(r"^\d[\d/.\-]+[ T]\d{1,2}:\d{2}:\d{2}(?:\s?[AP]M|[+-]\d{4})?\s*$")
_DOT_NUM_RE = re.compile(r"^-?\d+(?:\.\d+)?$")
_COMMA_NUM_RE = re.compile(r"^-?\d+(?:,\d+)?$")


@functools.cache
def devices_schema() -> pa.DataFrameSchema:
    """The device rows' schema; pandera is imported here, when a file is parsed (not on import)."""
    import pandera.pandas as pa

    metric = pa.Column(float, pa.Check.ge(0), nullable=True, required=False)
    return pa.DataFrameSchema(
        {
            "report": pa.Column(int, pa.Check.ge(0)),
            "since_boot": pa.Column(bool),
            "timestamp": pa.Column("datetime64[ns]", nullable=True, required=False),
            "device": pa.Column(str),
            **{name: metric for name, _ in DEVICE_COLUMNS.values()},
        },
        strict=False,
    )


@functools.cache
def cpu_schema() -> pa.DataFrameSchema:
    """The CPU rows' schema (pandera imported on first use, as for :func:`devices_schema`)."""
    import pandera.pandas as pa

    return pa.DataFrameSchema(
        {
            "report": pa.Column(int, pa.Check.ge(0)),
            "since_boot": pa.Column(bool),
            "timestamp": pa.Column("datetime64[ns]", nullable=True, required=False),
            **{f"{c}_pct": pa.Column(float, pa.Check.in_range(0, 100), required=False) for c in CPU_COLUMNS},
        },
        strict=True,
    )


# ``DEVICES_SCHEMA`` and ``CPU_SCHEMA``, built on first use (PEP 562): importing iostat skips pandera.
__getattr__ = lazy_attributes(__name__, {"DEVICES_SCHEMA": devices_schema, "CPU_SCHEMA": cpu_schema})


@dataclass
class IostatResult:
    """One iostat output file: per-report device and CPU rows, host header, format notes."""

    path: str
    format: str
    kernel: str | None
    host: str | None
    date: str | None
    cpu_count: int | None
    sysstat_version: str | None
    devices: pd.DataFrame
    cpu: pd.DataFrame
    unparsed: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def sniff(text: str) -> str | None:
    """Return ``iostat-json`` or ``iostat-text`` if the text is iostat output, else None."""
    head = text.lstrip()[:200]
    if head.startswith("{") and '"sysstat"' in head:
        return FORMAT_JSON
    lines = text.splitlines()
    header = _HEADER_RE.match(lines[0].strip("\ufeff")) if lines else None
    if header and header["arch"]:
        return FORMAT_TEXT
    if re.search(r"^(avg-cpu:|Device:?\s)", text, re.MULTILINE):
        return FORMAT_TEXT
    return None


def parse(path: str | Path) -> IostatResult:
    """Parse an iostat text or JSON file; IngestError on anything not readable without guessing."""
    return parse_text(read_text(path), path)


def parse_text(text: str, path: str | Path = "<text>") -> IostatResult:
    """Parse the text of an iostat file (JSON from -o JSON, or the plain report)."""
    if sniff(text) == FORMAT_JSON:
        return _parse_json(path, text)
    return _parse_text(path, text)


def summary(result: IostatResult) -> dict[str, Any]:
    """Per-device and CPU means over the reports (the since-boot report left out if others exist)."""
    devs = _interval_rows(result.devices)
    devices = {}
    for name, group in devs.groupby("device", sort=False):
        entry: dict[str, Any] = {"reports": len(group)}
        for col in SUMMARY_DEVICE_COLUMNS:
            entry[col] = _mean(group, col)
        devices[str(name)] = entry
    cpu_rows = _interval_rows(result.cpu)
    cpu = {c: _mean(cpu_rows, f"{c}_pct") for c in SUMMARY_CPU_COLUMNS}
    return {"devices": devices, "cpu": cpu}


def _interval_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of the interval reports, or the since-boot report when it is the only one."""
    if df.empty or df["since_boot"].all():
        return df
    return df[~df["since_boot"]]


def _mean(df: pd.DataFrame, col: str) -> float | None:
    """Mean of a column as a JSON number, None if the column is absent or all missing."""
    if col not in df.columns or df[col].isna().all():
        return None
    return float(df[col].mean())


# ---------------------------------------------------------------- text


@dataclass
class _TextState:
    """Accumulates reports while walking the text line by line."""

    path: str | Path
    report: int = -1
    has_cpu: bool = False
    has_dev: bool = False
    timestamp: tuple[str, int | None] | None = None
    decimal_comma: bool | None = None
    devices: list[dict[str, Any]] = field(default_factory=list)
    cpu: list[dict[str, Any]] = field(default_factory=list)

    def new_report(self, timestamp: tuple[str, int | None] | None = None) -> None:
        """Start the next report."""
        self.report += 1
        self.has_cpu = self.has_dev = False
        self.timestamp = timestamp


def _parse_text(path: str | Path, text: str) -> IostatResult:
    """Walk the text: header line, timestamps, avg-cpu blocks and Device blocks."""
    lines = text.splitlines()
    _refuse_human(path, lines)
    st = _TextState(path)
    header = None
    unparsed: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        lineno, line = i + 1, lines[i]
        stripped = line.strip()
        i += 1
        if not stripped:
            continue
        if header is None and (m := _HEADER_RE.match(stripped.lstrip("\ufeff"))):
            header = m
        elif _TS_RE.match(stripped):
            st.new_report((stripped, lineno))
        elif stripped.startswith("avg-cpu:"):
            i = _read_cpu(st, lines, i, lineno)
        elif re.match(r"^Device:?(\s|$)", stripped):
            i = _read_devices(st, lines, i, lineno)
        else:
            unparsed.append((lineno, line))
    if st.report < 0:
        empty = "" if text.strip() else "empty file: "
        empty = "a JSON array, not iostat -o JSON's object: " if text.lstrip().startswith("[") else empty
        raise IngestError(path, empty + "no iostat report found (expected 'avg-cpu:' or 'Device' blocks)")
    warnings = _resolve_timestamps(path, st.devices + st.cpu)
    if unparsed:
        warnings.append(f"{len(unparsed)} line(s) not understood, kept as unparsed")
    return IostatResult(
        path=str(path),
        format=FORMAT_TEXT,
        kernel=header["kernel"] if header else None,
        host=header["host"] if header else None,
        date=header["date"] if header else None,
        cpu_count=int(header["cpus"]) if header and header["cpus"] else None,
        sysstat_version=None,
        devices=_frame(path, devices_schema(), st.devices, device=True),
        cpu=_frame(path, cpu_schema(), st.cpu, device=False),
        unparsed=unparsed,
        warnings=warnings,
    )


def _refuse_human(path: str | Path, lines: list[str]) -> None:
    """Refuse ``iostat -h`` output (device name last, k/M/G-scaled rounded values)."""
    for n, line in enumerate(lines, 1):
        fields = line.split()
        if len(fields) > 1 and fields[-1] == "Device" and fields[0] != "Device":
            raise IngestError(
                path,
                "iostat -h (human-readable) output is not supported: its values are rounded "
                "and scaled with k/M/G suffixes; capture iostat without -h",
                line=n,
            )


def _read_cpu(st: _TextState, lines: list[str], i: int, lineno: int) -> int:
    """Read the avg-cpu header at ``lineno`` and its value line; return the next line index."""
    names = lines[lineno - 1].split()[1:]
    unknown = [n for n in names if n not in CPU_HEADER]
    if unknown or not names or len(set(names)) != len(names):
        raise IngestError(
            st.path,
            f"expected avg-cpu columns among {' '.join(CPU_HEADER)}, got {names}",
            line=lineno,
        )
    if i >= len(lines):
        raise IngestError(st.path, "avg-cpu header without a value line", line=lineno)
    values = lines[i].split()
    if len(values) != len(names):
        raise IngestError(st.path, f"expected {len(names)} avg-cpu values, got {len(values)}", line=i + 1)
    if st.has_cpu or st.has_dev or st.report < 0:
        st.new_report()
    st.has_cpu = True
    row: dict[str, Any] = {"report": st.report, "timestamp": st.timestamp}
    for name, raw in zip(names, values, strict=True):
        row[f"{CPU_HEADER[name]}_pct"] = _number(st, raw, i + 1)
    _check_cpu_total(st.path, row, line=i + 1)
    st.cpu.append(row)
    return i + 1


def _check_cpu_total(
    path: str | Path, row: dict[str, Any], line: int | None = None, jp: str | None = None
) -> None:
    """IngestError unless the avg-cpu shares add up to 100 % (within rounding)."""
    total = sum(v for k, v in row.items() if k.endswith("_pct"))
    if abs(total - CPU_TOTAL_PCT) > CPU_SUM_TOLERANCE_PCT:
        raise IngestError(
            path,
            f"avg-cpu shares add up to {total:.2f} %, expected {CPU_TOTAL_PCT:g} % "
            f"(within {CPU_SUM_TOLERANCE_PCT:g})",
            line=line,
            json_path=jp,
        )


def _refuse_repeated_device(
    path: str | Path, seen: set[str], device: str, line: int | None = None, jp: str | None = None
) -> None:
    """IngestError for a device listed twice in one report (which row is the device is unknown)."""
    if device in seen:
        raise IngestError(path, f"device {device!r} listed twice in one report", line=line, json_path=jp)
    seen.add(device)


def _check_device_pct(
    path: str | Path, row: dict[str, Any], line: int | None = None, jp: str | None = None
) -> None:
    """IngestError for a device percentage (%util, %rrqm, ...) above MAX_DEVICE_PCT."""
    for col, value in row.items():
        if col.endswith("_pct") and value > MAX_DEVICE_PCT:
            raise IngestError(
                path,
                f"{row['device']}: {col} is {value:g} %, beyond 100 %: a device is busy at most all the time",
                line=line,
                json_path=jp,
            )


def _read_devices(st: _TextState, lines: list[str], i: int, lineno: int) -> int:
    """Read a Device header at ``lineno`` and the device rows up to a blank line."""
    names = lines[lineno - 1].split()[1:]
    columns = []
    for name in names:
        if name not in DEVICE_COLUMNS:
            raise IngestError(
                st.path,
                f"unknown iostat column {name!r} (translated or unsupported header?)",
                line=lineno,
            )
        columns.append(DEVICE_COLUMNS[name])
    if len({c for c, _ in columns}) != len(columns):
        raise IngestError(st.path, f"duplicate columns after unit naming: {names}", line=lineno)
    if st.has_dev or st.report < 0:
        st.new_report()
    st.has_dev = True
    if i >= len(lines) or not lines[i].strip():
        raise IngestError(st.path, "a Device header with no device rows under it", line=lineno)
    seen: set[str] = set()
    while i < len(lines) and lines[i].strip():
        fields = lines[i].split()
        _refuse_repeated_device(st.path, seen, fields[0], line=i + 1)
        if len(fields) != len(columns) + 1:
            raise IngestError(
                st.path,
                f"expected a device name and {len(columns)} values, got {len(fields)} fields",
                line=i + 1,
            )
        row: dict[str, Any] = {"report": st.report, "timestamp": st.timestamp, "device": fields[0]}
        for (col, factor), raw in zip(columns, fields[1:], strict=True):
            row[col] = _number(st, raw, i + 1) * factor
        _check_device_pct(st.path, row, line=i + 1)
        st.devices.append(row)
        i += 1
    return i


def _number(st: _TextState, raw: str, lineno: int) -> float:
    """A number in the file's decimal convention (dot, or comma in e.g. de_DE), never mixed."""
    if st.decimal_comma is None and ("," in raw or "." in raw):
        st.decimal_comma = "," in raw
    pattern = _COMMA_NUM_RE if st.decimal_comma else _DOT_NUM_RE
    if not pattern.match(raw):
        sep = "comma" if st.decimal_comma else "dot"
        raise IngestError(st.path, f"expected a number with a decimal {sep}, got {raw!r}", line=lineno)
    return float(raw.replace(",", "."))


def _try_formats(raw: str, formats: tuple[str, ...]) -> datetime | None:
    """The first format that parses the timestamp (timezone dropped), else None."""
    for fmt in formats:
        try:
            return datetime.strptime(raw.strip(), fmt).replace(tzinfo=None)
        except ValueError:
            continue
    return None


def _resolve_timestamps(path: str | Path, rows: list[dict[str, Any]]) -> list[str]:
    """Replace each row's (raw, line) timestamp by a datetime, one date order for the whole file."""
    raws = {r["timestamp"] for r in rows if r.get("timestamp") is not None}
    parsed = {raw: _try_formats(raw[0], MONTH_FIRST_FORMATS) for raw in raws}
    warnings = []
    if any(v is None for v in parsed.values()):
        parsed = {raw: _try_formats(raw[0], DAY_FIRST_FORMATS) for raw in raws}
        bad = next((raw for raw, v in sorted(parsed.items()) if v is None), None)
        if bad is not None:
            raise IngestError(path, f"unrecognised timestamp {bad[0]!r}", line=bad[1])
    elif any(_try_formats(raw[0], DAY_FIRST_FORMATS) for raw in raws):
        warnings.append(
            "timestamps fit both month/day and day/month order; read month-first "
            "(sysstat's C and en_US format)"
        )
    for r in rows:
        if r.get("timestamp") is not None:
            r["timestamp"] = parsed[r["timestamp"]]
    return warnings


def _frame(
    path: str | Path, schema: pa.DataFrameSchema, rows: list[dict[str, Any]], *, device: bool
) -> pd.DataFrame:
    """Build a validated frame: since_boot flag on report 0, timestamp column only when present."""
    df = pd.DataFrame(rows)
    if df.empty:
        cols = ["report", "since_boot", *(["device"] if device else [])]
        if not device:
            cols += [f"{c}_pct" for c in CPU_COLUMNS]
        return pd.DataFrame({c: pd.Series(dtype=_empty_dtype(c)) for c in cols})
    df.insert(1, "since_boot", df["report"] == 0)
    if df["timestamp"].isna().all():
        df = df.drop(columns="timestamp")
    else:
        df["timestamp"] = pd.to_datetime(df["timestamp"])
    df["report"] = df["report"].astype(int)
    import pandera.pandas as pa  # imported already, by the schema

    try:
        return schema.validate(df)
    except pa.errors.SchemaError as exc:
        raise IngestError(path, f"iostat values fail validation: {exc}") from exc


def _empty_dtype(col: str) -> str:
    """dtype of a column in an empty frame."""
    return {"report": "int64", "since_boot": "bool", "device": "object"}.get(col, "float64")


# ---------------------------------------------------------------- JSON


def _parse_json(path: str | Path, text: str) -> IostatResult:
    """Parse ``iostat -o JSON``; recover the complete reports of an unclosed (killed) run."""
    warnings: list[str] = []
    try:
        doc = loads_json(path, text)
        host = _json_host(path, doc)
        stats = host.get("statistics")
        if not isinstance(stats, list):
            raise IngestError(path, "expected a list", json_path="sysstat.hosts[0].statistics")
    except json.JSONDecodeError as exc:
        host, stats = _recover_unclosed(path, text, exc)
        warnings.append(
            f"JSON is unclosed or cut at line {exc.lineno} (interrupted run?): "
            f"recovered {len(stats)} complete report(s)"
        )
    devices: list[dict[str, Any]] = []
    cpu: list[dict[str, Any]] = []
    for idx, report in enumerate(stats):
        _json_report(path, report, idx, devices, cpu)
    if not stats and warnings:
        raise IngestError(
            path, "iostat JSON truncated before its first complete report", json_path="statistics"
        )
    if not stats:
        raise IngestError(path, "no iostat report in the JSON", json_path="statistics")
    warnings += _resolve_timestamps(path, devices + cpu)
    cpus = host.get("number-of-cpus")
    return IostatResult(
        path=str(path),
        format=FORMAT_JSON,
        kernel=_opt_str(host.get("release")),
        host=_opt_str(host.get("nodename")),
        date=_opt_str(host.get("date")),
        cpu_count=cpus if isinstance(cpus, int) and not isinstance(cpus, bool) else None,
        sysstat_version=_opt_str(_json_version(host)),
        devices=_frame(path, devices_schema(), devices, device=True),
        cpu=_frame(path, cpu_schema(), cpu, device=False),
        unparsed=[],
        warnings=warnings,
    )


def _json_version(host: dict[str, Any]) -> Any:
    """sysstat version if the JSON states it (iostat 12.x does not; sadf adds sysdata-version)."""
    return host.get("sysdata-version")


def _opt_str(value: Any) -> str | None:
    """str(value) or None."""
    return None if value is None else str(value)


def _json_host(path: str | Path, doc: Any) -> dict[str, Any]:
    """The single host object of a sysstat JSON document."""
    hosts = doc.get("sysstat", {}).get("hosts") if isinstance(doc, dict) else None
    if not isinstance(hosts, list) or len(hosts) != 1 or not isinstance(hosts[0], dict):
        raise IngestError(path, "expected exactly one host object", json_path="sysstat.hosts")
    return hosts[0]


def _ends_mid_document(text: str, exc: json.JSONDecodeError) -> bool:
    """True when the JSON breaks only because the file ends (a string or a value left open)."""
    return exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")


def _recover_unclosed(
    path: str | Path, text: str, exc: json.JSONDecodeError
) -> tuple[dict[str, Any], list[Any]]:
    """Decode the host header and every complete report before the point where the JSON breaks."""
    m = re.search(r'"statistics"\s*:\s*\[', text)
    if m is None and _ends_mid_document(text, exc):
        raise IngestError(path, "iostat JSON truncated: the file ends mid-document", line=exc.lineno) from exc
    if m is None:
        raise IngestError(path, f"malformed iostat JSON: {exc.msg}", line=exc.lineno) from exc
    try:
        head = loads_json(path, text[: m.end()] + "]}]}}")
    except json.JSONDecodeError as exc2:
        raise IngestError(path, f"malformed iostat JSON header: {exc2.msg}", line=exc2.lineno) from exc2
    host = _json_host(path, head)
    reports: list[Any] = []
    pos = m.end()
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] != "{":
            break
        try:
            report, pos = decode_json(path, text, pos)
        except json.JSONDecodeError:
            break
        reports.append(report)
    return host, reports


def _json_report(
    path: str | Path,
    report: Any,
    idx: int,
    devices: list[dict[str, Any]],
    cpu: list[dict[str, Any]],
) -> None:
    """Append one JSON report's CPU and disk rows."""
    jp = f"statistics[{idx}]"
    if not isinstance(report, dict):
        raise IngestError(path, "expected a report object", json_path=jp)
    ts = report.get("timestamp")
    stamp = (ts, None) if isinstance(ts, str) else None
    if "avg-cpu" in report:
        values = report["avg-cpu"]
        row: dict[str, Any] = {"report": idx, "timestamp": stamp}
        for col in CPU_COLUMNS:
            row[f"{col}_pct"] = _json_number(path, values, col, f"{jp}.avg-cpu")
        _check_cpu_total(path, row, jp=f"{jp}.avg-cpu")
        cpu.append(row)
    disks = report.get("disk", [])
    if not isinstance(disks, list):
        raise IngestError(path, "expected a list of disks", json_path=f"{jp}.disk")
    seen: set[str] = set()
    for k, disk in enumerate(disks):
        dp = f"{jp}.disk[{k}]"
        if not isinstance(disk, dict) or not isinstance(disk.get("disk_device"), str):
            raise IngestError(path, "expected a disk object with disk_device", json_path=dp)
        _refuse_repeated_device(path, seen, disk["disk_device"], jp=f"{dp}.disk_device")
        row = {"report": idx, "timestamp": stamp, "device": disk["disk_device"]}
        for key in disk:
            if key == "disk_device":
                continue
            if key not in DEVICE_COLUMNS:
                raise IngestError(path, f"unknown iostat field {key!r}", json_path=f"{dp}.{key}")
            col, factor = DEVICE_COLUMNS[key]
            row[col] = _json_number(path, disk, key, dp) * factor
        _check_device_pct(path, row, jp=dp)
        devices.append(row)


def _json_number(path: str | Path, obj: Any, key: str, jp: str) -> float:
    """A numeric JSON field, or IngestError naming its path."""
    value = obj.get(key) if isinstance(obj, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise IngestError(path, f"expected a number, got {value!r}", json_path=f"{jp}.{key}")
    return float(value)
