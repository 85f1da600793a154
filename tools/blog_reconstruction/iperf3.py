"""iperf3 3.12 ``-J`` client output (TCP, 10 s) whose receiver rate is the blog's figure.

Layout mirrors a capture of ``iperf3 -c ... -J`` on the project machine: cJSON 1.7.15 formatted
printing (tab indentation, ``"key":<TAB>value``, arrays inline as ``[{...}, {...}]``) and cJSON's
number printing (``%1.15g`` unless that loses the value, then ``%1.17g``; integers as ``%d``).
Per-second rates vary around the target (Wi-Fi more than Ethernet); the bytes of the last
interval are set so that the whole-test receiver rate (``end.sum_received``) is the published Mbit/s to 0.05%.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from blog_reconstruction import targets as T

VERSION = "iperf 3.12"
CLIENT_SYSTEM_INFO = (
    "Linux workstation 6.6.7-arch1-1 #1 SMP PREEMPT_DYNAMIC Thu, 14 Dec 2023 03:45:42 +0000 x86_64"
)
IPERF3_PORT = 5201
DURATION_S = 10
TCP_MSS_BYTES = 1448  # Ethernet MTU 1500 minus IP/TCP headers and timestamps option
PMTU_BYTES = 1500
BLKSIZE_BYTES = 131072  # iperf3's default TCP write size
DBL_EPSILON = 2.220446049250313e-16
INT_MAX = 2**31 - 1


@dataclass(frozen=True)
class Iperf3Spec:
    """One iperf3 run: network, published rate, spread of the per-second rate, RTT under load."""

    network: str
    rel_sd: float
    rtt_us: int
    retransmit_rate: float  # mean retransmits per interval
    start: datetime

    @property
    def mbit_per_s(self) -> float:
        return T.IPERF3_MBIT_PER_S[self.network]

    @property
    def path(self) -> str:
        return f"iperf3/{self.network}.json"

    def labels(self) -> dict[str, Any]:
        return {"network": self.network, "protocol": "tcp", "duration_s": DURATION_S}


IPERF3_SPECS = (
    Iperf3Spec("wireless", 0.06, 9800, 6.0, datetime(2023, 12, 3, 9, 12, 41, tzinfo=UTC)),
    Iperf3Spec("wired", 0.004, 1450, 0.3, datetime(2023, 12, 22, 18, 40, 7, tzinfo=UTC)),
)


def cjson_number(value: float | int) -> str:
    """A number as cJSON 1.7.15 prints it."""
    d = float(value)
    if math.isnan(d) or math.isinf(d):
        return "null"
    if d.is_integer() and abs(d) <= INT_MAX:
        return str(int(d))
    text = f"{d:1.15g}"
    test = float(text)
    if abs(test - d) > max(abs(test), abs(d)) * DBL_EPSILON:
        text = f"{d:1.17g}"
    return text


def cjson_dumps(obj: Any, depth: int = 0) -> str:
    """cJSON_Print (formatted) of dicts, lists, strings, numbers and booleans."""
    if isinstance(obj, bool):
        return "true" if obj else "false"
    if isinstance(obj, dict):
        inner = "\t" * (depth + 1)
        items = [f'{inner}"{k}":\t{cjson_dumps(v, depth + 1)}' for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + "\t" * depth + "}"
    if isinstance(obj, list):
        return "[" + ", ".join(cjson_dumps(v, depth + 1) for v in obj) + "]"
    if isinstance(obj, str):
        return '"' + obj.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(obj, int | float | np.integer | np.floating):
        return cjson_number(obj)
    raise TypeError(f"cannot print {type(obj).__name__} as cJSON")


def _f32(x: float) -> float:
    """iperf3 stores interval durations as C float; JSON shows the widened double."""
    return float(np.float32(x))


def _interval_bytes(spec: Iperf3Spec, rng: np.random.Generator, secs: np.ndarray) -> np.ndarray:
    """Bytes received per interval; TCP writes are whole 128 KiB blocks on the sender side."""
    rate = spec.mbit_per_s * 1e6 / 8
    noise = 1 + spec.rel_sd * rng.standard_normal(secs.size)
    noise[0] -= 3 * spec.rel_sd + 0.01  # slow start in the first second
    noise *= secs.sum() / float((noise * secs).sum())  # whole test at the published rate
    return np.rint(rate * secs * noise / BLKSIZE_BYTES).astype(np.int64) * BLKSIZE_BYTES


def _stream(start: float, end: float, secs: float, nbytes: int, extra: dict) -> dict[str, Any]:
    """One interval record (stream and sum share the layout)."""
    out: dict[str, Any] = {"socket": 5, "start": start, "end": end, "seconds": secs,
                           "bytes": int(nbytes), "bits_per_second": nbytes * 8 / secs}  # fmt: skip
    out.update(extra)
    return out


def render(spec: Iperf3Spec, rng: np.random.Generator) -> str:
    """The iperf3 -J text of one client run."""
    secs = np.array([_f32(1 + rng.uniform(2e-6, 6e-5)) for _ in range(DURATION_S)])
    nbytes = _interval_bytes(spec, rng, secs)
    ends = np.round(np.cumsum(secs), 6)
    starts = np.concatenate([[0.0], ends[:-1]])
    retr = rng.poisson(spec.retransmit_rate, DURATION_S)
    cwnd = rng.integers(180_000, 900_000, DURATION_S) // TCP_MSS_BYTES * TCP_MSS_BYTES
    rtts = np.maximum(rng.normal(spec.rtt_us, spec.rtt_us * 0.15, DURATION_S), 200).astype(int)
    intervals: list[dict[str, Any]] = []
    end_s = float(ends[-1])
    recv_end = round(end_s + float(rng.uniform(0.002, 0.04)), 6)
    want = spec.mbit_per_s * 1e6 / 8 * recv_end  # receiver total at the published rate
    blocks = round((want - int(nbytes.sum())) / BLKSIZE_BYTES)  # spread over seconds 2..10
    share = np.full(DURATION_S - 1, blocks // (DURATION_S - 1))
    share[: blocks % (DURATION_S - 1)] += 1
    nbytes[1:] += share * BLKSIZE_BYTES
    for i in range(DURATION_S):
        stream = _stream(float(starts[i]), float(ends[i]), float(secs[i]), int(nbytes[i]), {
            "retransmits": int(retr[i]), "snd_cwnd": int(cwnd[i]), "snd_wnd": 3_145_728,
            "rtt": int(rtts[i]), "rttvar": int(rtts[i] // 6), "pmtu": PMTU_BYTES,
            "omitted": False, "sender": True})  # fmt: skip
        total = {k: stream[k] for k in ("start", "end", "seconds", "bytes", "bits_per_second")}
        total.update({"retransmits": int(retr[i]), "omitted": False, "sender": True})
        intervals.append({"streams": [stream], "sum": total})
    sent = int(nbytes.sum()) + int(rng.integers(2, 12)) * BLKSIZE_BYTES  # still in flight at stop
    received = int(nbytes.sum())
    sender = {"socket": 5, "start": 0, "end": end_s, "seconds": end_s, "bytes": sent,
              "bits_per_second": sent * 8 / end_s, "retransmits": int(retr.sum()),
              "max_snd_cwnd": int(cwnd.max()), "max_snd_wnd": 3_145_728,
              "max_rtt": int(rtts.max()), "min_rtt": int(rtts.min()),
              "mean_rtt": int(rtts.mean()), "sender": True}  # fmt: skip
    receiver = {"socket": 5, "start": 0, "end": recv_end, "seconds": end_s, "bytes": received,
                "bits_per_second": received * 8 / end_s, "sender": True}  # fmt: skip
    cookie = "".join(rng.choice(list(string.ascii_lowercase + "234567"), 36))
    host_sys, remote_sys = float(rng.uniform(8, 20)), float(rng.uniform(30, 60))
    doc = {
        "start": {
            "connected": [{"socket": 5, "local_host": T.INITIATOR_IP[spec.network],
                           "local_port": int(rng.integers(40000, 60000)),
                           "remote_host": T.NAS_IP, "remote_port": IPERF3_PORT}],
            "version": VERSION,
            "system_info": CLIENT_SYSTEM_INFO,
            "timestamp": {"time": f"{spec.start:%a, %d %b %Y %H:%M:%S} GMT",
                          "timesecs": int(spec.start.timestamp())},
            "connecting_to": {"host": T.NAS_IP, "port": IPERF3_PORT},
            "cookie": cookie,
            "tcp_mss_default": TCP_MSS_BYTES,
            "target_bitrate": 0,
            "sock_bufsize": 0,
            "sndbuf_actual": 16384,
            "rcvbuf_actual": 131072,
            "test_start": {"protocol": "TCP", "num_streams": 1, "blksize": BLKSIZE_BYTES,
                           "omit": 0, "duration": DURATION_S, "bytes": 0, "blocks": 0,
                           "reverse": 0, "tos": 0, "target_bitrate": 0},
        },
        "intervals": intervals,
        "end": {
            "streams": [{"sender": sender, "receiver": receiver}],
            "sum_sent": {k: sender[k] for k in ("start", "end", "seconds", "bytes",
                                                "bits_per_second", "retransmits", "sender")},
            "sum_received": {"start": 0, "end": recv_end, "seconds": recv_end, "bytes": received,
                             "bits_per_second": received * 8 / recv_end, "sender": True},
            "cpu_utilization_percent": {
                "host_total": host_sys * 1.05, "host_user": host_sys * 0.05,
                "host_system": host_sys, "remote_total": remote_sys * 1.04,
                "remote_user": remote_sys * 0.04, "remote_system": remote_sys},
            "sender_tcp_congestion": "cubic",
            "receiver_tcp_congestion": "cubic",
        },
    }  # fmt: skip
    return cjson_dumps(doc) + "\n"
