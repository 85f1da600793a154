"""Parser for ping output: Linux iputils, GNU inetutils, BusyBox and macOS/FreeBSD.

The common reply line is extracted with vectorised numpy byte operations over the whole file
(no Python object per line), so a 450,000-line log parses in a fraction of a second; every
other line goes through a careful per-line path and is either understood or reported in
``unparsed``.  The tool's own statistics footer is parsed and cross-checked against the
samples; disagreements become ``warnings``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iscsi_report.errors import IngestError
from iscsi_report.ingest.textio import read_text

if TYPE_CHECKING:
    import pandas as pd

FORMATS = ("iputils", "inetutils", "busybox", "bsd")

# byte values used by the vectorised scanner
_NL, _EQ, _SP, _DOT, _LBRACKET, _RBRACKET = (ord(c) for c in "\n= .[]")
_ZERO, _NINE = ord("0"), ord("9")
_MS_SUFFIX = b" ms"
_DUP_SUFFIX = b" (DUP!)"
_BYTES_FROM = b" bytes "  # "from" follows; the cheaper check is already unambiguous
_RTT_WIDTH = 10  # longest time= token taken by the fast path ("99999.999" and terminator)
_SEQ_WIDTH = 6  # icmp_seq is 16 bits: at most 5 digits and a terminator
_TIMESTAMP_WIDTH = 24  # "[1595037214.261953]" epoch seconds with microseconds
_BYTES_WIDTH = 6  # reply size digits, "64" .. "65507", and a terminator
_MAX_MANTISSA_DIGITS = 15  # below 2**53: mantissa / 10**k is then correctly rounded
_POW10_F = np.power(10.0, np.arange(_TIMESTAMP_WIDTH + 2))
_INT32_DIGITS = 9  # tokens narrower than this fit an int32 mantissa
_PAD = 64  # NUL bytes appended to the buffer so fixed-width windows never run past its end

# -- careful per-line path ------------------------------------------------------------------
_TS = r"(?:\[(?P<ts>\d+(?:\.\d+)?)\] )?"
_REPLY_RE = re.compile(
    _TS + r"\d+ bytes from (?P<src>.+?)[:,] (?:icmp_)?(?P<seqkey>seq|req)=(?P<seq>\d+)"
    r"(?: (?:ttl|hlim)=\d+)?(?: time=(?P<rtt>\d+(?:\.\d+)?) ms)?(?P<flags>(?: \([A-Z !]+\))*)$"
)
_NO_ANSWER_RE = re.compile(_TS + r"no answer yet for icmp_seq=(?P<seq>\d+)$")
_TIMEOUT_RE = re.compile(r"Request timeout for icmp_seq[= ](?P<seq>\d+)$")
_ICMP_ERROR_RE = re.compile(
    _TS + r"From \S+(?: \(\S+\))?:? (?:icmp_seq=(?P<seq>\d+) )?(?P<what>[A-Z].*)$"
)
_BSD_ERROR_RE = re.compile(r"\d+ bytes from .+: (?P<what>[A-Z][A-Za-z ]+)$")
_HEXDUMP_RE = re.compile(r"(?:Vr HL TOS .*|(?: +[0-9a-f]+){9,}.*)$")
_HEADER_RE = re.compile(r"(?:PING |PING6\().+")
_STATS_HEADER_RE = re.compile(r"--- (?P<host>.+) ping6? statistics ---$")
_TRANSMITTED_RE = re.compile(
    r"(?P<tx>\d+) packets transmitted, (?P<rx>\d+) (?P<pk>packets )?received"
    r"(?P<extra>(?:, \+\d+ (?:duplicates|errors|corrupted))*)"
    r", (?P<loss>\d+(?:\.\d+)?)% packet loss(?:, time (?P<time>\d+)ms)?$"
)
_EXTRA_RE = re.compile(r"\+(\d+) (duplicates|errors|corrupted)")
_RTT_RE = re.compile(
    r"(?P<label>rtt|round-trip) min/avg/max(?:/(?P<dev>mdev|stddev|std-dev))? = "
    r"(?P<min>\d+\.\d+)/(?P<avg>\d+\.\d+)/(?P<max>\d+\.\d+)(?:/(?P<mdev>\d+\.\d+))? ms"
    r"(?:, pipe \d+)?(?:, ipg/ewma \d+\.\d+/\d+\.\d+ ms)?$"
)
_NOISE_RE = re.compile(
    r"(?:|\^C|pipe \d+|PATTERN: 0x[0-9a-f]+|WARNING: pinging broadcast address|"
    r"(?:Warning|WARNING): .*)$"
)
_COMMA_DECIMAL_RE = re.compile(r"(?:=|\s|/)\d+,\d+(?:/|\s*ms)")
_SEQ_LIKE_RE = re.compile(r"(?:icmp_)?(?:seq|req)=\d+")


@dataclass
class PingStatistics:
    """The statistics footer exactly as ping printed it (None where a field was not printed)."""

    transmitted: int
    received: int
    duplicates: int = 0
    errors: int = 0
    corrupted: int = 0
    loss_pct: float = 0.0
    loss_text: str = "0"
    time_ms: int | None = None
    rtt_min_ms: float | None = None
    rtt_avg_ms: float | None = None
    rtt_max_ms: float | None = None
    rtt_dev_ms: float | None = None
    rtt_dev_label: str | None = None
    rtt_unit_ms: float = 0.001  # precision of the printed rtt figures
    rtt_label: str | None = None
    line: int | None = None


@dataclass
class PingResult:
    """Parsed ping output: one entry per reply (duplicates included) plus the tool's summary."""

    path: str
    format: str
    seq: np.ndarray
    rtt_ms: np.ndarray
    timestamp_s: np.ndarray
    duplicate: np.ndarray
    rtt_unit_ms: np.ndarray  # printed precision of each rtt (1 unit of its last digit)
    statistics: PingStatistics | None
    unanswered_seq: list[int] = field(default_factory=list)
    icmp_errors: list[tuple[int, str]] = field(default_factory=list)
    unparsed: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @cached_property
    def samples(self) -> pd.DataFrame:
        """One row per reply: seq, rtt_ms, timestamp_s (NaN when absent), duplicate."""
        import pandas as pd

        from iscsi_report.ingest.schemas import PING_SAMPLES

        df = pd.DataFrame(
            {
                "seq": self.seq.astype(np.int64),
                "rtt_ms": self.rtt_ms.astype(np.float64),
                "timestamp_s": self.timestamp_s.astype(np.float64),
                "duplicate": self.duplicate.astype(bool),
            }
        )
        return PING_SAMPLES.validate(df)


# -- vectorised helpers ---------------------------------------------------------------------


def _decimals(buf: np.ndarray, pos: np.ndarray, width: int) -> tuple[np.ndarray, ...]:
    """Parse the decimal token ([0-9]+(.[0-9]+)?) starting at each pos, vectorised.

    Returns (value, length, ok, unit): value is exactly what float() gives for the token
    (integer mantissa divided by a power of ten), length its byte count, ok whether a
    well-formed token was found within width bytes, unit 10**-decimals.  One column of bytes
    at a time (Horner's rule), so memory stays O(n) and no 2-D index array is built.
    """
    n = len(pos)
    active = np.ones(n, dtype=bool)
    length = np.zeros(n, dtype=np.int32)
    n_dots = np.zeros(n, dtype=np.int32)
    frac_digits = np.zeros(n, dtype=np.int32)
    mantissa = np.zeros(n, dtype=np.int64 if width > _INT32_DIGITS else np.int32)
    for j in range(width):
        byte = buf[pos + j]
        digit_value = byte - np.uint8(_ZERO)  # wraps for bytes below '0'
        is_digit = digit_value < 10
        is_digit &= active
        is_dot = byte == _DOT
        is_dot &= active
        active = is_digit | is_dot
        length += active
        n_dots += is_dot
        frac_digits += is_digit & (n_dots > 0)
        mantissa *= np.where(is_digit, 10, 1).astype(mantissa.dtype)
        mantissa += digit_value * is_digit
    ok = (length > 0) & ~active & ((n_dots == 0) | ((n_dots == 1) & (frac_digits > 0)))
    ok &= (length - n_dots <= _MAX_MANTISSA_DIGITS) & (length - n_dots > frac_digits)
    scale = _POW10_F[frac_digits]
    return mantissa / scale, length, ok, 1.0 / scale


def _equals(buf: np.ndarray, pos: np.ndarray, literal: bytes) -> np.ndarray:
    """Whether buf[pos:pos+len(literal)] == literal for every pos (buf is NUL-padded)."""
    same = np.ones(len(pos), dtype=bool)
    for j, byte in enumerate(literal):
        same &= buf[pos + j] == byte
    return same


def _digit_run(buf: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray:
    """Number of consecutive ASCII digits starting at each pos (at most width)."""
    run = np.zeros(len(pos), dtype=np.int32)
    active = np.ones(len(pos), dtype=bool)
    for j in range(width):
        active &= (buf[pos + j] - np.uint8(_ZERO)) < 10
        run += active
    return run


def _byte_at(buf: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """buf[pos] (buf is NUL-padded, so pos may run up to _PAD bytes past the text)."""
    return buf[pos]


@dataclass
class _FastReplies:
    line: np.ndarray  # 0-based line index of each recognised reply
    seq: np.ndarray
    rtt_ms: np.ndarray
    unit_ms: np.ndarray
    timestamp_s: np.ndarray
    duplicate: np.ndarray


def _scan_replies(buf: np.ndarray, nl: np.ndarray, size: int) -> _FastReplies:
    """Find the common reply lines ([ts] N bytes from X: icmp_seq=N ttl=N time=F ms[ (DUP!)])."""
    eq = np.flatnonzero(buf == _EQ)
    eq = eq[eq >= 5]
    before = [buf[eq - k] for k in range(1, 6)]
    is_time = (
        (before[3] == ord("t"))
        & (before[2] == ord("i"))
        & (before[1] == ord("m"))
        & (before[0] == ord("e"))
        & (before[4] == _SP)
    )
    is_seq = (before[2] == ord("s")) & (before[1] == ord("e")) & (before[0] == ord("q"))
    is_seq &= (before[3] == ord("_")) | (before[3] == _SP)
    tpos = eq[is_time] + 1
    spos = eq[is_seq] + 1
    line_starts = np.concatenate(([0], nl + 1))
    line_ends = np.concatenate((nl, [size]))
    tline = np.searchsorted(nl, tpos)
    # exactly one time= per line, and a seq= earlier on the same line
    single = np.ones(len(tpos), dtype=bool)
    if len(tpos) > 1:
        repeat = tline[1:] == tline[:-1]
        single[1:] &= ~repeat
        single[:-1] &= ~repeat
    if len(spos) == 0:
        spos = np.zeros(1, dtype=tpos.dtype)  # a seq= at offset 0 never pairs: 0 < any start
    k = np.maximum(np.searchsorted(spos, tpos) - 1, 0)
    # the last seq= before time= must lie on the same line (after that line's start)
    keep = single & (spos[k] > line_starts[tline]) & (spos[k] < tpos)
    tpos, tline, sp = tpos[keep], tline[keep], spos[k][keep]

    rtt, rlen, rok, unit = _decimals(buf, tpos, _RTT_WIDTH)
    seqv, slen, sok, _ = _decimals(buf, sp, _SEQ_WIDTH)
    sok &= _byte_at(buf, sp + slen) == _SP
    after = tpos + rlen
    rok &= _equals(buf, after, _MS_SUFFIX)
    ends = line_ends[tline]
    plain = after + len(_MS_SUFFIX) == ends
    dup = np.zeros(len(tpos), dtype=bool)
    other = np.flatnonzero(rok & ~plain)  # usually few: check the (DUP!) suffix only there
    dup[other] = _equals(buf, after[other] + len(_MS_SUFFIX), _DUP_SUFFIX) & (
        after[other] + len(_MS_SUFFIX) + len(_DUP_SUFFIX) == ends[other]
    )
    starts = line_starts[tline]
    has_ts = _byte_at(buf, starts) == _LBRACKET
    if has_ts.any():
        ts, tslen, tsok, _ = _decimals(buf, starts + 1, _TIMESTAMP_WIDTH)
        tsok &= _equals(buf, starts + 1 + tslen, b"] ")
        body = np.where(has_ts, starts + tslen + 3, starts)
    else:
        ts, tsok, body = np.full(len(starts), np.nan), has_ts, starts
    blen = _digit_run(buf, body, _BYTES_WIDTH)
    bok = (blen > 0) & _equals(buf, body + blen, _BYTES_FROM)
    ok = rok & sok & (plain | dup) & bok & (~has_ts | tsok) & (sp > body)
    return _FastReplies(
        line=tline[ok],
        seq=seqv[ok].astype(np.int64),
        rtt_ms=rtt[ok],
        unit_ms=unit[ok],
        timestamp_s=np.where(has_ts, ts, np.nan)[ok],
        duplicate=dup[ok],
    )


# -- careful path ---------------------------------------------------------------------------


@dataclass
class _Careful:
    replies: list[tuple[int, int, float, float, float, bool]] = field(default_factory=list)
    unanswered: list[int] = field(default_factory=list)
    timeouts: int = 0
    icmp_errors: list[tuple[int, str]] = field(default_factory=list)
    unparsed: list[tuple[int, str]] = field(default_factory=list)
    header: str | None = None
    stats_line: int | None = None
    blank_before_stats: bool = False
    transmitted: re.Match[str] | None = None
    transmitted_line: int = 0
    rtt: re.Match[str] | None = None
    rtt_line: int = 0
    short_seq_key: bool = False
    flags: set[str] = field(default_factory=set)


def _unit(token: str) -> float:
    """One unit of the last printed digit of a decimal token ("0.045" -> 0.001, "159" -> 1)."""
    return 10.0 ** -(len(token) - token.index(".") - 1) if "." in token else 1.0


def _careful_reply(m: re.Match[str], number: int, state: _Careful) -> None:
    """Record a reply matched by the slow regex (unusual suffixes, icmp_req=, no time=)."""
    flags = m["flags"] or ""
    if m["rtt"] is None:
        state.unparsed.append((number, m.string))
        return
    if m["seqkey"] == "seq" and "icmp_" not in m.string:
        state.short_seq_key = True
    state.flags.update(f.strip(" ()") for f in re.findall(r"\([A-Z !]+\)", flags))
    ts = float(m["ts"]) if m["ts"] else math.nan
    rtt = m["rtt"]
    state.replies.append((number, int(m["seq"]), float(rtt), _unit(rtt), ts, "DUP!" in flags))


def _careful_line(number: int, text: str, prev_blank: bool, state: _Careful) -> None:
    """Classify one line that the fast scanner did not take."""
    if _NOISE_RE.match(text):
        return
    if (m := _REPLY_RE.match(text)) is not None:
        _careful_reply(m, number, state)
    elif (m := _NO_ANSWER_RE.match(text)) is not None:
        state.unanswered.append(int(m["seq"]))
    elif (m := _TIMEOUT_RE.match(text)) is not None:
        state.unanswered.append(int(m["seq"]))
        state.timeouts += 1
    elif _ICMP_ERROR_RE.match(text) or _BSD_ERROR_RE.match(text):
        state.icmp_errors.append((number, text))
    elif _HEXDUMP_RE.match(text):
        return
    elif _HEADER_RE.match(text) and state.header is None:
        state.header = text
    elif _STATS_HEADER_RE.match(text):
        state.stats_line = number
        state.blank_before_stats = prev_blank
    elif (m := _TRANSMITTED_RE.match(text)) is not None:
        state.transmitted, state.transmitted_line = m, number
    elif (m := _RTT_RE.match(text)) is not None:
        state.rtt, state.rtt_line = m, number
    else:
        state.unparsed.append((number, text))


def _refuse_locale(path: str, unparsed: list[tuple[int, str]], n_replies: int) -> None:
    """Raise when not-understood lines look like ping output in another locale/language."""
    for number, text in unparsed:
        if _COMMA_DECIMAL_RE.search(text):
            raise IngestError(
                path,
                f"number with a decimal comma ({text.strip()[:60]!r}): ping ran in a non-C "
                "locale; re-run it with LC_ALL=C",
                line=number,
            )
    if n_replies == 0:
        for number, text in unparsed:
            if _SEQ_LIKE_RE.search(text):
                raise IngestError(
                    path,
                    f"reply-like line not in any known ping format ({text.strip()[:60]!r}); "
                    "translated output? re-run ping with LC_ALL=C",
                    line=number,
                )


def _statistics(state: _Careful) -> PingStatistics | None:
    """Build PingStatistics from the matched footer lines (None when there is no footer)."""
    m = state.transmitted
    if m is None:
        return None
    extra = {kind: int(n) for n, kind in _EXTRA_RE.findall(m["extra"] or "")}
    stats = PingStatistics(
        transmitted=int(m["tx"]),
        received=int(m["rx"]),
        duplicates=extra.get("duplicates", 0),
        errors=extra.get("errors", 0),
        corrupted=extra.get("corrupted", 0),
        loss_pct=float(m["loss"]),
        loss_text=m["loss"],
        time_ms=int(m["time"]) if m["time"] else None,
        line=state.transmitted_line,
    )
    if (r := state.rtt) is not None:
        stats.rtt_min_ms, stats.rtt_avg_ms = float(r["min"]), float(r["avg"])
        stats.rtt_max_ms = float(r["max"])
        stats.rtt_dev_ms = float(r["mdev"]) if r["mdev"] else None
        stats.rtt_dev_label, stats.rtt_label = r["dev"], r["label"]
        stats.rtt_unit_ms = _unit(r["min"])
    return stats


def _detect_format(state: _Careful, fast_count: int) -> str:
    """Name the ping implementation from the footer, header and reply wording."""
    m = state.transmitted
    rtt = state.rtt
    if state.short_seq_key or (rtt is not None and rtt["dev"] is None):
        return "busybox"
    if m is not None and not m["pk"]:
        return "iputils"
    header = state.header or ""
    if m is None:
        if "bytes of data" in header or re.match(r"PING \S+\(", header):
            return "iputils"
        return "bsd" if state.timeouts or header.startswith("PING6(") else "iputils"
    if "." in m["loss"] or header.startswith("PING6(") or state.timeouts:
        return "bsd"
    if rtt is not None and rtt["dev"] == "std-dev":
        return "bsd"
    return "bsd" if state.blank_before_stats else "inetutils"


# -- assembling -----------------------------------------------------------------------------


def _lines_for_careful_path(data: bytes, nl: np.ndarray, fast_lines: np.ndarray) -> list[int]:
    """Indexes of non-empty lines that the fast scanner did not take."""
    n_lines = len(nl) + 1
    taken = np.zeros(n_lines, dtype=bool)
    taken[fast_lines] = True
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [len(data)]))
    taken |= starts == ends
    return np.flatnonzero(~taken).tolist()


def _cross_check(result: PingResult) -> None:
    """Compare the printed statistics with the samples; disagreements go to warnings."""
    st = result.statistics
    w = result.warnings
    if st is None:
        w.append("no statistics footer (ping interrupted?): only the samples are summarized")
        return
    n = len(result.rtt_ms)
    n_dup = int(result.duplicate.sum())
    if n == 0 and st.received > 0:
        w.append(
            f"no per-reply lines but {st.received} replies counted (ping -q?): rtt figures "
            "are ping's own min/avg/max only"
        )
    elif n != st.received + st.duplicates:
        w.append(
            f"{n} reply lines but ping counted {st.received} received + {st.duplicates} "
            "duplicates"
        )
    elif n_dup != st.duplicates:
        w.append(f"{n_dup} replies marked duplicate but ping counted {st.duplicates}")
    if st.transmitted > 0:
        computed = 100.0 * (st.transmitted - st.received) / st.transmitted
        tol = _unit(st.loss_text)
        if abs(computed - st.loss_pct) > tol:
            w.append(f"printed loss {st.loss_text}% but {computed:.4g}% from the counts")
    if n and st.rtt_min_ms is not None:
        _check_rtt(result, st)


def _check_rtt(result: PingResult, st: PingStatistics) -> None:
    """min/avg/max (and mdev) printed vs computed, within printed precision of both."""
    rtt = result.rtt_ms
    tol = float(result.rtt_unit_ms.max()) + st.rtt_unit_ms + 1e-9
    pairs = [
        ("min", st.rtt_min_ms, float(rtt.min())),
        ("avg", st.rtt_avg_ms, float(rtt.mean())),
        ("max", st.rtt_max_ms, float(rtt.max())),
    ]
    if st.rtt_dev_ms is not None:
        pstd = float(rtt.std())
        if result.format == "inetutils" and st.rtt_dev_ms == 0.0 and pstd > tol:
            result.warnings.append(
                "inetutils printed stddev 0.000 (a known inetutils bug); the standard "
                "deviation is recomputed from the samples"
            )
        else:
            pairs.append((st.rtt_dev_label or "mdev", st.rtt_dev_ms, pstd))
    for name, printed, computed in pairs:
        if printed is not None and abs(printed - computed) > tol:
            result.warnings.append(
                f"printed rtt {name} {printed} ms but {computed:.6g} ms from the samples"
            )


def _merge(fast: _FastReplies, state: _Careful) -> dict[str, np.ndarray]:
    """Combine fast-path and careful-path replies in file order."""
    if not state.replies:
        return {
            "seq": fast.seq,
            "rtt_ms": fast.rtt_ms,
            "unit": fast.unit_ms,
            "timestamp_s": fast.timestamp_s,
            "duplicate": fast.duplicate,
        }
    slow = np.array(state.replies, dtype=np.float64).reshape(-1, 6)
    line = np.concatenate((fast.line, slow[:, 0].astype(np.int64) - 1))
    order = np.argsort(line, kind="stable")
    return {
        "seq": np.concatenate((fast.seq, slow[:, 1].astype(np.int64)))[order],
        "rtt_ms": np.concatenate((fast.rtt_ms, slow[:, 2]))[order],
        "unit": np.concatenate((fast.unit_ms, slow[:, 3]))[order],
        "timestamp_s": np.concatenate((fast.timestamp_s, slow[:, 4]))[order],
        "duplicate": np.concatenate((fast.duplicate, slow[:, 5].astype(bool)))[order],
    }


def parse_text(text: str, path: str | Path = "<text>") -> PingResult:
    """Parse ping output given as text (see :func:`parse`)."""
    path = str(path)
    data = text.encode("utf-8")
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == _NL)
    fast = _scan_replies(np.concatenate((buf, np.zeros(_PAD, dtype=np.uint8))), nl, len(buf))
    state = _Careful()
    lines = data.split(b"\n") if len(fast.line) < 1000 else None
    prev_blank = False
    for idx in _lines_for_careful_path(data, nl, fast.line):
        raw = lines[idx] if lines is not None else _line_bytes(data, nl, idx)
        prev_blank = idx > 0 and _is_blank(data, nl, idx - 1)
        _careful_line(idx + 1, raw.decode("utf-8"), prev_blank, state)
    n_replies = len(fast.line) + len(state.replies)
    _refuse_locale(path, state.unparsed, n_replies)
    if n_replies == 0 and state.transmitted is None and state.header is None:
        raise IngestError(
            path,
            "no ping output found: expected a 'PING host' header, reply lines "
            "('N bytes from ...: icmp_seq=N ... time=X ms') or a statistics footer",
            line=state.unparsed[0][0] if state.unparsed else None,
        )
    if n_replies == 0 and state.transmitted is None:
        raise IngestError(path, "ping output has neither replies nor a statistics footer")
    cols = _merge(fast, state)
    result = PingResult(
        path=path,
        format=_detect_format(state, len(fast.line)),
        seq=cols["seq"],
        rtt_ms=cols["rtt_ms"],
        timestamp_s=cols["timestamp_s"],
        duplicate=cols["duplicate"],
        rtt_unit_ms=cols["unit"],
        statistics=_statistics(state),
        unanswered_seq=state.unanswered,
        icmp_errors=state.icmp_errors,
        unparsed=state.unparsed,
    )
    _mark_unflagged_duplicates(result)
    _cross_check(result)
    if result.unparsed:
        first = result.unparsed[0]
        result.warnings.append(
            f"{len(result.unparsed)} line(s) not understood, first at line {first[0]}: "
            f"{first[1][:80]!r}"
        )
    return result


def _line_bytes(data: bytes, nl: np.ndarray, idx: int) -> bytes:
    """Bytes of 0-based line idx (without its newline)."""
    start = int(nl[idx - 1]) + 1 if idx > 0 else 0
    end = int(nl[idx]) if idx < len(nl) else len(data)
    return data[start:end]


def _is_blank(data: bytes, nl: np.ndarray, idx: int) -> bool:
    """Whether 0-based line idx is empty."""
    return not _line_bytes(data, nl, idx).strip()


def _mark_unflagged_duplicates(result: PingResult) -> None:
    """BSD ping may count duplicates without printing (DUP!): flag repeated seqs instead."""
    st = result.statistics
    if st is None or st.duplicates == 0 or result.duplicate.any():
        return
    seen = np.zeros(len(result.seq), dtype=bool)
    _, first = np.unique(result.seq, return_index=True)
    seen[first] = True
    result.duplicate = ~seen
    result.warnings.append(
        "duplicates counted by ping but not marked (DUP!): replies repeating an earlier "
        "icmp_seq are flagged as duplicates"
    )


def parse(path: str | Path) -> PingResult:
    """Read and parse a ping log (plain, .gz or .xz) through textio.read_text."""
    return parse_text(read_text(path), path)


_SNIFF_RE = re.compile(
    r"^(?:\[\d+\.\d+\] )?(?:PING[ 6]|\d+ bytes from .*(?:icmp_)?(?:seq|req)=\d+|"
    r"--- .+ ping6? statistics ---|no answer yet for icmp_seq=|Request timeout for icmp_seq)",
    re.MULTILINE,
)


def sniff(text: str) -> str | None:
    """Return the ping format name if text looks like ping output (from its first 64 KiB)."""
    head = text[:65536]
    if not _SNIFF_RE.search(head):
        return None
    try:
        return parse_text(head).format
    except IngestError:
        return None


def _quantiles(values: np.ndarray) -> dict[str, float | None]:
    """min, mean, p50, p99, max, sstdev; percentiles as GNU datamash perc (numpy 'linear')."""
    if len(values) == 0:
        return dict.fromkeys(("min", "mean", "p50", "p99", "max", "sstdev"))
    p50, p99 = np.percentile(values, [50, 99], method="linear")
    return {
        "min": float(values.min()),
        "mean": float(values.mean()),
        "p50": float(p50),
        "p99": float(p99),
        "max": float(values.max()),
        "sstdev": float(values.std(ddof=1)) if len(values) > 1 else None,
    }


def summary(result: PingResult) -> dict[str, Any]:
    """JSON-ready per-file summary (CLI contract keys: samples, transmitted, ..., rtt_ms)."""
    st = result.statistics
    rtt = _quantiles(result.rtt_ms)
    if len(result.rtt_ms) == 0 and st is not None and st.rtt_min_ms is not None:
        rtt.update(min=st.rtt_min_ms, mean=st.rtt_avg_ms, max=st.rtt_max_ms)
    return {
        "format": result.format,
        "samples": len(result.rtt_ms),
        "transmitted": st.transmitted if st else None,
        "received": st.received if st else None,
        "loss_pct": st.loss_pct if st else None,
        "duplicates": st.duplicates if st else int(result.duplicate.sum()),
        "errors": st.errors if st else len(result.icmp_errors),
        "rtt_ms": rtt,
        "printed_rtt_ms": _printed_rtt(st),
        "unanswered": len(result.unanswered_seq),
        "unparsed_lines": len(result.unparsed),
        "warnings": list(result.warnings),
    }


def _printed_rtt(st: PingStatistics | None) -> dict[str, float | None] | None:
    """ping's own rtt line as printed (None when it printed none)."""
    if st is None or st.rtt_min_ms is None:
        return None
    return {"min": st.rtt_min_ms, "avg": st.rtt_avg_ms, "max": st.rtt_max_ms, "dev": st.rtt_dev_ms}
