"""The Dask executor's address checks: a scheduler that is not there is said at once (issue 28)."""

from __future__ import annotations

import socket

import pytest

from iscsi_report.core.errors import ReportError
from iscsi_report.pipeline import executors

LOOPBACK = "127.0.0.1"


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, read, released)."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def test_a_refused_scheduler_is_an_error_naming_the_address_and_the_refusal() -> None:
    address = f"tcp://{LOOPBACK}:{_closed_port()}"
    with pytest.raises(ReportError, match="connection refused") as err:
        executors.probe_scheduler(address, timeout_s=5.0)
    assert f"--scheduler {address}: cannot reach the Dask scheduler" in str(err.value)


def test_a_listening_scheduler_passes_the_probe() -> None:
    with socket.socket() as server:
        server.bind((LOOPBACK, 0))
        server.listen(1)
        port = server.getsockname()[1]
        executors.probe_scheduler(f"tcp://{LOOPBACK}:{port}", timeout_s=5.0)
        executors.probe_scheduler(f"{LOOPBACK}:{port}", timeout_s=5.0)  # no scheme: TCP


def test_the_executor_probes_before_it_asks_dask(monkeypatch: pytest.MonkeyPatch) -> None:
    distributed = pytest.importorskip("distributed")

    def no_client(*args: object, **kwargs: object) -> None:
        raise AssertionError("Dask's client was asked to connect to a refused address")

    monkeypatch.setattr(distributed, "Client", no_client)
    executor = executors.DaskExecutor(f"tcp://{LOOPBACK}:{_closed_port()}")
    with pytest.raises(ReportError, match="connection refused"), executor:
        pass


def test_other_transports_are_left_to_dask() -> None:
    executors.probe_scheduler(f"ucx://{LOOPBACK}:{_closed_port()}", timeout_s=5.0)  # no probe, no error
