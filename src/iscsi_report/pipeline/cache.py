"""Content-keyed run cache: skip a notebook run only when nothing it depends on has changed.

The key covers the notebook source, its parameters, the package code, and every raw file the
previous execution actually read (recorded through ``ingest.textio``), each by sha256. A record is
written only after a run's outputs are in place, so a killed run can never look finished.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iscsi_report.core.atomic import write_atomic
from iscsi_report.core.ingest.textio import sha256_file
from iscsi_report.core.paths import Project
from iscsi_report.pipeline.params import NotebookJob

RECORD_VERSION = 1
LISTING_PREFIX = "listing:"  # a listed folder's digest, told from a file's sha256
# Parameters that name places, not content: excluded from the key.
PLACE_PARAMETERS = ("project_root", "results_dir")


def static_key(job: NotebookJob, code: str) -> str:
    """Digest of what is known before running: notebook bytes, parameters, package code."""
    params = {k: v for k, v in job.parameters.items() if k not in PLACE_PARAMETERS}
    h = hashlib.sha256()
    h.update(job.source.read_bytes())
    h.update(json.dumps(params, sort_keys=True, default=str).encode())
    h.update(code.encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Record:
    """What a successful run depended on and produced (paths relative to the project root)."""

    key: str
    reads: dict[str, str]
    outputs: dict[str, str]
    seconds: float
    # Files the execution read more than once, with the count: a chapter should read each raw
    # file once (core.measurements); tests assert it from these records.
    reads_repeated: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": RECORD_VERSION,
            "key": self.key,
            "reads": self.reads,
            "outputs": self.outputs,
            "seconds": self.seconds,
            "reads_repeated": self.reads_repeated,
        }


def record_path(project: Project, job: NotebookJob) -> Path:
    return project.cache_dir / "runs" / job.run / f"{job.notebook}.json"


def load_record(project: Project, job: NotebookJob) -> Record | None:
    """The last successful run's record, or None if absent or unreadable."""
    try:
        doc = json.loads(record_path(project, job).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("version") != RECORD_VERSION:
        return None  # a record of another shape (``[]``, another version) is no record: run again
    reads, outputs, repeated = doc.get("reads"), doc.get("outputs"), doc.get("reads_repeated") or {}
    if not (_str_map(reads) and _str_map(outputs) and isinstance(repeated, dict)):
        return None
    assert isinstance(reads, dict) and isinstance(outputs, dict)  # checked just above
    try:
        counts = {str(k): int(v) for k, v in repeated.items()}
        return Record(str(doc["key"]), reads, outputs, float(doc["seconds"]), counts)
    except (KeyError, TypeError, ValueError):
        return None


def _str_map(value: object) -> bool:
    """Whether ``value`` is a mapping of text to text (a record's reads or outputs)."""
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def save_record(project: Project, job: NotebookJob, record: Record) -> None:
    """Write the record atomically (last step of a successful run)."""
    write_atomic(record_path(project, job), json.dumps(record.to_json(), indent=1, sort_keys=True))


def digests(project: Project, rel_paths: list[str] | dict[str, str]) -> dict[str, str]:
    """Current sha256 of each project-relative path ('missing' for files that are gone)."""
    out = {}
    for rel in rel_paths:
        p = project.root / rel
        if p.is_dir():  # a folder a chapter listed (textio.record_listing): its entries' names
            out[rel] = listing_digest(p)
        else:
            out[rel] = sha256_file(p) if p.is_file() else "missing"
    return out


def listing_digest(folder: Path) -> str:
    """'listing:' and the sha256 of a folder's sorted entry names (what enumerating it saw)."""
    names = "\n".join(sorted(os.listdir(folder)))
    return LISTING_PREFIX + hashlib.sha256(names.encode("utf-8", "surrogateescape")).hexdigest()


def read_log(project: Project, log: Path) -> tuple[dict[str, str], dict[str, int]]:
    """From a run's reads log (one line per read): each file's sha256 now, and files read more than once."""
    lines = log.read_text(encoding="utf-8").split() if log.exists() else []
    counts = Counter(project.relative(Path(p)) for p in lines)
    return digests(project, sorted(counts)), {rel: n for rel, n in sorted(counts.items()) if n > 1}


def why_stale(project: Project, job: NotebookJob, code: str) -> str | None:
    """None if the job's last result is still valid, else a short reason to re-execute."""
    record = load_record(project, job)
    if record is None:
        return "never run"
    if record.key != static_key(job, code):
        return "notebook, parameters or package code changed"
    if digests(project, record.reads) != record.reads:
        return "raw input changed"
    if digests(project, record.outputs) != record.outputs:
        return "outputs missing or modified"
    return None
