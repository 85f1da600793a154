"""Fuzz: truncated or corrupted fixtures either parse or raise IngestError, nothing else."""

from __future__ import annotations

import gzip
import lzma
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import iperf3, ping

FIX = Path(__file__).parents[1] / "fixtures"


def _text(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    elif path.suffix == ".xz":
        data = lzma.decompress(data)
    return data.decode()


PING = [_text(p) for p in sorted((FIX / "ping").iterdir())]
IPERF = [_text(p) for p in sorted((FIX / "iperf3").iterdir())]
NOISE = st.text(alphabet=st.sampled_from(list('0123456789.,=:()[]{}"-+ \nabcemnqstx\r')), max_size=12)


def _mutate(text: str, cut: int, pos: int, junk: str, delete: int) -> str:
    """Truncate at cut, then splice junk in at pos replacing delete characters."""
    text = text[: cut % (len(text) + 1)]
    pos = pos % (len(text) + 1)
    return text[:pos] + junk + text[pos + delete :]


def _check(module, text: str) -> None:
    try:
        result = module.parse_text(text, "fuzz")
        module.summary(result)
    except IngestError:
        pass


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.sampled_from(PING), st.integers(0, 10**6), st.integers(0, 10**6), NOISE, st.integers(0, 8))
def test_ping_mutations(text: str, cut: int, pos: int, junk: str, delete: int) -> None:
    _check(ping, _mutate(text, cut, pos, junk, delete))


@SETTINGS
@given(st.sampled_from(IPERF), st.integers(0, 10**6), st.integers(0, 10**6), NOISE, st.integers(0, 8))
def test_iperf3_mutations(text: str, cut: int, pos: int, junk: str, delete: int) -> None:
    _check(iperf3, _mutate(text, cut, pos, junk, delete))


@SETTINGS
@given(st.text(max_size=200))
def test_arbitrary_text(text: str) -> None:
    _check(ping, text)
    _check(iperf3, text)
