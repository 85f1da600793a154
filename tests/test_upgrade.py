"""The upgrade chapter's forecasts: today's measured system, one change at a time, never past a ceiling."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from iscsi_report.analyses import upgrade
from iscsi_report.analyses.projections import MissingDataError
from iscsi_report.core import model
from iscsi_report.core.errors import ReportError
from iscsi_report.core.forecast import Source, Value
from iscsi_report.core.measurements import open_dataset

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
MIB = 2**20


def _net(one_way_ms: float = 0.1, mbps: float = 940.0, nominal_mbps: float = 1000.0) -> upgrade.Network:
    m = Source("measured", "test")
    return upgrade.Network(
        "lan", Value(one_way_ms, m, 0.001), Value(mbps * 1e6, m), nominal_mbps * 1e6, 0.002
    )


def _disk(mib_per_s: float = 363.4) -> upgrade.Device:
    """A disk whose local throughput is ``mib_per_s`` at every size (time = size / rate)."""
    rate = mib_per_s * MIB
    return upgrade.Device("disk", lambda b: b / rate * 1e3, lambda _b: rate, Source("measured", "fio"))


def _table(dev: upgrade.Device, bs: int = MIB) -> tuple[upgrade.forecast.Today, object]:
    today = upgrade.today_of(_net(), dev, model.IscsiParams(), bs, "sliding")
    return today, upgrade.forecasts(today, upgrade.default_scenarios(today, {}))


def test_no_scenario_forecasts_more_than_the_disk_wrote_on_its_own() -> None:
    """The fault a user hit: 579.7 MiB/s forecast at 1 MiB where local fio measured 363.4 MiB/s."""
    _, table = _table(_disk(363.4))
    assert (table["mib_per_s"] <= 363.4 + 1e-6).all()
    ten = table.set_index("scenario").loc["10 GbE wire rate"]
    assert ten["binding"] in ("device", "latency") and ten["mib_per_s"] < 363.4
    deep = table.set_index("scenario").loc[f"queue depth {upgrade.DEEP_QUEUE}"]
    assert deep["binding"] == "link"  # 940 Mbit/s is below the disk's 363.4 MiB/s
    fast_link = replace(_net(), link=Value(10e9, Source("measured", "t")), nominal_bps=10e9)
    t = upgrade.today_of(fast_link, _disk(363.4), model.IscsiParams(), MIB, "sliding")
    deep_fast = upgrade.forecasts(t, upgrade.default_scenarios(t, {})).set_index("scenario")
    assert deep_fast.loc[f"queue depth {upgrade.DEEP_QUEUE}", "binding"] == "device"
    assert deep_fast.loc[f"queue depth {upgrade.DEEP_QUEUE}", "mib_per_s"] == pytest.approx(363.4)


def test_a_faster_link_and_a_wider_window_never_slow_a_write() -> None:
    _, table = _table(_disk(2000.0))
    by = table.set_index("scenario")["op_ms"]
    assert by["1 GbE wire rate"] == pytest.approx(by["today"])  # today's nominal rate is 1 Gbit/s
    assert by["10 GbE wire rate"] < 0.5 * by["today"]
    assert by[f"MaxOutstandingR2T {upgrade.WIDE_WINDOW}"] <= by["today"] + 1e-9


def test_the_sata_ssd_is_its_interface_limit() -> None:
    ssd = upgrade.sata_ssd()
    assert ssd.rate_at(MIB) == pytest.approx(600e6)
    assert ssd.ms_at(MIB) == pytest.approx(MIB / 600e6 * 1e3)
    assert ssd.source.kind == "nominal"


@pytest.mark.skipif(not (RAW / "lab-veth-2026").is_dir(), reason="bundled dataset absent")
def test_the_bundled_machine_is_read_from_its_files() -> None:
    ds = open_dataset(RAW / "lab-veth-2026")
    nets = upgrade.measured_networks(ds, 0.002)
    devs = upgrade.measured_devices(ds)
    assert list(nets.usable) == ["veth"] and nets.usable["veth"].ping_interval_s == 0.002
    assert nets.usable["veth"].nominal_bps == 800e6  # the iperf3 file's link_limit_mbps label
    assert set(devs) == {"virtio-ssd"}
    disk = devs["virtio-ssd"]
    assert disk.says(2 * MIB).startswith("device term:")
    assert "extrapolated" in disk.says(8 * MIB)  # beyond the largest size measured, said
    # never faster than local fio: the ceiling is its throughput at the size
    local = ds.fio(next(f for f in ds.select("fio") if f.labels.get("bs_bytes") == 2 * MIB))
    assert disk.rate_at(2 * MIB) == pytest.approx(float(local.jobs.iloc[0]["bw_bytes_per_s"]), rel=0.02)
    params, why = upgrade.params_of(ds)
    assert params == model.IscsiParams() and "RFC 7143" in why


def test_declared_scenarios_change_what_they_say_and_bad_keys_are_named(tmp_path: Path) -> None:
    today, _ = _table(_disk(363.4))
    items = [
        {"name": "WAN", "one_way_ms": 5.0},
        {"name": "NVMe", "device_mib_s": 2000.0, "device_access_ms": 0.02},
        {"name": "wide and deep", "max_outstanding_r2t": 16, "queue_depth": 4},
    ]
    scenarios = upgrade.declared(items, tmp_path, today, "params/x.yaml: scenarios")
    table = upgrade.forecasts(today, [upgrade.default_scenarios(today, {})[0], *scenarios]).set_index(
        "scenario"
    )
    assert table.loc["WAN", "op_ms"] > table.loc["today", "op_ms"] + 2 * 4.9  # four one-way trips at least
    assert table.loc["NVMe", "device_ms"] == pytest.approx(0.02 + MIB / (2000 * MIB) * 1e3)
    assert "declared" in table.loc["NVMe", "what"]
    assert table.loc["wide and deep", "mib_per_s"] > table.loc["today", "mib_per_s"]
    for bad, key in (
        ({"name": "x", "link_mbps": -1}, "link_mbps"),
        ({"name": "x", "one_way_ms": float("nan")}, "one_way_ms"),
        ({"name": "x", "queue_depth": 10**30}, "queue_depth"),
        ({"name": "x", "colour": "red"}, "colour"),
    ):
        with pytest.raises(ReportError, match=rf"scenarios\[0\]\.{key}"):
            upgrade.declared([bad], tmp_path, today, "params/x.yaml: scenarios")
    with pytest.raises(ReportError, match="changes nothing"):
        upgrade.declared([{"name": "idle"}], tmp_path, today, "w")
    with pytest.raises(ReportError, match="no dataset 'elsewhere'"):
        upgrade.declared([{"name": "x", "network_dataset": "elsewhere"}], tmp_path, today, "w")


def test_percentiles_come_from_the_ping_spread_at_queue_depth_1_only() -> None:
    today, _ = _table(_disk(2000.0))
    rng = np.random.default_rng(0)
    rtt = tuple(0.2 + rng.gamma(1.5, 0.4, size=2000))
    table = upgrade.forecasts(today, upgrade.default_scenarios(today, {}), rtt).set_index("scenario")
    row = table.loc["today"]
    assert row["p50_ms"] < row["op_ms"] * 1.05 and row["p99_ms"] > row["op_ms"]
    assert np.isnan(table.loc[f"queue depth {upgrade.DEEP_QUEUE}", "p99_ms"])
    flat = upgrade.forecasts(today, upgrade.default_scenarios(today, {}), (0.2,) * 2000).set_index("scenario")
    assert flat.loc["today", "p99_ms"] == pytest.approx(flat.loc["today", "op_ms"])  # no spread, no tail


@pytest.mark.skipif(not (RAW / "lab-veth-2026").is_dir(), reason="bundled dataset absent")
def test_a_network_pinged_far_from_the_protocols_spacing_is_left_out_and_said() -> None:
    ds = open_dataset(RAW / "lab-veth-2026")
    assert list(upgrade.measured_networks(ds, 0.004).usable) == ["veth"]  # 2 ms is within 2x of 4 ms
    far = upgrade.measured_networks(ds, 1.0)  # only 2 ms pings: 500x away
    assert far.usable == {} and "within 2x" in far.left_out["veth"]
    with pytest.raises(
        ReportError, match=r"no network 'veth' \(has: none; veth left out: no ping at 1000 ms"
    ):
        far.chosen("veth", ds.name)
    with pytest.raises(MissingDataError, match="veth left out"):
        far.chosen("", ds.name)


def test_a_scenario_on_a_more_jittered_network_gets_the_per_packet_tail() -> None:
    """Today on a steady LAN; a scenario moves to a jittered one: its tail is deconvolved per packet."""
    today, _ = _table(_disk(2000.0))
    rng = np.random.default_rng(1)
    steady = tuple(0.2 + np.abs(rng.normal(0, 0.01, 3000)))
    jittered = tuple(0.2 + rng.gamma(1.5, 0.4, size=3000))
    moved = upgrade.Scenario("jittered", "the same hosts on a jittered network", lambda c: c, jittered)
    back = upgrade.Scenario("steady again", "a steady network", lambda c: c, steady)
    table = upgrade.forecasts(today, [moved, back], jittered).set_index("scenario")
    assert table.loc["jittered", "tail_rule"] == "per-round", (
        "today is the jittered one: nothing to deconvolve"
    )
    table = upgrade.forecasts(today, [moved, back], steady).set_index("scenario")
    assert (
        table.loc["jittered", "tail_rule"] == "per-packet"
        and table.loc["steady again", "tail_rule"] == "per-round"
    )
    assert table.loc["jittered", "p99_ms"] > table.loc["steady again", "p99_ms"] + 1.0
