"""A frame of one PDU is read by a fast path: the same rows, and the same errors, as the general one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import tshark

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted((ROOT / "data" / "raw" / "lab-iscsi-2026" / "tshark").glob("*"))[:10]
# values a damaged or unusual export can hold: empty, aggregated, not numbers, hex, huge
ODD_VALUES = ["", ";", "x", "0x", "1;2", ";5", "5;", "-1", "0x31", "0x05;0x31", "9" * 25, "1.5", "true"]


def _frames() -> list[dict[str, str]]:
    """Every frame of a few bundled captures as tshark's columns (header name to aggregated value)."""
    frames = []
    for capture in CAPTURES:
        lines = capture.read_text(encoding="utf-8").splitlines()
        header = lines[0].split("\t")
        frames += [dict(zip(header, raw.split("\t"), strict=True)) for raw in lines[1:] if raw.strip()]
    return frames


FRAMES = _frames()


def _outcome(read: Any, cols: dict[str, str]) -> tuple[str, Any]:
    """What a reader makes of one frame: its rows, or its error's words."""
    try:
        return "rows", read(cols, "capture", 2)
    except IngestError as exc:
        return "error", str(exc)


def test_bundled_captures_have_one_pdu_frames_and_both_paths_read_them_alike() -> None:
    single = [cols for cols in FRAMES if tshark._single_valued(cols)]
    assert len(single) > 100  # the fast path is the common case, so this compares it on many frames
    for cols in single:
        assert tshark._one_pdu(cols, "capture", 2) == tshark._dealt_pdus(cols, "capture", 2)


@settings(max_examples=300, deadline=None)
@given(
    frame=st.integers(min_value=0, max_value=len(FRAMES) - 1),
    edits=st.lists(st.tuples(st.sampled_from(tshark.EXPORT_FIELDS), st.sampled_from(ODD_VALUES)), max_size=3),
)
def test_a_damaged_one_pdu_frame_gives_the_general_paths_rows_or_error(
    frame: int, edits: list[tuple[str, str]]
) -> None:
    cols = dict(FRAMES[frame])
    for name, value in edits:
        if name in cols:
            cols[name] = value
    assume(tshark._single_valued(cols))  # a frame of several PDUs (or none) takes the general path only
    assert _outcome(tshark._one_pdu, cols) == _outcome(tshark._dealt_pdus, cols)
