"""The forecasting engine: only today's measurements, physics first, a refusal for leakage."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from iscsi_report.core import forecast, model
from iscsi_report.core.forecast import Configuration, LeakageError, Measured, Source, Today, Value

MBIT = 1e6
MEASURED = Source("measured", "test")


def _conf(**kw: object) -> Configuration:
    base: dict[str, object] = {
        "direction": "write",
        "bs_bytes": 1 << 20,
        "queue_depth": 1,
        "params": model.IscsiParams(
            first_burst_bytes=65536, max_burst_bytes=262144, max_recv_data_segment_bytes=262144
        ),
        "one_way_ms": 1.0,
        "link_bps": 1000 * MBIT,
        "target_r2t_window": 1,
    }
    return Configuration(**{**base, **kw})  # type: ignore[arg-type]


def _today(op_ms: float | None = 20.0, **kw: object) -> Today:
    c = _conf()
    fields: dict[str, object] = {
        "configuration": c,
        "one_way_ms": Value(1.1, MEASURED, 0.01),
        "link_bps": Value(900 * MBIT, MEASURED),
        "pacing": "sliding",
        "pacing_source": Source("default", "test"),
        "device_ms": lambda _b: 0.0,
        "device_source": Source("default", "test"),
        "device_bytes_per_s": None,
        "cpu_ms": Value(0.0, Source("default", "test")),
        "measured": (Measured(c.bs_bytes, Value(op_ms, Source("measured", "fio", c.key()), 0.2)),)
        if op_ms is not None
        else (),
    }
    return Today(**{**fields, **kw})  # type: ignore[arg-type]


def test_a_forecast_of_todays_own_configuration_is_refused() -> None:
    t = _today()
    with pytest.raises(LeakageError, match="configuration being forecast"):
        forecast.forecast(t, t.configuration)
    with pytest.raises(LeakageError, match="configuration being forecast"):  # any of today's runs
        forecast.forecast(_with_sizes({1 << 18: 6.0, 1 << 20: 20.0}), _conf(bs_bytes=1 << 18))


def _with_sizes(op_ms_by_bs: dict[int, float]) -> Today:
    """Today's settings measured at several block sizes."""
    c = _conf()
    runs = tuple(
        Measured(bs, Value(ms, Source("measured", "fio", replace(c, bs_bytes=bs).key()), 0.1))
        for bs, ms in op_ms_by_bs.items()
    )
    return replace(_today(), measured=runs)


def test_the_host_residual_is_fitted_per_byte_over_todays_block_sizes() -> None:
    t0 = _today(op_ms=None)
    model_ms = {bs: forecast._loaded_ms(t0, _conf(bs_bytes=bs)) for bs in (1 << 18, 1 << 20)}
    # Residuals of 1 ms + 2 ms per MiB, exactly: the fit must recover them and extrapolate.
    t = _with_sizes({bs: ms + 1.0 + 2.0 * bs / 2**20 for bs, ms in model_ms.items()})
    res = forecast.host_residual(t)
    assert res.sizes == 2
    assert res.a_ms == pytest.approx(1.0) and res.b_ms_per_byte * 2**20 == pytest.approx(2.0)
    f = forecast.forecast(t, _conf(bs_bytes=1 << 22))
    assert f.terms_ms["host_residual_ms"] == pytest.approx(1.0 + 2.0 * 4)


def test_an_input_measured_on_the_target_is_refused() -> None:
    target = _conf(one_way_ms=3.0)
    leaked = Value(0.4, Source("measured", "capture of the target", target.key()))
    with pytest.raises(LeakageError, match="per_round_ms"):
        forecast.forecast(_today(per_round_ms=leaked), target)


def test_the_forecast_is_todays_latency_plus_the_physics_of_the_change_by_hand() -> None:
    t = _today()
    target = _conf(one_way_ms=3.0)  # 2 ms more one-way delay on every trip
    f = forecast.forecast(t, target)
    # A 1 MiB write, 64 KiB immediate, 256 KiB bursts, window 1: 4 bursts, so 1 + 4 exposed rounds
    # beyond the command and status: 2 + 2 x 4 = 10 one-way trips, each 2 ms longer.
    b = forecast.breakdown(t, target, forecast.network_for(t, target))
    assert b.one_way_trips == 10
    assert f.op_ms == pytest.approx(20.0 + 10 * 2.0, rel=1e-9)
    assert f.terms_ms["host_residual_ms"] == pytest.approx(f.op_ms - b.total_ms, rel=1e-9)
    assert f.network_one_way_ms == pytest.approx(3.1)  # today's 0.1 ms of stack carried over
    assert f.network_link_bps == pytest.approx(900 * MBIT)  # today's 90 % of nominal carried over


def test_a_faster_link_is_read_at_todays_efficiency() -> None:
    f = forecast.forecast(_today(), _conf(link_bps=10_000 * MBIT))
    assert f.network_link_bps == pytest.approx(9000 * MBIT)


def test_no_forecast_exceeds_the_link_the_device_or_the_cpu() -> None:
    device = Value(0.0, MEASURED)
    t = _today(device_bytes_per_s=lambda _b: 50 * 2**20, cpu_ms=device)
    deep = forecast.forecast(t, _conf(queue_depth=64, target_r2t_window=16))
    assert deep.binding == "device" and deep.mib_per_s == pytest.approx(50.0)
    link = forecast.forecast(_today(), _conf(queue_depth=64, one_way_ms=0.0))
    assert link.binding == "link"
    assert link.mib_per_s <= 900 * MBIT / 8 / 2**20 * (1 + 1e-12)
    assert all(link.mib_per_s <= v * (1 + 1e-12) for v in link.ceilings_mib_per_s.values())
    assert math.isinf(link.ceilings_mib_per_s["device"]), "an unmeasured device has no ceiling"


def test_the_interval_holds_todays_error_and_the_engines_own() -> None:
    narrow = forecast.forecast(_today(), _conf(one_way_ms=3.0))
    own = Value(10.0, Source("measured", "95 % error on a training sweep"))
    wide = forecast.forecast(_today(model_error_pct=own), _conf(one_way_ms=3.0))
    assert narrow.ci_low_ms < narrow.op_ms < narrow.ci_high_ms
    half = wide.ci_high_ms - wide.op_ms
    assert half == pytest.approx(math.hypot(narrow.ci_high_ms - narrow.op_ms, 0.1 * wide.op_ms), rel=1e-9)


def test_without_an_iscsi_measurement_today_the_host_residual_is_zero() -> None:
    f = forecast.forecast(_today(op_ms=None), _conf(one_way_ms=3.0))
    assert f.terms_ms["host_residual_ms"] == 0.0


def test_a_read_pays_no_r2t_round() -> None:
    t = _today()
    read = forecast.forecast(t, _conf(direction="read"))
    write = forecast.forecast(t, _conf(bs_bytes=(1 << 20) + 4096))
    assert read.terms_ms["r2t_one_way_ms"] == 0.0 and write.terms_ms["r2t_one_way_ms"] > 0


def test_a_network_measurement_tagged_with_the_target_is_refused_too() -> None:
    target = _conf(one_way_ms=3.0)
    leaked = Value(3.1, Source("measured", "ping during the target's iSCSI runs", target.key()), 0.01)
    with pytest.raises(LeakageError, match="one_way_ms"):
        forecast.forecast(_today(one_way_ms=leaked), target)


def test_a_read_forecast_from_writes_carries_host_time_per_pdu_not_per_byte() -> None:
    """Today's writes pay 0.3 ms per command and 0.05 ms per PDU; a 1 MiB read exchanges 5 PDUs."""
    t0 = _today(op_ms=None)
    net = forecast.network_for(t0, t0.configuration)
    sizes = (1 << 16, 1 << 18, 1 << 20, 1 << 22)
    writes = {bs: forecast.breakdown(t0, _conf(bs_bytes=bs), net) for bs in sizes}
    t = _with_sizes({bs: b.total_ms + 0.3 + 0.05 * b.pdus_exchanged for bs, b in writes.items()})
    fit = forecast.per_pdu_host_time(t)
    assert fit is not None
    assert (fit.per_command_ms, fit.per_pdu_ms) == (pytest.approx(0.3), pytest.approx(0.05))
    read = forecast.forecast(t, _conf(direction="read", bs_bytes=1 << 21))
    assert forecast.breakdown(t, read.target, net).pdus_exchanged == 1 + 8  # 256 KiB Data-In PDUs
    assert read.terms_ms["host_residual_ms"] == pytest.approx(0.3 + 0.05 * 9)
    per_byte, _ = forecast.host_residual(t).at(1 << 21)
    assert per_byte > read.terms_ms["host_residual_ms"] + 0.1, "the writes' R2Ts would be charged per byte"
    write = forecast.forecast(t, _conf(bs_bytes=1 << 21))
    assert write.terms_ms["host_residual_ms"] == pytest.approx(per_byte), "writes keep today's per-byte fit"


def test_another_device_replaces_todays_device_term_even_when_today_has_iscsi_runs() -> None:
    # Today: a 10 ms device under measured iSCSI runs. The target's faster device must lower the
    # forecast by the difference of the two device terms (the residual is today's, fitted with
    # today's device); swapping today's device instead cancels out inside the residual.
    t = _today(device_ms=lambda _b: 10.0)
    fast = forecast.TargetDevice("fast", lambda _b: 0.5, None, Source("nominal", "spec sheet"))
    same = forecast.forecast(t, _conf(one_way_ms=2.0))
    upgraded = forecast.forecast(t, _conf(one_way_ms=2.0, device=fast))
    assert upgraded.terms_ms["device_ms"] == pytest.approx(0.5)
    assert same.op_ms - upgraded.op_ms == pytest.approx(9.5)
    assert upgraded.device_source == fast.source and same.device_source == t.device_source
    assert upgraded.target.key().endswith("|dev=fast") and "dev=" not in same.target.key()


def test_the_targets_device_ceiling_binds_and_a_device_measured_on_the_target_is_refused() -> None:
    t = _today(device_bytes_per_s=lambda _b: 500 * 2**20)
    slow = forecast.TargetDevice("slow", lambda _b: 1.0, lambda _b: 20 * 2**20, Source("measured", "fio"))
    deep = forecast.forecast(t, _conf(queue_depth=64, device=slow))
    assert deep.binding == "device" and deep.mib_per_s == pytest.approx(20.0)
    target = _conf(one_way_ms=3.0, device=slow)
    leaked = replace(slow, source=Source("measured", "fio over iSCSI", target.key()))
    with pytest.raises(LeakageError, match="device term"):
        forecast.forecast(t, replace(target, device=leaked))
