"""The delay lines' ceilings: how fast each forwards bulk and small-message TCP, and how late it runs.

sudo PYTHONPATH=src .venv/bin/python benchmarks/delay_line_ceiling.py [--seconds 5] [--rounds 2]

Brings the lab up (namespaces and the delay line only; no target) once per delay line and round,
lines alternating, and at each setting runs iperf3 from the initiator's namespace to the target's:
bulk (iperf3's default 128 KiB writes) and 8 KiB writes with TCP_NODELAY (``-l 8192 -N``, the
packet stream 8 KiB iSCSI segments make). Settings: the rate unlimited (the line's own ceiling)
and 1,600 Mbit/s (the third blind sweep's fastest link), one-way delay 0.6 ms. Per run it prints
the received rate, the line's CPU seconds per wall second, and ping's mean RTT/2 minus the set
delay (how late the line delivers an idle packet). Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from iscsi_report.core.ingest import iperf3, ping
from iscsi_report.core.units import BITS_PER_MBIT
from iscsi_report.lab.build import load_tools
from iscsi_report.lab.segments_sweep import cpu_seconds
from iscsi_report.lab.sweep import Runner
from iscsi_report.lab.topology import ADDR_TGT, DELAY_LINES, NS_INI, Lab

ROOT = Path(__file__).resolve().parents[1]
ONE_WAY_MS = 0.6
LINKS_MBPS = (0.0, 1600.0)  # 0: no rate limit in the line
MESSAGES = ((0, False), (8192, True))  # (iperf3 -l bytes, 0 = default; TCP_NODELAY)
PING_COUNT = 200


def iperf3_mbps(runner: Runner, labels: dict, seconds: int, out: Path) -> tuple[float, float]:
    """Received Mbit/s of one iperf3 run (the sweeps' own) and the delay line's CPU seconds per second."""
    pid = runner.lab.delayline_pid
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    runner.iperf3(out, labels, seconds)
    busy = (cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)
    if runner.failures:
        raise SystemExit(runner.failures[-1])
    return iperf3.summary(iperf3.parse(out))["received_bps"] / BITS_PER_MBIT, busy


def ping_late_ms(lab: Lab) -> float:
    """Mean ping RTT / 2 minus the set one-way delay: the line's lateness on an idle path."""
    res = lab.run(NS_INI, ["ping", "-n", "-i", "0.002", "-c", str(PING_COUNT), ADDR_TGT], 60, "ping")
    return float(ping.parse_text(res.stdout).rtt_ms.mean()) / 2 - ONE_WAY_MS


def main(argv: list[str]) -> None:
    """Measure both lines, alternating, and print one row per run and the medians."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    tools = load_tools(ROOT)
    if tools is None:
        raise SystemExit("run `iscsi-report lab setup` first")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(args.rounds):
            for line in DELAY_LINES if rnd % 2 == 0 else DELAY_LINES[::-1]:
                with Lab(tools, lambda _: None, delay_line=line) as lab:
                    runner = Runner(lab, Path(tmp), lambda _: None)
                    for link in LINKS_MBPS:
                        lab.set_link(ONE_WAY_MS, link)
                        late = ping_late_ms(lab)
                        for message, nodelay in MESSAGES:
                            out = Path(tmp) / f"{line}-{rnd}-{link:g}-{message}.json"
                            labels = {"message_bytes": message, "nodelay": nodelay}
                            mbps, busy = iperf3_mbps(runner, labels, args.seconds, out)
                            row = {"line": line, "round": rnd, "link_mbps": link, "message_bytes": message}
                            rows.append(row | {"mbps": mbps, "line_busy": busy, "idle_late_ms": late})
                            print(json.dumps(rows[-1]), flush=True)
    print("medians: line, link (0 = unlimited), message (0 = bulk): Mbit/s, busy, idle late ms")
    keys = sorted({(r["line"], r["link_mbps"], r["message_bytes"]) for r in rows})
    for key in keys:
        sel = [r for r in rows if (r["line"], r["link_mbps"], r["message_bytes"]) == key]
        med = {k: statistics.median(r[k] for r in sel) for k in ("mbps", "line_busy", "idle_late_ms")}
        print(
            f"{key}: {med['mbps']:.0f} Mbit/s, busy {med['line_busy']:.2f}, late {med['idle_late_ms']:.3f} ms"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
