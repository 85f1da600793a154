"""The segments diagnosis: its design, iperf3's small messages and the CPU labels (runnable anywhere)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from fake_lab import FakeLab

from iscsi_report.cli import build_parser
from iscsi_report.lab import segments_sweep as ss
from iscsi_report.lab import sweep


def test_both_parameter_sets_at_every_size_and_point_at_one_window() -> None:
    runs = ss.design()
    assert len(runs) == len(ss.POINTS) * len(sweep.IMMEDIATE) * len(ss.SIZES) * ss.REPLICATES
    assert {(r.immediate_data_bytes, r.max_recv_data_segment_bytes) for r in runs} == set(sweep.IMMEDIATE)
    assert {r.r2t_window for r in runs} == {ss.WINDOW} and not any(r.captured for r in runs)
    assert {r.labels()["design_role"] for r in runs} == {ss.ROLE}
    assert len({r.stem() for r in runs}) == len(runs)


def test_iperf3_sends_the_small_and_large_messages_with_nodelay(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(sweep.time, "sleep", lambda _s: None)
    lab = FakeLab()
    runner = sweep.Runner(lab, tmp_path, lambda _m: None)  # type: ignore[arg-type]
    ss.iperf3_messages(runner, 0.6, 1600.0)
    clients = [c for c in lab.commands if c[0] == "iperf3" and "-c" in c]
    assert len(clients) == len(ss.MESSAGES) * ss.REPLICATES
    sizes = sorted({int(c[c.index("-l") + 1]) for c in clients})
    assert sizes == sorted(ss.MESSAGES) and all("-N" in c for c in clients)
    labels = [e["labels"] for e in runner.entries]
    assert {lab_["message_bytes"] for lab_ in labels} == set(ss.MESSAGES)
    assert all(lab_["nodelay"] is True and lab_["link_mbps"] == 1600.0 for lab_ in labels)
    plain = sweep.Runner(lab, tmp_path / "plain", lambda _m: None)  # type: ignore[arg-type]
    lab.commands.clear()
    plain.network(0.6, 1600.0, ping_count=3)
    default = next(c for c in lab.commands if c[0] == "iperf3" and "-c" in c)
    assert "-l" not in default and "-N" not in default, "the sweeps' own iperf3 runs are unchanged"


def test_every_write_is_labelled_with_the_cpu_seconds_spent_during_it(tmp_path: Path) -> None:
    lab = FakeLab()
    lab.delayline_pid, lab.tgtd_pid = os.getpid(), None  # type: ignore[attr-defined]
    lab.set_target_keys = lambda _p: None  # type: ignore[attr-defined]
    lab.one_way_delay_ms, lab.link_mbps = 0.6, 1600.0  # type: ignore[attr-defined]
    runner = ss.CpuRunner(lab, tmp_path, lambda _m: None)  # type: ignore[arg-type]
    runner.fio(ss.design()[0])
    labels = runner.entries[-1]["labels"]
    assert labels["delayline_cpu_s"] >= 0.0 and labels["tgtd_cpu_s"] == 0.0 and labels["run_wall_s"] >= 0.0


def test_cpu_seconds_grow_with_work_and_are_zero_for_no_process() -> None:
    start = ss.cpu_seconds(os.getpid())
    deadline = start + 0.05
    while ss.cpu_seconds(os.getpid()) < deadline:
        sum(range(10_000))
    assert ss.cpu_seconds(os.getpid()) >= deadline and ss.cpu_seconds(None) == 0.0


def test_lab_run_takes_the_segments_diagnosis() -> None:
    assert build_parser("lab").parse_args(["lab", "run", "--segments", "--out", "x"]).segments == 1
    assert build_parser("lab").parse_args(["lab", "run", "--segments", "2", "--out", "x"]).segments == 2
    assert build_parser("lab").parse_args(["lab", "run", "--out", "x"]).segments == 0
    with pytest.raises(ValueError, match=r"--segments 3: expected one of \[1, 2\]"):
        ss.check_design(3)


def test_design_two_adds_one_captured_run_per_size_set_and_point() -> None:
    plain, both = ss.design(1), ss.design(2)
    caps = [r for r in both if r.captured]
    assert [r for r in both if not r.captured] == plain
    assert len(caps) == len(ss.POINTS) * len(sweep.IMMEDIATE) * len(ss.SIZES)
    assert {r.n_ios for r in caps} == {ss.CAPTURE_IOS} and len({r.stem() for r in both}) == len(both)
