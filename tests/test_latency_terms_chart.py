"""The latency-terms chart's legend: every term a bar holds, named in words, none cut or left out."""

from __future__ import annotations

import re

import pandas as pd

from iscsi_report.core.model import TERM_NAMES
from iscsi_report.presentation import report
from iscsi_report.presentation.charts import model as charts

# A local disk behind a slow link: solicited data on the wire and the device make over 97 % of the
# bar (the reported case), the other terms are slivers or zero.
TERMS_MS = {name: 0.01 for name in TERM_NAMES} | {
    "solicited_transmit_ms": 3.5,
    "device_ms": 1.8,
    "r2t_one_way_ms": 0.0,
    "data_one_way_ms": 0.0,
}


def _terms(rows: list[str]) -> pd.DataFrame:
    """A tidy (combination, term, ms) frame with one bar per row name."""
    return pd.DataFrame([{"combination": r, "term": t, "ms": ms} for r in rows for t, ms in TERMS_MS.items()])


def _colour(spec: dict) -> dict:
    """The colour channel of a single-view spec."""
    return spec["encoding"]["color"]


def test_every_term_is_named_in_words() -> None:
    assert set(charts.TERM_WORDS) == set(TERM_NAMES), "a new term needs its words"
    words = list(charts.TERM_WORDS.values())
    assert len(set(words)) == len(words)
    assert not any("_" in w or w.endswith(" ms") for w in words), "words, not column names"


def test_the_legend_lists_every_term_whole_including_the_largest() -> None:
    spec = charts.latency_terms(_terms(["R2T=1 | lo | disk"]), row="combination").to_dict()
    colour = _colour(spec)
    expected = [charts.TERM_WORDS[t] for t in TERM_NAMES]
    assert colour["scale"]["domain"] == expected, "every term, zero ones too, in exchange order"
    assert len(set(colour["scale"]["range"])) == len(expected), "no two terms share a colour"
    legend = colour["legend"]
    assert legend["symbolLimit"] == 0 and legend["labelLimit"] == 0, "no entry dropped, no label cut"
    assert legend["orient"] == "bottom", "under the bars: a one-bar chart is too short for a side legend"
    shares = pd.Series(TERMS_MS) / sum(TERMS_MS.values())
    largest = [charts.TERM_WORDS[t] for t in shares.nlargest(2).index]
    assert shares.nlargest(2).sum() > 0.97 and set(largest) <= set(colour["scale"]["domain"])


def test_the_rendered_legend_shows_every_label_in_full() -> None:
    """Drawn by vl-convert: each label's text is in the SVG, none shortened with an ellipsis."""
    svg = report.svg(charts.latency_terms(_terms(["a", "b"]), row="combination"))
    texts = [t.replace("&amp;", "&") for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    for words in charts.TERM_WORDS.values():
        assert words in texts, f"legend label {words!r} missing or cut"
    assert not any("…" in t for t in texts)


def test_an_unknown_term_keeps_a_readable_entry() -> None:
    frame = pd.DataFrame(
        {"combination": ["x", "x"], "term": ["device_ms", "queue_wait_ms"], "ms": [1.0, 2.0]}
    )
    domain = _colour(charts.latency_terms(frame, row="combination").to_dict())["scale"]["domain"]
    assert domain == [charts.TERM_WORDS["device_ms"], "queue wait"]
