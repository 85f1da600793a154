"""The warm pool's executing side without notebooks: a zygote that cannot start makes the process run cold."""

from __future__ import annotations

from pathlib import Path

import pytest

from iscsi_report.pipeline import execute, warm, zygote


def test_a_zygote_that_cannot_start_is_reported_once_then_refused_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(zygote, "BOOT", "import sys\nprint('no stack here', file=sys.stderr)\nsys.exit(3)")
    pool = warm.Zygote()
    with pytest.raises(OSError, match="did not start: no stack here"):
        pool.socket_path()
    assert pool.starts == 1 and pool.pid() is None
    with pytest.raises(OSError, match="did not start"):  # not started again: the process runs cold
        pool.socket_path()
    assert pool.starts == 1


def test_the_cold_switch_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(warm.COLD_ENV, raising=False)
    assert not warm.cold_by_default()
    monkeypatch.setenv(warm.COLD_ENV, "1")
    assert warm.cold_by_default()


def test_kernels_get_one_blas_thread_unless_the_environment_sets_a_count(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("PYTHONHASHSEED", "7")
    env = execute.kernel_env(tmp_path)
    assert env["OPENBLAS_NUM_THREADS"] == "1" and env["PYTHONHASHSEED"] == "0"
    assert env["JUPYTER_PATH"] == str(tmp_path)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert execute.kernel_env(tmp_path)["OPENBLAS_NUM_THREADS"] == "2"


def test_the_zygote_starts_with_one_blas_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    boot = (
        "import os, sys\nprint('threads', os.environ['OPENBLAS_NUM_THREADS'], file=sys.stderr)\nsys.exit(3)"
    )
    monkeypatch.setattr(zygote, "BOOT", boot)
    with pytest.raises(OSError, match="did not start: threads 1"):
        warm.Zygote().socket_path()
