"""Hostile inputs: every case ends in a clear error or a correct result (see cases.py)."""

from __future__ import annotations

import time
from pathlib import Path

import cases
import pytest
from cases import CASES, run_case

from iscsi_report.core.errors import IngestError

MIN_CASES = 450


def test_catalogue_is_large_and_ids_unique() -> None:
    """At least 450 cases, each with its own id, across every group of reader and entry point."""
    ids = [c.id for c in CASES]
    assert len(ids) >= MIN_CASES
    assert len(set(ids)) == len(ids)
    groups = {c.group for c in CASES}
    assert {
        "ping",
        "iperf3",
        "fio",
        "iostat",
        "tshark",
        "files",
        "names",
        "yaml",
        "manifest",
        "params",
    } <= groups
    assert {"summarize", "root", "scheduler", "batch"} <= groups


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case, tmp_path: Path) -> None:
    """No traceback, no hang, nothing accepted silently, no vague error."""
    outcome = run_case(case, tmp_path)
    assert outcome.kind in ("clear_error", "correct"), f"{outcome.kind}: {outcome.detail}"


def _trial(call) -> cases.Case:
    return cases.Case("meta", "meta", lambda tmp: cases.Trial(call, tmp / "f"), cases.Err(("x",)))


def _sleep() -> None:
    time.sleep(30)


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        (lambda: {}["k"], "traceback"),
        (lambda: 1, "silent"),
        (_sleep, "hang"),
        (lambda: (_ for _ in ()).throw(IngestError("elsewhere", "x")), "unclear_error"),
    ],
    ids=["traceback", "silent", "hang", "error-naming-another-file"],
)
def test_classifier_catches_each_failure(call, kind: str, tmp_path: Path, monkeypatch) -> None:
    """The judge itself: a traceback, an accepted bad input, a hang, a vague error are caught."""
    monkeypatch.setattr(cases, "TIMEOUT_S", 1)
    assert cases.run_case(_trial(call), tmp_path).kind == kind
