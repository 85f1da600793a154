"""Parser for fio ``--output-format=json`` and ``json+`` files (fio 2.x and 3.x), with units named.

fio's own text lines (error messages, ``normal`` output) may precede or follow the JSON; they are
kept as ``unparsed`` lines (and ``fio:`` messages as warnings), never silently dropped.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import lazy_attributes
from iscsi_report.core.ingest.textio import INT64_MAX, decode_json, read_text
from iscsi_report.core.units import BYTES_PER_KIB, MS_PER_S, NS_PER_MS

if TYPE_CHECKING:
    import pandera.pandas as pa

FORMAT_JSON = "fio-json"
FORMAT_JSON_PLUS = "fio-json+"
FORMAT_TERSE = "fio-terse"
DIRECTIONS = ("read", "write", "trim")
# fio's documented defaults when a job does not set the option.
FIO_DEFAULT_BS_BYTES = 4096
FIO_DEFAULT_RW = "read"
FIO_DEFAULT_IODEPTH = 1
FIO_DEFAULT_NUMJOBS = 1
FIO_DEFAULT_KB_BASE = 1024
TEXT_SOURCE = "(from fio's text header)"  # marks options read from text: numjobs is not there
US_PER_MS = 1_000
# The most one read()/write() call moves on Linux (MAX_RW_COUNT, 2 GiB less a page): a larger bs
# is no single I/O, so a bs beyond it (bs=1P) is not a block size fio ran with.
MAX_FIO_BS_BYTES = 2**31 - 4096
MAX_PERCENTILE = 100.0  # percentile keys are levels in [0, 100] (fio 2.x pads the map with 0.00)
# Directions each rw mode may report I/O in (a write job reads back when it verifies).
RW_DIRECTIONS = {
    "read": {"read"},
    "randread": {"read"},
    "write": {"write"},
    "randwrite": {"write"},
    "trim": {"trim"},
    "randtrim": {"trim"},
    "rw": {"read", "write"},
    "readwrite": {"read", "write"},
    "randrw": {"read", "write"},
    "trimwrite": {"trim", "write"},
    "randtrimwrite": {"trim", "write"},
}
_TERSE_RE = re.compile(r"^\s*[2-5];fio-[^;\s]+;", re.ASCII)
# Percentile keys as fio prints them ("99.000000"; fio 2.x sometimes "99.00").
PERCENTILES = {"clat_p50_ms": 50.0, "clat_p99_ms": 99.0, "clat_p999_ms": 99.9}

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE | re.ASCII)
_RUNTIME_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|m|h|d)?\s*$", re.IGNORECASE | re.ASCII)
_RUNTIME_UNIT_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3, "d": 86400e3}
# A time_based job that ran this much shorter than its runtime option was cut short.
SHORT_RUNTIME_FRACTION = 0.9
_SIGNAL_RE = re.compile(r"^fio: terminating on signal (\d+)")
_FIO_ERR_RE = re.compile(r"err=\s*(\d+)/.*?error=(.*)$")
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_BS_LABEL_RE = re.compile(r"\(([RWT])\)\s*([^,]+)")
# fio's text header: "job: (g=0): rw=write, bs=(R) 64.0KiB-64.0KiB, ..., ioengine=psync, iodepth=1"
_TEXT_HEADER_RE = re.compile(
    r"^(?:\d+:)?(?P<job>.+?): \(g=\d+\): rw=(?P<rw>\w+), bs=(?P<bs>.+?), "
    r"ioengine=\S+, iodepth=(?P<iodepth>\d+)$"
)


@functools.cache
def jobs_schema() -> pa.DataFrameSchema:
    """The jobs frame's schema; pandera is imported here, when a file is parsed (not on import)."""
    import pandera.pandas as pa

    return pa.DataFrameSchema(
        {
            "job": pa.Column(str),
            "rw": pa.Column(str, nullable=True),
            "direction": pa.Column(str, pa.Check.isin(DIRECTIONS)),
            "bs_bytes": pa.Column(float, pa.Check.gt(0), nullable=True),
            "iodepth": pa.Column("Int64", pa.Check.ge(1), nullable=True),
            "numjobs": pa.Column("Int64", pa.Check.ge(1), nullable=True),
            "iops": pa.Column(float, pa.Check.ge(0)),
            "bw_bytes_per_s": pa.Column(float, pa.Check.ge(0)),
            "io_bytes": pa.Column(int, pa.Check.ge(0)),
            "runtime_s": pa.Column(float, pa.Check.ge(0)),
            "clat_mean_ms": pa.Column(float, pa.Check.ge(0), nullable=True),
            "lat_mean_ms": pa.Column(float, pa.Check.ge(0), nullable=True),
            "clat_p50_ms": pa.Column(float, pa.Check.ge(0), nullable=True),
            "clat_p99_ms": pa.Column(float, pa.Check.ge(0), nullable=True),
            "clat_p999_ms": pa.Column(float, pa.Check.ge(0), nullable=True),
            "usr_cpu_pct": pa.Column(float, pa.Check.ge(0), nullable=True),
            "sys_cpu_pct": pa.Column(float, pa.Check.ge(0), nullable=True),
            "error": pa.Column(int),
        },
        strict=True,
        ordered=True,
    )


@functools.cache
def histogram_schema() -> pa.DataFrameSchema:
    """The latency bins frame's schema (pandera imported on first use, as for :func:`jobs_schema`)."""
    import pandera.pandas as pa

    return pa.DataFrameSchema(
        {
            "job": pa.Column(str),
            "direction": pa.Column(str, pa.Check.isin(DIRECTIONS)),
            "lat_ns": pa.Column(int, pa.Check.ge(0)),
            "count": pa.Column(int, pa.Check.ge(0)),
        },
        strict=True,
        ordered=True,
    )


# ``JOBS_SCHEMA`` and ``HISTOGRAM_SCHEMA``, built on first use (PEP 562): importing fio skips pandera.
__getattr__ = lazy_attributes(__name__, {"JOBS_SCHEMA": jobs_schema, "HISTOGRAM_SCHEMA": histogram_schema})


@dataclass
class FioResult:
    """One fio output file: a row per job and direction that did I/O, plus json+ latency bins."""

    path: str
    format: str
    fio_version: str | None
    jobs: pd.DataFrame
    histogram: pd.DataFrame
    unparsed: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    interrupted: str | None = None  # why the run is known to be cut short (parse(allow_interrupted))


def sniff(text: str) -> str | None:
    """Return ``fio-json``/``fio-json+`` if the text is fio JSON output (or fio's own errors)."""
    if '"fio version"' in text and '"jobs"' in text:
        return FORMAT_JSON_PLUS if re.search(r'"bins"\s*:\s*\{', text) else FORMAT_JSON
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    if _TERSE_RE.match(first):
        return FORMAT_TERSE  # recognised only to be refused with what to run instead
    if first.startswith("fio: ") and "{" not in text:
        return FORMAT_JSON  # fio failed before writing JSON; parse() reports fio's message
    return None


def parse(path: str | Path, allow_interrupted: bool = False) -> FioResult:
    """Parse one fio JSON/json+ file; raise IngestError on malformed input, a failed job, a
    second JSON document or an interrupted run (unless allow_interrupted: then it is flagged)."""
    return parse_text(read_text(path), path, allow_interrupted)


def parse_text(text: str, path: str | Path = "<text>", allow_interrupted: bool = False) -> FioResult:
    """Parse fio output given as text (see :func:`parse`)."""
    doc, start_line, end_line = _extract_json(path, text)
    lines = text.splitlines()
    outside = [
        (i + 1, ln) for i, ln in enumerate(lines) if (i + 1 < start_line or i + 1 > end_line) and ln.strip()
    ]
    _refuse_second_document(path, outside)
    warnings = [f"line {n}: {ln.strip()}" for n, ln in outside if ln.startswith("fio: ")]
    if outside:
        warnings.append(f"{len(outside)} line(s) of fio text outside the JSON kept as unparsed")
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise IngestError(path, "expected a JSON object with a 'jobs' list", json_path="jobs")
    global_opts = _options(path, doc.get("global options", {}), "global options")
    rows: list[dict[str, Any]] = []
    bins: list[dict[str, Any]] = []
    for idx, job in enumerate(doc["jobs"]):
        jp = f"jobs[{idx}]"
        if not isinstance(job, dict):
            raise IngestError(path, "expected a job object", json_path=jp)
        _check_job_error(path, job, jp, outside)
        opts: dict[str, str] | None
        if "job options" in job or "global options" in doc:
            own = _options(path, job.get("job options", {}), f"{jp}.job options")
            opts = {**global_opts, **own}
        else:  # old fio (e.g. 2.1.x) recorded no options: use its text header, else unknown
            opts = _text_header_options(str(job.get("jobname")), outside)
            if opts is None:
                warnings.append(f"{jp}: fio recorded no job options; rw, bs, iodepth, numjobs unknown")
            else:
                warnings.append(f"{jp}: rw, bs, iodepth read from fio's text header line")
        job_rows = _job_rows(path, job, jp, opts, warnings)
        _check_directions(path, job, jp, opts, job_rows)
        rows.extend(job_rows)
        bins.extend(_job_bins(path, job, jp))
    if not rows and not doc["jobs"]:
        raise IngestError(path, "fio JSON has no jobs", json_path="jobs")
    interrupted = _interrupted(path, doc["jobs"], outside, global_opts)
    if interrupted is not None:
        if not allow_interrupted:
            raise IngestError(path, f"{interrupted}: its figures cover a shortened run, not the job as set")
        warnings.append(f"INTERRUPTED: {interrupted}")
    version = doc.get("fio version")
    return FioResult(
        path=str(path),
        format=FORMAT_JSON_PLUS if bins or _has_bins(doc) else FORMAT_JSON,
        fio_version=str(version) if version is not None else None,
        jobs=_jobs_frame(path, rows),
        histogram=_histogram(path, bins),
        unparsed=outside,
        warnings=warnings,
        interrupted=interrupted,
    )


def summary(result: FioResult) -> dict[str, Any]:
    """JSON-ready per-file summary: fio version, one entry per job and direction, warnings."""
    rows: Iterable[Any] = result.jobs.itertuples(index=False)  # cells typed by JOBS_SCHEMA at run time
    jobs = [
        {
            "job": r.job,
            "rw": r.rw if isinstance(r.rw, str) else None,
            "direction": r.direction,  # beyond the contract: tells a randrw job's two entries apart
            "bs_bytes": _json_num(r.bs_bytes, integral=True),
            "iodepth": None if pd.isna(r.iodepth) else int(r.iodepth),
            "iops": _json_num(r.iops),
            "bw_bytes_per_s": _json_num(r.bw_bytes_per_s),
            "clat_mean_ms": _json_num(r.clat_mean_ms),  # fio's clat: submission to completion
            "lat_mean_ms": _json_num(r.lat_mean_ms),  # fio's lat: total, slat + clat
        }
        for r in rows
    ]
    out: dict[str, Any] = {"fio_version": result.fio_version, "jobs": jobs}
    if result.interrupted is not None:
        out["interrupted"] = result.interrupted
    if result.warnings:
        out["warnings"] = list(result.warnings)
    return out


def parse_size_bytes(text: str, kb_base: int = FIO_DEFAULT_KB_BASE) -> int:
    """Convert a fio size such as ``64k``, ``2M``, ``4096B`` or ``1MiB`` to bytes.

    fio's default kb_base=1024 makes ``k`` and ``KiB`` both 1024; with kb_base=1000 only the
    ``i`` forms are powers of two. Raises ValueError on anything else.
    """
    m = _SIZE_RE.match(text)
    if not m:
        raise ValueError(f"not a fio size: {text!r}")
    number, prefix, binary, _ = m.groups()
    base = BYTES_PER_KIB if (binary or kb_base == BYTES_PER_KIB) else kb_base
    value = float(number) * base ** _POWERS[prefix.lower()]
    if value != int(value):
        raise ValueError(f"fio size is not a whole number of bytes: {text!r}")
    return int(value)


def block_size_bytes(bs: str, direction: str, kb_base: int = FIO_DEFAULT_KB_BASE) -> float:
    """Block size for one direction from a fio ``bs`` option or fio's text header.

    Accepts ``4k``, ``4k,64k`` (read,write[,trim]; a missing trim takes the write value),
    ``4096B-4096B`` ranges, fio 3 text ``bs=(R) 64.0KiB-64.0KiB, (W) ..., (T) ...`` and fio 2
    text ``4K-4K/4K-4K/4K-4K``. A range with different ends has no single size: NaN.
    """
    bs = bs.strip().removeprefix("bs=")
    labelled = dict(_BS_LABEL_RE.findall(bs))
    if labelled:
        label = direction[0].upper()
        if label not in labelled:
            raise ValueError(f"no ({label}) block size in {bs!r}")
        part = labelled[label]
    else:
        parts = [p.strip() for p in re.split(r"[,/]", bs) if p.strip()]
        if not parts:
            raise ValueError(f"empty bs option: {bs!r}")
        part = parts[min(DIRECTIONS.index(direction), len(parts) - 1)]
    lo, _, hi = part.strip().partition("-")
    lo_bytes = parse_size_bytes(lo, kb_base)
    if hi and parse_size_bytes(hi, kb_base) != lo_bytes:
        return math.nan
    return float(lo_bytes)


def _text_header_options(name: str, text_lines: list[tuple[int, str]]) -> dict[str, str] | None:
    """rw, bs and iodepth from fio's text header line for the job, when fio printed one."""
    for _, line in text_lines:
        m = _TEXT_HEADER_RE.match(line.strip())
        if m and m["job"] == name:
            return {"rw": m["rw"], "bs": m["bs"], "iodepth": m["iodepth"], TEXT_SOURCE: "1"}
    return None


def _refuse_second_document(path: str | Path, outside: list[tuple[int, str]]) -> None:
    """One fio run per file: a second JSON document after the first is refused, not ignored."""
    for number, line in outside:
        if line.lstrip().startswith(("{", "[")):
            raise IngestError(
                path,
                "a second JSON document starts here: one fio run per file (split the file, and "
                "list each part in the manifest)",
                line=number,
            )


def _interrupted(
    path: str | Path, jobs: list[Any], outside: list[tuple[int, str]], global_opts: dict[str, str]
) -> str | None:
    """Why the run is known to be cut short: fio's signal line, or a time_based job that ran
    well short of its runtime option; None for a complete run."""
    for number, line in outside:
        if m := _SIGNAL_RE.match(line.strip()):
            return f"fio was interrupted (line {number}: {line.strip()!r}, signal {m.group(1)})"
    for idx, job in enumerate(jobs):
        opts = {**global_opts, **(job.get("job options") or {})} if isinstance(job, dict) else {}
        asked_ms = _runtime_ms(opts.get("runtime")) if str(opts.get("time_based", "0")) != "0" else None
        ran = job.get("job_runtime") if isinstance(job, dict) else None
        if asked_ms and isinstance(ran, int | float) and ran < SHORT_RUNTIME_FRACTION * asked_ms:
            return (
                f"fio job {job.get('jobname')!r} ran {ran} ms of its time_based runtime of "
                f"{asked_ms:g} ms (jobs[{idx}].job_runtime): the run was cut short"
            )
    return None


def _runtime_ms(raw: Any) -> float | None:
    """fio's runtime option in ms (a bare number is seconds); None if absent or unreadable."""
    m = _RUNTIME_RE.match(str(raw)) if raw is not None else None
    if m is None:
        return None
    return float(m.group(1)) * _RUNTIME_UNIT_MS[(m.group(2) or "s").lower()]


def _extract_json(path: str | Path, text: str) -> tuple[Any, int, int]:
    """Find the JSON object in the text (fio lines may surround it); return it and its line span."""
    m = re.search(r"^\{", text, re.MULTILINE)
    if m is None and sniff(text) == FORMAT_TERSE:
        raise IngestError(
            path,
            "fio terse output (--minimal or --output-format=terse) is not read: "
            "re-run fio with --output-format=json",
        )
    if m is None and not text.strip():
        raise IngestError(path, "empty file: no fio JSON output found")
    if m is None and text.lstrip().startswith("["):
        raise IngestError(
            path, "no fio JSON output found: the file holds a JSON array, fio writes one object"
        )
    if m is None:
        said = "; ".join(ln.strip() for ln in text.splitlines() if ln.strip())[:300]
        raise IngestError(path, f"no fio JSON output found (the file says: {said or 'nothing'})")
    start = m.start()
    try:
        doc, end = decode_json(path, text, start)
    except json.JSONDecodeError as exc:
        raise IngestError(
            path, f"malformed fio JSON: {exc.msg} (column {exc.colno})", line=exc.lineno
        ) from exc
    start_line = text.count("\n", 0, start) + 1
    end_line = text.count("\n", 0, end) + 1
    return doc, start_line, end_line


def _options(path: str | Path, opts: Any, jp: str) -> dict[str, str]:
    """Return a fio options object as a str->str dict, or raise naming the JSON path."""
    if not isinstance(opts, dict):
        raise IngestError(path, "expected an object of fio options", json_path=jp)
    return {str(k): str(v) for k, v in opts.items()}


def _check_job_error(
    path: str | Path, job: dict[str, Any], jp: str, text_lines: list[tuple[int, str]]
) -> None:
    """Raise IngestError if fio reports a non-zero error for the job, with fio's message."""
    err = job.get("error", 0)
    if not isinstance(err, int) or isinstance(err, bool):
        raise IngestError(path, f"expected an integer error code, got {err!r}", json_path=jp)
    if err == 0:
        return
    name = job.get("jobname", f"#{jp}")
    message = next(
        (ln.strip() for _, ln in text_lines if (m := _FIO_ERR_RE.search(ln)) and int(m.group(1)) == err),
        None,
    )
    if message is None:
        message = f"errno {err} ({os.strerror(err)}); fio printed no message with the JSON"
    raise IngestError(path, f"fio job {name!r} failed with error {err}: {message}", json_path=f"{jp}.error")


def _job_rows(
    path: str | Path,
    job: dict[str, Any],
    jp: str,
    opts: dict[str, str] | None,
    warnings: list[str],
) -> list[dict[str, Any]]:
    """One row per direction of the job that did I/O (io_bytes > 0 or total_ios > 0).

    ``opts`` is None when fio recorded no options at all: then rw, bs, iodepth and numjobs are
    missing values, not fio's defaults.
    """
    name = job.get("jobname")
    if not isinstance(name, str):
        raise IngestError(path, "expected a string jobname", json_path=f"{jp}.jobname")
    kb_base = _int_option(path, opts or {}, "kb_base", FIO_DEFAULT_KB_BASE, jp)
    rows = []
    for direction in DIRECTIONS:
        stats = job.get(direction)
        if stats is None:
            continue
        dp = f"{jp}.{direction}"
        if not isinstance(stats, dict):
            raise IngestError(path, "expected an object of I/O statistics", json_path=dp)
        io_bytes = _io_bytes(path, stats, dp)
        if io_bytes == 0 and _number(path, stats, "total_ios", dp, default=0) == 0:
            continue
        row = {
            "job": name,
            "direction": direction,
            **_job_settings(path, opts, direction, kb_base, jp, name, warnings),
            "iops": float(_number(path, stats, "iops", dp)),
            "bw_bytes_per_s": _bandwidth(path, stats, dp),
            "io_bytes": io_bytes,
            "runtime_s": _number(path, stats, "runtime", dp) / MS_PER_S,
            **_latencies(path, stats, dp),
            "usr_cpu_pct": float(_number(path, job, "usr_cpu", jp, default=math.nan)),
            "sys_cpu_pct": float(_number(path, job, "sys_cpu", jp, default=math.nan)),
            "error": int(job.get("error", 0)),
        }
        rows.append(row)
    return rows


def _check_directions(
    path: str | Path, job: dict[str, Any], jp: str, opts: dict[str, str] | None, rows: list[dict[str, Any]]
) -> None:
    """A job that did no I/O at all, or I/O in a direction its rw mode never does, is refused:
    the figures and the options contradict each other."""
    rw = (opts or {}).get("rw", (opts or {}).get("readwrite", FIO_DEFAULT_RW if opts else None))
    mode = rw.partition(":")[0].strip() if rw is not None else None
    if not rows:
        said = f" (rw={rw})" if rw is not None else ""
        raise IngestError(
            path,
            f"fio job {job.get('jobname')!r}{said} did no I/O: "
            "io_bytes and total_ios are 0 in every direction",
            json_path=jp,
        )
    allowed = RW_DIRECTIONS.get(mode or "")
    if allowed is None:
        return
    verifies = str((opts or {}).get("verify", "0")) not in ("0", "none")
    for row in rows:
        direction = row["direction"]
        if direction not in allowed and not (direction == "read" and verifies):
            raise IngestError(
                path,
                f"rw={rw} but fio reports {direction} I/O: the job's options and figures disagree",
                json_path=f"{jp}.{direction}.io_bytes",
            )


def _job_settings(
    path: str | Path,
    opts: dict[str, str] | None,
    direction: str,
    kb_base: int,
    jp: str,
    name: str,
    warnings: list[str],
) -> dict[str, Any]:
    """rw, bs_bytes, iodepth, numjobs from the options (else fio's defaults); missing if None."""
    if opts is None:
        return {"rw": None, "bs_bytes": math.nan, "iodepth": pd.NA, "numjobs": pd.NA}
    return {
        "rw": opts.get("rw", opts.get("readwrite", FIO_DEFAULT_RW)),
        "bs_bytes": _bs_for(path, opts, direction, kb_base, jp, name, warnings),
        "iodepth": _int_option(path, opts, "iodepth", FIO_DEFAULT_IODEPTH, jp),
        "numjobs": (
            pd.NA if TEXT_SOURCE in opts else _int_option(path, opts, "numjobs", FIO_DEFAULT_NUMJOBS, jp)
        ),
    }


def _bs_for(
    path: str | Path,
    opts: dict[str, str],
    direction: str,
    kb_base: int,
    jp: str,
    name: str,
    warnings: list[str],
) -> float:
    """Block size in bytes for the direction; fio's default 4 KiB when no bs option is set."""
    bs = opts.get("bs", opts.get("blocksize"))
    if bs is None:
        if "bssplit" in opts or "bsrange" in opts:
            warnings.append(f"job {name!r}: bssplit/bsrange has no single block size (NaN)")
            return math.nan
        return float(FIO_DEFAULT_BS_BYTES)
    try:
        value = block_size_bytes(bs, direction, kb_base)
    except ValueError as exc:
        raise IngestError(path, str(exc), json_path=f"{jp}.job options.bs") from exc
    if math.isnan(value):
        warnings.append(f"job {name!r}: bs={bs} is a range, so bs_bytes is NaN")
    elif value > MAX_FIO_BS_BYTES:
        raise IngestError(
            path,
            f"bs={bs} is {value:.0f} bytes, beyond {MAX_FIO_BS_BYTES} (the most Linux moves in one "
            "read or write call): not a block size fio ran with",
            json_path=f"{jp}.job options.bs",
        )
    return value


def _int_option(path: str | Path, opts: dict[str, str], key: str, default: int, jp: str) -> int:
    """An integer fio option (iodepth, numjobs, kb_base), fio's default when absent."""
    raw = opts.get(key)
    if raw is None:
        return default
    try:
        if not raw.strip().isascii():
            raise ValueError(raw)
        value = int(raw)
        if abs(value) > INT64_MAX:
            raise ValueError(raw)
        return value
    except ValueError as exc:
        raise IngestError(
            path, f"expected an integer {key}, got {raw!r}", json_path=f"{jp}.job options.{key}"
        ) from exc


def _number(path: str | Path, obj: dict[str, Any], key: str, jp: str, default: float | None = None) -> float:
    """A finite numeric field of a JSON object (``default`` if absent and given), else IngestError."""
    if key not in obj and default is not None:
        return default
    value = obj.get(key)
    if value is None:
        raise IngestError(path, f"missing numeric field '{key}'", json_path=f"{jp}.{key}")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise IngestError(path, f"expected a finite number, got {_short(value)}", json_path=f"{jp}.{key}")
    if abs(value) > INT64_MAX:
        raise IngestError(
            path,
            f"number {_short(value)} is beyond a 64-bit counter (fio writes none)",
            json_path=f"{jp}.{key}",
        )
    return value


def _short(value: Any) -> str:
    """repr of a value, cut to 60 characters (a 4000-digit integer is not quoted whole)."""
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**60 else f"{str(value)[:20]}...(huge)"
    return text if len(text) <= 60 else text[:57] + "..."


def _io_bytes(path: str | Path, stats: dict[str, Any], dp: str) -> int:
    """Bytes transferred: fio 3.x io_bytes is bytes; fio 2.x (no io_kbytes) wrote KiB there."""
    value = _number(path, stats, "io_bytes", dp)
    if value < 0:
        raise IngestError(path, f"negative io_bytes {value}", json_path=f"{dp}.io_bytes")
    return int(value) if "io_kbytes" in stats else int(value) * BYTES_PER_KIB


def _bandwidth(path: str | Path, stats: dict[str, Any], dp: str) -> float:
    """Bandwidth in bytes/s: fio 3.x bw_bytes, else fio 2.x bw (KiB/s)."""
    if "bw_bytes" in stats:
        return float(_number(path, stats, "bw_bytes", dp))
    return float(_number(path, stats, "bw", dp)) * BYTES_PER_KIB


def _latency_block(
    path: str | Path, stats: dict[str, Any], name: str, dp: str
) -> tuple[dict[str, Any] | None, float, str]:
    """Return fio's ``<name>_ns`` (3.x) or ``<name>`` (2.x, µs) block, its ns->ms divisor, key."""
    for key, divisor in ((f"{name}_ns", NS_PER_MS), (name, US_PER_MS)):
        block = stats.get(key)
        if block is not None:
            if not isinstance(block, dict):
                raise IngestError(path, "expected a latency object", json_path=f"{dp}.{key}")
            return block, divisor, key
    return None, math.nan, name


def _latencies(path: str | Path, stats: dict[str, Any], dp: str) -> dict[str, float]:
    """Completion-latency mean and percentiles and total-latency mean, in ms (NaN if absent)."""
    out = {"clat_mean_ms": math.nan, "lat_mean_ms": math.nan}
    out.update(dict.fromkeys(PERCENTILES, math.nan))
    clat, div, key = _latency_block(path, stats, "clat", dp)
    if clat is not None:
        out["clat_mean_ms"] = _number(path, clat, "mean", f"{dp}.{key}") / div
        pct = clat.get("percentile")
        if isinstance(pct, dict):
            out.update(_percentiles(path, pct, div, f"{dp}.{key}.percentile"))
    lat, div, key = _latency_block(path, stats, "lat", dp)
    if lat is not None:
        out["lat_mean_ms"] = _number(path, lat, "mean", f"{dp}.{key}") / div
    return out


def _percentiles(path: str | Path, pct: dict[str, Any], div: float, jp: str) -> dict[str, float]:
    """Pick p50/p99/p99.9 from fio's percentile map (keys like "99.000000"), in ms."""
    by_value: dict[float, float] = {}
    for key, value in pct.items():
        try:
            if not key.isascii():
                raise ValueError(key)
            level = float(key)
            if not 0 <= level <= MAX_PERCENTILE:  # also NaN and inf
                raise ValueError(key)
        except ValueError as exc:
            msg = f"percentile key {key!r} is not a number between 0 and {MAX_PERCENTILE:g}"
            raise IngestError(path, msg, json_path=jp) from exc
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            msg = f"expected a finite number, got {value!r}"
            raise IngestError(path, msg, json_path=f"{jp}.{key}")
        if not 0 <= value <= INT64_MAX:
            msg = f"latency {_short(value)} is negative or beyond a 64-bit counter (fio writes none)"
            raise IngestError(path, msg, json_path=f"{jp}.{key}")
        if level > 0:  # fio 2.x pads the map with duplicate "0.00": 0 entries
            by_value[level] = value / div
    return {col: by_value.get(level, math.nan) for col, level in PERCENTILES.items()}


def _job_bins(path: str | Path, job: dict[str, Any], jp: str) -> list[dict[str, Any]]:
    """json+ completion-latency bins of every direction: one row per (job, direction, bin)."""
    rows = []
    for direction in DIRECTIONS:
        stats = job.get(direction)
        clat = stats.get("clat_ns") if isinstance(stats, dict) else None
        bins = clat.get("bins") if isinstance(clat, dict) else None
        if bins is None:
            continue
        bp = f"{jp}.{direction}.clat_ns.bins"
        if not isinstance(bins, dict):
            raise IngestError(path, "expected an object of latency bins", json_path=bp)
        for key, count in bins.items():
            if (
                not (key.isascii() and key.isdigit())
                or isinstance(count, bool)
                or not isinstance(count, int)
                or not 0 <= count <= INT64_MAX
                or int(key) > INT64_MAX
            ):
                raise IngestError(
                    path,
                    f"expected an integer bin (ns) and a count within 64 bits, "
                    f"got {key[:40]!r}: {_short(count)}",
                    json_path=bp,
                )
            rows.append({"job": job["jobname"], "direction": direction, "lat_ns": int(key), "count": count})
    return rows


def _has_bins(doc: dict[str, Any]) -> bool:
    """True if any job carries json+ latency bins (even an empty map)."""
    return any(
        isinstance(job.get(d), dict)
        and isinstance(job[d].get("clat_ns"), dict)
        and "bins" in job[d]["clat_ns"]
        for job in doc["jobs"]
        if isinstance(job, dict)
        for d in DIRECTIONS
    )


def _histogram(path: str | Path, bins: list[dict[str, Any]]) -> pd.DataFrame:
    """The json+ bins as a validated frame; none (plain JSON) is a copy of one empty frame validated once.

    Validating the empty frame cost a third of a plain file's parse (about 3 ms), paid by every fio file.
    """
    if not bins:
        return _empty_histogram().copy()
    return _validate(path, histogram_schema(), pd.DataFrame(bins, columns=list(histogram_schema().columns)))


@functools.cache
def _empty_histogram() -> pd.DataFrame:
    """The bins frame of a file without bins, typed and checked by the schema (callers get copies)."""
    return _validate(
        "<no bins>", histogram_schema(), pd.DataFrame([], columns=list(histogram_schema().columns))
    )


def _jobs_frame(path: str | Path, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The typed, checked jobs frame: built at its dtypes when every value surely passes, else cast."""
    from iscsi_report.core.ingest import schemas

    schema = jobs_schema()
    built = schemas.checked_frame(schema, rows)
    return (
        built
        if built is not None
        else _validate(path, schema, pd.DataFrame(rows, columns=list(schema.columns)))
    )


def _validate(path: str | Path, schema: pa.DataFrameSchema, df: pd.DataFrame) -> pd.DataFrame:
    """Coerce and check a frame against its schema; a failure means the input was bad."""
    import pandera.pandas as pa  # imported already, by the schema

    from iscsi_report.core.ingest import schemas  # pandera's fast path: only where a file is parsed

    try:
        return schemas.validate(schema, schemas.astype(schema, df))
    except (pa.errors.SchemaError, ValueError, TypeError) as exc:
        raise IngestError(path, f"fio values fail validation: {exc}") from exc


def _json_num(value: float | None, integral: bool = False) -> float | int | None:
    """NaN -> None for JSON; integral floats as int when asked."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return int(value) if integral else float(value)
