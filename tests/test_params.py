"""Params files are validated against the notebooks' parameter cells before anything runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import pytest
import yaml

from iscsi_report.core.errors import ParamsError
from iscsi_report.core.keep import PARSE_CACHE_ENV
from iscsi_report.core.paths import Project
from iscsi_report.pipeline.params import jobs_for, load_run, parameters_cell

PARAMS_CELL = 'run_name = ""\ndataset = ""\nproject_root = ""\nresults_dir = ""\nbins = 20\nscale = 1.5\n'


def _notebook(path: Path, source: str = PARAMS_CELL, tag: str = "parameters") -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = [tag]
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), cell]
    path.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(nb, path, fmt="md:myst")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    _notebook(tmp_path / "notebooks" / "chap.md")
    raw = tmp_path / "data" / "raw" / "ds"
    raw.mkdir(parents=True)
    (raw / "manifest.yaml").write_text("files: []\n")
    (tmp_path / "params").mkdir()
    return Project.at(tmp_path)


def _params(project: Project, doc: dict) -> Path:
    path = project.params_dir / "run.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_valid_params_make_jobs_with_injected_values(project: Project) -> None:
    doc = {"title": "t", "dataset": "ds", "notebooks": [{"chap": {"bins": 10, "scale": 2}}]}
    path = _params(project, doc)
    (job,) = jobs_for(project, load_run(path))
    assert job.parameters == {
        "bins": 10,
        "scale": 2,
        "run_name": "run",
        "dataset": "ds",
        "project_root": str(project.root),
    }


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"title": "t", "dataset": "ds", "notebooks": ["chap"], "colour": 1}, "unknown key 'colour'"),
        (
            {"title": "t", "dataset": "ds", "notebooks": [{"chap": {"nope": 1}}]},
            "notebooks.chap.nope: unknown parameter",
        ),
        (
            {"title": "t", "dataset": "ds", "notebooks": [{"chap": {"bins": "ten"}}]},
            "notebooks.chap.bins: expected int, got str",
        ),
        (
            {"title": "t", "dataset": "ds", "notebooks": [{"chap": {"bins": True}}]},
            "notebooks.chap.bins: expected int, got bool",
        ),
        ({"title": "t", "dataset": "ds", "notebooks": [{"chap": {"run_name": "x"}}]}, "set by the runner"),
        ({"title": "t", "dataset": "nowhere", "notebooks": ["chap"]}, "key 'dataset': no manifest"),
        ({"title": "t", "dataset": "ds", "notebooks": ["missing"]}, "'missing': no notebook"),
        ({"title": "t", "dataset": "ds", "notebooks": []}, "expected a non-empty list"),
        ({"title": "t", "dataset": "ds", "notebooks": ["chap"], "timeout_s": -1}, "positive integer"),
        ({"dataset": "ds", "notebooks": ["chap"]}, "missing key 'title'"),
    ],
)
def test_malformed_params_name_file_and_key(project: Project, doc: dict, message: str) -> None:
    path = _params(project, doc)
    with pytest.raises(ParamsError, match=str(path).replace(".", r"\.")) as err:
        jobs_for(project, load_run(path))
    assert message in str(err.value)


def test_int_accepted_for_float_default(project: Project) -> None:
    path = _params(project, {"title": "t", "dataset": "ds", "notebooks": [{"chap": {"scale": 3}}]})
    assert jobs_for(project, load_run(path))[0].parameters["scale"] == 3


@pytest.mark.parametrize(
    ("source", "tag", "message"),
    [
        (PARAMS_CELL, "other", "found 0"),
        ("run_name = ''\nx = f()\n", "parameters", "x is not a literal"),
        ("run_name = ''\n", "parameters", "must declare dataset, project_root, results_dir"),
        ("for i in []: pass\n", "parameters", "expected `name = literal`"),
    ],
)
def test_bad_parameter_cells_are_refused(tmp_path: Path, source: str, tag: str, message: str) -> None:
    path = tmp_path / "n.md"
    _notebook(path, source, tag)
    with pytest.raises(ParamsError, match=message):
        parameters_cell(path)


def test_parameter_cell_is_read_again_when_its_bytes_change(tmp_path: Path) -> None:
    """Parameter cells are remembered by content: an edit is read again, each caller gets a copy."""
    path = tmp_path / "n.md"
    _notebook(path)
    first = parameters_cell(path)
    assert first["bins"] == 20
    first["bins"] = 99  # a caller's change stays its own
    assert parameters_cell(path)["bins"] == 20
    _notebook(path, PARAMS_CELL.replace("bins = 20", "bins = 21"))
    assert parameters_cell(path)["bins"] == 21
    _notebook(path, PARAMS_CELL, tag="other")
    with pytest.raises(ParamsError, match="found 0"):
        parameters_cell(path)


def _fresh_process(probe: str, env: dict[str, str] | None = None) -> str:
    """What the code ``probe`` prints in a new interpreter (imports counted from nothing)."""
    return subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    ).stdout


def test_planning_the_batch_imports_no_pandas(project_root: Path) -> None:
    # a `run` whose chapters are all cached only plans: without pandas it takes about 0.6 s, not 1.2 s
    # (issue 28; the test suite alone starts some thirty such processes)
    probe = (
        "import sys\n"
        "from iscsi_report.core.paths import Project\n"
        "from iscsi_report.pipeline import batch\n"
        f"jobs = batch.plan(Project.at({str(project_root)!r}), None)\n"
        "print(len(jobs), 'pandas' in sys.modules)"
    )
    planned, pandas_loaded = _fresh_process(probe).split()
    assert int(planned) > 10 and pandas_loaded == "False"


def test_the_book_and_build_modules_load_no_pandas() -> None:
    # the provenance pages import the parsers (and with them pandas) only for a file whose tool is not
    # cached yet: a rebuild of an unchanged dataset loads none of them
    probe = "import sys\nimport iscsi_report.pipeline.book, iscsi_report.cli.build\n"
    probe += "print('pandas' in sys.modules)"
    assert _fresh_process(probe).strip() == "False"


def test_a_parameter_cell_kept_by_one_process_is_read_by_the_next_without_jupytext(tmp_path: Path) -> None:
    # the cell is kept by the notebook's bytes: the same bytes are not read again (jupytext is about
    # 0.3 s of each `run`), and an edited notebook is read afresh
    notebook = tmp_path / "chap.md"
    _notebook(notebook)
    probe = (
        "import json, sys\nfrom pathlib import Path\n"
        "from iscsi_report.pipeline.params import parameters_cell\n"
        f"cell = parameters_cell(Path({str(notebook)!r}))\n"
        "print(json.dumps([cell, 'jupytext' in sys.modules]))"
    )
    env = {**os.environ, PARSE_CACHE_ENV: str(tmp_path / "kept")}

    def read() -> list[Any]:
        seen: list[Any] = json.loads(_fresh_process(probe, env))
        return seen

    first, again = read(), read()
    assert first == [parameters_cell(notebook), True] and again == [first[0], False]
    _notebook(notebook, PARAMS_CELL.replace("bins = 20", "bins = 30"))
    edited = read()
    assert edited[0]["bins"] == 30 and edited[1] is True
