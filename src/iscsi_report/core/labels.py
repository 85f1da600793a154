"""Labels a raw file determines by itself, and the checks of a dataset's labels against its files.

:func:`infer_file` reads one raw file (tool detected from its content) and returns every label
the file itself settles: a ping's probe interval, variant, IP version and quiet mode; an iperf3
run's protocol, direction, streams and offered rate; a fio job's rw, block size, queue depth,
engine, direct flag and job count; an iostat file's units, devices and CPU reports. The labels
only the user knows (network, device, side) are listed in :data:`USER_LABELS`.

:func:`dataset_problems` gathers every problem of a dataset folder at once (schema, missing or
changed files, unreadable files, labels contradicting the files, pings and iperf3 runs that do
not pair, runs the chapters would pool although they differ). Pure functions: no printing.
"""

from __future__ import annotations

import math
import posixpath
import re
import stat
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
from pydantic import ValidationError

from iscsi_report.core import dataset as ds_mod
from iscsi_report.core import pairing
from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import fio, iostat, iperf3, ping
from iscsi_report.core.ingest.detect import detect_tool, sole_claimant
from iscsi_report.core.ingest.textio import decode_json, file_kind, first_lines, read_text, sha256_file

# A probe interval inferred from the file is snapped to the nearest 1-2-5 value (1 ms, 2 ms,
# 5 ms, 10 ms, ... 1 s, 2 s) when within this relative distance, else rounded to 2 digits.
SNAP_TOLERANCE = 0.15
SIGNIFICANT_DIGITS = 2
# Per-reply timestamps (ping -D): the spacing's 25th percentile estimates the interval; a
# loaded machine only delays probes, so the low quantile is nearer the -i that was asked for.
SPACING_QUANTILE = 25
# A labelled interval_s contradicts the measured spacing when above it by more than this factor,
# or below it by more than SLOW_FACTOR (a loaded machine sends probes late, never early).
INTERVAL_FACTOR = 1.5
SLOW_FACTOR = 3.0
FIO_DEFAULT_ENGINE = "psync"  # fio's default ioengine on Linux
FIO_DEFAULT_DIRECT = False
# Labels the user supplies (flags or a defaults file); `side` is the manifest entry's field.
USER_LABELS: dict[str, tuple[str, ...]] = {
    "ping": ("network",),
    "iperf3": ("network",),
    "fio": ("device",),
    "iostat": (),
}
# fio labels that describe how a run was made: runs a chapter pools must agree on them.
FIO_RUN_LABELS = ("rw", "iodepth", "engine", "direct", "numjobs")
IPERF3_RUN_LABELS = ("protocol", "reverse")
# How the chapters group runs (analyses/storage.py, analyses/r2t.py import these): local runs are
# fitted per device and run kind, every run is tabulated per scenario, device, network, R2T, run
# kind and block size; iperf3 rates per network, protocol and direction. A run is never averaged
# with one made differently, so pooling_problems finds nothing the chapters would pool.
DEVICE_FIT_KEYS = ("device", *FIO_RUN_LABELS)
THROUGHPUT_KEYS = ("scenario", "device", "network", "max_outstanding_r2t", *FIO_RUN_LABELS, "bs_bytes")
LINK_KEYS = ("network", *IPERF3_RUN_LABELS)
# The runs the model's device term is fitted on: one request at a time, past the page cache.
MODEL_FIT_LABELS: dict[str, Any] = {"rw": "write", "iodepth": 1, "direct": True, "numjobs": 1}
# Link capacity is a forward TCP goodput (a UDP -b rate is what was offered, -R the other way).
LINK_CAPACITY_LABELS: dict[str, Any] = {"protocol": "tcp", "reverse": False}
# Device request sizes (iostat) are averaged only over runs of one queue depth.
REQUEST_SIZE_KEYS = ("device", "bs_bytes", "iodepth")
LOCAL_PREFIX = "local"
AT_TARGET_SUFFIX = "-at-target"  # a capture's file-name ending when taken on the target's side of the line
PLACE_BY_SIDE = {"local": "local", "initiator": "iscsi", "target": "target"}
_SUFFIXES = re.compile(r"(\.(json|txt|log|out|gz|xz|jsonplus))+$", re.IGNORECASE)
_PING_ADDR_RE = re.compile(r"^PING6?[ (]\s*\S*?\s*\(([^)]*)\)")


@dataclass(frozen=True)
class Inferred:
    """What one raw file says about itself: tool, format, labels, how estimates were made."""

    tool: str
    format: str
    labels: dict[str, Any]
    notes: tuple[str, ...] = ()
    # estimated labels: the (low, high) range of values the file is consistent with
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    problems: tuple[str, ...] = ()  # why the chapters cannot read the file as it is (init refuses it)
    span: pairing.Span | None = None  # when a fio run or an iostat file ran, by the file's own clock


class UnsupportedFile(IngestError):
    """A raw file a tool recognises in a format the project does not read (e.g. iperf3's plain text)."""


# Recognised formats no parser reads, and what to do instead.
UNSUPPORTED_FORMATS = {
    iperf3.TEXT_FORMAT: "iperf3's plain-text output, which the project does not read: rerun iperf3 with -J",
}


# ---- ping --------------------------------------------------------------------------------------


def snap_interval(seconds: float) -> float:
    """The nearest 1-2-5 value (0.001, 0.002, 0.005, 0.01, ...) if close enough, else 2 digits."""
    exponent = math.floor(math.log10(seconds))
    candidates = [m * 10.0**e for e in (exponent - 1, exponent, exponent + 1) for m in (1, 2, 5)]
    best = min(candidates, key=lambda c: abs(c - seconds) / c)
    if abs(best - seconds) / best <= SNAP_TOLERANCE:
        return float(f"{best:.12g}")
    return float(f"{seconds:.{SIGNIFICANT_DIGITS}g}")


def spacing_s(result: ping.PingResult) -> float | None:
    """Low-quantile seconds between probes from per-reply timestamps (ping -D); None without them."""
    ts = np.asarray(result.timestamp_s, dtype=float)
    seq = np.asarray(result.seq, dtype=float)
    keep = np.isfinite(ts) & ~np.asarray(result.duplicate, dtype=bool)
    if keep.sum() < 2:
        return None
    order = np.argsort(seq[keep], kind="stable")
    dseq, dts = np.diff(seq[keep][order]), np.diff(ts[keep][order])
    ok = dseq > 0
    if not ok.any():
        return None
    return float(np.percentile(dts[ok] / dseq[ok], SPACING_QUANTILE))


def elapsed_per_probe_s(result: ping.PingResult) -> float | None:
    """Statistics' elapsed time over the probes after the first: an upper bound of the interval."""
    st = result.statistics
    if st is None or st.time_ms is None or st.transmitted < 2 or st.time_ms <= 0:
        return None
    return st.time_ms / 1000.0 / (st.transmitted - 1)


def _ip_version(text: str) -> int | None:
    """6 or 4 from the header's address (PING6 or an address with ':'), None without a header."""
    for line in first_lines(text, ping.HEADER_SEARCH_LINES):
        if line.startswith("PING6"):
            return 6
        m = _PING_ADDR_RE.match(line)
        if m:
            return 6 if ":" in m.group(1) else 4
    return None


def ping_labels(result: ping.PingResult, text: str) -> Inferred:
    """interval_s (from -D spacing, else the elapsed time), ping_format, ip_version, quiet."""
    labels: dict[str, Any] = {"ping_format": result.format}
    notes: list[str] = []
    bounds: dict[str, tuple[float, float]] = {}
    version = _ip_version(text)
    if version is not None:
        labels["ip_version"] = version
    st = result.statistics
    labels["quiet"] = len(result.rtt_ms) == 0 and st is not None and st.received > 0
    spacing, upper = spacing_s(result), elapsed_per_probe_s(result)
    if spacing is not None and spacing > 0:
        labels["interval_s"] = snap_interval(spacing)
        bounds["interval_s"] = (spacing / SLOW_FACTOR, spacing * INTERVAL_FACTOR)
        notes.append(
            f"interval_s {labels['interval_s']:g} from the -D timestamps ({spacing * 1e3:.3g} ms apart)"
        )
    elif upper is not None:
        labels["interval_s"] = _largest_125_below(upper)
        bounds["interval_s"] = (0.0, upper * (1 + SNAP_TOLERANCE))
        notes.append(
            f"interval_s {labels['interval_s']:g} estimated from the statistics' elapsed time "
            f"({upper * 1e3:.3g} ms per probe, an upper bound): ping -D gives a measured spacing; "
            "set the label if ping -i was another value"
        )
    else:
        notes.append("interval_s cannot be inferred: no -D timestamps and no elapsed time; set the label")
    return Inferred("ping", result.format, labels, tuple(notes), bounds)


def _largest_125_below(seconds: float) -> float:
    """The largest 1-2-5 value not above seconds (5 % slack): ping's spacing only grows under load."""
    exponent = math.floor(math.log10(seconds)) + 1
    for e in range(exponent, exponent - 3, -1):
        for m in (5, 2, 1):
            value = m * 10.0**e
            if value <= seconds * 1.05:
                return float(f"{value:.12g}")
    return snap_interval(seconds)


# ---- iperf3, fio, iostat -----------------------------------------------------------------------


def iperf3_labels(result: iperf3.Iperf3Result) -> Inferred:
    """protocol, reverse, bidir, streams, duration_s and (UDP) offered_bits_per_s."""
    labels: dict[str, Any] = {
        "protocol": result.protocol,
        "reverse": result.reverse,
        "bidir": result.bidir,
        "streams": result.streams,
    }
    if result.duration_s is not None and result.duration_s > 0:
        labels["duration_s"] = _number(result.duration_s)
    target = result.doc.get("start", {}).get("test_start", {}).get("target_bitrate")
    if result.protocol == "udp" and isinstance(target, (int, float)) and target > 0:
        labels["offered_bits_per_s"] = _number(target)
    return Inferred("iperf3", result.format, labels)


def _number(value: float) -> int | float:
    """An integral float as int (so YAML shows 10, not 10.0)."""
    return int(value) if float(value).is_integer() else float(value)


def fio_document(text: str, path: str | Path) -> dict[str, Any]:
    """The fio JSON document in text ({} when there is none)."""
    start = re.search(r"^\{", text, re.MULTILINE)
    if start is None:
        return {}
    doc, _ = decode_json(path, text, start.start())
    return doc if isinstance(doc, dict) else {}


def fio_options(doc: Mapping[str, Any]) -> list[dict[str, str]]:
    """Global options merged with each job's options, from a fio JSON document."""
    global_opts = doc.get("global options") or {}
    jobs = doc.get("jobs") or []
    return [{**global_opts, **(job.get("job options") or {})} for job in jobs if isinstance(job, dict)]


def _truthy(value: str) -> bool:
    """fio's boolean option text: 1/true/yes/on."""
    return value.strip().lower() in ("1", "true", "yes", "on")


def fio_labels(result: fio.FioResult, text: str) -> Inferred:
    """rw, bs_bytes, iodepth, numjobs (parsed jobs), engine and direct (options, fio defaults)."""
    labels: dict[str, Any] = {}
    notes: list[str] = []
    jobs = result.jobs
    for key, column, cast in (
        ("rw", "rw", str),
        ("bs_bytes", "bs_bytes", int),
        ("iodepth", "iodepth", int),
        ("numjobs", "numjobs", int),
    ):
        values = {cast(v) for v in jobs[column].dropna()}
        if len(values) == 1:
            labels[key] = values.pop()
        elif len(values) > 1:
            notes.append(f"{key} differs between jobs ({', '.join(map(str, sorted(values)))}): not a label")
    doc = fio_document(text, result.path)
    opts = fio_options(doc)
    engines = {o.get("ioengine", FIO_DEFAULT_ENGINE) for o in opts}
    directs = {_truthy(o["direct"]) if "direct" in o else FIO_DEFAULT_DIRECT for o in opts}
    if len(engines) == 1:
        labels["engine"] = engines.pop()
        if not any("ioengine" in o for o in opts):
            notes.append(f"engine {labels['engine']}: fio's default (no ioengine option recorded)")
    if len(directs) == 1:
        labels["direct"] = directs.pop()
    problems = tuple(_fio_job_problems(jobs))
    span = pairing.fio_span_of(doc)
    return Inferred("fio", result.format, labels, tuple(notes), problems=problems, span=span)


def _fio_job_problems(jobs: Any) -> list[str]:
    """Several write jobs in one file: the chapters read one write job per fio file."""
    writes = int((jobs["direction"] == "write").sum()) if "direction" in jobs else 0
    if writes <= 1:
        return []
    return [
        f"{writes} jobs write in this one fio file (numjobs > 1 without group_reporting, or several "
        "job sections); the chapters read one write job per file: rerun with --group_reporting, or "
        "write each job to its own file"
    ]


def iostat_labels(result: iostat.IostatResult, text: str) -> Inferred:
    """iostat_units (kB or MB), block_devices and cpu_stats."""
    labels: dict[str, Any] = {"iostat_units": "MB" if re.search(r"[rwd]MB/s", text[:100_000]) else "kB"}
    devices = sorted({str(d) for d in result.devices["device"]}) if "device" in result.devices else []
    if devices:
        labels["block_devices"] = ",".join(devices)
    labels["cpu_stats"] = not result.cpu.empty
    return Inferred("iostat", result.format, labels, span=pairing.iostat_span(result.devices, result.cpu))


_INFER = {"ping": ping_labels, "fio": fio_labels, "iostat": iostat_labels}


def infer_text(text: str, path: str | Path) -> Inferred | None:
    """Labels of a raw file's text; None if no tool recognises it; IngestError if it is broken."""
    found = detect_tool(text)
    if found is None:
        claimant = sole_claimant(text)
        if claimant is None:
            return None
        found = (claimant, "")
    tool = found[0]
    if found[1] in UNSUPPORTED_FORMATS:
        raise UnsupportedFile(path, UNSUPPORTED_FORMATS[found[1]])
    if tool == "ping":
        return ping_labels(ping.parse_text(text, path), text)
    if tool == "iperf3":
        return iperf3_labels(iperf3.parse_text(text, path))
    if tool == "fio":
        return fio_labels(fio.parse_text(text, path), text)
    return iostat_labels(iostat.parse(path), text)


def infer_file(path: str | Path) -> Inferred | None:
    """Labels of one raw file (see :func:`infer_text`)."""
    return infer_text(read_text(path), path)


# ---- comparing labels with files ---------------------------------------------------------------


def contradictions(labels: Mapping[str, Any], inferred: Inferred) -> list[str]:
    """Each label whose value the file contradicts, as 'KEY: manifest says X, the file says Y'."""
    out = []
    for key, said in labels.items():
        if key not in inferred.labels or said is None:
            continue
        found = inferred.labels[key]
        if key in inferred.bounds:
            lo, hi = inferred.bounds[key]
            if isinstance(said, (int, float)) and not lo <= float(said) <= hi:
                out.append(
                    f"{key}: the manifest says {said:g} but the file's probes are consistent with "
                    f"{lo:.3g}..{hi:.3g} (inferred {found:g})"
                )
        elif not _same(said, found):
            out.append(f"{key}: the manifest says {_show(said)} but the file says {_show(found)}")
    return out


def _same(a: Any, b: Any) -> bool:
    """Equal as label values (numbers numerically, bool only with bool)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9)
    return str(a).lower() == str(b).lower()


def _show(value: Any) -> str:
    """A label value as a user would type it."""
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:g}" if isinstance(value, float) else str(value)


def run_name(rel: str) -> str:
    """A file's run name: its file name without the tool's extensions (fio/64k.json -> 64k)."""
    return _SUFFIXES.sub("", PurePosixPath(rel).name) or PurePosixPath(rel).name


def derived_scenario(side: str, labels: Mapping[str, Any]) -> str | None:
    """local-ENGINE / iscsi-ENGINE from side and engine; qdN- and buffered- prefixes keep runs that
    are not queue-depth-1 direct writes out of the device fit (which reads scenarios 'local*')."""
    engine = labels.get("engine")
    if engine is None:
        return None
    name = f"{PLACE_BY_SIDE[side]}-{engine}"
    depth = labels.get("iodepth")
    if isinstance(depth, int) and depth != 1:
        name = f"qd{depth}-{name}"
    if labels.get("direct") is False:
        name = f"buffered-{name}"
    return name


def missing_user_labels(tool: str, labels: Mapping[str, Any]) -> list[str]:
    """User labels the chapters need for this tool that the entry lacks."""
    return [k for k in USER_LABELS.get(tool, ()) if labels.get(k) is None]


# ---- problems of a whole dataset ---------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One manifest entry as the checks see it."""

    rel: str
    tool: str
    side: str
    labels: dict[str, Any]


def pairing_problems(entries: Iterable[Entry]) -> list[str]:
    """Networks with pings but no iperf3 run, or iperf3 runs but no ping."""
    pings: dict[str, list[str]] = defaultdict(list)
    iperfs: dict[str, list[str]] = defaultdict(list)
    for e in entries:
        if e.tool in ("ping", "iperf3") and e.labels.get("network") is not None:
            (pings if e.tool == "ping" else iperfs)[str(e.labels["network"])].append(e.rel)
    out = []
    for net in sorted(set(pings) - set(iperfs)):
        out.append(
            f"network {net!r}: ping files ({', '.join(pings[net])}) but no iperf3 file with network: "
            f"{net}; the model needs both (labels in iperf3 files: {sorted(iperfs) or 'none'})"
        )
    for net in sorted(set(iperfs) - set(pings)):
        out.append(
            f"network {net!r}: iperf3 files ({', '.join(iperfs[net])}) but no ping file with network: "
            f"{net}; the model needs both (labels in ping files: {sorted(pings) or 'none'})"
        )
    return out


_FIO_FIX = "give them distinct scenario labels (dataset init derives them) or leave some out"
_LINK_FIX = "give the odd runs another network label or leave them out (link capacity is a forward TCP rate)"


def _label_text(e: Entry, label: str) -> str:
    """A label's value as shown, 'unlabelled' when absent."""
    return _show(e.labels.get(label, "unlabelled"))


def _pool_problems(
    entries: list[Entry], keys: tuple[str, ...], describing: tuple[str, ...], what: str, fix: str
) -> list[str]:
    """Groups (by keys) whose members differ in a describing label: they would be pooled."""
    groups: dict[tuple[Any, ...], list[Entry]] = defaultdict(list)
    for e in entries:
        groups[tuple(e.labels.get(k) for k in keys)].append(e)
    out = []
    for key, members in sorted(groups.items(), key=lambda kv: str(kv[0])):
        for label in describing:
            values = sorted({_label_text(e, label) for e in members})
            if len(values) < 2:
                continue
            named = ", ".join(f"{k}={_show(v)}" for k, v in zip(keys, key, strict=True) if v is not None)
            by_value = "; ".join(
                f"{v}: {', '.join(e.rel for e in members if _label_text(e, label) == v)}" for v in values
            )
            out.append(
                f"{what} ({named or 'no labels'}) would pool runs of different {label} ({by_value}); {fix}"
            )
    return out


def pooling_problems(entries: Iterable[Entry]) -> list[str]:
    """Runs the chapters would average together although they were made differently."""
    items = list(entries)
    fio_runs = [e for e in items if e.tool == "fio"]
    local = [e for e in fio_runs if str(e.labels.get("scenario") or "").startswith(LOCAL_PREFIX)]
    local_iostat = [
        e
        for e in items
        if e.tool == "iostat" and str(e.labels.get("scenario") or "").startswith(LOCAL_PREFIX)
    ]
    iperf = [e for e in items if e.tool == "iperf3"]
    return [
        *_pool_problems(local, DEVICE_FIT_KEYS, FIO_RUN_LABELS, "the device fit of local runs", _FIO_FIX),
        *_pool_problems(
            local_iostat, DEVICE_FIT_KEYS, ("iodepth",), "the device request sizes of local iostat", _FIO_FIX
        ),
        *_pool_problems(fio_runs, THROUGHPUT_KEYS, FIO_RUN_LABELS, "the throughput table", _FIO_FIX),
        *_pool_problems(iperf, LINK_KEYS, IPERF3_RUN_LABELS, "the link capacity", _LINK_FIX),
    ]


def file_problems(entry: Entry, inferred: Inferred | None) -> list[str]:
    """Tool mismatch, contradicted labels, missing user labels, fio runs without a write job."""
    if inferred is None:
        return [f"{entry.rel}: not recognised as ping, iperf3, fio or iostat output"]
    if inferred.tool != entry.tool:
        return [f"{entry.rel}: the manifest says tool {entry.tool} but the file is {inferred.tool} output"]
    out = [f"{entry.rel}: label {c}" for c in contradictions(entry.labels, inferred)]
    out += [f"{entry.rel}: {p}" for p in inferred.problems]
    out += [
        f"{entry.rel}: missing label {k} (a {entry.tool} file needs it; set it with --label {k}=VALUE)"
        for k in missing_user_labels(entry.tool, entry.labels)
    ]
    rw = str(entry.labels.get("rw", inferred.labels.get("rw", "write")))
    if entry.tool == "fio" and "write" not in rw and rw not in ("rw", "randrw"):
        out.append(f"{entry.rel}: fio rw={rw} has no write job; the storage chapter reads writes only")
    return out


@dataclass
class CheckReport:
    """The outcome of checking a dataset: problems (exit 1), notes (shown only), files checked."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: int = 0


def dataset_problems(raw_dir: str | Path) -> CheckReport:
    """Every problem of a dataset folder at once (see the module docstring)."""
    report = CheckReport()
    try:
        manifest, doc, m = ds_mod.read_manifest(raw_dir)
    except IngestError as exc:
        report.problems.append(str(exc))
        return report
    report.files = len(m.files)
    entries: list[Entry] = []
    spans: dict[str, pairing.Span | None] = {}
    for i, item in enumerate(m.files):
        try:
            raw = ds_mod.load_entry(manifest, doc, i, item)
        except IngestError as exc:
            report.problems.append(str(exc))
            continue
        entry = Entry(raw.rel, raw.tool, raw.side, raw.labels)
        entries.append(entry)
        spans[raw.rel] = None
        if sha256_file(raw.path) != raw.sha256:
            report.problems.append(
                f"{raw.path}: sha256 differs from the manifest's (the file changed since; if intended: "
                f"{ds_mod.UPDATE_HINT.replace('DIR', str(Path(raw_dir)))})"
            )
        else:  # the same bytes: a size that differs is the manifest's own error
            report.problems += size_problems(raw.rel, m.files[i].bytes, raw.path)
        if raw.tool == "tshark":
            report.problems += tshark_problems(raw.rel, raw.path)
            continue
        try:
            inferred = infer_file(raw.path)
        except IngestError as exc:
            report.problems.append(str(exc))
            continue
        report.problems += file_problems(entry, inferred)
        spans[raw.rel] = inferred.span if inferred is not None else None
    _unlisted(manifest.parent, [e.rel for e in entries], report)
    report.problems += pairing_problems(entries)
    report.problems += iostat_pairing_problems(entries, spans)
    report.problems += twice_listed_problems(m.files)
    report.problems += parameter_set_problems(entries, set(m.iscsi_parameters or {}))
    report.problems += pooling_problems(entries)
    return report


def size_problems(rel: str, listed_bytes: int | None, path: Path) -> list[str]:
    """The manifest's ``bytes`` when it is not the size of the file its sha256 matches (a field
    edited by hand, that no file would ever match)."""
    size = path.stat().st_size
    if listed_bytes is None or listed_bytes == size:
        return []
    return [
        f"{rel}: the manifest says bytes: {listed_bytes} but the file (whose sha256 it matches) holds "
        f"{size} bytes: correct it, or run iscsi-report dataset update"
    ]


def tshark_problems(rel: str, path: Path) -> list[str]:
    """A file listed as tshark output that is another tool's (a ping log labelled tshark would
    have its samples read by no chapter), or no tool's."""
    found = detect_tool(read_text(path))
    if found is None:
        return [f"{rel}: the manifest says tool tshark but the file is not tshark output"]
    if found[0] != "tshark":
        return [f"{rel}: the manifest says tool tshark but the file is {found[0]} output"]
    return []


def twice_listed_problems(files: Iterable[ds_mod.FileEntry]) -> list[str]:
    """Files listed more than once: the same sha256 under one path or several (counted twice)."""
    by_sha: dict[str, list[str]] = defaultdict(list)
    for f in files:
        by_sha[f.sha256].append(f.path)
    return [
        f"{', '.join(paths)}: the same bytes (sha256 {sha[:12]}...) listed {len(paths)} times; one "
        "measurement would be counted as several: remove all but one"
        for sha, paths in by_sha.items()
        if len(paths) > 1
    ]


def parameter_set_problems(entries: Iterable[Entry], sets: set[str]) -> list[str]:
    """iscsi_parameters labels naming no set under the manifest's iscsi_parameters mapping."""
    shown = ", ".join(sorted(sets)) or "none"
    return [
        f"{e.rel}: label iscsi_parameters: {e.labels['iscsi_parameters']} names no set under the "
        f"manifest's iscsi_parameters (sets: {shown}); the projections would refuse the run"
        for e in entries
        if e.labels.get("iscsi_parameters") is not None and str(e.labels["iscsi_parameters"]) not in sets
    ]


def _agrees(iostat_labels: Mapping[str, Any], fio_labels: Mapping[str, Any]) -> bool:
    """True when the fio file's labels equal the iostat file's on every key both carry."""
    return all(fio_labels[k] == v for k, v in iostat_labels.items() if k in fio_labels)


def iostat_pairing_problems(
    entries: Iterable[Entry], spans: Mapping[str, pairing.Span | None] | None = None
) -> list[str]:
    """iostat files that pair with no fio run, or with several the files' clocks cannot tell apart.

    The labels choose first (a ``run`` label is an override); among several agreeing fio runs
    the one the iostat reports overlap in time (``spans``, by path) is the partner.
    """
    listed = list(entries)
    spans = spans or {}
    fios = [e for e in listed if e.tool == "fio"]
    out = []
    for e in (e for e in listed if e.tool == "iostat"):
        found = [f.rel for f in fios if _agrees(e.labels, f.labels)]
        own = spans.get(e.rel)
        if len(found) > 1 and own is not None and pairing.partner(own, {r: spans.get(r) for r in found}):
            continue
        if not found:
            out.append(
                f"{e.rel}: pairs with no fio file (none agrees with its labels); its request sizes "
                "and CPU are left out of the model and the storage chapter: give it its fio run's "
                "run label"
            )
        elif len(found) > 1:
            out.append(
                f"{e.rel}: pairs with {len(found)} fio files ({_few_rels(found)}); its request sizes "
                "and CPU cannot be attributed: give it its fio run's run label"
            )
    return out


def _few_rels(rels: list[str], shown: int = 4) -> str:
    """Up to ``shown`` paths, then 'and N more'."""
    more = len(rels) - shown
    return ", ".join(rels[:shown]) + (f" and {more} more" if more > 0 else "")


def _entries(root: Path) -> list[tuple[str, Path]]:
    """Every non-hidden entry under root as (POSIX relative path, path), sorted; IngestError naming
    the folder when it cannot be walked (a folder this process may not list, /proc)."""
    try:
        found = sorted(root.rglob("*"))
    except OSError as exc:
        raise IngestError(root, f"cannot list the folder: {exc}") from exc
    out = []
    for p in found:
        rel = p.relative_to(root).as_posix()
        if not any(part.startswith(".") for part in rel.split("/")):
            out.append((rel, p))
    return out


def unlisted_files(root: Path, listed: Iterable[str]) -> list[str]:
    """Files under root (not hidden, not the manifest) the manifest does not list."""
    known = {posixpath.normpath(r) for r in listed}
    return [
        rel for rel, p in _entries(root) if p.is_file() and rel not in ds_mod.COMPANIONS and rel not in known
    ]


def special_files(root: Path) -> list[str]:
    """Each entry under root that is neither a folder nor a regular file (a FIFO, a socket, a
    device), as 'REL: a FIFO (named pipe), not a regular file: left out' (never read: it may block)."""
    out = []
    for rel, p in _entries(root):
        try:
            mode = p.stat().st_mode  # through a link: what it leads to
        except OSError as exc:
            out.append(f"{rel}: cannot be opened ({exc.strerror or exc}): left out")
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            out.append(f"{rel}: {file_kind(mode)}, not a regular file: left out")
    return out


def _unlisted(root: Path, listed: Iterable[str], report: CheckReport) -> None:
    """Unlisted raw tool outputs are problems (they would be ignored); other files are notes."""
    problems, notes = unlisted_report(root, listed)
    report.problems += problems
    report.notes += notes + special_files(root)


def unlisted_report(root: Path, listed: Iterable[str]) -> tuple[list[str], list[str]]:
    """(problems, notes) of files not in the manifest: raw outputs are problems, the rest notes."""
    problems, notes = [], []
    for rel in unlisted_files(root, listed):
        try:
            recognised = infer_file(root / rel) is not None
        except UnsupportedFile as exc:
            notes.append(f"{rel}: {exc.detail}; not in the manifest (ignored)")
            continue
        except IngestError:
            recognised = True  # a tool claims it: a raw output, though a broken one
        if recognised:
            problems.append(
                f"{rel}: raw output in the folder but not in the manifest (it would be ignored; "
                "list it with iscsi-report dataset init --force, or remove it)"
            )
        else:
            notes.append(f"{rel}: not a raw tool output and not in the manifest (ignored)")
    return problems, notes


def entry_sha(path: Path) -> tuple[str, int]:
    """sha256 and size of a file."""
    return sha256_file(path), path.stat().st_size


# ---- scaffolding a manifest (dataset init, capture) ----------------------------------------------

ALL_FILES = "all"
SIDE_KEY = "side"


@dataclass
class Scaffold:
    """A manifest built from a folder: the document, and what stops it or deserves a word."""

    doc: dict[str, Any]
    unknown: list[str] = field(default_factory=list)  # files no tool recognises
    unsupported: list[str] = field(default_factory=list)  # "path: why", recognised in a format not read
    errors: list[str] = field(default_factory=list)  # unreadable files, contradicted user labels
    missing: dict[str, list[str]] = field(default_factory=dict)  # label -> files lacking it
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the manifest can be written (unknown files are the caller's decision)."""
        return not self.errors and not self.missing


def user_labels_for(rel: str, tool: str, defaults: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Labels the defaults give one file: 'all', then its tool, then each matching glob in order."""
    out: dict[str, Any] = dict(defaults.get(ALL_FILES, {}))
    out.update(defaults.get(tool, {}))
    for selector, labels in defaults.items():
        if selector not in (ALL_FILES, *USER_LABELS) and PurePosixPath(rel).match(selector):
            out.update(labels)
    return out


def raw_files(root: Path) -> list[str]:
    """Every non-hidden file under root but the manifest, as sorted POSIX relative paths."""
    return unlisted_files(root, [])


def _labelled(
    rel: str, inferred: Inferred, user: Mapping[str, Any], sc: Scaffold
) -> tuple[str | None, dict[str, Any]]:
    """Side and labels of one file: the file's own labels, then the user's (which must agree)."""
    labels = dict(inferred.labels)
    given = {k: v for k, v in user.items() if k != SIDE_KEY}
    sc.errors += [f"{rel}: label {c}" for c in contradictions(given, inferred)]
    labels.update(given)
    sc.notes += [f"{rel}: {n}" for n in inferred.notes]
    side = user.get(SIDE_KEY)
    return (str(side) if side is not None else None), labels


def _pair_iostat(entries: list[dict[str, Any]]) -> None:
    """An iostat file takes the labels of the fio run of the same run name that it lacks."""
    fio_by_run = {e["labels"].get("run"): e for e in entries if e["tool"] == "fio"}
    for e in entries:
        partner = fio_by_run.get(e["labels"].get("run")) if e["tool"] == "iostat" else None
        if partner is not None:
            for key, value in partner["labels"].items():
                e["labels"].setdefault(key, value)


def _run_label(rel: str, runs: Mapping[str, int]) -> str:
    """The run label init derives for a fio file: its stem, or its path when stems repeat."""
    stem = run_name(rel)
    return stem if runs.get(stem, 0) <= 1 else _SUFFIXES.sub("", rel).replace("/", "-")


def _clock_partners(found: list[tuple[str, Inferred]]) -> dict[str, str]:
    """iostat file -> the fio file whose run its reports overlap in time (those the clocks settle)."""
    fio_spans = {rel: i.span for rel, i in found if i.tool == "fio"}
    out = {}
    for rel, inferred in found:
        if inferred.tool == "iostat" and inferred.span is not None:
            partner = pairing.partner(inferred.span, fio_spans)
            if partner is not None:
                out[rel] = partner
    return out


def scaffold(
    root: str | Path,
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
    name: str | None = None,
) -> Scaffold:
    """A manifest for every raw file under root: inferred labels, the user's labels, checksums."""
    base = Path(root).resolve()
    defaults = defaults or {}
    sc = Scaffold(doc={"dataset": name or base.name, "reconstructed": False, "files": []})
    entries: list[dict[str, Any]] = []
    runs: dict[str, int] = defaultdict(int)
    found: list[tuple[str, Inferred]] = []
    sc.notes += special_files(base)
    for rel in raw_files(base):
        try:
            inferred = infer_file(base / rel)
        except UnsupportedFile as exc:
            sc.unsupported.append(f"{rel}: {exc.detail}")
            continue
        except IngestError as exc:
            sc.errors.append(str(exc))
            continue
        if inferred is None:
            sc.unknown.append(rel)
            continue
        sc.errors += [f"{rel}: {p}" for p in inferred.problems]
        found.append((rel, inferred))
        runs[run_name(rel)] += inferred.tool == "fio"
    by_clock = _clock_partners(found)
    for rel, inferred in found:
        side, labels = _labelled(rel, inferred, user_labels_for(rel, inferred.tool, defaults), sc)
        if inferred.tool in ("fio", "iostat"):
            partner = by_clock.get(rel)
            labels.setdefault("run", _run_label(partner or rel, runs))
            if partner is not None and labels["run"] != _run_label(rel, runs):
                sc.notes.append(f"{rel}: paired with {partner} by the time both files cover")
        sha, size = entry_sha(base / rel)
        entry = {"path": rel, "tool": inferred.tool, "side": side, "sha256": sha, "bytes": size}
        entries.append({**entry, "labels": labels})
    _pair_iostat(entries)
    for e in entries:
        if e["side"] is None:
            sc.missing.setdefault(SIDE_KEY, []).append(e["path"])
            continue
        if e["tool"] in ("fio", "iostat") and "scenario" not in e["labels"]:
            scenario = derived_scenario(e["side"], e["labels"])
            if scenario is not None:
                e["labels"]["scenario"] = scenario
        for key in missing_user_labels(e["tool"], e["labels"]):
            sc.missing.setdefault(key, []).append(e["path"])
        if e["tool"] == "ping" and "interval_s" not in e["labels"]:
            sc.missing.setdefault("interval_s", []).append(e["path"])
    sc.doc["files"] = entries
    return sc


def validate_doc(doc: Mapping[str, Any], path: str | Path) -> None:
    """The manifest document checked by the same schema dataset.load uses (IngestError if not)."""
    try:
        ds_mod.Manifest.model_validate(doc)
    except ValidationError as exc:
        errs = exc.errors(include_url=False)
        first = errs[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise IngestError(path, f"generated manifest is invalid at {loc}: {first['msg']}") from exc


# ---- the label contract (book/labels.md) ---------------------------------------------------------

_JSON_TYPES = {"string": "text", "integer": "integer", "number": "number", "boolean": "true/false"}


def _type_text(prop: Mapping[str, Any]) -> str:
    """A JSON-schema property as a reader's type: 'integer > 0', 'text', 'one of kB, MB'."""
    options = [p for p in prop.get("anyOf", [prop]) if p.get("type") != "null"]
    return " or ".join(dict.fromkeys(_one_type(p) for p in options))


def _one_type(p: Mapping[str, Any]) -> str:
    """One branch of a schema union as text (a nested number-or-integer union reads 'number')."""
    if "enum" in p or "const" in p:
        return "one of " + ", ".join(str(v) for v in p.get("enum", [p.get("const")]))
    kinds = [q.get("type") for q in p.get("anyOf", [p])]
    text = "number" if "number" in kinds else _JSON_TYPES.get(str(kinds[0]), str(kinds[0]))
    bounds = [
        f"{sym} {p[key]:g}"
        for key, sym in (("gt", ">"), ("exclusiveMinimum", ">"), ("ge", ">="), ("minimum", ">="))
        if key in p
    ]
    return " ".join([text, *bounds])


def contract_rows() -> list[dict[str, str]]:
    """One row per manifest label (and the entry's side): type, unit, who sets it, meaning, effect."""
    entry = ds_mod.FileEntry.model_json_schema()["properties"]["side"]
    props = {"side": entry, **ds_mod.Labels.model_json_schema()["properties"]}
    rows = []
    for key, prop in props.items():
        rows.append(
            {
                "label": key,
                "type": _type_text(prop),
                "unit": str(prop.get("unit", "")),
                "set_by": str(prop.get("set_by", "you")),
                "meaning": str(prop.get("description", "")),
                "effect": str(prop.get("effect", "")),
            }
        )
    return rows
