"""Several writes in flight on one iSCSI connection: a new command waits behind the data ahead of it.

:func:`iscsi_report.core.model.throughput` takes the latency at a queue depth from Little's law at
the smallest ceiling, as if a link that binds never idles. On one iSCSI connection it does: a new
write's command PDU (its immediate data inside) joins the same first-in-first-out send queue as
the Data-Out of the writes ahead of it, and the target's R2Ts for it come back only a round trip
after it leaves that queue. On a long path the queue can drain while every write in flight waits
for an R2T, and the link idles although it is the binding resource.

This module replays that exchange event by event, deterministically, for ``queue_depth`` writes
kept in flight (fio's closed loop): one FIFO link toward the target at the network's rate, R2Ts
paced as :func:`iscsi_report.core.model.burst_schedule` paces them, a device that serves one write
at a time, and everything else a write pays (host time, CPU) as a pure delay. The rest is
calibrated so that queue depth 1 gives the engine's own unloaded latency exactly: only the waiting
is new. The reverse direction (R2Ts, responses) is taken as uncongested; a read's Data-In flows on
it with no R2T to wait for, so reads are not replayed (the ceilings' pipeline bound holds for them).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from iscsi_report.core import model
from iscsi_report.core.units import BITS_PER_BYTE, MS_PER_S

WRITES_PER_SLOT = 40  # writes replayed per write in flight: a deterministic loop settles in a few
WARM_UP_PER_SLOT = 8  # the first completions per write in flight, left out of the mean (start-up)


@dataclass(frozen=True)
class WriteExchange:
    """What one write puts on the link toward the target, and how its R2Ts are paced."""

    command_wire_bytes: int  # the command PDU, its immediate data and any unsolicited Data-Out
    burst_wire_bytes: tuple[int, ...]  # each solicited burst's Data-Out, headers included
    window: int  # R2Ts the target keeps outstanding (1 when serial)
    pacing: model.Pacing
    one_way_ms: float
    per_round_ms: float  # processing of one R2T exchange beyond its two trips
    link_bps: float
    device_ms: float  # one write's service at the device, which serves one write at a time


def exchange_of(
    bs_bytes: int,
    params: model.IscsiParams,
    network: model.Network,
    assumptions: model.Assumptions,
    device_ms: float,
) -> WriteExchange:
    """The exchange of one write of ``bs_bytes`` under the model's rules (RFC 7143)."""
    command, bursts = model.write_wire_bytes(bs_bytes, params, assumptions)
    assert network.link_bps is not None  # set by Network.__post_init__
    return WriteExchange(
        command_wire_bytes=command,
        burst_wire_bytes=bursts,
        window=model.effective_r2t_window(params, assumptions),
        pacing=assumptions.r2t_pacing,
        one_way_ms=network.one_way_ms,
        per_round_ms=assumptions.per_round_ms,
        link_bps=float(network.link_bps),
        device_ms=device_ms,
    )


class _Replay:
    """The event loop of one replay: a FIFO link, a one-at-a-time device, writes in a closed loop."""

    def __init__(self, x: WriteExchange, rest_ms: float, writes: int) -> None:
        self.x, self.rest_ms, self.writes = x, rest_ms, writes
        self.events: list[tuple[float, int, str, int]] = []
        self.seq = 0
        self.link_free_ms = 0.0
        self.device_free_ms = 0.0
        self.started: list[float] = []
        self.arrived: list[int] = []  # bursts of each write arrived at the target
        self.asked: list[int] = []  # R2Ts the target has sent for each write
        self.answered: list[int] = []  # bursts the initiator has queued for each write
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
        """The initiator submits a new write: its command joins the link's queue."""
        write = len(self.started)
        self.started.append(now_ms)
        self.arrived.append(0)
        self.asked.append(0)
        self.answered.append(0)
        self.send(now_ms, self.x.command_wire_bytes, "command", write)

    def ask(self, now_ms: float, write: int) -> None:
        """The target sends the write's next R2T (after its processing); it reaches the initiator."""
        self.asked[write] += 1
        self.push(now_ms + self.x.per_round_ms + self.x.one_way_ms, "r2t", write)

    def on_command(self, now_ms: float, write: int) -> None:
        """The target holds the command: the first window of R2Ts, or the data is complete."""
        bursts = len(self.x.burst_wire_bytes)
        if bursts == 0:
            self.on_all_data(now_ms, write)
        for _ in range(min(self._window(), bursts)):
            self.ask(now_ms, write)

    def on_r2t(self, now_ms: float, write: int) -> None:
        """An R2T reached the initiator: the burst it asks for joins the link's queue (R2Ts in order)."""
        burst = self.answered[write]
        self.answered[write] += 1
        self.send(now_ms, self.x.burst_wire_bytes[burst], "burst", write)

    def on_burst(self, now_ms: float, write: int) -> None:
        """A burst reached the target: a slot frees (sliding) or a group ends (lock-step)."""
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
        """Every byte is at the target: the device serves it in turn, then the status goes back."""
        start = max(now_ms, self.device_free_ms)
        self.device_free_ms = start + self.x.device_ms
        self.push(self.device_free_ms + self.rest_ms + self.x.one_way_ms, "status", write)

    def on_status(self, now_ms: float, write: int) -> None:
        """The write completes; a closed loop submits the next at once."""
        self.latencies_ms.append(now_ms - self.started[write])
        if len(self.started) < self.writes:
            self.issue(now_ms)

    def _window(self) -> int:
        """R2Ts outstanding per write: 1 when serial."""
        return 1 if self.x.pacing == "serial" else self.x.window

    def run(self, queue_depth: int) -> list[float]:
        """Replay until every write completed; the latencies in completion order."""
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


def replay(x: WriteExchange, queue_depth: int, rest_ms: float, writes: int) -> list[float]:
    """Each write's latency, in completion order, of ``writes`` writes with ``queue_depth`` in flight."""
    return _Replay(x, rest_ms, writes).run(queue_depth)


def replay_mean_ms(x: WriteExchange, queue_depth: int, rest_ms: float) -> float:
    """Mean per-write latency of ``queue_depth`` writes kept in flight, after the start-up."""
    latencies = replay(x, queue_depth, max(rest_ms, 0.0), WRITES_PER_SLOT * queue_depth)
    kept = latencies[WARM_UP_PER_SLOT * queue_depth :]
    return sum(kept) / len(kept) + min(rest_ms, 0.0)


def queued_latency_ms(x: WriteExchange, queue_depth: int, unloaded_ms: float) -> float:
    """Latency at ``queue_depth``, with the rest calibrated so queue depth 1 gives ``unloaded_ms``.

    A negative rest (the engine's latency below the bare exchange) is subtracted after the replay,
    so it shortens every write without waiting anywhere.
    """
    if queue_depth <= 1:
        return unloaded_ms
    alone_ms = replay_mean_ms(x, 1, 0.0)
    return replay_mean_ms(x, queue_depth, unloaded_ms - alone_ms)
