"""Remove what no params file asks for any more: executed notebooks, their tables and run records."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import TextIO

from iscsi_report.core.paths import Project
from iscsi_report.pipeline.params import NotebookJob


def _own_tables(project: Project, run: str, record: Path) -> list[Path]:
    """The CSV tables a run record lists that are this run's own: ``results/<run>/*.csv``, no link.

    A record is only a cache: whatever else it lists (a path leaving the project, another run's
    table, a symbolic link to elsewhere) is never deleted.
    """
    try:
        outputs = json.loads(record.read_text(encoding="utf-8")).get("outputs", {})
    except (OSError, ValueError, AttributeError):
        return []
    own = (project.results_dir / run).resolve()
    tables = []
    for rel in outputs if isinstance(outputs, dict) else []:
        path = project.root / str(rel)
        if (
            path.suffix == ".csv"
            and not path.is_symlink()
            and path.resolve().parent == own
            and path.is_file()
        ):
            tables.append(path)
    return tables


def prune(project: Project, jobs: list[NotebookJob], stream: TextIO = sys.stdout) -> list[str]:
    """Remove what no params file asks for any more: executed notebooks, their tables and records.

    A deleted params file (or a notebook dropped from one) must not stay published. Returns the
    removed paths, relative to the project root.
    """
    current = {(j.run, j.notebook) for j in jobs}
    runs = {j.run for j in jobs}
    removed: list[Path] = []
    for nb in sorted(project.runs_dir.glob("*/*.ipynb")):
        run, notebook = nb.parent.name, nb.stem
        if (run, notebook) in current:
            continue
        record = project.cache_dir / "runs" / run / f"{notebook}.json"
        for table in _own_tables(project, run, record):
            table.unlink()
            removed.append(table)
        nb.unlink()
        record.unlink(missing_ok=True)
        removed.append(nb)
    for folder in (project.runs_dir, project.results_dir, project.cache_dir / "runs"):
        for d in sorted(folder.glob("*")) if folder.is_dir() else []:
            if d.is_dir() and d.name not in runs:
                removed.extend(sorted(p for p in d.rglob("*") if p.is_file()))
                shutil.rmtree(d)
    rels = sorted({project.relative(p) for p in removed})
    for rel in rels:
        print(f"removed {rel}: no params file asks for it", file=stream, flush=True)
    return rels
