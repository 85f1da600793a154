"""Datasets: ``data/raw/<dataset>/manifest.yaml`` describes every raw file, checked on load.

Each entry names the file, the tool that wrote it, the side it ran on and scenario labels
(network, device, bs_bytes, max_outstanding_r2t, ...). Files are verified against their sha256
before use, so a number in the book is traceable to exact bytes.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from iscsi_report.core import yamlio
from iscsi_report.core.atomic import write_atomic
from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest.textio import sha256_file

if TYPE_CHECKING:
    import pandas as pd
    from pydantic_core import ErrorDetails

MANIFEST = "manifest.yaml"
NOTES = "notes.yaml"  # the reader notes beside a manifest (core.measurements): never a raw file
COMPANIONS = (MANIFEST, NOTES)  # files of a dataset folder that are not raw tool outputs
TOOLS = ("ping", "iperf3", "fio", "iostat", "tshark")
SIDES = ("initiator", "target", "local")
ENTRY_KEYS = {"path", "tool", "side", "sha256", "bytes", "labels", "note"}
# How to refresh checksums after an intended change (cli/dataset.py implements it).
UPDATE_HINT = "iscsi-report dataset update DIR"

Scalar = StrictStr | StrictInt | StrictFloat | StrictBool | None
PositiveNumber = Annotated[StrictFloat | StrictInt, Field(gt=0, allow_inf_nan=False)]
NonNegativeNumber = Annotated[StrictFloat | StrictInt, Field(ge=0, allow_inf_nan=False)]
PositiveInt = Annotated[StrictInt, Field(gt=0)]
Name = Annotated[StrictStr, Field(min_length=1, max_length=200)]


def _label(description: str, *, unit: str = "", set_by: str = "you", effect: str) -> Any:
    """An optional documented label: book/labels.md is generated from these fields."""
    extra: dict[str, JsonValue] = {"unit": unit, "set_by": set_by, "effect": effect}
    return Field(default=None, description=description, json_schema_extra=extra)


class Labels(BaseModel):
    """Scenario labels of one raw file: the ones chapters read are typed; others are scalars."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)
    __pydantic_extra__: dict[str, Scalar]

    network: Name | None = _label(
        "Name of the network path a ping or iperf3 run crossed (e.g. wired, 10g-lan).",
        effect="Pings and iperf3 runs pair by it: one network's RTT and bandwidth are one set of model "
        "inputs. A network with pings but no iperf3 run (or the reverse) gives no model input.",
    )
    device: Name | None = _label(
        "Name of the storage device under test (e.g. nvme0, sata-ssd, ram).",
        effect="fio runs are fitted per device (fixed ms + size / bandwidth); the model takes that fit.",
    )
    scenario: Name | None = _label(
        "Name of the measurement series a run belongs to (e.g. local-libaio, iscsi-libaio).",
        set_by="you; dataset init derives local-ENGINE or iscsi-ENGINE from side and engine",
        effect="Throughput tables group by it. A name starting with 'local' marks fio on the device's "
        "own machine at queue depth 1: those runs enter the device fit.",
    )
    run: Name | None = _label(
        "Name of one measurement run.",
        set_by="you; dataset init uses the file name without its extensions",
        effect="An iostat file belongs to the fio file whose labels it shares: with equal run names, "
        "its request size and CPU are that run's.",
    )
    engine: Name | None = _label(
        "fio's ioengine (psync, libaio, io_uring, sg, ...).",
        set_by="fio file (ioengine option)",
        effect="Runs with different engines are different experiments: dataset check refuses a device "
        "fit or a throughput group that would pool them.",
    )
    protocol: Name | None = _label(
        "Transport of an iperf3 run: tcp or udp.",
        set_by="iperf3 file (start.test_start.protocol)",
        effect="Link capacity comes from TCP runs; a UDP run reports what it offered (-b), so dataset "
        "check refuses a network whose iperf3 runs mix protocols.",
    )
    iscsi_parameters: Name | None = _label(
        "Key of the manifest's iscsi_parameters mapping: the session parameters the run used.",
        effect="The model takes MaxOutstandingR2T and the other session parameters of the run from that set.",
    )
    validation: StrictBool | None = _label(
        "True for a run held out to check a projection (not used to fit).",
        effect="Validation runs are compared with the model's projection instead of being fitted.",
    )
    interval_s: PositiveNumber | None = _label(
        "Time between ping probes (ping -i).",
        unit="s",
        set_by="ping file: -D timestamps, else the statistics' elapsed time over the probes, "
        "snapped to the nearest 1-2-5 value within 15 %",
        effect="RTTs are summarised per network, host, address family and interval; the model chapter "
        "takes the pings at its ping_interval_s parameter (2 ms by default). Required on every ping file.",
    )
    duration_s: PositiveNumber | None = _label(
        "Length of the iperf3 test (-t).",
        unit="s",
        set_by="iperf3 file (start.test_start.duration)",
        effect="Shown with the run; not a model input.",
    )
    bs_bytes: PositiveInt | None = _label(
        "fio block size (bs): bytes per write.",
        unit="bytes",
        set_by="fio file (bs option); iostat files take it from their fio run",
        effect="The x axis of the device fit and of the throughput tables; it must equal fio's bs.",
    )
    iodepth: PositiveInt | None = _label(
        "fio queue depth (iodepth): writes in flight at once.",
        unit="writes",
        set_by="fio file (iodepth option); iostat files take it from their fio run",
        effect="The device fit assumes one write in flight: dataset check refuses a fit or a "
        "throughput group that would pool different queue depths.",
    )
    link_limit_mbps: PositiveNumber | None = _label(
        "Rate limit set on the link for the capture (e.g. tc tbf).",
        unit="Mbit/s",
        effect="Documents the setup beside the iperf3 result; not a model input.",
    )
    link_mbps: PositiveNumber | None = _label(
        "Link rate emulated by the lab's delay line.",
        unit="Mbit/s",
        set_by="the lab",
        effect="Read by the lab's accuracy checks.",
    )
    one_way_delay_ms: NonNegativeNumber | None = _label(
        "One-way delay emulated by the lab's delay line.",
        unit="ms",
        set_by="the lab",
        effect="Read by the lab's accuracy checks.",
    )
    max_outstanding_r2t: PositiveInt | None = _label(
        "iSCSI MaxOutstandingR2T of the session the run used.",
        unit="R2Ts",
        effect="Runs are grouped by it; it must equal the value of the run's iscsi_parameters set.",
    )
    rw: Name | None = _label(
        "fio's rw pattern (write, randwrite, read, ...).",
        set_by="fio file (rw option)",
        effect="The storage chapter reads write jobs; dataset check refuses pooling different patterns.",
    )
    direct: StrictBool | None = _label(
        "True when fio bypassed the page cache (direct=1, O_DIRECT).",
        set_by="fio file (direct option; fio's default is 0)",
        effect="A buffered run measures the page cache, not the device: dataset check refuses pooling "
        "it with direct runs.",
    )
    numjobs: PositiveInt | None = _label(
        "Number of fio processes running the job (numjobs).",
        unit="jobs",
        set_by="fio file (numjobs option)",
        effect="Several jobs add queue depth: dataset check refuses pooling different numjobs.",
    )
    reverse: StrictBool | None = _label(
        "True for an iperf3 run in reverse mode (-R: the server sends).",
        set_by="iperf3 file (start.test_start.reverse)",
        effect="A reverse run measures the other direction: dataset check refuses pooling it with "
        "forward runs of the same network.",
    )
    bidir: StrictBool | None = _label(
        "True for an iperf3 run sending both ways at once (--bidir).",
        set_by="iperf3 file",
        effect="Shown with the run; both directions share the link.",
    )
    streams: PositiveInt | None = _label(
        "Parallel iperf3 streams (-P).",
        unit="streams",
        set_by="iperf3 file (start.test_start.num_streams)",
        effect="iperf3 sums the streams; shown with the run.",
    )
    offered_bits_per_s: PositiveNumber | None = _label(
        "Rate a UDP iperf3 run offered (-b).",
        unit="bit/s",
        set_by="iperf3 file (start.test_start.target_bitrate)",
        effect="A UDP result cannot exceed what was offered, so it is no measure of link capacity.",
    )
    ping_format: Name | None = _label(
        "Which ping wrote the file: iputils, inetutils, busybox or bsd.",
        set_by="ping file (its reply and statistics lines)",
        effect="Traceability; every variant is parsed the same way.",
    )
    ip_version: Literal[4, 6] | None = _label(
        "IP version the ping used (4 or 6).",
        set_by="ping file (the address in its header)",
        effect="The network chapter keeps IPv4 and IPv6 pings apart (a family found in the header "
        "is taken without the label); IPv6 headers are 20 bytes longer than IPv4 ones.",
    )
    quiet: StrictBool | None = _label(
        "True for ping -q output: only the statistics, no reply lines.",
        set_by="ping file",
        effect="A quiet ping adds no RTT samples to the distributions.",
    )
    iostat_units: Literal["kB", "MB"] | None = _label(
        "Unit of iostat's throughput columns (kB/s by default, MB/s with -m).",
        set_by="iostat file (its column names)",
        effect="The parser converts both to kB; recorded for traceability.",
    )
    block_devices: Name | None = _label(
        "Comma-separated block devices the iostat file reports.",
        set_by="iostat file",
        effect="The busiest of them (most kB written) is taken as the device under test.",
    )
    cpu_stats: StrictBool | None = _label(
        "True when the iostat file holds avg-cpu reports.",
        set_by="iostat file",
        effect="The model's CPU term needs avg-cpu from an iostat file with side: target.",
    )


class FileEntry(BaseModel):
    """One ``files[i]`` entry of a manifest."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    path: Annotated[StrictStr, Field(min_length=1, max_length=4096)]
    tool: Literal["ping", "iperf3", "fio", "iostat", "tshark"] = Field(
        description="The program that wrote the file; dataset init detects it from the content."
    )
    side: Literal["initiator", "target", "local"] = Field(
        description="Where the tool ran: initiator, target, or local (fio on the device's own machine).",
        json_schema_extra={
            "unit": "",
            "set_by": "you",
            "effect": "The model's CPU term uses iostat from side: target; fio on side: local feeds "
            "the device fit.",
        },
    )
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


# Labels that say the link or its delay was shaped for the capture, not the real path.
EMULATION_LABELS = {
    "one_way_delay_ms": "one-way delay emulated by a delay line",
    "link_mbps": "link rate emulated by a delay line",
    "link_limit_mbps": "link rate limited by a traffic shaper",
    "device_emulation": "device emulated (a slow device of the lab's, not a disk)",
}


@dataclass(frozen=True)
class Provenance:
    """How a dataset's numbers came to be: measured, emulated (shaped link) or reconstructed."""

    kind: str
    detail: str


def provenance(reconstructed: bool, files: list[RawFile]) -> Provenance:
    """A dataset's provenance kind from its manifest: reconstructed flag, then emulation labels.

    One rule for the fleet chapter's column and the provenance pages' summary.
    """
    if reconstructed:
        return Provenance("reconstructed", "generated from published summaries, not measured")
    shaped = sorted({k for f in files for k in f.labels if k in EMULATION_LABELS})
    if shaped:
        return Provenance("emulated", "; ".join(dict.fromkeys(EMULATION_LABELS[k] for k in shaped)))
    return Provenance("measured", "raw tool outputs")


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
    lab: dict[str, Any] = field(default_factory=dict)  # the lab's record of how it ran (lab datasets only)

    def select(self, tool: str | None = None, **labels: Any) -> list[RawFile]:
        """Files of ``tool`` whose labels equal every given label."""
        return [
            f
            for f in self.files
            if (tool is None or f.tool == tool) and all(f.labels.get(k) == v for k, v in labels.items())
        ]

    def frame(self) -> pd.DataFrame:
        """One row per file: rel, tool, side, sha256 and each label as a column."""
        import pandas as pd  # here, not at the top: the batch's planning reads manifests without pandas

        return pd.DataFrame(
            [
                {"file": f.rel, "tool": f.tool, "side": f.side, "sha256": f.sha256, **f.labels}
                for f in self.files
            ]
        )


def resolved(base: Path, rel: str, folders: dict[str, str]) -> Path:
    """``(base / rel).resolve()``, each folder resolved once (``folders`` keeps them): a file that
    is no symlink resolves to its resolved folder and its own name (a lab manifest lists a thousand
    files in four folders, and resolving walks every component of every path)."""
    joined = os.path.join(base, rel)
    head, name = os.path.split(joined)
    try:
        plain = name not in ("", ".", "..") and not stat.S_ISLNK(os.lstat(joined).st_mode)
    except OSError:  # absent or unreadable: the full resolution, and the caller's check, decide
        plain = False
    if not plain:
        return Path(joined).resolve()
    folder = folders.get(head)
    if folder is None:
        folder = folders[head] = os.path.realpath(head)
    return Path(folder, name)


def _raw_file(
    manifest: Path,
    doc: yamlio.YamlDoc,
    i: int,
    entry: FileEntry,
    folder: Path | None = None,
    folders: dict[str, str] | None = None,
) -> RawFile:
    """Resolve files[i]: an existing regular file inside the dataset folder (``folder``, if resolved;
    ``folders``: the folders resolved so far, see :func:`resolved`)."""
    where = f"files[{i}].path"
    line = doc.line_of(("files", i, "path"))
    if "\x00" in entry.path:
        raise IngestError(manifest, f"path {entry.path!r} contains a NUL byte", line=line, json_path=where)
    path = resolved(manifest.parent, entry.path, {} if folders is None else folders)
    inside = folder or manifest.parent.resolve()
    if path == inside or not path.is_relative_to(inside):  # strictly below the folder
        raise IngestError(
            manifest, f"path {entry.path!r} leaves the dataset folder", line=line, json_path=where
        )
    if not path.is_file():
        what = "is not a regular file" if path.exists() else "does not exist"
        raise IngestError(manifest, f"listed file {entry.path} {what}", line=line, json_path=where)
    labels = dict(doc.data["files"][i].get("labels") or {})  # validated as is (strict): file order kept
    return RawFile(path, entry.path, entry.tool, entry.side, entry.sha256, labels)


def load_entry(manifest: Path, doc: yamlio.YamlDoc, i: int, entry: FileEntry) -> RawFile:
    """files[i] resolved and checked (one entry at a time: dataset check reports every entry)."""
    return _raw_file(manifest, doc, i, entry)


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
    folder = manifest.parent.resolve()  # once, not per file: resolving walks the whole path
    folders: dict[str, str] = {}
    files = [_raw_file(manifest, doc, i, entry, folder, folders) for i, entry in enumerate(m.files)]
    _refuse_twice_listed(manifest, doc, files)
    return Dataset(
        name=m.dataset or root.name,
        root=root,
        title=m.title if m.title is not None else root.name,
        reconstructed=m.reconstructed,
        description=m.description or "",
        iscsi_parameters=dict(m.iscsi_parameters or {}),
        files=files,
        lab=dict(m.lab or {}),
    )


def verify(f: RawFile) -> Path:
    """Return the file's path after checking its bytes against the manifest's sha256."""
    check_sha256(f, sha256_file(f.path))
    return f.path


def check_sha256(f: RawFile, actual: str) -> None:
    """IngestError naming the file unless ``actual`` (the sha256 of its bytes) is the manifest's."""
    if actual != f.sha256:
        raise IngestError(
            f.path,
            f"sha256 is {actual}, manifest says {f.sha256}: the file changed since the manifest "
            f"was written (if the change is intended, refresh the checksums: "
            f"{UPDATE_HINT.replace('DIR', str(f.path.parent))})",
        )


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
    if changed:
        write_manifest(manifest, doc.data)
    return changed


def write_manifest(manifest: Path, doc: Any) -> None:
    """Write the manifest atomically; IngestError naming it when the folder takes no write."""
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    try:
        write_atomic(manifest, text)
    except OSError as exc:
        raise IngestError(
            manifest, f"cannot write the updated checksums: {exc.strerror or exc} (read-only data?)"
        ) from exc
