"""Remove what no params file asks for any more: executed notebooks, their tables and run records."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import TextIO

from iscsi_report.core.paths import Project
from iscsi_report.pipeline.params import NotebookJob


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
        try:
            outputs = json.loads(record.read_text(encoding="utf-8")).get("outputs", {})
        except (OSError, ValueError, AttributeError):
            outputs = {}
        for rel in outputs:
            if rel.endswith(".csv") and (project.root / rel).is_file():
                (project.root / rel).unlink()
                removed.append(project.root / rel)
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
