"""Audit of published numbers: each published value beside the recomputed one, with a verdict.

Published numbers live in ``data/published/<study>.yaml`` as entries with an ``id``, ``value``,
``decimals`` (as printed), ``unit``, ``section`` and optional ``tolerance_rel`` and ``note``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from iscsi_report.core.errors import ReportError
from iscsi_report.core.ingest.textio import read_text

MATCH = "match"
WITHIN = "within tolerance"
MISMATCH = "mismatch"
DEFAULT_TOLERANCE_REL = 0.02  # 2%: the reconstruction target of the issue, and typical print rounding


@dataclass(frozen=True)
class PublishedNumber:
    """One number as a seed prints it, with where it comes from."""

    id: str
    value: float
    decimals: int
    unit: str
    section: str
    source: str
    tolerance_rel: float = DEFAULT_TOLERANCE_REL
    note: str = ""


def load_published(path: str | Path) -> dict[str, PublishedNumber]:
    """Read a ``data/published/*.yaml`` file into PublishedNumber entries keyed by id."""
    p = Path(path)
    doc = yaml.safe_load(read_text(p))  # through textio: tracked as a read
    if not isinstance(doc, dict) or not isinstance(doc.get("numbers"), list):
        raise ReportError(f"{p}: expected a mapping with a 'numbers' list")
    source = str(doc.get("source", p.name))
    out: dict[str, PublishedNumber] = {}
    for i, item in enumerate(doc["numbers"]):
        try:
            num = PublishedNumber(
                id=str(item["id"]),
                value=float(item["value"]),
                decimals=int(item.get("decimals", 0)),
                unit=str(item.get("unit", "")),
                section=str(item["section"]),
                source=str(item.get("source", source)),
                tolerance_rel=float(item.get("tolerance_rel", DEFAULT_TOLERANCE_REL)),
                note=str(item.get("note", "")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ReportError(f"{p}: at numbers[{i}]: expected id, value, section ({exc})") from exc
        if num.id in out:
            raise ReportError(f"{p}: at numbers[{i}]: duplicate id {num.id!r}")
        out[num.id] = num
    return out


def verdict(published: PublishedNumber, recomputed: float) -> str:
    """``match`` if the recomputed value prints as published, ``within tolerance`` if close."""
    if recomputed is None or not math.isfinite(recomputed):
        return MISMATCH
    half_ulp = 0.5 * 10.0 ** (-published.decimals)
    if abs(recomputed - published.value) <= half_ulp * (1 + 1e-9):
        return MATCH
    scale = abs(published.value) if published.value else 1.0
    if abs(recomputed - published.value) / scale <= published.tolerance_rel:
        return WITHIN
    return MISMATCH


def audit_table(
    published: Mapping[str, PublishedNumber],
    recomputed: Mapping[str, float],
    explanations: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One row per published number: value, recomputed, difference, verdict, explanation.

    Every published number must be recomputed (a missing one is an error, not a silent gap),
    and every mismatch must carry an explanation.
    """
    explanations = explanations or {}
    missing = sorted(set(published) - set(recomputed))
    if missing:
        raise ReportError(f"audit: no recomputed value for {', '.join(missing)}")
    rows: list[dict[str, Any]] = []
    for key, pub in published.items():
        value = float(recomputed[key])
        v = verdict(pub, value)
        note = explanations.get(key, pub.note)
        if v == MISMATCH and not note:
            raise ReportError(f"audit: {key} is a mismatch with no explanation")
        diff = value - pub.value
        rows.append(
            {
                "id": key,
                "section": pub.section,
                "unit": pub.unit,
                "published": pub.value,
                "recomputed": value,
                "difference": diff,
                "difference_pct": 100.0 * diff / pub.value if pub.value else float("nan"),
                "verdict": v,
                "explanation": note,
                "source": pub.source,
            }
        )
    return pd.DataFrame(rows)
