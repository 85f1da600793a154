"""The tshark field-export parser: PDUs dealt back from multi-PDU frames, the per-write timeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import tshark

FIXTURES = Path(__file__).with_name("fixtures")
HEADER = "\t".join(tshark.EXPORT_FIELDS)


def row(
    frame: int,
    t: float,
    src: str,
    opcode: str,
    itt: str,
    *,
    ttt: str = "",
    offset: str = "",
    desired: str = "",
    dsl: str = "0",
    expected: str = "",
    w: str = "",
    final: str = "",
    r2tsn: str = "",
    kv: str = "",
    stream: str = "0",
) -> str:
    """One export line in EXPORT_FIELDS order."""
    dst = "198.18.0.2" if src == "198.18.0.1" else "198.18.0.1"
    return "\t".join(
        [
            str(frame),
            f"{t:.9f}",
            src,
            dst,
            stream,
            opcode,
            itt,
            ttt,
            offset,
            desired,
            dsl,
            expected,
            w,
            final,
            r2tsn,
            kv,
        ]
    )


INI, TGT = "198.18.0.1", "198.18.0.2"


def synthetic_window2() -> str:
    """A 1 MiB write (64 KiB immediate) at window 2: 4 R2Ts, two Data-Outs share a frame."""
    lines = [
        HEADER,
        row(1, 0.000, INI, "0x03", "0x1", dsl="100", kv="InitiatorName=iqn.x;MaxOutstandingR2T=1"),
        row(2, 0.001, TGT, "0x23", "0x1", dsl="90", kv="MaxOutstandingR2T=1;InitialR2T=Yes"),
        row(3, 1.000, INI, "0x01", "0x10", dsl="65536", expected="1048576", w="1"),
        row(
            4,
            1.002,
            TGT,
            "0x31;0x31",
            "0x10;0x10",
            ttt="0xa;0xa",
            offset="65536;327680",
            desired="262144;262144",
            dsl="0;0",
            r2tsn="0;1",
        ),
        row(
            5,
            1.004,
            INI,
            "0x05;0x05",
            "0x10;0x10",
            ttt="0xa;0xa",
            offset="65536;327680",
            dsl="262144;262144",
            final="1;1",
        ),
        row(6, 1.006, TGT, "0x31", "0x10", ttt="0xa", offset="589824", desired="262144", dsl="0", r2tsn="2"),
        row(7, 1.0061, TGT, "0x31", "0x10", ttt="0xa", offset="851968", desired="196608", dsl="0", r2tsn="3"),
        row(8, 1.008, INI, "0x05", "0x10", ttt="0xa", offset="589824", dsl="262144", final="1"),
        row(9, 1.009, INI, "0x05", "0x10", ttt="0xa", offset="851968", dsl="196608", final="1"),
        row(10, 1.012, TGT, "0x21", "0x10", dsl="0"),
    ]
    return "\n".join(lines) + "\n"


def test_sniff_accepts_export_and_refuses_other_text() -> None:
    assert tshark.sniff(synthetic_window2()) == tshark.FORMAT
    assert tshark.sniff("PING 198.18.0.2 (198.18.0.2) 56(84) bytes of data.\n") is None
    assert tshark.sniff('{"jobs": []}') is None


def test_multi_pdu_frames_are_dealt_to_their_pdus() -> None:
    res = tshark.parse_text(synthetic_window2(), "syn.tsv")
    pdus = res.pdus
    assert list(pdus["pdu"]).count("r2t") == 4
    r2t = pdus[pdus["pdu"] == "r2t"]
    assert list(r2t["offset_bytes"]) == [65536, 327680, 589824, 851968]
    assert list(r2t["length_bytes"]) == [262144, 262144, 262144, 196608]
    assert list(r2t["r2tsn"]) == [0, 1, 2, 3]
    assert res.login_keys["initiator"]["MaxOutstandingR2T"] == "1"
    assert res.login_keys["target"]["InitialR2T"] == "Yes"


def test_write_summary_counts_r2ts_outstanding_and_latency() -> None:
    w = tshark.writes(tshark.parse_text(synthetic_window2()))
    assert len(w) == 1
    one = w.iloc[0]
    assert one["bytes"] == 1048576 and one["immediate_bytes"] == 65536
    assert one["r2t_count"] == 4
    assert one["max_outstanding_r2t"] == 2
    assert one["r2t_bytes"] + one["immediate_bytes"] == 1048576
    assert one["latency_s"] == pytest.approx(0.012)
    assert one["first_r2t_s"] == pytest.approx(0.002)


def test_timeline_orders_events_relative_to_the_command() -> None:
    ev = tshark.timeline(tshark.parse_text(synthetic_window2()))
    assert ev["event"].iloc[0] == "command" and ev["time_s"].iloc[0] == 0
    assert ev["event"].iloc[-1] == "response"
    assert list(ev["outstanding_r2t"]) == [0, 1, 2, 1, 0, 1, 2, 1, 0, 0]


def test_mismatched_field_counts_name_the_line() -> None:
    good = synthetic_window2()
    assert "65536;327680\t\t262144;262144" in good  # the Data-Out frame (line 6)
    bad = good.replace("65536;327680\t\t262144;262144", "65536\t\t262144;262144")
    with pytest.raises(IngestError) as err:
        tshark.parse_text(bad, "bad.tsv")
    assert "bad.tsv:6" in str(err.value)


def test_wrong_column_count_and_missing_header() -> None:
    text = synthetic_window2().splitlines()
    with pytest.raises(IngestError, match="tab-separated"):
        tshark.parse_text("\n".join([text[0], "1\t2"]), "x.tsv")
    with pytest.raises(IngestError, match="header"):
        tshark.parse_text("\n".join(text[1:]), "x.tsv")


@pytest.mark.parametrize(("name", "window"), [("write-2m-window1.tsv", 1), ("write-2m-window8.tsv", 8)])
def test_real_captures_from_the_lab(name: str, window: int) -> None:
    """Captures from `lab run --quick`: 2 MiB writes, 64 KiB immediate data, 256 KiB bursts."""
    res = tshark.parse(FIXTURES / name)
    w = tshark.writes(res)
    assert len(w) == 2
    assert set(w["r2t_count"]) == {8}
    assert set(w["max_outstanding_r2t"]) == {window}
    assert set(w["immediate_bytes"]) == {65536}
    assert set(w["r2t_bytes"]) == {2 * 1024 * 1024 - 65536}
    assert res.login_keys["initiator"]["MaxOutstandingR2T"] == "1"
    summary = tshark.summary(res)
    assert summary["writes"] == 2 and summary["r2t_per_write"] == [8]


def test_frames_with_undefined_opcodes_are_skipped_and_counted() -> None:
    """After a lost segment tshark may read payload as a header (e.g. opcode 0x3d, no ITT)."""
    lines = synthetic_window2().splitlines()
    bogus = row(99, 1.0065, INI, "0x3d", "", dsl="0")
    text = "\n".join([*lines[:7], bogus, *lines[7:]]) + "\n"
    res = tshark.parse_text(text, "lossy.tsv")
    assert res.skipped_lines == [8]
    assert tshark.summary(res)["skipped_frames"] == 1
    assert tshark.writes(res)["r2t_count"].tolist() == [4]
