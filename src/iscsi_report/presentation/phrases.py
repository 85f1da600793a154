"""Phrases the chapters glue: a chapter's numbers in words, counts pluralised, equal range ends collapsed.

The numbers come from :mod:`iscsi_report.analyses` (a dict or a count); the words are made here, with
:mod:`iscsi_report.core.prose`, so the notebook glues a phrase instead of templating ``{n} row(s)``.
"""

from __future__ import annotations

import math

from iscsi_report.core import prose


def storage_headline(head: dict[str, float]) -> dict[str, str]:
    """The storage chapter's headline numbers (:func:`~iscsi_report.analyses.storage.headline`) in words."""
    return {
        "local_devices_text": prose.count(head["local_devices"], "device"),
        "local_block_sizes_text": prose.count(head["local_block_sizes"], "block size"),
        "local_mib_per_s_text": prose.span(
            head["local_min_mib_per_s"], head["local_max_mib_per_s"], "MiB/s", 1
        ),
        "fit_fixed_ms_text": prose.span(head["fit_min_fixed_ms"], head["fit_max_fixed_ms"], "ms", 3),
        "fit_streaming_text": _streaming_text(head),
        "largest_bs_kib_text": prose.span(head["largest_bs_kib"], head["largest_bs_kib"], "KiB"),
        "largest_request_kib_text": prose.span(
            head["largest_bs_min_request_kib"], head["largest_bs_max_request_kib"], "KiB"
        ),
    }


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
