"""Phrases the chapters glue: a chapter's numbers in words, counts pluralised, equal range ends collapsed.

The numbers come from :mod:`iscsi_report.analyses` (a dict or a count); the words are made here, with
:mod:`iscsi_report.core.prose`, so the notebook glues a phrase instead of templating ``{n} row(s)``.
"""

from __future__ import annotations

import math

from iscsi_report.core import prose

FIXED_MS_DECIMALS = 3  # a device's fixed cost per write in ms, to the µs
SMALL_SHARE_PCT = 0.1  # a share below this many per cent prints as "under 0.1 %"
MAX_SHARE_DECIMALS = 3  # decimals of a share at most: 0.001 % of a write is below any timer's resolution


def storage_headline(head: dict[str, float], ci_pct: float = 95.0) -> dict[str, str]:
    """The storage chapter's headline numbers (:func:`~iscsi_report.analyses.storage.headline`) in words."""
    return {
        "local_devices_text": prose.count(head["local_devices"], "device"),
        "local_block_sizes_text": prose.count(head["local_block_sizes"], "block size"),
        "local_mib_per_s_text": prose.span(
            head["local_min_mib_per_s"], head["local_max_mib_per_s"], "MiB/s", 1
        ),
        "fit_fixed_ms_text": prose.span(head["fit_min_fixed_ms"], head["fit_max_fixed_ms"], "ms", 3),
        "fit_fixed_cost_text": _fixed_cost_text(head, ci_pct),
        "fit_streaming_text": _streaming_text(head),
        "largest_bs_kib_text": prose.span(head["largest_bs_kib"], head["largest_bs_kib"], "KiB"),
        "largest_request_kib_text": prose.span(
            head["largest_bs_min_request_kib"], head["largest_bs_max_request_kib"], "KiB"
        ),
    }


def _fixed_cost_text(head: dict[str, float], ci_pct: float) -> str:
    """The fitted fixed cost per write in words; when every device's interval holds zero, it says so.

    A negative intercept is no cost: printed as "a fixed -0.009 ms" it reads as a saving. When the
    interval of every fitted device reaches zero the data cannot tell the fixed cost from none, and
    the phrase says that, with the widest interval, instead of the point estimates.
    """
    devices = head.get("fit_devices", math.nan)
    if not devices or math.isnan(devices):
        return "no fitted fixed cost"
    if head.get("fit_fixed_zero_devices", 0.0) == devices:
        lo_ms, hi_ms = head["fit_min_fixed_lo_ms"], head["fit_max_fixed_hi_ms"]
        interval = prose.span(lo_ms, hi_ms, "ms", FIXED_MS_DECIMALS)
        return (
            f"a fixed time indistinguishable from zero ({prose.number(ci_pct)} % "
            f"{prose.plural(devices, 'interval', 'intervals')} within {interval})"
        )
    low_ms, high_ms = head["fit_min_fixed_ms"], head["fit_max_fixed_ms"]
    return "a fixed " + prose.span(low_ms, high_ms, "ms", FIXED_MS_DECIMALS)


def share_pct_text(low_pct: float, high_pct: float) -> str:
    """A range of percentage shares with enough decimals that a small share never prints as 0.0 %.

    Two significant digits of the smaller end, at most :data:`MAX_SHARE_DECIMALS` decimals; a range
    wholly below :data:`SMALL_SHARE_PCT` is "under 0.1 %".
    """
    if math.isnan(low_pct) or math.isnan(high_pct):
        return "—"
    if high_pct < SMALL_SHARE_PCT:
        return f"under {prose.number(SMALL_SHARE_PCT, 1)} %"
    smallest = min(abs(low_pct), abs(high_pct))
    digits = 1 - math.floor(math.log10(smallest)) if smallest > 0 else MAX_SHARE_DECIMALS
    return prose.span(low_pct, high_pct, "%", min(max(digits, 1), MAX_SHARE_DECIMALS))


def _streaming_text(head: dict[str, float]) -> str:
    """The fitted streaming bandwidths in words; a fit without a positive slope has none (never inf)."""
    low, high = head["fit_min_streaming_mib_per_s"], head["fit_max_streaming_mib_per_s"]
    if math.isnan(low) or math.isnan(high):
        return "undefined (no fit has a positive slope)"
    return prose.span(low, high, "MiB/s", 1)


def unmodelled_sentence(n_unmodelled: int) -> str:
    """The fleet page's sentence on rows with nothing to model, in the number of those rows."""
    if n_unmodelled == 0:
        return "Every row has something to model."
    n = n_unmodelled
    return (
        f"{prose.count(n, 'row')} {prose.plural(n, 'has', 'have')} nothing to model and "
        f"{prose.plural(n, 'says', 'say')} why in {prose.plural(n, 'its', 'their')} note."
    )
