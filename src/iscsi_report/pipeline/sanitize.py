"""An executed notebook made publishable: reproducible bytes, no path of the building machine,
the runner's plumbing hidden from the page."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat

from iscsi_report.core.paths import Project

# Tags that keep the runner's plumbing off the published page. Other code cells get no tag: the site
# hides all code behind one "Show the code" switch per page (book/_static/code-toggle.js).
HIDDEN_CELL_TAGS = {"injected-parameters": "remove-cell", "parameters": "remove-cell"}
# Metadata of an execution, not of its result (times, durations, staging paths): never published,
# so that the same inputs publish the same bytes.
EXECUTION_METADATA = ("papermill", "execution")
# The runner's path parameters, rewritten in the published notebook so that it names no path of
# the building machine and runs again from where it sits in the book (book/runs/<run>/).
PATH_PARAMETERS = ("project_root", "results_dir")


def _portable_parameters(source: str, project_root: str) -> str:
    """The injected-parameters cell with the path parameters relative to the published notebook."""
    values = {"project_root": project_root, "results_dir": ""}
    lines = []
    for line in source.splitlines():
        name = line.split("=", 1)[0].strip()
        lines.append(f"{name} = {values[name]!r}" if name in PATH_PARAMETERS and "=" in line else line)
    return "\n".join(lines)


def machine_paths(project: Project) -> dict[str, str]:
    """Paths of the building machine -> what the published notebook shows instead (longest first)."""
    places = {
        str(project.root): "$PROJECT",
        sys.prefix: "$PYTHON",
        sys.base_prefix: "$PYTHON",
        str(Path.home()): "~",
    }
    return {k: places[k] for k in sorted(places, key=len, reverse=True) if len(k) > 1}


def _without_machine_paths(value: object, paths: dict[str, str]) -> object:
    """``value`` (a notebook's JSON) with every machine path in its strings replaced."""
    if isinstance(value, str):
        for path, shown in paths.items():
            value = value.replace(path, shown)
        return value
    if isinstance(value, list):
        return [_without_machine_paths(v, paths) for v in value]
    if isinstance(value, dict):
        return {k: _without_machine_paths(v, paths) for k, v in value.items()}
    return value


def publishable(src: Path, dest: Path, project: Project) -> bytes:
    """The executed notebook made reproducible and portable, plumbing hidden: the bytes ``dest`` gets.

    Execution metadata (timings, papermill's paths and environment) is dropped, cell ids are
    numbered instead of random, the path parameters become relative, and any other path of the
    building machine (in an output, say) is replaced by a placeholder (:func:`machine_paths`).
    """
    nb = nbformat.read(src, as_version=4)
    for key in EXECUTION_METADATA:
        nb.metadata.pop(key, None)
    root_from_page = Path(os.path.relpath(project.root, dest.parent)).as_posix()
    for index, cell in enumerate(nb.cells):
        cell.id = f"cell-{index}"  # not the random id the conversion gave it
        for key in EXECUTION_METADATA:
            cell.get("metadata", {}).pop(key, None)
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if "injected-parameters" in tags:
            cell.source = _portable_parameters(cell.source, root_from_page)
        for tag, hide in HIDDEN_CELL_TAGS.items():
            if tag in tags and hide not in tags:
                tags.append(hide)
    nb = nbformat.from_dict(_without_machine_paths(nb, machine_paths(project)))
    text: str = nbformat.writes(nb)
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")  # as nbformat.write
