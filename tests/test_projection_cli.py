"""End-to-end tests of ``iscsi-report project`` through ``iscsi_report.cli.main``."""

from __future__ import annotations

import argparse
import importlib.util
import json

import pytest

from iscsi_report import cli
from iscsi_report.cli.project import parse_size

BLOG_2M = [
    "project",
    "--bs",
    "2MiB",
    "--one-way-ms",
    "1.5",
    "--per-64k-ms",
    "0.87",
    "--device-ms",
    "7.3",
    "--cpu-ms",
    "8",
]
# The blog's model on the command line: InitialR2T=No (64 KiB unsolicited), lock-step, no headers.
BLOG_ASSUMPTIONS = ["--initial-r2t", "no", "--r2t-pacing", "lockstep", "--pdu-header-bytes", "0"]
MIB = 2**20


@pytest.fixture(autouse=True)
def _only_importable_subcommands(monkeypatch: pytest.MonkeyPatch) -> None:
    """cli.main imports every subcommand module; skip those other helpers have not written yet."""
    present = {
        name: entry
        for name, entry in cli.SUBCOMMANDS.items()
        if importlib.util.find_spec(entry[0]) is not None
    }
    monkeypatch.setattr(cli, "SUBCOMMANDS", present)


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    """Run the console entry point and return (exit status, stdout, stderr)."""
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def _strict_json(text: str) -> dict:
    """json.loads that refuses NaN and Infinity (not JSON)."""

    def refuse(name: str) -> None:
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_json_worked_example_r2t1(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, [*BLOG_2M, *BLOG_ASSUMPTIONS, "--max-outstanding-r2t", "1", "--json"])
    assert status == 0
    doc = _strict_json(out)
    assert doc["op_ms"] == pytest.approx(70.14, abs=1e-9)
    assert round(doc["iops"], 2) == 14.26
    assert round(doc["mib_per_s"], 2) == 28.51
    assert sum(doc["terms"].values()) == pytest.approx(doc["op_ms"])
    assert doc["terms"]["r2t_one_way_ms"] == pytest.approx(12.0)
    assert doc["binding"] == "latency"


def test_json_worked_example_r2t16_names_every_bound(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*BLOG_2M, *BLOG_ASSUMPTIONS, "--max-outstanding-r2t", "16", "--json"]
    status, out, _ = _run(capsys, argv)
    doc = _strict_json(out)
    assert status == 0
    assert doc["op_ms"] == pytest.approx(49.14, abs=1e-9)
    assert round(doc["mib_per_s"], 2) == 40.70
    assert set(doc["bounds"]) == {"latency", "link", "device", "cpu"}
    assert all(doc["bounds"][b]["iops"] is not None for b in ("latency", "link", "device", "cpu"))
    assert doc["bounds"]["cpu"]["iops"] == pytest.approx(125.0)
    assert doc["bounds"]["device"]["iops"] == pytest.approx(1000 / 7.3)  # 2 MiB in 7.3 ms


def test_sliding_window_two_matches_all_at_once_on_the_wireless_link(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = [*BLOG_2M, "--initial-r2t", "no", "--pdu-header-bytes", "0", "--json"]
    ms = {}
    for w in ("2", "16"):
        _, out, _ = _run(capsys, [*base, "--max-outstanding-r2t", w])
        ms[w] = _strict_json(out)["op_ms"]
    assert ms["16"] == pytest.approx(49.14)
    assert abs(ms["2"] - ms["16"]) / ms["16"] < 0.03
    _, out, _ = _run(capsys, [*base, "--max-outstanding-r2t", "16", "--r2t-pacing", "serial"])
    assert _strict_json(out)["op_ms"] == pytest.approx(70.14)


def test_hdd_over_10gbe_at_queue_depth_32_is_device_bound(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["project", "--bs", "2MiB", "--one-way-ms", "0.05", "--link-mbps", "10000", "--device-ms", "7.3"]
    argv += ["--cpu-ms", "8", "--max-outstanding-r2t", "16", "--queue-depth", "32", "--json"]
    status, out, _ = _run(capsys, [*argv, "--device-mib-s", "136"])
    doc = _strict_json(out)
    assert status == 0
    assert doc["binding"] == "device"
    assert doc["mib_per_s"] == pytest.approx(136.0)
    for qd in ("1", "2", "4", "64", "1024"):
        _, out, _ = _run(capsys, [*argv[:-3], "--queue-depth", qd, "--json", "--device-mib-s", "136"])
        assert _strict_json(out)["mib_per_s"] <= 136.0 + 1e-9


def test_deep_queue_on_wireless_is_link_bound(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, [*BLOG_2M, *BLOG_ASSUMPTIONS, "--queue-depth", "8", "--json"])
    doc = _strict_json(out)
    assert (status, doc["binding"]) == (0, "link")
    assert doc["iops"] == pytest.approx(65536 * 8 / 0.87e-3 / 8 / 2**21)


def test_no_cpu_time_prints_null_with_a_reason_never_infinity(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["project", "--bs", "64k", "--one-way-ms", "0.1", "--link-mbps", "1000", "--device-ms", "1"]
    status, out, _ = _run(capsys, [*argv, "--queue-depth", "4", "--json"])
    doc = _strict_json(out)
    assert status == 0
    assert doc["bounds"]["cpu"]["iops"] is None and "no CPU" in doc["bounds"]["cpu"]["note"]
    assert doc["bounds"]["device"]["iops"] is not None


def test_no_device_ceiling_at_all_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["project", "--bs", "64k", "--one-way-ms", "0.1", "--link-mbps", "1000", "--json"]
    status, out, err = _run(capsys, argv)
    assert (status, out) == (2, "")
    assert "--device-mib-s" in err


def test_absurd_inputs_exit_2_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["project", "--bs", "1G", "--one-way-ms", "1e308", "--per-64k-ms", "1e308", "--device-ms", "1e308"]
    status, out, err = _run(capsys, [*argv, "--json"])
    assert (status, out) == (2, "")
    assert "argument --one-way-ms" in err and "at most" in err  # refused by its bound, named by its flag


def test_text_output_lists_terms_and_results(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*BLOG_2M, *BLOG_ASSUMPTIONS, "--queue-depth", "2", "--device-max-iops", "20"]
    status, out, _ = _run(capsys, argv)
    assert status == 0
    assert "70.140" in out and "20.000" in out
    for term in ("command_one_way_ms", "r2t_one_way_ms", "status_one_way_ms", "cpu_ms"):
        assert term in out
    ceilings = out.split("ceilings at queue depth")[1]
    assert "<- binding" in next(line for line in ceilings.splitlines() if line.strip().startswith("device"))


def test_link_mbps_matches_per_64k_ms(capsys: pytest.CaptureFixture[str]) -> None:
    mbps = 65536 * 8 / 0.87e-3 / 1e6
    argv = ["project", "--bs", "2M", "--one-way-ms", "1.5", "--link-mbps", repr(mbps), *BLOG_ASSUMPTIONS]
    _, out, _ = _run(capsys, [*argv, "--device-ms", "7.3", "--cpu-ms", "8", "--json"])
    assert _strict_json(out)["op_ms"] == pytest.approx(70.14, abs=1e-9)


@pytest.mark.parametrize("flag", [["--read"], ["--rw", "read"]])
def test_read_has_no_r2t(capsys: pytest.CaptureFixture[str], flag: list[str]) -> None:
    _, out, _ = _run(capsys, [*BLOG_2M, *flag, "--pdu-header-bytes", "0", "--json"])
    doc = _strict_json(out)
    assert doc["direction"] == "read"
    assert doc["terms"]["r2t_one_way_ms"] == 0
    assert doc["op_ms"] == pytest.approx(1.5 + 7.3 + 1.5 + 32 * 0.87 + 8)


def test_default_segment_length_caps_immediate_data_at_8_kib(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, [*BLOG_2M, "--initial-r2t", "yes", "--json"])
    counts = _strict_json(out)["counts"]
    assert (counts["immediate_bytes"], counts["unsolicited_data_out_bytes"]) == (8192, 0)
    _, out, _ = _run(capsys, [*BLOG_2M, "--initial-r2t", "yes", "--max-recv-data-segment", "256k", "--json"])
    assert _strict_json(out)["counts"]["immediate_bytes"] == 65536


def test_initial_r2t_and_burst_options(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*BLOG_2M, "--initial-r2t", "yes", "--immediate-data", "no", "--max-burst", "1MiB"]
    _, out, _ = _run(capsys, [*argv, "--first-burst", "64k", "--json"])
    counts = _strict_json(out)["counts"]
    assert (counts["immediate_bytes"], counts["bursts"], counts["waves"]) == (0, 2, 2)
    assert counts["data_pdus"] == 2 * MIB // 8192


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--bs", "2MB"], "ambiguous"),
        (["--bs", "lots"], "not a size"),
        (["--bs", "0"], "positive whole number"),
        (["--one-way-ms", "-1"], ">= 0 and at most"),
        (["--link-mbps", "100"], "not allowed with argument"),
        (["--max-outstanding-r2t", "0"], "whole number of at least 1"),
        (["--initial-r2t", "maybe"], "expected yes or no"),
    ],
)
def test_usage_errors_exit_2_with_message(
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    status, out, err = _run(capsys, [*BLOG_2M, *extra])
    assert status == 2
    assert message in err and out == ""


def test_missing_link_speed_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, ["project", "--bs", "2M", "--one-way-ms", "1"])
    assert status == 2 and "--per-64k-ms --link-mbps is required" in err


def test_inconsistent_keys_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, [*BLOG_2M, "--first-burst", "1M"])
    assert (status, out) == (2, "")
    assert "must not exceed max_burst_bytes" in err


def test_help_explains_binary_suffixes(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, ["project", "--help"])
    assert status == 0
    assert "KiB/MiB" in " ".join(out.split()) and "fio" in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2MiB", 2 * 2**20),
        ("256KiB", 256 * 1024),
        ("64k", 65536),
        ("64K", 65536),
        ("2M", 2 * 2**20),
        ("1G", 2**30),
        ("4096", 4096),
        ("0.5M", 2**19),
        ("512b", 512),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["1.3k", "", "k", "2 MB", "-4k"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse_size(text)
