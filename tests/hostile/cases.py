"""The hostile-input catalogue: bad (and tricky but valid) inputs for every reader of user files.

Each case writes its input into a fresh folder and returns the call to try. The expectation is
either a clear error (:class:`Err`: the message must name the file, the line or JSON path where
one exists, and say what was expected) or a correct result (:class:`Ok`: a check of the values).
:func:`run_case` classifies what happened; tests/hostile/test_hostile.py asserts every case is
``clear_error`` or ``correct``, and benchmarks/hostile_table.py prints the counts.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import copy
import errno
import gzip
import hashlib
import io
import json
import lzma
import os
import signal
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import yaml

from iscsi_report.cli import summarize
from iscsi_report.core import atomic, dataset, yamlio
from iscsi_report.core.errors import IngestError, ParamsError, ReportError
from iscsi_report.core.ingest import fio, iostat, iperf3, ping, textio, tshark
from iscsi_report.core.measurements import Measurements

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TIMEOUT_S = 10  # a case that takes longer has hung
OUTCOMES = ("clear_error", "correct", "unclear_error", "wrong_result", "silent", "traceback", "hang")


@dataclass(frozen=True)
class Err:
    """A clear error is expected: its message holds every ``needs`` substring, names ``file``
    (the input, unless the case says otherwise), and the line or JSON path when given."""

    needs: tuple[str, ...]
    line: int | None = None
    json_path: str | None = None
    error: type[ReportError] = ReportError


@dataclass(frozen=True)
class Ok:
    """The call succeeds and ``check(result)`` holds (it raises AssertionError otherwise).

    ``counts_as`` is ``clear_error`` for CLI cases whose correct behaviour is a clear message."""

    check: Callable[[Any], None]
    counts_as: str = "correct"


@dataclass(frozen=True)
class Trial:
    """What a case's builder returns: the call to make and the file its error must name."""

    call: Callable[[], Any]
    file: Path | str | None


@dataclass(frozen=True)
class Case:
    """One hostile input."""

    id: str
    group: str
    build: Callable[[Path], Trial]
    expect: Err | Ok


@dataclass
class Outcome:
    """What a case did: one of OUTCOMES and a line of detail."""

    kind: str
    detail: str = ""


class _Hang(Exception):
    """Raised by the alarm when a case runs past TIMEOUT_S."""


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang


def run_case(case: Case, tmp: Path) -> Outcome:
    """Build the case in tmp, call it under an alarm, and classify the outcome."""
    tmp.mkdir(parents=True, exist_ok=True)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT_S)
    try:
        trial = case.build(tmp)
        result = trial.call()
    except _Hang:
        return Outcome("hang", f"more than {TIMEOUT_S} s")
    except ReportError as exc:
        return _judge_error(case, trial, exc)
    except Exception as exc:
        return Outcome("traceback", f"{type(exc).__name__}: {exc}"[:300])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if isinstance(case.expect, Err):
        return Outcome("silent", f"accepted: {result!r}"[:300])
    try:
        case.expect.check(result)
    except AssertionError as exc:
        return Outcome("wrong_result", str(exc)[:300])
    return Outcome(case.expect.counts_as)


def _judge_error(case: Case, trial: Trial, exc: ReportError) -> Outcome:
    """clear_error when the message has what the case needs, else unclear_error."""
    message = str(exc)
    expect = case.expect
    if not isinstance(expect, Err):
        return Outcome("unclear_error", f"unexpected error: {message}"[:300])
    missing = [n for n in expect.needs if n not in message]
    if trial.file is not None and str(trial.file) not in message:
        missing.append(f"file {trial.file}")
    if expect.line is not None and f":{expect.line}:" not in message:
        missing.append(f"line {expect.line}")
    if expect.json_path is not None and f"at {expect.json_path}:" not in message:
        missing.append(f"JSON path {expect.json_path}")
    if not isinstance(exc, expect.error):
        missing.append(f"a {expect.error.__name__}")
    if missing:
        return Outcome("unclear_error", f"{message[:200]} -- lacks {missing}")
    return Outcome("clear_error")


# ------------------------------------------------------------------ helpers


def _write(tmp: Path, name: str, data: str | bytes) -> Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def _parse(module: Any, name: str, data: str | bytes) -> Callable[[Path], Trial]:
    """A builder: write data to name, then module.parse it."""

    def build(tmp: Path) -> Trial:
        path = _write(tmp, name, data)
        return Trial(lambda: module.parse(path), path)

    return build


def _summarize(name: str, data: str | bytes, *args: str) -> Callable[[Path], Trial]:
    """A builder: write data, then run ``iscsi-report summarize [args] FILE`` in process."""

    def build(tmp: Path) -> Trial:
        path = _write(tmp, name, data)
        return Trial(lambda: _cli([*args, str(path)]), path)

    return build


def _cli(argv: list[str]) -> tuple[int, str, str]:
    """summarize.run on argv: (exit status, stdout, stderr)."""
    import argparse

    parser = argparse.ArgumentParser()
    summarize.configure(parser)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = summarize.run(parser.parse_args(argv))
    return status, out.getvalue(), err.getvalue()


def _fixture(rel: str) -> str:
    return textio.read_text(FIXTURES / rel)


PING = _fixture("ping/iputils_loopback_D.txt")
PING_HEAD = "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n"
FOOT = (
    "\n--- 10.0.0.2 ping statistics ---\n"
    "{tx} packets transmitted, {rx} received, {loss}% packet loss, time 1ms\n"
)


def _reply(seq: int, rtt: str = "0.500") -> str:
    return f"64 bytes from 10.0.0.2: icmp_seq={seq} ttl=64 time={rtt} ms\n"


def _ping_log(rtts: list[str], extra: str = "") -> str:
    body = "".join(_reply(i + 1, r) for i, r in enumerate(rtts))
    n = len(rtts)
    return PING_HEAD + body + extra + FOOT.format(tx=n, rx=n, loss=0)


def _samples(n: int, rtts: list[float] | None = None) -> Callable[[Any], None]:
    """Check: n replies parsed (and their RTTs when given)."""

    def check(r: Any) -> None:
        assert len(r.rtt_ms) == n, f"{len(r.rtt_ms)} replies, expected {n}"
        if rtts is not None:
            assert [float(x) for x in r.rtt_ms] == rtts, r.rtt_ms

    return check


FIO_DOC = json.loads(_fixture("fio/fio-3.33_seqwrite_64k_psync.json"))
IPERF_DOC = json.loads(_fixture("iperf3/tcp_netns_tbf.json"))


def _fio_with(edit: Callable[[dict], Any]) -> str:
    doc = copy.deepcopy(FIO_DOC)
    edit(doc)
    return json.dumps(doc, indent=2)


def _iperf_with(edit: Callable[[dict], Any]) -> str:
    doc = copy.deepcopy(IPERF_DOC)
    edit(doc)
    return json.dumps(doc, indent=2)


def _set(path: list[Any], value: Any) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        cur = doc
        for k in path[:-1]:
            cur = cur[k]
        cur[path[-1]] = value

    return edit


def _raw_json(text_edit: Callable[[str], str], base: str) -> str:
    return text_edit(base)


FIO_TEXT = json.dumps(FIO_DOC, indent=2)
IPERF_TEXT = json.dumps(IPERF_DOC, indent=2)
IOSTAT_X = _fixture("iostat/iostat-12.6.1_x.txt")
IOSTAT_JSON = _fixture("iostat/iostat-12.6.1_json_x.json")


def _fio_row(field_: str, expected: float) -> Callable[[Any], None]:
    def check(r: Any) -> None:
        got = float(r.jobs.iloc[0][field_])
        assert got == expected, f"{field_} {got} != {expected}"

    return check


# ------------------------------------------------------------------ ping

CASES: list[Case] = []


def _add(group: str, id_: str, build: Callable[[Path], Trial], expect: Err | Ok) -> None:
    CASES.append(Case(f"{group}-{id_}", group, build, expect))


_add("ping", "fixture-iputils-D", _parse(ping, "p.txt", PING), Ok(_samples(PING.count(" time="))))
for _rel in (
    "ping/inetutils_loopback.txt",
    "ping/busybox_netns_tbf2mbit.txt",
    "ping/iputils_ipv6_loopback.txt",
    "ping/iputils_netns_loss30_O_D.txt",
    "ping/inetutils_netns_loss25.txt",
):
    _t = _fixture(_rel)
    _add("ping", f"fixture-{Path(_rel).stem}", _parse(ping, "p.txt", _t), Ok(_samples(_t.count(" time="))))
_add("ping", "crlf", _parse(ping, "p.txt", PING.replace("\n", "\r\n")), Ok(_samples(PING.count(" time="))))
_add(
    "ping", "gzip", _parse(ping, "p.txt.gz", gzip.compress(PING.encode())), Ok(_samples(PING.count(" time=")))
)
_add("ping", "xz", _parse(ping, "p.txt.xz", lzma.compress(PING.encode())), Ok(_samples(PING.count(" time="))))
_add("ping", "two-replies", _parse(ping, "p.txt", _ping_log(["0.25", "1.5"])), Ok(_samples(2, [0.25, 1.5])))
_add(
    "ping",
    "decimal-comma",
    _parse(ping, "p.txt", _ping_log(["0,25"])),
    Err(("decimal comma", "LC_ALL=C"), line=2),
)
_add(
    "ping",
    "seconds-unit",
    _parse(ping, "p.txt", PING_HEAD + "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=1.2 s\n"),
    Err(("not in any known ping format", "LC_ALL=C"), line=2),
)
_add(
    "ping",
    "superscript-rtt",
    _parse(ping, "p.txt", PING_HEAD + "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=1.²5 ms\n"),
    Err(("not in any known ping format",), line=2),
)
_add(
    "ping",
    "superscript-seq",
    _parse(ping, "p.txt", PING_HEAD + "64 bytes from 10.0.0.2: icmp_seq=¹ ttl=64 time=1.5 ms\n"),
    Err(("reply-like line not in any known ping format",), line=2),
)
_add("ping", "empty", _parse(ping, "p.txt", ""), Err(("no ping output found",)))
_add("ping", "garbage", _parse(ping, "p.txt", "hello world\n" * 5), Err(("no ping output found",), line=1))
_add(
    "ping",
    "header-only",
    _parse(ping, "p.txt", PING_HEAD),
    Err(("neither replies nor a statistics footer",)),
)
_add("ping", "nul-bytes", _parse(ping, "p.txt", b"PING \x00\x00\x00"), Err(("binary data (NUL bytes)",)))
_add("ping", "latin1", _parse(ping, "p.txt", PING_HEAD.encode() + b"caf\xe9\n"), Err(("not UTF-8",), line=2))
_add(
    "ping",
    "footer-disagrees",
    _parse(ping, "p.txt", PING_HEAD + _reply(1) + FOOT.format(tx=5, rx=5, loss=0)),
    Ok(lambda r: _assert(any("ping counted 5" in w for w in r.warnings), r.warnings)),
)
_add(
    "ping",
    "unparsed-line-kept",
    _parse(ping, "p.txt", _ping_log(["0.5"], extra="<script>alert(1)</script>\n")),
    Ok(lambda r: _assert(r.unparsed == [(3, "<script>alert(1)</script>")], r.unparsed)),
)
_add(
    "ping",
    "escape-sequence-line-kept",
    _parse(ping, "p.txt", _ping_log(["0.5"], extra="\x1b]0;owned\x07\n")),
    Ok(lambda r: _assert(len(r.unparsed) == 1 and r.warnings, r.unparsed)),
)
_add(
    "ping",
    "huge-seq",
    _parse(ping, "p.txt", PING_HEAD + _reply(3) + _reply(99999999999999999999)),
    Ok(
        lambda r: _assert(r.seq.tolist() == [3] and r.unparsed[0][0] == 3 and r.warnings, (r.seq, r.unparsed))
    ),
)
_add(
    "ping",
    "long-line",
    _parse(ping, "p.txt", PING_HEAD + "x" * (textio.MAX_LINE_BYTES + 10) + "\n"),
    Err(("line longer than the limit",), line=2),
)
_add(
    "ping",
    "no-footer",
    _parse(ping, "p.txt", PING_HEAD + _reply(1) + _reply(2)),
    Ok(lambda r: _assert(len(r.rtt_ms) == 2 and any("no statistics footer" in w for w in r.warnings), r)),
)
_add(
    "ping",
    "dup-replies",
    _parse(
        ping,
        "p.txt",
        PING_HEAD
        + _reply(1)
        + _reply(1).replace(" ms\n", " ms (DUP!)\n")
        + "\n--- 10.0.0.2 ping statistics ---\n"
        "1 packets transmitted, 1 received, +1 duplicates, 0% packet loss, time 0ms\n",
    ),
    Ok(lambda r: _assert(int(r.duplicate.sum()) == 1 and len(r.rtt_ms) == 2, r.duplicate)),
)
_add(
    "ping",
    "arabic-indic-digits",
    _parse(ping, "p.txt", PING_HEAD + "64 bytes from 10.0.0.2: icmp_seq=١ ttl=64 time=١.5 ms\n"),
    Err(("ping",)),
)
_add(
    "ping",
    "truncated-gzip",
    _parse(ping, "p.txt.gz", gzip.compress(PING.encode())[:-12]),
    Err(("corrupt compressed file",)),
)
_add(
    "ping",
    "gzip-trailing-garbage",
    _parse(ping, "p.txt.gz", gzip.compress(PING.encode()) + b"junk"),
    Err(("trailing garbage",)),
)
_add(
    "ping",
    "truncated-xz",
    _parse(ping, "p.txt.xz", lzma.compress(PING.encode())[:-8]),
    Err(("corrupt compressed file",)),
)

# summarize on ping logs


def _o_log() -> str:
    lines = [PING_HEAD.rstrip("\n")]
    for s in range(1, 21):
        lines += [f"no answer yet for icmp_seq={s}"] * 3
        if s % 4:
            lines.append(_reply(s).rstrip("\n"))
    return "\n".join(lines) + "\n"


def _json_out(check: Callable[[dict], None]) -> Callable[[Any], None]:
    def inner(res: Any) -> None:
        status, out, err = res
        assert status == 0, err
        check(json.loads(out))

    return inner


def _err_out(*needs: str) -> Callable[[Any], None]:
    def inner(res: Any) -> None:
        status, out, err = res
        assert status == 2 and not out, (status, out)
        assert err.count("\n") == 1, err
        for n in needs:
            assert n in err, f"{n!r} not in {err!r}"

    return inner


_add(
    "summarize",
    "ping-O-unanswered-by-seq",
    _summarize("o.txt", _o_log(), "--json"),
    Ok(_json_out(lambda s: _assert(s["unanswered"] == 5 and s["samples"] == 15, s))),
)
_add(
    "summarize",
    "fixture-O-D",
    _summarize("o.txt", _fixture("ping/iputils_netns_loss30_O_D.txt"), "--json"),
    Ok(_json_out(lambda s: _assert(s["unanswered"] == 4, s))),
)
_add(
    "summarize",
    "decimal-comma-named",
    _summarize("c.txt", _ping_log(["0,25"])),
    Ok(_err_out("c.txt:2:", "decimal comma"), counts_as="clear_error"),
)
_add(
    "summarize",
    "seconds-named",
    _summarize("s.txt", PING_HEAD + "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=1.2 s\n"),
    Ok(_err_out("s.txt:2:", "LC_ALL=C"), counts_as="clear_error"),
)
_add(
    "summarize",
    "not-recognised",
    _summarize("n.txt", "nothing here\n"),
    Ok(_err_out("n.txt:", "not recognised"), counts_as="clear_error"),
)


def _no_escape(res: Any) -> None:
    status, out, err = res
    assert status == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\\x1b" in out, out


_add(
    "summarize",
    "text-escapes-control-in-version",
    _summarize("e.json", _iperf_with(_set(["start", "version"], "iperf 3.12\x1b]0;owned\x07"))),
    Ok(_no_escape),
)


def _name_case(name: str) -> Callable[[Path], Trial]:
    def build(tmp: Path) -> Trial:
        path = _write(tmp, name, PING)
        return Trial(lambda: _cli(["--json", str(path)]), path)

    return build


def _names_path(name: str) -> Callable[[Any], None]:
    def inner(res: Any) -> None:
        status, out, err = res
        assert status == 0, err
        assert json.loads(out)["path"].endswith(name), out
        assert "\x1b" not in out

    return inner


for _i, _name in enumerate(
    [
        "back`tick.txt",
        "<img src=x onerror=alert(1)>.txt",
        "sp ace.txt",
        "-dash.txt",
        "ünï.txt",
        "a\x1b[31mred.txt",
    ]
):
    _add("names", f"name-{_i}", _name_case(_name), Ok(_names_path(_name)))


def _escaped_name(res: Any) -> None:
    status, out, err = res
    assert status == 0, err
    assert "\x1b" not in out and "\\x1b[31m" in out, out


_add("names", "name-text-mode-escaped", _summarize("b\x1b[31m.txt", PING), Ok(_escaped_name))
_add(
    "names",
    "newline-in-name-error-one-line",
    _summarize("new\nline.txt", "nothing\n"),
    Ok(_err_out("new\\x0aline.txt", "not recognised"), counts_as="clear_error"),
)

# ------------------------------------------------------------------ iperf3

_add("iperf3", "fixture", _parse(iperf3, "i.json", IPERF_TEXT), Ok(lambda r: _assert(r.protocol == "tcp", r)))
for _name in ("tcp_P4.json", "tcp_bidir.json", "tcp_reverse.json", "udp_100M.json.gz"):
    _raw = (FIXTURES / "iperf3" / _name).read_bytes()
    _add("iperf3", f"fixture-{_name}", _parse(iperf3, _name, _raw), Ok(lambda r: _assert(r.streams >= 1, r)))

for _where, _jp in (
    (["end", "sum_sent", "bits_per_second"], "end.sum_sent.bits_per_second"),
    (["end", "sum_received", "bits_per_second"], "end.sum_received.bits_per_second"),
    (["intervals", 0, "sum", "bits_per_second"], "intervals[0].sum.bits_per_second"),
    (["intervals", 1, "streams", 0, "bits_per_second"], "intervals[1].streams[0].bits_per_second"),
):
    for _v, _tag in ((-1.0, "negative"), (float("nan"), "nan"), (float("inf"), "inf")):
        _add(
            "iperf3",
            f"{_tag}-{_jp}",
            _parse(iperf3, "i.json", _iperf_with(_set(_where, _v))),
            Err(("expected a bandwidth >= 0 bits/s",), json_path=_jp),
        )
_add(
    "iperf3",
    "bare-nan-token",
    _parse(
        iperf3,
        "i.json",
        IPERF_TEXT.replace('"bits_per_second": 195925020.51181284', '"bits_per_second": -nan'),
    ),
    Err(("expected a bandwidth >= 0 bits/s", "nan"), json_path="end.sum_sent.bits_per_second"),
)
_add(
    "iperf3",
    "string-bandwidth",
    _parse(iperf3, "i.json", _iperf_with(_set(["intervals", 0, "sum", "bits_per_second"], "fast"))),
    Err(("expected a number",), json_path="intervals[0].sum.bits_per_second"),
)
_add(
    "iperf3",
    "bool-bytes",
    _parse(iperf3, "i.json", _iperf_with(_set(["intervals", 0, "sum", "bytes"], True))),
    Err(("expected a number",), json_path="intervals[0].sum.bytes"),
)
_add(
    "iperf3",
    "negative-bytes",
    _parse(iperf3, "i.json", _iperf_with(_set(["intervals", 0, "sum", "bytes"], -5))),
    Err(("expected a byte count",), json_path="intervals[0].sum.bytes"),
)
_add(
    "iperf3",
    "fractional-bytes",
    _parse(iperf3, "i.json", _iperf_with(_set(["intervals", 0, "sum", "bytes"], 1.5))),
    Err(("expected a byte count",), json_path="intervals[0].sum.bytes"),
)
_add(
    "iperf3",
    "negative-time",
    _parse(iperf3, "i.json", _iperf_with(_set(["intervals", 0, "sum", "start"], -3))),
    Err(("expected a time in seconds >= 0",), json_path="intervals[0].sum.start"),
)
_add(
    "iperf3",
    "error-field",
    _parse(
        iperf3, "i.json", json.dumps({"start": {}, "intervals": [], "end": {}, "error": "unable to connect"})
    ),
    Err(("iperf3 reported an error", "unable to connect"), json_path="error"),
)
_add(
    "iperf3",
    "missing-end",
    _parse(iperf3, "i.json", _iperf_with(lambda d: d.pop("end"))),
    Err(("missing field",), json_path="end"),
)
_add(
    "iperf3",
    "intervals-not-list",
    _parse(iperf3, "i.json", _iperf_with(_set(["intervals"], {"a": 1}))),
    Err(("expected list",), json_path="intervals"),
)
_add(
    "iperf3",
    "stream-not-object",
    _parse(iperf3, "i.json", _iperf_with(_set(["intervals", 0, "streams", 0], 7))),
    Err(("expected an object",), json_path="intervals[0].streams[0]"),
)
_add(
    "iperf3",
    "truncated",
    _parse(iperf3, "i.json", IPERF_TEXT[:400]),
    Err(("invalid JSON", "expected iperf3 -J output")),
)
_add(
    "iperf3",
    "plain-text",
    _parse(iperf3, "i.txt", "Connecting to host 10.0.0.2, port 5201\n[ ID] Interval  Transfer\n"),
    Err(("plain-text output", "-J")),
)
_add(
    "iperf3",
    "deep-nesting",
    _parse(iperf3, "i.json", '{"start": ' + "[" * 5000 + "]" * 5000 + "}"),
    Err(("nested deeper than 64 levels",)),
)
_add(
    "iperf3",
    "deep-nesting-moderate",
    _parse(iperf3, "i.json", '{"start": ' + "[" * 100 + "]" * 100 + "}"),
    Err(("nested deeper than 64 levels",)),
)
_add(
    "iperf3",
    "huge-integer",
    _parse(iperf3, "i.json", IPERF_TEXT.replace('"bytes": 48982896', '"bytes": ' + "9" * 5000, 1)),
    Err(("out of range",)),
)
_add(
    "iperf3",
    "text-around-kept",
    _parse(iperf3, "i.json", "warning: x\n" + IPERF_TEXT + "\niperf Done.\n"),
    Ok(lambda r: _assert(len(r.unparsed) == 2 and r.warnings, r.unparsed)),
)
_add(
    "iperf3",
    "html-version-kept-literally",
    _parse(iperf3, "i.json", _iperf_with(_set(["start", "version"], "<script>x</script>"))),
    Ok(lambda r: _assert(r.version == "<script>x</script>", r.version)),
)
_add("iperf3", "empty", _parse(iperf3, "i.json", ""), Err(("no JSON object found",)))
_add("iperf3", "json-array", _parse(iperf3, "i.json", "[1, 2]\n"), Err(("no JSON object found",)))

# ------------------------------------------------------------------ fio

_W = ["jobs", 0, "write"]
_add(
    "fio",
    "fixture",
    _parse(fio, "f.json", FIO_TEXT),
    Ok(_fio_row("bw_bytes_per_s", float(FIO_DOC["jobs"][0]["write"]["bw_bytes"]))),
)
for _rel in (
    "fio/fio-3.33_read_and_randrw.json",
    "fio/fio-3.33_numjobs2_no_group.json",
    "fio/fio-3.33_normal_then_json.txt",
):
    _add(
        "fio",
        f"fixture-{Path(_rel).stem}",
        _parse(fio, "f.json", _fixture(_rel)),
        Ok(lambda r: _assert(len(r.jobs), r)),
    )
_add(
    "fio",
    "interrupted-signal",
    _parse(fio, "f.json", "fio: terminating on signal 2\n" + FIO_TEXT),
    Err(("fio was interrupted", "line 1", "signal 2", "shortened run")),
)
_add(
    "fio",
    "interrupted-signal-after",
    _parse(fio, "f.json", FIO_TEXT + "\nfio: terminating on signal 15\n"),
    Err(("fio was interrupted", "signal 15")),
)


def _time_based(doc: dict) -> None:
    doc["jobs"][0]["job options"].update(time_based="1", runtime="60s")
    doc["jobs"][0]["job_runtime"] = 2000


_add(
    "fio",
    "time-based-cut-short",
    _parse(fio, "f.json", _fio_with(_time_based)),
    Err(("ran 2000 ms", "60000 ms", "cut short")),
)


def _time_based_ok(doc: dict) -> None:
    doc["jobs"][0]["job options"].update(time_based="1", runtime="2")
    doc["jobs"][0]["job_runtime"] = 2000


_add(
    "fio",
    "time-based-complete",
    _parse(fio, "f.json", _fio_with(_time_based_ok)),
    Ok(lambda r: _assert(r.interrupted is None, r)),
)
_add(
    "fio",
    "second-json-document",
    _parse(fio, "f.json", FIO_TEXT + "\n" + FIO_TEXT),
    Err(("a second JSON document",), line=FIO_TEXT.count("\n") + 2),
)
for _key in ("io_bytes", "bw_bytes", "iops", "runtime"):
    _add(
        "fio",
        f"int64-overflow-{_key}",
        _parse(fio, "f.json", _fio_with(_set([*_W, _key], 2**64 + 5))),
        Err(("beyond a 64-bit counter",), json_path=f"jobs[0].write.{_key}"),
    )
_add(
    "fio",
    "int64-overflow-usr-cpu",
    _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "usr_cpu"], -(2**64)))),
    Err(("beyond a 64-bit counter",), json_path="jobs[0].usr_cpu"),
)
_add(
    "fio",
    "int64-overflow-clat-mean",
    _parse(fio, "f.json", _fio_with(_set([*_W, "clat_ns", "mean"], 2**70))),
    Err(("beyond a 64-bit counter",), json_path="jobs[0].write.clat_ns.mean"),
)
_add(
    "fio",
    "int64-overflow-iodepth-option",
    _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "job options", "iodepth"], str(2**64)))),
    Err(("expected an integer iodepth",), json_path="jobs[0].job options.iodepth"),
)
_add(
    "fio",
    "superscript-iodepth",
    _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "job options", "iodepth"], "²"))),
    Err(("expected an integer iodepth", "'²'"), json_path="jobs[0].job options.iodepth"),
)
_add(
    "fio",
    "superscript-bs",
    _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "job options", "bs"], "6⁴k"))),
    Err(("not a fio size",), json_path="jobs[0].job options.bs"),
)
_add(
    "fio",
    "arabic-digit-bs",
    _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "job options", "bs"], "٦٤k"))),
    Err(("not a fio size",), json_path="jobs[0].job options.bs"),
)


def _bins(key: str, count: Any) -> Callable[[dict], None]:
    return _set([*_W, "clat_ns", "bins"], {key: count})


_add(
    "fio",
    "superscript-bin-key",
    _parse(fio, "f.json", _fio_with(_bins("1²3", 4))),
    Err(("expected an integer bin",), json_path="jobs[0].write.clat_ns.bins"),
)
_add(
    "fio",
    "overflow-bin-count",
    _parse(fio, "f.json", _fio_with(_bins("123", 2**64))),
    Err(("within 64 bits",), json_path="jobs[0].write.clat_ns.bins"),
)
_add(
    "fio",
    "overflow-bin-key",
    _parse(fio, "f.json", _fio_with(_bins("9" * 30, 1))),
    Err(("within 64 bits",), json_path="jobs[0].write.clat_ns.bins"),
)
_add(
    "fio",
    "negative-bin-count",
    _parse(fio, "f.json", _fio_with(_bins("123", -1))),
    Err(("within 64 bits",), json_path="jobs[0].write.clat_ns.bins"),
)
_add(
    "fio",
    "bins-json-plus",
    _parse(fio, "f.json", _fio_with(_bins("1000", 7))),
    Ok(lambda r: _assert(r.format == "fio-json+" and r.histogram["count"].tolist() == [7], r.histogram)),
)
_add(
    "fio",
    "superscript-percentile-key",
    _parse(fio, "f.json", _fio_with(_set([*_W, "clat_ns", "percentile"], {"9⁹.0": 5}))),
    Err(("percentile key", "is not a number"), json_path="jobs[0].write.clat_ns.percentile"),
)
_add(
    "fio",
    "deep-nesting",
    _parse(fio, "f.json", '{"fio version": "x", "jobs": ' + "[" * 3000 + "]" * 3000 + "}"),
    Err(("nested deeper than 64 levels",)),
)
_add(
    "fio",
    "deep-nesting-object",
    _parse(fio, "f.json", '{"fio version": "x", "jobs": [' + '{"a":' * 80 + "1" + "}" * 80 + "]}"),
    Err(("nested deeper than 64 levels",)),
)
_add(
    "fio",
    "huge-integer-digits",
    _parse(fio, "f.json", FIO_TEXT.replace('"total_ios": 82318', '"total_ios": ' + "7" * 6000, 1)),
    Err(("out of range",)),
)
_add(
    "fio",
    "job-error",
    _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "error"], 5))),
    Err(("failed with error 5", "Input/output error"), json_path="jobs[0].error"),
)
_add(
    "fio",
    "error-not-int",
    _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "error"], "5"))),
    Err(("expected an integer error code",), json_path="jobs[0]"),
)
_add(
    "fio",
    "no-jobs",
    _parse(fio, "f.json", _fio_with(_set(["jobs"], []))),
    Err(("has no jobs",), json_path="jobs"),
)
_add(
    "fio",
    "jobs-not-list",
    _parse(fio, "f.json", _fio_with(_set(["jobs"], {"a": 1}))),
    Err(("expected a JSON object with a 'jobs' list",), json_path="jobs"),
)
_add(
    "fio",
    "job-not-object",
    _parse(fio, "f.json", _fio_with(_set(["jobs", 0], "job"))),
    Err(("expected a job object",), json_path="jobs[0]"),
)
_add(
    "fio",
    "nan-iops",
    _parse(fio, "f.json", FIO_TEXT.replace('"iops": 41138.430785', '"iops": NaN', 1)),
    Err(("expected a finite number", "nan"), json_path="jobs[0].write.iops"),
)
_add(
    "fio",
    "string-iops",
    _parse(fio, "f.json", _fio_with(_set([*_W, "iops"], "lots"))),
    Err(("expected a finite number", "'lots'"), json_path="jobs[0].write.iops"),
)
_add(
    "fio",
    "bool-runtime",
    _parse(fio, "f.json", _fio_with(_set([*_W, "runtime"], True))),
    Err(("expected a finite number",), json_path="jobs[0].write.runtime"),
)
_add(
    "fio",
    "missing-iops",
    _parse(fio, "f.json", _fio_with(lambda d: d["jobs"][0]["write"].pop("iops"))),
    Err(("missing numeric field 'iops'",), json_path="jobs[0].write.iops"),
)
_add(
    "fio",
    "negative-io-bytes",
    _parse(fio, "f.json", _fio_with(_set([*_W, "io_bytes"], -4096))),
    Err(("negative io_bytes",), json_path="jobs[0].write.io_bytes"),
)
_add(
    "fio",
    "negative-iops",
    _parse(fio, "f.json", _fio_with(_set([*_W, "iops"], -1.0))),
    Err(("fio values fail validation",)),
)
_add(
    "fio",
    "latency-not-object",
    _parse(fio, "f.json", _fio_with(_set([*_W, "clat_ns"], 5))),
    Err(("expected a latency object",), json_path="jobs[0].write.clat_ns"),
)
_add(
    "fio",
    "bad-bs",
    _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "job options", "bs"], "huge"))),
    Err(("not a fio size",), json_path="jobs[0].job options.bs"),
)
_add(
    "fio",
    "truncated",
    _parse(fio, "f.json", FIO_TEXT[:300]),
    Err(("malformed fio JSON",)),
)
_add(
    "fio",
    "fio-error-only",
    _parse(fio, "f.txt", "fio: engine libaio not loadable\n"),
    Err(("no fio JSON output found", "libaio")),
)
_add(
    "fio",
    "html-version-kept-literally",
    _parse(fio, "f.json", _fio_with(_set(["fio version"], "<img src=x onerror=alert(1)>"))),
    Ok(lambda r: _assert(r.fio_version == "<img src=x onerror=alert(1)>", r.fio_version)),
)
_add(
    "fio",
    "clat-and-lat-distinct",
    _parse(fio, "f.json", FIO_TEXT),
    Ok(
        lambda r: _assert(
            fio.summary(r)["jobs"][0]["lat_mean_ms"] == FIO_DOC["jobs"][0]["write"]["lat_ns"]["mean"] / 1e6
            and fio.summary(r)["jobs"][0]["clat_mean_ms"]
            == FIO_DOC["jobs"][0]["write"]["clat_ns"]["mean"] / 1e6,
            fio.summary(r),
        )
    ),
)
_add(
    "summarize",
    "fio-interrupted",
    _summarize("f.json", "fio: terminating on signal 2\n" + FIO_TEXT),
    Ok(_err_out("f.json:", "fio was interrupted"), counts_as="clear_error"),
)
_add(
    "summarize",
    "fio-int64",
    _summarize("f.json", _fio_with(_set([*_W, "io_bytes"], 2**64)), "--json"),
    Ok(_err_out("f.json: at jobs[0].write.io_bytes:", "64-bit"), counts_as="clear_error"),
)

# ------------------------------------------------------------------ iostat

_add("iostat", "fixture-x", _parse(iostat, "io.txt", IOSTAT_X), Ok(lambda r: _assert(len(r.devices) > 0, r)))
_add(
    "iostat",
    "fixture-json",
    _parse(iostat, "io.json", IOSTAT_JSON),
    Ok(lambda r: _assert(len(r.devices) > 0, r)),
)
_add(
    "iostat",
    "fixture-unclosed-recovered",
    _parse(iostat, "io.json", _fixture("iostat/iostat-12.6.1_json_t_unclosed.json")),
    Ok(lambda r: _assert(any("unclosed" in w for w in r.warnings), r.warnings)),
)
_add(
    "iostat",
    "decimal-comma",
    _parse(iostat, "io.txt", _fixture("iostat/iostat-12.6.1_x_t_de_DE.txt")),
    Ok(lambda r: _assert(len(r.devices) > 0, r)),
)
_add(
    "iostat",
    "human-units",
    _parse(iostat, "io.txt", _fixture("iostat/iostat-12.6.1_x_h.txt")),
    Err(("-h",)),
)
_add(
    "iostat",
    "deep-json",
    _parse(iostat, "io.json", '{"sysstat": ' + "[" * 4000 + "]" * 4000 + "}"),
    Err(("nested deeper than 64 levels",)),
)
_add("iostat", "empty", _parse(iostat, "io.txt", ""), Err(("no iostat report found",)))
_add(
    "iostat",
    "json-no-hosts",
    _parse(iostat, "io.json", '{"sysstat": {"hosts": []}}'),
    Err(("expected exactly one host object",), json_path="sysstat.hosts"),
)
_j = json.loads(IOSTAT_JSON)
_j["sysstat"]["hosts"][0]["statistics"][0]["disk"][0]["r/s"] = "fast"
_add(
    "iostat",
    "json-string-number",
    _parse(iostat, "io.json", json.dumps(_j)),
    Err(("expected a number", "'fast'"), json_path="statistics[0].disk[0].r/s"),
)
_j = json.loads(IOSTAT_JSON)
_j["sysstat"]["hosts"][0]["statistics"][0]["disk"][0]["bogus/s"] = 1
_add(
    "iostat",
    "json-unknown-field",
    _parse(iostat, "io.json", json.dumps(_j)),
    Err(("unknown iostat field 'bogus/s'",)),
)
_add(
    "iostat",
    "html-hostname-kept-literally",
    _parse(
        iostat,
        "io.json",
        IOSTAT_JSON.replace(json.loads(IOSTAT_JSON)["sysstat"]["hosts"][0]["nodename"], "<b>x</b>", 1),
    ),
    Ok(lambda r: _assert(r.host == "<b>x</b>", r.host)),
)
_add(
    "iostat",
    "superscript-value",
    _parse(iostat, "io.txt", IOSTAT_X.replace(" 0.00", " 0.0²", 1)),
    Err(("expected a number",)),
)

# ------------------------------------------------------------------ file kinds and sizes


def _special(make: Callable[[Path], Path], needs: tuple[str, ...]) -> tuple[Callable[[Path], Trial], Err]:
    def build(tmp: Path) -> Trial:
        path = make(tmp)
        return Trial(lambda: ping.parse(path), path)

    return build, Err(needs)


def _fifo(tmp: Path) -> Path:
    path = tmp / "fifo"
    os.mkfifo(path)
    return path


def _symlink_to(target: str) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        link = tmp / "link.txt"
        link.symlink_to(target)
        return link

    return make


for _id, _make, _needs in (
    ("fifo", _fifo, ("a FIFO (named pipe)", "expected a regular file")),
    ("dev-zero", lambda t: Path("/dev/zero"), ("a character device",)),
    ("dev-urandom", lambda t: Path("/dev/urandom"), ("a character device",)),
    ("directory", lambda t: t, ("a directory",)),
    ("missing", lambda t: t / "nope.txt", ("cannot read file", "No such file")),
    ("symlink-to-dev-zero", _symlink_to("/dev/zero"), ("a character device",)),
    ("broken-symlink", _symlink_to("/nowhere/at/all"), ("cannot read file",)),
    ("symlink-to-fifo", lambda t: (_fifo(t), _symlink_to(str(t / "fifo"))(t))[1], ("a FIFO",)),
):
    _b, _e = _special(_make, _needs)
    _add("files", _id, _b, _e)


def _limited(data: bytes, **limits: int) -> Callable[[Path], Trial]:
    def build(tmp: Path) -> Trial:
        path = _write(tmp, "x.txt" + (".gz" if data[:2] == b"\x1f\x8b" else ""), data)
        return Trial(lambda: textio.read_text(path, **limits), path)

    return build


_add(
    "files",
    "byte-limit",
    _limited(b"a\n" * 1000, max_bytes=100),
    Err(("2000 bytes", "limit for one raw file is 100")),
)
_add(
    "files",
    "line-limit",
    _limited(b"a\n" * 1000, max_lines=10),
    Err(("1001 lines", "limit for one raw file is 10")),
)
_add(
    "files",
    "line-length",
    _limited(b"a" * 500 + b"\n", max_line_bytes=100),
    Err(("line longer than the limit of 100",), line=1),
)
_add(
    "files",
    "gzip-bomb",
    _limited(gzip.compress(b"\n" * 2_000_000), max_bytes=100_000),
    Err(("decompresses to more than the limit of 100000 bytes",)),
)
_add(
    "files",
    "within-limits",
    _limited(b"a\nb\n", max_bytes=4, max_lines=3),
    Ok(lambda t: _assert(t == "a\nb\n", t)),
)
_add("files", "summarize-fifo", _special(_fifo, ())[0], Err(("a FIFO",)))
# /proc/version is a regular file whose fstat size is 0 and whose text does not change: it is
# read on past the size fstat gave, whole, and still only up to the byte limit.
_PROC_ZERO_SIZE = Path("/proc/version")
_add(
    "files",
    "proc-file-of-size-0",
    lambda t: Trial(lambda: textio.read_text(_PROC_ZERO_SIZE), _PROC_ZERO_SIZE),
    Ok(lambda t: _assert(len(t) > 1 and t == _PROC_ZERO_SIZE.read_text(), t)),
)
_add(
    "files",
    "proc-file-beyond-the-limit",
    lambda t: Trial(lambda: textio.read_text(_PROC_ZERO_SIZE, max_bytes=10), _PROC_ZERO_SIZE),
    Err(("grew beyond the limit of 10 bytes while being read",)),
)


def _summarize_special(make: Callable[[Path], Path], needs: str) -> Callable[[Path], Trial]:
    def build(tmp: Path) -> Trial:
        path = make(tmp)
        return Trial(lambda: _cli(["--json", str(path)]), path)

    return build


_add("files", "cli-fifo", _summarize_special(_fifo, "FIFO"), Ok(_err_out("FIFO"), counts_as="clear_error"))
_add(
    "files",
    "cli-dev-zero",
    _summarize_special(lambda t: Path("/dev/zero"), "character device"),
    Ok(_err_out("/dev/zero: a character device"), counts_as="clear_error"),
)
_add(
    "files",
    "cli-dev-urandom",
    _summarize_special(lambda t: Path("/dev/urandom"), "character device"),
    Ok(_err_out("/dev/urandom: a character device"), counts_as="clear_error"),
)
_add(
    "files",
    "cli-directory",
    _summarize_special(lambda t: t, "directory"),
    Ok(_err_out("a directory"), counts_as="clear_error"),
)
_add(
    "files",
    "sha256-fifo",
    lambda t: Trial(lambda: textio.sha256_file(_fifo(t)), t / "fifo"),
    Err(("a FIFO",)),
)


# ------------------------------------------------------------------ YAML and manifests


def _yaml(text: str) -> Callable[[Path], Trial]:
    def build(tmp: Path) -> Trial:
        path = _write(tmp, "doc.yaml", text)
        return Trial(lambda: yamlio.load_file(path), path)

    return build


_add(
    "yaml",
    "duplicate-key",
    _yaml("a: 1\nb: 2\na: 3\n"),
    Err(("duplicate key 'a'", "first at line 1"), line=3),
)
_add("yaml", "duplicate-nested", _yaml("x:\n  k: 1\n  k: 2\n"), Err(("duplicate key 'k'",), line=3))
_add("yaml", "duplicate-in-list-item", _yaml("- a: 1\n  a: 1\n"), Err(("duplicate key 'a'",), line=2))
_add("yaml", "duplicate-int-key", _yaml("1: a\n1: b\n"), Err(("duplicate key 1",), line=2))
_add(
    "yaml",
    "scalar-alias-ok",
    _yaml("a: &x 1\nb: [*x, *x]\n"),
    Ok(lambda d: _assert(d.data == {"a": 1, "b": [1, 1]}, d)),
)
_add(
    "yaml",
    "alias-chain-too-deep",
    _yaml("a0: &a0 [1]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 60))),
    Err(("alias bomb", "levels deep"), line=2),
)
_BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)
_add("yaml", "alias-bomb", _yaml(_BOMB), Err(("alias bomb", "490329064 nodes"), line=2))
_add("yaml", "merge-key", _yaml("a:\n  <<: {x: 1}\n"), Err(("merge key",), line=2))
_add("yaml", "deep-flow", _yaml("a: " + "[" * 10000 + "]" * 10000 + "\n"), Err(("nested deeper than 32",)))
_add(
    "yaml",
    "deep-block",
    _yaml("".join("  " * i + f"k{i}:\n" for i in range(40)) + "  " * 40 + "v\n"),
    Err(("nested deeper",)),
)
_add("yaml", "two-documents", _yaml("a: 1\n---\nb: 2\n"), Err(("expected a single document",), line=2))
_add("yaml", "tab-indent", _yaml("a:\n\t- 1\n"), Err(("invalid YAML",), line=2))
_add("yaml", "unclosed-flow", _yaml("a: [1, 2\n"), Err(("invalid YAML",), line=2))
_add("yaml", "unhashable-key", _yaml("? [1, 2]\n: x\n"), Err(("mapping key must be a plain value",), line=1))
_add(
    "yaml",
    "python-tag",
    _yaml("a: !!python/object/apply:os.system ['true']\n"),
    Err(("invalid YAML",), line=1),
)
_add(
    "yaml",
    "too-big",
    lambda t: (lambda p: Trial(lambda: yamlio.load_file(p), p))(_write(t, "big.yaml", "# x\n" * 600_000)),
    Err(("limit",)),
)
_add(
    "yaml",
    "anchor-unused-ok",
    _yaml("a: &x 1\nb: 2\n"),
    Ok(lambda d: _assert(d.data == {"a": 1, "b": 2}, d.data)),
)
_add(
    "yaml",
    "lines-recorded",
    _yaml("a:\n  - x: 1\n  - y: 2\n"),
    Ok(lambda d: _assert(d.line_of(("a", 1, "y")) == 3, d.lines)),
)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


PING_BYTES = PING.encode()


def _entry(path: str = "ping/x.txt", **over: Any) -> dict[str, Any]:
    e = {
        "path": path,
        "tool": "ping",
        "side": "initiator",
        "sha256": _sha(PING_BYTES),
        "labels": {"network": "lan", "interval_s": 0.2},
    }
    e.update(over)
    return e


def _manifest(
    doc: dict[str, Any] | str, setup: Callable[[Path], None] | None = None, call: str = "load"
) -> Callable[[Path], Trial]:
    """A builder: a dataset folder with ping/x.txt (and setup's extras) and the manifest doc."""

    def build(tmp: Path) -> Trial:
        root = tmp / "ds"
        _write(root, "ping/x.txt", PING_BYTES)
        if setup is not None:
            setup(root)
        text = doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
        path = _write(root, "manifest.yaml", text)
        if call == "update":
            return Trial(lambda: dataset.update_checksums(root), path)
        if call == "verify":
            return Trial(
                lambda: [dataset.verify(f) for f in dataset.load(root).files], root / "ping" / "x.txt"
            )
        return Trial(lambda: dataset.load(root), path)

    return build


def _files(n: int) -> Callable[[Any], None]:
    return lambda ds: _assert(len(ds.files) == n, ds.files)


_add("manifest", "valid", _manifest({"dataset": "ds", "files": [_entry()]}), Ok(_files(1)))
_add(
    "manifest",
    "valid-lab-keys",
    _manifest({"lab": {"x": [1]}, "generator": "g", "files": [_entry()]}),
    Ok(_files(1)),
)
_add(
    "manifest",
    "typo-top-level-key",
    _manifest({"iscsi_parameter": {"a": {"MaxBurstLength": 1}}, "files": [_entry()]}),
    Err(("unknown key 'iscsi_parameter'",), line=1, json_path="iscsi_parameter"),
)
_add(
    "manifest",
    "unknown-entry-key",
    _manifest({"files": [_entry(checksum="x")]}),
    Err(("unknown key 'checksum'",), json_path="files[0].checksum"),
)
_add(
    "manifest",
    "duplicate-key",
    _manifest("files:\n- path: ping/x.txt\n  path: ping/y.txt\n"),
    Err(("duplicate key 'path'",), line=3),
)
_add(
    "manifest",
    "alias-bomb",
    _manifest(_BOMB + "files: []\n"),
    Err(("alias bomb",), line=2),
)
_add(
    "manifest",
    "tool-typo",
    _manifest({"files": [_entry(tool="pnig")]}),
    Err(("'ping'", "'pnig'"), json_path="files[0].tool"),
)
_add(
    "manifest",
    "side-typo",
    _manifest({"files": [_entry(side="both")]}),
    Err(("'initiator'",), json_path="files[0].side"),
)
_add(
    "manifest",
    "bad-sha256",
    _manifest({"files": [_entry(sha256="TODO")]}),
    Err(("should match pattern",), json_path="files[0].sha256"),
)
_add(
    "manifest",
    "sha256-int",
    _manifest({"files": [_entry(sha256=5)]}),
    Err(("valid string",), json_path="files[0].sha256"),
)
_add(
    "manifest",
    "interval-missing",
    _manifest({"files": [_entry(labels={"network": "lan"})]}),
    Err(("label interval_s", "positive number"), json_path="files[0]"),
)


def _interval_manifest(value: Any) -> str:
    """A one-file manifest whose interval_s label is written as YAML ``value`` (line 7)."""
    text = value if not isinstance(value, str) or value.startswith(".") else repr(value)
    return (
        f"files:\n- path: ping/x.txt\n  tool: ping\n  side: initiator\n  sha256: {_sha(PING_BYTES)}\n"
        f"  labels:\n    interval_s: {text}\n"
    )


for _v, _tag in (
    ("nan", ".nan"),
    ("inf", ".inf"),
    ("negative", -0.2),
    ("zero", 0),
    ("string", "0.2"),
    ("bool", True),
):
    _add(
        "manifest",
        f"interval-{_v}",
        _manifest(
            _interval_manifest(_tag),
        ),
        Err(("interval_s",), line=7, json_path="files[0].labels.interval_s"),
    )
_add("manifest", "interval-int-ok", _manifest({"files": [_entry(labels={"interval_s": 1})]}), Ok(_files(1)))
_add(
    "manifest",
    "bs-bytes-float",
    _manifest({"files": [_entry(labels={"interval_s": 1, "bs_bytes": 65536.5})]}),
    Err(("valid integer",), json_path="files[0].labels.bs_bytes"),
)
_add(
    "manifest",
    "bs-bytes-bool",
    _manifest({"files": [_entry(labels={"interval_s": 1, "bs_bytes": True})]}),
    Err(("valid integer",), json_path="files[0].labels.bs_bytes"),
)
_add(
    "manifest",
    "network-bool",
    _manifest(
        "files:\n- path: ping/x.txt\n  tool: ping\n  side: initiator\n  sha256: "
        + _sha(PING_BYTES)
        + "\n  labels: {network: no, interval_s: 1}\n"
    ),
    Err(("valid string",), line=6, json_path="files[0].labels.network"),
)
_add(
    "manifest",
    "label-list-value",
    _manifest({"files": [_entry(labels={"interval_s": 1, "colour": [1, 2]})]}),
    Err(("colour",), json_path="files[0].labels.colour"),
)
_add(
    "manifest",
    "labels-not-mapping",
    _manifest({"files": [_entry(labels=[1])]}),
    Err(("labels",), json_path="files[0].labels"),
)
_add(
    "manifest",
    "title-int",
    _manifest({"title": 5, "files": [_entry()]}),
    Err(("valid string",), json_path="title"),
)
_add(
    "manifest",
    "reconstructed-string",
    _manifest({"reconstructed": "yes", "files": [_entry()]}),
    Err(("valid boolean",), json_path="reconstructed"),
)
_add("manifest", "files-missing", _manifest({"title": "t"}), Err(("missing key 'files'",), json_path="files"))
_add("manifest", "files-not-list", _manifest({"files": {"a": 1}}), Err(("valid list",), json_path="files"))
_add("manifest", "empty", _manifest(""), Err(("expected a mapping with a 'files' list",)))
_add("manifest", "top-level-list", _manifest("- 1\n"), Err(("expected a mapping with a 'files' list",)))
_add(
    "manifest",
    "path-escapes",
    _manifest({"files": [_entry("../outside.txt")]}),
    Err(("leaves the dataset folder",), json_path="files[0].path"),
)
_add(
    "manifest",
    "absolute-path",
    _manifest({"files": [_entry("/etc/passwd")]}),
    Err(("leaves the dataset folder",), json_path="files[0].path"),
)
_add(
    "manifest",
    "path-missing",
    _manifest({"files": [_entry("ping/nope.txt")]}),
    Err(("does not exist",), line=2, json_path="files[0].path"),
)
_add(
    "manifest",
    "path-directory",
    _manifest({"files": [_entry("ping")]}),
    Err(("is not a regular file",), json_path="files[0].path"),
)
_add(
    "manifest",
    "path-empty",
    _manifest({"files": [_entry("")]}),
    Err(("at least 1 character",), json_path="files[0].path"),
)
_add(
    "manifest",
    "path-fifo",
    _manifest({"files": [_entry("ping/f")]}, setup=lambda r: os.mkfifo(r / "ping" / "f")),
    Err(("is not a regular file",), json_path="files[0].path"),
)
_add(
    "manifest",
    "listed-twice-dot-slash",
    _manifest({"files": [_entry(), _entry("./ping/x.txt")]}),
    Err(("listed twice", "files[0].path ping/x.txt"), json_path="files[1].path"),
)
_add(
    "manifest",
    "listed-twice-dotdot",
    _manifest({"files": [_entry(), _entry("ping/../ping/x.txt")]}),
    Err(("listed twice",), json_path="files[1].path"),
)
_add(
    "manifest",
    "listed-twice-symlink",
    _manifest(
        {"files": [_entry(), _entry("ping/y.txt")]},
        setup=lambda r: (r / "ping" / "y.txt").symlink_to("x.txt"),
    ),
    Err(("listed twice",), json_path="files[1].path"),
)
_add(
    "manifest",
    "listed-twice-hardlink",
    _manifest(
        {"files": [_entry(), _entry("ping/y.txt")]},
        setup=lambda r: os.link(r / "ping" / "x.txt", r / "ping" / "y.txt"),
    ),
    Err(("listed twice",), json_path="files[1].path"),
)
_add(
    "manifest",
    "two-distinct-copies-ok",
    _manifest(
        {"files": [_entry(), _entry("ping/y.txt")]},
        setup=lambda r: (r / "ping" / "y.txt").write_bytes(PING_BYTES),
    ),
    Ok(_files(2)),
)
_add(
    "manifest",
    "symlink-out-of-dataset",
    _manifest(
        {"files": [_entry("ping/y.txt")]}, setup=lambda r: (r / "ping" / "y.txt").symlink_to("/etc/hostname")
    ),
    Err(("leaves the dataset folder",), json_path="files[0].path"),
)
_add(
    "manifest",
    "symlink-to-etc-passwd",
    _manifest(
        {"files": [_entry("ping/y.txt")]}, setup=lambda r: (r / "ping" / "y.txt").symlink_to("/etc/passwd")
    ),
    Err(("leaves the dataset folder",), json_path="files[0].path"),
)
_add(
    "manifest",
    "checksum-mismatch-names-command",
    _manifest({"files": [_entry(sha256="0" * 64)]}, call="verify"),
    Err(("sha256 is", "iscsi-report dataset update"), error=IngestError),
)
_add(
    "manifest",
    "iscsi-parameters-nested-list",
    _manifest({"iscsi_parameters": {"lio": {"MaxBurstLength": [1]}}, "files": [_entry()]}),
    Err(("MaxBurstLength",), json_path="iscsi_parameters.lio.MaxBurstLength"),
)
_add(
    "manifest",
    "update-checksums",
    _manifest({"files": [_entry(sha256="0" * 64)]}, call="update"),
    Ok(lambda n: _assert(n == 1, n)),
)


def _read_only(build: Callable[[Path], Trial]) -> Callable[[Path], Trial]:
    """The same trial with the atomic writer's temporary file refused as on a read-only mount
    (EROFS; root ignores mode bits, and the temporary name is unique, so it cannot be blocked)."""

    def wrapped(tmp: Path) -> Trial:
        trial = build(tmp)

        def call() -> Any:
            refused = OSError(errno.EROFS, os.strerror(errno.EROFS))
            with mock.patch.object(atomic, "open", side_effect=refused, create=True):
                return trial.call()

        return Trial(call, trial.file)

    return wrapped


_add(
    "manifest",
    "update-checksums-unwritable",
    _read_only(_manifest({"files": [_entry(sha256="0" * 64)]}, call="update")),
    Err(("cannot write the updated checksums", "read-only data?")),
)
_add(
    "manifest",
    "update-checksums-duplicate-key",
    _manifest("files: []\nfiles: []\n", call="update"),
    Err(("duplicate key 'files'",), line=2),
)


# ------------------------------------------------------------------ params


def _params(text: str, call: str = "load") -> Callable[[Path], Trial]:
    """A builder: a project with notebook chap.md (parameters bins=20, ci_level=0.95) and params."""

    def build(tmp: Path) -> Trial:
        import jupytext
        import nbformat

        from iscsi_report.core.paths import Project
        from iscsi_report.pipeline.params import jobs_for, load_run

        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell(
            "run_name = ''\ndataset = ''\nproject_root = ''\nresults_dir = ''\nbins = 20\nci_level = 0.95\n"
        )
        cell.metadata["tags"] = ["parameters"]
        nb.cells = [nbformat.v4.new_markdown_cell("# t"), cell]
        (tmp / "notebooks").mkdir(parents=True, exist_ok=True)
        jupytext.write(nb, tmp / "notebooks" / "chap.md", fmt="md:myst")
        _write(tmp, "data/raw/ds/manifest.yaml", "files: []\n")
        path = _write(tmp, "params/run.yaml", text)
        project = Project.at(tmp)
        return Trial(lambda: jobs_for(project, load_run(path)), path)

    return build


def _p(extra: str = "", notebooks: str = "[chap]") -> str:
    return f"title: t\ndataset: ds\nnotebooks: {notebooks}\n{extra}"


_add("params", "valid", _params(_p()), Ok(lambda jobs: _assert(len(jobs) == 1, jobs)))
_add(
    "params",
    "valid-override",
    _params(_p(notebooks="[{chap: {ci_level: 0.9}}]")),
    Ok(lambda j: _assert(j[0].parameters["ci_level"] == 0.9, j)),
)
_add(
    "params",
    "duplicate-key",
    _params(_p("title: u\n")),
    Err(("duplicate key 'title'",), line=4, error=ParamsError),
)
_add(
    "params",
    "alias-bomb",
    _params(_BOMB + "title: t\nnotebooks: [chap]\n"),
    Err(("alias bomb",), line=2, error=ParamsError),
)
_add(
    "params",
    "scalar-alias-ok",
    _params("title: &t x\ndescription: *t\nnotebooks: [chap]\n"),
    Ok(lambda jobs: _assert(len(jobs) == 1, jobs)),
)
_add(
    "params",
    "unknown-key",
    _params(_p("timeout: 5\n")),
    Err(("unknown key 'timeout'",), line=4, error=ParamsError),
)
_add(
    "params",
    "missing-title",
    _params("notebooks: [chap]\n"),
    Err(("missing key 'title'",), error=ParamsError),
)
_add(
    "params",
    "timeout-bool",
    _params(_p("timeout_s: true\n")),
    Err(("key 'timeout_s': expected a positive integer",), error=ParamsError),
)
_add(
    "params",
    "timeout-negative",
    _params(_p("timeout_s: -1\n")),
    Err(("positive integer",), error=ParamsError),
)
_add(
    "params",
    "timeout-string",
    _params(_p("timeout_s: 5 minutes\n")),
    Err(("positive integer", "'5 minutes'"), error=ParamsError),
)
_add(
    "params",
    "dataset-traversal",
    _params("title: t\ndataset: ../../etc\nnotebooks: [chap]\n"),
    Err(("key 'dataset'", "dataset name"), line=2, error=ParamsError),
)
_add(
    "params",
    "dataset-int",
    _params("title: t\ndataset: 5\nnotebooks: [chap]\n"),
    Err(("key 'dataset'",), error=ParamsError),
)
_add("params", "notebooks-empty", _params(_p(notebooks="[]")), Err(("non-empty list",), error=ParamsError))
_add(
    "params", "notebooks-not-list", _params(_p(notebooks="chap")), Err(("non-empty list",), error=ParamsError)
)
_add(
    "params",
    "notebook-traversal",
    _params(_p(notebooks="['../../x']")),
    Err(("expected a notebook name",), error=ParamsError),
)
_add("params", "notebook-unknown", _params(_p(notebooks="[nope]")), Err(("no notebook",), error=ParamsError))
_add(
    "params",
    "override-unknown",
    _params(_p(notebooks="[{chap: {bogus: 1}}]")),
    Err(("notebooks.chap.bogus: unknown parameter",), error=ParamsError),
)
_add(
    "params",
    "override-int-key",
    _params(_p(notebooks="[{chap: {1: 2}}]")),
    Err(("parameter names are strings",), error=ParamsError),
)
for _v in ("1.5", "1", "0", "-0.1", "1.0"):
    _add(
        "params",
        f"ci-level-{_v}",
        _params(_p(notebooks=f"[{{chap: {{ci_level: {_v}}}}}]")),
        Err(("ci_level", "strictly between 0 and 1"), error=ParamsError),
    )
for _v in (".nan", ".inf", "-.inf"):
    _add(
        "params",
        f"override-{_v}",
        _params(_p(notebooks=f"[{{chap: {{ci_level: {_v}}}}}]")),
        Err(("expected a finite number",), error=ParamsError),
    )
_add(
    "params",
    "ci-level-string",
    _params(_p(notebooks="[{chap: {ci_level: high}}]")),
    Err(("expected float, got str 'high'",), error=ParamsError),
)
_add(
    "params",
    "not-mapping",
    _params("- a\n"),
    Err(("expected a mapping at the top level",), error=ParamsError),
)
_add("params", "empty", _params(""), Err(("expected a mapping at the top level",), error=ParamsError))


def _assert(condition: Any, detail: Any) -> None:
    """assert with the value shown when it fails."""
    assert condition, repr(detail)[:300]


# ------------------------------------------------------------------ what a chapter counts


def _network(labels: list[dict[str, Any]]) -> Callable[[Path], Trial]:
    """A dataset built in code (no manifest check) of ping files with the given labels; the
    call returns (replies counted in prose, replies in the summary table)."""

    def build(tmp: Path) -> Trial:
        from iscsi_report.analyses import network

        files = []
        for i, lab in enumerate(labels):
            path = _write(tmp, f"p{i}.txt", PING_BYTES)
            files.append(dataset.RawFile(path, path.name, "ping", "initiator", _sha(PING_BYTES), lab))
        ds = Measurements(dataset.Dataset("t", tmp, "t", False, "", {}, files))

        def call() -> tuple[int, int]:
            samples = network.rtt_samples(ds)
            return len(samples), int(network.latency_summary(samples)["samples"].sum())

        return Trial(call, None)

    return build


_N = PING.count(" time=")
for _id, _labels in (
    ("interval-missing", [{"network": "a", "interval_s": 1.0}, {"network": "a"}]),
    ("interval-nan", [{"network": "a", "interval_s": float("nan")}, {"network": "b", "interval_s": 1.0}]),
    ("network-missing", [{"interval_s": 1.0}, {"network": "a", "interval_s": 1.0}]),
):
    _add("network", _id, _network(_labels), Ok(lambda r: _assert(r == (2 * _N, 2 * _N), r)))


# ------------------------------------------------------------------ round three (issue #24): parsers
# Families: every parser x each encoding or container malformation, then each parser's own
# absurd or contradictory values.


def _signature(module: Any, result: Any) -> Any:
    """What a parse must reproduce whatever the encoding: the rows it read."""
    if module is ping:
        return result.rtt_ms.tolist()
    if module is iperf3:
        return iperf3.summary(result)["sent_bps"]
    if module is fio:
        return result.jobs.to_dict("records")
    if module is tshark:
        return result.pdus[["frame", "pdu"]].to_dict("records")
    return len(result.devices), len(result.cpu)


def _same_as(module: Any, text: str) -> Callable[[Any], None]:
    """Check: the result reads what the plain UTF-8 text reads (a non-empty signature)."""

    def check(result: Any) -> None:
        expected = _signature(module, module.parse_text(text, "plain"))
        got = _signature(module, result)
        _assert(got == expected and got, (got, expected))

    return check


def _zip(text: str) -> bytes:
    """text as the one member of a zip archive."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("out.txt", text)
    return buf.getvalue()


TSHARK_TEXT = (
    "\t".join(tshark.REQUIRED_FIELDS)
    + "\n"
    + "".join(f"{n}\t1700000000.{n:06d}\t0\t0x21\t0x{n:x}\t0\n" for n in range(1, 4))
)  # three SCSI responses, each frame one PDU
_PARSERS = (
    ("ping", ping, "p.txt", PING),
    ("iperf3", iperf3, "i.json", IPERF_TEXT),
    ("fio", fio, "f.json", FIO_TEXT),
    ("iostat", iostat, "io.txt", IOSTAT_X),
    ("iostat-json", iostat, "io.json", IOSTAT_JSON),
    ("tshark", tshark, "t.tsv", TSHARK_TEXT),
)
for _tag, _mod, _name, _text in _PARSERS:
    _group = "iostat" if _tag.startswith("iostat") else _tag
    for _enc_id, _bytes in (
        ("utf16-le-bom", _text.encode("utf-16")),
        ("utf16-be-bom", codecs.BOM_UTF16_BE + _text.encode("utf-16-be")),
        ("utf16-le-no-bom", _text.encode("utf-16-le")),
        ("utf8-bom", codecs.BOM_UTF8 + _text.encode()),
        ("cr-only", _text.replace("\n", "\r").encode()),
        ("gzip-utf16", gzip.compress(_text.encode("utf-16"))),
    ):
        _add(_group, f"{_tag}-{_enc_id}", _parse(_mod, _name, _bytes), Ok(_same_as(_mod, _text)))
    for _bad_id, _bytes, _needs in (
        ("empty-file", b"", ("empty file",)),
        ("blank-lines-only", b"\n  \n\t\n", ("empty file",)),
        ("gzip-in-gzip", gzip.compress(gzip.compress(_text.encode())), ("gzip data inside gzip",)),
        ("xz-in-gzip", gzip.compress(lzma.compress(_text.encode())), ("xz data inside gzip",)),
        ("bzip2", bz2.compress(_text.encode()), ("bzip2-compressed", "recompress with gzip")),
        ("zstd-magic", b"\x28\xb5\x2f\xfd" + b"\x00" * 32, ("zstd-compressed",)),
        ("zip", _zip(_text), ("zip-compressed",)),
        ("utf16-odd-byte", codecs.BOM_UTF16_LE + b"P\x00I\x00N", ("not valid UTF-16-LE",)),
    ):
        _add(_group, f"{_tag}-{_bad_id}", _parse(_mod, _name, _bytes), Err(_needs))

# duplicate JSON keys: refused with their JSON path in every JSON input (equal repeats, which
# fio and iperf3 3.6 write themselves, lose nothing and are read)


def _dup(text: str, key: str) -> str:
    """text with the placeholder key __dup__ renamed to key: that key is now written twice."""
    return text.replace('"__dup__"', json.dumps(key))


_add(
    "fio",
    "duplicate-iops",
    _parse(fio, "f.json", _dup(_fio_with(_set([*_W, "__dup__"], 1.0)), "iops")),
    Err(("duplicate key 'iops'", "two different values"), json_path="jobs[0].write.iops"),
)
_add(
    "fio",
    "duplicate-iops-same-value-ok",
    _parse(
        fio, "f.json", _dup(_fio_with(_set([*_W, "__dup__"], FIO_DOC["jobs"][0]["write"]["iops"])), "iops")
    ),
    Ok(_fio_row("iops", float(FIO_DOC["jobs"][0]["write"]["iops"]))),
)
_add(
    "fio",
    "duplicate-jobs",
    _parse(fio, "f.json", _dup(_fio_with(_set(["__dup__"], [])), "jobs")),
    Err(("duplicate key 'jobs'",), json_path="jobs"),
)
_add(
    "iperf3",
    "duplicate-end",
    _parse(iperf3, "i.json", _dup(_iperf_with(_set(["__dup__"], {"sum_sent": None})), "end")),
    Err(("duplicate key 'end'",), json_path="end"),
)
_add(
    "iperf3",
    "duplicate-bits-per-second",
    _parse(iperf3, "i.json", _dup(_iperf_with(_set(["end", "sum_sent", "__dup__"], 1.0)), "bits_per_second")),
    Err(("duplicate key 'bits_per_second'",), json_path="end.sum_sent.bits_per_second"),
)
_j = json.loads(IOSTAT_JSON)
_j["sysstat"]["hosts"][0]["statistics"][0]["disk"][0]["__dup__"] = 1.0
_add(
    "iostat",
    "json-duplicate-disk-key",
    _parse(iostat, "io.json", _dup(json.dumps(_j), "r/s")),
    Err(("duplicate key 'r/s'",), json_path="sysstat.hosts[0].statistics[0].disk[0].r/s"),
)
_j = json.loads(IOSTAT_JSON)
_j["sysstat"]["hosts"][0]["statistics"][0]["__dup__"] = []
_add(
    "iostat",
    "json-duplicate-disk-list",
    _parse(iostat, "io.json", _dup(json.dumps(_j), "disk")),
    Err(("duplicate key 'disk'",), json_path="sysstat.hosts[0].statistics[0].disk"),
)

# fio: values fio never writes, and options that contradict the figures

_add(
    "fio",
    "bs-1P",
    _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "job options", "bs"], "1P"))),
    Err(("bs=1P", "beyond"), json_path="jobs[0].job options.bs"),
)
_add(
    "fio",
    "bs-4G",
    _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "job options", "bs"], "4g"))),
    Err(("beyond",), json_path="jobs[0].job options.bs"),
)
_add(
    "fio",
    "bs-1M-ok",
    _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "job options", "bs"], "1M"))),
    Ok(_fio_row("bs_bytes", 1048576.0)),
)
for _key in ("nan", "inf", "-inf", "-5.0", "100.5"):
    _add(
        "fio",
        f"percentile-key-{_key}",
        _parse(fio, "f.json", _fio_with(_set([*_W, "clat_ns", "percentile"], {_key: 1000}))),
        Err(("percentile key", "between 0 and 100"), json_path="jobs[0].write.clat_ns.percentile"),
    )
_add(
    "fio",
    "p99-1e308-ns",
    _parse(fio, "f.json", _fio_with(_set([*_W, "clat_ns", "percentile", "99.000000"], 1e308))),
    Err(("beyond a 64-bit counter",), json_path="jobs[0].write.clat_ns.percentile.99.000000"),
)
_add(
    "fio",
    "p99-negative",
    _parse(fio, "f.json", _fio_with(_set([*_W, "clat_ns", "percentile", "99.000000"], -1))),
    Err(("negative",), json_path="jobs[0].write.clat_ns.percentile.99.000000"),
)


def _no_io(doc: dict) -> None:
    doc["jobs"][0]["write"].update(io_bytes=0, total_ios=0)


_add(
    "fio",
    "write-job-no-io",
    _parse(fio, "f.json", _fio_with(_no_io)),
    Err(("did no I/O", "rw=write"), json_path="jobs[0]"),
)
for _rw in ("trim", "randtrim", "read", "randread"):
    _add(
        "fio",
        f"rw-{_rw}-reports-writes",
        _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "job options", "rw"], _rw))),
        Err((f"rw={_rw}", "write I/O", "disagree"), json_path="jobs[0].write.io_bytes"),
    )
for _rw in ("randwrite", "write:4", "randrw", "trimwrite"):
    _add(
        "fio",
        f"rw-{_rw}-writes-ok",
        _parse(fio, "f.json", _fio_with(_set(["jobs", 0, "job options", "rw"], _rw))),
        Ok(lambda r, rw=_rw: _assert(r.jobs["rw"].tolist() == [rw], r.jobs["rw"])),
    )
_TERSE = "3;fio-3.33;job;0;0;0;0;0;0;0;0;0.000000;0.000000;0;0\n"
_add(
    "fio",
    "terse",
    _parse(fio, "f.txt", _TERSE),
    Err(("fio terse output", "--output-format=json")),
)
_add("fio", "json-array", _parse(fio, "f.json", "[1, 2]\n"), Err(("no fio JSON output found",)))

# iperf3

for _where, _jp in (
    (["end", "sum_sent", "bits_per_second"], "end.sum_sent.bits_per_second"),
    (["end", "sum_received", "bits_per_second"], "end.sum_received.bits_per_second"),
    (["intervals", 0, "sum", "bits_per_second"], "intervals[0].sum.bits_per_second"),
    (["intervals", 1, "streams", 0, "bits_per_second"], "intervals[1].streams[0].bits_per_second"),
):
    for _v in (1e300, 1e308, 2e13):
        _add(
            "iperf3",
            f"rate-{_v:g}-{_jp}",
            _parse(iperf3, "i.json", _iperf_with(_set(_where, _v))),
            Err(("beyond", "10 Tbit/s"), json_path=_jp),
        )
_add(
    "iperf3",
    "rate-400G-ok",
    _parse(iperf3, "i.json", _iperf_with(_set(["end", "sum_sent", "bits_per_second"], 4e11))),
    Ok(lambda r: _assert(iperf3.summary(r)["sent_bps"] == 4e11, iperf3.summary(r))),
)
for _side in ("sum_sent", "sum_received"):
    _add(
        "iperf3",
        f"end-bytes-string-{_side}",
        _parse(iperf3, "i.json", _iperf_with(_set(["end", _side, "bytes"], "48982896"))),
        Err(("expected a number",), json_path=f"end.{_side}.bytes"),
    )
    _add(
        "iperf3",
        f"end-seconds-0-{_side}",
        _parse(iperf3, "i.json", _iperf_with(_set(["end", _side, "seconds"], 0))),
        Err(("0 seconds", "duration > 0"), json_path=f"end.{_side}.seconds"),
    )
_add(
    "iperf3",
    "end-bytes-fraction",
    _parse(iperf3, "i.json", _iperf_with(_set(["end", "sum_sent", "bytes"], 1.5))),
    Err(("expected a byte count",), json_path="end.sum_sent.bytes"),
)
_add(
    "iperf3",
    "interval-seconds-0",
    _parse(iperf3, "i.json", _iperf_with(_set(["intervals", 0, "sum", "seconds"], 0))),
    Err(("0 seconds",), json_path="intervals[0].sum.seconds"),
)
_add(
    "iperf3",
    "interval-seconds-negative",
    _parse(iperf3, "i.json", _iperf_with(_set(["intervals", 0, "streams", 0, "seconds"], -1))),
    Err(("duration",), json_path="intervals[0].streams[0].seconds"),
)
_add("iperf3", "empty-object", _parse(iperf3, "i.json", "{}\n"), Err(("empty JSON object",)))
_add("iperf3", "json-array-named", _parse(iperf3, "i.json", "[1, 2]\n"), Err(("JSON array",)))

# iostat


def _iostat_x(edit: Callable[[str], str]) -> str:
    return edit(IOSTAT_X)


_IOSTAT_X_LINES = IOSTAT_X.splitlines()
_add(
    "iostat",
    "util-250",
    _parse(iostat, "io.txt", IOSTAT_X.replace("  12.34\n", " 250.00\n")),
    Err(("util_pct is 250", "beyond 100"), line=7),
)
_add(
    "iostat",
    "rrqm-pct-300",
    _parse(iostat, "io.txt", IOSTAT_X.replace("   1.29 ", " 300.00 ", 1)),
    Err(("rrqm_pct is 300",), line=7),
)
_add(
    "iostat",
    "cpu-sum-430",
    _parse(iostat, "io.txt", IOSTAT_X.replace("88.88", "88.88", 1).replace("  5.91", "335.91", 1)),
    Err(("avg-cpu shares add up to 430", "expected 100"), line=4),
)
_add(
    "iostat",
    "cpu-sum-50",
    _parse(iostat, "io.txt", IOSTAT_X.replace("88.88", "38.88", 1)),
    Err(("add up to 50",), line=4),
)
_add(
    "iostat",
    "device-header-no-rows",
    _parse(iostat, "io.txt", IOSTAT_X.replace(IOSTAT_X.splitlines()[6] + "\n", "")),
    Err(("Device header with no device rows",), line=6),
)
_j = json.loads(IOSTAT_JSON)
_j["sysstat"]["hosts"][0]["statistics"][0]["disk"][0]["util"] = 250.0
_add(
    "iostat",
    "json-util-250",
    _parse(iostat, "io.json", json.dumps(_j)),
    Err(("util_pct is 250",), json_path="statistics[0].disk[0]"),
)
_j = json.loads(IOSTAT_JSON)
_j["sysstat"]["hosts"][0]["statistics"][0]["avg-cpu"]["user"] = 335.89
_add(
    "iostat",
    "json-cpu-sum-430",
    _parse(iostat, "io.json", json.dumps(_j)),
    Err(("add up to 430",), json_path="statistics[0].avg-cpu"),
)
_add(
    "iostat",
    "json-truncated-in-header",
    _parse(iostat, "io.json", IOSTAT_JSON[: IOSTAT_JSON.index('"statistics"') - 20]),
    Err(("truncated",)),
)
_add(
    "iostat",
    "json-truncated-in-first-report",
    _parse(iostat, "io.json", IOSTAT_JSON[: IOSTAT_JSON.index('"disk_device"') + 30]),
    Err(("truncated before its first complete report",)),
)

# ping


def _ping_d(stamps: list[str]) -> str:
    body = "".join(f"[{t}] " + _reply(i + 1) for i, t in enumerate(stamps))
    n = len(stamps)
    return PING_HEAD + body + FOOT.format(tx=n, rx=n, loss=0)


_add(
    "ping",
    "rtt-309-digits",
    _parse(ping, "p.txt", _ping_log(["0.5", "9" * 309])),
    Err(("round-trip time inf ms", "beyond"), line=3),
)
_add(
    "ping",
    "rtt-two-days",
    _parse(ping, "p.txt", _ping_log(["0.5", "172800000.0"])),
    Err(("round-trip time 1.728e+08 ms",), line=3),
)
_add(
    "ping",
    "D-timestamps-backwards",
    _parse(ping, "p.txt", _ping_d(["1700000000.100000", "1700000000.300000", "1699990000.500000"])),
    Err(("timestamps go backwards",), line=4),
)
_add(
    "ping",
    "D-timestamps-small-step-back-ok",
    _parse(ping, "p.txt", _ping_d(["1700000000.100000", "1700000000.300000", "1700000000.200000"])),
    Ok(_samples(3)),
)
_add(
    "ping",
    "reply-from-other-host",
    _parse(ping, "p.txt", _ping_log(["0.5"], extra=_reply(2).replace("10.0.0.2", "10.0.0.9"))),
    Err(("reply from '10.0.0.9'", "pings 10.0.0.2"), line=3),
)
_add(
    "ping",
    "reply-from-reverse-name-ok",
    _parse(
        ping,
        "p.txt",
        "PING example.test (10.0.0.2) 56(84) bytes of data.\n"
        "64 bytes from host-2.example.test (10.0.0.2): icmp_seq=1 ttl=64 time=0.5 ms\n",
    ),
    Ok(_samples(1, [0.5])),
)
_add(
    "ping",
    "reply-from-other-host-named",
    _parse(
        ping,
        "p.txt",
        "PING example.test (10.0.0.2) 56(84) bytes of data.\n"
        "64 bytes from host-2.example.test (10.0.0.3): icmp_seq=1 ttl=64 time=0.5 ms\n",
    ),
    Err(("replies from another host",), line=2),
)
_add(
    "ping",
    "mixed-variants",
    _parse(ping, "p.txt", _ping_log(["0.5"], extra="64 bytes from 10.0.0.2: seq=2 ttl=64 time=0.600 ms\n")),
    Err(("mixes ping variants", "'seq='"), line=3),
)
_WINDOWS_PING = (
    "\nPinging 10.0.0.2 with 32 bytes of data:\n"
    "Reply from 10.0.0.2: bytes=32 time<1ms TTL=128\n"
    "Reply from 10.0.0.2: bytes=32 time=1ms TTL=128\n\n"
    "Ping statistics for 10.0.0.2:\n"
    "    Packets: Sent = 2, Received = 2, Lost = 0 (0% loss),\n"
)
_add("ping", "windows", _parse(ping, "p.txt", _WINDOWS_PING), Err(("Windows ping output", "iputils"), line=2))
_add(
    "ping",
    "windows-utf16",
    _parse(ping, "p.txt", _WINDOWS_PING.replace("\n", "\r\n").encode("utf-16")),
    Err(("Windows ping output",), line=2),
)
_add(
    "ping",
    "mixed-windows-and-linux",
    _parse(ping, "p.txt", _ping_log(["0.5"], extra=_WINDOWS_PING)),
    Err(("mixes Windows ping output",)),
)

# summarize: the same inputs through the CLI (one clear stderr line, exit 2)

for _id, _name, _data, _needs in (
    ("empty", "e.txt", "", ("e.txt:", "empty file")),
    ("json-array", "a.json", "[1, 2]\n", ("a.json:", "JSON array")),
    ("iperf3-empty-object", "o.json", "{}\n", ("o.json:", "empty JSON object")),
    ("fio-terse", "t.txt", _TERSE, ("t.txt:", "--output-format=json")),
    ("windows-ping", "w.txt", _WINDOWS_PING, ("w.txt:2:", "Windows ping")),
    ("ping-309-digit-rtt", "r.txt", _ping_log(["9" * 309]), ("r.txt:2:", "round-trip time")),
    ("bzip2", "b.txt", bz2.compress(PING.encode()), ("b.txt:", "bzip2")),
):
    _add("summarize", _id, _summarize(_name, _data, "--json"), Ok(_err_out(*_needs), counts_as="clear_error"))
for _id, _data in (
    ("utf16-ping", PING.encode("utf-16")),
    ("bom-fio", codecs.BOM_UTF8 + FIO_TEXT.encode()),
    ("cr-only-ping", PING.replace("\n", "\r").encode()),
):
    _add(
        "summarize",
        f"{_id}-read",
        _summarize("x.txt", _data, "--json"),
        Ok(_json_out(lambda s: _assert(s["tool"] in ("ping", "fio") and s["format"], s))),
    )

# ------------------------------------------------------------------ round three: --root and --scheduler


def _main(argv: list[str]) -> tuple[int, str, str]:
    """``iscsi-report ARGV`` in process: (exit status, stdout, stderr); argparse's exit caught."""
    from iscsi_report import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except SystemExit as exc:
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def _project_dir(tmp: Path) -> Path:
    """A folder that is a project root (it has params/)."""
    (tmp / "proj" / "params").mkdir(parents=True, exist_ok=True)
    return tmp / "proj"


def _root_case(
    root: Callable[[Path], str], command: str = "run", created: Callable[[Path], Path] | None = None
) -> Callable[[Path], Trial]:
    """A builder: ``iscsi-report --root ROOT COMMAND``; the call also reports whether the path
    ``created`` names exists afterwards (nothing may be created)."""

    def build(tmp: Path) -> Trial:
        given = root(tmp)

        def call() -> tuple[int, str, str]:
            target = created(tmp) if created is not None else None
            before = (target.exists(), target.parent.exists()) if target is not None else (True, True)
            status, out, err = _main(["--root", given, command])
            if target is not None and target.exists() and not before[0]:
                err += f"created {target}\n"
                _undo_create(target, parent_too=not before[1])
            return status, out, err

        return Trial(call, None)

    return build


def _undo_create(path: Path, parent_too: bool) -> None:
    """Remove what a failing case created: the file (or empty folder), and its parent when the
    case created that too and it is empty."""
    with contextlib.suppress(OSError):
        path.unlink() if path.is_file() else path.rmdir()
    if parent_too:
        with contextlib.suppress(OSError):
            path.parent.rmdir()


def _read_only_root(tmp: Path) -> Callable[[], Any]:
    """os.access refusing writes, as on a read-only folder (root ignores mode bits)."""
    return mock.patch("iscsi_report.core.paths.os.access", return_value=False)


def _ro_case(command: str) -> Callable[[Path], Trial]:
    def build(tmp: Path) -> Trial:
        given = str(_project_dir(tmp))

        def call() -> tuple[int, str, str]:
            with _read_only_root(tmp):
                return _main(["--root", given, command])

        return Trial(call, None)

    return build


for _cmd in ("run", "build", "book"):
    for _id, _root, _needs in (
        ("dev-null", lambda t: "/dev/null", ("--root /dev/null", "character device")),
        ("regular-file", lambda t: str(_write(t, "f.txt", "x")), ("--root", "a regular file")),
        ("5000-chars", lambda t: "/tmp/" + "a" * 4995, ("--root", "5000 bytes", "4096")),
        ("long-name", lambda t: str(t / ("n" * 300)), ("--root", "longer than 255")),
        ("proc", lambda t: "/proc", ("--root /proc", "pseudo-filesystem")),
        ("proc-self", lambda t: "/proc/self", ("--root /proc/self", "pseudo-filesystem")),
        ("nul-byte", lambda t: str(t) + "\x00x", ("--root", "NUL byte")),
        ("not-a-project", lambda t: str(t), ("--root", "not a project folder")),
        ("file-in-path", lambda t: str(_write(t, "f.txt", "x")) + "/sub", ("--root", "is a file")),
    ):
        _add("root", f"{_cmd}-{_id}", _root_case(_root, _cmd), Ok(_err_out(*_needs), counts_as="clear_error"))
    _add(
        "root",
        f"{_cmd}-slash-creates-nothing",
        _root_case(lambda t: "/", _cmd, created=lambda t: Path("/.cache/pipeline.lock")),
        Ok(_err_out("--root /:", "filesystem root"), counts_as="clear_error"),
    )
    _add(
        "root",
        f"{_cmd}-missing-parent-creates-nothing",
        _root_case(lambda t: str(t / "missing" / "x"), _cmd, created=lambda t: t / "missing"),
        Ok(_err_out("--root", "no such folder", "never created"), counts_as="clear_error"),
    )
    _add(
        "root",
        f"{_cmd}-read-only",
        _ro_case(_cmd),
        Ok(_err_out("--root", "read-only folder"), counts_as="clear_error"),
    )
_add(
    "root",
    "project-dev-null",
    _root_case(lambda t: "/dev/null", "project"),
    Ok(_err_out("--root /dev/null", "character device"), counts_as="clear_error"),
)


def _scheduler_case(address: str) -> Callable[[Path], Trial]:
    """A builder: ``iscsi-report --root PROJECT run --scheduler ADDRESS``, timed."""

    def build(tmp: Path) -> Trial:
        root = str(_project_dir(tmp))

        def call() -> tuple[int, str, str, float]:
            started = time.monotonic()
            status, out, err = _main(["--root", root, "run", f"--scheduler={address}"])
            return status, out, err, time.monotonic() - started

        return Trial(call, None)

    return build


def _refused_at_once(res: Any) -> None:
    status, out, err, seconds = res
    _assert(status == 2 and not out, (status, out))
    _assert("argument --scheduler" in err and "not a Dask scheduler address" in err, err)
    _assert(seconds < IMMEDIATE_S, seconds)


IMMEDIATE_S = 2.0  # an address refused without a connection attempt (Dask's timeout is 10 s)
for _id, _address in (
    ("not-a-url", "not a url"),
    ("port-too-big", "tcp://127.0.0.1:99999"),
    ("port-zero", "tcp://127.0.0.1:0"),
    ("http-scheme", "http://example.test:8786"),
    ("empty", ""),
    ("flag-like", "-x"),
):
    _add("scheduler", _id, _scheduler_case(_address), Ok(_refused_at_once, counts_as="clear_error"))

# ------------------------------------------------------------------ round three: inside the batch
# A params file's run is planned (params.load_run + jobs_for) before any notebook executes: its
# dataset's manifest, listed files and notes, and every override, are checked there.

_BATCH_CELL = (
    "run_name = ''\ndataset = ''\nproject_root = ''\nresults_dir = ''\n"
    "n_draws = 10000\nseed = 20231231\none_way_ms = [0.01, 0.02]\ndatasets = []\nbins = 20\n"
    "cpu_cores = 1\npublished = 'blog-2023.yaml'\njudged = 'lab'\n"
)


def _batch(
    params: str,
    manifest: str | bytes | None = None,
    notes: str | None = None,
    setup: Callable[[Path], None] | None = None,
    names: str = "manifest",
) -> Callable[[Path], Trial]:
    """A builder: a project (notebook chap.md, dataset ds with ping/x.txt) and params/run.yaml;
    the call plans the run. ``names`` is the file the error must name: the params file, the
    manifest, the notes or the listed file."""

    def build(tmp: Path) -> Trial:
        import jupytext
        import nbformat

        from iscsi_report.core.paths import Project
        from iscsi_report.pipeline.params import jobs_for, load_run

        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell(_BATCH_CELL)
        cell.metadata["tags"] = ["parameters"]
        nb.cells = [nbformat.v4.new_markdown_cell("# t"), cell]
        (tmp / "notebooks").mkdir(parents=True, exist_ok=True)
        jupytext.write(nb, tmp / "notebooks" / "chap.md", fmt="md:myst")
        ds = tmp / "data" / "raw" / "ds"
        _write(ds, "ping/x.txt", PING_BYTES)
        text = manifest if manifest is not None else yaml.safe_dump({"files": [_entry()]}, sort_keys=False)
        files = {"manifest": _write(ds, "manifest.yaml", text), "listed": ds / "ping" / "x.txt"}
        if notes is not None:
            files["notes"] = _write(ds, "notes.yaml", notes)
        if setup is not None:
            setup(tmp)
        files["params"] = path = _write(tmp, "params/run.yaml", params)
        project = Project.at(tmp)
        return Trial(lambda: jobs_for(project, load_run(path)), files[names])

    return build


def _bp(override: str = "") -> str:
    """A params file for dataset ds running chap, with ``override`` as chap's parameters."""
    chap = f"{{chap: {{{override}}}}}" if override else "chap"
    return f"title: t\ndataset: ds\nnotebooks: [{chap}]\n"


_one_job = Ok(lambda jobs: _assert(len(jobs) == 1, jobs))
_add("batch", "valid", _batch(_bp()), _one_job)
_add("batch", "valid-overrides", _batch(_bp("n_draws: 500, seed: 0, one_way_ms: [0.5]")), _one_job)
_MANIFEST_TEXT = yaml.safe_dump({"title": "café", "files": [_entry()]}, sort_keys=False, allow_unicode=True)
_add(
    "batch",
    "manifest-latin1",
    _batch(_bp(), manifest=_MANIFEST_TEXT.encode("latin-1")),
    Err(("not UTF-8", "key 'dataset'"), line=1, error=ParamsError),
)
_add("batch", "manifest-utf16-read", _batch(_bp(), manifest=_MANIFEST_TEXT.encode("utf-16")), _one_job)
_add(
    "batch",
    "manifest-utf16-no-bom-read",
    _batch(_bp(), manifest=_MANIFEST_TEXT.encode("utf-16-le")),
    _one_job,
)
_add(
    "batch",
    "manifest-deep-flow",
    _batch(_bp(), manifest="lab: " + "[" * 5000 + "]" * 5000 + "\nfiles: []\n"),
    Err(("nested deeper than 32",), line=1, error=ParamsError),
)
_add(
    "batch",
    "manifest-deep-mapping",
    _batch(_bp(), manifest="lab: " + "{a: " * 3000 + "1" + "}" * 3000 + "\nfiles: []\n"),
    Err(("nested deeper than 32",), error=ParamsError),
)
_add(
    "batch",
    "notes-deep",
    _batch(_bp(), notes="chapters: " + "[" * 5000 + "]" * 5000 + "\n", names="notes"),
    Err(("nested deeper than 32",), error=ParamsError),
)
_add(
    "batch",
    "notes-duplicate-key",
    _batch(_bp(), notes="chapters: {}\nchapters: {}\n", names="notes"),
    Err(("duplicate key 'chapters'",), line=2, error=ParamsError),
)
_add(
    "batch",
    "manifest-nul-in-path",
    _batch(
        _bp(),
        manifest='files:\n- path: "ping/x\\0.txt"\n  tool: ping\n  side: initiator\n'
        f"  sha256: {_sha(PING_BYTES)}\n  labels: {{interval_s: 1}}\n",
    ),
    Err(("NUL byte",), line=2, json_path="files[0].path", error=ParamsError),
)


def _unreadable(build: Callable[[Path], Trial]) -> Callable[[Path], Trial]:
    """The same trial with the listed file unreadable: chmod 000, and (root ignores mode bits)
    the open refused with EACCES as the kernel would for another user."""

    def wrapped(tmp: Path) -> Trial:
        trial = build(tmp)
        listed = tmp / "data" / "raw" / "ds" / "ping" / "x.txt"
        listed.chmod(0)
        real_open = os.open

        def refusing(path: Any, *args: Any, **kw: Any) -> int:
            if Path(path) == listed:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
            return real_open(path, *args, **kw)

        def call() -> Any:
            with mock.patch("os.open", refusing):
                return trial.call()

        return Trial(call, trial.file)

    return wrapped


_add(
    "batch",
    "listed-file-unreadable",
    _unreadable(_batch(_bp(), names="listed")),
    Err(("cannot read file", "Permission denied"), error=ParamsError),
)


def _sha_unreadable(tmp: Path) -> Trial:
    """dataset.verify (sha256 of the bytes) on a listed file whose open is refused."""
    path = _write(tmp, "x.txt", PING_BYTES)
    f = dataset.RawFile(path, "x.txt", "ping", "initiator", _sha(PING_BYTES), {})

    def call() -> Any:
        refused = PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        with mock.patch("builtins.open", side_effect=refused):
            return dataset.verify(f)

    return Trial(call, path)


_add("batch", "verify-unreadable", _sha_unreadable, Err(("cannot read file", "Permission denied")))
for _id, _override, _needs in (
    ("n-draws-0", "n_draws: 0", ("n_draws", "from 1 to")),
    ("n-draws-negative", "n_draws: -5", ("n_draws", "from 1 to")),
    ("n-draws-huge", "n_draws: 10000000000", ("n_draws", "from 1 to")),
    ("seed-negative", "seed: -1", ("seed", "from 0 to")),
    ("seed-beyond-32-bits", "seed: 4294967296", ("seed", "from 0 to")),
    ("list-empty", "one_way_ms: []", ("one_way_ms", "non-empty list")),
    ("list-nan", "one_way_ms: [0.5, .nan]", ("one_way_ms[1]", "finite number")),
    ("list-inf", "one_way_ms: [.inf]", ("one_way_ms[0]", "finite number")),
    ("list-string-item", "one_way_ms: [0.5, fast]", ("one_way_ms[1]", "expected float")),
    ("int-4000-digits", "bins: " + "9" * 4000, ("bins", "within 64 bits")),
    ("cpu-cores-0", "cpu_cores: 0", ("notebooks.chap.cpu_cores", "from 1 to 4096")),
    ("cpu-cores-negative", "cpu_cores: -2", ("notebooks.chap.cpu_cores", "from 1 to 4096")),
    ("published-path-up", "published: ../../../etc/passwd", ("notebooks.chap.published", "never a path")),
    ("published-absolute", "published: /etc/passwd", ("notebooks.chap.published", "never a path")),
    ("dataset-name-path", "judged: ../other/x", ("notebooks.chap.judged", "never a path")),
    ("dataset-list-item-path", "datasets: [ok, ../../etc]", ("notebooks.chap.datasets[1]", "never a path")),
    ("name-trailing-newline", 'judged: "lab\\n"', ("notebooks.chap.judged", "never a path")),
):
    _add("batch", _id, _batch(_bp(_override), names="params"), Err(_needs, error=ParamsError))
_add(
    "batch",
    "int-5000-digits",
    _batch(_bp("bins: " + "9" * 5000), names="params"),
    Err(("number out of range",), line=3, error=ParamsError),
)
_add("batch", "empty-list-default-ok", _batch(_bp("datasets: []")), _one_job)


def _published_outside(name: str) -> Callable[[Path], Trial]:
    """blog_audit's published-numbers file named ``name`` (called by the audit chapter with its
    ``published`` parameter): anything but a file of data/published is refused, never read."""

    def build(tmp: Path) -> Trial:
        from iscsi_report.analyses.blog_audit import published_in

        folder = tmp / "data" / "published"
        _write(folder, "blog-2023.yaml", "numbers: []\n")
        _write(tmp, "data/secret.yaml", "numbers: []\n")
        (folder / "link.yaml").symlink_to(tmp / "data" / "secret.yaml")
        return Trial(lambda: published_in(folder, name), name)

    return build


for _id, _name in (("up", "../secret.yaml"), ("absolute", "/etc/passwd"), ("link-out", "link.yaml")):
    _add("batch", f"published-file-{_id}", _published_outside(_name), Err(("data/published", "not a path")))
_add(
    "batch",
    "published-file-in-folder-ok",
    _published_outside("blog-2023.yaml"),
    Ok(lambda p: _assert(p.name == "blog-2023.yaml" and p.parent.name == "published", p)),
)


def _yml(tmp: Path) -> Trial:
    """discover() over a params folder holding run.yml beside run.yaml."""
    from iscsi_report.core.paths import Project
    from iscsi_report.pipeline.params import discover

    _write(tmp, "params/ok.yaml", "title: t\nnotebooks: [chap]\n")
    path = _write(tmp, "params/run.yml", "title: t\nnotebooks: [chap]\n")
    return Trial(lambda: discover(Project.at(tmp)), path)


_add("batch", "params-yml-refused", _yml, Err(("end in .yaml", "rename it to run.yaml"), error=ParamsError))


def _project_outside(tmp: Path) -> Trial:
    """``iscsi-report project`` (pure model, no --run/--dataset) from a folder that is no project:
    the default --root is not checked, so the model still answers."""
    argv = ["project", "--bs", "2MiB", "--one-way-ms", "0.05", "--link-mbps", "10000", "--device-ms", "7.3"]
    argv += ["--cpu-ms", "8", "--max-outstanding-r2t", "16", "--queue-depth", "32", "--device-mib-s", "136"]

    def call() -> tuple[int, str, str]:
        here = Path.cwd()
        os.chdir(tmp)
        try:
            return _main([*argv, "--json"])
        finally:
            os.chdir(here)

    return Trial(call, None)


_add(
    "root",
    "project-default-root-outside-a-project-ok",
    _project_outside,
    Ok(lambda res: _assert(res[0] == 0 and json.loads(res[1])["dataset"] is None, res)),
)

# a JSON array where a tool writes one object, for every JSON-reading parser
for _tag, _mod, _name, _needs in (
    ("iperf3", iperf3, "i.json", ("JSON array",)),
    ("fio", fio, "f.json", ("JSON array", "one object")),
    ("iostat", iostat, "io.json", ("JSON array",)),
):
    _add(_tag, f"{_tag}-json-array-of-objects", _parse(_mod, _name, '[{"a": 1}]\n'), Err(_needs))

# a device listed twice in one iostat report
_dev_line = IOSTAT_X.splitlines()[6]
_add(
    "iostat",
    "device-listed-twice",
    _parse(iostat, "io.txt", IOSTAT_X.replace(_dev_line, _dev_line + "\n" + _dev_line)),
    Err(("device 'vda' listed twice",), line=8),
)
_j = json.loads(IOSTAT_JSON)
_disks = _j["sysstat"]["hosts"][0]["statistics"][0]["disk"]
_disks.append(copy.deepcopy(_disks[0]))
_add(
    "iostat",
    "json-device-listed-twice",
    _parse(iostat, "io.json", json.dumps(_j)),
    Err(("listed twice",), json_path=f"statistics[0].disk[{len(_disks) - 1}].disk_device"),
)

# ``iscsi-report project``: absurd flag values refused by argparse with the flag's name (exit 2)
_PROJECT_BASE = ["project", "--bs", "1m", "--one-way-ms", "1", "--link-mbps", "1000", "--device-mib-s", "500"]


def _project_flag(extra: list[str]) -> Callable[[Path], Trial]:
    """A builder: ``iscsi-report project`` with the base flags and ``extra``."""

    def build(tmp: Path) -> Trial:
        return Trial(lambda: _main([*_PROJECT_BASE, *extra]), None)

    return build


def _refused(flag: str, needs: str) -> Callable[[Any], None]:
    """The run exits 2 and its message names ``flag`` and says ``needs``."""
    return lambda res: _assert(res[0] == 2 and f"argument {flag}" in res[2] and needs in res[2], res)


for _name, _extra, _needs in (
    ("queue-depth-10e30", ["--queue-depth", str(10**30)], "at most 65,536"),
    ("cpu-cores-10e20", ["--cpu-cores", str(10**20)], "at most 4,096"),
    ("target-window-10e20", ["--target-r2t-window", str(10**20)], "at most 65,535"),
    ("device-ms-1e308", ["--device-ms", "1e308"], "at most"),
    ("cpu-ms-1e308", ["--cpu-ms", "1e308"], "at most"),
    ("one-way-digit-grouping", ["--one-way-ms", "1_000"], "plain decimal number"),
    ("bs-1024G", ["--bs", "1024G"], "more than"),
    ("link-above-10-tbit", ["--link-mbps", "1e9"], "at most"),
    ("per-64k-nan", ["--per-64k-ms", "nan"], "plain decimal number"),
):
    _flag = next(a for a in _extra if a.startswith("--"))
    _add(
        "project",
        f"project-{_name}",
        _project_flag(_extra),
        Ok(_refused(_flag, _needs), counts_as="clear_error"),
    )


def _project_argv(argv: list[str]) -> Callable[[Path], Trial]:
    """A builder: ``iscsi-report project`` with exactly ``argv``."""
    return lambda tmp: Trial(lambda: _main(argv), None)


_NO_LINK = ["project", "--bs", "1m", "--one-way-ms", "1", "--device-mib-s", "500"]
_add(
    "project",
    "project-per-64k-1e-300",  # was blamed on the link: "link_bps must be a finite number > 0, got inf"
    _project_argv([*_NO_LINK, "--per-64k-ms", "1e-300"]),
    Ok(_refused("--per-64k-ms", "must be a finite number >= 5.24288e-05"), counts_as="clear_error"),
)
_add(
    "project",
    "project-device-ceiling-named-by-flags",  # named the internal device_bytes_per_s
    _project_argv(["project", "--bs", "1m", "--one-way-ms", "1", "--link-mbps", "1000", "--device-ms", "0"]),
    Ok(
        lambda res: _assert(
            res[0] == 2 and "--device-mib-s" in res[2] and "--device-ms" in res[2] and "_per_s" not in res[2],
            res,
        ),
        counts_as="clear_error",
    ),
)


def _project_huge_sweep(tmp: Path) -> Trial:
    """59 x 59 x 59 combinations: refused at once with the count, not expanded in memory."""
    many = ",".join(str(i) for i in range(1, 60))
    argv = ["project", "--bs", "1m", "--one-way-ms", many, "--link-mbps", many, "--device-mib-s", many]
    return Trial(lambda: _main(argv), None)


_add(
    "project",
    "project-sweep-over-the-limit",
    _project_huge_sweep,
    Ok(lambda res: _assert(res[0] == 2 and "205,379 combinations" in res[2], res), counts_as="clear_error"),
)
