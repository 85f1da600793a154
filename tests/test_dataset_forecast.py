"""``project --dataset`` on the lab's iSCSI runs: the forecasting engine, today's files only, pacing read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from iscsi_report import cli
from iscsi_report.analyses import dataset_forecast as df
from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab, pacing
from iscsi_report.core import forecast
from iscsi_report.core.errors import ReportError
from iscsi_report.core.measurements import Measurements, forget, open_dataset

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
SWEEP = "lab-iscsi-2026"
# The issue's command: every negotiated key stated, a delay, rate and size no sweep used.
ISSUE_FLAGS = [
    *("--dataset", SWEEP, "--one-way-ms", "0.3", "--link-mbps", "600", "--bs", "896k"),
    *("--max-outstanding-r2t", "4", "--target-r2t-window", "4", "--first-burst", "64k"),
    *("--max-burst", "256k", "--max-recv-data-segment", "256k", "--immediate-data", "yes"),
    *("--initial-r2t", "yes"),
]
pytestmark = pytest.mark.skipif(not (RAW / SWEEP).is_dir(), reason="the lab sweep is absent")


def _project(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``iscsi-report --root ROOT project ARGV`` -> (exit status, stdout, stderr)."""
    try:
        status = cli.main(["--root", str(ROOT), "project", *argv])
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def _doc(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    status, out, err = _project(capsys, *argv, "--json")
    assert status == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_the_issues_command_forecasts_a_write_from_lab_data_alone(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _doc(capsys, *ISSUE_FLAGS)
    assert doc["direction"] == "write" and doc["bs_bytes"] == 896 * 1024
    assert doc["ci_low_ms"] < doc["op_ms"] < doc["ci_high_ms"]
    assert doc["target"]["link_mbps"] == 600 and doc["target"]["target_r2t_window"] == 4
    # no ceiling exceeded, and the one that binds is named
    caps = [v for v in doc["ceilings_mib_per_s"].values() if v is not None]
    assert doc["mib_per_s"] <= min(caps) + 1e-9 and doc["binding"] in doc["ceilings_mib_per_s"]
    assert doc["r2t_pacing"] == "sliding" and doc["r2t_pacing_source"].startswith("detected")
    # 896 KiB at 600 Mbit/s cannot take less than its wire time
    wire_ms = 896 * 1024 * 8 / 600e6 * 1e3
    assert doc["op_ms"] > wire_ms
    assert all(e["kind"] in ("measured", "default") for e in doc["inputs"].values())


def test_reads_and_queue_depth_are_forecast_too(capsys: pytest.CaptureFixture[str]) -> None:
    read = _doc(capsys, "--dataset", SWEEP, "--bs", "1m", "--one-way-ms", "2", "--rw", "read")
    write = _doc(capsys, "--dataset", SWEEP, "--bs", "1m", "--one-way-ms", "2")
    assert read["direction"] == "read" and read["terms"]["r2t_one_way_ms"] == 0.0
    assert write["terms"]["r2t_one_way_ms"] > 0.0, "a write at window 1 pays R2T trips, a read none"
    deep = _doc(capsys, "--dataset", SWEEP, "--bs", "1m", "--one-way-ms", "1", "--queue-depth", "4")
    assert deep["queue_depth"] == 4 and deep["binding"] in ("link", "latency")
    assert deep["mib_per_s"] <= deep["ceilings_mib_per_s"]["link"] + 1e-9
    assert deep["engine_version"] == 2 and "one connection" in deep["engine"], "the answer names its engine"
    assert read["scope"].startswith("inside") and write["scope"].startswith("inside")


def test_engine_version_3_is_asked_for_by_name_and_carries_its_own_blind_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    at_window_1 = [*ISSUE_FLAGS, "--today", "r2t_window=1"]  # today at window 1, the target at 4
    v2 = _doc(capsys, *at_window_1)
    v3 = _doc(capsys, *at_window_1, "--engine-version", "3")
    assert v2["engine_version"] == 2 and "per_round_ms" not in v2["inputs"]
    assert v3["engine_version"] == 3 and "host time per R2T round" in v3["engine"]
    per_round = v3["inputs"]["per_round_ms"]
    assert per_round["kind"] == "measured" and "captured writes of today's settings" in per_round["source"]
    assert v3["op_ms"] < v2["op_ms"], "fewer rounds at window 4 save today's host time per round"
    own = v3["inputs"]["model_error_pct"]["source"]  # the interval's own error: version 3's blind sweeps only
    assert "lab-iscsi-2026-blind6" in own and "lab-iscsi-2026-blind7" in own and "blind5" not in own
    assert "lab-iscsi-2026-blind5" in v2["inputs"]["model_error_pct"]["source"]
    status, out, err = _project(capsys, *ISSUE_FLAGS, "--engine-version", "9")
    assert status == 2 and "--engine-version 9: expected one of 2, 3" in err
    status, out, _ = _project(capsys, *ISSUE_FLAGS, "--engine-version", "3")
    assert status == 0 and "engine: version 3" in out


def test_a_read_as_large_as_the_allocator_step_is_said_to_be_outside_the_tested_scope(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A read of 3,328 KiB or more is still forecast, but the answer says no blind sweep tested it."""
    big = _doc(capsys, "--dataset", SWEEP, "--bs", "3328k", "--one-way-ms", "2", "--rw", "read")
    assert big["scope"].startswith("outside the tested scope") and "allocator" in big["scope"]
    status, out, _ = _project(capsys, "--dataset", SWEEP, "--bs", "4m", "--one-way-ms", "2", "--rw", "read")
    assert status == 0 and "scope: outside the tested scope" in out


def _fresh() -> Measurements:
    """The sweep with an empty read log (the process keeps one per folder)."""
    forget()
    return open_dataset(RAW / SWEEP)


def test_no_file_of_the_target_configuration_is_read() -> None:
    """A target the sweep measured: its fio runs and captures are left out, unread; today's are read."""
    ds = _fresh()
    combo = {"bs": 1024 * 1024, "one_way_ms": 1.0, "link_mbps": 1000.0, "max_outstanding_r2t": 2}
    e = df.prepare(ds, combo, "write", {}, None)
    f = forecast.forecast(e.today, e.target)
    target_files = [
        x.rel
        for x in ds.select(tool=None)
        if x.tool in ("fio", "tshark")
        and df._is_run(x)
        and df._capture_key(ds, x) == e.target.key()
        and x.labels["iodepth"] == 1
    ]
    assert target_files, "the sweep measured this target (else the test proves nothing)"
    assert set(e.left_out) <= set(target_files) and e.left_out
    assert not set(target_files) & set(ds.read_counts), "a file of the target configuration was read"
    assert any(r.startswith("fio/") for r in ds.read_counts), "today's runs were read"
    assert f.op_ms > 0


def test_the_engine_refuses_todays_runs_when_they_are_the_targets() -> None:
    ds = _fresh()
    combo = {"bs": 1024 * 1024, "one_way_ms": 1.0, "link_mbps": 1000.0, "max_outstanding_r2t": 2}
    e = df.prepare(ds, combo, "write", {}, None)
    group = e.group
    base = fm.configuration_of(ds, pd.Series(df._group_row(group, group.sizes[0])))
    rows, _ = df.todays_runs(ds, group, "no target")  # every size kept, the target's included
    leaky = fm.today(ds, rows)
    assert leaky.configuration.key().split("|bs=")[0] == base.key().split("|bs=")[0]
    with pytest.raises(forecast.LeakageError):
        forecast.forecast(leaky, e.target)


def test_the_cli_and_the_forecast_matrix_give_the_same_forecast() -> None:
    """One engine: a (today, target) pair of the scored matrix, asked through project, agrees."""
    data = lab.load(RAW / SWEEP)
    confs = fm.configurations(data)
    group = next(g for g in fm._todays(confs, None) if g["r2t_window"].iloc[0] == 1 and len(g) >= 3)
    t = fm.today(data.dataset, group)
    writes = confs[(confs["rw"] == "write") & (confs["iodepth"] == 1)]
    target_row = writes[writes["r2t_window"] == 4].iloc[0]
    target = fm.configuration_of(data.dataset, target_row)
    expected = forecast.forecast(t, target).op_ms
    g0 = group.iloc[0]
    selection = {
        "one_way_delay_ms": float(g0["one_way_delay_ms"]),
        "link_mbps": float(g0["link_mbps"]),
        "r2t_window": 1.0,
        "iscsi_parameters": str(g0["iscsi_parameters"]),
    }
    combo = {
        "bs": int(target_row["bs_bytes"]),
        "one_way_ms": float(target_row["one_way_delay_ms"]),
        "link_mbps": float(target_row["link_mbps"]),
        "max_outstanding_r2t": 4,
        "iscsi_parameters": str(target_row["iscsi_parameters"]),
    }
    e = df.prepare(data.dataset, combo, "write", selection, "sliding")
    assert e.target.key() == target.key()
    assert forecast.forecast(e.today, e.target).op_ms == pytest.approx(expected, rel=1e-9)


def test_unsupported_flags_and_a_wrong_today_are_named(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _project(capsys, "--dataset", SWEEP, "--bs", "1m", "--device-ms", "3")
    assert status == 2 and "--device-ms" in err
    status, _, err = _project(capsys, "--dataset", SWEEP, "--bs", "1m", "--today", "r2t_window=3")
    assert status == 2 and "r2t_window in {1, 2, 4, 8}" in err
    with pytest.raises(ReportError, match="LABEL=VALUE"):
        df.parse_today("window=3")


def test_a_stated_pacing_is_used_and_the_captures_verdict_shown(capsys: pytest.CaptureFixture[str]) -> None:
    window_1 = "one_way_delay_ms=0.5,link_mbps=1000,r2t_window=1,iscsi_parameters=tgt-libiscsi-imm64k-seg256k"
    doc = _doc(capsys, *ISSUE_FLAGS, "--today", window_1, "--r2t-pacing", "serial")
    sliding = _doc(capsys, *ISSUE_FLAGS, "--today", window_1)
    assert doc["r2t_pacing"] == "serial" and "captures say: sliding" in doc["r2t_pacing_source"]
    assert doc["today"]["chosen"] == "chosen with --today"
    assert doc["op_ms"] > sliding["op_ms"], "from window 1 to 4, serial pacing gains less than sliding"


# ---- the pacing detector on hand-made timelines -------------------------------------------------


def _write(itt: int, r2t_outstanding: list[int]) -> pd.DataFrame:
    """One write's R2T rows with the outstanding count just after each (what timeline() gives)."""
    rows = [{"stream": 0, "itt": itt, "event": "command", "outstanding_r2t": 0}]
    rows += [{"stream": 0, "itt": itt, "event": "r2t", "outstanding_r2t": n} for n in r2t_outstanding]
    return pd.DataFrame(rows)


def _detect(per_write: list[int], writes: int = 4, window: int = 2) -> pacing.PacingEvidence:
    timeline = pd.concat([_write(i, per_write) for i in range(writes)], ignore_index=True)
    return pacing.detect([("cap.tsv", timeline, window)])


def test_serial_sliding_and_lockstep_are_told_apart() -> None:
    assert _detect([1, 1, 1, 1]).pacing == "serial"  # never two at once although the window is 2
    assert _detect([1, 2, 2, 2]).pacing == "sliding"  # later R2Ts arrive with a burst outstanding
    hidden = _detect([1, 2, 1, 2])  # each later group's first R2T arrives with nothing outstanding
    assert hidden.pacing is None and "lockstep, or sliding hidden" in hidden.reason()
    few = _detect([1, 2, 2, 2], writes=pacing.MIN_WRITES - 1)
    assert few.pacing is None and "not detected" in few.reason()
    assert _detect([1, 2], window=2).writes == 0, "no more R2Ts than the window: nothing to read"


def test_percentiles_come_with_the_forecast(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _doc(capsys, "--dataset", SWEEP, "--bs", "1m", "--one-way-ms", "2")
    assert doc["p50_ms"] < doc["p99_ms"] <= doc["p99_9_ms"]
    assert doc["percentiles_rule"] == "per-round", "no other network: today's ping, whole rounds"
    assert doc["percentiles_interval"] == "none (no sweep tested this case)" and "p99_ci_ms" not in doc
    assert abs(doc["p50_ms"] - doc["op_ms"]) < 0.05 * doc["op_ms"]
    ping = RAW / SWEEP / "ping" / "d2ms-l1000.txt"
    manual = ["--bs", "1m", "--one-way-ms", "2", "--link-mbps", "1000", "--device-mib-s", "5000"]
    plain = _doc(capsys, *manual)
    spread = _doc(capsys, *manual, "--ping", str(ping))
    assert "p99_ms" not in plain and spread["p50_ms"] < spread["p99_ms"]
    assert spread["op_ms"] == plain["op_ms"], "the ping log changes the spread, never the mean"
    deep = _doc(capsys, *manual, "--ping", str(ping), "--queue-depth", "4")
    assert deep["p99_ms"] is None and "queue depth 1" in deep["percentiles_note"]


def test_the_engines_own_blind_error_leaves_the_target_out_and_widens_the_interval() -> None:
    """The interval carries the quantile of the engine's frozen-forecast errors, never the target's."""
    errors = pd.DataFrame(
        {
            "sweep": ["a"] * 20 + ["b"],
            "target": [f"t{i}" for i in range(20)] + ["x"],
            "abs_error_pct": [*range(20), 500],
        }
    )
    with_target = df.own_error(errors, "nothing like it")
    without = df.own_error(errors, "x")
    assert with_target is not None and without is not None
    assert without.value == pytest.approx(np.quantile(np.arange(20), 0.95))  # the 500 % of x left out
    assert with_target.value > without.value and "21 forecasts" in with_target.source.what
    assert "20 forecasts" in without.source.what and "a (20)" in without.source.what
    assert df.own_error(errors[errors["target"] == "x"], "x") is None
    ds = open_dataset(RAW / SWEEP)
    combo = {"bs": 896 * 1024, "one_way_ms": 0.3, "link_mbps": 600.0, "max_outstanding_r2t": 4}
    plain = df.prepare(ds, combo, "write", {}, None)
    wide = df.prepare(ds, combo, "write", {}, None, errors=errors[errors["target"] != "x"])
    f, g = forecast.forecast(plain.today, plain.target), forecast.forecast(wide.today, wide.target)
    assert g.op_ms == f.op_ms and g.ci_high_ms - g.op_ms > f.ci_high_ms - f.op_ms
    assert "measurement error only" in df.interval_words(None)
    own = wide.today.model_error_pct
    assert own is not None and f"({own.value:.1f} % of the forecast" in df.interval_words(own)


def test_the_cli_interval_holds_the_engines_error_on_the_lab_blind_sweeps(
    capsys: pytest.CaptureFixture[str],
) -> None:
    blind = [s for s in df.BLIND_SWEEPS if (RAW / s).is_dir()]
    if not blind:
        pytest.skip("no blind sweep in this checkout")
    doc = _doc(capsys, *ISSUE_FLAGS)
    own = doc["inputs"]["model_error_pct"]
    assert own["kind"] == "measured" and all(s in own["source"] for s in blind)
    errors = df.blind_errors(RAW, ROOT / "data" / "preregistered")
    assert set(errors["sweep"]) == set(blind) and own["value"] == pytest.approx(
        np.quantile(errors["abs_error_pct"], 0.95)
    )
    assert doc["op_ms"] * own["value"] / 100 < doc["ci_high_ms"] - doc["op_ms"]  # at least the engine's own
    assert "where it forecast blind" in doc["interval"]


def test_no_blind_sweep_in_the_project_leaves_no_error_behind(tmp_path: Path) -> None:
    assert df.blind_errors(tmp_path / "raw", tmp_path / "pre").empty


JITTER_SWEEPS = (
    "lab-iscsi-2026-jitter2",
    "lab-iscsi-2026-jitter3",
    "lab-iscsi-2026-jitter4",
    "lab-iscsi-2026-jitter5",
)


def test_every_jittered_lab_line_takes_the_validated_branch_of_the_tail_model() -> None:
    """The CLI's rule sends each jittered shape of the lab's sweeps through the per-packet FIFO model."""
    from iscsi_report.analyses import lab_tails
    from iscsi_report.core import distribution

    present = [s for s in JITTER_SWEEPS if (RAW / s).is_dir()]
    if not present:
        pytest.skip("no jitter sweep in this checkout")
    for sweep in present:
        ds = open_dataset(RAW / sweep)
        fixed, _ = lab_tails.ping_rtt(ds, lab_tails.REFERENCE)
        shapes = {str(p.labels["jitter"]) for p in ds.select("ping")} - {lab_tails.REFERENCE}
        assert shapes
        for shape in sorted(shapes):
            rtt, _ = lab_tails.ping_rtt(ds, shape)
            assert distribution.tail_rule(rtt, fixed) == distribution.PER_PACKET, (sweep, shape)


def test_a_target_networks_ping_sets_its_delay_and_its_tail(capsys: pytest.CaptureFixture[str]) -> None:
    jittered = RAW / "lab-iscsi-2026-jitter5" / "ping" / "d1-jwifitracems-l1000.txt"
    if not jittered.is_file():
        pytest.skip("the fifth jitter sweep is absent")
    base = ["--dataset", SWEEP, "--bs", "1m", "--link-mbps", "1000"]
    steady = _doc(capsys, *base)
    wifi = _doc(capsys, *base, "--ping", str(jittered))
    assert wifi["percentiles_rule"] == "per-packet" and str(jittered) in wifi["network"]["one_way_from"]
    ds = open_dataset(RAW / SWEEP)
    rtt = (
        open_dataset(RAW / "lab-iscsi-2026-jitter5")
        .ping(
            next(
                p
                for p in open_dataset(RAW / "lab-iscsi-2026-jitter5").select("ping")
                if p.rel.endswith(jittered.name)
            )
        )
        .rtt_ms
    )
    e = df.prepare(
        ds, {"bs": 2**20, "link_mbps": 1000.0}, "write", {}, None, target_ping=df.TargetPing(rtt, "x")
    )
    expected = e.today.configuration.one_way_ms + (np.nanmean(rtt) - np.nanmean(e.today_rtt_ms)) / 2
    assert e.target.one_way_ms == pytest.approx(expected) and wifi["target"]["one_way_ms"] == pytest.approx(
        expected
    )
    assert wifi["target"]["one_way_ms"] > steady["target"]["one_way_ms"]
    assert (
        wifi["op_ms"] > steady["op_ms"]
        and wifi["p99_ms"] - wifi["p50_ms"] > steady["p99_ms"] - steady["p50_ms"]
    )
    low, high = wifi["p99_ci_ms"]
    assert (
        low < wifi["p99_ms"] < high
        and "lab-iscsi-2026-jitter5, pre-registered" in wifi["percentiles_interval"]
    )
    status, out, _ = _project(capsys, *base, "--ping", str(jittered))
    assert (
        status == 0
        and f"percentiles (ms): p50 {wifi['p50_ms']:.3f}, p90" in out
        and "first-in, first-out" in out
    )
    stated = _doc(capsys, *base, "--one-way-ms", "2", "--ping", str(jittered))
    assert stated["target"]["one_way_ms"] == 2 and stated["network"]["one_way_from"] == "--one-way-ms"


def test_the_tail_interval_inverts_the_lab_error_and_is_given_only_where_it_was_tested() -> None:
    """An error of e per cent of the measured value: measured between forecast/(1+e) and forecast/(1-e)."""
    err = {0.99: df.Value(10.0, df.Source("measured", "ten per cent at p99"))}
    found = df._tail_intervals({0.5: 50.0, 0.99: 100.0}, "per-packet", err)
    assert found["p99_ci_ms"] == pytest.approx([100 / 1.1, 100 / 0.9])
    assert "p50_ci_ms" not in found and found["percentiles_interval"] == "ten per cent at p99"
    assert "no sweep tested" in df._tail_intervals({0.99: 100.0}, "per-round", err)["percentiles_interval"]
    assert "is not here" in df._tail_intervals({0.99: 100.0}, "per-packet", {})["percentiles_interval"]
    wild = df._tail_intervals(
        {0.99: 100.0}, "per-packet", {0.99: df.Value(150.0, df.Source("measured", "x"))}
    )
    assert wild["p99_ci_ms"] == pytest.approx([100 / (1 + df.MAX_TAIL_ERROR), 100 / (1 - df.MAX_TAIL_ERROR)])


def test_a_ping_file_of_too_few_replies_is_refused_with_its_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    short = tmp_path / "short.txt"
    short.write_text(
        "".join(f"64 bytes from 198.18.0.2: icmp_seq={i} ttl=64 time=0.5 ms\n" for i in range(5))
    )
    status, out, err = _project(capsys, "--dataset", SWEEP, "--bs", "1m", "--ping", str(short), "--json")
    assert status == 2 and not out
    assert f"{short}: 5 ping replies; a latency distribution needs at least" in err
