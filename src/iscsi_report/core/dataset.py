"""Datasets: ``data/raw/<dataset>/manifest.yaml`` describes every raw file, checked on load.

Each entry names the file, the tool that wrote it, the side it ran on and scenario labels
(network, device, bs_bytes, max_outstanding_r2t, ...). Files are verified against their sha256
before use, so a number in the book is traceable to exact bytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import pandas as pd
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from iscsi_report.core import yamlio
from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest.textio import sha256_file

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

MANIFEST = "manifest.yaml"
TOOLS = ("ping", "iperf3", "fio", "iostat", "tshark")
SIDES = ("initiator", "target", "local")
ENTRY_KEYS = {"path", "tool", "side", "sha256", "bytes", "labels", "note"}
# How to refresh checksums after an intended change (a command that exists: see README).
UPDATE_HINT = (
    ".venv/bin/python -c \"from iscsi_report.core.dataset import update_checksums; update_checksums('DIR')\""
)

Scalar = StrictStr | StrictInt | StrictFloat | StrictBool | None
PositiveNumber = Annotated[StrictFloat | StrictInt, Field(gt=0, allow_inf_nan=False)]
NonNegativeNumber = Annotated[StrictFloat | StrictInt, Field(ge=0, allow_inf_nan=False)]
PositiveInt = Annotated[StrictInt, Field(gt=0)]
Name = Annotated[StrictStr, Field(min_length=1, max_length=200)]


class Labels(BaseModel):
    """Scenario labels of one raw file: the ones chapters read are typed; others are scalars."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)
    __pydantic_extra__: dict[str, Scalar]

    network: Name | None = None
    device: Name | None = None
    scenario: Name | None = None
    run: Name | None = None
    engine: Name | None = None
    protocol: Name | None = None
    iscsi_parameters: Name | None = None
    validation: StrictBool | None = None
    interval_s: PositiveNumber | None = None
    duration_s: PositiveNumber | None = None
    bs_bytes: PositiveInt | None = None
    iodepth: PositiveInt | None = None
    link_limit_mbps: PositiveNumber | None = None
    link_mbps: PositiveNumber | None = None
    one_way_delay_ms: NonNegativeNumber | None = None


class FileEntry(BaseModel):
    """One ``files[i]`` entry of a manifest."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    path: Annotated[StrictStr, Field(min_length=1, max_length=4096)]
    tool: Literal["ping", "iperf3", "fio", "iostat", "tshark"]
    side: Literal["initiator", "target", "local"]
    sha256: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]
    bytes: Annotated[StrictInt, Field(ge=0)] | None = None
    labels: Labels = Field(default_factory=Labels)
    note: StrictStr | None = None

    @model_validator(mode="after")
    def _ping_needs_interval(self) -> FileEntry:
        """A ping log is grouped by its probe interval: without one it would drop out of tables."""
        if self.tool == "ping" and self.labels.interval_s is None:
            raise ValueError(
                "a ping file needs the label interval_s (seconds between probes, ping -i), "
                "a positive number; without it its replies could not be grouped"
            )
        return self


class Manifest(BaseModel):
    """A whole ``manifest.yaml``: unknown top-level keys are refused (a typo is not a default)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    dataset: Name | None = None
    title: StrictStr | None = None
    reconstructed: StrictBool = False
    generator: StrictStr | None = None
    description: StrictStr | None = None
    iscsi_parameters: dict[Name, dict[Name, Scalar]] | None = None
    lab: dict[StrictStr, Any] | None = None
    files: list[FileEntry]


def schema_error(
    doc: yamlio.YamlDoc, exc: ValidationError, prefix: tuple[str | int, ...] = ()
) -> IngestError:
    """The first schema violation as an IngestError naming file, line, JSON path and expectation."""
    errors = exc.errors(include_url=False)
    err = errors[0]
    loc = (*prefix, *(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))))
    loc = tuple(p for p in loc if p not in _UNION_BRANCHES)
    message = _describe(err)
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more problem(s) in this file)"
    return IngestError(doc.path, message, line=doc.line_of(loc), json_path=yamlio.json_path(loc) or None)


# pydantic names the branch of a union it tried in the location; a reader wants the key only
_UNION_BRANCHES = {"str", "int", "float", "bool", "none", "is-instance[bool]", "constrained-str"}


def _describe(err: ErrorDetails) -> str:
    """A pydantic error in the project's words: what was found and what was expected."""
    kind, got = err["type"], err.get("input")
    if kind == "extra_forbidden":
        return f"unknown key {err['loc'][-1]!r} (a typo? it is not a key this file may hold)"
    if kind == "missing":
        return f"missing key {err['loc'][-1]!r}"
    return f"{err['msg'].removeprefix('Value error, ')}; got {_short(got)}"


def _short(value: Any) -> str:
    """A value as the user wrote it, shortened."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


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


def _raw_file(manifest: Path, doc: yamlio.YamlDoc, i: int, entry: FileEntry) -> RawFile:
    """Resolve files[i]: inside the dataset folder, an existing regular file."""
    where = f"files[{i}].path"
    line = doc.line_of(("files", i, "path"))
    path = (manifest.parent / entry.path).resolve()
    if manifest.parent.resolve() not in path.parents:
        raise IngestError(
            manifest, f"path {entry.path!r} leaves the dataset folder", line=line, json_path=where
        )
    if not path.is_file():
        what = "is not a regular file" if path.exists() else "does not exist"
        raise IngestError(manifest, f"listed file {entry.path} {what}", line=line, json_path=where)
    labels = dict(doc.data["files"][i].get("labels") or {})  # validated as is (strict): file order kept
    return RawFile(path, entry.path, entry.tool, entry.side, entry.sha256, labels)


def _refuse_twice_listed(manifest: Path, doc: yamlio.YamlDoc, files: list[RawFile]) -> None:
    """The same file under two spellings (``./x``, ``a/../x``, a symlink, a hard link) is refused."""
    seen: dict[tuple[int, int], int] = {}
    for i, f in enumerate(files):
        st = os.stat(f.path)
        first = seen.setdefault((st.st_dev, st.st_ino), i)
        if first != i:
            raise IngestError(
                manifest,
                f"{f.rel} is the same file as files[{first}].path {files[first].rel}: listed twice "
                "(it would be counted twice)",
                line=doc.line_of(("files", i, "path")),
                json_path=f"files[{i}].path",
            )


def read_manifest(raw_dir: str | Path) -> tuple[Path, yamlio.YamlDoc, Manifest]:
    """Strictly read and schema-check ``<raw_dir>/manifest.yaml`` (files not yet resolved)."""
    manifest = Path(raw_dir).resolve() / MANIFEST
    doc = yamlio.load_file(manifest)
    if not isinstance(doc.data, dict):
        raise IngestError(manifest, "expected a mapping with a 'files' list")
    try:
        return manifest, doc, Manifest.model_validate(doc.data)
    except ValidationError as exc:
        raise schema_error(doc, exc) from exc


def load(raw_dir: str | Path) -> Dataset:
    """Read and validate ``<raw_dir>/manifest.yaml`` (checksums are verified on :func:`verify`)."""
    root = Path(raw_dir).resolve()
    manifest, doc, m = read_manifest(root)
    files = [_raw_file(manifest, doc, i, entry) for i, entry in enumerate(m.files)]
    _refuse_twice_listed(manifest, doc, files)
    return Dataset(
        name=m.dataset or root.name,
        root=root,
        title=m.title if m.title is not None else root.name,
        reconstructed=m.reconstructed,
        description=m.description or "",
        iscsi_parameters=dict(m.iscsi_parameters or {}),
        files=files,
    )


def verify(f: RawFile) -> Path:
    """Return the file's path after checking its bytes against the manifest's sha256."""
    actual = sha256_file(f.path)
    if actual != f.sha256:
        raise IngestError(
            f.path,
            f"sha256 is {actual}, manifest says {f.sha256}: the file changed since the manifest "
            f"was written (if the change is intended, refresh the checksums: "
            f"{UPDATE_HINT.replace('DIR', str(f.path.parent))})",
        )
    return f.path


def update_checksums(raw_dir: str | Path) -> int:
    """Rewrite sha256 and bytes of every listed file in the manifest; return how many changed."""
    root = Path(raw_dir).resolve()
    manifest = root / MANIFEST
    doc = yamlio.load_file(manifest)
    files = doc.data.get("files") if isinstance(doc.data, dict) else None
    if not isinstance(files, list):
        raise IngestError(manifest, "expected a mapping with a 'files' list")
    changed = 0
    for i, item in enumerate(files):
        rel = item.get("path") if isinstance(item, dict) else None
        if not isinstance(rel, str):
            raise IngestError(manifest, "expected a string 'path'", json_path=f"files[{i}]")
        path = root / rel
        if not path.is_file():
            raise IngestError(manifest, f"listed file {rel} does not exist", json_path=f"files[{i}].path")
        sha, size = sha256_file(path), path.stat().st_size
        if item.get("sha256") != sha or item.get("bytes") != size:
            changed += 1
        item["sha256"], item["bytes"] = sha, size
    text = yaml.safe_dump(doc.data, sort_keys=False, allow_unicode=True)
    if changed:
        try:
            _write_atomic(manifest, text)
        except OSError as exc:
            raise IngestError(
                manifest, f"cannot write the updated checksums: {exc.strerror or exc} (read-only data?)"
            ) from exc
    return changed


def _write_atomic(path: Path, text: str) -> None:
    """Replace path's content in one rename (a failed write leaves the old manifest whole)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
