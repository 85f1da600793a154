"""The warm pool's fork server ("zygote") and its kernel launcher: standard library only, never the project.

The zygote imports the heavy third-party stack once (pandas, scipy, statsmodels, altair, IPython,
ipykernel, papermill, ...), but never ``iscsi_report``: it is run by path (``python -c``
:data:`BOOT`), not as a module of the package, so a notebook always imports the project's code
fresh from disk. It creates no thread, no zmq context and no event loop before it forks.

For each request on its Unix socket it forks one child: a fresh process, hence a fresh namespace
that no earlier notebook can have polluted. A request names what the child runs (``papermill``,
``kernel``, or ``jupyter-book``: the site's build, whose stack the zygote imports on the first such
request), its argv, environment and working folder, and passes the child's stdin, stdout and
stderr as file descriptors (SCM_RIGHTS). The zygote answers ``{"pid": N}``, then ``{"exit": RC}``
(RC as ``Popen.returncode``: negative for a signal) when the child ends; meanwhile the requester
may send ``{"signal": N}`` lines. If the requester's connection closes first, the child is killed;
if the zygote dies, its children die with it (PR_SET_PDEATHSIG); the zygote itself exits when its
parent (the batch or a Dask worker process) closes its stdin, by exiting or dying.

A child's ``sys.path`` is the one a fresh interpreter would build from the request's environment and
folder (:func:`fresh_sys_path`): the requested ``PYTHONPATH`` first, then the interpreter's own
entries, whatever ``PYTHONPATH`` the zygote itself was started with. So one zygote can serve callers
that import different copies of the project. A ``{"kind": "hello"}`` request (no descriptors) is
answered with :func:`about`: what a caller checks before it names this zygote (``warm.ZYGOTE_ENV``).

``kernel`` mode of this file is the kernelspec's launcher: a small process that asks the zygote for
a forked kernel, proxies SIGINT/SIGTERM/SIGHUP to it and exits as the kernel did, so that
jupyter_client and papermill see an ordinary kernel process. Without a zygote it execs the cold
kernel instead.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import importlib
import json
import os
import runpy
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

# papermill's engine every papermill child makes its default (loaded by path, see :func:`_run`)
ENGINE_FILE = Path(__file__).resolve().with_name("nbengine.py")
SOCKET_ENV = "ISCSI_REPORT_ZYGOTE"  # the zygote's socket, for the kernel launcher (and warm.ZYGOTE_ENV)
# Environment a Python process reads once, at start (or that the preloaded stack reads at import): a
# child forked from a zygote keeps the zygote's values, so a caller whose values differ must not use it.
START_ENV_PREFIXES = ("PYTHON", "LC_")
START_ENV_NAMES = ("LANG", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
START_ENV_IGNORED = ("PYTHONPATH",)  # applied per child (fresh_sys_path)
# A fresh interpreter's sys.path without PYTHONPATH, minus the '' that ``-c`` puts first.
BASE_PATH_PROBE = (
    "import json, sys\nprint(json.dumps(sys.path[1:] if sys.path and sys.path[0] == '' else sys.path))"
)
# One BLAS thread per kernel (issue 28): the batch runs chapters side by side (``--jobs``) on few cores,
# where each kernel's BLAS thread pool oversubscribes them and its spinning threads cost more than
# they save (lab_tails' L-BFGS-B fits: 5x the CPU). Results are bit-identical
# (benchmarks/chapter_exactness.py); a count the environment sets itself is kept.
ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# ``python -c BOOT <this file> <mode> ...``: run this file by path, without the '' (cwd) entry that
# ``-c`` puts first on sys.path (the cold kernel drops it too).
BOOT = (
    "import runpy, sys\nif sys.path and sys.path[0] == '':\n    del sys.path[0]\n"
    "runpy.run_path(sys.argv[1], run_name='__main__')"
)
# The cold kernel's start (execute.KERNEL_BOOT does the same): ipykernel without debugpy.
COLD_KERNEL_BOOT = (
    "import sys\nsys.modules['debugpy'] = None\nif sys.path and sys.path[0] == '':\n    del sys.path[0]\n"
    "from ipykernel import kernelapp\nkernelapp.launch_new_instance()"
)
# What the zygote imports before it forks: the third-party modules chapters and the runner use.
PRELOAD = (
    "numpy",
    "pandas",
    "scipy.stats",
    "scipy.optimize",
    "scipy.signal",
    "scipy.ndimage",
    "statsmodels.api",
    "statsmodels.formula.api",
    "statsmodels.stats.outliers_influence",
    "altair",
    "vl_convert",
    "pandera.pandas",
    "pydantic",
    "yaml",
    "IPython",
    "IPython.display",
    "myst_nb",
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.zmqshell",
    "ipykernel.debugger",  # the rest of this group: what a kernel's start imports
    "ipykernel.kernelspec",
    "IPython.core.completerlib",
    "IPython.core.debugger",
    "IPython.core.oinspect",
    "IPython.extensions.storemagic",
    "tornado.platform.asyncio",
    "tornado.queues",
    "sqlite3",
    "psutil",
    "jupyter_client.manager",
    "nbformat",
    "nbclient",
    "papermill.cli",
    "papermill.execute",
)
# What a forked ``jupyter-book build`` finds imported (kind ``jupyter-book``): the book builder's stack,
# imported by the zygote on its first build request rather than at its start, so that a zygote that
# only serves notebooks never pays for it. A forked build costs about 1.4 s of CPU against 3.1 s for a
# fresh process (a five-page copy of the book; BENCHMARKS.md, issue 28).
BUILD_PRELOAD = (
    "jupyter_book.cli.main",
    "jupyter_book.sphinx",
    "jupyter_book.config",
    "sphinx.application",
    "sphinx.builders.html",
    "sphinx.environment",
    "myst_nb.sphinx_ext",
    "myst_parser.sphinx_ext.main",
    "sphinx_book_theme",
    "pydata_sphinx_theme",
    "sphinx_togglebutton",
    "sphinx_copybutton",
    "sphinx_design",
    "sphinx_thebe",
    "sphinx_comments",
    "sphinx_external_toc",
    "sphinx_multitoc_numbering",
    "sphinx_jupyterbook_latex",
    "sphinxcontrib.bibtex",
    "latex2mathml.converter",
)
READY = b"ready\n"  # the zygote's one line on stdout once it listens
LISTEN_BACKLOG = 64
MAX_FDS = 3  # stdin, stdout, stderr
RECV_BYTES = 65536
REQUEST_TIMEOUT_S = 30.0  # a connected requester sends its whole request within this
PR_SET_PDEATHSIG = 1  # prctl(2)
EXIT_FAILED = 1  # a child that could not start its work
PARENT_POLL_S = 1.0  # how often the launcher checks its parent, as ipykernel's own poller does


class _KernelLike:
    """What ``get_ipython()`` returns while the zygote imports: a shell that has a kernel.

    Libraries that ask at import time whether they run in a Jupyter kernel (pandas picks its
    ``display.max_columns`` so) must get the answer they get when a cold kernel imports them.
    """

    kernel = None


def kernel_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` for a kernel or the zygote: hash seed fixed, one BLAS thread unless it says otherwise."""
    return {**ONE_BLAS_THREAD, **environ, "PYTHONHASHSEED": "0"}


def start_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """The part of ``environ`` a process reads at start (:data:`START_ENV_PREFIXES`, ``_NAMES``)."""
    return {
        k: v
        for k, v in environ.items()
        if (k.startswith(START_ENV_PREFIXES) or k in START_ENV_NAMES) and k not in START_ENV_IGNORED
    }


def pythonpath_entries(pythonpath: str, cwd: str = "") -> list[str]:
    """``PYTHONPATH`` as a fresh interpreter in ``cwd`` (default: this folder) puts it on sys.path.

    Each entry made absolute against that folder; an empty entry is the folder itself.
    """
    folder = cwd or os.getcwd()
    entries = pythonpath.split(os.pathsep) if pythonpath else []
    return [os.path.normpath(os.path.join(folder, entry)) for entry in entries]


def fresh_sys_path(pythonpath: str, base: list[str]) -> list[str]:
    """The sys.path a fresh interpreter builds in this folder with ``pythonpath`` (site's removeduppaths).

    ``base``: the same interpreter's sys.path without PYTHONPATH (:data:`BASE_PATH_PROBE`); an entry
    both name stays where PYTHONPATH puts it, as site's ``known_paths`` keep it.
    """
    return list(dict.fromkeys([*pythonpath_entries(pythonpath), *base]))  # first place of each kept


def base_sys_path() -> list[str]:
    """This interpreter's sys.path without PYTHONPATH, asked of a fresh one (site and .pth files included)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", BASE_PATH_PROBE], env=env, capture_output=True, check=True, text=True
    )
    base: list[str] = json.loads(out.stdout)
    return base


def about(base: list[str]) -> dict[str, Any]:
    """What a caller checks before naming this zygote: interpreter, start-time env, preloaded modules."""
    own = set(pythonpath_entries(os.environ.get("PYTHONPATH", ""))) - set(base)
    modules = sorted({name.split(".")[0] for name in sys.modules})
    from_own = sorted(
        name
        for name in modules
        if any(_under(getattr(sys.modules.get(name), "__file__", None), entry) for entry in own)
    )
    return {
        "pid": os.getpid(),
        "executable": sys.executable,
        "start_env": start_environ(os.environ),
        "base": base,
        "modules": modules,
        "from_own_pythonpath": from_own,
        "pythonpath": os.environ.get("PYTHONPATH", ""),
    }


def _under(file: object, folder: str) -> bool:
    """True if ``file`` (a module's __file__) lies below ``folder``."""
    return isinstance(file, str) and os.path.abspath(file).startswith(folder.rstrip(os.sep) + os.sep)


@contextlib.contextmanager
def _as_in_a_kernel() -> Iterator[None]:
    """Make ``get_ipython`` a builtin for the block, as IPython does in a kernel."""
    builtins.get_ipython = lambda: _KernelLike()  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del builtins.get_ipython  # type: ignore[attr-defined]


def preload() -> None:
    """Import the stack once, as a cold kernel would see it; refuse the project's own package."""
    sys.modules["debugpy"] = None  # type: ignore[assignment]  # as the cold kernel: no debugger
    with _as_in_a_kernel():
        for name in PRELOAD:
            importlib.import_module(name)
    warm_validator()
    _refuse_the_project()


def preload_build() -> None:
    """Import the book builder's stack once (outside the kernel-like context: a build is no kernel)."""
    for name in BUILD_PRELOAD:
        importlib.import_module(name)
    _refuse_the_project()


def _refuse_the_project() -> None:
    """RuntimeError if a preload imported the project's own package (a child must import it fresh)."""
    leaked = sorted(m for m in sys.modules if m == "iscsi_report" or m.startswith("iscsi_report."))
    if leaked:
        raise RuntimeError(f"the zygote must not import the project, yet imported {leaked[:3]}")


def warm_validator() -> None:
    """Compile nbformat's notebook schema validator once, so no forked papermill compiles its own.

    nbformat compiles the validator on a process's first notebook read (fastjsonschema turns the
    schema into Python code: about 60 ms) and keeps it per (validator, version, minor): the key a
    papermill child asks for, unless its environment names another validator, which it then compiles.
    """
    from nbformat.validator import get_validator

    get_validator()


# ------------------------------------------------------------------------------ wire format


def send_json(sock: socket.socket, doc: dict[str, Any], fds: list[int] | None = None) -> None:
    """One JSON line, with file descriptors attached if given."""
    data = json.dumps(doc).encode() + b"\n"
    if fds:
        sent = socket.send_fds(sock, [data], fds)
        sock.sendall(data[sent:])
    else:
        sock.sendall(data)


class LineReader:
    """JSON lines from a socket, keeping what arrives past the line that was asked for."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""
        self.fds: list[int] = []

    def read(self) -> dict[str, Any] | None:
        """The next JSON line (None at end of stream); attached fds collect in :attr:`fds`."""
        while b"\n" not in self.buffer:
            data, fds, _flags, _addr = socket.recv_fds(self.sock, RECV_BYTES, MAX_FDS)
            self.fds += fds
            if not data:
                return None
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        doc: dict[str, Any] = json.loads(line)
        return doc

    def has_line(self) -> bool:
        """True if a whole line is already buffered."""
        return b"\n" in self.buffer


# ------------------------------------------------------------------------------ the forked child


def _die_with(parent_pid: int) -> None:
    """Have the kernel SIGKILL this process when the zygote dies; exit now if it already has."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(EXIT_FAILED)


def _reseed() -> None:
    """Fresh entropy for numpy's global generator (``random`` reseeds itself after fork)."""
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def _run(kind: str, argv: list[str]) -> int:
    """Run the child's work in this process: papermill's or jupyter-book's command line, or an ipykernel."""
    sys.argv = argv
    if kind == "papermill":
        runpy.run_path(str(ENGINE_FILE))["register"]()  # by path: the zygote itself stays free of the project
        from papermill.cli import papermill  # type: ignore[import-untyped]

        papermill.main(args=argv[1:], prog_name="papermill")  # exits through SystemExit
        return 0
    if kind == "kernel":
        from ipykernel import kernelapp

        # ipykernel reads this from the env at import (in the zygote): give the value a cold kernel reads.
        parent = int(os.environ.get("JPY_PARENT_PID") or 0)
        kernelapp.IPKernelApp.launch_instance(parent_handle=parent)
        return 0
    if kind == "jupyter-book":
        from jupyter_book.cli.main import main as jupyter_book  # type: ignore[import-untyped]

        jupyter_book(args=argv[1:], prog_name="jupyter-book")  # exits through SystemExit
        return 0
    raise ValueError(f"unknown kind {kind!r}")


def _child(
    request: dict[str, Any], fds: list[int], zygote_pid: int, inherited: list[int], base: list[str]
) -> None:
    """The forked child: take the requester's stdio, env, folder and sys.path, run, and never return."""
    code = EXIT_FAILED
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in inherited:
            with contextlib.suppress(OSError):
                os.close(fd)
        os.setsid()  # like a cold kernel (jupyter_client starts it in its own session)
        _die_with(zygote_pid)
        for target, fd in enumerate(fds):  # received descriptors are all above 2 (0-2 are open)
            os.dup2(fd, target)
        for fd in fds:
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[:] = fresh_sys_path(os.environ.get("PYTHONPATH", ""), base)
        importlib.invalidate_caches()
        _reseed()
        code = _run(request["kind"], request["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_FAILED)
    except BaseException:  # whatever happened, the requester gets an exit status
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


# ------------------------------------------------------------------------------ the server


class Server:
    """The zygote's single-threaded loop: accept requests, fork, relay signals and exit statuses."""

    def __init__(self, path: str, base: list[str]) -> None:
        self.base = base  # this interpreter's sys.path without PYTHONPATH: each child builds its own on it
        self.about = about(base)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(LISTEN_BACKLOG)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes select through the wakeup fd
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "reap")
        self.selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "parent")
        self.conns: dict[int, tuple[socket.socket, LineReader]] = {}  # pid -> its requester
        self.builds_preloaded = False  # BUILD_PRELOAD imported (on the first build request)

    def serve(self) -> None:
        """Until the parent closes stdin: handle each ready source in turn."""
        while True:
            for key, _ in self.selector.select():
                if key.data == "accept":
                    self._accept()
                elif key.data == "reap":
                    self._reap()
                elif key.data == "parent":
                    if not os.read(sys.stdin.fileno(), RECV_BYTES):
                        self._shutdown()
                        return
                else:
                    self._from_requester(key.data)

    def _open_fds(self) -> list[int]:
        """Descriptors a child must close: the listener, the wakeup pipe, other requesters."""
        own = [self.listener.fileno(), self.wake_r, self.wake_w, sys.stdin.fileno()]
        return own + [conn.fileno() for conn, _ in self.conns.values()]

    def _accept(self) -> None:
        """Read one request and fork its child; answer its pid."""
        conn, _ = self.listener.accept()
        conn.settimeout(REQUEST_TIMEOUT_S)
        reader = LineReader(conn)
        try:
            request = reader.read()
        except (OSError, ValueError):
            request = None
        if request is not None and request.get("kind") == "hello":
            with contextlib.suppress(OSError):
                send_json(conn, self.about)
            request = None
        if request is None or len(reader.fds) != MAX_FDS:
            for fd in reader.fds:
                os.close(fd)
            conn.close()
            return
        if request.get("kind") == "jupyter-book":
            self._preload_build()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        zygote_pid = os.getpid()
        pid = os.fork()
        if pid == 0:
            _child(request, reader.fds, zygote_pid, [*self._open_fds(), conn.fileno()], self.base)
        for fd in reader.fds:
            os.close(fd)
        conn.settimeout(None)
        self.conns[pid] = (conn, reader)
        self.selector.register(conn, selectors.EVENT_READ, pid)
        with contextlib.suppress(OSError):
            send_json(conn, {"pid": pid})

    def _preload_build(self) -> None:
        """Import the builder's stack before the first build's fork (a failure is logged; the child
        then imports it itself and reports the error on its own stderr)."""
        if self.builds_preloaded:
            return
        self.builds_preloaded = True
        try:
            preload_build()
        except Exception:  # the zygote still serves notebooks
            traceback.print_exc()
        self.about = about(self.base)

    def _from_requester(self, pid: int) -> None:
        """A signal to relay, or the requester gone (then its child is killed)."""
        _conn, reader = self.conns[pid]
        try:
            doc = reader.read()
            while doc is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, int(doc["signal"]))
                if not reader.has_line():
                    return
                doc = reader.read()
        except (OSError, ValueError, KeyError):
            pass
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        self._forget(pid)

    def _forget(self, pid: int) -> None:
        """Stop watching a child's requester."""
        conn, _ = self.conns.pop(pid)
        self.selector.unregister(conn)
        conn.close()

    def _reap(self) -> None:
        """Collect every ended child and tell its requester how it ended."""
        with contextlib.suppress(BlockingIOError):
            while os.read(self.wake_r, RECV_BYTES):
                pass
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.conns:
                with contextlib.suppress(OSError):
                    send_json(self.conns[pid][0], {"exit": os.waitstatus_to_exitcode(status)})
                self._forget(pid)

    def _shutdown(self) -> None:
        """The parent is gone: kill every child still running."""
        for pid in list(self.conns):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def serve(path: str) -> None:
    """The zygote: preload, listen on ``path``, say ready, serve until the parent goes."""
    base = base_sys_path()
    preload()
    server = Server(path, base)
    sys.stdout.buffer.write(READY)
    sys.stdout.flush()
    try:
        server.serve()
    finally:  # its private folder (the requester's own clean-up does not run if it was SIGKILLed)
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)


# ------------------------------------------------------------------------------ the kernel launcher


def _exit_as(code: int) -> None:
    """Exit with ``code`` as Popen reports it: a negative one by that signal."""
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def launch_kernel(argv: list[str]) -> None:
    """The kernelspec's argv: a forked kernel from the zygote, or the cold kernel without one."""
    path = os.environ.get(SOCKET_ENV, "")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        cold = [sys.executable, "-c", COLD_KERNEL_BOOT, *argv]
        os.execv(sys.executable, cold)
    env = {k: v for k, v in os.environ.items() if k != SOCKET_ENV}
    request = {"kind": "kernel", "argv": ["-c", *argv], "env": env, "cwd": os.getcwd()}
    send_json(sock, request, [0, 1, 2])
    reader = LineReader(sock)
    if reader.read() is None:  # no pid: the zygote refused or died
        sys.exit(EXIT_FAILED)

    def relay(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            send_json(sock, {"signal": signum})

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, relay)
    _wait_while_parent_lives(sock, os.getppid())
    doc = reader.read()
    _exit_as(int(doc["exit"]) if doc else EXIT_FAILED)


def _wait_while_parent_lives(sock: socket.socket, parent_pid: int) -> None:
    """Until the zygote writes, exit if the launcher's parent (papermill) goes, as a cold kernel would.

    The cold kernel polls its parent (ipykernel's ParentPollerUnix); a forked one's parent is the
    zygote, so the launcher polls instead, and its exit closes the socket: the zygote kills the kernel.
    """
    with selectors.DefaultSelector() as sel:
        sel.register(sock, selectors.EVENT_READ)
        while not sel.select(PARENT_POLL_S):
            if os.getppid() != parent_pid:
                sys.exit(EXIT_FAILED)


def main(args: list[str]) -> None:
    """``serve SOCKET`` or ``kernel -f CONNECTION_FILE``."""
    if args[0] == "serve":
        serve(args[1])
    elif args[0] == "kernel":
        launch_kernel(args[1:])
    else:
        sys.exit(f"usage: zygote.py serve SOCKET | kernel -f CONNECTION_FILE (not {args[0]!r})")


if __name__ == "__main__":
    main(sys.argv[2:])  # argv: [this file (runpy), this file, mode, ...]
