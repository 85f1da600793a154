"""Shared fixtures: project paths, the third-party corpus (skipped when ../shared is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = PROJECT_ROOT / "tests" / "fixtures"
CORPUS = PROJECT_ROOT.parent / "shared" / "corpus"


@pytest.fixture(scope="session")
def project_root() -> Path:
    """The repository root."""
    return PROJECT_ROOT


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """Real tool outputs captured on this project's machines, committed under tests/fixtures."""
    return FIXTURES


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """Third-party real outputs in ../shared/corpus; tests using it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent")
    return CORPUS
