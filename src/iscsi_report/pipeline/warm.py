"""The warm kernel pool, executing side: one fork server per process, started lazily, restarted if dead.

The batch process (local pool) or each Dask worker process starts one zygote (``pipeline/zygote.py``)
the first time a job asks for it; every notebook then gets a papermill runner and a kernel forked
from it, with the scientific stack already imported. :func:`spawn_papermill` returns a handle that
acts as the ``subprocess.Popen`` ``execute`` waits on; :func:`kernelspec_argv` is the kernel launcher
that asks the same zygote for a forked kernel. If a zygote cannot start, the process runs cold from then on.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from iscsi_report.pipeline import zygote

COLD_ENV = "ISCSI_REPORT_COLD"  # set (non-empty) to start every kernel cold, as `run --cold` does
START_TIMEOUT_S = 180.0  # for the zygote's imports, on a loaded machine
STOP_TIMEOUT_S = 5.0  # for the zygote to exit once its stdin is closed
LOST_RC = -signal.SIGKILL  # a child whose zygote died before saying how it ended
LOST_MESSAGE = "the warm kernel pool's fork server died while this notebook ran (the notebook died with it)"
SOCKET_NAME = "zygote.sock"
LOG_NAME = "zygote.log"


def cold_by_default() -> bool:
    """True if the environment asks for cold kernels (:data:`COLD_ENV`)."""
    return bool(os.environ.get(COLD_ENV))


def kernelspec_argv() -> list[str]:
    """The kernelspec's argv: the launcher that asks the zygote (named in the env) for a kernel.

    ``-S``: the launcher needs only the standard library, so it skips site-packages' start-up.
    """
    return [sys.executable, "-S", "-c", zygote.BOOT, zygote.__file__, "kernel", "-f", "{connection_file}"]


class Forked:
    """A child of the zygote, waited on and signalled like a ``subprocess.Popen``."""

    def __init__(self, sock: socket.socket, pid: int, reader: zygote.LineReader) -> None:
        self.sock, self.pid, self.reader = sock, pid, reader
        self.returncode: int | None = None
        self.lost = False  # the zygote died before saying how the child ended (the child died with it)

    def wait(self, timeout: float | None = None) -> int:
        """The exit status, waiting at most ``timeout`` seconds (then TimeoutExpired)."""
        if self.returncode is not None:
            return self.returncode
        if not self.reader.has_line():
            with selectors.DefaultSelector() as sel:
                sel.register(self.sock, selectors.EVENT_READ)
                if not sel.select(timeout):
                    raise subprocess.TimeoutExpired(f"forked {self.pid}", timeout or 0.0)
        try:
            doc = self.reader.read()
        except OSError:
            doc = None
        self.lost = doc is None
        self.returncode = int(doc["exit"]) if doc else LOST_RC
        self.sock.close()
        return self.returncode

    def send_signal(self, sig: int) -> None:
        """Have the zygote send ``sig`` to the child (if it still runs)."""
        if self.returncode is None:
            with contextlib.suppress(OSError):
                zygote.send_json(self.sock, {"signal": int(sig)})

    def kill(self) -> None:
        """SIGKILL the child."""
        self.send_signal(signal.SIGKILL)


class Zygote:
    """This process's fork server: started on first use, restarted when it died, stopped at exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._dir: Path | None = None
        self._pythonpath: str | None = None
        self.starts = 0  # how many zygotes this process started (a restart counts)
        self.failure = ""  # why a zygote failed to come up: this process then runs every job cold

    def socket_path(self) -> Path:
        """The running zygote's socket, starting one if none runs (or it imports another path)."""
        with self._lock:
            if self.failure:
                raise OSError(self.failure)
            alive = self._proc is not None and self._proc.poll() is None
            if not alive or self._pythonpath != os.environ.get("PYTHONPATH", ""):
                self._stop_locked()
                self._start_locked()
            assert self._dir is not None
            return self._dir / SOCKET_NAME

    def _start_locked(self) -> None:
        """Start a zygote and wait for its ready line; OSError if it does not come up."""
        self._dir = Path(tempfile.mkdtemp(prefix="iscsi-zygote-"))  # short: a socket path is <108 bytes
        path = self._dir / SOCKET_NAME
        env = zygote.kernel_environ(os.environ)
        self._pythonpath = env.get("PYTHONPATH", "")
        with open(self._dir / LOG_NAME, "wb") as log:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", zygote.BOOT, zygote.__file__, "serve", str(path)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                start_new_session=True,  # a Ctrl-C on the terminal reaches the batch, which cancels jobs
            )
        self.starts += 1
        assert self._proc.stdout is not None
        if _read_line(self._proc.stdout, START_TIMEOUT_S) != zygote.READY:
            detail = (self._dir / LOG_NAME).read_text(errors="replace")[-2000:]
            self._stop_locked()
            self.failure = f"the warm kernel pool did not start: {detail}"
            raise OSError(self.failure)

    def stop(self) -> None:
        """Stop the zygote (its children die with it) and remove its folder."""
        with self._lock:
            self._stop_locked()

    def _stop_locked(self) -> None:
        if self._proc is not None:
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.close()  # the zygote's signal to kill its children and exit
            try:
                self._proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc.stdout.close()
            self._proc = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def pid(self) -> int | None:
        """The running zygote's process id (None if none runs)."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None


def _read_line(stream: IO[bytes], timeout_s: float) -> bytes:
    """One line from ``stream`` within ``timeout_s`` (b'' on timeout or end of stream)."""
    with selectors.DefaultSelector() as sel:
        sel.register(stream, selectors.EVENT_READ)
        if not sel.select(timeout_s):
            return b""
    return stream.readline()


ZYGOTE = Zygote()
atexit.register(ZYGOTE.stop)


def _request(path: Path, argv: list[str], env: dict[str, str], stdout: IO[Any], cwd: Path) -> Forked:
    """Ask the zygote at ``path`` to fork a papermill runner; OSError if it cannot."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
        request = {"kind": "papermill", "argv": argv, "env": env, "cwd": str(cwd)}
        with open(os.devnull, "rb") as stdin:
            zygote.send_json(sock, request, [stdin.fileno(), stdout.fileno(), stdout.fileno()])
        reader = zygote.LineReader(sock)
        doc = reader.read()
        if doc is None:
            raise OSError("the zygote closed the connection before forking")
        return Forked(sock, int(doc["pid"]), reader)
    except BaseException:
        sock.close()
        raise


def _request_from(path: Path, argv: list[str], env: dict[str, str], stdout: IO[Any], cwd: Path) -> Forked:
    """:func:`_request`, the env naming the zygote's socket so that the runner's kernel is forked too."""
    return _request(path, argv, {**env, zygote.SOCKET_ENV: str(path)}, stdout, cwd)


def spawn_papermill(args: list[str], env: dict[str, str], stdout: IO[Any], cwd: Path) -> Forked:
    """A forked papermill runner (``papermill ARGS``, output to ``stdout``); a dead zygote is restarted once.

    OSError if no zygote can be started (the caller then runs the notebook cold).
    """
    argv = ["papermill", *args]
    try:
        return _request_from(ZYGOTE.socket_path(), argv, env, stdout, cwd)
    except OSError:
        ZYGOTE.stop()  # crashed or wedged: the next call starts a fresh one
        return _request_from(ZYGOTE.socket_path(), argv, env, stdout, cwd)
