"""``lab run --segments``: why small segments cost more on a fast link than the engine charges.

On the third blind sweep (lab-iscsi-2026-blind3), forecasting 8 KiB segments from a today with
256 KiB segments at 1,600 Mbit/s missed by a median of about −9 % (too fast), and the reverse by
about +11 %; at 540 Mbit/s about ±2 %. Two causes fit: the userspace delay line, whose work is
per packet (small segments travel as many more, smaller packets through its 65,000-byte path MTU),
or the hosts' per-PDU work (tgtd, libiscsi). This diagnosis measures what would tell them apart,
at one delay and the blind sweep's two rates (:data:`POINTS`):

- iperf3 with small and large messages and TCP_NODELAY (``-l`` :data:`MESSAGES`, ``-N``), beside
  the default: whether the line (and the hosts' TCP stacks, but no iSCSI) holds the rate when the
  data comes in small writes;
- iSCSI writes of two sizes with both parameter sets (:data:`SIZES`), each fio run labelled with
  the CPU seconds the delay line and tgtd spent during it (``delayline_cpu_s``, ``tgtd_cpu_s``,
  from ``/proc/<pid>/stat``) and its wall time (``run_wall_s``): whether one of them is busy for
  the whole run, which would make it the binding resource.

The question and the predictions are written in ``data/preregistered/<out>/README.md`` before the
sweep runs.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from iscsi_report.core.units import BYTES_PER_KIB
from iscsi_report.lab import sweep as sw
from iscsi_report.lab.topology import Lab, target_params

POINTS: tuple[tuple[float, float], ...] = ((0.6, 1600.0), (0.6, 540.0))  # (one-way ms, Mbit/s): blind3's
SIZES = (576 * BYTES_PER_KIB, 2304 * BYTES_PER_KIB)  # blind3's sizes with the largest and a small miss
MESSAGES = (8 * BYTES_PER_KIB, 256 * BYTES_PER_KIB)  # iperf3 -l: the two parameter sets' segment sizes
REPLICATES = 3
CAPTURE_IOS = 8  # design 2: captured writes per size and set, at both ends of the line at once
DESIGNS = (1, 2)  # 1: CPU seconds per run; 2: the same, then every write captured at both ends
IOS = 24  # I/Os per fio run, as the blind sweeps
WINDOW = 5  # one R2T round for both sets at 576 KiB (window 1 would give the 8 KiB set one more)
ROLE = "diagnosis"  # every run's design_role: a look for a cause, not a test of a forecast
FLAGS = " --segments"


def cpu_seconds(pid: int | None) -> float:
    """User plus system CPU seconds a process has used so far (0 when it is not running)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5), after pid and comm
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


def design(number: int = 1) -> list[sw.FioRun]:
    """Every fio run: writes of each size with both sets at each point, replicated (2: and captured)."""
    runs = []
    for d, link in POINTS:
        for imm, seg in sw.IMMEDIATE:
            for bs in SIZES:
                for rep in range(1, REPLICATES + 1):
                    runs.append(
                        sw.FioRun(WINDOW, link, d, imm, seg, False, rep, "write", 1, bs, IOS, role=ROLE)
                    )
                if number == 2:
                    runs.append(
                        sw.FioRun(WINDOW, link, d, imm, seg, True, 0, "write", 1, bs, CAPTURE_IOS, role=ROLE)
                    )
    return sorted(runs)


def check_design(number: int) -> None:
    """Refuse a design number that does not exist (before the lab comes up)."""
    if number not in DESIGNS:
        raise ValueError(f"--segments {number}: expected one of {list(DESIGNS)}")


class CpuRunner(sw.Runner):
    """A Runner that labels every fio run with the delay line's and tgtd's CPU seconds during it."""

    def fio(self, run: sw.FioRun, verify: bool = False) -> Path:
        """Run fio once (as Runner.fio) and add the CPU and wall seconds to its manifest labels."""
        self.configure(run)  # before the clocks start: a tgtd restart is not the run's
        line, tgtd = self.lab.delayline_pid, self.lab.tgtd_pid
        before = (cpu_seconds(line), cpu_seconds(tgtd), time.monotonic())
        path = super().fio(run, verify)
        if self.entries and self.entries[-1]["path"] == str(path.relative_to(self.out)):
            self.entries[-1]["labels"] |= {
                "delayline_cpu_s": round(cpu_seconds(line) - before[0], 3),
                "tgtd_cpu_s": round(cpu_seconds(tgtd) - before[1], 3),
                "run_wall_s": round(time.monotonic() - before[2], 3),
            }
        return path


def iperf3_messages(runner: sw.Runner, one_way_delay_ms: float, link_mbps: float) -> None:
    """iperf3 at one point with each message size and TCP_NODELAY, replicated (the default is in network)."""
    runner.lab.set_link(one_way_delay_ms, link_mbps)
    d = f"{one_way_delay_ms:g}".replace(".", "p")
    for rep in range(1, REPLICATES + 1):
        for msg in MESSAGES:
            path = runner.out / "iperf3" / f"d{d}ms-l{link_mbps:g}-msg{msg // BYTES_PER_KIB}k-r{rep}.json"
            labels = sw.point_labels(one_way_delay_ms, link_mbps) | {
                "message_bytes": msg,
                "nodelay": True,
                "replicate": rep,
            }
            runner.iperf3(path, labels)


def execute(lab: Lab, out: Path, say: Any = print, number: int = 1) -> dict[str, Any]:
    """Run the segments diagnosis (design ``number``) into ``out`` and write its manifest."""
    check_design(number)
    out.mkdir(parents=True, exist_ok=True)
    runner = CpuRunner(lab, out, say)
    loads = {"at_start": sw.load_average()}
    t0 = time.monotonic()
    lab.start_target(target_params(WINDOW, *sw.IMMEDIATE[0]))
    for point in POINTS:
        runner.network(*point)
        iperf3_messages(runner, *point)
    runs = design(number)
    runner.replicated(runs, key=lambda r: (r.max_recv_data_segment_bytes, r.bs_bytes), announce=True)
    for d, link in POINTS:  # design 2: one dumpcap per end of the line, per point
        caps = [r for r in runs if r.captured and (r.one_way_delay_ms, r.link_mbps) == (d, link)]
        if caps:
            runner.captured(caps, at_target=True)
    loads["at_end"] = sw.load_average()
    sweep_s = time.monotonic() - t0
    note = (
        "A diagnosis of small segments on a fast link (lab run --segments): iperf3 with 8 and 256 KiB "
        "messages and TCP_NODELAY beside the default, and iSCSI writes with both parameter sets, each "
        "labelled with the CPU seconds the delay line and tgtd spent during it."
        + (
            " Every write size and set also captured at both ends of the line at once (files ending "
            "-at-target.tsv were captured on the target's TUN device)."
            if number == 2
            else ""
        )
    )
    extra = {"ios_per_run": IOS, "captured_ios": CAPTURE_IOS if number == 2 else 0}
    manifest = sw.write_manifest(
        out,
        runner,
        False,
        sweep_s,
        {},
        0,
        loads,
        flags=FLAGS if number == 1 else f"{FLAGS} {number}",
        extra_lab=extra,
        description_note=note,
    )
    return sw.outcome(runs, runner, sweep_s, manifest)
