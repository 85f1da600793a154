"""Ping parser: real fixtures (tests/fixtures/ping), the third-party corpus, edge cases.

Expected values come from the files themselves (ping's own footer, or time= values pulled out
with a plain regex here), never from the parser's output.
"""

from __future__ import annotations

import gzip
import lzma
import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import ping, textio

FOOTER_RE = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received(.*)")
RTT_RE = re.compile(r"= ([\d.]+)/([\d.]+)/([\d.]+)")


def raw_text(path: Path) -> str:
    """Decompressed text of a fixture, independent of the package's reader."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    elif path.suffix == ".xz":
        data = lzma.decompress(data)
    return data.decode().replace("\r\n", "\n")


def footer(text: str) -> dict:
    """transmitted/received/duplicates and the rtt line as printed, by plain regexes."""
    m = FOOTER_RE.search(text)
    assert m, "fixture has no footer"
    dup = re.search(r"\+(\d+) duplicates", m[3])
    out = {"tx": int(m[1]), "rx": int(m[2]), "dup": int(dup[1]) if dup else 0}
    r = RTT_RE.search(text)
    out["rtt"] = tuple(float(x) for x in r.groups()) if r else None
    return out


def times(text: str) -> np.ndarray:
    """Every time= value in the text."""
    return np.array([float(x) for x in re.findall(r"time=([\d.]+) ms", text)])


FIXTURES = sorted((Path(__file__).parents[1] / "fixtures" / "ping").glob("*"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_matches_its_own_footer(path: Path) -> None:
    text = raw_text(path)
    expected = footer(text)
    result = ping.parse(path)
    st = result.statistics
    assert (st.transmitted, st.received, st.duplicates) == (
        expected["tx"],
        expected["rx"],
        expected["dup"],
    )
    values = times(text)
    np.testing.assert_array_equal(result.rtt_ms, values)
    assert int(result.duplicate.sum()) == text.count("(DUP!)")
    assert result.unparsed == []
    if expected["rtt"] and len(values):
        assert math.isclose(result.rtt_ms.min(), expected["rtt"][0], abs_tol=1e-9)
        assert math.isclose(result.rtt_ms.max(), expected["rtt"][2], abs_tol=1e-9)


EXPECTED_FORMAT = {
    "busybox_netns_tbf2mbit.txt": "busybox",
    "inetutils_loopback.txt": "inetutils",
    "inetutils_netns_loss25.txt": "inetutils",
    "iputils_ipv6_loopback.txt": "iputils",
    "iputils_loopback_D.txt": "iputils",
    "iputils_loopback_quiet.txt": "iputils",
    "iputils_netns_dup40.txt.xz": "iputils",
    "iputils_netns_loss100.txt": "iputils",
    "iputils_netns_loss30_O_D.txt": "iputils",
    "iputils_netns_tbf2mbit.txt.gz": "iputils",
}


@pytest.mark.parametrize("name", sorted(EXPECTED_FORMAT))
def test_format_detected(fixtures_dir: Path, name: str) -> None:
    result = ping.parse(fixtures_dir / "ping" / name)
    assert result.format == EXPECTED_FORMAT[name]
    assert ping.sniff(raw_text(fixtures_dir / "ping" / name)) == EXPECTED_FORMAT[name]


def test_timestamps_and_unanswered(fixtures_dir: Path) -> None:
    path = fixtures_dir / "ping" / "iputils_netns_loss30_O_D.txt"
    text = raw_text(path)
    result = ping.parse(path)
    stamps = [float(x) for x in re.findall(r"^\[([\d.]+)\] \d+ bytes", text, re.M)]
    np.testing.assert_array_equal(result.timestamp_s, stamps)
    assert result.unanswered_seq == [int(x) for x in re.findall(r"no answer yet for icmp_seq=(\d+)", text)]
    df = result.samples
    assert list(df.columns) == ["seq", "rtt_ms", "timestamp_s", "duplicate"]
    assert df["seq"].tolist() == [int(x) for x in re.findall(r"icmp_seq=(\d+) ttl", text)]


def test_no_timestamps_gives_nan(fixtures_dir: Path) -> None:
    result = ping.parse(fixtures_dir / "ping" / "iputils_ipv6_loopback.txt")
    assert np.isnan(result.timestamp_s).all()
    assert result.seq.tolist() == [1, 2, 3, 4, 5, 6]


def test_inetutils_stddev_bug_is_a_warning_not_a_disagreement(fixtures_dir: Path) -> None:
    result = ping.parse(fixtures_dir / "ping" / "inetutils_loopback.txt")
    assert result.statistics.rtt_dev_ms == 0.0
    assert len(result.warnings) == 1
    assert "inetutils" in result.warnings[0] and "0.000" in result.warnings[0]
    summary = ping.summary(result)
    values = times(raw_text(fixtures_dir / "ping" / "inetutils_loopback.txt"))
    assert summary["rtt_ms"]["sstdev"] == pytest.approx(values.std(ddof=1))
    assert summary["rtt_ms"]["sstdev"] > 0


def test_quiet_output_uses_printed_figures(fixtures_dir: Path) -> None:
    result = ping.parse(fixtures_dir / "ping" / "iputils_loopback_quiet.txt")
    s = ping.summary(result)
    assert s["samples"] == 0 and s["received"] == 20
    assert (s["rtt_ms"]["min"], s["rtt_ms"]["mean"], s["rtt_ms"]["max"]) == (0.003, 0.014, 0.034)
    assert s["rtt_ms"]["p50"] is None
    assert any("ping -q" in w for w in result.warnings)


def test_total_loss_has_no_rtt(fixtures_dir: Path) -> None:
    s = ping.summary(ping.parse(fixtures_dir / "ping" / "iputils_netns_loss100.txt"))
    assert (s["transmitted"], s["received"], s["loss_pct"], s["samples"]) == (5, 0, 100.0, 0)
    assert s["rtt_ms"]["mean"] is None


# -- corpus ---------------------------------------------------------------------------------

CORPUS_FORMAT = {
    "cloudpilot_ping-crlf-4-packets.out": "iputils",
    "cloudpilot_ping-crlf-ctrlc-100pct-loss.out": "iputils",
    "jc_alpine313_busybox_ping-hostname.out": "busybox",
    "jc_centos77_ping-hostname-O-D-p-s.out": "iputils",
    "jc_centos77_ping-hostname-O.out": "iputils",
    "jc_centos77_ping-ip-O-D.out": "iputils",
    "jc_centos77_ping-ip-dup-broadcast.out": "iputils",
    "jc_centos77_ping6-ip-dup-multicast.out": "iputils",
    "jc_fedora32_ping6-hostname-O-D-p-s.out": "iputils",
    "jc_freebsd12_ping-hostname-p.out": "bsd",
    "jc_freebsd12_ping6-hostname-s.out": "bsd",
    "jc_osx10146_ping-ip-dup-broadcast.out": "bsd",
    "jc_osx10146_ping-ip-unreachable.out": "bsd",
    "jc_osx10146_ping6-ip-dup-multicast.out": "bsd",
    "jc_pi_ping-ip-O-D-100pct-loss.out": "iputils",
    "jc_ubuntu1804_ping6-ip-O-D-p.out": "iputils",
    "jc_ubuntu2204_ping-dest-unreachable.out": "iputils",
    "pkb_ping-100-packets.out": "iputils",
}


@pytest.mark.corpus
def test_corpus_every_file_parsed(corpus_dir: Path) -> None:
    names = sorted(p.name for p in (corpus_dir / "ping").iterdir())
    assert names == sorted(CORPUS_FORMAT), "corpus changed: classify the new files"
    for name in names:
        path = corpus_dir / "ping" / name
        text = raw_text(path)
        expected = footer(text)
        result = ping.parse(path)
        assert result.format == CORPUS_FORMAT[name], name
        st = result.statistics
        assert (st.transmitted, st.received, st.duplicates) == (
            expected["tx"],
            expected["rx"],
            expected["dup"],
        ), name
        values = times(text)
        np.testing.assert_array_equal(result.rtt_ms, values, err_msg=name)
        assert len(values) == expected["rx"] + expected["dup"], name
        assert result.unparsed == [], name
        if expected["rtt"]:
            lo, avg, hi = expected["rtt"]
            # printed rtt uses more digits than time= (e.g. 159 vs 159.380): one unit of slack
            unit = max(
                10.0 ** -(len(t.split(".")[1]) if "." in t else 0) for t in re.findall(r"time=([\d.]+)", text)
            )
            assert abs(values.min() - lo) <= unit + 1e-9, name
            assert abs(values.mean() - avg) <= unit + 1e-3, name
            assert abs(values.max() - hi) <= unit + 1e-9, name


@pytest.mark.corpus
def test_corpus_old_iputils_mdev_disagreement_is_reported(corpus_dir: Path) -> None:
    result = ping.parse(corpus_dir / "ping" / "pkb_ping-100-packets.out")
    assert [w for w in result.warnings if "mdev" in w]


@pytest.mark.corpus
def test_corpus_bsd_unmarked_duplicates(corpus_dir: Path) -> None:
    result = ping.parse(corpus_dir / "ping" / "jc_osx10146_ping-ip-dup-broadcast.out")
    assert int(result.duplicate.sum()) == 13
    assert result.samples["duplicate"].sum() == 13


@pytest.mark.corpus
def test_corpus_errors_and_pipe(corpus_dir: Path) -> None:
    result = ping.parse(corpus_dir / "ping" / "jc_ubuntu2204_ping-dest-unreachable.out")
    assert result.statistics.errors == 3
    assert len(result.icmp_errors) == 3


# -- edge cases (synthetic text, for forms no real fixture here can produce) ----------------

IPUTILS_OLD = """PING 10.0.0.1 (10.0.0.1) 56(84) bytes of data.
64 bytes from 10.0.0.1: icmp_req=1 ttl=64 time=0.512 ms
64 bytes from 10.0.0.1: icmp_req=2 ttl=64 time=0.498 ms

--- 10.0.0.1 ping statistics ---
2 packets transmitted, 2 received, 0% packet loss, time 1001ms
rtt min/avg/max/mdev = 0.498/0.505/0.512/0.007 ms
"""


def test_old_icmp_req() -> None:
    result = ping.parse_text(IPUTILS_OLD)
    assert result.seq.tolist() == [1, 2]
    assert result.rtt_ms.tolist() == [0.512, 0.498]
    assert result.warnings == []


@pytest.mark.parametrize("old_line", [2, 3])
def test_icmp_req_mixed_with_icmp_seq_refused(old_line: int) -> None:
    """An old iputils 'icmp_req=' reply among 'icmp_seq=' ones (which the fast path takes, the
    other not) is found, before or after them, and its line named."""
    lines = IPUTILS_OLD.splitlines(keepends=True)
    other = 5 - old_line  # the reply line that is not the old kind
    lines[other - 1] = lines[other - 1].replace("icmp_req=", "icmp_seq=")
    with pytest.raises(IngestError, match="mixes ping variants") as info:
        ping.parse_text("".join(lines), "x.txt")
    assert info.value.line == 3
    later = "icmp_req" if old_line == 3 else "icmp_seq"
    assert f"'{later}=' replies here" in str(info.value)


def test_comma_decimals_refused() -> None:
    text = IPUTILS_OLD.replace("0.512", "0,512").replace("0.498 ms", "0,498 ms")
    with pytest.raises(IngestError, match="decimal comma") as info:
        ping.parse_text(text, "x.txt")
    assert info.value.line == 2


def test_translated_output_refused() -> None:
    text = (
        "PING 127.0.0.1 (127.0.0.1) 56(84) Bytes an Daten.\n"
        "64 Bytes von 127.0.0.1: icmp_seq=1 ttl=64 Zeit=0.045 ms\n"
    )
    with pytest.raises(IngestError, match="LC_ALL=C"):
        ping.parse_text(text, "de.txt")


def test_not_ping_refused() -> None:
    with pytest.raises(IngestError, match="no ping output"):
        ping.parse_text("hello\nworld\n", "x.txt")
    assert ping.sniff("hello\nworld\n") is None


def test_summary_disagreement_becomes_warning() -> None:
    text = IPUTILS_OLD.replace("0.498/0.505/0.512", "0.498/0.605/0.512")
    result = ping.parse_text(text)
    assert any("avg" in w for w in result.warnings)
    text = IPUTILS_OLD.replace("2 received", "3 received")
    assert any("reply lines" in w for w in ping.parse_text(text).warnings)


def test_unusual_reply_suffix_goes_careful_path_and_unknown_lines_are_kept() -> None:
    text = IPUTILS_OLD.replace("time=0.498 ms", "time=0.498 ms (BAD CHECKSUM!)").replace(
        "\n\n---", "\nsomething odd\n\n---"
    )
    result = ping.parse_text(text)
    assert result.rtt_ms.tolist() == [0.512, 0.498]
    assert result.unparsed == [(4, "something odd")]
    assert any("not understood" in w for w in result.warnings)


def test_crlf_and_fast_path_agree_with_careful_path() -> None:
    crlf = IPUTILS_OLD.replace("icmp_req", "icmp_seq").replace("\n", "\r\n")
    result = ping.parse_text(crlf)
    assert result.rtt_ms.tolist() == [0.512, 0.498]
    assert result.unparsed == []


def test_seq_wraps_in_long_logs() -> None:
    lines = ["PING 10.0.0.1 (10.0.0.1) 56(84) bytes of data."]
    lines += [
        f"64 bytes from 10.0.0.1: icmp_seq={i % 65536} ttl=64 time=1.{i % 10}0 ms"
        for i in range(65530, 65540)
    ]
    result = ping.parse_text("\n".join(lines) + "\n")
    assert result.seq.tolist() == [i % 65536 for i in range(65530, 65540)]
    assert not result.duplicate.any()


@pytest.mark.skipif(shutil.which("datamash") is None, reason="GNU datamash not installed")
def test_percentiles_match_datamash(fixtures_dir: Path, tmp_path: Path) -> None:
    text = raw_text(fixtures_dir / "ping" / "iputils_netns_loss30_O_D.txt")
    values = "\n".join(re.findall(r"time=([\d.]+)", text)) + "\n"
    out = subprocess.run(
        ["datamash", "-R", "12", "mean", "1", "perc:50", "1", "perc:99", "1", "max", "1", "sstdev", "1"],
        input=values,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    rtt = ping.summary(ping.parse_text(text))["rtt_ms"]
    got = [rtt["mean"], rtt["p50"], rtt["p99"], rtt["max"], rtt["sstdev"]]
    assert got == pytest.approx([float(x) for x in out], rel=1e-9)


# -- the source check of long logs: the fast path names the lines whose source may differ ------

_PINGED = "10.0.0.2"
_LONG_LOG_REPLIES = 3000  # more lines than the check searches one by one (a full pass then)


def _long_log(source: str, odd_source: str | None = None, odd_at: int = 0) -> str:
    """An iputils log of _LONG_LOG_REPLIES replies from ``source``; reply ``odd_at`` from ``odd_source``."""
    lines = [f"PING example.test ({_PINGED}) 56(84) bytes of data."]
    for seq in range(1, _LONG_LOG_REPLIES + 1):
        src = odd_source if odd_source is not None and seq == odd_at else source
        lines.append(f"64 bytes from {src}: icmp_seq={seq} ttl=64 time=0.{seq % 900 + 100} ms")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "odd",
    [
        "10.0.0.3",  # the same length, another byte
        "10.0.0.20",  # longer by one byte
        "10.0.0.",  # shorter
        "host-2.example.test (10.0.0.3)",  # a name with another address in parens (over 16 bytes)
        "example.tes",  # a prefix of the pinged name
    ],
)
def test_one_reply_from_another_host_deep_in_a_long_log_is_refused_at_its_line(odd: str) -> None:
    odd_at = _LONG_LOG_REPLIES * 2 // 3
    with pytest.raises(IngestError, match="replies from another host") as err:
        ping.parse_text(_long_log(_PINGED, odd, odd_at), "p.txt")
    assert err.value.line == odd_at + 1  # the header is line 1


def test_a_first_reply_from_another_host_is_refused() -> None:
    with pytest.raises(IngestError, match="replies from another host") as err:
        ping.parse_text(_long_log(_PINGED, "10.0.0.9", 1), "p.txt")
    assert err.value.line == 2


@pytest.mark.parametrize(
    "source", [_PINGED, "example.test", f"example.test ({_PINGED})", f"host-2.example.test ({_PINGED})"]
)
def test_a_long_log_from_the_pinged_host_passes_however_it_is_named(source: str) -> None:
    result = ping.parse_text(_long_log(source), "p.txt")
    assert len(result.rtt_ms) == _LONG_LOG_REPLIES and not result.unparsed


def test_of_two_replies_from_other_hosts_the_first_in_the_file_is_named() -> None:
    lines = _long_log(_PINGED, "10.0.0.3", 50).splitlines(keepends=True)
    # after it, a reply the careful path reads (an unusual suffix) from another host again
    lines.insert(100, "64 bytes from 10.0.0.9: icmp_seq=99 ttl=64 time=9.99 ms (DIFFERENT ADDRESS!)\n")
    with pytest.raises(IngestError, match=re.escape("'10.0.0.3'")) as err:
        ping.parse_text("".join(lines), "p.txt")
    assert err.value.line == 51


BREAKS = ["\n", "\r\n", "\r", "\x0b", "\x1c", "\x85", "\u2028"]


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.tuples(st.text(alphabet="ab ", max_size=9), st.sampled_from(BREAKS)), max_size=30),
    tail=st.text(alphabet="ab", max_size=3),
    n=st.integers(0, 12),
    prefix_chars=st.integers(1, 16),
)
def test_first_lines_are_the_split_lines_of_the_whole_text(parts, tail, n, prefix_chars) -> None:
    text = "".join(line + end for line, end in parts) + tail
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(textio, "FIRST_LINES_PREFIX_CHARS", prefix_chars)  # every cut, \r\n split included
        assert textio.first_lines(text, n) == text.splitlines()[:n]


def test_the_destination_is_read_from_the_header_of_a_long_log() -> None:
    reply = "64 bytes from 198.18.0.2: icmp_seq=1 ttl=64 time=0.1 ms\n"
    text = "PING 198.18.0.2 (198.18.0.2) 56(84) bytes of data.\n" + reply * 20_000
    assert ping.destination(text) == ("198.18.0.2", "198.18.0.2")
    assert ping.destination(reply * 20_000) is None
