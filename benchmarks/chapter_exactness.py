"""Issue 28: a chapter's results, fingerprinted, to show a speed-up leaves every glued value and table alone.

``run`` executes one chapter of one params file in this process (its code cells, with the job's
parameters as the batch would inject them, tables written to a scratch folder) and writes a JSON
fingerprint: every glued value (floats by ``repr``, frames by their CSV text's sha256), every CSV
written, and the chapter's CPU and wall seconds. ``compare`` says whether two fingerprints are
identical. Run from the project root, e.g. once with and once without an environment change:
    PYTHONPATH=src .venv/bin/python benchmarks/chapter_exactness.py run lab-iscsi-2026 lab_tails OUT.json
    PYTHONPATH=src .venv/bin/python benchmarks/chapter_exactness.py compare A.json B.json
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from iscsi_report.core.paths import Project
from iscsi_report.pipeline import batch
from iscsi_report.pipeline.params import NotebookJob, read_notebook

ROOT = Path(__file__).resolve().parents[1]


def fingerprint(value: Any) -> str:
    """A glued value as text that two identical values share: repr, or a frame's CSV sha256."""
    if isinstance(value, pd.DataFrame | pd.Series):
        return "frame:" + hashlib.sha256(value.to_csv().encode()).hexdigest()
    if isinstance(value, str | int | float | bool | list | tuple | dict) or value is None:
        return repr(value)
    if hasattr(value, "to_json"):  # an altair chart: its spec, data included
        return "json:" + hashlib.sha256(value.to_json().encode()).hexdigest()
    return type(value).__name__


def find_job(run: str, notebook: str) -> NotebookJob:
    """The batch's job for ``notebook`` of params file ``run``."""
    for job in batch.plan(Project.at(ROOT), [run]):
        if job.notebook == notebook:
            return job
    raise SystemExit(f"no chapter {notebook} in params/{run}.yaml")


def execute(job: NotebookJob, results_dir: Path) -> dict[str, str]:
    """Run the chapter's code cells here, parameters injected after its parameters cell; the glued values."""
    import IPython.display
    import myst_nb

    glued: dict[str, str] = {}

    def record(name: str, value: Any, display: bool = True) -> None:
        glued[name] = fingerprint(value.item() if hasattr(value, "item") and callable(value.item) else value)

    def show(*objs: Any, **_: Any) -> None:
        for obj in objs:
            shown = getattr(obj, "data", obj)  # Markdown and HTML: their text
            glued[f"displayed {len(glued)}"] = fingerprint(shown)

    myst_nb.glue = record  # report.glue imports it at call time
    IPython.display.display = show  # before the chapter imports it
    params = {**job.parameters, "results_dir": str(results_dir)}
    scope: dict[str, Any] = {"__name__": "__main__"}
    for cell in read_notebook(job.source).cells:
        if cell.cell_type != "code":
            continue
        code = "\n".join(ln for ln in cell.source.splitlines() if not ln.lstrip().startswith(("%", "!")))
        exec(compile(code, f"{job.notebook}-cell", "exec"), scope)
        if "parameters" in cell.metadata.get("tags", []):
            scope.update(params)
    return glued


def run(run_name: str, notebook: str, out: Path) -> None:
    """Execute one chapter and write its fingerprint with its CPU and wall seconds."""
    job = find_job(run_name, notebook)
    with tempfile.TemporaryDirectory(prefix="chapter-exactness-") as scratch:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        glued = execute(job, Path(scratch))
        cpu_s, wall_s = time.process_time() - cpu0, time.perf_counter() - wall0
        tables = {
            p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(scratch).rglob("*.csv"))
        }
    result = {
        "chapter": f"{run_name}/{notebook}",
        "cpu_s": cpu_s,
        "wall_s": wall_s,
        "glued": glued,
        "tables": tables,
    }
    out.write_text(json.dumps(result, indent=1, sort_keys=True))
    print(
        f"{run_name}/{notebook}: cpu {cpu_s:.1f} s, wall {wall_s:.1f} s, "
        f"{len(glued)} glued, {len(tables)} tables"
    )


def compare(a_path: Path, b_path: Path) -> int:
    """0 if both fingerprints hold the same glued values and tables, else 1 (the differences printed)."""
    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    diffs = [
        f"{kind} {key}: {a[kind].get(key)} != {b[kind].get(key)}"
        for kind in ("glued", "tables")
        for key in sorted(set(a[kind]) | set(b[kind]))
        if a[kind].get(key) != b[kind].get(key)
    ]
    print(
        f"{a['chapter']}: cpu {a['cpu_s']:.1f} -> {b['cpu_s']:.1f} s, "
        f"wall {a['wall_s']:.1f} -> {b['wall_s']:.1f} s, "
        f"{len(a['glued'])} glued, {len(a['tables'])} tables, "
        + ("IDENTICAL" if not diffs else f"{len(diffs)} DIFFER")
    )
    for line in diffs:
        print("  " + line)
    return 1 if diffs else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"] and len(sys.argv) == 5:
        run(sys.argv[2], sys.argv[3], Path(sys.argv[4]))
    elif sys.argv[1:2] == ["compare"] and len(sys.argv) == 4:
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.exit(__doc__)
