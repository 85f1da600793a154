"""Unit constants have one home, core/units.py; the iSCSI header size one, core/model.py.

The sources under ``src/`` are parsed, not imported, so a module that re-adds ``BITS_PER_MBIT = 1e6``
fails here even if no test imports it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from iscsi_report.core import model, units

SRC = Path(__file__).resolve().parents[1] / "src" / "iscsi_report"
UNITS_FILE = SRC / "core" / "units.py"
MODEL_FILE = SRC / "core" / "model.py"
UNIT_NAMES = frozenset(n for n in vars(units) if n.isupper())
# Earlier spellings of a constant core/units defines: assigning one a literal defines the unit again.
OLD_SPELLINGS = frozenset(
    {"KIB", "MIB", "KIB_BYTES", "MBIT", "BITS_PER_MEGABIT", "PERCENT", "IOPS_PER_MILLION", "KB_PER_MB"}
)
# Definitions in parts of the tree other engineers are rewriting now (issue 26): delete an entry
# when its module imports core.units instead. Keyed by file name, so a move keeps the entry.
PENDING: frozenset[tuple[str, str]] = frozenset()


def _constant(node: ast.expr) -> bool:
    """Whether ``node`` is a number computed from literals only (``1e6``, ``2**20``, ``1024 * 1024``)."""
    literal = ast.Constant | ast.BinOp | ast.UnaryOp | ast.operator | ast.unaryop
    return all(isinstance(n, literal) for n in ast.walk(node))


def _assignments(tree: ast.AST) -> Iterator[tuple[str, ast.expr | None, int]]:
    """(name, value, line) of every assignment to a plain name, at any depth."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id, node.value, node.lineno
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node.value, node.lineno


def unit_redefinitions(text: str) -> list[tuple[int, str]]:
    """(line, name) where ``text`` defines a unit core/units defines, or gives an old spelling a literal."""
    return [
        (line, name)
        for name, value, line in _assignments(ast.parse(text))
        if name in UNIT_NAMES or (name in OLD_SPELLINGS and value is not None and _constant(value))
    ]


def bhs_definitions(text: str) -> list[tuple[int, str]]:
    """(line, name) where ``text`` assigns 48 to a name about the iSCSI basic header segment."""
    return [
        (line, name)
        for name, value, line in _assignments(ast.parse(text))
        if "BHS" in name and isinstance(value, ast.Constant) and value.value == 48
    ]


def _sources() -> list[Path]:
    """Every Python file of the package."""
    return sorted(SRC.rglob("*.py"))


def test_no_module_defines_a_unit_that_core_units_defines() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line}: {name}"
        for path in _sources()
        if path != UNITS_FILE
        for line, name in unit_redefinitions(path.read_text())
        if (path.name, name) not in PENDING
    ]
    assert found == [], "import these from iscsi_report.core.units instead:\n" + "\n".join(found)


def test_the_basic_header_segment_is_defined_once_in_core_model() -> None:
    found = [(path, name) for path in _sources() for _, name in bhs_definitions(path.read_text())]
    assert found == [(MODEL_FILE, "BHS_BYTES")]
    assert model.BHS_BYTES == 48


@pytest.mark.parametrize(
    "source",
    [
        "BITS_PER_MBIT = 1e6\n",
        "MS_PER_S: float = 1000.0\n",
        "def f():\n    NS_PER_MS = 1e6\n    return NS_PER_MS\n",
        "KIB = 1024\n",
        "MIB = 1024 * 1024\n",
        "PERCENT = 100.0\n",
    ],
)
def test_the_check_sees_a_unit_defined_again(source: str) -> None:
    assert len(unit_redefinitions(source)) == 1


@pytest.mark.parametrize(
    "source",
    [
        "from iscsi_report.core.units import BITS_PER_MBIT\n",
        "KIB = units.BYTES_PER_KIB  # an alias of the one definition\n",
        "LINK_MBPS = 1000.0\n",
        "x = BITS_PER_MBIT * 2\n",
    ],
)
def test_the_check_lets_imports_aliases_and_other_names_pass(source: str) -> None:
    assert unit_redefinitions(source) == []


def test_the_unit_constants_are_what_their_names_say() -> None:
    assert units.BYTES_PER_MIB == units.BYTES_PER_KIB * units.KIB_PER_MIB == 2**20
    assert units.BITS_PER_MBIT * 1000 == units.BITS_PER_GBIT == 1e9
    assert units.US_PER_S == units.MS_PER_S * 1000 and units.NS_PER_MS == 1e6
    assert units.BYTES_PER_MB == 1e6 and units.BYTES_PER_GB == 1e9 and units.BITS_PER_BYTE == 8
    assert units.S_PER_MIN == 60 and units.PERCENT_PER_FRACTION == 100
    assert model.KIB == units.BYTES_PER_KIB and model.MIB == units.BYTES_PER_MIB  # old names, cli/project.py
