"""Tool detection and the `iscsi-report summarize` CLI contract (JSON lines, exit status 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from iscsi_report.cli import main, summarize
from iscsi_report.core.ingest import detect

FIX = Path(__file__).parents[1] / "fixtures"


@pytest.mark.parametrize(
    ("rel", "tool", "fmt"),
    [
        ("ping/iputils_loopback_D.txt", "ping", "iputils"),
        ("ping/inetutils_loopback.txt", "ping", "inetutils"),
        ("ping/busybox_netns_tbf2mbit.txt", "ping", "busybox"),
        ("iperf3/tcp_P4.json", "iperf3", "iperf3-json"),
    ],
)
def test_detect(rel: str, tool: str, fmt: str) -> None:
    assert detect.detect_tool((FIX / rel).read_text()) == (tool, fmt)


def test_detect_unknown() -> None:
    assert detect.detect_tool("nothing to see here\n") is None


def test_cli_json_lines_and_bad_file(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("hello\n")
    good = FIX / "ping" / "iputils_netns_loss30_O_D.txt"
    status = main(["summarize", "--json", str(good), str(bad), str(FIX / "iperf3/tcp_P4.json")])
    out, err = capsys.readouterr()
    assert status == 2
    lines = out.splitlines()
    assert len(lines) == 2
    ping, iperf = (json.loads(x) for x in lines)
    text = good.read_text()
    tx, rx = re.search(r"(\d+) packets transmitted, (\d+) received", text).groups()
    assert (ping["path"], ping["tool"], ping["format"]) == (str(good), "ping", "iputils")
    assert (ping["transmitted"], ping["received"]) == (int(tx), int(rx))
    assert ping["samples"] == text.count("time=")
    assert set(ping["rtt_ms"]) == {"min", "mean", "p50", "p99", "max", "sstdev"}
    assert {"loss_pct", "duplicates"} <= set(ping)
    assert iperf["tool"] == "iperf3" and iperf["protocol"] == "tcp"
    assert {"reverse", "streams", "sent_bps", "received_bps"} <= set(iperf)
    assert err.count("\n") == 1 and err.startswith(f"{bad}: ")


def test_cli_text_output(capsys: pytest.CaptureFixture) -> None:
    assert main(["summarize", str(FIX / "ping" / "iputils_ipv6_loopback.txt")]) == 0
    out = capsys.readouterr().out
    assert "ping (iputils)" in out and "rtt_ms:" in out


def test_forced_tool_mismatch_is_ingest_error(capsys: pytest.CaptureFixture) -> None:
    assert main(["summarize", "--tool", "iperf3", str(FIX / "ping/iputils_loopback_D.txt")]) == 2
    err = capsys.readouterr().err
    assert "iputils_loopback_D.txt" in err and len(err.splitlines()) == 1


def test_missing_file_line(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    assert main(["summarize", "--json", str(tmp_path / "nope.txt")]) == 2
    assert capsys.readouterr().err.startswith(f"{tmp_path / 'nope.txt'}: cannot read file")


def test_summarize_path_reads_xz() -> None:
    s = summarize.summarize_path(FIX / "ping" / "iputils_netns_dup40.txt.xz")
    assert s["duplicates"] == 6 and s["samples"] == 21


def test_summarize_of_a_generated_long_log_equals_a_plain_computation(tmp_path: Path) -> None:
    """The summary of the benchmark's log (smaller) against values read with a regex and statistics."""
    import statistics
    import subprocess
    import sys

    log = tmp_path / "ping.txt"
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "gen_ping_log.py"
    subprocess.run([sys.executable, str(script), str(log), "20000"], check=True, capture_output=True)
    text = log.read_text(encoding="utf-8")
    values = sorted(float(x) for x in re.findall(r"time=([\d.]+) ms", text))
    got = summarize.summarize_path(log)
    rtt = got["rtt_ms"]
    assert got["tool"] == "ping" and got["samples"] == len(values) and got["unanswered"] == 0
    assert rtt["min"] == values[0] and rtt["max"] == values[-1]
    assert rtt["mean"] == pytest.approx(statistics.fmean(values), rel=1e-12)
    assert rtt["sstdev"] == pytest.approx(statistics.stdev(values), rel=1e-9)
    assert rtt["p50"] == pytest.approx(statistics.quantiles(values, n=100, method="inclusive")[49], rel=1e-12)
    assert rtt["p99"] == pytest.approx(statistics.quantiles(values, n=100, method="inclusive")[98], rel=1e-12)
