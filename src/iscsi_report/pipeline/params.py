"""Params files (``params/<run>.yaml``) and notebook parameter cells, validated before any run.

A params file names a dataset and the notebooks to execute over it, with per-notebook parameter
overrides. Every override must exist in the notebook's single ``parameters`` cell and have the
type of its default: papermill only warns about unknown parameters; we refuse them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import yaml

from iscsi_report.core.errors import ParamsError
from iscsi_report.pipeline.paths import Project

DEFAULT_TIMEOUT_S = 900
TOP_LEVEL_KEYS = {"title", "description", "dataset", "timeout_s", "notebooks"}
# Injected by the runner into every notebook; each parameters cell must declare them.
INJECTED = ("run_name", "dataset", "project_root", "results_dir")


@dataclass(frozen=True)
class NotebookJob:
    """One notebook to execute for one run, with its full, validated parameters."""

    run: str
    notebook: str
    source: Path
    parameters: dict[str, Any]
    timeout_s: int


@dataclass(frozen=True)
class RunSpec:
    """A parsed params file."""

    name: str
    path: Path
    title: str
    dataset: str
    timeout_s: int
    notebooks: dict[str, dict[str, Any]] = field(default_factory=dict)


def read_notebook(path: Path) -> nbformat.NotebookNode:
    """A chapter source (MyST markdown text notebook, or .ipynb) as an nbformat notebook."""
    try:
        return jupytext.read(path)
    except (OSError, ValueError) as exc:
        raise ParamsError(f"{path}: cannot read notebook: {exc}") from exc


def parameters_cell(path: Path) -> dict[str, Any]:
    """Defaults declared in the notebook's one cell tagged ``parameters`` (name -> literal value)."""
    nb = read_notebook(path)
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(tagged) != 1:
        raise ParamsError(f"{path}: expected exactly one cell tagged 'parameters', found {len(tagged)}")
    try:
        tree = ast.parse(tagged[0].source)
    except SyntaxError as exc:
        raise ParamsError(f"{path}: parameters cell is not valid Python: {exc}") from exc
    defaults: dict[str, Any] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            raise ParamsError(f"{path}: parameters cell line {node.lineno}: expected `name = literal`")
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            raise ParamsError(f"{path}: parameters cell line {node.lineno}: expected a plain name")
        try:
            defaults[target.id] = ast.literal_eval(node.value)
        except ValueError as exc:
            raise ParamsError(
                f"{path}: parameters cell line {node.lineno}: {target.id} is not a literal"
            ) from exc
    missing = [name for name in INJECTED if name not in defaults]
    if missing:
        raise ParamsError(f"{path}: parameters cell must declare {', '.join(missing)}")
    return defaults


def _type_ok(default: Any, value: Any) -> bool:
    """True if ``value`` may replace ``default`` (ints accepted for floats; None default: any)."""
    if default is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, int | float)
    return isinstance(value, type(default))


def load_run(path: Path) -> RunSpec:
    """Parse and structurally validate one params file."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ParamsError(f"{path}: cannot read params: {exc}") from exc
    if not isinstance(doc, dict):
        raise ParamsError(f"{path}: expected a mapping at the top level")
    unknown = sorted(set(doc) - TOP_LEVEL_KEYS)
    if unknown:
        raise ParamsError(f"{path}: unknown key {unknown[0]!r} (allowed: {sorted(TOP_LEVEL_KEYS)})")
    for key in ("title", "notebooks"):
        if key not in doc:
            raise ParamsError(f"{path}: missing key {key!r}")
    if not isinstance(doc.get("dataset", ""), str | None):
        raise ParamsError(f"{path}: key 'dataset': expected a string (or null: published numbers only)")
    timeout = doc.get("timeout_s", DEFAULT_TIMEOUT_S)
    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0:
        raise ParamsError(f"{path}: key 'timeout_s': expected a positive integer of seconds")
    return RunSpec(
        name=path.stem,
        path=path,
        title=str(doc["title"]),
        dataset=doc.get("dataset") or "",
        timeout_s=timeout,
        notebooks=_notebook_overrides(path, doc["notebooks"]),
    )


def _notebook_overrides(path: Path, entries: Any) -> dict[str, dict[str, Any]]:
    """``notebooks:`` as a list of names or one-key mappings ``{name: {param: value}}``."""
    if not isinstance(entries, list) or not entries:
        raise ParamsError(f"{path}: key 'notebooks': expected a non-empty list")
    out: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            name, overrides = entry, {}
        elif isinstance(entry, dict) and len(entry) == 1:
            name, overrides = next(iter(entry.items()))
            overrides = overrides or {}
        else:
            raise ParamsError(f"{path}: notebooks[{i}]: expected a name or {{name: {{param: value}}}}")
        if not isinstance(overrides, dict):
            raise ParamsError(f"{path}: notebooks[{i}] ({name}): expected a mapping of parameters")
        if name in out:
            raise ParamsError(f"{path}: notebooks[{i}]: notebook {name!r} listed twice")
        out[str(name)] = overrides
    return out


def jobs_for(project: Project, spec: RunSpec) -> list[NotebookJob]:
    """Validate a run's notebooks and overrides against the parameter cells; build its jobs."""
    raw = project.raw_dir / spec.dataset
    if spec.dataset and not (raw / "manifest.yaml").is_file():
        raise ParamsError(f"{spec.path}: key 'dataset': no manifest at {raw / 'manifest.yaml'}")
    jobs = []
    for name, overrides in spec.notebooks.items():
        source = project.notebook(name)
        if not source.is_file():
            raise ParamsError(f"{spec.path}: notebooks: {name!r}: no notebook {source}")
        defaults = parameters_cell(source)
        for key, value in overrides.items():
            if key in INJECTED:
                raise ParamsError(f"{spec.path}: notebooks.{name}.{key}: set by the runner, not here")
            if key not in defaults:
                raise ParamsError(
                    f"{spec.path}: notebooks.{name}.{key}: unknown parameter "
                    f"(the notebook declares: {', '.join(sorted(defaults))})"
                )
            if not _type_ok(defaults[key], value):
                raise ParamsError(
                    f"{spec.path}: notebooks.{name}.{key}: expected "
                    f"{type(defaults[key]).__name__}, got {type(value).__name__} {value!r}"
                )
        params = {
            **overrides,
            "run_name": spec.name,
            "dataset": spec.dataset,
            "project_root": str(project.root),
        }
        jobs.append(NotebookJob(spec.name, name, source, params, spec.timeout_s))
    return jobs


def discover(project: Project, selected: list[str] | None = None) -> list[RunSpec]:
    """The params files to run: those named (paths or stems), else every ``params/*.yaml``."""
    if selected:
        paths = [
            Path(s) if s.endswith((".yaml", ".yml")) else project.params_dir / f"{s}.yaml" for s in selected
        ]
    else:
        paths = sorted(project.params_dir.glob("*.yaml"))
    if not paths:
        raise ParamsError(f"{project.params_dir}: no params files")
    for p in paths:
        if not p.is_file():
            raise ParamsError(f"{p}: no such params file")
    return [load_run(p.resolve()) for p in paths]
