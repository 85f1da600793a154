"""Fuzzing the fio and iostat parsers with truncated and corrupted real fixtures.

Whatever the damage, parse() returns a result (whose summary is valid strict JSON) or raises
IngestError; any other exception is a bug.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import fio, iostat
from iscsi_report.core.ingest.textio import read_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES = [
    (module, path)
    for module, folder in ((fio, "fio"), (iostat, "iostat"))
    for path in sorted((FIXTURES / folder).iterdir())
]
IDS = [f"{m.__name__.rsplit('.', 1)[-1]}-{p.name}" for m, p in CASES]
FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# Characters that matter to the formats: digits, separators, JSON punctuation, newlines.
NOISE = st.text(alphabet=st.sampled_from(list('0123456789.,-:{}[]"% \t\nabcNaI')), max_size=12)


def _parse_or_refuse(module: ModuleType, text: str) -> None:
    """parse() the text from a file; it must return a result or raise IngestError only."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzzed"
        path.write_text(text, encoding="utf-8")
        try:
            result = module.parse(path)
        except IngestError:
            return
    json.dumps(module.summary(result), allow_nan=False)
    assert isinstance(result.unparsed, list) and isinstance(result.warnings, list)


def _mutate(text: str, start: int, length: int, noise: str) -> str:
    """Replace text[start:start+length] with noise."""
    return text[:start] + noise + text[start + length :]


@pytest.mark.parametrize(("module", "path"), CASES, ids=IDS)
@FUZZ
@given(fraction=st.floats(min_value=0.0, max_value=1.0))
def test_truncated(module: ModuleType, path: Path, fraction: float) -> None:
    """Any prefix of a real output: result or IngestError."""
    text = read_text(path)
    _parse_or_refuse(module, text[: int(len(text) * fraction)])


@pytest.mark.parametrize(("module", "path"), CASES, ids=IDS)
@FUZZ
@given(data=st.data())
def test_corrupted(module: ModuleType, path: Path, data: st.DataObject) -> None:
    """A slice of a real output replaced by format-relevant noise: result or IngestError."""
    text = read_text(path)
    start = data.draw(st.integers(min_value=0, max_value=len(text)))
    length = data.draw(st.integers(min_value=0, max_value=40))
    _parse_or_refuse(module, _mutate(text, start, length, data.draw(NOISE)))


LINE_EDITS: dict[str, Callable[[list[str], int], list[str]]] = {
    "drop": lambda lines, i: lines[:i] + lines[i + 1 :],
    "duplicate": lambda lines, i: lines[: i + 1] + lines[i:],
    "blank": lambda lines, i: [*lines[:i], "", *lines[i + 1 :]],
}


@pytest.mark.parametrize(("module", "path"), CASES, ids=IDS)
@FUZZ
@given(data=st.data())
def test_line_edits(module: ModuleType, path: Path, data: st.DataObject) -> None:
    """A line dropped, duplicated or blanked: result or IngestError."""
    lines = read_text(path).splitlines()
    i = data.draw(st.integers(min_value=0, max_value=max(len(lines) - 1, 0)))
    edit = LINE_EDITS[data.draw(st.sampled_from(sorted(LINE_EDITS)))]
    _parse_or_refuse(module, "\n".join(edit(lines, i)) + "\n")
