"""Property tests of the latency model: monotonicity, conservation of bytes, bounds."""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from iscsi_report.core import model as m
from iscsi_report.core.model import KIB, MIB, IscsiParams, Network

REL = 1e-12  # float headroom for comparisons of sums of many terms

one_way_ms = st.floats(min_value=0.0, max_value=50.0)
per_64k_ms = st.floats(min_value=1e-3, max_value=50.0)
device_ms = st.floats(min_value=0.0, max_value=100.0)
cpu_ms = st.floats(min_value=0.0, max_value=100.0)
bs_bytes = st.integers(min_value=1, max_value=16 * MIB)
extra = st.floats(min_value=0.0, max_value=10.0)


@st.composite
def iscsi_params(draw: st.DrawFn) -> IscsiParams:
    """Valid negotiated keys: FirstBurstLength <= MaxBurstLength, any flags."""
    max_burst = draw(st.integers(min_value=m.MIN_BURST_BYTES, max_value=MIB))
    first_burst = draw(st.integers(min_value=m.MIN_BURST_BYTES, max_value=max_burst))
    mrdsl = draw(st.none() | st.integers(min_value=m.MIN_BURST_BYTES, max_value=MIB))
    return IscsiParams(
        first_burst_bytes=first_burst,
        max_burst_bytes=max_burst,
        immediate_data=draw(st.booleans()),
        initial_r2t=draw(st.booleans()),
        max_outstanding_r2t=draw(st.integers(min_value=1, max_value=64)),
        max_recv_data_segment_bytes=mrdsl,
    )


def _le(a: float, b: float) -> bool:
    """a <= b up to float rounding."""
    return a <= b + REL * max(1.0, abs(b))


@settings(max_examples=200, deadline=None)
@given(bs_bytes, iscsi_params(), one_way_ms, per_64k_ms, device_ms, cpu_ms)
def test_total_is_trips_plus_transmission_plus_device_and_cpu(
    bs: int, params: IscsiParams, ow: float, p64: float, dev: float, cpu: float
) -> None:
    """Every byte crosses the wire once; trips are command + status + two per wave."""
    b = m.write_latency(bs, params, Network(ow, per_64k_ms=p64), dev, cpu)
    expected = (2 + 2 * b.waves) * ow + bs / (64 * KIB) * p64 + dev + cpu
    assert math.isclose(b.total_ms, expected, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(b.total_ms, math.fsum(b.terms.values()), rel_tol=1e-15)
    assert b.unsolicited_bytes + b.solicited_bytes == bs


@settings(max_examples=200, deadline=None)
@given(bs_bytes, iscsi_params())
def test_bursts_cover_solicited_bytes_and_waves_cover_bursts(bs: int, params: IscsiParams) -> None:
    b = m.write_latency(bs, params, Network(1.0, per_64k_ms=1.0), 0, 0)
    assert 0 <= b.unsolicited_bytes <= min(bs, params.first_burst_bytes)
    assert (b.bursts - 1) * params.max_burst_bytes < b.solicited_bytes or b.bursts == 0
    assert b.solicited_bytes <= b.bursts * params.max_burst_bytes
    assert (b.waves - 1) * params.max_outstanding_r2t < b.bursts <= b.waves * (
        params.max_outstanding_r2t
    ) or b.bursts == b.waves == 0
    if params.initial_r2t and not params.immediate_data:
        assert b.unsolicited_bytes == 0


@settings(max_examples=200, deadline=None)
@given(bs_bytes, iscsi_params(), one_way_ms, per_64k_ms, device_ms, cpu_ms, extra, extra)
def test_slower_network_never_raises_iops(
    bs: int,
    params: IscsiParams,
    ow: float,
    p64: float,
    dev: float,
    cpu: float,
    more_ow: float,
    more_p64: float,
) -> None:
    base = m.write_latency(bs, params, Network(ow, per_64k_ms=p64), dev, cpu).total_ms
    farther = m.write_latency(bs, params, Network(ow + more_ow, per_64k_ms=p64), dev, cpu).total_ms
    slower = m.write_latency(bs, params, Network(ow, per_64k_ms=p64 + more_p64), dev, cpu).total_ms
    assert _le(base, farther) and _le(base, slower)
    if base > 0:
        assert m.iops(farther) <= m.iops(base) * (1 + REL)


@settings(max_examples=200, deadline=None)
@given(bs_bytes, iscsi_params(), one_way_ms, per_64k_ms, device_ms, cpu_ms, extra, extra)
def test_more_device_or_cpu_time_never_raises_iops(
    bs: int,
    params: IscsiParams,
    ow: float,
    p64: float,
    dev: float,
    cpu: float,
    more_dev: float,
    more_cpu: float,
) -> None:
    net = Network(ow, per_64k_ms=p64)
    base = m.write_latency(bs, params, net, dev, cpu).total_ms
    assert _le(base, m.write_latency(bs, params, net, dev + more_dev, cpu).total_ms)
    assert _le(base, m.write_latency(bs, params, net, dev, cpu + more_cpu).total_ms)


@settings(max_examples=200, deadline=None)
@given(bs_bytes, st.integers(min_value=0, max_value=4 * MIB), iscsi_params(), one_way_ms, per_64k_ms)
def test_bigger_blocks_never_take_less_time(
    bs: int, grow: int, params: IscsiParams, ow: float, p64: float
) -> None:
    """Latency is non-decreasing in block size, with a device time growing with request size."""
    net = Network(ow, per_64k_ms=p64)

    def device(request_bytes: int) -> float:
        return 0.5 + request_bytes / MIB * 7.3

    small = m.write_latency(bs, params, net, device, 8.0)
    big = m.write_latency(bs + grow, params, net, device, 8.0)
    assert _le(small.total_ms, big.total_ms)
    assert big.waves >= small.waves
    rs, rb = (m.read_latency(b, params, net, device, 8.0).total_ms for b in (bs, bs + grow))
    assert _le(rs, rb)


@settings(max_examples=200, deadline=None)
@given(bs_bytes, iscsi_params(), st.integers(min_value=1, max_value=64), one_way_ms, per_64k_ms)
def test_more_outstanding_r2t_never_slows_a_write(
    bs: int, params: IscsiParams, more: int, ow: float, p64: float
) -> None:
    net = Network(ow, per_64k_ms=p64)
    wider = replace(params, max_outstanding_r2t=params.max_outstanding_r2t + more)
    assert _le(
        m.write_latency(bs, wider, net, 0, 0).total_ms,
        m.write_latency(bs, params, net, 0, 0).total_ms,
    )


@settings(max_examples=200, deadline=None)
@given(bs_bytes, iscsi_params(), one_way_ms, per_64k_ms, device_ms, cpu_ms)
def test_read_never_slower_than_write(
    bs: int, params: IscsiParams, ow: float, p64: float, dev: float, cpu: float
) -> None:
    """A read has the write's minimum two trips and the same bytes, but never an R2T."""
    net = Network(ow, per_64k_ms=p64)
    assert _le(
        m.read_latency(bs, params, net, dev, cpu).total_ms,
        m.write_latency(bs, params, net, dev, cpu).total_ms,
    )


positive = st.floats(min_value=1e-3, max_value=1e6)


@settings(max_examples=300, deadline=None)
@given(
    bs_bytes,
    positive,
    st.integers(min_value=1, max_value=1024),
    st.floats(min_value=1e3, max_value=1e12),
    st.none() | positive,
    st.none() | positive,
    st.integers(min_value=1, max_value=64),
)
def test_bounds_achieved_is_the_binding_minimum(
    bs: int,
    lat: float,
    qd: int,
    link: float,
    dev_iops: float | None,
    cpu_op: float | None,
    cores: int,
) -> None:
    b = m.throughput_bounds(bs, lat, qd, link, dev_iops, cpu_op, cores)
    present = {k: v for k, v in b.as_dict().items() if v is not None}
    assert b.achieved_iops == min(present.values())
    assert present[b.binding] == b.achieved_iops
    assert math.isclose(b.latency, qd * 1000 / lat)
    assert math.isclose(b.link, link / 8 / bs)
    if cpu_op is not None:
        assert math.isclose(b.cpu, cores * 1000 / cpu_op)
    deeper = m.throughput_bounds(bs, lat, qd + 1, link, dev_iops, cpu_op, cores)
    assert deeper.achieved_iops >= b.achieved_iops
