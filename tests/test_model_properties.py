"""Property tests of the latency model (hypothesis): physics holds for any valid input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iscsi_report.analyses import whatif
from iscsi_report.core import model as m
from iscsi_report.core.model import IscsiParams, Network
from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB

segment = st.sampled_from([512, 4096, 8192, 65536, 262144])
burst = st.sampled_from([512, 8192, 65536, 262144, 1048576])


@st.composite
def params(draw: st.DrawFn) -> IscsiParams:
    """Valid negotiated keys."""
    most = draw(burst)
    return IscsiParams(
        first_burst_bytes=draw(st.integers(512, most)),
        max_burst_bytes=most,
        immediate_data=draw(st.booleans()),
        initial_r2t=draw(st.booleans()),
        max_outstanding_r2t=draw(st.integers(1, 64)),
        max_recv_data_segment_bytes=draw(segment),
    )


assumptions = st.builds(
    m.Assumptions,
    r2t_pacing=st.sampled_from(m.PACINGS),
    target_r2t_window=st.none() | st.integers(1, 32),
    per_round_ms=st.floats(0, 5),
    pdu_header_bytes=st.sampled_from([0, 48]),
)
networks = st.builds(Network, one_way_ms=st.floats(0, 50), link_bps=st.floats(1e6, 1e11))
block = st.integers(1, 16 * BYTES_PER_MIB)


@settings(max_examples=300, deadline=None)
@given(block, params(), networks, st.floats(0, 50), st.floats(0, 50), assumptions)
def test_bytes_are_conserved_and_terms_are_nonnegative(
    bs: int, p: IscsiParams, net: Network, dev: float, cpu: float, a: m.Assumptions
) -> None:
    b = m.write_latency(bs, p, net, dev, cpu, assumptions=a)
    assert b.immediate_bytes + b.unsolicited_data_out_bytes + b.solicited_bytes == bs
    assert b.immediate_bytes <= min(p.first_burst_bytes, p.max_recv_data_segment_bytes)
    assert b.unsolicited_bytes <= p.first_burst_bytes
    assert p.initial_r2t is False or b.unsolicited_data_out_bytes == 0
    assert all(v >= 0 for v in b.terms.values())
    # never faster than sending every byte once, never slower than fully serial rounds
    assert b.total_ms >= net.transmit_ms(bs) + 2 * net.one_way_ms + dev + cpu - 1e-9
    serial = m.write_latency(
        bs,
        p,
        net,
        dev,
        cpu,
        assumptions=m.Assumptions(
            r2t_pacing="serial", per_round_ms=a.per_round_ms, pdu_header_bytes=a.pdu_header_bytes
        ),
    )
    assert b.total_ms <= serial.total_ms + 1e-9


@settings(max_examples=300, deadline=None)
@given(block, params(), networks, st.floats(0, 50), st.floats(0, 50))
def test_sliding_never_slower_than_lockstep(
    bs: int, p: IscsiParams, net: Network, dev: float, cpu: float
) -> None:
    sliding = m.write_latency(bs, p, net, dev, cpu).total_ms
    lock = m.write_latency(bs, p, net, dev, cpu, assumptions=m.Assumptions(r2t_pacing="lockstep")).total_ms
    assert sliding <= lock + 1e-9


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 200),
    st.floats(0.001, 10),
    st.floats(0.001, 10),
    st.integers(1, 40),
    st.floats(0, 10),
    st.floats(0, 3),
    st.sampled_from(m.PACINGS),
)
def test_closed_form_matches_the_event_schedule(
    n: int, full: float, last: float, w: int, one_way: float, per_round: float, pacing: m.Pacing
) -> None:
    last = min(last, full)
    events = m.burst_schedule(n, full, last, w, one_way, per_round, pacing)
    closed = m.solicited_phase_ms(n, full, last, w, 2 * one_way + per_round, pacing)
    assert closed == pytest.approx(events[-1].arrives_ms, rel=1e-9, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(
    block,
    params(),
    networks,
    st.floats(0.01, 50),
    st.floats(0, 50),
    st.floats(1, 5000),
    st.integers(1, 4096),
    st.sampled_from(["write", "read"]),
    assumptions,
)
def test_throughput_never_exceeds_link_device_or_cpu(
    bs: int,
    p: IscsiParams,
    net: Network,
    dev: float,
    cpu: float,
    device_mib_s: float,
    qd: int,
    rw: m.Direction,
    a: m.Assumptions,
) -> None:
    b = m.operation_latency(rw, bs, p, net, dev, cpu, assumptions=a)
    t = m.throughput(b, net, qd, device_bytes_per_s=device_mib_s * BYTES_PER_MIB)
    bytes_per_s = t.iops * bs
    assert bytes_per_s <= net.bytes_per_s * (1 + 1e-9)
    assert bytes_per_s <= device_mib_s * BYTES_PER_MIB * (1 + 1e-9)
    if cpu > 0:
        assert t.iops <= 1000.0 / cpu * (1 + 1e-9)
    assert t.binding in m.BOUND_NAMES
    assert t.iops == pytest.approx(min(t.bounds.as_dict().values()))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0, 20), min_size=1, max_size=3),
    st.lists(st.floats(1e7, 1e11), min_size=1, max_size=3),
    st.lists(
        st.sampled_from(
            [64 * BYTES_PER_KIB, 256 * BYTES_PER_KIB, BYTES_PER_MIB, 2 * BYTES_PER_MIB, 4 * BYTES_PER_MIB]
        ),
        min_size=1,
        max_size=2,
        unique=True,
    ),
    st.lists(st.integers(1, 16), min_size=1, max_size=2, unique=True),
    st.floats(0.0, 2.0),
    st.floats(0.0, 2.0),
    st.floats(0.0, 10.0),
    st.floats(0.1, 10.0),
    st.integers(1, 64),
)
def test_no_whatif_cell_above_its_ceilings(
    ows: list[float],
    links: list[float],
    sizes: list[int],
    windows: list[int],
    beta_net: float,
    beta_dev: float,
    dev_fixed: float,
    dev_ms_per_mib: float,
    qd: int,
) -> None:
    beta = {"one_way_ms": beta_net, "transmit_ms": beta_net, "device_ms": beta_dev, "cpu_ms": 0.5}
    devices = {"d": whatif.DeviceProfile("d", dev_fixed, dev_ms_per_mib, "test")}
    cpu = whatif.CpuProfile(0.1, 1.0)
    cells = whatif.grid(ows, links, devices, windows, sizes, beta, cpu, queue_depth=qd)
    local_mib = cells["bs_bytes"] / (cells["device_local_ms"] / 1000) / BYTES_PER_MIB
    link_mib = cells["link_bps"] / 8 / BYTES_PER_MIB
    cpu_mib = 1000 / cells["cpu_ms"] * cells["bs_bytes"] / BYTES_PER_MIB
    assert (cells["mib_per_s"] <= local_mib * (1 + 1e-9)).all()
    assert (cells["mib_per_s"] <= link_mib * (1 + 1e-9)).all()
    assert (cells["mib_per_s"] <= cpu_mib * (1 + 1e-9)).all()
    assert cells["binding"].isin(["latency", "link", "device", "cpu"]).all()
