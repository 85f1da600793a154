"""Parser for iperf3 ``-J`` output: TCP/UDP, -R, -P N, --bidir; intervals and end sums.

Text around the JSON object is tolerated (and reported in ``unparsed``); bare ``nan``/``-nan``
tokens that some iperf3 versions print are read as NaN (only outside JSON strings).  A top-level
``"error"`` becomes an IngestError quoting iperf3's message.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest.textio import decode_json, read_text

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "iperf3-json"
TEXT_FORMAT = "iperf3-text"  # recognised only to be refused with a clear message
BYTES_AGREEMENT_TOLERANCE = 0.01  # intervals vs end totals: relative difference warned beyond
# Above any link iperf3 can measure (Ethernet standards top out at 1.6 Tbit/s): a larger rate is corrupt.
MAX_RATE_BITS_PER_S = 10e12
END_SUM_KEYS = ("sum_sent", "sum_received", "sum", "sum_sent_bidir_reverse", "sum_received_bidir_reverse")

_NAN_RE = re.compile(r'"(?:[^"\\]|\\.)*"|(-?\b(?:nan|inf)\b)')
_TEXT_MARKERS = re.compile(
    r"^(?:Connecting to host .+, port \d+|\[ ID\] Interval +Transfer|iperf Done\.)", re.M
)


@dataclass
class Iperf3Result:
    """Parsed iperf3 -J document with its interval rows and end sums."""

    path: str
    format: str
    version: str | None
    protocol: str
    reverse: bool
    bidir: bool
    streams: int
    duration_s: float | None
    interval_rows: list[dict[str, Any]]
    end: dict[str, Any]
    doc: dict[str, Any]
    unparsed: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @cached_property
    def intervals(self) -> pd.DataFrame:
        """One row per (interval, stream or 'sum', direction): start_s, end_s, bytes, bits_per_s."""
        import pandas as pd

        from iscsi_report.core.ingest.schemas import IPERF3_INTERVALS

        df = pd.DataFrame(self.interval_rows, columns=_INTERVAL_COLUMNS)
        df = df.astype({"interval": "int64", "bytes": "int64", "sender": "boolean"})
        df = df.astype({"start_s": "float64", "end_s": "float64", "bits_per_s": "float64"})
        return IPERF3_INTERVALS.validate(df)


_INTERVAL_COLUMNS = [
    "interval",
    "stream",
    "direction",
    "sender",
    "start_s",
    "end_s",
    "bytes",
    "bits_per_s",
    "omitted",
    "retransmits",
    "jitter_ms",
    "lost_packets",
    "packets",
]


def _replace_nan(text: str) -> str:
    """Turn bare nan/-nan/inf tokens into JSON-readable NaN/Infinity, leaving strings alone."""

    def sub(m: re.Match[str]) -> str:
        token = m.group(1)
        if token is None:
            return m.group(0)
        if "nan" in token:
            return "NaN"
        return "-Infinity" if token.startswith("-") else "Infinity"

    return _NAN_RE.sub(sub, text)


def _locate_json(text: str, path: str) -> tuple[int, int]:
    """Offset of the JSON object's opening brace and its 1-based line number."""
    m = re.search(r"^\s*\{", text, re.M)
    if m is None:
        if not text.strip():
            raise IngestError(path, "empty file: no JSON object found; expected iperf3 -J output")
        if text.lstrip().startswith("["):
            raise IngestError(
                path, "no JSON object found: the file holds a JSON array; expected iperf3 -J output"
            )
        if _TEXT_MARKERS.search(text):
            raise IngestError(path, "iperf3 plain-text output; expected JSON from iperf3 -J (re-run with -J)")
        raise IngestError(path, "no JSON object found; expected iperf3 -J output")
    start = text.index("{", m.start())
    return start, text.count("\n", 0, start) + 1


def _text_lines(text: str, first_line: int) -> list[tuple[int, str]]:
    """Non-blank lines of a text fragment with their 1-based numbers."""
    return [(first_line + i, line.rstrip("\r")) for i, line in enumerate(text.split("\n")) if line.strip()]


def load_document(text: str, path: str) -> tuple[dict[str, Any], list[tuple[int, str]]]:
    """Decode the iperf3 JSON object; return it and the lines of text around it."""
    start, line = _locate_json(text, path)
    body = text[start:]
    if "nan" in body or "inf" in body:
        body = _replace_nan(body)
    try:
        doc, end = decode_json(path, body)
    except json.JSONDecodeError as exc:
        raise IngestError(
            path, f"invalid JSON ({exc.msg}); expected iperf3 -J output", line=line + exc.lineno - 1
        ) from exc
    if not isinstance(doc, dict):
        raise IngestError(path, "JSON is not an object; expected iperf3 -J output", line=line)
    around = _text_lines(text[:start], 1)
    after_line = line + body.count("\n", 0, end)
    around += _text_lines(body[end:], after_line)
    return doc, around


def _get(doc: Any, path: str, keys: list[Any], expected: type | tuple[type, ...]) -> Any:
    """doc[k0][k1]... checked against the expected type; IngestError naming the JSON path."""
    cur = doc
    where = ""
    for k in keys:
        where += f"[{k}]" if isinstance(k, int) else (f".{k}" if where else k)
        try:
            cur = cur[k]
        except (KeyError, IndexError, TypeError) as exc:
            raise IngestError(path, "missing field", json_path=where) from exc
    if not isinstance(cur, expected) or (isinstance(cur, bool) and expected in (int, float)):
        raise IngestError(
            path, f"expected {_type_name(expected)}, found {type(cur).__name__}", json_path=where
        )
    return cur


def _type_name(expected: type | tuple[type, ...]) -> str:
    """Readable name of an expected JSON type."""
    if isinstance(expected, tuple):
        return " or ".join(t.__name__ for t in expected)
    return expected.__name__


def _number(value: Any, path: str, where: str) -> float:
    """A JSON number as float (NaN allowed, bools and strings refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise IngestError(path, f"expected a number, found {value!r}", json_path=where)
    return float(value)


def _interval_row(
    item: dict[str, Any], index: int, stream: str, direction: str, path: str, where: str
) -> dict[str, Any]:
    """One interval row from an iperf3 stream or sum object."""
    if not isinstance(item, dict):
        raise IngestError(path, "expected an object", json_path=where)
    row: dict[str, Any] = {
        "interval": index,
        "stream": stream,
        "direction": direction,
        "sender": item.get("sender") if isinstance(item.get("sender"), bool) else None,
        "omitted": bool(item.get("omitted", False)),
    }
    for key, col in (("start", "start_s"), ("end", "end_s")):
        row[col] = _number(item.get(key), path, f"{where}.{key}")
        if not math.isfinite(row[col]) or row[col] < 0:
            raise IngestError(
                path, f"expected a time in seconds >= 0, found {row[col]!r}", json_path=f"{where}.{key}"
            )
    row["bytes"] = _byte_count(item, path, where)
    _check_seconds(item, row["bytes"], path, where)
    bps = _rate(item, path, where)
    row["bits_per_s"] = 0.0 if bps is None else bps  # an empty interval moved nothing
    for key in ("retransmits", "jitter_ms", "lost_packets", "packets"):
        value = item.get(key)
        row[key] = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    return row


def _byte_count(item: dict[str, Any], path: str, where: str) -> int:
    """The ``bytes`` of an interval or sum: a whole number >= 0 (a string or 1.5 is refused)."""
    nbytes = _number(item.get("bytes"), path, f"{where}.bytes")
    if not math.isfinite(nbytes) or nbytes < 0 or nbytes != int(nbytes):
        raise IngestError(path, f"expected a byte count, found {nbytes!r}", json_path=f"{where}.bytes")
    return int(nbytes)


def _check_seconds(item: dict[str, Any], nbytes: int, path: str, where: str) -> None:
    """``seconds`` (when written) is finite and >= 0, and > 0 wherever bytes moved."""
    if "seconds" not in item:
        return
    seconds = _number(item["seconds"], path, f"{where}.seconds")
    if not math.isfinite(seconds) or seconds < 0 or (nbytes > 0 and seconds == 0):
        raise IngestError(
            path,
            f"{nbytes} bytes in {seconds!r} seconds: expected a duration > 0 where bytes moved",
            json_path=f"{where}.seconds",
        )


def _check_end_sums(result: Iperf3Result) -> None:
    """Every end sum's bytes is a byte count and its seconds a duration (not text, not 0)."""
    for key in END_SUM_KEYS:
        item = result.end.get(key)
        if isinstance(item, dict) and "bytes" in item:
            _check_seconds(item, _byte_count(item, result.path, f"end.{key}"), result.path, f"end.{key}")


def _intervals(doc: dict[str, Any], path: str, reverse: bool, bidir: bool) -> list[dict[str, Any]]:
    """Flatten intervals[*].streams/sum/sum_bidir_reverse into rows."""
    rows: list[dict[str, Any]] = []
    intervals = _get(doc, path, ["intervals"], list)
    for i, interval in enumerate(intervals):
        where = f"intervals[{i}]"
        if not isinstance(interval, dict):
            raise IngestError(path, "expected an object", json_path=where)
        for j, stream in enumerate(_get(doc, path, ["intervals", i, "streams"], list)):
            direction = _direction(stream, reverse, bidir)
            socket = stream.get("socket") if isinstance(stream, dict) else None
            rows.append(_interval_row(stream, i, str(socket), direction, path, f"{where}.streams[{j}]"))
        if "sum" in interval:
            fwd = "reverse" if reverse and not bidir else "forward"
            rows.append(_interval_row(interval["sum"], i, "sum", fwd, path, f"{where}.sum"))
        if "sum_bidir_reverse" in interval:
            rows.append(
                _interval_row(
                    interval["sum_bidir_reverse"],
                    i,
                    "sum",
                    "reverse",
                    path,
                    f"{where}.sum_bidir_reverse",
                )
            )
    return rows


def _direction(stream: Any, reverse: bool, bidir: bool) -> str:
    """forward = client to server; in --bidir the client's receiving streams are reverse."""
    if bidir and isinstance(stream, dict) and stream.get("sender") is False:
        return "reverse"
    return "reverse" if reverse and not bidir else "forward"


def parse_text(text: str, path: str | Path = "<text>") -> Iperf3Result:
    """Parse iperf3 -J output given as text (see :func:`parse`)."""
    path = str(path)
    doc, around = load_document(text, path)
    if not doc:
        raise IngestError(path, "empty JSON object {}: iperf3 -J output has start, intervals and end")
    if "error" in doc:
        raise IngestError(path, f"iperf3 reported an error: {doc['error']!r}", json_path="error")
    end = _get(doc, path, ["end"], dict)
    start = _get(doc, path, ["start"], dict)
    if not end and not doc.get("intervals"):
        raise IngestError(
            path,
            "iperf3 run has no results (empty 'end', no intervals): it was aborted or never connected",
            json_path="end",
        )
    test = _get(doc, path, ["start", "test_start"], dict)
    protocol = str(_get(doc, path, ["start", "test_start", "protocol"], str)).lower()
    reverse = bool(test.get("reverse", 0))
    bidir = bool(test.get("bidir", 0)) or "sum_sent_bidir_reverse" in end
    version = start.get("version") if isinstance(start.get("version"), str) else None
    duration = test.get("duration")
    result = Iperf3Result(
        path=path,
        format=FORMAT,
        version=version,
        protocol=protocol,
        reverse=reverse,
        bidir=bidir,
        streams=int(_number(test.get("num_streams"), path, "start.test_start.num_streams")),
        duration_s=float(duration) if isinstance(duration, (int, float)) else None,
        interval_rows=_intervals(doc, path, reverse, bidir),
        end=end,
        doc=doc,
        unparsed=around,
    )
    if around:
        result.warnings.append(f"{len(around)} line(s) of text around the JSON object")
    _end_sum(result, "forward")  # validates the end sums early
    _check_end_sums(result)
    summary(result)  # and their rates: a negative or NaN bandwidth fails here, not on a page
    _cross_check(result)
    return result


def parse(path: str | Path) -> Iperf3Result:
    """Read and parse an iperf3 -J file (plain, .gz or .xz) through textio.read_text."""
    return parse_text(read_text(path), path)


def _end_sum(result: Iperf3Result, direction: str) -> dict[str, dict[str, Any] | None]:
    """The end sums for one direction: {'sent': ..., 'received': ...} (None where absent)."""
    suffix = "_bidir_reverse" if direction == "reverse" else ""
    out: dict[str, dict[str, Any] | None] = {}
    for side in ("sent", "received"):
        key = f"sum_{side}{suffix}"
        value = result.end.get(key)
        if value is not None and not isinstance(value, dict):
            raise IngestError(result.path, "expected an object", json_path=f"end.{key}")
        out[side] = value
    if out["sent"] is None and out["received"] is None and not suffix:
        legacy = result.end.get("sum")
        if isinstance(legacy, dict):
            out["sent"] = out["received"] = legacy
        elif result.end:
            raise IngestError(
                result.path,
                "no sum_sent/sum_received or sum in the end section",
                json_path="end",
            )
    return out


def _cross_check(result: Iperf3Result) -> None:
    """Interval byte totals vs end sums; disagreements beyond 1% become warnings."""
    sums = _end_sum(result, "forward")
    for side, flag in (("sent", True), ("received", False)):
        end = sums[side]
        rows = [
            r
            for r in result.interval_rows
            if r["stream"] == "sum"
            and r["sender"] is flag
            and not r["omitted"]
            and r["direction"] == ("reverse" if result.reverse and not result.bidir else "forward")
        ]
        if not rows or end is None or not isinstance(end.get("bytes"), (int, float)):
            continue
        total = sum(r["bytes"] for r in rows)
        if end["bytes"] and abs(total - end["bytes"]) > BYTES_AGREEMENT_TOLERANCE * end["bytes"]:
            result.warnings.append(
                f"intervals add up to {total} bytes but end.sum_{side}.bytes is {end['bytes']}"
            )


def _rate(item: dict[str, Any], path: str, where: str) -> float | None:
    """bits_per_second of an interval or sum: finite and >= 0; None (rate undefined) only where
    iperf3 prints nan for a stretch that moved no bytes; anything else is an IngestError."""
    bps = _number(item.get("bits_per_second"), path, f"{where}.bits_per_second")
    if math.isfinite(bps) and bps > MAX_RATE_BITS_PER_S:
        raise IngestError(
            path,
            f"bandwidth {bps:.3g} bits/s is beyond {MAX_RATE_BITS_PER_S:.0e} bits/s (10 Tbit/s): "
            "no link measured it",
            json_path=f"{where}.bits_per_second",
        )
    if math.isfinite(bps) and bps >= 0:
        return bps
    if math.isnan(bps) and item.get("bytes") == 0:
        return None
    found = "nan" if math.isnan(bps) else repr(bps)
    raise IngestError(
        path,
        f"expected a bandwidth >= 0 bits/s, found {found}"
        + (f" for {item.get('bytes')!r} bytes" if math.isnan(bps) else ""),
        json_path=f"{where}.bits_per_second",
    )


def _end_key(result: Iperf3Result, key: str) -> str:
    """JSON path of an end sum: old iperf3 has one ``end.sum`` for both sides."""
    return f"end.{key}" if key in result.end else "end.sum"


def _bps(item: dict[str, Any] | None, path: str, where: str) -> float | None:
    """bits_per_second of an end sum (None when the sum is absent or moved no bytes)."""
    if item is None:
        return None
    return _rate(item, path, where)


def summary(result: Iperf3Result) -> dict[str, Any]:
    """JSON-ready per-file summary (CLI contract: protocol, reverse, streams, sent/received_bps)."""
    fwd = _end_sum(result, "forward")
    out: dict[str, Any] = {
        "format": result.format,
        "version": result.version,
        "protocol": result.protocol,
        "reverse": result.reverse,
        "bidir": result.bidir,
        "streams": result.streams,
        "duration_s": result.duration_s,
        "sent_bps": _bps(fwd["sent"], result.path, _end_key(result, "sum_sent")),
        "received_bps": _bps(fwd["received"], result.path, _end_key(result, "sum_received")),
    }
    if result.bidir:
        rev = _end_sum(result, "reverse")
        out["reverse_sent_bps"] = _bps(rev["sent"], result.path, "end.sum_sent_bidir_reverse")
        out["reverse_received_bps"] = _bps(rev["received"], result.path, "end.sum_received_bidir_reverse")
    if result.protocol == "udp" and isinstance(result.end.get("sum"), dict):
        udp = result.end["sum"]
        for key in ("jitter_ms", "lost_packets", "packets", "lost_percent"):
            out[key] = udp.get(key)
    out["unparsed_lines"] = len(result.unparsed)
    out["warnings"] = list(result.warnings)
    return _finite(out)


def _finite(out: dict[str, Any]) -> dict[str, Any]:
    """NaN/inf -> None so the summary is strict JSON."""
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in out.items()}


def sniff(text: str) -> str | None:
    """'iperf3-json' for iperf3 -J output, 'iperf3-text' for its plain text, else None."""
    head = text[:8192]
    if '"start"' in head and (
        '"test_start"' in text or '"connecting_to"' in head or '"iperf' in head.lower()
    ):
        return FORMAT
    if '"start"' in head and '"error"' in text and '"intervals"' in text:
        return FORMAT
    if _TEXT_MARKERS.search(head):
        return TEXT_FORMAT
    return None
