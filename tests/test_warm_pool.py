"""The warm pool's executing side without notebooks: a zygote that cannot start makes the process run cold."""

from __future__ import annotations

import pytest

from iscsi_report.pipeline import warm, zygote


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
