"""The import contracts in pyproject.toml hold on the real tree, and they do catch a broken layer.

import-linter imports the root package to find its files, so each negative case runs it on a copy
of ``src/`` with one extra import, with ``PYTHONPATH`` pointing at the copy (it comes before the
editable install's path entry). The real tree passes, so a failure can only come from the copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
LAYERS = (
    "Layers: cli, then lab and pipeline (independent), then the page presentation, then chapter analyses, "
    "then the core library"
)
PIPELINE_NO_CHAPTER_CODE = (
    "The pipeline runs notebooks; it never imports the analyses or the presentation they call"
)
ANALYSES_RETURN_DATA = "The analyses return data; showing it is the presentation's"
CORE_NO_NOTEBOOKS = "The core library knows nothing of notebooks or the book"
CONTRACTS = (LAYERS, PIPELINE_NO_CHAPTER_CODE, ANALYSES_RETURN_DATA, CORE_NO_NOTEBOOKS)


def lint_imports(cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run ``lint-imports`` in ``cwd`` (its pyproject.toml); exit status and whitespace-normalised output."""
    result = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return result.returncode, " ".join((result.stdout + result.stderr).split())


def test_contracts_hold_on_the_real_tree() -> None:
    status, out = lint_imports(ROOT)
    assert status == 0, out
    for name in CONTRACTS:
        assert f"{name} KEPT" in out
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in out


@pytest.mark.parametrize(
    ("module", "imported", "broken"),
    [
        ("core/stats.py", "iscsi_report.pipeline.locking", {LAYERS}),
        ("analyses/network.py", "iscsi_report.pipeline.locking", {LAYERS}),
        ("pipeline/cache.py", "iscsi_report.analyses.network", {PIPELINE_NO_CHAPTER_CODE}),
        ("core/errors.py", "nbformat", {CORE_NO_NOTEBOOKS}),
        # The presentation sits between the pipeline and the analyses, and the analyses never show.
        ("pipeline/cache.py", "iscsi_report.presentation.report", {PIPELINE_NO_CHAPTER_CODE}),
        ("presentation/tables.py", "iscsi_report.pipeline.locking", {LAYERS}),
        ("analyses/storage.py", "iscsi_report.presentation.tables", {LAYERS, ANALYSES_RETURN_DATA}),
        ("analyses/network.py", "altair", {ANALYSES_RETURN_DATA}),
        ("analyses/about.py", "IPython", {ANALYSES_RETURN_DATA}),
        ("analyses/fleet.py", "myst_nb", {ANALYSES_RETURN_DATA}),
    ],
    ids=[
        "core-imports-pipeline",
        "analyses-imports-pipeline",
        "pipeline-imports-analyses",
        "core-nbformat",
        "pipeline-imports-presentation",
        "presentation-imports-pipeline",
        "analyses-imports-presentation",
        "analyses-altair",
        "analyses-ipython",
        "analyses-myst-nb",
    ],
)
def test_contracts_fail_when_a_layer_imports_upwards(
    tmp_path: Path, module: str, imported: str, broken: set[str]
) -> None:
    shutil.copytree(
        ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    where = subprocess.run(
        [sys.executable, "-c", "import iscsi_report; print(iscsi_report.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(tmp_path / "src")  # the copy is what gets analysed
    status, out = lint_imports(tmp_path, env)
    assert status == 0, out  # the unchanged copy passes
    source = tmp_path / "src" / "iscsi_report" / module
    source.write_text(source.read_text() + f"\nimport {imported}  # noqa: E402, F401\n")
    status, out = lint_imports(tmp_path, env)
    assert status != 0
    for name in CONTRACTS:
        assert f"{name} {'BROKEN' if name in broken else 'KEPT'}" in out  # only the contracts this breaks
    assert f"Contracts: {len(CONTRACTS) - len(broken)} kept, {len(broken)} broken." in out
    importer = "iscsi_report." + module.removesuffix(".py").replace("/", ".")
    assert f"{importer} -> {imported}" in out  # the offending import is named
