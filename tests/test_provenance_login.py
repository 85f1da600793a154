"""Provenance per dataset: the tool versions its files state and the login keys its captures carry."""

from __future__ import annotations

from pathlib import Path

import pytest

from iscsi_report.pipeline import provenance
from iscsi_report.pipeline.provenance import ToolInfo

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "data" / "raw" / "lab-iscsi-2026" / "tshark"


def _capture(sent: dict[str, str], answered: dict[str, str]) -> ToolInfo:
    """A capture's tool information with a login."""
    return ToolInfo("tshark", "tshark-fields", "no version printed", {"initiator": sent, "target": answered})


def test_a_real_capture_yields_its_login_keys() -> None:
    capture = sorted(CAPTURES.glob("*.tsv"))[0]
    info = provenance.tool_info(capture, "tshark")
    assert info.login_keys["initiator"]["MaxOutstandingR2T"] == "1"
    assert info.login_keys["target"]["InitialR2T"] == "Yes"


def test_login_keys_pair_what_was_sent_with_what_was_answered_and_count_captures() -> None:
    infos = [
        _capture(
            {"FirstBurstLength": "262144", "InitialR2T": "No"},
            {"FirstBurstLength": "65536", "InitialR2T": "Yes"},
        ),
        _capture(
            {"FirstBurstLength": "65536", "InitialR2T": "No"},
            {"FirstBurstLength": "65536", "InitialR2T": "Yes"},
        ),
        ToolInfo("tshark", "tshark-fields", "no version printed"),  # a capture started after the login
        ToolInfo("fio", "fio-json", "fio-3.33"),
    ]
    captures, with_login, rows = provenance.login_keys(infos)
    assert (captures, with_login) == (3, 2)
    assert rows == [
        ("FirstBurstLength", "262144", "65536", 1),
        ("FirstBurstLength", "65536", "65536", 1),
        ("InitialR2T", "No", "Yes", 2),
    ]
    text = "\n".join(provenance._login_section(infos))
    assert "2 of 3 captures hold a login" in text
    assert "| `InitialR2T` | `No` | `Yes` | 2 |" in text


def test_a_key_only_one_side_sent_is_marked_not_sent() -> None:
    text = "\n".join(
        provenance._login_section([_capture({"InitiatorName": "iqn.x"}, {"TargetPortalGroupTag": "1"})])
    )
    assert f"| `InitiatorName` | `iqn.x` | {provenance.NOT_SENT} | 1 |" in text
    assert f"| `TargetPortalGroupTag` | {provenance.NOT_SENT} | `1` | 1 |" in text


def test_no_captures_no_login_section_but_tool_versions_counted() -> None:
    infos = [ToolInfo("fio", "fio-json", "fio-3.33")] * 2 + [ToolInfo("iperf3", "iperf3-json", "iperf 3.12")]
    assert provenance._login_section(infos) == []
    assert provenance.tool_versions(infos) == [("fio", "fio-3.33", 2), ("iperf3", "iperf 3.12", 1)]
    line = provenance._tools_line(infos)[0]
    assert "(2 files)" in line and "(1 file)" in line


def test_a_parse_the_chapters_kept_is_read_not_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The provenance pages read a file's kept parse (same bytes, same parser code) instead of parsing it."""
    from iscsi_report.core import keep
    from iscsi_report.core.ingest import tshark
    from iscsi_report.core.measurements import open_dataset

    monkeypatch.setenv(keep.PARSE_CACHE_ENV, str(tmp_path / "kept"))
    ds = open_dataset(CAPTURES.parent)
    entry = next(f for f in ds.select("tshark"))
    ds.parsed(entry)  # a chapter's process keeps the parse
    fresh = provenance.tool_info(entry.path, "tshark")

    def refuse(*_args: object, **_kw: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(tshark, "parse_text", refuse)
    assert provenance.tool_info(entry.path, "tshark") == fresh
    monkeypatch.delenv(keep.PARSE_CACHE_ENV)
    with pytest.raises(AssertionError, match="parsed again"):
        provenance.tool_info(entry.path, "tshark")  # nothing kept: the parser runs
