"""Where a large read's time goes: the target's time before its first Data-In, read from captures."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from iscsi_report.analyses import read_time
from iscsi_report.core.measurements import open_dataset

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
SWEEPS = ("lab-iscsi-2026-reads", "lab-iscsi-2026-reads2", "lab-iscsi-2026-reads3")


def _pdus(rows: list[tuple[float, str, int, int]]) -> pd.DataFrame:
    """PDUs as the tshark parser gives them: time (s), kind, task tag, data segment bytes."""
    return pd.DataFrame(rows, columns=["time_epoch_s", "pdu", "itt", "data_segment_bytes"])


def test_a_reads_target_time_is_command_to_first_data_in_and_its_spread_is_beyond_the_wire() -> None:
    # two reads of 3 x 125,000 bytes at 1000 Mbit/s: a PDU takes 1 ms on the wire
    pdus = _pdus(
        [
            (10.000, "command", 1, 0),
            (10.004, "data_in", 1, 125_000),
            (10.005, "data_in", 1, 125_000),
            (10.0065, "data_in", 1, 125_000),
            (10.007, "response", 1, 0),
            (10.010, "command", 2, 0),
            (10.012, "data_in", 2, 125_000),
            (10.013, "data_in", 2, 125_000),
            (10.014, "data_in", 2, 125_000),
            (10.0141, "response", 2, 0),
        ]
    )
    ops = read_time.operations(pdus)
    assert read_time.target_ms(ops, "read").tolist() == pytest.approx([4.0, 2.0])
    assert read_time.spread_excess_ms(ops, 1000.0).tolist() == pytest.approx([0.5, 0.0], abs=1e-9)
    assert ops["t_next"].iloc[0] == pytest.approx(10.010)


def test_a_writes_target_time_is_its_last_data_out_to_the_response() -> None:
    pdus = _pdus(
        [
            (1.000, "command", 7, 65536),
            (1.001, "r2t", 7, 0),
            (1.002, "data_out", 7, 65536),
            (1.003, "data_out", 7, 65536),
            (1.0045, "response", 7, 0),
        ]
    )
    assert read_time.target_ms(read_time.operations(pdus), "write").tolist() == pytest.approx([1.5])


@pytest.mark.skipif(not all((RAW / s).is_dir() for s in SWEEPS), reason="the reads sweeps are absent")
def test_fresh_pages_were_the_large_reads_time_at_the_target() -> None:
    """The predictions pre-registered for lab-iscsi-2026-reads3, against lab-iscsi-2026-reads's defaults."""
    t = read_time.table([open_dataset(RAW / s) for s in SWEEPS], (2048, 3328, 4096)).set_index(
        ["sweep", "one_way_ms", "kib"]
    )
    default, fresh, reused = (t.loc[s] for s in SWEEPS)
    assert read_time.allocator(open_dataset(RAW / SWEEPS[0])) == "glibc's defaults"
    assert t.loc["lab-iscsi-2026-reads3", "allocator"].str.contains("MALLOC_TRIM_THRESHOLD_=67108864").all()
    for one_way in (1.25, 4.5):
        assert default.loc[(one_way, 4096), "read_target_ms"] > 3.0  # the jump, at both points
        assert default.loc[(one_way, 3328), "read_target_ms"] < 2.0  # blind2's step did not recur that day
        assert fresh.loc[(one_way, 2048), "read_target_ms"] > default.loc[(one_way, 2048), "read_target_ms"]
        assert reused.loc[(one_way, 4096), "read_target_ms"] <= 2.6
        assert reused.loc[(one_way, 2048), "read_target_ms"] <= 1.8
        gain = default.loc[(one_way, 4096), "read_mean_ms"] - reused.loc[(one_way, 4096), "read_mean_ms"]
        assert gain >= 2.0
        # a write's buffer faults behind the wire: its time at the target does not jump
        writes = [s.loc[(one_way, 4096), "write_target_ms"] for s in (default, fresh, reused)]
        assert max(writes) < 2.5 and max(writes) - min(writes) < 0.5


def test_a_commands_pdus_are_those_of_its_tag_from_its_own_time_on_whatever_the_order() -> None:
    """Interleaved tags, rows out of time order, a PDU of a tag before its command, a tag used twice,
    a command with no data and one with no response: each row as the per-command reading gives it."""
    pdus = _pdus(
        [
            (5.0040, "data_out", 3, 4_000),  # out of order: read first, sent last
            (4.9990, "data_out", 3, 9_999),  # tag 3 before its command: not its data
            (5.0000, "command", 3, 1_000),
            (5.0010, "command", 4, 0),
            (5.0020, "data_out", 3, 2_000),
            (5.0030, "data_in", 4, 8_000),
            (5.0035, "response", 4, 0),
            (5.0050, "r2t", 3, 0),  # neither data nor response
            (5.0060, "command", 5, 0),  # no data, no response
            (5.0070, "command", 4, 0),  # tag 4 again: only its later PDUs
            (5.0080, "data_in", 4, 500),
        ]
    )
    ops = read_time.operations(pdus)
    assert ops["t_cmd"].tolist() == [5.0, 5.001, 5.006, 5.007]
    assert ops["t_first"].tolist()[:2] == [5.002, 5.003]
    assert ops["t_last"].tolist()[:2] == [5.004, 5.008]  # the first tag 4 reaches its reuse's data
    assert ops["t_end"].tolist()[:2] == [5.004, 5.0035]  # no response: the last data PDU
    assert ops["first_bytes"].tolist()[:2] == [2_000.0, 8_000.0]
    assert ops["data_bytes"].tolist() == [6_000.0, 8_500.0, 0.0, 500.0]
    assert ops.iloc[2][["t_first", "t_last", "t_end", "first_bytes"]].isna().all()
    assert ops.iloc[3][["t_first", "t_last", "t_end", "first_bytes"]].tolist() == [5.008, 5.008, 5.008, 500.0]
    assert ops["t_next"].tolist()[:3] == [5.001, 5.006, 5.007] and pd.isna(ops["t_next"].iloc[3])
