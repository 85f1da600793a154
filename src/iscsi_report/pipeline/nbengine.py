"""papermill's engine with a kernel client that is ready when the kernel is: no fixed wait at start.

jupyter_client's ``wait_for_ready`` ends with a drain of the IOPub channel that lasts until 0.2 s
pass without a message, so every notebook paid at least 0.2 s of idle start-up (BENCHMARKS.md,
"Warm kernel pool"). Here the client keeps the handshake that matters (a ``kernel_info`` reply on
shell, then one message on IOPub to show the subscription is live) and drains only what has
already arrived. A start-up message left on IOPub is harmless: nbclient reads only the messages
whose parent is the cell it executes. Outputs are byte-identical (tests/e2e/test_warm.py).

At the end the kernel is killed rather than asked to stop (nbclient's ``shutdown_kernel="immediate"``):
every output has arrived by then, since nbclient waits for each cell's reply and its idle status,
and a kernel has nothing of the notebook's left to do. jupyter_client then checks every 0.1 s
whether the killed process is gone; here every :data:`KILLED_POLL_S`. Together about 0.1 s of each
notebook's 0.5 s (BENCHMARKS.md). A forked kernel dies with its launcher (the zygote kills it when
the launcher's socket closes); a cold kernel is the launcher's own process.

Standard library, papermill and jupyter_client only, never the rest of ``iscsi_report``: every papermill
process the batch starts, cold or forked from the zygote, loads this file by path and makes its engine
papermill's default (:func:`register`) before papermill reads its command line.
"""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from papermill.engines import NBClientEngine, papermill_engines  # type: ignore[import-untyped]
from traitlets import default

ENGINE_NAME = "iscsi-report"  # also papermill's --engine value for it
IOPUB_CONNECTED_S = 0.2  # how long one wait for the first IOPub message lasts (then kernel_info again)
IOPUB_DRAIN_S = 0.01  # a message arriving later than this after the last is left for nbclient to skip
SHELL_REPLY_S = 1.0  # how long one wait for the kernel_info reply lasts before asking again
KILLED_POLL_S = 0.005  # how often a stopping kernel's process is checked (jupyter_client: 0.1 s)
SHUTDOWN = "immediate"  # nbclient's shutdown_kernel: kill the kernel once the last cell answered


class QuickKernelClient(AsyncKernelClient):
    """An async kernel client whose :meth:`wait_for_ready` returns once both channels answer."""

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """Ask ``kernel_info`` until shell replies and IOPub delivers; RuntimeError past ``timeout`` s."""
        deadline_s = time.monotonic() + (timeout if timeout is not None else float("inf"))
        while not await self._iopub_answers(await self._kernel_info_reply(deadline_s, timeout)):
            await self._check_alive_and_on_time(deadline_s, timeout)
        await self._drain_iopub()

    async def _kernel_info_reply(self, deadline_s: float, timeout: float | None) -> dict[str, Any]:
        """Send ``kernel_info`` and return its reply, asking again while none comes."""
        while True:
            self.kernel_info()
            try:
                msg: dict[str, Any] = await self.shell_channel.get_msg(timeout=SHELL_REPLY_S)
            except Empty:
                await self._check_alive_and_on_time(deadline_s, timeout)
                continue
            if msg["msg_type"] == "kernel_info_reply":
                return msg

    async def _iopub_answers(self, reply: dict[str, Any]) -> bool:
        """True once a message arrives on IOPub (the subscription is live): the reply is then taken in."""
        try:
            await self.iopub_channel.get_msg(timeout=IOPUB_CONNECTED_S)
        except Empty:
            return False
        self._handle_kernel_info_reply(reply)
        return True

    async def _drain_iopub(self) -> None:
        """Read IOPub messages already in flight, stopping at the first pause of :data:`IOPUB_DRAIN_S`."""
        while True:
            try:
                await self.iopub_channel.get_msg(timeout=IOPUB_DRAIN_S)
            except Empty:
                return

    async def _check_alive_and_on_time(self, deadline_s: float, timeout: float | None) -> None:
        """RuntimeError if the kernel died or the start-up timeout passed, in jupyter_client's words.

        The batch retries a kernel that failed to start by these words (``diagnose.KERNEL_START_FAILURES``).
        """
        if not await self._async_is_alive():
            raise RuntimeError("Kernel died before replying to kernel_info")
        if time.monotonic() > deadline_s:
            raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")


class QuickKernelManager(AsyncKernelManager):
    """The async kernel manager nbclient uses, handing out :class:`QuickKernelClient` clients."""

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        """Return once the kernel's process is gone, checking every :data:`KILLED_POLL_S` at most."""
        await super()._async_wait(pollinterval=min(pollinterval, KILLED_POLL_S))

    @default("client_factory")
    def _quick_client(self) -> type[QuickKernelClient]:
        """The client class (a trait default, so a configured client class still wins)."""
        return QuickKernelClient


class QuickEngine(NBClientEngine):  # type: ignore[misc]
    """papermill's nbclient engine, its kernels managed by :class:`QuickKernelManager`."""

    @classmethod
    def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, **kwargs: Any) -> Any:
        """As nbclient's engine: the quick manager; the kernel killed at the end unless a caller says."""
        kwargs.setdefault("kernel_manager_class", QuickKernelManager)
        kwargs.setdefault("shutdown_kernel", SHUTDOWN)
        return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)


def register() -> None:
    """Make :class:`QuickEngine` papermill's default engine here (and ``--engine iscsi-report``)."""
    papermill_engines.register(None, QuickEngine)
    papermill_engines.register(ENGINE_NAME, QuickEngine)
