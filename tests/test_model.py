"""The iSCSI latency model against the blog's worked examples, formulas and table (seed 000)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from iscsi_report.core import model as m
from iscsi_report.core.model import (
    BLOG_WIRED,
    BLOG_WIRELESS,
    BLOG_WORKED_EXAMPLE,
    KIB,
    MIB,
    IscsiParams,
    ModelInputError,
    Network,
)

EXACT = 1e-9
EX = BLOG_WORKED_EXAMPLE


def _blog_write(bs_bytes: int, r2t: int, network: Network = BLOG_WIRELESS) -> m.LatencyBreakdown:
    """A write with the blog's default keys, HDD device time and CPU time."""
    params = IscsiParams(max_outstanding_r2t=r2t)
    return m.write_latency(bs_bytes, params, network, EX.device_ms, EX.cpu_ms)


# ---- worked examples -----------------------------------------------------------------------


def test_worked_example_serial_r2t_is_70_14_ms() -> None:
    b = m.write_latency(EX.bs_bytes, EX.serial_params, EX.network, EX.device_ms, EX.cpu_ms)
    assert b.total_ms == pytest.approx(70.14, abs=EXACT)
    assert (b.unsolicited_bytes, b.solicited_bytes) == (64 * KIB, 2 * MIB - 64 * KIB)
    assert (b.bursts, b.waves) == (8, 8)


def test_worked_example_sixteen_outstanding_r2t_is_49_14_ms() -> None:
    b = m.write_latency(EX.bs_bytes, EX.all_at_once_params, EX.network, EX.device_ms, EX.cpu_ms)
    assert b.total_ms == pytest.approx(49.14, abs=EXACT)
    assert (b.bursts, b.waves) == (8, 1)


def test_worked_example_terms_match_blog_expression() -> None:
    """Each term of 1.5+0.87+(1.5+1.5+256/64*0.87)*7+(1.5+192/64*0.87+1.5)+1.5+7.3+8."""
    b = _blog_write(2 * MIB, 1)
    assert b.command_one_way_ms == pytest.approx(1.5, abs=EXACT)
    assert b.unsolicited_transmit_ms == pytest.approx(0.87, abs=EXACT)
    assert b.r2t_one_way_ms == pytest.approx(8 * 1.5, abs=EXACT)
    assert b.data_one_way_ms == pytest.approx(8 * 1.5, abs=EXACT)
    assert b.solicited_transmit_ms == pytest.approx((7 * 256 + 192) / 64 * 0.87, abs=EXACT)
    assert b.status_one_way_ms == pytest.approx(1.5, abs=EXACT)
    assert (b.device_ms, b.cpu_ms) == (7.3, 8.0)


@pytest.mark.parametrize(
    ("r2t", "iops", "mib_per_s"), [(1, 14.26, 28.51), (16, 20.35, 40.70)], ids=["r2t1", "r2t16"]
)
def test_worked_example_iops_and_mib_per_s_print_as_table(r2t: int, iops: float, mib_per_s: float) -> None:
    total = _blog_write(2 * MIB, r2t).total_ms
    assert round(m.iops(total), 2) == iops
    assert round(m.mib_per_s(2 * MIB, total), 2) == mib_per_s


def test_mib_is_binary() -> None:
    assert MIB == 1_048_576
    assert m.mib_per_s(MIB, 1000.0) == pytest.approx(1.0)


# ---- the blog's hand formulas as limits --------------------------------------------------------

BLOCK_SIZES = [4 * KIB, 64 * KIB, 100 * KIB, 256 * KIB, 512 * KIB, MIB, 2 * MIB, 3 * MIB + 5]


def _serial_hand(bs: int, net: Network) -> float:
    """Blog's R2T=1 list: immediate leg, then per burst R2T + data trips, then status."""
    u = min(64 * KIB, bs)
    rest = bs - u
    full, frac = divmod(rest, 256 * KIB)
    t = net.one_way_ms + u / (64 * KIB) * net.per_64k_ms
    t += full * (2 * net.one_way_ms + 256 / 64 * net.per_64k_ms)
    if frac:
        t += 2 * net.one_way_ms + frac / (64 * KIB) * net.per_64k_ms
    return t + net.one_way_ms + EX.device_ms + EX.cpu_ms


def _all_at_once_hand(bs: int, net: Network) -> float:
    """Blog's R2T>=bursts list: immediate leg, one R2T trip, one data trip, transfer, status."""
    u = min(64 * KIB, bs)
    t = net.one_way_ms + u / (64 * KIB) * net.per_64k_ms
    if bs > u:
        t += 2 * net.one_way_ms + (bs - u) / (64 * KIB) * net.per_64k_ms
    return t + net.one_way_ms + EX.device_ms + EX.cpu_ms


@pytest.mark.parametrize("net", [BLOG_WIRELESS, BLOG_WIRED], ids=["wireless", "wired"])
@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_serial_limit_matches_hand_formula(bs: int, net: Network) -> None:
    assert _blog_write(bs, 1, net).total_ms == pytest.approx(_serial_hand(bs, net), abs=EXACT)


@pytest.mark.parametrize("net", [BLOG_WIRELESS, BLOG_WIRED], ids=["wireless", "wired"])
@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_all_at_once_limit_matches_hand_formula(bs: int, net: Network) -> None:
    bursts = _blog_write(bs, 1, net).bursts
    for r2t in {max(bursts, 1), bursts + 1, 64}:
        got = _blog_write(bs, r2t, net).total_ms
        assert got == pytest.approx(_all_at_once_hand(bs, net), abs=EXACT)


@pytest.mark.parametrize("r2t", [2, 4])
@pytest.mark.parametrize("bs", [2 * MIB, 3 * MIB, 4 * MIB])
def test_intermediate_outstanding_r2t_lies_between_limits(bs: int, r2t: int) -> None:
    serial = _blog_write(bs, 1).total_ms
    at_once = _blog_write(bs, 1024).total_ms
    mid = _blog_write(bs, r2t)
    assert at_once < mid.total_ms < serial
    assert mid.waves == math.ceil(mid.bursts / r2t)


def test_waves_for_2mib_by_outstanding_r2t() -> None:
    assert [_blog_write(2 * MIB, r).waves for r in (1, 2, 3, 4, 7, 8, 16)] == [8, 4, 3, 2, 2, 1, 1]


# ---- InitialR2T / ImmediateData / MaxRecvDataSegmentLength -------------------------------


@pytest.mark.parametrize(
    ("initial_r2t", "immediate", "mrdsl", "expected"),
    [
        (False, True, None, 64 * KIB),
        (False, False, None, 64 * KIB),  # unsolicited Data-Out PDUs still carry the first burst
        (False, True, 8192, 64 * KIB),  # MRDSL only splits PDUs; the first burst is unchanged
        (True, True, None, 64 * KIB),
        (True, True, 8192, 8192),
        (True, False, None, 0),
        (True, False, 8192, 0),
    ],
)
def test_unsolicited_bytes_variants(
    initial_r2t: bool, immediate: bool, mrdsl: int | None, expected: int
) -> None:
    params = IscsiParams(initial_r2t=initial_r2t, immediate_data=immediate, max_recv_data_segment_bytes=mrdsl)
    assert m.unsolicited_bytes(2 * MIB, params) == expected
    assert m.unsolicited_bytes(4096, params) == min(expected, 4096)


def test_initial_r2t_without_immediate_data_solicits_everything() -> None:
    params = IscsiParams(initial_r2t=True, immediate_data=False)
    b = m.write_latency(2 * MIB, params, BLOG_WIRELESS, 7.3, 8)
    assert (b.unsolicited_bytes, b.solicited_bytes, b.bursts, b.waves) == (0, 2 * MIB, 8, 8)
    assert b.unsolicited_transmit_ms == 0
    # same transmission in total, so only the trip count differs from the default
    assert b.total_ms == pytest.approx(70.14, abs=EXACT)


def test_small_write_needs_no_r2t() -> None:
    b = _blog_write(64 * KIB, 1)
    assert (b.bursts, b.waves, b.r2t_one_way_ms, b.data_one_way_ms) == (0, 0, 0, 0)
    assert b.total_ms == pytest.approx(1.5 + 0.87 + 1.5 + 7.3 + 8, abs=EXACT)


def test_larger_first_burst_removes_an_r2t() -> None:
    params = IscsiParams(first_burst_bytes=256 * KIB, max_burst_bytes=256 * KIB)
    b = m.write_latency(MIB, params, BLOG_WIRELESS, 0, 0)
    assert (b.unsolicited_bytes, b.bursts, b.waves) == (256 * KIB, 3, 3)


# ---- read -----------------------------------------------------------------------------------


def test_read_latency_terms() -> None:
    b = m.read_latency(2 * MIB, IscsiParams(), BLOG_WIRELESS, 7.3, 8)
    assert b.direction == "read"
    assert b.total_ms == pytest.approx(1.5 + 7.3 + 1.5 + 32 * 0.87 + 8, abs=EXACT)
    assert (b.r2t_one_way_ms, b.status_one_way_ms, b.bursts) == (0, 0, 0)
    assert b.terms.keys() == _blog_write(2 * MIB, 1).terms.keys()


# ---- network, device, helpers -------------------------------------------------------------------


def test_network_converts_between_link_bps_and_per_64k_ms() -> None:
    assert BLOG_WIRELESS.link_bps == pytest.approx(65536 * 8 / 0.87e-3)
    net = Network(one_way_ms=0.11, link_bps=930e6)
    assert net.per_64k_ms == pytest.approx(65536 * 8 / 930e6 * 1000)
    assert Network(0.1, link_bps=net.link_bps).transmit_ms(MIB) == pytest.approx(16 * net.per_64k_ms)


@pytest.mark.parametrize("kwargs", [{}, {"per_64k_ms": 0.5, "link_bps": 1e9}])
def test_network_requires_exactly_one_speed(kwargs: dict) -> None:
    with pytest.raises(ModelInputError, match="exactly one"):
        Network(one_way_ms=0.1, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"first_burst_bytes": 512 * KIB}, "must not exceed"),
        ({"max_outstanding_r2t": 0}, "max_outstanding_r2t"),
        ({"max_burst_bytes": 100}, "max_burst_bytes"),
        ({"max_recv_data_segment_bytes": 2**24}, "max_recv_data_segment_bytes"),
    ],
)
def test_params_reject_out_of_range(kwargs: dict, match: str) -> None:
    with pytest.raises(ModelInputError, match=match):
        IscsiParams(**kwargs)


@pytest.mark.parametrize("bad", [0, -1, 1.5])
def test_block_size_must_be_positive_integer(bad: float) -> None:
    with pytest.raises(ModelInputError, match="bs_bytes"):
        m.write_latency(bad, IscsiParams(), BLOG_WIRELESS, 7.3, 8)  # type: ignore[arg-type]


def test_negative_one_way_rejected() -> None:
    with pytest.raises(ModelInputError, match="one_way_ms"):
        Network(one_way_ms=-0.1, per_64k_ms=0.5)


def test_device_callable_sees_fraction_of_block() -> None:
    seen: list[int] = []

    def device(request_bytes: int) -> float:
        seen.append(request_bytes)
        return request_bytes / MIB * 7.3

    b = m.write_latency(
        2 * MIB,
        IscsiParams(),
        BLOG_WIRELESS,
        device,
        8,
        device_request_fraction=m.BLOG_DEVICE_REQUEST_FRACTION,
    )
    assert seen == [MIB]
    assert b.device_ms == pytest.approx(7.3)
    assert b.device_request_bytes == MIB
    m.write_latency(2 * MIB, IscsiParams(), BLOG_WIRELESS, device, 8, device_request_bytes=4096)
    assert seen[-1] == 4096


def test_device_ms_from_iops_uses_blog_hdd_table() -> None:
    device = m.device_ms_from_iops({MIB: 136, 2 * MIB: 67})
    assert device(MIB) == pytest.approx(1000 / 136)
    assert 1000 / 136 < device(3 * MIB // 2) < 1000 / 67
    with pytest.raises(ModelInputError, match="outside the measured sizes"):
        device(4 * MIB)


def test_cpu_ms_from_utilization_reproduces_blog_4_ms_per_mib() -> None:
    assert m.cpu_ms_from_utilization(0.12, 30) == pytest.approx(4.0)


def test_breakdown_frame_is_tidy_and_sums_to_total() -> None:
    b = _blog_write(2 * MIB, 1)
    df = m.breakdown_frame(b)
    assert list(df.columns) == ["term", "ms"]
    assert list(df["term"]) == list(m.TERM_NAMES)
    assert df["ms"].sum() == pytest.approx(b.total_ms)
    both = m.breakdown_frame({"r2t1": b, "r2t16": _blog_write(2 * MIB, 16)})
    assert list(both.columns) == ["config", "term", "ms"]
    assert both.groupby("config")["ms"].sum().round(2).to_dict() == {"r2t1": 70.14, "r2t16": 49.14}


# ---- throughput bounds --------------------------------------------------------------------------


def test_bounds_latency_binds_at_queue_depth_one() -> None:
    b = m.throughput_bounds(2 * MIB, 70.14, 1, BLOG_WIRELESS.link_bps)
    assert b.binding == "latency"
    assert b.achieved_iops == pytest.approx(1000 / 70.14)
    assert b.link == pytest.approx(BLOG_WIRELESS.link_bps / 8 / (2 * MIB))
    assert (b.device, b.cpu) == (None, None)


def test_bounds_link_binds_for_large_blocks_at_depth() -> None:
    b = m.throughput_bounds(2 * MIB, 70.14, 32, 1e9, device_max_iops=1000, cpu_ms_per_op=1)
    assert b.binding == "link"
    assert b.achieved_iops == pytest.approx(1e9 / 8 / (2 * MIB))


def test_bounds_cpu_binds_for_small_blocks_as_in_seed_001() -> None:
    """512-byte reads on 1 Gb/s: the link allows ~244k IOPS, a 16 us/op CPU allows 62.5k."""
    b = m.throughput_bounds(512, 0.3, 128, 1e9, cpu_ms_per_op=0.016)
    assert b.binding == "cpu"
    assert b.achieved_iops == pytest.approx(62_500)
    assert m.throughput_bounds(512, 0.3, 128, 1e9, cpu_ms_per_op=0.008, cpu_cores=2).cpu == (
        pytest.approx(250_000)
    )


def test_bounds_device_binds_and_wire_bytes_change_link_bound() -> None:
    b = m.throughput_bounds(MIB, 1.0, 64, 1e10, device_max_iops=136)
    assert (b.binding, b.achieved_iops) == ("device", 136)
    framed = m.throughput_bounds(MIB, 1.0, 64, 1e10, wire_bytes_per_op=2 * MIB)
    assert framed.link == pytest.approx(b.link / 2)


def test_bounds_reject_bad_queue_depth() -> None:
    with pytest.raises(ModelInputError, match="queue_depth"):
        m.throughput_bounds(MIB, 1.0, 0, 1e9)


# ---- the blog's projection table --------------------------------------------------------------


def test_blog_projection_inputs_are_the_six_rows() -> None:
    rows = m.blog_projection_inputs()
    assert [(r.max_outstanding_r2t, r.network_label, r.device_label) for r in rows] == [
        (1, "wireless", "HDD"),
        (1, "wired", "HDD"),
        (1, "wired", "SSD"),
        (16, "wireless", "HDD"),
        (16, "wired", "HDD"),
        (16, "wired", "SSD"),
    ]
    assert [r.measured_mib_per_s for r in rows] == [31, 62, 72, 42, 70, 82]


def test_blog_projection_table_recomputes_rows_that_follow_the_formula() -> None:
    t = m.blog_projection_table()
    assert list(t["op_ms"].round(2)) == [70.14, 33.28, 28.68, 49.14, 31.74, 27.14]
    consistent = t.drop(index=[1, 2])  # the wired R2T=1 rows: see the discrepancy test
    assert (consistent["op_ms"].round(2) == consistent["published_op_ms"]).all()
    assert (consistent["mib_per_s"].round(2) == consistent["published_mib_per_s"]).all()
    err = (t["measured_mib_per_s"] - t["mib_per_s"]) / t["measured_mib_per_s"] * 100
    pd.testing.assert_series_equal(t["error_pct"], err, check_names=False)


def test_blog_wired_r2t1_gap_is_one_stale_wireless_one_way_trip() -> None:
    d = m.blog_wired_r2t1_discrepancy()
    assert list(d["device"]) == ["HDD", "SSD"]
    assert list(d["formula_op_ms"].round(9)) == [33.28, 28.68]
    assert list(d["gap_ms"].round(9)) == [1.39, 1.39]
    assert (d["gap_ms"] - d["wireless_minus_wired_one_way_ms"]).abs().max() < EXACT
    assert d["explained"].all()
    assert list(d["formula_error_pct"].round(2)) == [3.07, 3.15]


def test_blog_published_consistency_flags_only_the_iops_typo() -> None:
    c = m.blog_published_consistency()
    bad = c[~c["iops_ok"]]
    assert len(bad) == 1
    row = bad.iloc[0]
    assert (row["published_op_ms"], row["published_iops"]) == (31.74, 31.56)
    assert round(row["iops_from_published_op_ms"], 2) == 31.51
    assert c["mib_per_s_ok"].all() and c["error_ok"].all()


def test_worked_example_inline_figures_round_from_table_values() -> None:
    """The inline "40.8 MiB/s" is 2 x the rounded 20.4 IOPS, not 2 x 20.35."""
    assert round(m.iops(EX.all_at_once_op_ms), 1) == EX.all_at_once_inline_iops
    assert 2 * EX.all_at_once_inline_iops == pytest.approx(EX.all_at_once_inline_mib_per_s)
    assert round(m.mib_per_s(EX.bs_bytes, EX.all_at_once_op_ms), 1) == 40.7
    assert round(m.iops(EX.serial_op_ms), 1) == EX.serial_inline_iops


def test_blog_link_speeds_implied_by_per_64k_inputs() -> None:
    """0.87 ms/64 KiB is the ~600 Mbit/s wireless link; 0.5 ms is faster than the 930 Mbit/s wire."""
    assert BLOG_WIRELESS.link_bps / 1e6 == pytest.approx(602.63, abs=0.01)
    assert BLOG_WIRED.link_bps / 1e6 == pytest.approx(1048.576)
    assert m.per_64k_ms_from_link_bps(930e6) == pytest.approx(0.5637, abs=1e-4)
