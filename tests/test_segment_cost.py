"""The segments diagnosis read as declared: each reading from the figures, and the committed sweep."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from iscsi_report.analyses import lab
from iscsi_report.analyses import segment_cost as sc
from iscsi_report.core.dataset import RawFile
from iscsi_report.core.measurements import open_dataset

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
SWEEP = "lab-iscsi-2026-segments"
SMALL, LARGE, BIG = 8192, 262144, 2359296


def _frames(
    small_rate: float, line_busy: float, tgtd_busy: float, slow_ms: float
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rates and writes as rates() and writes() shape them, at 540 and 1,600 Mbit/s."""
    r = pd.DataFrame(
        {0: [540.0, 1600.0], SMALL: [540.0, small_rate], LARGE: [540.0, 1600.0]}, index=[540.0, 1600.0]
    )
    rows = []
    for link in (540.0, 1600.0):
        for seg in (SMALL, LARGE):
            fast_small = link == 1600.0 and seg == SMALL
            rows.append(
                {
                    "link_mbps": link,
                    "max_recv_data_segment_bytes": seg,
                    "bs_bytes": BIG,
                    "lat_mean_ms": slow_ms if fast_small else 10.0,
                    "line_busy": line_busy if fast_small else 0.1,
                    "tgtd_busy": tgtd_busy if fast_small else 0.1,
                    "runs": 3,
                }
            )
    return r, pd.DataFrame(rows).set_index(sc.SET_KEYS)


def test_the_line_binds_only_when_small_messages_fall_short_and_it_is_busy() -> None:
    got = sc.readings(*_frames(small_rate=1200.0, line_busy=0.95, tgtd_busy=0.2, slow_ms=11.0))
    assert got.line_binds and not got.hosts_bind and got.replicated
    assert got.iperf_ratio_fast == pytest.approx(0.75) and got.excess_fast == pytest.approx(0.1)
    idle_line = sc.readings(*_frames(small_rate=1200.0, line_busy=0.5, tgtd_busy=0.2, slow_ms=11.0))
    assert not idle_line.line_binds, "a line that is not busy does not bind, whatever iperf3 says"


def test_the_hosts_bind_when_tgtd_is_busy_and_the_line_is_not() -> None:
    got = sc.readings(*_frames(small_rate=1600.0, line_busy=0.3, tgtd_busy=0.9, slow_ms=10.2))
    assert got.hosts_bind and not got.line_binds and not got.replicated


def test_the_committed_diagnosis_reads_neither_and_its_iperf3_runs_leave_the_link_rate_alone() -> None:
    if not (RAW / SWEEP).is_dir():
        pytest.skip("the segments diagnosis is absent")
    ds = open_dataset(RAW / SWEEP)
    r, w = sc.rates(ds), sc.writes(ds)
    got = sc.readings(r, w)
    assert not got.line_binds and not got.hosts_bind and got.line_busy_small < sc.BUSY
    assert set(r.columns) == {0, SMALL, LARGE} and set(w["runs"]) == {3}
    nets = lab.networks(ds).set_index("link_mbps")
    plain = [f for f in ds.select("iperf3") if lab.link_rate_run(f)]
    assert len(plain) == len(nets) and not any(f.labels.get("message_bytes") for f in plain)
    assert set(nets["iperf3_file"]) == {f.rel for f in plain}


def test_a_reverse_or_small_message_iperf3_run_is_not_the_links_rate() -> None:
    def raw(**labels: object) -> RawFile:
        return RawFile(Path("/x"), "x", "iperf3", "initiator", "0" * 64, dict(labels))

    assert lab.link_rate_run(raw())
    assert not lab.link_rate_run(raw(reverse=True)) and not lab.link_rate_run(raw(message_bytes=8192))


def test_the_second_diagnosis_splits_the_miss_by_where_it_shows_and_leaves_captured_runs_out() -> None:
    """Design 2: the means are of the replicated runs only, and each miss is placed as declared."""
    name = "lab-iscsi-2026-segments2"
    if not (RAW / name).is_dir():
        pytest.skip(f"{name} is absent")
    ds = open_dataset(RAW / name)
    assert set(sc.writes(ds)["runs"]) == {3}, "the captured runs are not among the means"
    s = sc.split(ds)
    assert len(s) == 4 and set(s.columns) >= {"latency_diff_ms", *sc.SPLIT_COLUMNS}
    placed = sc.places(s)
    assert (placed == "no miss to explain").tolist() == (s["latency_diff_ms"] <= sc.MIN_MISS_MS).tolist()
    missed = placed[s["latency_diff_ms"] > sc.MIN_MISS_MS]
    assert len(missed) and all("in_line" in p and "at_tgtd" not in p for p in missed)


def test_places_names_every_place_holding_half_the_miss() -> None:
    s = pd.DataFrame(
        {
            "latency_diff_ms": [1.0, 1.0, 0.2],
            "before_line_ms": [0.6, 0.1, 5.0],
            "in_line_ms": [0.5, 0.1, 5.0],
            "at_tgtd_ms": [0.0, 0.4, 5.0],
        }
    )
    assert sc.places(s).tolist() == ["before_line, in_line", "none", "no miss to explain"]


def _split(rows: list[tuple[float, int, float, float]]) -> pd.DataFrame:
    """A split() frame from (link, KiB, latency difference, in the line) rows."""
    return pd.DataFrame(rows, columns=["link_mbps", "kib", "latency_diff_ms", "in_line_ms"])


def test_the_compiled_line_is_read_only_where_the_python_line_missed() -> None:
    python_line = _split(
        [(1600.0, 576, 1.0, 0.8), (1600.0, 2304, 2.0, 1.2), (540.0, 576, 0.2, 0.5), (540.0, 2304, 0.9, 0.6)]
    )
    compiled_line = _split(
        [(1600.0, 576, 0.3, 0.1), (1600.0, 2304, 1.9, 0.7), (540.0, 576, 0.0, 0.0), (540.0, 2304, 0.6, 0.29)]
    )
    c = sc.line_compared(python_line, compiled_line)
    assert [(r.link_mbps, r.kib) for r in c.itertuples()] == [(1600.0, 576), (1600.0, 2304), (540.0, 2304)]
    # 0.1 < 0.4: gone; 0.7 >= 0.6: not; 0.29 < 0.3: gone (strictly under half)
    assert c["line_part_gone"].tolist() == [True, False, True]
    # shrank by 0.7 >= 0.4; by 0.1 < 0.6; by 0.3 >= 0.3 (at least half)
    assert c["miss_shrank"].tolist() == [True, False, True]
    people = sc.line_compared_for_people(c)
    assert people["Line's part gone"].tolist() == ["yes", "no", "yes"]
    assert people["Link (Mbit/s)"].tolist() == ["1,600", "1,600", "540"]


def test_a_size_the_compiled_line_did_not_measure_is_no_reading() -> None:
    c = sc.line_compared(_split([(1600.0, 576, 1.0, 0.8)]), _split([(540.0, 576, 0.0, 0.0)]))
    assert c["diff_compiled_ms"].isna().all() and not c["line_part_gone"].any() and not c["miss_shrank"].any()
