"""The iSCSI latency model: PDU rules, R2T pacing, per-round cost, reads, ceilings, the blog's examples."""

from __future__ import annotations

import math

import pytest

from iscsi_report.analyses import blog
from iscsi_report.core import model as m
from iscsi_report.core.model import IscsiParams, Network
from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB

WIRELESS = Network(one_way_ms=1.5, per_64k_ms=0.87)
NO_HEADERS = m.Assumptions(pdu_header_bytes=0)


def blog_keys(window: int) -> IscsiParams:
    """The blog's session keys (InitialR2T=No, 64 KiB first burst, 256 KiB bursts)."""
    return IscsiParams(initial_r2t=False, max_outstanding_r2t=window)


# ---- the blog's worked examples, under its own assumptions ----------------------------------------


def test_blog_worked_examples_reproduce_exactly_from_the_published_file() -> None:
    inputs = blog.inputs()
    printed = {e.max_outstanding_r2t: e.op_ms for e in blog.worked_examples()}
    got = {w: blog.breakdown(inputs, w, "wireless", "hdd").total_ms for w in (1, 16)}
    assert printed == {1: 70.14, 16: 49.14}
    assert got[1] == pytest.approx(70.14, abs=1e-9)
    assert got[16] == pytest.approx(49.14, abs=1e-9)


def test_blog_table_recomputed_prints_as_published_except_the_two_wired_serial_rows() -> None:
    t = blog.projection_table()
    ok = (t["op_ms"] - t["published_op_ms"]).abs() <= 0.005 + 1e-9
    off = t[~ok]
    assert list(zip(off["max_outstanding_r2t"], off["network"], strict=True)) == [(1, "wired"), (1, "wired")]
    assert blog.wired_r2t1_discrepancy()["explained"].all()


# ---- R2T pacing --------------------------------------------------------------------------------


def test_sliding_window_of_two_keeps_the_wireless_link_busy() -> None:
    """Each 256 KiB burst takes 3.48 ms > the 3 ms R2T round trip: window 2 ~ window 16."""
    w16 = m.write_latency(
        2 * BYTES_PER_MIB, blog_keys(16), WIRELESS, 7.3, 8.0, assumptions=NO_HEADERS
    ).total_ms
    w2 = m.write_latency(2 * BYTES_PER_MIB, blog_keys(2), WIRELESS, 7.3, 8.0).total_ms  # default: sliding
    assert m.DEFAULT_ASSUMPTIONS.r2t_pacing == "sliding"
    assert w16 == pytest.approx(49.14, abs=1e-9)
    assert abs(w2 - 49.14) / 49.14 < 0.03
    lock = m.write_latency(
        2 * BYTES_PER_MIB, blog_keys(2), WIRELESS, 7.3, 8.0, assumptions=blog.BLOG_ASSUMPTIONS
    )
    assert lock.total_ms == pytest.approx(49.14 + 9.0)  # lock-step pays 3 more round trips of 3 ms


def test_serial_pacing_ignores_the_negotiated_window() -> None:
    serial = m.Assumptions(r2t_pacing="serial", pdu_header_bytes=0)
    b = m.write_latency(2 * BYTES_PER_MIB, blog_keys(16), WIRELESS, 7.3, 8.0, assumptions=serial)
    assert b.effective_r2t_window == 1
    assert b.total_ms == pytest.approx(70.14)
    assert b.exposed_rounds == 8


def test_effective_window_is_the_smaller_of_negotiated_and_target() -> None:
    a = m.Assumptions(target_r2t_window=4)
    assert m.effective_r2t_window(blog_keys(16), a) == 4
    assert m.effective_r2t_window(blog_keys(2), a) == 2
    assert m.effective_r2t_window(blog_keys(16), m.Assumptions(r2t_pacing="serial")) == 1


def test_sliding_window_short_of_the_link_pays_partial_rounds() -> None:
    """A fast link (burst 0.2 ms) with a 1 ms one-way: window 2 stalls, 8 bursts => 4 groups."""
    net = Network(one_way_ms=1.0, link_bps=10e9)
    b = m.write_latency(2 * BYTES_PER_MIB, blog_keys(2), net, 0.0, 0.0, assumptions=NO_HEADERS)
    burst_ms = net.transmit_ms(256 * BYTES_PER_KIB)
    cycle = max(2 * burst_ms, 2.0 + burst_ms)
    expected_phase = 2.0 + 3 * cycle + 1 * burst_ms + net.transmit_ms(192 * BYTES_PER_KIB)
    unsol = net.transmit_ms(64 * BYTES_PER_KIB)
    assert b.total_ms == pytest.approx(1.0 + unsol + expected_phase + 1.0)
    assert 1 < b.exposed_rounds < 4


@pytest.mark.parametrize("pacing", ["sliding", "serial", "lockstep"])
@pytest.mark.parametrize("window", [1, 2, 3, 5, 16])
@pytest.mark.parametrize(
    ("one_way", "burst", "last", "per_round"), [(1.5, 3.48, 2.61, 0.0), (1.0, 0.2, 0.1, 0.3)]
)
def test_closed_form_equals_event_schedule(
    pacing: m.Pacing, window: int, one_way: float, burst: float, last: float, per_round: float
) -> None:
    for bursts in (1, 2, 7, 8, 9, 33):
        events = m.burst_schedule(bursts, burst, last, window, one_way, per_round, pacing)
        closed = m.solicited_phase_ms(bursts, burst, last, window, 2 * one_way + per_round, pacing)
        assert closed == pytest.approx(events[-1].arrives_ms)


def test_event_schedule_never_exceeds_the_window() -> None:
    events = m.burst_schedule(8, 3.48, 3.48, 2, 1.5, 0.0, "sliding")
    for e in events:
        outstanding = sum(1 for o in events if o.r2t_sent_ms <= e.r2t_sent_ms < o.arrives_ms)
        assert outstanding <= 2


# ---- immediate data, unsolicited data and PDUs --------------------------------------------------


def test_initial_r2t_yes_with_default_segment_sends_8_kib_unsolicited() -> None:
    p = IscsiParams()  # RFC 7143 defaults
    assert (p.initial_r2t, p.max_recv_data_segment_bytes) == (True, 8192)
    b = m.write_latency(2 * BYTES_PER_MIB, p, WIRELESS, 0.0, 0.0)
    assert (b.immediate_bytes, b.unsolicited_data_out_bytes, b.unsolicited_bytes) == (8192, 0, 8192)
    assert b.solicited_bytes == 2 * BYTES_PER_MIB - 8192


def test_initial_r2t_no_sends_the_rest_of_the_first_burst_as_data_out() -> None:
    b = m.write_latency(2 * BYTES_PER_MIB, blog_keys(1), WIRELESS, 0.0, 0.0)
    assert (b.immediate_bytes, b.unsolicited_data_out_bytes) == (8192, 65536 - 8192)
    no_imm = IscsiParams(initial_r2t=False, immediate_data=False)
    assert m.immediate_bytes(2 * BYTES_PER_MIB, no_imm) == 0
    assert m.unsolicited_data_out_bytes(2 * BYTES_PER_MIB, no_imm) == 65536


def test_immediate_data_is_capped_by_the_segment_length_and_the_block() -> None:
    big = IscsiParams(max_recv_data_segment_bytes=262144)
    assert m.immediate_bytes(2 * BYTES_PER_MIB, big) == 65536
    assert m.immediate_bytes(4096, big) == 4096
    assert m.immediate_bytes(2 * BYTES_PER_MIB, IscsiParams(immediate_data=False)) == 0


def test_pdu_counts_follow_the_segment_length() -> None:
    b = m.write_latency(2 * BYTES_PER_MIB, blog_keys(1), WIRELESS, 0.0, 0.0)
    # 56 KiB unsolicited -> 7 PDUs; 7 bursts of 256 KiB -> 32 each; last 192 KiB -> 24
    assert (b.bursts, b.data_pdus) == (8, 7 + 7 * 32 + 24)
    assert b.wire_bytes == 2 * BYTES_PER_MIB - 8192 + 8192 + (1 + b.data_pdus) * m.BHS_BYTES
    big = m.write_latency(
        2 * BYTES_PER_MIB, IscsiParams(max_recv_data_segment_bytes=262144), WIRELESS, 0.0, 0.0
    )
    assert big.data_pdus == 8  # one PDU per burst (the last holds 2 MiB - 64 KiB - 7 x 256 KiB)
    assert m.data_pdus(0, IscsiParams()) == 0


def test_pdu_headers_cost_wire_time() -> None:
    with_h = m.write_latency(2 * BYTES_PER_MIB, blog_keys(16), WIRELESS, 0.0, 0.0)
    without = m.write_latency(2 * BYTES_PER_MIB, blog_keys(16), WIRELESS, 0.0, 0.0, assumptions=NO_HEADERS)
    extra = WIRELESS.transmit_ms((1 + with_h.data_pdus) * m.BHS_BYTES)
    assert with_h.total_ms - without.total_ms == pytest.approx(extra)


# ---- per-round cost, reads --------------------------------------------------------------------


def test_per_round_cost_grows_with_serial_rounds_and_hides_in_a_full_window() -> None:
    serial = m.Assumptions(r2t_pacing="serial", per_round_ms=0.5, pdu_header_bytes=0)
    base = m.Assumptions(r2t_pacing="serial", pdu_header_bytes=0)
    b1 = m.write_latency(2 * BYTES_PER_MIB, blog_keys(1), WIRELESS, 0.0, 0.0, assumptions=serial)
    b0 = m.write_latency(2 * BYTES_PER_MIB, blog_keys(1), WIRELESS, 0.0, 0.0, assumptions=base)
    assert b1.total_ms - b0.total_ms == pytest.approx(8 * 0.5)
    assert b1.r2t_processing_ms == pytest.approx(4.0)
    sliding = m.Assumptions(per_round_ms=0.4, pdu_header_bytes=0)  # 3.4 ms < 3.48 ms burst
    s = m.write_latency(2 * BYTES_PER_MIB, blog_keys(2), WIRELESS, 0.0, 0.0, assumptions=sliding)
    assert s.total_ms == pytest.approx(49.14 - 7.3 - 8.0 + 0.4)  # only the first round pays it


def test_read_has_no_r2t_and_one_trip_each_way() -> None:
    r = m.read_latency(2 * BYTES_PER_MIB, IscsiParams(), WIRELESS, 7.3, 8.0, assumptions=NO_HEADERS)
    assert (r.bursts, r.r2t_one_way_ms, r.status_one_way_ms) == (0, 0.0, 0.0)
    assert r.total_ms == pytest.approx(1.5 + 7.3 + 8.0 + 32 * 0.87 + 1.5)
    assert r.data_pdus == 256
    assert (
        m.operation_latency("read", 2 * BYTES_PER_MIB, IscsiParams(), WIRELESS, 0.0, 0.0).direction == "read"
    )
    with pytest.raises(m.ModelInputError, match="direction"):
        m.operation_latency("trim", 2 * BYTES_PER_MIB, IscsiParams(), WIRELESS, 0.0, 0.0)  # type: ignore[arg-type]


# ---- ceilings ---------------------------------------------------------------------------------


@pytest.mark.parametrize("queue_depth", [1, 2, 4, 8, 32, 256, 65535])
def test_hdd_over_10gbe_never_beats_its_local_136_mib_s(queue_depth: int) -> None:
    net = Network(one_way_ms=0.05, link_bps=10e9)
    for assumptions in (m.DEFAULT_ASSUMPTIONS, blog.BLOG_ASSUMPTIONS):
        b = m.write_latency(2 * BYTES_PER_MIB, blog_keys(16), net, 7.3, 8.0, assumptions=assumptions)
        t = m.throughput(b, net, queue_depth, device_bytes_per_s=136 * BYTES_PER_MIB)
        assert t.mib_per_s <= 136 + 1e-9
        assert set(t.bounds.as_dict()) == {"latency", "link", "device", "cpu"}
        assert all(v is not None for v in t.bounds.as_dict().values())
    assert t.binding == ("latency" if queue_depth == 1 else "device")


def test_device_ceiling_derived_from_the_device_time_when_no_rate_is_given() -> None:
    b = m.write_latency(
        2 * BYTES_PER_MIB, blog_keys(16), WIRELESS, 7.3, 8.0, assumptions=blog.BLOG_ASSUMPTIONS
    )
    t = m.throughput(b, WIRELESS, 64)
    assert b.device_request_bytes == BYTES_PER_MIB  # the blog's half-size request
    assert t.device_bytes_per_s == pytest.approx(BYTES_PER_MIB / 0.0073)
    assert t.mib_per_s <= t.ceilings_mib_per_s()["link"] + 1e-9
    zero = m.write_latency(2 * BYTES_PER_MIB, blog_keys(16), WIRELESS, 0.0, 8.0)
    with pytest.raises(m.ModelInputError, match="device ceiling is unknown"):
        m.throughput(zero, WIRELESS, 4)


def test_no_cpu_time_means_no_cpu_ceiling_not_a_missing_device() -> None:
    b = m.write_latency(64 * BYTES_PER_KIB, IscsiParams(), WIRELESS, 1.0, 0.0)
    t = m.throughput(b, WIRELESS, 8)
    assert math.isinf(t.bounds.cpu)
    assert math.isfinite(t.bounds.device)


# ---- validation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"first_burst_bytes": 2 * 262144}, "must not exceed"),
        ({"max_outstanding_r2t": 0}, "max_outstanding_r2t"),
        ({"max_recv_data_segment_bytes": 100}, "max_recv_data_segment_bytes"),
        ({"max_burst_bytes": 2**24}, "max_burst_bytes"),
    ],
)
def test_bad_keys_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(m.ModelInputError, match=match):
        IscsiParams(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"r2t_pacing": "waves"}, "r2t_pacing"),
        ({"target_r2t_window": 0}, "target_r2t_window"),
        ({"per_round_ms": -1.0}, "per_round_ms"),
        ({"per_round_ms": math.nan}, "per_round_ms"),
        ({"device_request_fraction": 0.0}, "device_request_fraction"),
    ],
)
def test_bad_assumptions_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(m.ModelInputError, match=match):
        m.Assumptions(**kwargs)


def test_absurd_inputs_give_a_clear_error_not_inf() -> None:
    with pytest.raises(m.ModelInputError, match=r"floating-point range|non-finite"):
        m.write_latency(2 * BYTES_PER_MIB, IscsiParams(), Network(1e308, per_64k_ms=1e308), 1e308, 1e308)
    with pytest.raises(m.ModelInputError, match="bs_bytes"):
        m.write_latency(2**60, IscsiParams(), WIRELESS, 0.0, 0.0)
    with pytest.raises(m.ModelInputError, match="one_way_ms"):
        Network(math.inf, per_64k_ms=1.0)


def test_a_reads_trips_pdus_and_wire_time_follow_the_protocol() -> None:
    """RFC 7143: command out, Data-In back cut at the initiator's MaxRecvDataSegmentLength, no R2T."""
    keys = IscsiParams(
        first_burst_bytes=65536,
        max_burst_bytes=262144,
        max_recv_data_segment_bytes=8 * BYTES_PER_KIB,  # the target's: bounds Data-Out, not Data-In
        initiator_max_recv_data_segment_bytes=64 * BYTES_PER_KIB,
    )
    net = Network(one_way_ms=1.0, link_bps=1e9)
    r = m.read_latency(BYTES_PER_MIB, keys, net, 0.0, 0.0)
    data_in_bytes = BYTES_PER_MIB + 16 * m.BHS_BYTES  # 16 Data-In PDUs of 64 KiB, one header each
    assert (r.data_pdus, r.bursts, r.one_way_trips, r.response_pdus) == (16, 0, 2.0, 0)
    assert r.pdus_exchanged == 1 + 16, "the command and its Data-In PDUs, the status in the last"
    assert r.unsolicited_transmit_ms == pytest.approx(m.BHS_BYTES * 8 / 1e9 * 1e3)  # the command PDU
    assert r.solicited_transmit_ms == pytest.approx(data_in_bytes * 8 / 1e9 * 1e3)
    assert r.total_ms == pytest.approx(2 * 1.0 + (m.BHS_BYTES + data_in_bytes) * 8 / 1e9 * 1e3)
    assert r.wire_bytes == data_in_bytes, "the link's bound is the direction that carries the data"
    apart = m.read_latency(
        BYTES_PER_MIB, keys, net, 0.0, 0.0, assumptions=m.Assumptions(read_status_in_last_data_in=False)
    )
    assert (apart.pdus_exchanged, apart.wire_bytes) == (18, data_in_bytes + m.BHS_BYTES)
    w = m.write_latency(BYTES_PER_MIB, keys, net, 0.0, 0.0)  # 8 KiB Data-Out PDUs, 4 R2Ts
    assert w.pdus_exchanged == 1 + 4 + (BYTES_PER_MIB - 8 * BYTES_PER_KIB) // (8 * BYTES_PER_KIB) + 1
    same = m.read_latency(
        BYTES_PER_MIB, IscsiParams(max_recv_data_segment_bytes=8 * BYTES_PER_KIB), net, 0.0, 0.0
    )
    assert same.data_pdus == 128, "without the initiator's value, the target's bounds Data-In too"
