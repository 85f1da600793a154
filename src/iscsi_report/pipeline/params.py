"""Params files (``params/<run>.yaml``) and notebook parameter cells, validated before any run.

A params file names a dataset and the notebooks to execute over it, with per-notebook parameter
overrides. Every override must exist in the notebook's single ``parameters`` cell and have the
type of its default: papermill only warns about unknown parameters; we refuse them.
"""

from __future__ import annotations

import ast
import copy
import functools
import math
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from iscsi_report.core import keep, yamlio
from iscsi_report.core.digest import sha256_bytes
from iscsi_report.core.errors import IngestError, ParamsError, ReportError
from iscsi_report.core.paths import Project

if TYPE_CHECKING:
    import nbformat

DEFAULT_TIMEOUT_S = 900
TOP_LEVEL_KEYS = {"title", "short_title", "description", "dataset", "timeout_s", "notebooks", "enabled"}
# Injected by the runner into every notebook; each parameters cell must declare them.
INJECTED = ("run_name", "dataset", "project_root", "results_dir")
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"  # a dataset or notebook name: never a path
# Overrides whose meaning bounds them: (low, high), both excluded.
OPEN_BOUNDS: dict[str, tuple[float, float]] = {"ci_level": (0.0, 1.0)}
MAX_DRAWS = 1_000_000  # Monte Carlo draws: 100 times the chapters' 10,000, still seconds of work
SEED_MAX = 2**32 - 1  # the widest seed every numpy generator takes
MAX_CPU_CORES = 4_096  # cores sharing a target's iSCSI work: the `project` command's bound
# Integer overrides with a closed range: (lowest, highest) allowed (0 cores would make CPU free).
CLOSED_INT_BOUNDS: dict[str, tuple[int, int]] = {
    "n_draws": (1, MAX_DRAWS),
    "seed": (0, SEED_MAX),
    "cpu_cores": (1, MAX_CPU_CORES),
}
# Overrides naming a file of data/published or a dataset of data/raw: a name, never a path, so no
# chapter reads outside those folders. Kept by hand; tests/test_parameter_docs.py fails when a
# chapter parameter whose default names a dataset is missing here.
NAME_PARAMETERS = frozenset(
    {
        "published",
        "datasets",
        "judged",
        "other_sweeps",
        "blind_sweep",
        "second_blind_sweep",
        "third_blind_sweep",
        "fourth_blind_sweep",
        "fifth_blind_sweep",
        "sixth_blind_sweep",
        "seventh_blind_sweep",
        "segments_sweep",
        "second_segments_sweep",
        "third_segments_sweep",
        "reads_sweeps",
        "device_sweep",
        "jitter_sweep",
        "second_jitter_sweep",
        "third_jitter_sweep",
        "fourth_jitter_sweep",
        "fifth_jitter_sweep",
        "confirmation_datasets",
        "second_datasets",
    }
)
INT64_MAX = 2**63 - 1  # no parameter counts beyond a 64-bit integer
NOTES_FILE = "notes.yaml"  # a dataset's reader notes, loaded by the chapters
# What each top-level key must hold, in the words of the error message.
EXPECTED = {
    "title": "a string",
    "short_title": "a string (the run's name in chapter titles)",
    "enabled": "true or false (false: left out of a build over all params files)",
    "description": "a string",
    "dataset": "a dataset name (letters, digits, '.', '_', '-'; or null: published numbers only)",
    "timeout_s": "a positive integer of seconds",
    "notebooks": "a non-empty list",
}


class ParamsSchema(BaseModel):
    """The top level of a params file; notebook overrides are checked against the notebooks."""

    model_config = ConfigDict(extra="forbid", strict=True)

    title: StrictStr
    short_title: StrictStr | None = None
    enabled: StrictBool = True
    description: StrictStr | None = None
    dataset: Annotated[StrictStr, Field(pattern=NAME_PATTERN, max_length=200)] | None = None
    timeout_s: Annotated[StrictInt, Field(gt=0)] = DEFAULT_TIMEOUT_S
    notebooks: Annotated[list[Any], Field(min_length=1)]


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
    short_title: str = ""
    enabled: bool = True


def read_notebook(path: Path) -> nbformat.NotebookNode:
    """A chapter source (MyST markdown text notebook, or .ipynb) as an nbformat notebook."""
    import jupytext  # here, not at the top: planning finds parameter cells kept, without jupytext

    try:
        notebook: nbformat.NotebookNode = jupytext.read(path)
        return notebook
    except (OSError, ValueError) as exc:
        raise ParamsError(f"{path}: cannot read notebook: {exc}") from exc


# Parameter cells already read in this process, by notebook path and the sha256 of its bytes: a
# `book` validates every run's jobs six times (batch, toc, provenance pages), and reading a MyST
# notebook through jupytext is most of that (issue 28). Keyed by content, never stale.
_PARAMETER_CELLS: dict[tuple[str, str], dict[str, Any]] = {}


def parameters_cell(path: Path) -> dict[str, Any]:
    """Defaults declared in the notebook's one cell tagged ``parameters`` (name -> literal value).

    Read once per process for the same bytes (a fresh copy each call: callers may change it), and
    kept across processes in the parse cache when one is set (:mod:`iscsi_report.core.keep`), so a
    process that finds every cell kept never imports jupytext (about 0.3 s of each `run` and `book`).
    """
    try:
        key = (str(path), sha256_bytes(path.read_bytes()))
    except OSError:
        return _read_parameters_cell(path)  # unreadable: the read below names the file
    if key not in _PARAMETER_CELLS:
        stored = keep.path_for("parameters-cell", _cell_code(), key[1])
        read = functools.partial(_read_parameters_cell, path)
        _PARAMETER_CELLS[key] = keep.once(stored, read, lambda kept: isinstance(kept, dict))
    return copy.deepcopy(_PARAMETER_CELLS[key])


@functools.cache
def _cell_code() -> str:
    """Digest of what reads a parameter cell: this module's source and the jupytext release."""
    from importlib import metadata

    return sha256_bytes(Path(__file__).read_bytes() + metadata.version("jupytext").encode())[:16]


def _read_parameters_cell(path: Path) -> dict[str, Any]:
    """:func:`parameters_cell` from the notebook itself: read, find the one cell, evaluate its literals."""
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


def _schema_message(exc: ValidationError) -> str:
    """The first schema violation of a params file's top level, naming the key."""
    err = exc.errors(include_url=False)[0]
    key = str(err["loc"][0]) if err["loc"] else ""
    if err["type"] == "extra_forbidden":
        return f"unknown key {key!r} (allowed: {sorted(TOP_LEVEL_KEYS)})"
    if err["type"] == "missing":
        return f"missing key {key!r}"
    return f"key {key!r}: expected {EXPECTED.get(key, err['msg'])}, got {err.get('input')!r}"


def load_run(path: Path) -> RunSpec:
    """Parse (strict YAML) and validate the top level of one params file against its schema."""
    try:
        doc = yamlio.load_file(path)
    except IngestError as exc:
        raise ParamsError(str(exc)) from exc  # names the file, the line and what is wrong
    if not isinstance(doc.data, dict):
        raise ParamsError(f"{path}: expected a mapping at the top level")
    try:
        spec = ParamsSchema.model_validate(doc.data)
    except ValidationError as exc:
        line = doc.line_of(tuple(exc.errors()[0]["loc"][:1]))
        where = f"{path}:{line}" if line is not None else str(path)
        raise ParamsError(f"{where}: {_schema_message(exc)}") from exc
    return RunSpec(
        name=path.stem,
        path=path,
        title=spec.title,
        dataset=spec.dataset or "",
        timeout_s=spec.timeout_s,
        notebooks=_notebook_overrides(path, spec.notebooks),
        short_title=spec.short_title or spec.title,
        enabled=spec.enabled,
    )


def _notebook_overrides(path: Path, entries: Any) -> dict[str, dict[str, Any]]:
    """``notebooks:`` as a list of names or one-key mappings ``{name: {param: value}}``."""
    if not isinstance(entries, list) or not entries:
        raise ParamsError(f"{path}: key 'notebooks': expected a non-empty list")
    out: dict[str, dict[str, Any]] = {}
    overrides: object  # one entry's parameters as written in YAML; checked below
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            name, overrides = entry, {}
        elif isinstance(entry, dict) and len(entry) == 1:
            name, overrides = next(iter(entry.items()))
            overrides = overrides or {}
        else:
            raise ParamsError(f"{path}: notebooks[{i}]: expected a name or {{name: {{param: value}}}}")
        if not isinstance(name, str) or not re.match(NAME_PATTERN, name):
            raise ParamsError(f"{path}: notebooks[{i}]: expected a notebook name, got {name!r}")
        if not isinstance(overrides, dict):
            raise ParamsError(f"{path}: notebooks[{i}] ({name}): expected a mapping of parameters")
        bad = [k for k in overrides if not isinstance(k, str)]
        if bad:
            raise ParamsError(f"{path}: notebooks[{i}] ({name}): parameter names are strings, got {bad[0]!r}")
        if name in out:
            raise ParamsError(f"{path}: notebooks[{i}]: notebook {name!r} listed twice")
        out[str(name)] = overrides
    return out


def _check_value(path: Path, where: str, key: str, value: Any, default: Any = None) -> None:
    """Numbers finite and within 64 bits; bounded parameters (a confidence level, a draw count, a
    seed) inside their bounds; a list as non-empty as its default, each item checked the same."""
    if isinstance(value, list):
        _check_list(path, where, key, value, default)
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise ParamsError(f"{path}: {where}: expected a finite number, got {value!r}")
    if key in NAME_PARAMETERS and isinstance(value, str) and not re.fullmatch(NAME_PATTERN, value):
        raise ParamsError(
            f"{path}: {where}: expected a file or dataset name (letters, digits, '.', '_', '-'; "
            f"never a path), got {value!r}"
        )
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > INT64_MAX:
        raise ParamsError(
            f"{path}: {where}: expected an integer within 64 bits, got {len(str(value))} digits"
        )
    if key in OPEN_BOUNDS and isinstance(value, int | float) and not isinstance(value, bool):
        low, high = OPEN_BOUNDS[key]
        if not low < value < high:
            raise ParamsError(
                f"{path}: {where}: expected a number strictly between {low:g} and {high:g}, got {value!r}"
            )
    if key in CLOSED_INT_BOUNDS and isinstance(value, int) and not isinstance(value, bool):
        lowest, highest = CLOSED_INT_BOUNDS[key]
        if not lowest <= value <= highest:
            raise ParamsError(
                f"{path}: {where}: expected an integer from {lowest} to {highest}, got {value!r}"
            )


def _check_list(path: Path, where: str, key: str, value: list[Any], default: Any) -> None:
    """A list override: non-empty when its default is, items of the default items' type, each
    item checked as a value."""
    if isinstance(default, list) and default and not value:
        raise ParamsError(
            f"{path}: {where}: expected a non-empty list (the default has {len(default)} items)"
        )
    sample = default[0] if isinstance(default, list) and default else None
    for i, item in enumerate(value):
        if sample is not None and not _type_ok(sample, item):
            raise ParamsError(
                f"{path}: {where}[{i}]: expected {type(sample).__name__}, got {type(item).__name__} {item!r}"
            )
        _check_value(path, f"{where}[{i}]", key, item)


def _check_dataset(project: Project, spec: RunSpec, raw: Path) -> None:
    """The run's dataset loads (manifest, listed files readable, notes) before any notebook runs,
    so a bad manifest is one error naming its file, not a traceback inside a chapter. The parses
    are kept where the chapters' kernels look for them, so the check costs them nothing."""
    from iscsi_report.core import dataset

    try:
        with parse_cache(project):
            ds = dataset.load(raw)
            if (raw / NOTES_FILE).is_file():
                yamlio.load_file(raw / NOTES_FILE)
        for f in ds.files:
            _check_readable(f.path)
    except ReportError as exc:
        raise ParamsError(f"{spec.path}: key 'dataset': {exc}") from exc


@contextmanager
def parse_cache(project: Project) -> Iterator[None]:
    """Keep parses in the project's parse cache (as the batch's kernels do) for the duration."""
    from iscsi_report.core.keep import PARSE_CACHE_ENV

    if os.environ.get(PARSE_CACHE_ENV):
        yield
        return
    os.environ[PARSE_CACHE_ENV] = str(project.cache_dir / "parsed")
    try:
        yield
    finally:
        os.environ.pop(PARSE_CACHE_ENV, None)


def _check_readable(path: Path) -> None:
    """IngestError naming a listed file this process cannot open for reading."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as exc:
        raise IngestError(path, f"cannot read file: {exc.strerror or exc}") from exc


def jobs_for(project: Project, spec: RunSpec) -> list[NotebookJob]:
    """Validate a run's notebooks and overrides against the parameter cells; build its jobs."""
    raw = project.raw_dir / spec.dataset
    if spec.dataset and not (raw / "manifest.yaml").is_file():
        raise ParamsError(f"{spec.path}: key 'dataset': no manifest at {raw / 'manifest.yaml'}")
    if spec.dataset:
        _check_dataset(project, spec, raw)
    with parse_cache(project):  # parameter cells kept where the chapters' kernels keep parses
        return [_job(project, spec, name, overrides) for name, overrides in spec.notebooks.items()]


def _job(project: Project, spec: RunSpec, name: str, overrides: dict[str, Any]) -> NotebookJob:
    """One notebook's job, its overrides checked against its parameter cell."""
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
        _check_value(spec.path, f"notebooks.{name}.{key}", key, value, defaults[key])
    params = {
        **overrides,
        "run_name": spec.name,
        "dataset": spec.dataset,
        "project_root": str(project.root),
    }
    return NotebookJob(spec.name, name, source, params, spec.timeout_s)


def discover(project: Project, selected: list[str] | None = None) -> list[RunSpec]:
    """The params files to run: those named (paths or stems), else every enabled ``params/*.yaml``."""
    if selected:
        paths = [
            Path(s) if s.endswith((".yaml", ".yml")) else project.params_dir / f"{s}.yaml" for s in selected
        ]
    else:
        paths = sorted(project.params_dir.glob("*.yaml"))
        _refuse_yml(project)
    if not paths:
        raise ParamsError(f"{project.params_dir}: no params files")
    for p in paths:
        if not p.is_file():
            raise ParamsError(f"{p}: no such params file")
    specs = [load_run(p.resolve()) for p in paths]
    return specs if selected else [s for s in specs if s.enabled]


def _refuse_yml(project: Project) -> None:
    """A ``params/*.yml`` file would be skipped without a word (runs are ``*.yaml``): refused."""
    stray = sorted(project.params_dir.glob("*.yml"))
    if stray:
        raise ParamsError(
            f"{stray[0]}: params files end in .yaml, so this one would never run: rename it to "
            f"{stray[0].stem}.yaml (or move it out of {project.params_dir})"
        )
