"""The warm kernel pool, executing side: one fork server per process, started lazily, restarted if dead.

The batch process (local pool) or each Dask worker process starts one zygote (``pipeline/zygote.py``)
the first time a job asks for it; every notebook then gets a papermill runner and a kernel forked
from it, with the scientific stack already imported. :func:`spawn_papermill` returns a handle that
acts as the ``subprocess.Popen`` ``execute`` waits on; :func:`kernelspec_argv` is the kernel launcher
that asks the same zygote for a forked kernel. If a zygote cannot start, the process runs cold from then on.

A caller may name an already running zygote in :data:`ZYGOTE_ENV` (one :func:`start_server` started,
as the test suite does for its whole run): every warm notebook of any batch is then forked from it and
this process starts and stops none. A named zygote that cannot be reached, or that could not give a
notebook what a fresh process would (another interpreter or start-time environment, a preloaded module
that this PYTHONPATH would shadow), is said once on stderr and left alone: the process runs as if
none were named.

:func:`spawn_build` forks the site's jupyter-book build from a zygote that already runs (named, or
this process's own), never from one started for it.
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
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from iscsi_report.pipeline import zygote

COLD_ENV = "ISCSI_REPORT_COLD"  # set (non-empty) to start every kernel cold, as `run --cold` does
# Set to a running zygote's socket (start_server): warm batches of any size fork from it (COLD_ENV wins).
ZYGOTE_ENV = zygote.SOCKET_ENV
HELLO_TIMEOUT_S = 30.0  # for a named zygote's answer (it is single-threaded: it may be forking)
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
            serving = self._serving_locked()
            if serving is not None:
                return serving
            self._stop_locked()
            self._start_locked()
            assert self._dir is not None
            return self._dir / SOCKET_NAME

    def _serving_locked(self) -> Path | None:
        """The socket of a zygote that runs and imports today's PYTHONPATH, else None."""
        if self.pid() is None or self._dir is None or self._pythonpath != os.environ.get("PYTHONPATH", ""):
            return None
        return self._dir / SOCKET_NAME

    def _start_locked(self) -> None:
        """Start a zygote and wait for its ready line; OSError if it does not come up."""
        self._dir = _private_folder()
        self._pythonpath = os.environ.get("PYTHONPATH", "")
        self.starts += 1
        try:
            self._proc = _spawn(self._dir)
        except OSError as exc:
            self._stop_locked()
            self.failure = str(exc)
            raise

    def stop(self) -> None:
        """Stop the zygote (its children die with it) and remove its folder."""
        with self._lock:
            self._stop_locked()

    def _stop_locked(self) -> None:
        if self._proc is not None:
            _stop_process(self._proc)
            self._proc = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def pid(self) -> int | None:
        """The running zygote's process id (None if none runs)."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def running_socket(self) -> Path | None:
        """The socket of the zygote this process runs for today's PYTHONPATH, else None; never starts one."""
        with self._lock:
            return self._serving_locked()


def _private_folder() -> Path:
    """A new private folder for a zygote's socket and log (short: a socket path is < 108 bytes)."""
    return Path(tempfile.mkdtemp(prefix="iscsi-zygote-"))


def _spawn(folder: Path) -> subprocess.Popen[bytes]:
    """A zygote listening in ``folder``, once it says ready; OSError (with its log) if it does not."""
    with open(folder / LOG_NAME, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", zygote.BOOT, zygote.__file__, "serve", str(folder / SOCKET_NAME)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=zygote.kernel_environ(os.environ),
            start_new_session=True,  # a Ctrl-C on the terminal reaches the batch, which cancels jobs
        )
    assert proc.stdout is not None
    if _read_line(proc.stdout, START_TIMEOUT_S) != zygote.READY:
        _stop_process(proc)
        detail = (folder / LOG_NAME).read_text(errors="replace")[-2000:]
        raise OSError(f"the warm kernel pool did not start: {detail}")
    return proc


def _stop_process(proc: subprocess.Popen[bytes]) -> None:
    """Close a zygote's stdin (its signal to kill its children and exit); SIGKILL it if it lingers."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()


class Served:
    """A zygote for other processes to name in :data:`ZYGOTE_ENV`; it lives until :meth:`stop` or our exit."""

    def __init__(self) -> None:
        self.folder = _private_folder()
        try:
            self.proc = _spawn(self.folder)
        except OSError:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self.socket = self.folder / SOCKET_NAME
        self.pid = self.proc.pid

    def stop(self) -> None:
        """Stop the zygote (its children die with it) and remove its folder."""
        _stop_process(self.proc)
        shutil.rmtree(self.folder, ignore_errors=True)


def start_server() -> Served:
    """Start a zygote that any process may name in :data:`ZYGOTE_ENV`; OSError if it does not come up.

    It imports the stack with this process's environment; a caller whose start-time environment
    differs (``zygote.start_environ``) does not use it. Its children get each caller's PYTHONPATH.
    """
    return Served()


def _read_line(stream: IO[bytes], timeout_s: float) -> bytes:
    """One line from ``stream`` within ``timeout_s`` (b'' on timeout or end of stream)."""
    with selectors.DefaultSelector() as sel:
        sel.register(stream, selectors.EVENT_READ)
        if not sel.select(timeout_s):
            return b""
    return stream.readline()


ZYGOTE = Zygote()
atexit.register(ZYGOTE.stop)


def hello(path: Path) -> dict[str, Any]:
    """A zygote's :func:`zygote.about` answer; OSError if none answers at ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(HELLO_TIMEOUT_S)
        sock.connect(str(path))
        zygote.send_json(sock, {"kind": "hello"})
        try:
            doc = zygote.LineReader(sock).read()
        except ValueError as exc:
            raise OSError(f"unreadable answer: {exc}") from exc
    if doc is None:
        raise OSError("it closed the connection without an answer")
    return doc


def unfit(about: dict[str, Any], environ: Mapping[str, str], cwd: Path) -> str:
    """Why a zygote (its :func:`hello`) cannot fork what a fresh process would be, or ''.

    The fresh process: ``environ``, started in ``cwd`` (a relative PYTHONPATH entry is that folder's).
    """
    if about.get("executable") != sys.executable:
        return f"it runs {about.get('executable')}, not {sys.executable}"
    want = zygote.start_environ(zygote.kernel_environ(environ))
    have = about.get("start_env", {})
    differ = sorted(k for k in want.keys() | have.keys() if want.get(k) != have.get(k))
    if differ:
        return f"it was started with other values of {', '.join(differ)}"
    pythonpath = environ.get("PYTHONPATH", "")
    if about.get("from_own_pythonpath") and pythonpath != about.get("pythonpath"):
        return f"it preloaded {about['from_own_pythonpath'][0]} from its own PYTHONPATH"
    entries = zygote.pythonpath_entries(pythonpath, str(cwd))
    for entry in set(entries) - set(about.get("base", [])):
        shadow = sorted(_top_level_names(Path(entry)) & set(about.get("modules", [])))
        if shadow:
            return f"PYTHONPATH entry {entry} holds {shadow[0]}, which it preloaded from elsewhere"
    return ""


def _top_level_names(folder: Path) -> set[str]:
    """Top-level module names a sys.path entry ``folder`` may provide (packages, .py, extensions)."""
    try:
        names = os.listdir(folder)
    except OSError:  # absent or not a folder: provides nothing
        return set()
    return {name.split(".")[0] for name in names if "." not in name or name.endswith((".py", ".so", ".pyc"))}


class Named:
    """The zygote named in :data:`ZYGOTE_ENV`, checked once per process; a failure is said once on stderr."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._checked: tuple[str, Path] | None = None  # the value checked ('': none named) and folder
        self._path: Path | None = None
        self.refusal = ""  # why the named zygote is not used (said once)

    def socket(self, cwd: Path) -> Path | None:
        """The named zygote's socket if one is named and fit for notebooks run in ``cwd``, else None."""
        value = os.environ.get(ZYGOTE_ENV, "")
        with self._lock:
            if self._checked != (value, cwd):
                self._checked, self._path = (value, cwd), None
                if value and not self.refusal:
                    self._check_locked(Path(value), cwd)
            return self._path

    def _check_locked(self, path: Path, cwd: Path) -> None:
        try:
            why = unfit(hello(path), os.environ, cwd)
        except OSError as exc:
            why = f"no answer: {exc}"
        if why:
            self._refuse_locked(path, why)
        else:
            self._path = path

    def refuse(self, why: str) -> None:
        """Stop using the named zygote (it failed a request): say so once; own zygotes from now on."""
        with self._lock:
            if self._path is not None:
                self._refuse_locked(self._path, why)

    def _refuse_locked(self, path: Path, why: str) -> None:
        self._path = None
        self.refusal = why
        print(
            f"warm    the fork server named in {ZYGOTE_ENV} ({path}) is not used: {why}; "
            "running as if none were named",
            file=sys.stderr,
            flush=True,
        )


NAMED = Named()


def _request(
    path: Path, kind: str, argv: list[str], env: dict[str, str], out: tuple[IO[Any], IO[Any]], cwd: Path
) -> Forked:
    """Ask the zygote at ``path`` to fork a ``kind`` child writing to ``out`` (stdout, stderr); or OSError."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
        request = {"kind": kind, "argv": argv, "env": env, "cwd": str(cwd)}
        with open(os.devnull, "rb") as stdin:
            zygote.send_json(sock, request, [stdin.fileno(), out[0].fileno(), out[1].fileno()])
        reader = zygote.LineReader(sock)
        doc = reader.read()
        if doc is None:
            raise OSError("the zygote closed the connection before forking")
        return Forked(sock, int(doc["pid"]), reader)
    except BaseException:
        sock.close()
        raise


def _request_from(path: Path, argv: list[str], env: dict[str, str], stdout: IO[Any], cwd: Path) -> Forked:
    """A papermill runner from the zygote at ``path``, the env naming its socket (its kernel forked too)."""
    return _request(path, "papermill", argv, {**env, zygote.SOCKET_ENV: str(path)}, (stdout, stdout), cwd)


def spawn_papermill(args: list[str], env: dict[str, str], stdout: IO[Any], cwd: Path) -> Forked:
    """A forked papermill runner (``papermill ARGS``, output to ``stdout``); a dead zygote is restarted once.

    From the zygote named in :data:`ZYGOTE_ENV` if it is fit (else, or if it fails, from this
    process's own). OSError if no zygote can be started (the caller then runs the notebook cold).
    """
    argv = ["papermill", *args]
    named = NAMED.socket(cwd)
    if named is not None:
        try:
            return _request_from(named, argv, env, stdout, cwd)
        except OSError as exc:
            NAMED.refuse(f"a request failed: {exc}")
    try:
        return _request_from(ZYGOTE.socket_path(), argv, env, stdout, cwd)
    except OSError:
        ZYGOTE.stop()  # crashed or wedged: the next call starts a fresh one
        return _request_from(ZYGOTE.socket_path(), argv, env, stdout, cwd)


def spawn_build(
    args: list[str], env: dict[str, str], out: tuple[IO[Any], IO[Any]], cwd: Path
) -> Forked | None:
    """``jupyter-book ARGS`` forked from a zygote that already runs, or None (the caller builds cold).

    The zygote named in :data:`ZYGOTE_ENV` if it is fit, else this process's own if its batch started
    one; never a zygote started only for the build (its start costs more than a cold build), and none
    when cold kernels are asked for (:data:`COLD_ENV`). ``out``: the child's stdout and stderr.
    """
    if cold_by_default():
        return None
    argv = ["jupyter-book", *args]
    named = NAMED.socket(cwd)
    if named is not None:
        try:
            return _request(named, "jupyter-book", argv, env, out, cwd)
        except OSError as exc:
            NAMED.refuse(f"a request failed: {exc}")
    own = ZYGOTE.running_socket()
    if own is None:
        return None
    try:
        return _request(own, "jupyter-book", argv, env, out, cwd)
    except OSError:
        return None
