"""Issue 28: when a core sits idle during ``make test``, and which tests were running then.

The suite is CPU-bound on 2 cores, yet some tests wait (a 1 s ping, a delay line, a worker's
restart) while the other worker may have nothing to overlap with them. This is both a pytest plugin
and a sampler. Usage, from a fresh clone with the project's venv::

    python3 benchmarks/suite_idle.py sample /tmp/idle.jsonl &          # stop it with SIGTERM
    PYTHONPATH=benchmarks PYTEST_ADDOPTS="-p suite_idle" make test
    python3 benchmarks/suite_idle.py report /tmp/idle.jsonl

The plugin writes each worker's running test to ``$SUITE_IDLE_DIR/<worker>`` (default
``/tmp/suite_idle``); the sampler reads ``/proc/stat`` once a second and records the idle
core-seconds of that second beside what each worker was running. Standard library only.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

STATE_DIR = Path(os.environ.get("SUITE_IDLE_DIR", "/tmp/suite_idle"))
SAMPLE_S = 1.0
TICKS_PER_S = os.sysconf("SC_CLK_TCK")
SHOWN = 40
NOT_A_TEST = {"(between tests)", "(done)"}


def _worker() -> str:
    """This process's xdist worker id ('gw0', ...), or 'main' without xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


_CONFIG: list[Any] = []


def pytest_configure(config: Any) -> None:
    """Keep the config: it tells the xdist controller (which runs no test) from a worker."""
    _CONFIG.append(config)


def _say(text: str) -> None:
    """Record what this worker runs now (atomically: a reader never sees half a name).

    The xdist controller hears of every worker's tests and records nothing.
    """
    if _CONFIG and _CONFIG[0].pluginmanager.has_plugin("dsession"):
        return
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = STATE_DIR / f".{_worker()}.tmp"
    tmp.write_text(text)
    tmp.replace(STATE_DIR / _worker())


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    """A test starts on this worker."""
    _say(nodeid)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    """A test ended on this worker: it is between tests until the next starts."""
    _say("(between tests)")  # one of NOT_A_TEST


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    """This worker has nothing left to run."""
    _say("(done)")


def _idle_ticks() -> int:
    """Idle and iowait ticks summed over every core, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return fields[3] + fields[4]


def _running() -> dict[str, str]:
    """What each worker is running now."""
    if not STATE_DIR.is_dir():
        return {}
    return {p.name: p.read_text() for p in sorted(STATE_DIR.iterdir()) if not p.name.startswith(".")}


def sample(out: Path) -> None:
    """Each second: idle core-seconds and each worker's test, one JSON line, until SIGTERM."""
    stop: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    idle0 = _idle_ticks()
    with out.open("w") as sink:
        while not stop:
            time.sleep(SAMPLE_S)
            idle1 = _idle_ticks()
            cores_idle = (idle1 - idle0) / TICKS_PER_S
            sink.write(json.dumps({"t": time.time(), "idle_s": cores_idle, "running": _running()}) + "\n")
            sink.flush()
            idle0 = idle1


def report(path: Path) -> None:
    """Idle core-seconds in all, and by the test (file) each worker was running then."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    # (idle core-seconds, the tests running) of each second some worker ran a test; the xdist
    # controller, which runs none, is always between tests
    in_tests = [(r["idle_s"], [v for v in r["running"].values() if v not in NOT_A_TEST]) for r in rows]
    in_tests = [(idle, names) for idle, names in in_tests if names]
    total = sum(idle for idle, _ in in_tests)
    print(f"{len(in_tests)} s sampled while workers ran, {total:.0f} idle core-seconds")
    by_file: collections.Counter[str] = collections.Counter()
    by_test: collections.Counter[str] = collections.Counter()
    for idle, names in in_tests:
        for name in names:
            by_file[name.split("::")[0]] += idle / len(names)
            by_test[name] += idle / len(names)
    print("idle core-seconds by file a worker was running (shared equally between the tests running):")
    for name, idle in by_file.most_common(SHOWN):
        print(f"  {idle:7.1f}  {name}")
    print("idle core-seconds by test:")
    for name, idle in by_test.most_common(SHOWN):
        print(f"  {idle:7.1f}  {name}")


if __name__ == "__main__":
    {"sample": sample, "report": report}[sys.argv[1]](Path(sys.argv[2]))
