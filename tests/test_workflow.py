"""The GitHub workflow runs the same gates as `make lint` before the tests, read from its YAML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"


def _build_steps() -> list[dict[str, Any]]:
    """The build job's steps."""
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps: list[dict[str, Any]] = doc["jobs"]["build"]["steps"]
    return steps


def test_workflow_runs_make_lint_before_the_tests() -> None:
    """A step runs exactly `make lint`, after the checkout and before `make test`."""
    runs = [str(step.get("run", "")).strip() for step in _build_steps()]
    uses = [str(step.get("uses", "")) for step in _build_steps()]
    assert "make lint" in runs
    checkout = next(i for i, u in enumerate(uses) if u.startswith("actions/checkout@"))
    assert checkout < runs.index("make lint") < runs.index("make test")


def test_make_lint_runs_every_gate() -> None:
    """The Makefile's lint target runs ruff check, ruff format --check, mypy and lint-imports."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = text[text.index("\nlint:") :].split("\n\n", 1)[0]
    for gate in ("ruff check", "ruff format --check", "mypy", "lint-imports"):
        assert gate in recipe, gate


def test_make_release_builds_the_book_then_the_release() -> None:
    """`make release VERSION=x [RUN=name]` runs the book (that run only), then `release build`."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = text[text.index("\nrelease:") :].split("\n\n", 1)[0]
    book = recipe.index("iscsi-report book $(RUN)")
    assert book < recipe.index('iscsi-report release build --version "$(VERSION)" $(if $(RUN),--run $(RUN))')
    assert 'test -n "$(VERSION)"' in recipe  # no version, no release
