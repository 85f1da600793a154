"""The compiled ping scanner equals the numpy scanner it accelerates, on real logs and generated lines."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iscsi_report.core.ingest import ping, textio
from iscsi_report.core.ingest.native import pingscan

ROOT = Path(__file__).parents[2]
PING_FILES = sorted(
    p
    for folder in ("tests/fixtures", "data/raw")
    for p in (ROOT / folder).rglob("*")
    if p.is_file() and "ping" in str(p)
)


def _library():
    """The compiled scanner; where a C compiler exists it must have been built (make does)."""
    lib = pingscan.load()
    if lib is None and shutil.which("cc") is None:
        pytest.skip("no C compiler here: ping logs parse with the numpy scanner alone")
    assert lib is not None, "pingscan is not built from the current source: run scripts/build_pingscan.py"
    return lib


def _decoded(path: Path) -> str:
    """A ping file's text as ping.parse_text sees it (read as parse does, CRLF folded)."""
    return textio.read_text(path).replace("\r\n", "\n")


def _compiled(data: str | bytes) -> ping._Scan:
    """The scan as ping._scan makes it with the library loaded."""
    _library()
    return ping._scan(data)


def assert_same_scan(data: str | bytes) -> None:
    """Every column, row and flag of the two scanners equal, to the bit and the dtype."""
    got, want = _compiled(data), ping._scan_numpy(data)
    for name in ("line", "seq", "rtt_ms", "unit_ms", "timestamp_s", "duplicate"):
        a, b = getattr(got.fast, name), getattr(want.fast, name)
        assert a.dtype == b.dtype, name
        assert np.array_equal(a, b, equal_nan=True), name
    assert got.fast.short_seq_key == want.fast.short_seq_key
    assert np.array_equal(got.todo, want.todo)
    assert got.source == want.source
    assert np.array_equal(got.other_sources, want.other_sources)


def test_every_bundled_ping_log_scans_the_same() -> None:
    assert len(PING_FILES) >= 20
    for path in PING_FILES:
        assert_same_scan(ping._scanner_input(_decoded(path)))


def test_every_corpus_ping_log_scans_the_same(corpus_dir: Path) -> None:
    files = sorted(p for p in (corpus_dir / "ping").iterdir() if p.is_file())
    assert files
    for path in files:
        assert_same_scan(ping._scanner_input(_decoded(path)))


def test_a_parse_is_the_same_with_either_scanner(monkeypatch: pytest.MonkeyPatch) -> None:
    _library()
    text = _decoded(ROOT / "tests/fixtures/ping/iputils_netns_dup40.txt.xz")
    compiled = ping.parse_text(text, "p.txt")
    monkeypatch.setattr(pingscan, "load", lambda: None)
    reference = ping.parse_text(text, "p.txt")
    assert compiled.format == reference.format and compiled.warnings == reference.warnings
    for name in ("seq", "rtt_ms", "timestamp_s", "duplicate", "rtt_unit_ms"):
        assert np.array_equal(getattr(compiled, name), getattr(reference, name), equal_nan=True)
    assert compiled.unparsed == reference.unparsed and compiled.statistics == reference.statistics


def test_more_rows_than_the_first_call_has_room_for() -> None:
    n = pingscan.TODO_ROWS + 10
    others = "".join(
        f"64 bytes from 10.0.{i // 250}.{i % 250}: icmp_seq={i} ttl=64 time=0.1 ms\n" for i in range(n)
    )
    text = "PING x (10.0.0.1) 56(84) bytes of data.\n" + "not ping\n" * n + others
    scanned = _compiled(text)
    assert len(scanned.todo) == n + 1 and len(scanned.other_sources) >= n - 1
    assert_same_scan(text)


@pytest.mark.parametrize(
    "text", ["", "\n", "x", "\n\n", "64 bytes from a: seq=1 time=1 ms", "64 bytes from a: seq=1 time=1 ms\n"]
)
def test_edges_of_a_text(text: str) -> None:
    assert_same_scan(text)
    assert_same_scan(text.encode())


def test_a_str_that_is_not_ascii_is_refused() -> None:
    with pytest.raises(ValueError, match="ASCII"):
        pingscan.scan(_library(), "é", ping._POW10_F, ping._MIN_REPLY_BYTES)


def test_an_edited_source_names_another_library(tmp_path: Path) -> None:
    edited = tmp_path / "pingscan.c"
    edited.write_bytes(pingscan.SOURCE.read_bytes() + b"\n/* edited */\n")
    assert pingscan.library_path(edited).name != pingscan.library_path().name
    assert pingscan.library_path(edited).parent == tmp_path


def test_the_numpy_scanner_runs_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(pingscan.NATIVE_ENV, "0")
    pingscan.load.cache_clear()
    try:
        assert pingscan.load() is None
    finally:
        monkeypatch.delenv(pingscan.NATIVE_ENV)
        pingscan.load.cache_clear()


# -- generated lines: valid replies of every variant, near misses, and splices of the bytes that matter


def _digits(low: int, high: int) -> st.SearchStrategy[str]:
    """Digit strings of low to high characters."""
    return st.text(alphabet="0123456789", min_size=low, max_size=high)


def _decimal(digits: int) -> st.SearchStrategy[str]:
    """Tokens [0-9]+(.[0-9]+)? of up to digits bytes, the dot anywhere between two digits."""
    dotted = st.integers(1, digits - 2).flatmap(
        lambda i: st.builds(lambda a, b: f"{a}.{b}", _digits(1, i), _digits(1, digits - 1 - i))
    )
    return st.one_of(_digits(1, digits), dotted)


_VALID = {  # each field of a reply the fast path takes, every variant it takes
    "stamp": st.one_of(st.just(""), st.builds(lambda t: f"[{t}] ", _decimal(15))),
    "count": _digits(1, 7),
    "source": st.sampled_from(
        [
            "127.0.0.1",
            "127.0.0.2",
            "::1",
            "a",
            "10.0.0.100",
            "10.0.0.101",
            "x" * 16,
            "x" * 17,
            "é.test",
            "host.example.test (10.0.0.1)",
            "fe80::1%eth0",
        ]
    ),
    "sep": st.sampled_from([":", ","]),
    "key": st.sampled_from(["icmp_seq", "seq"]),
    "seq": _digits(1, 8),
    "ttl": st.one_of(
        st.just(""), st.builds(lambda k, v: f" {k}={v}", st.sampled_from(["ttl", "hlim"]), _digits(1, 8))
    ),
    "rtt": _decimal(8),
    "dup": st.sampled_from(["", " (DUP!)"]),
}
_INVALID = {  # near misses of each field
    "stamp": ["[] ", "[1.2.3] ", "[.5] ", "[5.] ", "[1]", "[" + "9" * 19 + "] ", "[" + "1" * 25 + "] ",
              "[9007199254740.992] ", "[90071992547409.93] "],
    "count": ["", "12345678", "123456789"],
    "source": ["", "a=b"],
    "sep": [";", "", ": "],
    "key": ["icmp_req", "xseq", "icmp_seq ", "cmp_seq"],
    "seq": ["", "123456789", "1.5"],
    "ttl": [" tll=64", " ttl=", " ttl=123456789", " hlim=x"],
    "rtt": ["", ".5", "5.", "1.2.3", "123456789", "1234567.8", "1,5"],
    "dup": [" (DUP)", " (DUP!) ", "  "],
}  # fmt: skip


def _reply(fields: dict[str, str]) -> str:
    """A reply line from its fields."""
    f = fields
    head = f"{f['stamp']}{f['count']} bytes from {f['source']}{f['sep']}"
    return f"{head} {f['key']}={f['seq']}{f['ttl']} time={f['rtt']} ms{f['dup']}"


_VALID_REPLY = st.fixed_dictionaries(_VALID).map(_reply)
_NEAR_MISS = (
    st.sampled_from(sorted(_VALID))
    .flatmap(lambda name: st.fixed_dictionaries({**_VALID, name: st.sampled_from(_INVALID[name])}))
    .map(_reply)
)
_SPLICE = st.sampled_from(
    [
        *"0123456789.=: ,[]\n\r\x00",
        "é",
        " ms",
        " (DUP!)",
        "icmp_seq=",
        " seq=",
        " ttl=",
        " time=",
        " bytes from ",
    ]
)
_MUTATION = st.tuples(st.integers(0, 200), st.integers(0, 3), _SPLICE)
_LINE = st.one_of(
    _VALID_REPLY,
    _NEAR_MISS,
    st.builds(
        lambda line, mutations: _spliced(line, mutations),
        _VALID_REPLY,
        st.lists(_MUTATION, min_size=1, max_size=3),
    ),
    st.sampled_from(["", "PING a (10.0.0.1) 56(84) bytes of data.", "--- a ping statistics ---"]),
)


def _spliced(line: str, mutations: list[tuple[int, int, str]]) -> str:
    """The line with each (position, bytes deleted, inserted) splice applied in turn."""
    for pos, delete, insert in mutations:
        pos %= len(line) + 1
        line = line[:pos] + insert + line[pos + delete :]
    return line


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_LINE, min_size=1, max_size=8), st.booleans())
def test_generated_lines_scan_the_same(lines: list[str], final_newline: bool) -> None:
    text = "\n".join(lines) + ("\n" if final_newline else "")
    assert_same_scan(ping._scanner_input(text))
    assert_same_scan(text.encode("utf-8"))


@settings(max_examples=200, deadline=None)
@given(_VALID_REPLY)
def test_the_generator_s_valid_replies_are_taken(line: str) -> None:
    scanned = ping._scan_numpy(ping._scanner_input(line))
    assert len(scanned.fast.line) == 1 and len(scanned.todo) == 0


_FIRST_VALID = {"stamp": "", "count": "64", "source": "10.0.0.1", "sep": ":", "key": "icmp_seq", "seq": "1",
                "ttl": " ttl=64", "rtt": "0.045", "dup": ""}  # fmt: skip
_NEAR_MISSES = [(name, value) for name, values in _INVALID.items() for value in values]


@pytest.mark.parametrize(("field", "value"), _NEAR_MISSES)
def test_each_near_miss_scans_the_same(field: str, value: str) -> None:
    line = _reply({**_FIRST_VALID, field: value})
    assert_same_scan(ping._scanner_input(f"{_reply(_FIRST_VALID)}\n{line}\n"))
