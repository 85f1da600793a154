"""The reads diagnosis's design and its two new lab pieces (pure parts, runnable anywhere)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fake_lab import FakeLab

from iscsi_report.cli import build_parser
from iscsi_report.core.ingest import tshark as tshark_ingest
from iscsi_report.core.labels import AT_TARGET_SUFFIX
from iscsi_report.core.units import BYTES_PER_MIB
from iscsi_report.lab import reads_sweep as rs
from iscsi_report.lab import slowdisk, sweep, topology

STEP_LOW_BYTES = 2 * BYTES_PER_MIB  # the reads' host time steps up between these two sizes
STEP_HIGH_BYTES = 3328 * 1024


def test_reads_and_writes_of_every_size_at_both_points_with_one_capture_each() -> None:
    runs = rs.design()
    plain = [r for r in runs if not r.captured]
    assert len(plain) == len(rs.POINTS) * len(rs.SIZES) * 2 * rs.REPLICATES
    caps = [r for r in runs if r.captured]
    assert sorted((r.one_way_delay_ms, r.link_mbps, r.bs_bytes, r.rw) for r in caps) == sorted(
        (d, link, bs, rw) for d, link in rs.POINTS for bs in rs.SIZES for rw in ("read", "write")
    )
    assert {r.n_ios for r in caps} == {rs.CAPTURE_IOS} and {r.iodepth for r in runs} == {1}
    inside = [bs for bs in rs.SIZES if STEP_LOW_BYTES < bs < STEP_HIGH_BYTES]
    assert len(inside) >= 2, "sizes inside the step, to place it"
    assert min(rs.SIZES) < STEP_LOW_BYTES and max(rs.SIZES) > STEP_HIGH_BYTES
    assert {r.labels()["design_role"] for r in runs} == {rs.ROLE}
    assert {r.labels()["validation"] for r in runs} == {True}
    stems = [r.stem() for r in runs]
    assert len(stems) == len(set(stems))


def test_a_runs_own_role_leaves_every_other_sweeps_roles_as_they_were() -> None:
    plain = sweep.FioRun(1, 1000.0, 1.0, 65536, 262144, False, 1, "write", 1, 65536, 8)
    assert plain.design_role in ("fit", "holdout")
    assert sweep.FioRun(1, 1000.0, 1.0, 65536, 262144, False, 1, "write", 1, 65536, 8, True).design_role == (
        "confirmation"
    )


def test_local_fio_reads_the_luns_own_file_buffered_as_tgt_does(tmp_path: Path) -> None:
    lab = FakeLab()
    runner = sweep.Runner(lab, tmp_path, lambda _m: None)  # type: ignore[arg-type]
    rs.local_fio(runner)
    assert len(lab.commands) == 2 * len(rs.SIZES) and not runner.failures
    for cmd in lab.commands:
        assert f"--filename={topology.LUN_FILE}" in cmd and "--direct=0" in cmd and "--ioengine=psync" in cmd
        assert f"--size={sweep.FIO_REGION_BYTES}" in cmd
    assert {e["labels"]["rw"] for e in runner.entries} == {"read", "write"}
    assert {e["side"] for e in runner.entries} == {"local"}
    labels = rs.local_labels("read", 3328 * 1024)
    assert labels["device"] == sweep.RAM_DEVICE and labels["direct"] is False and labels["rw"] == "read"
    assert "--direct=1" in slowdisk.fio_cmd(Path("/x/fio"), Path("/d"), "read", 4096, 1, Path("/o.json"))


def test_lab_run_takes_the_reads_diagnosis() -> None:
    assert build_parser("lab").parse_args(["lab", "run", "--reads", "--out", "x"]).reads == 1
    assert build_parser("lab").parse_args(["lab", "run", "--reads", "2", "--out", "x"]).reads == 2
    assert build_parser("lab").parse_args(["lab", "run", "--out", "x"]).reads == 0
    with pytest.raises(ValueError, match=r"--reads 4: expected one of \[1, 2, 3\]"):
        rs.check_design(4)
    assert rs.TGTD_ENV[3]["MALLOC_TRIM_THRESHOLD_"] == rs.TGTD_ENV[3]["MALLOC_MMAP_THRESHOLD_"]
    assert rs.TGTD_ENV[2] == {"MALLOC_MMAP_THRESHOLD_": str(64 << 20)}
    assert "MALLOC_MMAP_THRESHOLD_=" in rs.note(2)
    assert "environment" not in rs.note(1)


def test_iperf3_runs_both_ways_each_labelled_with_its_direction(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(sweep.time, "sleep", lambda _s: None)
    lab = FakeLab()
    runner = sweep.Runner(lab, tmp_path, lambda _m: None)  # type: ignore[arg-type]
    runner.network(1.25, 850.0, ping_count=3, reverse=True)
    iperf = [e for e in runner.entries if e["tool"] == "iperf3"]
    assert [(Path(e["path"]).name, e["labels"]["reverse"]) for e in iperf] == [
        ("d1p25ms-l850.json", False),
        ("d1p25ms-l850-reverse.json", True),
    ]
    clients = [c for c in lab.commands if c[0] == "iperf3" and "-c" in c]
    assert ["-R" in c for c in clients] == [False, True]
    one_way = sweep.Runner(lab, tmp_path / "plain", lambda _m: None)  # type: ignore[arg-type]
    one_way.network(1.25, 850.0, ping_count=3)
    assert next(e for e in one_way.entries if e["tool"] == "iperf3")["labels"].get("reverse") is None


def test_a_capture_at_the_target_is_split_per_run_and_named_for_its_side(tmp_path: Path) -> None:
    runner = sweep.Runner(SimpleNamespace(), tmp_path, lambda _m: None)  # type: ignore[arg-type]
    run = rs.design()[0]
    header = "\t".join(tshark_ingest.EXPORT_FIELDS)
    paths = runner._split_capture(header + "\n", [(run, 0.0, 1.0)], topology.NS_TGT, AT_TARGET_SUFFIX)
    assert [p.name for p in paths] == [f"{run.stem()}{AT_TARGET_SUFFIX}.tsv"]
    entry = runner.entries[0]
    assert entry["labels"]["capture_point"] == f"{topology.NS_TGT}:lab0" and entry["tool"] == "tshark"


def test_each_replicate_visits_the_points_in_its_own_order_and_skips_the_captured(
    tmp_path: Path, monkeypatch: Any
) -> None:
    runner = sweep.Runner(FakeLab(), tmp_path, lambda _m: None)  # type: ignore[arg-type]
    done: list[sweep.FioRun] = []
    monkeypatch.setattr(runner, "fio", done.append)
    runs = rs.design()
    runner.replicated(runs, key=lambda r: (r.bs_bytes, r.rw))
    plain = [r for r in runs if not r.captured]
    assert sorted(done) == sorted(plain) and not any(r.captured for r in done)
    points = sorted({(r.link_mbps, r.one_way_delay_ms) for r in plain})
    expected = [
        run
        for rep in range(1, rs.REPLICATES + 1)
        for point in sweep.visit_order(points, rep)
        for run in sorted(
            (r for r in plain if r.replicate == rep and (r.link_mbps, r.one_way_delay_ms) == point),
            key=lambda r: (r.bs_bytes, r.rw),
        )
    ]
    assert done == expected
