"""The delay line's jitter: what it draws matches the requested distribution (KS), FIFO kept."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from iscsi_report.lab import jitter
from iscsi_report.lab.delayline import Jitter, Serialiser

DRAWS = 20_000
KS_TOLERANCE = 0.015  # at 20,000 draws the 99.9 % critical value is about 0.0138


def _draws(doc: dict) -> np.ndarray:
    j = Jitter.from_doc(doc)
    return np.array([j.draw_ms() for _ in range(DRAWS)])


@pytest.mark.parametrize(
    "shape",
    [
        jitter.gamma(0.5, 2.5, seed=3),
        jitter.lognormal(0.5, 3.0, seed=4),
        jitter.mixture((0.9, 0.1), (0.3, 4.0), (0.5, 0.3), seed=5),
    ],
    ids=lambda s: s.doc["shape"],
)
def test_the_line_draws_the_requested_distribution(shape: jitter.Shape) -> None:
    x = _draws(shape.doc)
    ref = jitter.distribution(shape.doc)
    ks = stats.kstest(x, ref.cdf).statistic
    assert ks < KS_TOLERANCE, f"{shape.name}: KS distance {ks:.4f}"
    assert x.mean() == pytest.approx(float(ref.mean()), rel=0.05)


def test_a_mixtures_reference_draws_what_the_line_draws() -> None:
    """The reference's own draws (for the round trip a shape implies) follow the line's distribution."""
    shape = jitter.mixture((0.97, 0.03), (0.1, 4.0), (0.3, 0.3), seed=6)
    ref = jitter.distribution(shape.doc)
    drawn = ref.rvs(DRAWS, random_state=np.random.default_rng(0))
    assert stats.ks_2samp(drawn, _draws(shape.doc)).statistic < 2 * KS_TOLERANCE
    assert stats.kstest(drawn, ref.cdf).statistic < KS_TOLERANCE


def test_gamma_and_lognormal_have_the_mean_and_p99_asked_for() -> None:
    for shape in (jitter.gamma(0.5, 2.5), jitter.lognormal(0.5, 3.0)):
        d = jitter.distribution(shape.doc)
        assert d.mean() == pytest.approx(0.5, rel=1e-6)
        assert d.ppf(0.99) == pytest.approx(2.5 if shape.doc["shape"] == "gamma" else 3.0, rel=1e-6)
    with pytest.raises(ValueError, match="no lognormal"):
        jitter.lognormal(1.0, 0.5)


def test_correlated_spikes_hit_consecutive_packets() -> None:
    doc = jitter.gamma(0.5, 2.5, seed=1, correlation=0.8).doc
    x = _draws(doc)
    repeats = float(np.mean(x[1:] == x[:-1]))
    assert repeats == pytest.approx(0.8, abs=0.02)
    assert float(np.mean(_draws({**doc, "correlation": 0.0})[1:] == _draws(doc)[:-1])) < 0.01


def test_delivery_stays_first_in_first_out_under_jitter() -> None:
    s = Serialiser(link_mbps=0.0, one_way_delay_ms=1.0, jitter=Jitter.from_doc(jitter.gamma(0.5, 5.0).doc))
    dues = [s.schedule(i * 10_000, 100) or 0 for i in range(5000)]  # a packet every 10 us
    assert all(b >= a for a, b in itertools.pairwise(dues)), "a packet overtook the one ahead"
    assert min(d - i * 10_000 for i, d in enumerate(dues)) >= 1_000_000  # never under the fixed delay


def test_an_unknown_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="jitter shape"):
        Jitter.from_doc({"shape": "pareto"})


def test_a_replayed_trace_is_drawn_as_recorded_and_each_direction_from_its_own_point() -> None:
    trace = np.random.default_rng(7).gamma(0.8, 1.0, 5000).round(4)
    shape = jitter.trace(trace * 2 + 0.5, "test", seed=11)  # RTTs whose half-rise is the trace
    extras = np.asarray(shape.doc["trace_ms"])
    assert np.allclose(extras, trace - trace.min(), atol=1e-4)
    x = _draws(shape.doc)
    assert stats.kstest(x, jitter.distribution(shape.doc).cdf).statistic < KS_TOLERANCE
    there = Jitter.from_doc({**shape.doc, "seed": 12})
    back = np.array([there.draw_ms() for _ in range(DRAWS)])
    assert float(np.corrcoef(x, back)[0, 1]) < 0.05, "the two directions replay the same stretch"
    with pytest.raises(ValueError, match="non-empty trace_ms"):
        Jitter.from_doc({"shape": "trace", "trace_ms": []})
    with pytest.raises(ValueError, match="no round-trip times"):
        jitter.trace(np.array([np.nan]), "empty.txt")
