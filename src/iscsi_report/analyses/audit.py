"""Audit of published numbers: each published value beside the recomputed one, with a verdict.

Published numbers live in ``data/published/<study>.yaml`` as entries with an ``id``, ``value``,
``decimals`` (as printed), ``unit``, ``section`` and optional ``printed_as``, ``note`` and
``explanation``; :mod:`iscsi_report.core.published` reads and checks them.

The verdict rule, the same for every study (the audit chapter states it):

* the printed figure stands for an interval of values. ``nearest`` (the default): the value plus
  or minus half a unit of its last significant digit, where the trailing zeros of a whole number
  are not significant (0.90 means 0.895..0.905, 60,700 means 60,650..60,750, 50 means 45..55);
  ``approximate`` (the text says "about", "around", "a little over", "~"): plus or minus one
  whole unit of that digit ("about 29 %" is 28..30); ``truncated`` (IOPS copied from fio, which
  cuts the decimals): [value, value + one unit of the last printed digit);
* a recomputed value inside the interval is a **match**, unless the recomputation reads data
  that were generated to reproduce this very number: then it is **consistent with the
  reconstruction** (it confirms the generator, not the study);
* outside it is a **mismatch**, and every mismatch carries an explanation;
* nothing to recompute from is **not recomputable** (also explained).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from iscsi_report.core import published
from iscsi_report.core.errors import ReportError
from iscsi_report.core.ingest.textio import read_text

# Re-exported: the printing conventions and the number the verdict judges (defined in core.published).
from iscsi_report.core.published import APPROXIMATE as APPROXIMATE
from iscsi_report.core.published import NEAREST as NEAREST
from iscsi_report.core.published import PRINTED_AS as PRINTED_AS
from iscsi_report.core.published import TRUNCATED as TRUNCATED
from iscsi_report.core.published import PublishedNumber as PublishedNumber

MATCH = "match"
RECONSTRUCTED = "consistent with the reconstruction"
MISMATCH = "mismatch"
NOT_RECOMPUTABLE = "not recomputable"
VERDICTS = (MATCH, RECONSTRUCTED, MISMATCH, NOT_RECOMPUTABLE)
BOUNDARY_REL = 1e-9  # a value on the interval's edge (up to float noise) is inside it
TARGETS_FILE = "generation_targets.yaml"  # written by a generator into a reconstructed dataset


def load_published(path: str | Path) -> dict[str, PublishedNumber]:
    """The numbers of a ``data/published/*.yaml`` file keyed by id (read by :func:`published.load`)."""
    return published.load(path).numbers


def significant_step(value: float, decimals: int) -> float:
    """One unit of the last significant digit as printed (trailing zeros of a whole number excluded)."""
    if decimals > 0 or value == 0:
        return 10.0 ** (-decimals)
    whole = abs(round(value))
    zeros = 0
    while whole % 10 == 0:
        whole //= 10
        zeros += 1
    return 10.0**zeros


def printed_interval(pub: PublishedNumber) -> tuple[float, float]:
    """The values that print as ``pub`` under its ``printed_as`` convention (truncated: upper bound open)."""
    unit = 10.0 ** (-pub.decimals)
    if pub.printed_as == TRUNCATED:
        return pub.value, pub.value + unit
    step = significant_step(pub.value, pub.decimals)
    half_width = step if pub.printed_as == APPROXIMATE else 0.5 * step
    return pub.value - half_width, pub.value + half_width


def verdict(published: PublishedNumber, recomputed: float | None, *, generated_from: bool = False) -> str:
    """The one verdict rule (module docstring): interval of the printed figure, then provenance."""
    if recomputed is None or not math.isfinite(recomputed):
        return NOT_RECOMPUTABLE
    lo, hi = printed_interval(published)
    slack = BOUNDARY_REL * max(abs(lo), abs(hi), 1.0)
    above_low = recomputed >= lo - slack
    below_high = recomputed < hi - slack if published.printed_as == TRUNCATED else recomputed <= hi + slack
    if not (above_low and below_high):
        return MISMATCH
    return RECONSTRUCTED if generated_from else MATCH


def load_generation_targets(dataset_root: str | Path) -> frozenset[str]:
    """Published ids a reconstructed dataset was generated to reproduce (empty for measured data)."""
    p = Path(dataset_root) / TARGETS_FILE
    if not p.is_file():
        return frozenset()
    doc = yaml.safe_load(read_text(p))
    ids = doc.get("published_ids") if isinstance(doc, dict) else None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ReportError(f"{p}: expected a mapping with a 'published_ids' list of strings")
    return frozenset(ids)


def audit_table(
    published: Mapping[str, PublishedNumber],
    recomputed: Mapping[str, float],
    explanations: Mapping[str, str] | None = None,
    generated_from: Collection[str] = (),
) -> pd.DataFrame:
    """One row per published number: value, recomputed, difference, verdict, explanation.

    Every published number must be recomputed (a missing one is an error, not a silent gap), and
    every mismatch or unrecomputable number must carry an explanation (argument, else the YAML's).
    """
    explanations = explanations or {}
    missing = sorted(set(published) - set(recomputed))
    if missing:
        raise ReportError(f"audit: no recomputed value for {', '.join(missing)}")
    rows = [_row(pub, float(recomputed[key]), explanations.get(key, pub.explanation), key in generated_from)
            for key, pub in published.items()]  # fmt: skip
    return pd.DataFrame(rows)


def _row(pub: PublishedNumber, value: float, explanation: str, generated_from: bool) -> dict[str, Any]:
    """One audit row (ReportError when a mismatch has no explanation)."""
    v = verdict(pub, value, generated_from=generated_from)
    if v in (MISMATCH, NOT_RECOMPUTABLE) and not explanation:
        raise ReportError(f"audit: {pub.id} is {v} with no explanation")
    lo, hi = printed_interval(pub)
    diff = value - pub.value
    return {
        "id": pub.id,
        "section": pub.section,
        "unit": pub.unit,
        "published": pub.value,
        "printed_as": pub.printed_as,
        "printed_low": lo,
        "printed_high": hi,
        "recomputed": value,
        "difference": diff,
        "difference_pct": 100.0 * diff / pub.value if pub.value else float("nan"),
        "verdict": v,
        "explanation": explanation or pub.note,
        "source": pub.source,
    }


def verdict_counts(table: pd.DataFrame) -> pd.Series:
    """Numbers per verdict, every verdict listed (zero included)."""
    return table["verdict"].value_counts().reindex(list(VERDICTS), fill_value=0)
