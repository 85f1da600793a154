"""Ctrl-C during a batch: remembered, so a run whose notebooks failed because of it ends as interrupted."""

from __future__ import annotations

import signal
import threading
from typing import Any

INTERRUPTED_STATUS = 130  # the shell's status for a command ended by Ctrl-C (128 + SIGINT)
# Set by Ctrl-C: a job whose papermill got the same SIGINT can fail and be reported before the
# runner's KeyboardInterrupt is handled; the command must still end as interrupted (130).
SIGINT_SEEN = threading.Event()


def watch_sigint() -> None:
    """Remember Ctrl-C (then raise KeyboardInterrupt as Python's default handler does)."""
    SIGINT_SEEN.clear()

    def _handler(signum: int, frame: Any) -> None:
        SIGINT_SEEN.set()
        signal.default_int_handler(signum, frame)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _handler)


def unless_interrupted(status: int) -> int:
    """``status``, or KeyboardInterrupt when a failure was caused by Ctrl-C (see SIGINT_SEEN)."""
    if status != 0 and SIGINT_SEEN.is_set():
        raise KeyboardInterrupt
    return status
