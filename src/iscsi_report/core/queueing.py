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

import functools
import heapq
from dataclasses import dataclass

from iscsi_report.core import model
from iscsi_report.core.units import BITS_PER_BYTE, MS_PER_S

WRITES_PER_SLOT = 40  # writes replayed per write in flight: a deterministic loop settles in a few
WARM_UP_PER_SLOT = 8  # the first completions per write in flight, left out of the mean (start-up)
ALONE_KEPT = 4096  # exchanges whose lone replay is kept per process: a chapter's distinct write exchanges


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


# Event kinds, as small integers so the loop dispatches by comparison (the hot path of a chapter).
COMMAND, R2T, BURST, STATUS = range(4)


def _wire_ms(wire_bytes: int, link_bps: float) -> float:
    """Time for ``wire_bytes`` to leave at ``link_bps`` (ms), in the replay's own operation order."""
    return wire_bytes * BITS_PER_BYTE / link_bps * MS_PER_S


def _window(x: WriteExchange) -> int:
    """R2Ts outstanding per write: 1 when serial."""
    return 1 if x.pacing == "serial" else x.window


def replay(x: WriteExchange, queue_depth: int, rest_ms: float, writes: int) -> list[float]:
    """Each write's latency, in completion order, of ``writes`` writes with ``queue_depth`` in flight.

    The event loop of a FIFO link, a one-at-a-time device and writes in a closed loop, written as
    one flat loop with local names because a chapter runs millions of its events. Events pop in
    time order, ties in the order they were scheduled (the sequence number), so the floats are
    those of an event-by-event reading of the exchange:

    - a write is issued: its command joins the link's FIFO queue (COMMAND when its last byte arrives);
    - COMMAND at the target: the first window of R2Ts (or, with no burst, the data is complete);
    - an R2T reaches the initiator (R2T): the burst it asks for joins the link's queue (BURST);
    - BURST at the target: a slot frees (sliding) or a group ends (lock-step), and when the last
      burst arrived the device serves the write in turn; its status comes back (STATUS);
    - STATUS: the write completes and a closed loop issues the next at once.
    """
    one_way_ms, per_round_ms, device_ms = x.one_way_ms, x.per_round_ms, x.device_ms
    command_ms = _wire_ms(x.command_wire_bytes, x.link_bps)
    bursts_ms = [_wire_ms(b, x.link_bps) for b in x.burst_wire_bytes]
    bursts, window, lockstep = len(bursts_ms), _window(x), x.pacing == "lockstep"
    first_asks = min(window, bursts)
    events: list[tuple[float, int, int, int]] = []
    push, pop, swap = heapq.heappush, heapq.heappop, heapq.heapreplace
    seq = 0
    link_free_ms = device_free_ms = 0.0
    started: list[float] = []
    arrived: list[int] = []  # bursts of each write arrived at the target
    asked: list[int] = []  # R2Ts the target has sent for each write
    answered: list[int] = []  # bursts the initiator has queued for each write
    latencies_ms: list[float] = []

    def issue(now_ms: float) -> None:
        """The initiator submits a new write: its command joins the link's queue."""
        nonlocal seq, link_free_ms
        write = len(started)
        started.append(now_ms)
        arrived.append(0)
        asked.append(0)
        answered.append(0)
        link_free_ms = (link_free_ms if link_free_ms > now_ms else now_ms) + command_ms
        seq += 1
        push(events, (link_free_ms + one_way_ms, seq, COMMAND, write))

    def all_data(now_ms: float, write: int) -> None:
        """Every byte is at the target: the device serves it in turn, then the status goes back."""
        nonlocal seq, device_free_ms
        device_free_ms = (device_free_ms if device_free_ms > now_ms else now_ms) + device_ms
        seq += 1
        push(events, (device_free_ms + rest_ms + one_way_ms, seq, STATUS, write))

    for _ in range(queue_depth):
        issue(0.0)
    while events:
        # The earliest event is read in place: when it schedules exactly one more, heapreplace pops
        # and pushes in one step. Keys (time, sequence) are unique, so the order is the same.
        now_ms, _, kind, write = events[0]
        if kind == BURST:
            done = arrived[write] = arrived[write] + 1
            if done == bursts:
                pop(events)
                all_data(now_ms, write)
                continue
            if lockstep:
                asks = min(window, bursts - asked[write]) if done % window == 0 else 0
            else:
                asks = 1 if asked[write] < bursts else 0
        elif kind == R2T:
            burst = answered[write]
            answered[write] = burst + 1
            link_free_ms = (link_free_ms if link_free_ms > now_ms else now_ms) + bursts_ms[burst]
            seq += 1
            swap(events, (link_free_ms + one_way_ms, seq, BURST, write))
            continue
        elif kind == COMMAND:
            pop(events)
            if bursts == 0:
                all_data(now_ms, write)
            for _ in range(first_asks):  # the first window of R2Ts, each after the target's processing
                asked[write] += 1
                seq += 1
                push(events, (now_ms + per_round_ms + one_way_ms, seq, R2T, write))
            continue
        else:  # STATUS
            pop(events)
            latencies_ms.append(now_ms - started[write])
            if len(started) < writes:
                issue(now_ms)
            continue
        if asks <= 0:
            pop(events)
            continue
        asked[write] += 1  # the target's next R2T, after its processing, reaches the initiator
        seq += 1
        swap(events, (now_ms + per_round_ms + one_way_ms, seq, R2T, write))
        for _ in range(asks - 1):  # the rest of a lock-step group
            asked[write] += 1
            seq += 1
            push(events, (now_ms + per_round_ms + one_way_ms, seq, R2T, write))
    return latencies_ms


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
    alone_ms = _alone_ms(x)
    return replay_mean_ms(x, queue_depth, unloaded_ms - alone_ms)


@functools.lru_cache(maxsize=ALONE_KEPT)
def _alone_ms(x: WriteExchange) -> float:
    """:func:`replay_mean_ms` of one write alone with no rest, once per exchange (it depends on nothing else).

    Deterministic, so a kept result is the result.
    """
    return replay_mean_ms(x, 1, 0.0)
