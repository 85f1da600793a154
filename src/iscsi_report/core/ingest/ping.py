"""Parser for ping output: Linux iputils, GNU inetutils, BusyBox and macOS/FreeBSD.

The common reply line is extracted with vectorised numpy byte operations over the whole file
(no Python object per line), so a 450,000-line log parses in a fraction of a second; where
``make`` has built it, the same scan compiled from C (``native/pingscan.c``, equal to the numpy
one to the bit) does it five times faster. Every other line goes through a careful per-line path
and is either understood or reported in ``unparsed``. The tool's own statistics footer is parsed
and cross-checked against the samples; disagreements become ``warnings``.
"""

from __future__ import annotations

import ipaddress
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest.textio import first_lines, read_text

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pandas as pd

FORMATS = ("iputils", "inetutils", "busybox", "bsd")

# byte values and sizes used by the vectorised scanner
_NL, _EQ, _LBRACKET, _DOT, _ZERO = (ord(c) for c in "\n=[.0")
_SEPARATORS = (ord(":"), ord(","))  # "from HOST: icmp_seq" (iputils) or "from HOST, icmp_seq"
_WORD_BYTES = 8  # tokens and literals are read as little-endian uint64 words (SWAR)
_BLOCK_BYTES = 1 << 20  # the text is scanned in blocks of whole lines: temporaries stay in cache
_PAD = 32  # NUL bytes around each block: every fixed-width read of a candidate line stays inside
_MIN_REPLY_BYTES = len("1 bytes from a: seq=1 time=1 ms")
_TIMESTAMP_WIDTH = 24  # "[1595037214.261953]" epoch seconds with microseconds
_MAX_MANTISSA_DIGITS = 18  # an int64 mantissa cannot overflow
_EXACT_MANTISSA_LIMIT = 2**53  # below it, mantissa / 10**k is correctly rounded, as float() is
_POW10_F = np.power(10.0, np.arange(_TIMESTAMP_WIDTH + 2))
_ONES = 0x0101010101010101  # 1 in every byte of a word
_HIGH_BITS = 0x80 * _ONES
_LOW_7_BITS = 0x7F * _ONES
_ASCII_ZEROS = ord("0") * _ONES
_DOTS = ord(".") * _ONES
_HIGH_NIBBLES = 0xF0 * _ONES
_LOW_NIBBLES = 0x0F * _ONES
_DIGIT_CARRY = 0x06 * _ONES  # a low nibble above 9 carries into the high nibble when 6 is added
_ALL_ONES = np.uint64(2**64 - 1)
_SOURCE_WORDS = 2  # a reply's source is compared in its first 16 bytes (an IPv4 address fits)
_MAX_SUSPECT_LINES = 1000  # beyond this many lines to check one by one, one regex pass is quicker
# SWAR digit combination: 8 digits (first digit in the lowest byte) -> pairs -> quads -> value
_PAIR_MUL, _QUAD_MUL, _OCTET_MUL = 10 * 2**8 + 1, 100 * 2**16 + 1, 10_000 * 2**32 + 1
_PAIR_MASK, _QUAD_MASK = 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF
_MAX_SEQ = 2**63 - 1  # a sequence number beyond int64 is not ping's (it prints 16 bits)
MAX_RTT_MS = 86_400_000.0  # a reply a day late is no round trip ping waits for
# -D timestamps come from the system clock, which NTP may step back a little; more is corrupt.
TIMESTAMP_BACKSTEP_TOLERANCE_S = 1.0
_MS_SUFFIX = b" ms"
_DUP_SUFFIX = b" (DUP!)"
_BYTES_FROM = b" bytes from "

# -- careful per-line path ------------------------------------------------------------------
_TS = r"(?:\[(?P<ts>\d+(?:\.\d+)?)\] )?"
_REPLY_RE = re.compile(
    _TS + r"\d+ bytes from (?P<src>.+?)[:,] (?:icmp_)?(?P<seqkey>seq|req)=(?P<seq>\d+)"
    r"(?: (?:ttl|hlim)=\d+)?(?: time=(?P<rtt>\d+(?:\.\d+)?) ms)?(?P<flags>(?: \([A-Z !]+\))*)$",
    re.ASCII,
)
_NO_ANSWER_RE = re.compile(_TS + r"no answer yet for icmp_seq=(?P<seq>\d+)$", re.ASCII)
_TIMEOUT_RE = re.compile(r"Request timeout for icmp_seq[= ](?P<seq>\d+)$", re.ASCII)
_ICMP_ERROR_RE = re.compile(
    _TS + r"From \S+(?: \(\S+\))?:? (?:icmp_seq=(?P<seq>\d+) )?(?P<what>[A-Z].*)$", re.ASCII
)
_BSD_ERROR_RE = re.compile(r"\d+ bytes from .+: (?P<what>[A-Z][A-Za-z ]+)$", re.ASCII)
_HEXDUMP_RE = re.compile(r"(?:Vr HL TOS .*|(?: +[0-9a-f]+){9,}.*)$")
_HEADER_RE = re.compile(r"(?:PING |PING6\().+")
_STATS_HEADER_RE = re.compile(r"--- (?P<host>.+) ping6? statistics ---$")
_TRANSMITTED_RE = re.compile(
    r"(?P<tx>\d+) packets transmitted, (?P<rx>\d+) (?P<pk>packets )?received"
    r"(?P<extra>(?:, \+\d+ (?:duplicates|errors|corrupted))*)"
    r", (?P<loss>\d+(?:\.\d+)?)% packet loss(?:, time (?P<time>\d+)ms)?$",
    re.ASCII,
)
_EXTRA_RE = re.compile(r"\+(\d+) (duplicates|errors|corrupted)", re.ASCII)
_RTT_RE = re.compile(
    r"(?P<label>rtt|round-trip) min/avg/max(?:/(?P<dev>mdev|stddev|std-dev))? = "
    r"(?P<min>\d+\.\d+)/(?P<avg>\d+\.\d+)/(?P<max>\d+\.\d+)(?:/(?P<mdev>\d+\.\d+))? ms"
    r"(?:, pipe \d+)?(?:, ipg/ewma \d+\.\d+/\d+\.\d+ ms)?$",
    re.ASCII,
)
_NOISE_RE = re.compile(
    r"(?:|\^C|pipe \d+|PATTERN: 0x[0-9a-f]+|WARNING: pinging broadcast address|"
    r"(?:Warning|WARNING): .*)$"
)
_COMMA_DECIMAL_RE = re.compile(r"(?:=|\s|/)\d+,\d+(?:/|\s*ms)", re.ASCII)
_SEQ_LIKE_RE = re.compile(r"(?:icmp_)?(?:seq|req)=\S+| bytes from ", re.ASCII)
# The pinged address in the header: "PING host (1.2.3.4) 56(84)", "PING ::1(::1) 56 data bytes",
# BSD "PING6(56=40+8+8 bytes) ::1 --> ::1".
_HEADER_ADDRESS_RE = re.compile(
    r"PING (?P<name>\S+?) ?\((?P<ip>[^)\s]+)\)|PING6\([^)]*\) \S+ --> (?P<ip6>\S+)"
)
# The same, tolerant of newer iputils' IPv6 form "PING host(host (::1)) 56 data bytes", anchored at
# the line start (for :func:`destination`).
_DESTINATION_RE = re.compile(
    r"PING (?P<name>[^\s(]+) ?\((?:[^\s()]+ \()?(?P<ip>[^)\s]+)\)|PING6\([^)]*\) \S+ --> (?P<ip6>\S+)"
)
HEADER_SEARCH_LINES = 5  # ping's header is its first line; a few more allow a shell prompt or a note
_REPLY_HEAD_RE = re.compile(r"(?:\[[\d.]+\] )?\d+", re.ASCII)  # what precedes " bytes from "
_WINDOWS_RE = re.compile(
    r"^(?:Pinging \S+ .*with \d+ bytes of data:|Reply from \S+: bytes=\d+ time[=<]\d+ms TTL=\d+|"
    r"Ping statistics for \S+:)\s*$",
    re.MULTILINE | re.ASCII,
)
# Reply sequence keys of the different ping implementations: BusyBox "seq=", iputils and
# inetutils "icmp_seq=", old iputils "icmp_req=".
_SEQ_KEY_RE = re.compile(
    r"^(?:\[[\d.]+\] )?\d+ bytes from [^\n]*?[:,] (?P<key>icmp_seq|icmp_req|seq)=", re.M | re.ASCII
)


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

        from iscsi_report.core.ingest.schemas import PING_SAMPLES, validate

        df = pd.DataFrame(
            {
                "seq": self.seq.astype(np.int64),
                "rtt_ms": self.rtt_ms.astype(np.float64),
                "timestamp_s": self.timestamp_s.astype(np.float64),
                "duplicate": self.duplicate.astype(bool),
            }
        )
        return validate(PING_SAMPLES, df)  # pandera's own pass only when the fast check is unsure


# -- vectorised fast path -------------------------------------------------------------------
# It takes exactly the reply lines of this shape (ASCII digits; tokens of at most 8 bytes):
#     [TS] N bytes from SRC: icmp_seq=N ttl=N time=F ms[ (DUP!)]
# with ", " for ": ", " seq=" for " icmp_seq=", " hlim=" for " ttl=" or no ttl at all: a strict
# subset of _REPLY_RE, so it yields the values the careful path would.  A line is located by
# its newline and its '=' signs (2 or 3 of them), then read backwards from its end in 8-byte
# little-endian words (SWAR): literal checks and digit parsing take a few array operations
# per token instead of one per byte.  The text goes through in blocks of about _BLOCK_BYTES
# (whole lines, copied into a NUL-padded scratch buffer), so no temporary array is file-sized.


def _word_view(buf: np.ndarray) -> np.ndarray:
    """Unaligned little-endian uint64 view: element i holds buf[i:i+8] (no copy)."""
    return np.ndarray((len(buf) - _WORD_BYTES + 1,), dtype="<u8", buffer=buf, strides=(1,))


def _words_at(words: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The 8-byte words starting at pos (the block's padding keeps pos within the view)."""
    picked: np.ndarray = words[pos]
    return picked


def _blocks(data: str | bytes) -> Iterator[tuple[int, int]]:
    """(start, end) ranges of about _BLOCK_BYTES each, made of whole lines."""
    newline = "\n" if isinstance(data, str) else b"\n"
    start = 0
    while start < len(data):
        end = len(data)
        if start + _BLOCK_BYTES < len(data):
            # the arg-type ignores below: newline is str when data is str and bytes when it is bytes
            end = data.rfind(newline, start, start + _BLOCK_BYTES) + 1  # type: ignore[arg-type]
            if end <= start:  # a line longer than a block: take it whole
                end = data.find(newline, start + _BLOCK_BYTES) + 1 or len(data)  # type: ignore[arg-type]
        yield start, end
        start = end


def _padded_block(data: str | bytes, start: int, end: int, scratch: np.ndarray) -> np.ndarray:
    """data[start:end] as uint8 with _PAD NUL bytes on both sides (in scratch when it fits)."""
    size = end - start + 2 * _PAD
    if len(scratch) < size:
        scratch = np.zeros(size, dtype=np.uint8)
    block = scratch[:size]
    chunk = data[start:end]
    block[_PAD:-_PAD] = np.frombuffer(chunk.encode("ascii") if isinstance(chunk, str) else chunk, np.uint8)
    block[-_PAD:] = 0
    return block


def _zero_bytes(x: np.ndarray) -> np.ndarray:
    """0x80 in every zero byte of each word, 0 elsewhere (exact: no false positives)."""
    marks: np.ndarray = ~(((x & _LOW_7_BITS) + _LOW_7_BITS) | x | _LOW_7_BITS)
    return marks


def _digit_bytes(x: np.ndarray) -> np.ndarray:
    """0x80 in every byte of each word that is an ASCII digit, 0 elsewhere."""
    high_is_3 = _zero_bytes((x & _HIGH_NIBBLES) ^ _ASCII_ZEROS)
    low_le_9 = _zero_bytes(((x & _LOW_NIBBLES) + _DIGIT_CARRY) & _HIGH_NIBBLES)
    marks: np.ndarray = high_is_3 & low_le_9
    return marks


def _lowest_marked_byte(marks: np.ndarray) -> np.ndarray:
    """Index (0-7) of the lowest byte holding 0x80 in each word; -1 where none does."""
    lowest = marks & (~marks + np.uint64(1))  # isolate the lowest set bit: 2**(8*i+7) or 0
    _, exponent = np.frexp(lowest.astype(np.float64))  # exact: a power of two is 0.5 * 2**exp
    return (exponent - 8) >> 3


def _top_bytes_mask(length: np.ndarray) -> np.ndarray:
    """Word mask selecting the top length bytes (length clipped to 1..8)."""
    length = np.minimum(np.maximum(length, 1), _WORD_BYTES)  # np.clip checks its bounds: slower
    return np.left_shift(_ALL_ONES, (8 * (_WORD_BYTES - length)).astype(np.uint64))


def _swar_value(x: np.ndarray) -> np.ndarray:
    """Integer value of 8 ASCII digits per word (first digit in the lowest byte)."""
    x = ((x & _LOW_NIBBLES) * _PAIR_MUL) >> 8
    x = ((x & _PAIR_MASK) * _QUAD_MUL) >> 16
    value: np.ndarray = ((x & _QUAD_MASK) * _OCTET_MUL) >> 32
    return value


def _word_ends_with(word: np.ndarray, literal: bytes) -> np.ndarray:
    """Whether the top len(literal) <= 8 bytes of each word equal literal."""
    equal: np.ndarray = (word >> (8 * (_WORD_BYTES - len(literal)))) == int.from_bytes(literal, "little")
    return equal


def _ends_with(words: np.ndarray, end: np.ndarray, literal: bytes) -> np.ndarray:
    """Whether the bytes just before each end equal literal (any length, 8 bytes per step)."""
    same = np.ones(len(end), dtype=bool)
    while literal:
        chunk, literal = literal[-_WORD_BYTES:], literal[:-_WORD_BYTES]
        same &= _word_ends_with(_words_at(words, end - _WORD_BYTES), chunk)
        end = end - len(chunk)
    return same


def _integer_before(words: np.ndarray, end: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, ...]:
    """(value, ok) of the all-digit token of length 1..8 bytes ending at each end."""
    keep = _top_bytes_mask(length)
    x = (_words_at(words, end - _WORD_BYTES) & keep) | (_ASCII_ZEROS & ~keep)
    ok = (_digit_bytes(x) == _HIGH_BITS) & (length >= 1) & (length <= _WORD_BYTES)
    return _swar_value(x), ok


def _decimal_before(words: np.ndarray, end: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, ...]:
    """(value, unit, ok) of the token [0-9]+(.[0-9]+)? of 1..8 bytes ending at each end.

    value equals float() of the token: an integer mantissa below 10**8 divided by a power of
    ten, both exact doubles, so the quotient is correctly rounded; unit is 10**-decimals.
    """
    word = _words_at(words, end - _WORD_BYTES)
    keep = _top_bytes_mask(length)
    dots = _zero_bytes(word ^ _DOTS) & keep
    dot = _lowest_marked_byte(dots)  # byte index of the dot, -1 without one
    has_dot = dot >= 0
    below = np.left_shift(np.uint64(1), (8 * np.maximum(dot, 0)).astype(np.uint64)) - np.uint64(1)
    closed = ((word & below) << np.uint64(8)) | (word & ~(below | (below << np.uint64(8)) | 0xFF))
    mantissa_word = np.where(has_dot, closed, word)
    n_digits = length - has_dot
    keep = _top_bytes_mask(n_digits)
    x = (mantissa_word & keep) | (_ASCII_ZEROS & ~keep)
    ok = (_digit_bytes(x) == _HIGH_BITS) & (n_digits >= 1) & (length <= _WORD_BYTES)
    ok &= (dots & (dots - np.uint64(1))) == 0  # at most one dot
    first = _WORD_BYTES - length  # byte index of the token's first character
    ok &= ~has_dot | ((dot > first) & (dot < _WORD_BYTES - 1))  # digits on both sides of it
    decimals = np.where(has_dot, _WORD_BYTES - 1 - dot, 0)
    scale = _POW10_F[decimals]
    return _swar_value(x) / scale, 1.0 / scale, ok


def _decimals(buf: np.ndarray, pos: np.ndarray, width: int) -> tuple[np.ndarray, ...]:
    """Parse the decimal token ([0-9]+(.[0-9]+)?) starting at each pos (ping -D timestamps).

    Returns (value, length, ok, unit): value is exactly what float() gives for the token
    (integer mantissa divided by a power of ten), length its byte count, ok whether a
    well-formed token was found within width bytes, unit 10**-decimals.  One column of bytes
    at a time (Horner's rule); buf must hold width bytes after every pos.
    """
    n = len(pos)
    active = np.ones(n, dtype=bool)
    length = np.zeros(n, dtype=np.int32)
    n_dots = np.zeros(n, dtype=np.int32)
    frac_digits = np.zeros(n, dtype=np.int32)
    mantissa = np.zeros(n, dtype=np.int64)
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
    ok &= mantissa < _EXACT_MANTISSA_LIMIT  # "1595037214.261953" (ping -D) has 16 digits
    scale = _POW10_F[frac_digits]
    return mantissa / scale, length, ok, 1.0 / scale


@dataclass
class _FastReplies:
    """Replies taken by the fast path, in text order (one array element per reply)."""

    line: np.ndarray  # 0-based line index of each recognised reply
    seq: np.ndarray
    rtt_ms: np.ndarray
    unit_ms: np.ndarray
    timestamp_s: np.ndarray
    duplicate: np.ndarray
    short_seq_key: bool = False  # some reply said "seq=" rather than "icmp_seq=" (BusyBox)


@dataclass
class _Sources:
    """Where each taken reply's source (between " bytes from " and ': ') starts, its length, and
    the two words from its start (its bytes and what follows: equal words and lengths up to 16
    bytes mean equal sources)."""

    start: np.ndarray
    length: np.ndarray
    words: tuple[np.ndarray, np.ndarray]


@dataclass
class _Lines:
    """Lines of a padded block: starts[i]:ends[i] is its line i without the newline."""

    starts: np.ndarray
    ends: np.ndarray
    equals: np.ndarray  # number of '=' signs on each line
    last_event: np.ndarray  # index in the event array of each line's end


def _split_lines(block: np.ndarray, final: bool) -> tuple[_Lines, np.ndarray]:
    """Line boundaries and '=' counts of a padded block, from its newline/'=' positions (events).

    A block that is not the text's last ends with a newline, after which it has no line.
    """
    text = block[_PAD:-_PAD]
    hit = text == _NL
    hit |= text == _EQ
    events = np.flatnonzero(hit) + _PAD
    is_nl = block[events] == _NL
    nl = events[is_nl]
    last_event = np.flatnonzero(is_nl)
    ends = nl
    if final:  # the text's last line runs to its end (it is empty after a final newline)
        last_event = np.append(last_event, len(events))
        ends = np.append(nl, len(block) - _PAD)
    equals = np.diff(last_event, prepend=-1) - 1
    starts = np.concatenate(([_PAD], ends[:-1] + 1))
    return _Lines(starts, ends, equals, last_event), events


def _suffix(words: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rtt token end, duplicate, ok) from the line end: ' ms' or ' ms (DUP!)' closes a reply."""
    plain = _ends_with(words, end, _MS_SUFFIX)
    dup = np.zeros(len(end), dtype=bool)
    other = np.flatnonzero(~plain)  # usually few: check the (DUP!) suffix only there
    dup[other] = _ends_with(words, end[other], _MS_SUFFIX + _DUP_SUFFIX)
    rtt_end = end - len(_MS_SUFFIX) - len(_DUP_SUFFIX) * dup
    return rtt_end, dup, plain | dup


def _seq_key(words: np.ndarray, buf: np.ndarray, seq_eq: np.ndarray) -> tuple[np.ndarray, ...]:
    """(separator position, short key, ok): ': icmp_seq=' or ': seq=' (',' for ':') before '='."""
    key = _words_at(words, seq_eq + 1 - _WORD_BYTES)  # both keys end in this word
    long_key = _word_ends_with(key, b"cmp_seq=") & _ends_with(words, seq_eq - 7, b" i")
    short_key = _word_ends_with(key, b" seq=")
    separator = seq_eq - np.where(long_key, len(b": icmp_seq"), len(b": seq"))
    sep_byte = buf[separator]
    ok = (long_key | short_key) & ((sep_byte == _SEPARATORS[0]) | (sep_byte == _SEPARATORS[1]))
    return separator, short_key, ok


def _seq_end(
    words: np.ndarray, ttl_eq: np.ndarray, time_key: np.ndarray, has_ttl: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(end of the seq token, ok): before ' ttl=N'/' hlim=N' when present, else before ' time='."""
    key = _words_at(words, ttl_eq + 1 - _WORD_BYTES)
    ttl = _word_ends_with(key, b" ttl=")
    hlim = _word_ends_with(key, b" hlim=")
    _, ttl_ok = _integer_before(words, time_key, time_key - ttl_eq - 1)
    key_start = ttl_eq - np.where(ttl, len(b" ttl"), len(b" hlim"))
    seq_end = np.where(has_ttl, key_start, time_key)
    return seq_end, ~has_ttl | ((ttl | hlim) & ttl_ok)


def _line_prefix(buf: np.ndarray, words: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, ...]:
    """(timestamp, end of ' bytes from ', ok) for '[TS] N bytes from ' at each line start."""
    n = len(start)
    timestamp = np.full(n, np.nan)
    body = start.copy()
    ok = np.ones(n, dtype=bool)
    stamped = np.flatnonzero(buf[start] == _LBRACKET)  # ping -D; buf holds 24 more bytes
    if len(stamped):
        ts, ts_len, ts_ok, _ = _decimals(buf, start[stamped] + 1, _TIMESTAMP_WIDTH)
        after = start[stamped] + 1 + ts_len
        ts_ok &= _ends_with(words, after + len(b"] "), b"] ")
        timestamp[stamped] = ts
        body[stamped] = after + len(b"] ")
        ok[stamped] = ts_ok
    count_len = _lowest_marked_byte(~_digit_bytes(_words_at(words, body)) & _HIGH_BITS)
    after_from = body + count_len + len(_BYTES_FROM)
    ok &= (count_len >= 1) & _ends_with(words, after_from, _BYTES_FROM)
    return timestamp, after_from, ok


def _block_replies(buf: np.ndarray, lines: _Lines, events: np.ndarray) -> tuple[_FastReplies, _Sources]:
    """Recognise the common reply lines of a padded block and parse their numbers.

    Candidates have 2 or 3 '=' and at least _MIN_REPLY_BYTES, so with _PAD bytes around the
    block every word read below (at most 16 bytes before '=' or past a line) stays inside it.
    """
    words = _word_view(buf)
    cand = np.flatnonzero(
        ((lines.equals == 2) | (lines.equals == 3)) & (lines.ends - lines.starts >= _MIN_REPLY_BYTES)
    )
    start, end, n_eq, last = lines.starts[cand], lines.ends[cand], lines.equals[cand], lines.last_event[cand]
    time_eq, mid_eq, seq_eq = events[last - 1], events[last - 2], events[last - n_eq]
    rtt_end, dup, ok = _suffix(words, end)
    rtt, unit, rtt_ok = _decimal_before(words, rtt_end, rtt_end - time_eq - 1)
    ok &= rtt_ok & _ends_with(words, time_eq + 1, b" time=")
    time_key = time_eq - len(b" time")
    seq_end, ttl_ok = _seq_end(words, mid_eq, time_key, n_eq == 3)
    seq, seq_ok = _integer_before(words, seq_end, seq_end - seq_eq - 1)
    ok &= ttl_ok & seq_ok
    separator, short_key, key_ok = _seq_key(words, buf, seq_eq)
    ok &= key_ok
    timestamp, src_start, prefix_ok = _line_prefix(buf, words, start)
    ok &= prefix_ok & (src_start < separator)  # SRC is not empty
    src = src_start[ok]
    # a taken reply has ': seq=N time=X ms' or more (over 16 bytes) after its source: both
    # words lie in its line
    pair = (_words_at(words, src), _words_at(words, src + _WORD_BYTES))
    sources = _Sources(src, separator[ok] - src, pair)
    return _FastReplies(
        line=cand[ok],
        seq=seq[ok].astype(np.int64),
        rtt_ms=rtt[ok],
        unit_ms=unit[ok],
        timestamp_s=timestamp[ok],
        duplicate=dup[ok],
        short_seq_key=bool((short_key & ok).any()),
    ), sources


@dataclass
class _Scan:
    """The fast path's replies and the lines left to the careful path, for the whole text."""

    fast: _FastReplies
    todo: np.ndarray  # rows (line index, start, end, previous line's start, its end) in bytes
    source: tuple[int, int] | None = None  # (start, end) of the first taken reply's source
    # (start, end) of the taken replies whose source may differ from the first's
    other_sources: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))


def _scanner_input(text: str) -> str | bytes:
    """What the scanners read: the ASCII str itself, else its UTF-8 bytes (offsets must be byte offsets)."""
    return text if text.isascii() else text.encode("utf-8")


def _scan(data: str | bytes) -> _Scan:
    """The fast path's replies and the careful path's lines: compiled when built, else numpy."""
    from iscsi_report.core.ingest.native import pingscan

    lib = pingscan.load()
    if lib is None:
        return _scan_numpy(data)
    found = pingscan.scan(lib, data, _POW10_F, _MIN_REPLY_BYTES)
    columns = (found.line, found.seq, found.rtt_ms, found.unit_ms, found.timestamp_s, found.duplicate)
    fast = _FastReplies(*columns, short_seq_key=found.short_seq_key)
    return _Scan(fast, found.todo, found.source, found.others)


def _scan_numpy(data: str | bytes) -> _Scan:
    """Run the fast path block by block; keep the bounds of every other non-empty line.

    data is UTF-8 bytes or an ASCII str (whose character offsets are its byte offsets), so
    a str never needs encoding whole.
    """
    replies = _ReplyColumns(len(data) // _MIN_REPLY_BYTES + 1)  # no more replies fit in the text
    todo, others = [], [np.zeros((0, 2), np.int64)]
    first_source: tuple[int, int, np.uint64, np.uint64] | None = None  # start, length, words
    scratch = np.zeros(0, dtype=np.uint8)
    first_line, previous = 0, (0, 0)  # line index at the block start, bounds of the line before it
    for start, end in _blocks(data):
        block = scratch = _padded_block(data, start, end, scratch)
        lines, events = _split_lines(block, final=end == len(data))
        fast, sources = _block_replies(block, lines, events)
        todo.append(_other_lines(lines, fast.line, start - _PAD, first_line, previous))
        if first_source is None and len(sources.start):
            w0, w1 = sources.words
            first_source = (int(sources.start[0]) + start - _PAD, int(sources.length[0]), w0[0], w1[0])
        if first_source is not None:
            differ = _other_source(sources, first_source)
            taken = fast.line[differ]
            others.append(np.column_stack((lines.starts[taken], lines.ends[taken])) + (start - _PAD))
        fast.line += first_line
        replies.append(fast)
        if len(lines.starts):
            previous = (lines.starts[-1] + start - _PAD, lines.ends[-1] + start - _PAD)
        first_line += len(lines.starts)
    source = None if first_source is None else (first_source[0], first_source[0] + first_source[1])
    return _Scan(
        replies.filled(),
        np.concatenate([np.zeros((0, 5), np.int64), *todo]),
        source,
        np.concatenate(others),
    )


def _other_source(sources: _Sources, first: tuple[int, int, np.uint64, np.uint64]) -> np.ndarray:
    """Which taken replies may have another source than the first reply (a longer one always may)."""
    w0, w1 = sources.words
    differ: np.ndarray = (
        (sources.length != first[1])
        | (sources.length > _SOURCE_WORDS * _WORD_BYTES)
        | (w0 != first[2])
        | (w1 != first[3])
    )
    return differ


def _other_lines(
    lines: _Lines, taken: np.ndarray, offset: int, first_line: int, previous: tuple[int, int]
) -> np.ndarray:
    """Rows (line index, start, end, previous start, previous end) of the block's non-empty
    lines that the fast path did not take; offset turns block positions into text positions."""
    rest = lines.starts != lines.ends
    rest[taken] = False
    idx = np.flatnonzero(rest)
    starts, ends = lines.starts + offset, lines.ends + offset
    prev_starts = np.append(previous[0], starts[:-1])[idx]
    prev_ends = np.append(previous[1], ends[:-1])[idx]
    return np.column_stack((idx + first_line, starts[idx], ends[idx], prev_starts, prev_ends))


class _ReplyColumns:
    """The fast path's replies of every block, written into columns allocated once.

    Keeping each block's arrays and concatenating them at the end would touch the memory of
    every reply twice; in a fresh process, touching new memory (page faults) is a good part of
    the cost of a large log.
    """

    def __init__(self, capacity: int) -> None:
        """Room for capacity replies (only the part written is touched)."""
        self._columns = _FastReplies(
            line=np.empty(capacity, np.int64),
            seq=np.empty(capacity, np.int64),
            rtt_ms=np.empty(capacity),
            unit_ms=np.empty(capacity),
            timestamp_s=np.empty(capacity),
            duplicate=np.empty(capacity, bool),
        )
        self._count = 0

    def append(self, block: _FastReplies) -> None:
        """Add one block's replies after the previous blocks'."""
        at, end = self._count, self._count + len(block.line)
        out = self._columns
        for name in _REPLY_COLUMNS:
            getattr(out, name)[at:end] = getattr(block, name)
        out.short_seq_key = out.short_seq_key or block.short_seq_key
        self._count = end

    def filled(self) -> _FastReplies:
        """The replies written so far (views of the columns)."""
        out, n = self._columns, self._count
        sliced = {name: getattr(out, name)[:n] for name in _REPLY_COLUMNS}
        return _FastReplies(**sliced, short_seq_key=out.short_seq_key)


_REPLY_COLUMNS = ("line", "seq", "rtt_ms", "unit_ms", "timestamp_s", "duplicate")


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
    # some line says " icmp_req=" (old iputils); the fast path never takes such a line
    req_key: bool = False
    flags: set[str] = field(default_factory=set)


def _unit(token: str) -> float:
    """One unit of the last printed digit of a decimal token ("0.045" -> 0.001, "159" -> 1)."""
    return 10.0 ** -(len(token) - token.index(".") - 1) if "." in token else 1.0


def _careful_reply(m: re.Match[str], number: int, state: _Careful) -> None:
    """Record a reply matched by the slow regex (unusual suffixes, icmp_req=, no time=)."""
    flags = m["flags"] or ""
    if m["rtt"] is None or int(m["seq"]) > _MAX_SEQ:  # no time, or a seq no ping can print
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
    state.req_key = state.req_key or " icmp_req=" in text
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
        w.append(f"{n} reply lines but ping counted {st.received} received + {st.duplicates} duplicates")
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
            result.warnings.append(f"printed rtt {name} {printed} ms but {computed:.6g} ms from the samples")


def _merge(fast: _FastReplies, state: _Careful) -> dict[str, np.ndarray]:
    """Combine fast-path and careful-path replies in file order."""
    if not state.replies:
        return {
            "line": fast.line,
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
        "line": line[order],
        "seq": np.concatenate((fast.seq, slow[:, 1].astype(np.int64)))[order],
        "rtt_ms": np.concatenate((fast.rtt_ms, slow[:, 2]))[order],
        "unit": np.concatenate((fast.unit_ms, slow[:, 3]))[order],
        "timestamp_s": np.concatenate((fast.timestamp_s, slow[:, 4]))[order],
        "duplicate": np.concatenate((fast.duplicate, slow[:, 5].astype(bool)))[order],
    }


def parse_text(text: str, path: str | Path = "<text>") -> PingResult:
    """Parse ping output given as text (see :func:`parse`)."""
    path = str(path)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    _refuse_windows(path, text)
    data = _scanner_input(text)
    scan = _scan(data)
    fast = scan.fast
    state = _Careful(short_seq_key=fast.short_seq_key)
    for idx, start, end, prev_start, prev_end in scan.todo.tolist():
        prev_blank = idx > 0 and not data[prev_start:prev_end].strip()
        line = data[start:end]
        _careful_line(idx + 1, line if isinstance(line, str) else line.decode("utf-8"), prev_blank, state)
    n_replies = len(fast.line) + len(state.replies)
    _refuse_locale(path, state.unparsed, n_replies)
    if n_replies == 0 and state.transmitted is None and state.header is None:
        raise IngestError(
            path,
            ("empty file: " if not text.strip() else "")
            + "no ping output found: expected a 'PING host' header, reply lines "
            "('N bytes from ...: icmp_seq=N ... time=X ms') or a statistics footer",
            line=state.unparsed[0][0] if state.unparsed else None,
        )
    if n_replies == 0 and state.transmitted is None:
        raise IngestError(path, "ping output has neither replies nor a statistics footer")
    cols = _merge(fast, state)
    _check_replies(path, cols)
    _check_sources(path, text, state.header, _suspect_lines(scan, data) if data is text else None)
    _check_variants(path, text, state.short_seq_key or state.req_key)
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
            f"{len(result.unparsed)} line(s) not understood, first at line {first[0]}: {first[1][:80]!r}"
        )
    return result


def _line_at(text: str, pos: int) -> int:
    """1-based line number of a character offset."""
    return text.count("\n", 0, pos) + 1


def _refuse_windows(path: str, text: str) -> None:
    """Windows ping output is recognised and refused (whole-millisecond RTTs, another format)."""
    m = _WINDOWS_RE.search(text[:65536])
    if m is None:
        return
    if _SNIFF_RE.search(text[:65536]):
        raise IngestError(
            path,
            "the file mixes Windows ping output with Linux/BSD ping output: one ping run per file",
            line=_line_at(text, m.start()),
        )
    raise IngestError(
        path,
        "Windows ping output is not supported (its RTTs are whole milliseconds): capture with "
        "Linux iputils ping (ping -D -i 0.2 HOST, LC_ALL=C)",
        line=_line_at(text, m.start()),
    )


def _check_replies(path: str, cols: dict[str, np.ndarray]) -> None:
    """RTTs finite and at most MAX_RTT_MS; -D timestamps never going back by more than the tolerance."""
    rtt = cols["rtt_ms"]
    bad = np.flatnonzero(~np.isfinite(rtt) | (rtt > MAX_RTT_MS))
    if len(bad):
        i = int(bad[0])
        raise IngestError(
            path,
            f"round-trip time {rtt[i]:.6g} ms is beyond {MAX_RTT_MS:.0f} ms (a day): "
            "not a reply ping waited for",
            line=int(cols["line"][i]) + 1,
        )
    ts = cols["timestamp_s"]
    stamped = np.flatnonzero(~np.isnan(ts))
    if len(stamped) < 2:
        return
    t = ts[stamped]
    back = np.flatnonzero(t < np.maximum.accumulate(t) - TIMESTAMP_BACKSTEP_TOLERANCE_S)
    if len(back):
        i = int(stamped[back[0]])
        raise IngestError(
            path,
            f"-D timestamp {ts[i]:.6f} is earlier than a previous reply's by more than "
            f"{TIMESTAMP_BACKSTEP_TOLERANCE_S:g} s: timestamps go backwards",
            line=int(cols["line"][i]) + 1,
        )


def _pinged(header: str | None) -> tuple[str, str] | None:
    """(name, address) the header says ping sent to; None when unknown or a broadcast/multicast."""
    m = _HEADER_ADDRESS_RE.search(header or "")
    if m is None:
        return None
    ip = m["ip"] or m["ip6"]
    try:
        address = ipaddress.ip_address(ip.partition("%")[0])
    except ValueError:
        return None
    if address.is_multicast or str(address).endswith(".255"):
        return None  # replies from many hosts are expected
    return m["name"] or ip, ip


def destination(text: str) -> tuple[str, str] | None:
    """(name as typed, address) the header says ping sent to, read from its first lines; None without one.

    Unlike the source check's reading, a broadcast or multicast target is returned too: this says
    where the probes went, for grouping, not whom replies may come from.
    """
    for line in first_lines(text, HEADER_SEARCH_LINES):
        m = _DESTINATION_RE.match(line)
        if m is not None:
            ip = m["ip"] or m["ip6"]
            return (m["name"] or ip), ip.partition("%")[0]
    return None


def _suspect_lines(scan: _Scan, data: str | bytes) -> tuple[str | None, np.ndarray]:
    """(the first taken reply's source, (start, end) of every line whose source may differ from it):
    the careful path's lines and the taken replies :func:`_scan` found another source in."""
    source = None if scan.source is None else str(data[scan.source[0] : scan.source[1]])
    return source, np.concatenate((scan.todo[:, 1:3], scan.other_sources))


def _check_sources(
    path: str, text: str, header: str | None, suspects: tuple[str | None, np.ndarray] | None = None
) -> None:
    """Every reply comes from the host the header pings (by address, or a name with it in parens).

    With ``suspects`` (from :func:`_suspect_lines`, for an ASCII text) only the lines whose
    source may differ from the first reply's are searched, when the first reply's is the pinged
    host's; otherwise the whole text is.
    """
    pinged = _pinged(header)
    if pinged is None or "pinging broadcast address" in text[:65536]:
        return
    name, ip = (re.escape(x) for x in pinged)
    # a literal start lets re skip to each " bytes from "; the line's head is checked after
    other = re.compile(rf" bytes from (?!(?:{ip}|{name})[:,%]|\S+ \({ip}\)[:,])(?P<src>[^\n]*?)[:,] ")
    spans: list[tuple[int, int]] = [(0, len(text))]
    if suspects is not None and suspects[0] in pinged and len(suspects[1]) <= _MAX_SUSPECT_LINES:
        spans = sorted((int(a), int(b)) for a, b in suspects[1])  # the first offending line is named
    for start, end in spans:
        for m in other.finditer(text, start, end):
            line_start = text.rfind("\n", 0, m.start()) + 1
            if _REPLY_HEAD_RE.fullmatch(text, line_start, m.start()):
                raise IngestError(
                    path,
                    f"reply from {m['src'][:60]!r} but the header pings {pinged[0]} ({pinged[1]}): "
                    "replies from another host",
                    line=_line_at(text, line_start),
                )


def _check_variants(path: str, text: str, other_key: bool) -> None:
    """One ping implementation per file: BusyBox 'seq=' replies never mix with 'icmp_seq='.

    other_key: a reply said 'seq=' or a line 'icmp_req=' (else every reply said 'icmp_seq=' and
    the whole text is not searched again).
    """
    if not other_key:
        return
    keys: dict[str, int] = {}
    for m in _SEQ_KEY_RE.finditer(text):
        keys.setdefault(m["key"], m.start())
        if len(keys) > 1:
            raise IngestError(
                path,
                f"the file mixes ping variants: '{m['key']}=' replies here after "
                f"'{next(iter(keys))}=' ones: one ping run per file",
                line=_line_at(text, m.start()),
            )


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
    re.MULTILINE | re.ASCII,
)


def unanswered_count(result: PingResult) -> int:
    """Probes reported unanswered ("no answer yet", "Request timeout") that never got a reply,
    counted once per sequence number (ping -O may report one probe on several lines, and a
    late reply answers it). A seq reused after a 16-bit wrap counts once."""
    pending = set(result.unanswered_seq)
    if not pending:
        return 0  # the common case: no Python set of every reply's seq is built
    answered = result.seq[np.isin(result.seq, np.fromiter(pending, np.int64, len(pending)))]
    return len(pending - set(answered.tolist()))


def claims(text: str) -> bool:
    """True if text has a line only ping writes (a header, a reply, its footer, Windows ping's
    too), parseable or not."""
    return _SNIFF_RE.search(text[:65536]) is not None or _WINDOWS_RE.search(text[:65536]) is not None


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
    ordered = np.sort(values)
    return {
        "min": float(ordered[0]),
        "mean": float(values.mean()),
        "p50": _percentile_of_sorted(ordered, 50),
        "p99": _percentile_of_sorted(ordered, 99),
        "max": float(ordered[-1]),
        "sstdev": float(values.std(ddof=1)) if len(values) > 1 else None,
    }


def _percentile_of_sorted(ordered: np.ndarray, pct: float) -> float:
    """np.percentile(method='linear') of sorted values, with numpy's own arithmetic (same bits).

    One sort serves both percentiles, min and max, and np.percentile's import of numpy.ma
    (a few milliseconds of CLI start-up) is avoided.
    """
    position = (len(ordered) - 1) * (pct / 100)
    if position >= len(ordered) - 1:
        return float(ordered[-1])
    below = math.floor(position)
    weight = position - below
    low, high = float(ordered[below]), float(ordered[below + 1])
    step = high - low
    return high - step * (1 - weight) if weight >= 0.5 else low + step * weight


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
        "unanswered": unanswered_count(result),
        "unparsed_lines": len(result.unparsed),
        "warnings": list(result.warnings),
    }


def _printed_rtt(st: PingStatistics | None) -> dict[str, float | None] | None:
    """ping's own rtt line as printed (None when it printed none)."""
    if st is None or st.rtt_min_ms is None:
        return None
    return {"min": st.rtt_min_ms, "avg": st.rtt_avg_ms, "max": st.rtt_max_ms, "dev": st.rtt_dev_ms}
