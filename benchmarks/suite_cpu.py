"""Issue 28: where a whole ``make test`` spends its CPU, by kind of process (kernels, builds, CLI, ...).

The kernel's BSD process accounting records every process's CPU when it exits; a sampler records
each process's command line while it runs (accounting keeps only 16 characters of its name). Usage,
as root, from a fresh clone::

    touch /tmp/pacct && accton /tmp/pacct
    python3 benchmarks/suite_cpu.py sample /tmp/pids.json &   # stop it with SIGTERM when the run ends
    make test
    accton off
    python3 benchmarks/suite_cpu.py report /tmp/pacct /tmp/pids.json

``accton`` and ``dump-acct`` come from Debian's ``acct`` package. Standard library only, so it runs
with the system's Python before the project's environment exists. A process that lived less than
the sampling interval (0.2 s) is reported by its short name.
"""

from __future__ import annotations

import collections
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

SAMPLE_S = 0.2
CMDLINE_CHARS = 400
SHOWN = 30
# (kind, pattern over the command line), first match wins; the order matters (a kernel's command line
# may name a pytest folder).
KINDS = [
    ("jupyter-book build, fresh process", re.compile(r"jupyter_book\.cli\.main")),
    ("iscsi-report CLI", re.compile(r"iscsi_report\.cli|bin/iscsi-report")),
    ("cold kernels", re.compile(r"sys\.modules\['debugpy'\] = None")),
    ("cold papermill, kernel launchers", re.compile(r"papermill|-S -c import runpy")),
    ("pytest workers (tests in process)", re.compile(r"exec\(eval\(sys\.stdin\.readline|bin/pytest")),
    ("Dask", re.compile(r"bin/dask ")),
    ("chromium, playwright", re.compile(r"chromium|playwright")),
    ("bytecode and install", re.compile(r"compileall|bin/uv |ensurepip|-m pip ")),
]
ZYGOTE = re.compile(r"zygote\.py serve")  # a fork server, and every child it forked (same command line)
BUILD_TOOLS = {"cc1", "as", "ld", "gcc", "make", "collect2", "cc", "sh", "cc1plus", "configure"}


def sample(out: Path) -> None:
    """Record each new process's command line and parent until SIGTERM, then write them as JSON."""
    seen: dict[str, list[str]] = {}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    while not stop:
        for pid in os.listdir("/proc"):
            if pid.isdigit() and pid not in seen:
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                    parent = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
                except (OSError, IndexError):
                    continue
                seen[pid] = [cmdline.decode(errors="replace")[:CMDLINE_CHARS], parent]
        time.sleep(SAMPLE_S)
    out.write_text(json.dumps(seen))


def accounted(pacct: Path) -> list[tuple[str, float, str]]:
    """(short name, CPU seconds, pid) of every process in an accounting file (``dump-acct``)."""
    text = subprocess.run(["dump-acct", str(pacct)], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split("|")]
        rows.append((fields[0], (float(fields[2]) + float(fields[3])) / 100, fields[9]))
    return rows


def kind(name: str, cmdline: str, parent_cmdline: str) -> str:
    """The kind of a process, from its command line (or its short name when it was not sampled)."""
    if ZYGOTE.search(cmdline):
        forked = parent_cmdline == cmdline
        return "forked by a fork server (kernels, papermill, builds)" if forked else "fork servers"
    for label, pattern in KINDS:
        if pattern.search(cmdline):
            return label
    if name in BUILD_TOOLS:
        return "lab tools' compile"
    return f"other: {name}"


def report(pacct: Path, pids: Path) -> None:
    """Print the CPU seconds and process count of each kind, largest first."""
    sampled = json.loads(pids.read_text())
    cmdlines = {pid: doc[0] for pid, doc in sampled.items()}
    parents = {pid: doc[1] for pid, doc in sampled.items()}
    cpu: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    for name, seconds, pid in accounted(pacct):
        label = kind(name, cmdlines.get(pid, ""), cmdlines.get(parents.get(pid, ""), ""))
        cpu[label] += seconds
        count[label] += 1
    print(f"{sum(cpu.values()):.0f} s of CPU over {sum(count.values())} processes")
    for label, seconds in cpu.most_common(SHOWN):
        print(f"{seconds:8.1f} s {count[label]:6d}  {label}")


def main(argv: list[str]) -> int:
    """``sample OUT`` or ``report PACCT PIDS``."""
    if argv[:1] == ["sample"] and len(argv) == 2:
        sample(Path(argv[1]))
        return 0
    if argv[:1] == ["report"] and len(argv) == 3:
        report(Path(argv[1]), Path(argv[2]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
