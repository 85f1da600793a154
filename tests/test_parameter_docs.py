"""Every chapter parameter is described beside its default, and the reference page is made from that."""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat
import pytest

from iscsi_report.cli import main
from iscsi_report.pipeline import parameter_docs, params

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def _chapter(folder: Path, name: str, cell: str) -> Path:
    """A chapter whose parameters cell is ``cell`` (the injected four first)."""
    nb = nbformat.v4.new_notebook()
    injected = 'run_name = ""\ndataset = ""\nproject_root = ""\nresults_dir = ""\n'
    tagged = nbformat.v4.new_code_cell(injected + cell)
    tagged.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {name}"), tagged]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / f"{name}.md"
    jupytext.write(nb, path, fmt="md:myst")
    return path


def test_every_parameter_of_every_chapter_is_described() -> None:
    found = parameter_docs.all_parameters(NOTEBOOKS)
    chapters = {p.chapter for p in found}
    assert {"model", "upgrade", "network", "storage", "whatif"} <= chapters
    assert parameter_docs.undocumented(NOTEBOOKS) == []
    upgrade = {p.name: p for p in found if p.chapter == "upgrade"}
    assert "ping" in upgrade["ping_interval_s"].description and upgrade["ping_interval_s"].default == 0.002


def test_the_reference_page_is_the_one_the_notebooks_make() -> None:
    page = (ROOT / parameter_docs.PAGE).read_text(encoding="utf-8")
    assert page == parameter_docs.reference_page(NOTEBOOKS), (
        "run: iscsi-report parameters --write book/parameters.md"
    )
    for p in parameter_docs.all_parameters(NOTEBOOKS):
        assert f"| `{p.name}` |" in page, f"{p.chapter}.{p.name} missing from the page"
    assert "- file: parameters" in (ROOT / "book" / "_toc.base.yml").read_text(encoding="utf-8")


def test_a_parameter_without_a_comment_is_reported(tmp_path: Path) -> None:
    _chapter(tmp_path, "good", "bs_bytes = 4096  # block size, in bytes\n")
    _chapter(tmp_path, "bad", "seed = 1\n")
    assert parameter_docs.undocumented(tmp_path) == ["bad.seed"]


def test_a_comment_above_or_beside_a_multiline_value_describes_it(tmp_path: Path) -> None:
    cell = (
        "# one-way delays of the grid,\n"
        "# in ms\n"
        "one_way_ms = [\n    0.1,\n    1.0,  # the blog's Wi-Fi\n]\n"
        "ci_level = 0.95  # confidence level\n"
        "quiet = True\n"
    )
    found = {p.name: p for p in parameter_docs.chapter_parameters(_chapter(tmp_path, "c", cell))}
    assert found["one_way_ms"].description == "the blog's Wi-Fi"
    assert found["one_way_ms"].default == [0.1, 1.0]
    assert found["ci_level"].description == "confidence level"
    assert found["quiet"].description == ""
    cell_above = "# one-way delays of the grid,\n# in ms\none_way_ms = [0.1, 1.0]\n"
    (above,) = [
        p
        for p in parameter_docs.chapter_parameters(_chapter(tmp_path, "d", cell_above))
        if p.name == "one_way_ms"
    ]
    assert above.description == "one-way delays of the grid, in ms"


def test_the_injected_parameters_are_described_once() -> None:
    assert set(parameter_docs.INJECTED_DESCRIPTIONS) == set(params.INJECTED)
    found = parameter_docs.all_parameters(NOTEBOOKS)
    assert {p.description for p in found if p.name == "run_name"} == {
        parameter_docs.INJECTED_DESCRIPTIONS["run_name"]
    }


def test_the_command_prints_and_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(ROOT), "parameters"]) == 0
    assert capsys.readouterr().out == parameter_docs.reference_page(NOTEBOOKS)
    out = tmp_path / "parameters.md"
    assert main(["--root", str(ROOT), "parameters", "--write", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == parameter_docs.reference_page(NOTEBOOKS)


def _names_a_dataset(default: object) -> bool:
    """True when ``default`` is a folder of data/raw or a file of data/published (or a list of them)."""
    values = default if isinstance(default, list | tuple) else [default]
    known = {p.name for p in (ROOT / "data" / "raw").iterdir() if p.is_dir()}
    known |= {n for p in (ROOT / "data" / "published").iterdir() for n in (p.name, p.stem)}
    return bool(values) and all(isinstance(v, str) and v in known for v in values)


def test_every_chapter_parameter_naming_a_dataset_is_checked_as_a_name() -> None:
    """A forgotten entry of ``params.NAME_PARAMETERS`` would let an override read outside the data folders."""
    injected = {"run_name", "dataset", "project_root", "results_dir"}  # the pipeline's own, checked apart
    naming = {
        p.name
        for p in parameter_docs.all_parameters(NOTEBOOKS)
        if p.name not in injected and _names_a_dataset(p.default)
    }
    assert {"jitter_sweep", "blind_sweep"} <= naming, "the check finds the parameters it is about"
    assert naming - params.NAME_PARAMETERS == set()
