"""Sets of glue names a chapter pastes into its prose from one table, named the same way every time.

The audit glues ``<id>_pub``, ``_rec``, ``_diff_pct``, ``_verdict`` and ``_why`` per published id
and a count per verdict; the projections chapter glues each answer under ``<key>_blog`` and
``<key>_measured``. ``glue`` is :func:`iscsi_report.presentation.report.glue` on a page (a test
passes a collector).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from iscsi_report.analyses import audit


def glue_key(published_id: str) -> str:
    """A glue name for a published id (dots and dashes to underscores)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", published_id)


def glue_rows(table: pd.DataFrame, ids: list[str], glue: Callable[[str, Any], Any]) -> None:
    """Glue ``<id>_pub``, ``_rec``, ``_diff_pct``, ``_verdict`` and ``_why`` (id in :func:`glue_key` form)."""
    rows = table.set_index("id")
    for key in ids:
        name = glue_key(key)
        glue(f"{name}_pub", float(rows["published"].loc[key]))
        glue(f"{name}_rec", float(rows["recomputed"].loc[key]))
        glue(f"{name}_diff_pct", float(rows["difference_pct"].loc[key]))
        glue(f"{name}_verdict", str(rows["verdict"].loc[key]))
        glue(f"{name}_why", str(rows.loc[key, "explanation"]))


GLUE_COUNT_NAMES = {
    audit.MATCH: "n_match",
    audit.RECONSTRUCTED: "n_reconstructed",
    audit.MISMATCH: "n_mismatch",
    audit.NOT_RECOMPUTABLE: "n_not_recomputable",
}


def glue_counts(counts: pd.DataFrame, glue: Callable[[str, Any], Any]) -> None:
    """Glue ``n_match``, ``n_reconstructed``, ``n_mismatch``, ``n_not_recomputable`` and ``n_total``."""
    totals = counts.set_index("verdict")["total"]
    for verdict, name in GLUE_COUNT_NAMES.items():
        glue(name, int(totals.get(verdict, 0)))
    glue("n_total", int(totals.sum()))


def glue_answers(answers: pd.DataFrame, glue: Callable[[str, Any], Any]) -> None:
    """Glue every answer under ``<key>_blog`` and ``<key>_measured`` for the prose."""
    rows: Iterable[Any] = answers.itertuples(index=False)  # cells: glue_key (str) and two floats
    for row in rows:
        glue(f"{row.glue_key}_blog", float(row.blog_inputs))
        glue(f"{row.glue_key}_measured", float(row.measured_inputs))
