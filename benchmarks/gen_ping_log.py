"""Write a deterministic, realistic iputils ping log (default 450,000 replies: 15 min at 2 ms).

Mimics `ping -i 0.002 10.231.7.2` on Linux iputils 20221126: 16-bit icmp_seq that wraps at
65536, iputils' precision rule for time= (3 significant digits below 100 ms), a few lost
replies, the statistics footer computed from the written samples.
Usage: python benchmarks/gen_ping_log.py OUT [N_SENT]
"""

from __future__ import annotations

import sys

import numpy as np

SEQ_MODULUS = 65536  # icmp_seq is a 16-bit field
LOSS_PROBABILITY = 0.0005
INTERVAL_MS = 2.0
SEED = 20240607


def format_rtt(values_ms: np.ndarray) -> list[str]:
    """Format RTTs the way iputils does: 3 decimals below 1 ms, 2 below 10, 1 below 100."""
    out = []
    for v in values_ms:
        us = int(v * 1000)
        if us >= 100_000:
            out.append(f"{us // 1000}")
        elif us >= 10_000:
            out.append(f"{us // 1000}.{(us % 1000) // 100}")
        elif us >= 1_000:
            out.append(f"{us // 1000}.{(us % 1000) // 10:02d}")
        else:
            out.append(f"{us // 1000}.{us % 1000:03d}")
    return out


def main(out: str, n_sent: int = 450_000) -> None:
    """Generate the log into OUT."""
    rng = np.random.default_rng(SEED)
    rtt = rng.lognormal(mean=np.log(0.045), sigma=0.35, size=n_sent)
    spikes = rng.random(n_sent) < 0.001
    rtt[spikes] += rng.exponential(4.0, size=spikes.sum())
    lost = rng.random(n_sent) < LOSS_PROBABILITY
    texts = format_rtt(rtt)
    printed = []
    with open(out, "w", encoding="ascii") as fh:
        fh.write("PING 10.231.7.2 (10.231.7.2) 56(84) bytes of data.\n")
        for i in range(n_sent):
            if lost[i]:
                continue
            seq = (i + 1) % SEQ_MODULUS
            fh.write(f"64 bytes from 10.231.7.2: icmp_seq={seq} ttl=64 time={texts[i]} ms\n")
            printed.append(float(texts[i]))
        vals = np.array(printed)
        received = len(vals)
        loss = 100 * (n_sent - received) / n_sent  # iputils prints it with %g
        mdev = np.sqrt(np.mean(vals**2) - np.mean(vals) ** 2)
        fh.write("\n--- 10.231.7.2 ping statistics ---\n")
        fh.write(
            f"{n_sent} packets transmitted, {received} received, {loss:g}% packet loss, "
            f"time {int(n_sent * INTERVAL_MS)}ms\n"
        )
        fh.write(
            f"rtt min/avg/max/mdev = {vals.min():.3f}/{vals.mean():.3f}/{vals.max():.3f}/"
            f"{mdev:.3f} ms, pipe 2\n"
        )


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:3]))
