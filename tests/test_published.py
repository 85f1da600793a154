"""data/published/*.yaml behind one typed loader: strict YAML, checked fields, errors naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from iscsi_report.analyses import audit, crossstudy
from iscsi_report.core import published
from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest.textio import files_read

PUBLISHED = Path(__file__).resolve().parents[1] / "data" / "published"

HEADER = """source: Example 2024
citation: {key: Example 2024, ref: ref-example, title: An example}
numbers:
"""
GOOD = (
    HEADER
    + """  - {id: ex.a, value: 62935, decimals: 0, unit: IOPS, section: Table 1}
  - {id: ex.b, value: 1.25, decimals: 2, unit: ms, section: Table 1, printed_as: truncated}
tables:
  t:
    rows:
      - {size: 512, iops: ex.a}
bounds:
  row: {note: a note, explanation: why}
"""
)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "example.yaml"
    path.write_text(text)
    return path


def _refused(tmp_path: Path, text: str) -> IngestError:
    path = _write(tmp_path, text)
    with pytest.raises(IngestError) as info:
        published.load(path)
    assert info.value.path == str(path)
    return info.value


def test_a_good_file_loads_typed(tmp_path: Path) -> None:
    pub = published.load(_write(tmp_path, GOOD))
    assert pub.source == "Example 2024"
    assert pub.numbers["ex.a"] == published.PublishedNumber(
        "ex.a", 62935.0, 0, "IOPS", "Table 1", "Example 2024"
    )
    assert isinstance(pub.numbers["ex.a"].value, float)
    assert pub.numbers["ex.b"].printed_as == published.TRUNCATED
    assert pub.citation is not None and pub.citation.key == "Example 2024"
    assert pub.tables["t"].rows == [{"size": 512, "iops": "ex.a"}]
    assert pub.bounds["row"].explanation == "why"


def test_a_duplicate_key_names_file_and_line(tmp_path: Path) -> None:
    err = _refused(tmp_path, HEADER + "  - {id: ex.a, value: 1, value: 2, section: s}\n")
    assert err.line == 4 and "duplicate key 'value'" in str(err)
    assert str(err).startswith(f"{tmp_path / 'example.yaml'}:4:")


def test_a_missing_value_names_file_and_line(tmp_path: Path) -> None:
    text = HEADER + "  - {id: ex.a, value: 1, section: s}\n  - {id: ex.b, decimals: 0, section: s}\n"
    err = _refused(tmp_path, text)
    assert err.line == 5 and err.json_path == "numbers[1].value"
    assert "missing key 'value'" in str(err)


@pytest.mark.parametrize(
    ("entry", "where"),
    [
        ("{id: ex.a, value: '62,935', section: s}", "numbers[0].value"),  # a string is not a number
        ("{id: ex.a, value: true, section: s}", "numbers[0].value"),  # nor is a bool
        ("{id: ex.a, value: .inf, section: s}", "numbers[0].value"),
        ("{id: ex.a, value: 1, decimals: 1.5, section: s}", "numbers[0].decimals"),
        ("{id: ex.a, value: 1, section: 3}", "numbers[0].section"),
        ("{id: ex.a, value: 1, section: s, printed_as: rounded}", "numbers[0].printed_as"),
        ("{id: ex.a, value: 1, section: s, sectoin: t}", "numbers[0].sectoin"),  # a typo is refused
    ],
)
def test_a_wrong_type_names_file_and_line(tmp_path: Path, entry: str, where: str) -> None:
    err = _refused(tmp_path, HEADER + "  - {id: ex.z, value: 2, section: s}\n  - " + entry + "\n")
    assert err.line == 5 and err.json_path == where.replace("[0]", "[1]")


def test_a_duplicate_id_and_a_wrong_top_level_are_refused(tmp_path: Path) -> None:
    err = _refused(
        tmp_path, HEADER + "  - {id: ex.a, value: 1, section: s}\n  - {id: ex.a, value: 2, section: s}\n"
    )
    assert err.line == 5 and "duplicate id 'ex.a'" in str(err)
    assert "numbers" in str(_refused(tmp_path, "source: x\n"))
    assert "expected a mapping" in str(_refused(tmp_path, "- just a list\n"))
    assert _refused(tmp_path, GOOD + "bound: {}\n").json_path == "bound"


def test_the_audit_and_the_cross_study_read_through_it(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD)
    assert audit.load_published(path) == published.load(path).numbers
    study = crossstudy.load_study(path)
    assert study.numbers == published.load(path).numbers
    assert study.table("t").to_dict("records") == [{"size": 512, "iops": 62935.0}]
    assert study.cite() == "Example 2024" and study.case_text("row").note == "a note"
    assert path.resolve() in files_read()  # a recorded read: the batch knows the chapter depends on it
    bad = _write(tmp_path, GOOD.replace("decimals: 2", "decimals: 2, decimals: 3"))
    for load in (audit.load_published, crossstudy.load_study):
        with pytest.raises(IngestError, match=r"example\.yaml:5: duplicate key 'decimals'"):
            load(bad)


@pytest.mark.parametrize("path", sorted(PUBLISHED.glob("*.yaml")), ids=lambda p: p.name)
def test_every_published_file_loads(path: Path) -> None:
    pub = published.load(path)
    assert pub.numbers and pub.citation is not None
    assert all(n.section for n in pub.numbers.values())
