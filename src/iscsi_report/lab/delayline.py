"""Userspace delay line: forwards IP packets between two TUN devices after a one-way delay.

Started inside the first lab namespace (``ip netns exec NS_A python -m
iscsi_report.lab.delayline ...``); it creates TUN device ``--dev`` there, enters namespace
``--ns-b`` (by its ``/run/netns`` file) and creates a second TUN device of the same name. Each
packet read from one device is serialised at ``link_mbps`` (first in, first out, per direction)
and written to the other device ``one_way_delay_ms`` after its last bit left the serialiser.
No qdisc is involved, so bursts keep their exact spacing. SIGHUP re-reads ``--params`` (JSON with
one_way_delay_ms, link_mbps, queue_bytes); SIGTERM/SIGINT stop it (the devices vanish with it).

Standard library only: it starts fast and has no import side effects.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import ctypes
import errno
import fcntl
import json
import os
import random
import select
import signal
import struct
import sys
import time
from dataclasses import dataclass, field

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
CLONE_NEWNET = 0x40000000
PR_SET_TIMERSLACK = 29
READ_BYTES = 65536 + 64
SPIN_NS = 40_000  # below this, poll instead of sleeping (timer wake-ups are coarser)


JITTER_SHAPES = ("fixed", "gamma", "lognormal", "mixture", "trace")


@dataclass
class Jitter:
    """Per-packet extra one-way delay (ms) on top of the fixed delay, drawn from a distribution.

    ``shape`` is one of :data:`JITTER_SHAPES`: ``fixed`` (no extra), ``gamma`` (``k``, ``theta_ms``),
    ``lognormal`` (``mu``, ``sigma`` of the log of the extra in ms), ``mixture`` (``weights`` and,
    per component, ``extra_ms`` plus an optional lognormal spread ``sigma``), or ``trace`` (the
    extras of a measured trace replayed in order, cycling, from a start the seed picks: the two
    directions, seeded apart, replay different stretches of the trace). With ``correlation`` r a packet keeps
    the previous packet's extra with probability r, so a spike hits consecutive packets.
    """

    shape: str = "fixed"
    k: float = 1.0
    theta_ms: float = 0.0
    mu: float = 0.0
    sigma: float = 0.0
    weights: tuple[float, ...] = ()
    extra_ms: tuple[float, ...] = ()
    sigmas: tuple[float, ...] = ()
    trace_ms: tuple[float, ...] = ()
    correlation: float = 0.0
    seed: int = 0
    _rng: random.Random = field(default_factory=random.Random, repr=False)
    _last_ms: float = 0.0
    _at: int = 0
    _start: int = 0

    def __post_init__(self) -> None:
        if self.shape not in JITTER_SHAPES:
            raise ValueError(f"jitter shape {self.shape!r}: expected one of {JITTER_SHAPES}")
        if not 0.0 <= self.correlation < 1.0:
            raise ValueError(f"jitter correlation {self.correlation!r}: expected 0 <= r < 1")
        self._rng.seed(self.seed)
        if self.shape == "trace":
            if not self.trace_ms:
                raise ValueError("jitter shape 'trace': expected a non-empty trace_ms")
            self._start = self._rng.randrange(len(self.trace_ms))

    def draw_ms(self) -> float:
        """The next packet's extra delay in ms (>= 0)."""
        if self.shape == "fixed":
            return 0.0
        if self.correlation and self._at and self._rng.random() < self.correlation:
            return self._last_ms
        self._last_ms = max(self._fresh_ms(), 0.0)
        self._at += 1
        return self._last_ms

    def _fresh_ms(self) -> float:
        """An independent draw of the extra delay."""
        rng = self._rng
        if self.shape == "gamma":
            return rng.gammavariate(self.k, self.theta_ms) if self.theta_ms > 0 else 0.0
        if self.shape == "lognormal":
            return rng.lognormvariate(self.mu, self.sigma)
        if self.shape == "mixture":
            i = rng.choices(range(len(self.weights)), weights=self.weights)[0]
            spread = self.sigmas[i] if i < len(self.sigmas) else 0.0
            return self.extra_ms[i] * (rng.lognormvariate(-(spread**2) / 2, spread) if spread else 1.0)
        value = self.trace_ms[(self._start + self._at) % len(self.trace_ms)]  # trace
        return value

    @classmethod
    def from_doc(cls, doc: dict | None) -> Jitter:
        """A jitter from the params JSON's ``jitter`` object (absent: fixed)."""
        if not doc:
            return cls()
        keys = {k: tuple(v) if isinstance(v, list) else v for k, v in doc.items()}
        return cls(**keys)


@dataclass
class Serialiser:
    """One direction of the link: FIFO serialisation at a rate, then the one-way delay.

    The delay is fixed plus an optional per-packet extra (:class:`Jitter`); delivery stays first in,
    first out: a packet never leaves before the one ahead of it (no reordering).
    """

    link_mbps: float
    one_way_delay_ms: float
    queue_bytes: int = 8 << 20
    free_at_ns: int = 0
    dropped: int = 0
    forwarded: int = 0
    queued_bytes: int = 0
    queue: collections.deque = field(default_factory=collections.deque)
    jitter: Jitter = field(default_factory=Jitter)
    last_due_ns: int = 0

    def tx_ns(self, size_bytes: int) -> int:
        """Serialisation time of ``size_bytes`` at the link rate (0 when unlimited)."""
        if self.link_mbps <= 0:
            return 0
        return int(size_bytes * 8 * 1000 / self.link_mbps)  # bits / (Mbit/s) in ns

    def schedule(self, arrival_ns: int, size_bytes: int) -> int | None:
        """Delivery time of a packet arriving now, or None when the queue is full (drop)."""
        if self.queued_bytes + size_bytes > self.queue_bytes:
            self.dropped += 1
            return None
        start_ns = max(arrival_ns, self.free_at_ns)
        self.free_at_ns = start_ns + self.tx_ns(size_bytes)
        delay_ms = self.one_way_delay_ms + self.jitter.draw_ms()
        self.last_due_ns = max(self.free_at_ns + int(delay_ms * 1_000_000), self.last_due_ns)
        return self.last_due_ns

    def push(self, arrival_ns: int, packet: bytes) -> None:
        """Queue a packet for delivery (or drop it)."""
        due = self.schedule(arrival_ns, len(packet))
        if due is not None:
            self.queue.append((due, packet))
            self.queued_bytes += len(packet)

    def pop_due(self, now_ns: int) -> list[bytes]:
        """Packets whose delivery time has come, in order."""
        out = []
        while self.queue and self.queue[0][0] <= now_ns:
            _, packet = self.queue.popleft()
            self.queued_bytes -= len(packet)
            out.append(packet)
        self.forwarded += len(out)
        return out

    def next_due_ns(self) -> int | None:
        """Delivery time of the oldest queued packet."""
        return self.queue[0][0] if self.queue else None


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def open_tun(name: str) -> int:
    """Create TUN device ``name`` (IFF_TUN|IFF_NO_PI) in the current namespace; non-blocking fd."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    ifr = struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI)
    fcntl.ioctl(fd, TUNSETIFF, ifr)
    return fd


def enter_netns(name: str) -> None:
    """Move this (single-threaded) process into network namespace ``name``."""
    nsfd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if _libc().setns(nsfd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns({name}): {os.strerror(err)}")
    finally:
        os.close(nsfd)


def _read_params(path: str | None, args: argparse.Namespace) -> tuple[float, float, int, dict | None]:
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        return (
            float(doc.get("one_way_delay_ms", args.one_way_delay_ms)),
            float(doc.get("link_mbps", args.link_mbps)),
            int(doc.get("queue_bytes", args.queue_bytes)),
            doc.get("jitter"),
        )
    return args.one_way_delay_ms, args.link_mbps, args.queue_bytes, None


def _jitters(doc: dict | None) -> tuple[Jitter, Jitter]:
    """One jitter per direction, with their own seeds (the two directions draw independently)."""
    a = Jitter.from_doc(doc)
    b = Jitter.from_doc({**(doc or {}), "seed": int((doc or {}).get("seed", 0)) + 1}) if doc else Jitter()
    return a, b


def serve(fd_a: int, fd_b: int, args: argparse.Namespace) -> dict[str, int]:
    """Forward until SIGTERM/SIGINT; return packet counters."""
    delay, rate, qbytes, jitter = _read_params(args.params, args)
    ja, jb = _jitters(jitter)
    a_to_b = Serialiser(rate, delay, qbytes, jitter=ja)
    b_to_a = Serialiser(rate, delay, qbytes, jitter=jb)
    state = {"stop": False, "reload": False}

    def _stop(*_: object) -> None:
        state["stop"] = True

    def _reload(*_: object) -> None:
        state["reload"] = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGHUP, _reload)
    # select() resumes after a signal (PEP 475): a wake-up pipe makes it return, so a new delay
    # applies before the next packet is scheduled
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    pairs = ((fd_a, a_to_b, fd_b), (fd_b, b_to_a, fd_a))
    clock = time.monotonic_ns
    while not state["stop"]:
        if state["reload"]:
            state["reload"] = False
            delay, rate, qbytes, jitter = _read_params(args.params, args)
            for s, j in zip((a_to_b, b_to_a), _jitters(jitter), strict=True):
                s.one_way_delay_ms, s.link_mbps, s.queue_bytes, s.jitter = delay, rate, qbytes, j
            shape = (jitter or {}).get("shape", "fixed")
            print(
                f"delayline: one_way_delay_ms={delay} link_mbps={rate} queue_bytes={qbytes} jitter={shape}",
                flush=True,
            )
        now = clock()
        for _, s, out_fd in pairs:
            for packet in s.pop_due(now):
                try:
                    os.write(out_fd, packet)
                except OSError as exc:  # device down for a moment: count as a drop
                    if exc.errno not in (errno.EIO, errno.EAGAIN, errno.EINVAL):
                        raise
                    s.dropped += 1
        dues = [d for d in (a_to_b.next_due_ns(), b_to_a.next_due_ns()) if d is not None]
        timeout_s: float | None = None
        if dues:
            wait_ns = min(dues) - clock()
            timeout_s = 0.0 if wait_ns <= SPIN_NS else (wait_ns - SPIN_NS / 2) / 1e9
        try:
            ready, _, _ = select.select([fd_a, fd_b, wake_r], [], [], timeout_s)
        except InterruptedError:
            continue
        if wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_r, 512)
            if state["reload"] or state["stop"]:
                continue
        for in_fd, s, _ in pairs:
            if in_fd not in ready:
                continue
            for _ in range(64):
                try:
                    packet = os.read(in_fd, READ_BYTES)
                except BlockingIOError:
                    break
                s.push(clock(), packet)
    return {
        "a_to_b_forwarded": a_to_b.forwarded,
        "b_to_a_forwarded": b_to_a.forwarded,
        "a_to_b_dropped": a_to_b.dropped,
        "b_to_a_dropped": b_to_a.dropped,
    }


def main(argv: list[str] | None = None) -> int:
    """Create both TUN devices, report readiness on stdout, forward until stopped."""
    p = argparse.ArgumentParser(prog="iscsi-report-delayline", description=__doc__.splitlines()[0])
    p.add_argument("--ns-b", required=True, help="second namespace (the first is the current one)")
    p.add_argument("--dev", default="lab0", help="TUN device name in both namespaces")
    p.add_argument("--one-way-delay-ms", type=float, default=0.0)
    p.add_argument("--link-mbps", type=float, default=1000.0, help="0 = unlimited")
    p.add_argument("--queue-bytes", type=int, default=8 << 20, help="per-direction queue limit")
    p.add_argument("--params", help="JSON file re-read on SIGHUP")
    args = p.parse_args(argv)
    with contextlib.suppress(AttributeError, OSError):
        _libc().prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)
    fd_a = open_tun(args.dev)
    enter_netns(args.ns_b)
    fd_b = open_tun(args.dev)
    print("delayline: ready", flush=True)
    counters = serve(fd_a, fd_b, args)
    print("delayline: " + json.dumps(counters), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
