"""Writes in flight on one connection (core.queueing): the replay against the model and by hand."""

from __future__ import annotations

import heapq
from dataclasses import replace

import pytest

from iscsi_report.core import forecast, model, queueing
from iscsi_report.core.forecast import Configuration, Source, Today, Value
from iscsi_report.core.units import BITS_PER_BYTE, BYTES_PER_KIB, MS_PER_S

MBIT = 1e6
PARAMS = model.IscsiParams(
    first_burst_bytes=65536, max_burst_bytes=262144, max_recv_data_segment_bytes=262144
)


@pytest.mark.parametrize("pacing", ["sliding", "serial", "lockstep"])
@pytest.mark.parametrize(
    ("bs_kib", "window", "immediate"), [(32, 1, True), (704, 4, True), (1536, 1, True), (2304, 3, False)]
)
def test_one_write_alone_takes_exactly_the_models_latency(
    pacing: str, bs_kib: int, window: int, immediate: bool
) -> None:
    """At queue depth 1 nothing waits, so the replay must reproduce the closed form term for term."""
    params = replace(PARAMS, immediate_data=immediate)
    net = model.Network(one_way_ms=2.5, link_bps=700 * MBIT)
    a = model.Assumptions(r2t_pacing=pacing, target_r2t_window=window, per_round_ms=0.2)  # type: ignore[arg-type]
    b = model.write_latency(bs_kib * BYTES_PER_KIB, params, net, 0.0, 0.0, assumptions=a)
    x = queueing.exchange_of(bs_kib * BYTES_PER_KIB, params, net, a, 0.0)
    assert queueing.replay_mean_ms(x, 1, 0.0) == pytest.approx(b.total_ms, rel=1e-12)


def _by_hand(one_way_ms: float, data_ms: float, command_ms: float = 1.0) -> queueing.WriteExchange:
    """One burst of ``data_ms`` on the wire after a command of ``command_ms`` (its immediate data)."""
    link_bps = 1e9

    def wire(ms: float) -> int:
        return round(ms / MS_PER_S * link_bps / BITS_PER_BYTE)

    command, data = wire(command_ms), wire(data_ms)
    return queueing.WriteExchange(command, (data,), 1, "sliding", one_way_ms, 0.0, link_bps, 0.0)


def test_two_writes_on_a_long_path_wait_for_their_r2t_while_the_link_idles() -> None:
    """By hand, 1 ms one way, commands of 1 ms, data of 10 ms, two writes A and B from time 0:
    A's command 0-1, B's 1-2; R2Ts back at 3 and 4; A's data 3-13, B's 13-23; A done at 15.
    C, sent at 15, waits behind B's data (23-24), so its R2T is back only at 26, and the link
    idles 24-25 and 47-48 ... From C on every write takes 23 ms: the link carries 22 ms of each
    pair of writes in 23. Little's law at the link's ceiling would say 22 ms."""
    x = _by_hand(1.0, 10.0)
    alone = queueing.replay_mean_ms(x, 1, 0.0)
    assert alone == pytest.approx(15.0)  # command 1, its trip 1, R2T 1, data 10, last byte 1, status 1
    latencies = queueing.replay(x, 2, 0.0, 10)
    assert latencies[:3] == pytest.approx([15.0, 25.0, 23.0])
    assert queueing.queued_latency_ms(x, 2, alone) == pytest.approx(23.0)


def test_on_a_path_of_no_delay_the_link_never_idles() -> None:
    """With no round trip to wait for, the replay is Little's law at the link's ceiling."""
    x = _by_hand(0.0, 10.0)
    assert queueing.queued_latency_ms(x, 4, 11.0) == pytest.approx(44.0)


def test_the_rest_of_a_write_is_calibrated_to_the_unloaded_latency() -> None:
    """Host time the protocol does not explain waits nowhere: queue depth 1 returns it exactly."""
    x = _by_hand(1.0, 10.0)
    assert queueing.queued_latency_ms(x, 1, 17.5) == 17.5
    slower = queueing.queued_latency_ms(x, 2, 15.0 + 30.0)  # 30 ms elsewhere: the link no longer binds
    assert slower == pytest.approx(45.0)
    faster = queueing.queued_latency_ms(x, 2, 14.0)  # the engine's latency 1 ms under the bare exchange
    assert faster == pytest.approx(22.0)


def test_a_device_serving_one_write_at_a_time_binds_at_its_rate() -> None:
    """A device slower than the link sets the pace: N writes take N device services each."""
    x = replace(_by_hand(0.0, 1.0), device_ms=5.0)
    assert queueing.queued_latency_ms(x, 8, 7.0) == pytest.approx(40.0)


def _today(version: int) -> Today:
    """A today with no iSCSI run, on a 1 ms, 1000 Mbit/s path."""
    c = Configuration("write", 704 * BYTES_PER_KIB, 1, PARAMS, 1.0, 1000 * MBIT, target_r2t_window=4)
    default = Source("default", "test")
    return Today(
        c,
        Value(1.0, Source("measured", "ping")),
        Value(1000 * MBIT, Source("measured", "iperf3")),
        "sliding",
        default,
        lambda _b: 0.0,
        default,
        None,
        Value(0.0, default),
        engine_version=version,
    )


def test_version_2_waits_where_version_1_took_littles_law_and_reads_are_unchanged() -> None:
    """On a 3.5 ms, 450 Mbit/s path four writes of 704 KiB wait for R2Ts; version 1 is kept as declared."""
    target = Configuration("write", 704 * BYTES_PER_KIB, 4, PARAMS, 3.5, 450 * MBIT, target_r2t_window=4)
    v1, v2 = (forecast.forecast(_today(v), target) for v in (1, 2))
    link_ms = 4 * 704 * BYTES_PER_KIB * BITS_PER_BYTE / (450 * MBIT) * MS_PER_S
    assert v1.binding == v2.binding == "link"
    assert v1.op_ms == pytest.approx(link_ms, rel=0.01)
    assert v2.op_ms > v1.op_ms * 1.05, "the link idles between R2Ts: more than 5 % above Little's law"
    assert v2.mib_per_s == pytest.approx(4 * 704 / 1024 / (v2.op_ms / MS_PER_S))
    read = replace(target, direction="read")
    assert forecast.forecast(_today(1), read).op_ms == forecast.forecast(_today(2), read).op_ms


@pytest.mark.parametrize("version", [0, max(forecast.ENGINE_VERSIONS) + 1, -1])
def test_an_engine_version_never_declared_is_refused_when_today_is_built(version: int) -> None:
    """Every version above 1 takes the replay: an unknown one must not forecast as a declared one."""
    known = ", ".join(str(v) for v in forecast.ENGINE_VERSIONS)
    refused = rf"engine_version: expected one of {known} .*got {version}"
    with pytest.raises(model.ModelInputError, match=refused):
        _today(version)


class _ReferenceReplay:
    """The replay as first written (one method per event, dispatch by name): the oracle for the fast loop."""

    def __init__(self, x: queueing.WriteExchange, rest_ms: float, writes: int) -> None:
        self.x, self.rest_ms, self.writes = x, rest_ms, writes
        self.events: list[tuple[float, int, str, int]] = []
        self.seq = 0
        self.link_free_ms = 0.0
        self.device_free_ms = 0.0
        self.started: list[float] = []
        self.arrived: list[int] = []
        self.asked: list[int] = []
        self.answered: list[int] = []
        self.latencies_ms: list[float] = []

    def push(self, at_ms: float, kind: str, write: int) -> None:
        """Schedule an event (ties in the order they were scheduled)."""
        self.seq += 1
        heapq.heappush(self.events, (at_ms, self.seq, kind, write))

    def send(self, now_ms: float, wire_bytes: int, kind: str, write: int) -> None:
        """Queue bytes on the FIFO link; the event fires when the last byte reaches the target."""
        start = max(now_ms, self.link_free_ms)
        self.link_free_ms = start + wire_bytes * BITS_PER_BYTE / self.x.link_bps * MS_PER_S
        self.push(self.link_free_ms + self.x.one_way_ms, kind, write)

    def issue(self, now_ms: float) -> None:
        """A new write's command joins the link's queue."""
        write = len(self.started)
        self.started.append(now_ms)
        self.arrived.append(0)
        self.asked.append(0)
        self.answered.append(0)
        self.send(now_ms, self.x.command_wire_bytes, "command", write)

    def ask(self, now_ms: float, write: int) -> None:
        """The target sends the write's next R2T."""
        self.asked[write] += 1
        self.push(now_ms + self.x.per_round_ms + self.x.one_way_ms, "r2t", write)

    def on_command(self, now_ms: float, write: int) -> None:
        """The first window of R2Ts, or the data is complete."""
        bursts = len(self.x.burst_wire_bytes)
        if bursts == 0:
            self.on_all_data(now_ms, write)
        for _ in range(min(self._window(), bursts)):
            self.ask(now_ms, write)

    def on_r2t(self, now_ms: float, write: int) -> None:
        """The burst an R2T asks for joins the link's queue."""
        burst = self.answered[write]
        self.answered[write] += 1
        self.send(now_ms, self.x.burst_wire_bytes[burst], "burst", write)

    def on_burst(self, now_ms: float, write: int) -> None:
        """A slot frees (sliding) or a group ends (lock-step)."""
        self.arrived[write] += 1
        bursts, done, w = len(self.x.burst_wire_bytes), self.arrived[write], self._window()
        if done == bursts:
            self.on_all_data(now_ms, write)
            return
        if self.x.pacing == "lockstep":
            if done % w == 0:
                for _ in range(min(w, bursts - self.asked[write])):
                    self.ask(now_ms, write)
        elif self.asked[write] < bursts:
            self.ask(now_ms, write)

    def on_all_data(self, now_ms: float, write: int) -> None:
        """The device serves the write in turn, then the status goes back."""
        start = max(now_ms, self.device_free_ms)
        self.device_free_ms = start + self.x.device_ms
        self.push(self.device_free_ms + self.rest_ms + self.x.one_way_ms, "status", write)

    def on_status(self, now_ms: float, write: int) -> None:
        """The write completes; the next is issued at once."""
        self.latencies_ms.append(now_ms - self.started[write])
        if len(self.started) < self.writes:
            self.issue(now_ms)

    def _window(self) -> int:
        """R2Ts outstanding per write: 1 when serial."""
        return 1 if self.x.pacing == "serial" else self.x.window

    def run(self, queue_depth: int) -> list[float]:
        """Replay until every write completed."""
        for _ in range(queue_depth):
            self.issue(0.0)
        handlers = {
            "command": self.on_command,
            "r2t": self.on_r2t,
            "burst": self.on_burst,
            "status": self.on_status,
        }
        while self.events:
            at_ms, _, kind, write = heapq.heappop(self.events)
            handlers[kind](at_ms, write)
        return self.latencies_ms


def _exchanges() -> list[queueing.WriteExchange]:
    """Exchanges of every pacing, window and shape, on paths with and without delay, device and ties."""
    out = [
        _by_hand(1.0, 10.0),
        _by_hand(0.0, 10.0),  # round numbers: many events fall on the same instant
        queueing.WriteExchange(1000, (), 1, "sliding", 0.5, 0.1, 1e9, 0.3),  # all immediate data
        replace(_by_hand(0.0, 1.0), device_ms=5.0),
    ]
    for pacing in ("sliding", "serial", "lockstep"):
        for bs_kib, window, one_way_ms, device_ms in (
            (704, 4, 2.5, 0.0),
            (2304, 3, 0.7, 0.4),
            (1536, 1, 3.1, 1.7),
        ):
            net = model.Network(one_way_ms=one_way_ms, link_bps=700 * MBIT)
            a = model.Assumptions(r2t_pacing=pacing, target_r2t_window=window, per_round_ms=0.2)  # type: ignore[arg-type]
            out.append(queueing.exchange_of(bs_kib * BYTES_PER_KIB, PARAMS, net, a, device_ms))
    return out


@pytest.mark.parametrize("x", _exchanges())
@pytest.mark.parametrize(("queue_depth", "rest_ms"), [(1, 0.0), (2, 0.0), (3, 1.25), (8, 0.0), (16, 7.0)])
def test_the_fast_loop_replays_every_write_to_the_same_bit_as_the_reference(
    x: queueing.WriteExchange, queue_depth: int, rest_ms: float
) -> None:
    """Forecasts are pre-registered: the fast event loop must give the reference's floats exactly."""
    writes = queueing.WRITES_PER_SLOT * queue_depth
    expected = _ReferenceReplay(x, rest_ms, writes).run(queue_depth)
    assert len(expected) == writes
    assert queueing.replay(x, queue_depth, rest_ms, writes) == expected  # exact, not approx


def test_the_kept_lone_replay_is_the_plain_replay_to_the_bit() -> None:
    """Queue depth 1 with no rest is replayed once per exchange; what is kept is exactly what it replays."""
    queueing._alone_ms.cache_clear()
    exchanges = _exchanges()
    for x in exchanges:
        plain = queueing.replay_mean_ms(x, 1, 0.0)
        assert queueing._alone_ms(x) == plain
        assert queueing._alone_ms(x) == plain  # kept
        unloaded_ms = plain + 0.75
        rest_ms = unloaded_ms - plain
        assert queueing.queued_latency_ms(x, 4, unloaded_ms) == queueing.replay_mean_ms(x, 4, rest_ms)
    info = queueing._alone_ms.cache_info()
    assert (info.misses, info.hits) == (len(exchanges), 2 * len(exchanges))
