"""The glue names the audit page pastes: one set per published id, one count per verdict."""

from __future__ import annotations

from typing import Any

import pandas as pd

from iscsi_report.analyses import audit
from iscsi_report.presentation import glue_sets


def _collector() -> tuple[dict[str, Any], Any]:
    glued: dict[str, Any] = {}
    return glued, lambda name, value: glued.__setitem__(name, value)


def test_audit_rows_are_glued_under_their_id_with_dots_as_underscores() -> None:
    table = pd.DataFrame(
        {
            "id": ["latency.wired-1s.mean_ms"],
            "published": [1.5],
            "recomputed": [1.49],
            "difference_pct": [-0.7],
            "verdict": [audit.MATCH],
            "explanation": ["rounding"],
        }
    )
    glued, glue = _collector()
    glue_sets.glue_rows(table, ["latency.wired-1s.mean_ms"], glue)
    key = "latency_wired_1s_mean_ms"
    assert glued == {
        f"{key}_pub": 1.5,
        f"{key}_rec": 1.49,
        f"{key}_diff_pct": -0.7,
        f"{key}_verdict": audit.MATCH,
        f"{key}_why": "rounding",
    }


def test_every_verdict_gets_a_count_even_when_absent() -> None:
    counts = pd.DataFrame({"verdict": [audit.MATCH, audit.MISMATCH], "total": [7, 2]})
    glued, glue = _collector()
    glue_sets.glue_counts(counts, glue)
    assert glued == {
        "n_match": 7,
        "n_reconstructed": 0,
        "n_mismatch": 2,
        "n_not_recomputable": 0,
        "n_total": 9,
    }
