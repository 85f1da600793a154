"""Datasets: ``data/raw/<dataset>/manifest.yaml`` describes every raw file, checked on load.

Each entry names the file, the tool that wrote it, the side it ran on and scenario labels
(network, device, bs_bytes, max_outstanding_r2t, ...). Files are verified against their sha256
before use, so a number in the book is traceable to exact bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest.textio import read_text, sha256_file

MANIFEST = "manifest.yaml"
TOOLS = ("ping", "iperf3", "fio", "iostat")
SIDES = ("initiator", "target", "local")
ENTRY_KEYS = {"path", "tool", "side", "sha256", "bytes", "labels", "note"}


@dataclass(frozen=True)
class RawFile:
    """One raw file of a dataset, with its labels; ``path`` is absolute."""

    path: Path
    rel: str
    tool: str
    side: str
    sha256: str
    labels: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Dataset:
    """A validated manifest."""

    name: str
    root: Path
    title: str
    reconstructed: bool
    description: str
    iscsi_parameters: dict[str, dict[str, Any]]
    files: list[RawFile]

    def select(self, tool: str | None = None, **labels: Any) -> list[RawFile]:
        """Files of ``tool`` whose labels equal every given label."""
        return [
            f
            for f in self.files
            if (tool is None or f.tool == tool) and all(f.labels.get(k) == v for k, v in labels.items())
        ]

    def frame(self) -> pd.DataFrame:
        """One row per file: rel, tool, side, sha256 and each label as a column."""
        return pd.DataFrame(
            [
                {"file": f.rel, "tool": f.tool, "side": f.side, "sha256": f.sha256, **f.labels}
                for f in self.files
            ]
        )


def _entry(manifest: Path, i: int, item: Any) -> RawFile:
    """Validate one ``files[i]`` entry and its file's checksum."""
    where = f"files[{i}]"
    if not isinstance(item, dict):
        raise IngestError(manifest, "expected a mapping", json_path=where)
    unknown = sorted(set(item) - ENTRY_KEYS)
    if unknown:
        raise IngestError(manifest, f"unknown key {unknown[0]!r}", json_path=where)
    for key in ("path", "tool", "side", "sha256"):
        if not isinstance(item.get(key), str):
            raise IngestError(manifest, f"expected a string '{key}'", json_path=where)
    if item["tool"] not in TOOLS:
        raise IngestError(manifest, f"tool must be one of {TOOLS}", json_path=f"{where}.tool")
    if item["side"] not in SIDES:
        raise IngestError(manifest, f"side must be one of {SIDES}", json_path=f"{where}.side")
    labels = item.get("labels") or {}
    if not isinstance(labels, dict):
        raise IngestError(manifest, "expected a mapping of labels", json_path=f"{where}.labels")
    path = (manifest.parent / item["path"]).resolve()
    if manifest.parent.resolve() not in path.parents:
        raise IngestError(manifest, "path leaves the dataset folder", json_path=f"{where}.path")
    if not path.is_file():
        raise IngestError(manifest, f"listed file {item['path']} does not exist", json_path=f"{where}.path")
    return RawFile(path, item["path"], item["tool"], item["side"], item["sha256"], labels)


def load(raw_dir: str | Path) -> Dataset:
    """Read and validate ``<raw_dir>/manifest.yaml`` (checksums are verified on :func:`verify`)."""
    root = Path(raw_dir).resolve()
    manifest = root / MANIFEST
    try:
        doc = yaml.safe_load(read_text(manifest))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise IngestError(manifest, f"invalid YAML: {exc}", line=mark.line + 1 if mark else None) from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), list):
        raise IngestError(manifest, "expected a mapping with a 'files' list")
    files = [_entry(manifest, i, item) for i, item in enumerate(doc["files"])]
    seen: set[str] = set()
    for i, f in enumerate(files):
        if f.rel in seen:
            raise IngestError(manifest, f"{f.rel} listed twice", json_path=f"files[{i}].path")
        seen.add(f.rel)
    return Dataset(
        name=str(doc.get("dataset", root.name)),
        root=root,
        title=str(doc.get("title", root.name)),
        reconstructed=bool(doc.get("reconstructed", False)),
        description=str(doc.get("description", "")),
        iscsi_parameters=dict(doc.get("iscsi_parameters") or {}),
        files=files,
    )


def verify(f: RawFile) -> Path:
    """Return the file's path after checking its bytes against the manifest's sha256."""
    actual = sha256_file(f.path)
    if actual != f.sha256:
        raise IngestError(
            f.path,
            f"sha256 is {actual}, manifest says {f.sha256}: the file changed since the manifest "
            "was written (run `iscsi-report manifest --update` if the change is intended)",
        )
    return f.path


def update_checksums(raw_dir: str | Path) -> int:
    """Rewrite sha256 and bytes of every listed file in the manifest; return how many changed."""
    root = Path(raw_dir).resolve()
    manifest = root / MANIFEST
    doc = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    changed = 0
    for i, item in enumerate(doc.get("files", [])):
        path = root / item["path"]
        if not path.is_file():
            raise IngestError(
                manifest, f"listed file {item['path']} does not exist", json_path=f"files[{i}].path"
            )
        sha, size = sha256_file(path), path.stat().st_size
        if item.get("sha256") != sha or item.get("bytes") != size:
            changed += 1
        item["sha256"], item["bytes"] = sha, size
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return changed
