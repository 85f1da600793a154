"""Where notebook jobs execute: this machine's thread pool or a Dask cluster, behind one interface.

Both executors run the same job function (``execute.run_notebook``): it executes one notebook with
papermill in its own staging folder and returns the outputs as bytes with their sha256. The
submitting side (``publish.publish``) verifies them, publishes each file atomically and writes the
cache record last, whichever executor ran the job. :class:`LocalExecutor` is a thread pool, each
thread waiting on one papermill process; :class:`DaskExecutor` submits the same function to a Dask
scheduler (``iscsi-report run --scheduler tcp://HOST:PORT``). Either way the executing process (the
batch, or each Dask worker) keeps one warm kernel pool (``pipeline/warm.py``) that its jobs fork
their papermill process and kernel from.

Supported Dask deployment: a shared filesystem. Every worker

- sees the project at the same absolute path as the submitting machine (an NFS mount, say): the
  notebooks, params and raw data are read there, and the staging folder is ``.cache/exec`` below it;
- runs the lock's environment with this checkout's package (``scripts/install_venv.sh .venv
  requirements.lock.txt python3.11``, then ``.venv/bin/dask worker tcp://SCHEDULER:8786``).

Both are checked per job, not assumed: a worker that cannot see the notebook fails the job saying so,
and one whose package code (or notebook) differs from the submitting side's is refused by its
digest, so a result made from other code never enters the cache.
"""

from __future__ import annotations

import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import Any, Protocol, TextIO

from iscsi_report.core.errors import ReportError

LOCAL = "local"
CONNECT_TIMEOUT_S = 10.0  # to reach the scheduler
WORKERS_TIMEOUT_S = 60.0  # then to see at least one worker
DASK_RETRIES = 1  # a job whose function raised is tried once more (a dead worker: Dask's allowed-failures)
# A Dask scheduler address: [tcp|tls|ucx|ws|wss://]HOST[:PORT], HOST a name, IPv4 or [IPv6].
_ADDRESS_RE = re.compile(
    r"(?:(?P<scheme>tcp|tls|ucx|ws|wss)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
    r"(?::(?P<port>\d{1,5}))?",
    re.ASCII,
)
MAX_PORT = 65535
DASK_DEFAULT_PORT = 8786  # the port Dask's scheduler listens on when an address names none
_TCP_SCHEMES = (
    None,
    "tcp",
    "tls",
    "ws",
    "wss",
)  # schemes over plain TCP (None: none given), a socket can probe
# Worker-side task states meaning "nobody wants this result any more" (cancelled by the client).
_ABANDONED_STATES = ("cancelled", "released", "forgotten")
_local_stop = threading.Event()  # set by LocalExecutor.cancel: running jobs stop their notebook


def worker_name() -> str:
    """The Dask worker running the calling task, else :data:`LOCAL`."""
    if "distributed" not in sys.modules:
        return LOCAL
    from distributed import get_worker

    try:
        return str(get_worker().address)
    except ValueError:
        return LOCAL


def stop_requested() -> bool:
    """True if the task calling this was cancelled (Ctrl-C on the submitting side)."""
    if "distributed" in sys.modules:
        from distributed import get_worker

        try:
            worker = get_worker()
        except ValueError:  # not in a Dask task
            return _local_stop.is_set()
        task = worker.state.tasks.get(worker.get_current_task())
        return task is None or task.state in _ABANDONED_STATES
    return _local_stop.is_set()


class Executor(Protocol):
    """Submit the job function, yield futures as they complete, cancel them on Ctrl-C."""

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...

    def submit(self, fn: Callable[[Any], Any], arg: Any, key: str) -> Any: ...

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]: ...

    def cancel(self, futures: list[Any]) -> None: ...

    def failure(self, exc: BaseException) -> str: ...


class LocalExecutor:
    """Today's pool: ``n_workers`` threads on this machine, each waiting on one papermill process."""

    def __init__(self, n_workers: int) -> None:
        self.n_workers = max(1, n_workers)
        self._pool: ThreadPoolExecutor | None = None

    def __enter__(self) -> LocalExecutor:
        _local_stop.clear()
        self._pool = ThreadPoolExecutor(max_workers=self.n_workers)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)  # a cancelled job stops its notebook first (stop_requested)

    def submit(self, fn: Callable[[Any], Any], arg: Any, key: str) -> Future[Any]:
        assert self._pool is not None, "use LocalExecutor as a context manager"
        return self._pool.submit(fn, arg)

    def as_completed(self, futures: Iterable[Future[Any]]) -> Iterator[Future[Any]]:
        return as_completed(list(futures))

    def cancel(self, futures: list[Future[Any]]) -> None:
        _local_stop.set()
        for fut in futures:
            fut.cancel()

    def failure(self, exc: BaseException) -> str:
        return f"the job raised {type(exc).__name__}: {exc}"


def probe_scheduler(address: str, timeout_s: float) -> None:
    """A ReportError at once when nothing listens at a TCP scheduler address.

    Why: Dask's client retries a refused connection until its timeout, so a mistyped port cost the
    user ten seconds of silence; a refused socket says the same in a millisecond. Addresses over
    other transports (ucx) are left to Dask.
    """
    m = _ADDRESS_RE.fullmatch(address)
    if m is None or m["scheme"] not in _TCP_SCHEMES:
        return
    host = m["host"].strip("[]")
    port = int(m["port"]) if m["port"] is not None else DASK_DEFAULT_PORT
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as exc:
        reason = (
            "connection refused, nothing listens there" if isinstance(exc, ConnectionRefusedError) else exc
        )
        raise ReportError(f"--scheduler {address}: cannot reach the Dask scheduler: {reason}") from exc


def check_address(address: str) -> str:
    """The scheduler address unchanged if it has Dask's form; a ReportError naming --scheduler at once
    otherwise (instead of a connection attempt that fails after the timeout)."""
    m = _ADDRESS_RE.fullmatch(address)
    if m is None or (m["port"] is not None and not 1 <= int(m["port"]) <= MAX_PORT):
        raise ReportError(
            f"--scheduler {address[:80]!r}: not a Dask scheduler address; expected tcp://HOST:PORT "
            f"(a port from 1 to {MAX_PORT})"
        )
    return address


class DaskExecutor:
    """Jobs submitted to an existing Dask scheduler (``tcp://HOST:PORT``); see the module docstring."""

    def __init__(self, address: str, retries: int = DASK_RETRIES, timeout_s: float = CONNECT_TIMEOUT_S):
        self.address = check_address(address)
        self.retries = retries
        self.timeout_s = timeout_s
        self.workers_timeout_s = WORKERS_TIMEOUT_S
        self._client: Any = None

    def __enter__(self) -> DaskExecutor:
        from distributed import Client

        probe_scheduler(self.address, self.timeout_s)
        try:
            self._client = Client(  # type: ignore[no-untyped-call]
                self.address, timeout=f"{self.timeout_s}s", set_as_default=False
            )
        except (OSError, TimeoutError) as exc:
            raise ReportError(f"--scheduler {self.address}: cannot reach the Dask scheduler: {exc}") from exc
        try:
            self._client.wait_for_workers(1, timeout=self.workers_timeout_s)
        except TimeoutError as exc:
            self._client.close()
            raise ReportError(
                f"--scheduler {self.address}: no Dask worker joined within {self.workers_timeout_s:g} s"
            ) from exc
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            self._client.close()

    def submit(self, fn: Callable[[Any], Any], arg: Any, key: str) -> Any:
        return self._client.submit(fn, arg, key=key, pure=False, retries=self.retries)

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        from distributed import as_completed as dask_as_completed

        return iter(dask_as_completed(list(futures), loop=self._client.loop))  # type: ignore[no-untyped-call]

    def cancel(self, futures: list[Any]) -> None:
        self._client.cancel(futures, force=True)  # running jobs see it and stop their notebook

    def failure(self, exc: BaseException) -> str:
        """A failed future in words: a worker that died under it, or the exception it raised."""
        from distributed import KilledWorker

        if isinstance(exc, KilledWorker):
            return (
                f"the Dask worker running it died on every attempt (last: {exc.last_worker.address}; "
                "killed or out of memory); nothing was published"
            )
        return f"the job raised {type(exc).__name__} on a Dask worker: {exc}"


def executor_for(scheduler: str | None, n_workers: int) -> Executor:
    """A Dask executor for a scheduler address, else the local pool."""
    return DaskExecutor(scheduler) if scheduler else LocalExecutor(n_workers)


class Progress:
    """One line per finished job with the running totals and an ETA from the mean pace so far."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.stream = total, stream
        self.done = self.failed = 0
        self.started = time.monotonic()

    def eta_s(self) -> float:
        """Seconds left at the pace so far (wall clock per finished job)."""
        finished = self.done + self.failed
        return (time.monotonic() - self.started) / finished * (self.total - finished) if finished else 0.0

    def update(self, ok: bool, label: str, seconds: float) -> None:
        """Count one finished job and print its line."""
        if ok:
            self.done += 1
        else:
            self.failed += 1
        finished = self.done + self.failed
        mark = "ok" if ok else "FAILED"
        eta = round(self.eta_s())
        print(
            f"[{finished}/{self.total}] {mark:6} {label} {seconds:.1f}s  "
            f"(done {self.done}, failed {self.failed}, queued {self.total - finished}, "
            f"ETA {eta // 60}:{eta % 60:02d})",
            file=self.stream,
            flush=True,
        )
