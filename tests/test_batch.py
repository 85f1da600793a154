"""Failure diagnosis of the batch runner: what decides a retry and what a failure report says."""

from __future__ import annotations

from pathlib import Path

import nbformat

from iscsi_report.pipeline.diagnose import error_from_notebook, kernel_failed_to_start


def test_kernel_start_failure_is_recognised(tmp_path: Path) -> None:
    log = tmp_path / "papermill.log"
    log.write_text("Traceback ...\nRuntimeError: Kernel died before replying to kernel_info\n")
    assert kernel_failed_to_start(log)


def test_cell_error_is_not_a_start_failure(tmp_path: Path) -> None:
    log = tmp_path / "papermill.log"
    log.write_text("papermill.exceptions.PapermillExecutionError: ZeroDivisionError: division by zero\n")
    assert not kernel_failed_to_start(log)
    assert not kernel_failed_to_start(tmp_path / "absent.log")


def test_error_from_notebook_names_cell_and_exception(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    bad = nbformat.v4.new_code_cell("x = 1 / 0")
    bad.outputs = [
        nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero", traceback=[])
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), bad]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    assert error_from_notebook(path) == "cell 1 [x = 1 / 0]: ZeroDivisionError: division by zero"
