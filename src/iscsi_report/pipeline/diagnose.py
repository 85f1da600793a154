"""Why a papermill run failed, in one line: the failing cell and its error, a timeout, a dead kernel.

Also whether the kernel merely failed to start (the only failure the runner retries).
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from iscsi_report.pipeline.params import NotebookJob

# Parallel kernels started at the same instant can race for ports and die before replying;
# only such start-up failures are retried (a failing cell never is).
KERNEL_START_FAILURES = ("Kernel died before replying to kernel_info", "Kernel didn't respond in")
# Cells papermill adds (the parameters it injects, the red banners it puts around a failed cell).
PAPERMILL_CELL_TAGS = {"injected-parameters", "papermill-error-cell-tag"}


def kernel_failed_to_start(log: Path) -> bool:
    """True if papermill failed before any cell ran because the kernel did not come up."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return False
    return any(marker in text for marker in KERNEL_START_FAILURES)


def _cell_label(nb: nbformat.NotebookNode, index: int) -> str:
    """'cell N [first line]', N the 0-based index in the source notebook (papermill's cells skipped)."""
    number = sum(
        not set(c.get("metadata", {}).get("tags", [])) & PAPERMILL_CELL_TAGS for c in nb.cells[:index]
    )
    first = nb.cells[index].source.strip().splitlines()[:1]
    return f"cell {number}" + (f" [{first[0][:60]}]" if first else "")


def _failed_cell(path: Path) -> tuple[str, str]:
    """(label, 'Ename: message') of the cell that failed, else of the last cell that started.

    A timeout shows as an error output (the kernel is interrupted); a killed kernel leaves no
    error output, so the cell running at the time is the last one papermill started.
    """
    try:
        nb = nbformat.read(path, as_version=4)
    except (OSError, ValueError):
        return "", ""
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return _cell_label(nb, index), f"{out.get('ename')}: {out.get('evalue')}"
    started = [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and c.get("metadata", {}).get("papermill", {}).get("start_time")
    ]
    return (_cell_label(nb, started[-1]), "") if started else ("", "")


def error_from_notebook(path: Path) -> str:
    """The failing cell's error as 'cell N [first line]: Ename: message' ('' if none)."""
    label, error = _failed_cell(path)
    return f"{label}: {error}" if error else ""


def failure_detail(job: NotebookJob, out_nb: Path, log: Path, rc: int) -> str:
    """One line saying which cell failed and how: its error, the execution timeout or a dead kernel."""
    try:
        log_text = log.read_text(errors="replace")
    except OSError:
        log_text = ""
    label, error = _failed_cell(out_nb) if out_nb.exists() else ("", "")
    where = label or "a cell"
    if "CellTimeoutError" in log_text:
        return (
            f"{where}: timed out after {job.timeout_s} s (the execution timeout, `timeout_s` in "
            f"params/{job.run}.yaml); the cell was interrupted"
        )
    if "DeadKernelError" in log_text:
        return f"{where}: the kernel died while running it (killed, or out of memory)"
    if error:
        return f"{where}: {error}"
    return _error_from_log(log) or f"papermill exited with status {rc}"


def _error_from_log(log: Path) -> str:
    """Last meaningful line of papermill's log (timeouts and kernel deaths are reported there)."""
    try:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    for ln in reversed(lines):
        if "Error" in ln or "timed out" in ln or "died" in ln:
            return ln.strip()[:300]
    return lines[-1].strip()[:300] if lines else ""
