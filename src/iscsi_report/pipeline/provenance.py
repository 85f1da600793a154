"""The provenance pages: what exactly the site was built from.

A short summary page (``book/provenance.md``): one row per dataset (its provenance kind, number of
files, tool versions and a link to its page) and per published study, the effective parameters of
every run, the tables, key package versions, the git commit and whether the tree was dirty, the
source date. One page per dataset (``book/provenance/<dataset>.md``, the summary's sections in the
toc): each raw file's sha256, size, and the tool and version found inside it by the parsers (a
collapsed table, and always a CSV; a dataset of more than :data:`FILES_INLINE_MAX` files has its
files in one archive instead of a link each), and the iSCSI keys its captures negotiated; the
chapters' raw-file lists link there (:func:`iscsi_report.core.markup.raw_dataset_label`). The pages
are generated at build time (gitignored). Everything on them is a function of inputs that
:func:`fingerprint` and the build's input key cover, so an unchanged project still skips the build
and two builds of the same inputs give the same bytes.

Only what the runs use is listed, hence published (Sphinx copies every linked file into the
site): the datasets named by a params file, the tables of the runs that exist. Every string from
data is escaped by :mod:`iscsi_report.core.markup`.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import re
import subprocess
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from iscsi_report.core import dataset as datasets
from iscsi_report.core import markup
from iscsi_report.core.archive import write_archive
from iscsi_report.core.atomic import write_atomic
from iscsi_report.core.digest import code_digest
from iscsi_report.core.errors import ReportError
from iscsi_report.core.ingest.detect import detect_tool, tool_module
from iscsi_report.core.ingest.textio import decode_text, read_checked, sha256_file
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import cache
from iscsi_report.pipeline.cache import PLACE_PARAMETERS
from iscsi_report.pipeline.params import discover, jobs_for, parameters_cell

PAGE = "provenance"  # the summary, book/provenance.md, listed in book/_toc.yml
DATASET_FOLDER = PAGE  # one page per dataset, book/provenance/<name>.md: the summary's toc sections
# A dataset folder name used as it is for its page's file name; any other gets a digest instead.
PLAIN_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,79}")
HASHED_NAME_PREFIX = "dataset-"
NAME_DIGEST_CHARS = 12  # hex digits of sha256 in a hashed page name
TOOL_CACHE_VERSION = 2  # 2: a capture's login keys
# Packages whose versions decide the numbers and the pages (distribution names).
KEY_PACKAGES = (
    "iscsi-report",
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "pandera",
    "pyarrow",
    "pyyaml",
    "altair",
    "vl-convert-python",
    "papermill",
    "nbclient",
    "ipykernel",
    "nbformat",
    "jupyter-book",
    "myst-nb",
    "sphinx",
)
NOT_A_CHECKOUT = "not a git checkout"
GIT_TIMEOUT_S = 30
NOT_SENT = "(not sent)"


@dataclass(frozen=True)
class ToolInfo:
    """What the parser found inside one raw file: its format and the tool version it states."""

    tool: str
    format: str
    version: str
    login_keys: dict[str, dict[str, str]] = field(default_factory=dict)  # a capture's: side -> key -> value


@dataclass(frozen=True)
class RawFileInfo:
    """One raw file as published: where, how big, which bytes, and what wrote it."""

    path: Path
    rel: str
    size_bytes: int
    sha256: str
    matches_manifest: bool
    info: ToolInfo


def page_path(project: Project) -> Path:
    """Where the generated summary page goes: ``book/provenance.md``."""
    return project.book_dir / f"{PAGE}.md"


def dataset_doc(name: str) -> str:
    """The document name of a dataset's page (``provenance/<name>``; a digest for an unusual name)."""
    if PLAIN_NAME_RE.fullmatch(name):
        return f"{DATASET_FOLDER}/{name}"
    digest = hashlib.sha256(name.encode()).hexdigest()[:NAME_DIGEST_CHARS]
    return f"{DATASET_FOLDER}/{HASHED_NAME_PREFIX}{digest}"


def dataset_docs(project: Project, dirs: list[Path] | None = None) -> list[str]:
    """The document names of the dataset pages a build writes (the summary's sections in the toc).

    ``dirs``: :func:`dataset_dirs`, when the caller already has them (a build needs them twice).
    """
    return [dataset_doc(raw_dir.name) for raw_dir in (dataset_dirs(project) if dirs is None else dirs)]


def is_generated(project: Project, path: Path) -> bool:
    """True for the generated pages and their temporary files (left out of the build's input key)."""
    page = page_path(project)
    folder = project.book_dir / DATASET_FOLDER
    return (
        path == page
        or (path.parent == page.parent and path.name.startswith(f".{page.name}."))
        or path.is_relative_to(folder)
    )


def is_generated_doc(rel: str) -> bool:
    """True for a toc entry naming a generated page (it is written at build time, after the check)."""
    return rel == PAGE or rel.startswith(f"{DATASET_FOLDER}/")


def _version_text(tool: str, result: Any) -> str:
    """The version statement a parsed file carries (iostat text: its header's kernel and host)."""
    if tool == "fio":
        return result.fio_version or "not stated in the file"
    if tool == "iperf3":
        return result.version or "not stated in the file"
    if tool == "iostat":
        if result.sysstat_version:
            return f"sysstat {result.sysstat_version}"
        return f"no sysstat version; header: kernel {result.kernel or '?'}, host {result.host or '?'}"
    return "no version printed (variant from the output's wording)"


def tool_info(path: Path, manifest_tool: str) -> ToolInfo:
    """Detect the tool from the file's content, parse it with that parser, report format and version."""
    raw, sha256 = read_checked(path)
    text = decode_text(path, raw)
    found = detect_tool(text)
    if found is None:
        raise ReportError(f"{path}: no parser recognises this file (manifest says {manifest_tool})")
    tool, detected_format = found
    if tool != manifest_tool:
        raise ReportError(f"{path}: the content is {tool} output but the manifest says {manifest_tool}")
    from iscsi_report.core.measurements import kept_parse  # here: cached tools need no parser

    module = tool_module(tool)
    assert module is not None  # detect_tool names only tools whose parser module exists
    # the parse the chapters' processes kept for these bytes, if any (Measurements keeps it so)
    result = kept_parse(tool, sha256, path, lambda: module.parse_text(text, path))
    # a parser may name its format more precisely than detection (fio json vs json+); tshark's
    # field export has one format only, so detection names it
    login = getattr(result, "login_keys", {}) if tool == "tshark" else {}
    return ToolInfo(tool, getattr(result, "format", detected_format), _version_text(tool, result), login)


class _ToolCache:
    """Tool information by file sha256, valid while the package code is unchanged (.cache/)."""

    def __init__(self, project: Project) -> None:
        self.path = project.cache_dir / "provenance-tools.json"
        self.code = code_digest(*project.notebook_code_dirs)
        self.entries: dict[str, dict[str, Any]] = {}
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
            if doc.get("version") == TOOL_CACHE_VERSION and doc.get("code") == self.code:
                self.entries = dict(doc["files"])
        except (OSError, ValueError, KeyError, TypeError):
            self.entries = {}

    def get(self, path: Path, sha256: str, manifest_tool: str) -> ToolInfo:
        key = f"{manifest_tool}:{sha256}"
        if key not in self.entries:
            self.entries[key] = asdict(tool_info(path, manifest_tool))
        return ToolInfo(**self.entries[key])

    def save(self) -> None:
        """Write atomically; a failure to cache is not an error (the page is already right)."""
        doc = {"version": TOOL_CACHE_VERSION, "code": self.code, "files": self.entries}
        with contextlib.suppress(OSError):
            write_atomic(self.path, json.dumps(doc, sort_keys=True))


def dataset_dirs(project: Project) -> list[Path]:
    """The folder of every dataset a run uses (``data/raw/<dataset>``), sorted by name.

    Used means named by a params file, or read by one of its notebooks (the run records' reads:
    the lab validation reads its confirmation sweeps, the fleet every dataset). A dataset no run
    uses is not listed, so none of its files is published.
    """
    used = {spec.dataset for spec in discover(project) if spec.dataset}
    raw_rel = project.raw_dir.relative_to(project.root).as_posix() + "/"
    for spec in discover(project):
        for job in jobs_for(project, spec):
            record = cache.load_record(project, job)
            for rel in record.reads if record else {}:
                name = rel[len(raw_rel) :].split("/", 1)[0] if rel.startswith(raw_rel) else ""
                if name and (project.raw_dir / name / datasets.MANIFEST).is_file():
                    used.add(name)
    return sorted(project.raw_dir / name for name in used)


def run_tables(project: Project) -> list[Path]:
    """The CSVs the runs of the current params files made (by their run records), sorted.

    Tables of a deleted run, or of a notebook a run no longer lists, are left out (not published).
    """
    found: set[Path] = set()
    for spec in discover(project):
        for job in jobs_for(project, spec):
            record = cache.load_record(project, job)
            outputs = record.outputs if record else {}
            found.update(project.root / rel for rel in outputs if rel.endswith(".csv"))
    return sorted(p for p in found if p.is_file())


def raw_files(project: Project, ds: datasets.Dataset, tools: _ToolCache) -> list[RawFileInfo]:
    """Every file of a dataset's manifest with its digest, size and in-file tool information."""
    out = []
    for f in ds.files:
        sha = sha256_file(f.path)
        out.append(
            RawFileInfo(
                f.path, f.rel, f.path.stat().st_size, sha, sha == f.sha256, tools.get(f.path, sha, f.tool)
            )
        )
    return out


def run_parameters(project: Project) -> list[tuple[str, Path, str, int, dict[str, dict[str, Any]]]]:
    """Per params file: run, path, dataset, timeout and each notebook's effective parameters."""
    runs = []
    for spec in discover(project):
        notebooks = {}
        for job in jobs_for(project, spec):
            merged = {**parameters_cell(job.source), **job.parameters}
            notebooks[job.notebook] = {k: v for k, v in sorted(merged.items()) if k not in PLACE_PARAMETERS}
        runs.append((spec.name, spec.path, spec.dataset, spec.timeout_s, notebooks))
    return runs


def package_versions() -> dict[str, str]:
    """Installed version of each key package ('not installed' if absent)."""
    out = {}
    for name in KEY_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def git_state(root: Path) -> str:
    """ "<commit> (clean)", "<commit> (dirty: ...)" or "not a git checkout" (with why git failed)."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None or top.returncode != 0 or Path(top.stdout.strip()).resolve() != root.resolve():
        return NOT_A_CHECKOUT
    head = _git(root, "rev-parse", "HEAD")
    status = _git(root, "status", "--porcelain")
    for proc in (head, status):
        if proc is None or proc.returncode != 0:
            err = proc.stderr.strip() if proc else ""
            reason = err.splitlines()[-1][:120] if err else "no output"
            return f"{NOT_A_CHECKOUT} (git failed: {reason})"
    assert head is not None and status is not None  # both checked in the loop above
    changed = [ln for ln in status.stdout.splitlines() if ln.strip()]
    state = "dirty: uncommitted changes or untracked files" if changed else "clean"
    return f"{head.stdout.strip()} ({state})"


def source_date_epoch(root: Path) -> int | None:
    """The date the site stands for: ``SOURCE_DATE_EPOCH`` if set, else the git commit's time.

    Never the clock: two builds of the same inputs must give the same bytes. None when neither
    is known (not a git checkout and the variable unset).
    """
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return int(epoch)
    if git_state(root).startswith(NOT_A_CHECKOUT):
        return None
    proc = _git(root, "log", "-1", "--format=%ct")
    out = proc.stdout.strip() if proc is not None and proc.returncode == 0 else ""
    return int(out) if out.isdigit() else None


def build_time(root: Path | None = None) -> str:
    """The source date in UTC (see :func:`source_date_epoch`), or why there is none."""
    seconds = source_date_epoch(root) if root is not None else None
    if seconds is None:
        return "not recorded (not a git commit and SOURCE_DATE_EPOCH unset)"
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def fingerprint(project: Project) -> str:
    """Digest of what the page shows beyond the raw and result bytes the build key already hashes."""
    h = hashlib.sha256()
    h.update(code_digest(project.package_dir).encode())  # the parsers' reading of each file
    h.update(json.dumps(package_versions(), sort_keys=True).encode())
    h.update(git_state(project.root).encode())
    h.update(str(source_date_epoch(project.root)).encode())
    for folder, pattern in ((project.params_dir, "*.yaml"), (project.notebooks_dir, "*.md")):
        for p in sorted(folder.glob(pattern)) if folder.is_dir() else []:
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()


# ------------------------------------------------------------------ markdown


_cell = markup.text  # literal text, safe in prose and in a table cell
_table = markup.table


def _code(value: object) -> str:
    """A value as an inline code span in a table (JSON for containers, so lists read unambiguously)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return markup.code(text, in_table=True) if text.strip() else "(empty)"


def _download(project: Project, path: Path, page_dir: Path | None = None) -> str:
    """A download link from a page in ``page_dir`` (default book/) to ``path``, named by its project path."""
    rel = Path(os.path.relpath(path, page_dir or project.book_dir)).as_posix()
    return markup.link(path.relative_to(project.root).as_posix(), rel)


@dataclass(frozen=True)
class DatasetFiles:
    """One dataset as its pages show it: the manifest, its provenance kind and every raw file."""

    raw_dir: Path
    dataset: datasets.Dataset
    kind: datasets.Provenance
    files: list[RawFileInfo]

    @property
    def infos(self) -> list[ToolInfo]:
        """What the parsers found in each file, in manifest order."""
        return [f.info for f in self.files]


def read_dataset(project: Project, raw_dir: Path, tools: _ToolCache) -> DatasetFiles:
    """A dataset's manifest, provenance kind and raw files (digests, sizes, in-file tool versions)."""
    ds = datasets.load(raw_dir)
    return DatasetFiles(
        raw_dir, ds, datasets.provenance(ds.reconstructed, ds.files), raw_files(project, ds, tools)
    )


# The per-file table of a dataset runs to a thousand rows: collapsed in a <details> (sphinx-design's
# dropdown), the browser neither styles nor lays it out until a reader opens it (issue 25: the
# largest dataset's page scored 31 on Lighthouse's phone test with it open).
FILES_DROPDOWN = (
    ":::{{dropdown}} Every raw file: size, sha256, whether it matches, tool and version ({n:,} files)"
)
# Above this many files even the collapsed table is too heavy a page (issue 25: its rows are parsed
# though not laid out; 1,184 files made 23,000 elements and Lighthouse 41 on a phone, 338-373 files
# 7,000-7,800 elements and 83-84, 161 files 3,700 elements): the page then links the table as CSV and
# every file in one archive instead of a link per file.
FILES_INLINE_MAX = 200
FILES_CSV_SUFFIX = ".files.csv"  # beside the dataset's page: book/provenance/<page>.files.csv
RAW_ARCHIVE_SUFFIX = ".raw.tar.gz"  # the manifest and every raw file, one deterministic archive
ARCHIVE_MTIME = 0  # member mtimes: the archive is a function of the files' bytes alone
FILES_CSV_HEADER = ("file", "bytes", "sha256", "matches_manifest", "tool", "format", "version")


def asset_path(project: Project, raw_dir: Path, suffix: str) -> Path:
    """Where a dataset page's download ``suffix`` (CSV or archive) is written, beside the page."""
    return doc_path(project, dataset_doc(raw_dir.name)).with_suffix(suffix)


def files_csv(project: Project, data: DatasetFiles) -> str:
    """The per-file table as CSV: project path, bytes, sha256, match, tool, format, in-file version."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(FILES_CSV_HEADER)
    for f in data.files:
        rel = f.path.relative_to(project.root).as_posix()
        matches = "yes" if f.matches_manifest else "no"
        writer.writerow([rel, f.size_bytes, f.sha256, matches, f.info.tool, f.info.format, f.info.version])
    return out.getvalue()


def raw_archive(data: DatasetFiles, path: Path) -> None:
    """Write the dataset's manifest and raw files under ``<dataset>/`` into a deterministic archive."""
    blobs = {datasets.MANIFEST: (data.raw_dir / datasets.MANIFEST).read_bytes()}
    blobs.update({f.path.relative_to(data.raw_dir).as_posix(): f.path.read_bytes() for f in data.files})
    write_archive(path, data.raw_dir.name, blobs, {}, ARCHIVE_MTIME)


def write_assets(project: Project, data: DatasetFiles) -> list[Path]:
    """Write the downloads a dataset's page links (the CSV; the archive when large); their paths."""
    csv_path = asset_path(project, data.raw_dir, FILES_CSV_SUFFIX)
    write_atomic(csv_path, files_csv(project, data))
    if len(data.files) <= FILES_INLINE_MAX:
        return [csv_path]
    archive = asset_path(project, data.raw_dir, RAW_ARCHIVE_SUFFIX)
    raw_archive(data, archive)
    return [csv_path, archive]


def dataset_page(project: Project, data: DatasetFiles) -> str:
    """A dataset's page: its manifest, each raw file's digest, size and tool version, its iSCSI keys."""
    ds, raw_dir = data.dataset, data.raw_dir
    manifest = raw_dir / datasets.MANIFEST
    here = doc_path(project, dataset_doc(raw_dir.name)).parent  # links are relative to the page
    lines = [
        f"({markup.raw_dataset_label(raw_dir.name)})=",  # the chapters' raw-file lists link here
        f"# Raw data: {_cell(raw_dir.name)}",
        "",
        _cell(ds.title),
        "",
        f"Provenance: {_cell(data.kind.kind)} ({_cell(data.kind.detail)}). Dataset name in the manifest: "
        f"{_cell(ds.name)}. One of the datasets of the {{doc}}`provenance summary </{PAGE}>`.",
        "",
        f"Manifest: {_download(project, manifest, here)}, sha256 `{sha256_file(manifest)}`."
        + (" Reconstructed from published summaries, not captured." if ds.reconstructed else ""),
        "",
    ]
    rows = [
        [
            _download(project, f.path, here),
            f"{f.size_bytes:,}",
            f"`{f.sha256}`",
            "yes" if f.matches_manifest else "**NO**",
            _cell(f.info.tool),
            _cell(f.info.format),
            _cell(f.info.version),
        ]
        for f in data.files
    ]
    header = [
        "file",
        "bytes",
        "sha256",
        "matches manifest",
        "tool (from content)",
        "format",
        "version (from the file)",
    ]
    files = [*_files_overview(data), _csv_line(project, data, here)]
    if len(rows) > FILES_INLINE_MAX:
        files += [_archive_line(project, data, here), ""]
    else:
        files += ["", FILES_DROPDOWN.format(n=len(rows)), "", *_table(header, rows), ":::", ""]
    body = lines + files + _tools_line(data.infos) + _login_section(data.infos)
    return "\n".join(body).rstrip() + "\n"


def _csv_line(project: Project, data: DatasetFiles, here: Path) -> str:
    """The sentence linking the per-file table as CSV."""
    csv_path = asset_path(project, data.raw_dir, FILES_CSV_SUFFIX)
    link = _download(project, csv_path, here)
    return f"The table of every file (path, bytes, sha256, match, tool, format, version): {link}."


def _archive_line(project: Project, data: DatasetFiles, here: Path) -> str:
    """The sentence linking every raw file in one archive, for a dataset too large to list here."""
    archive = asset_path(project, data.raw_dir, RAW_ARCHIVE_SUFFIX)
    link = _download(project, archive, here)
    return (
        f"Its {len(data.files):,} files are too many to list on this page: every one of them, with the "
        f"manifest, is in {link} (check each against the sha256 in the CSV)."
    )


def _files_overview(data: DatasetFiles) -> list[str]:
    """What the collapsed file table holds, per tool, and every file that fails its checksum, shown open."""
    per_tool: Counter[str] = Counter(f.info.tool for f in data.files)
    sizes: Counter[str] = Counter()
    for f in data.files:
        sizes[f.info.tool] += f.size_bytes
    rows = [[_cell(tool), f"{n:,}", f"{sizes[tool]:,}"] for tool, n in sorted(per_tool.items())]
    lines = [*_table(["tool (from content)", "files", "bytes"], rows), ""]
    bad = [f for f in data.files if not f.matches_manifest]
    total = len(data.files)
    if not bad:
        return [*lines, f"Every one of the {total:,} files matches the sha256 its manifest states.", ""]
    named = ", ".join(_cell(f.path.name) for f in bad)
    return [*lines, f"**{len(bad):,} of {total:,} files do NOT match their manifest's sha256:** {named}.", ""]


def _versions_cell(infos: list[ToolInfo]) -> str:
    """A dataset's tool versions in one table cell: tool, version and number of files, by tool."""
    parts = [f"{_cell(tool)} {_cell(version)} ({n:,})" for tool, version, n in tool_versions(infos)]
    return "; ".join(parts) or "(no files)"


def _summary_rows(project: Project, sets: list[DatasetFiles]) -> list[list[str]]:
    """One summary row per dataset (linked to its page), then one per published study's file."""
    rows = [
        [
            f"[{_cell(d.raw_dir.name)}]({dataset_doc(d.raw_dir.name)}.md)",
            _cell(d.kind.kind),
            f"{len(d.files):,}",
            _versions_cell(d.infos),
        ]
        for d in sets
    ]
    rows += [
        [_download(project, p), "published", "1", "(numbers transcribed from the study; see below)"]
        for p in published_files(project)
    ]
    return rows


def tool_versions(infos: list[ToolInfo]) -> list[tuple[str, str, int]]:
    """Each (tool, version as the files state it) of a dataset with its number of files."""
    counts = Counter((info.tool, info.version) for info in infos)
    return [(tool, version, n) for (tool, version), n in sorted(counts.items())]


def _tools_line(infos: list[ToolInfo]) -> list[str]:
    """One sentence: the tool versions the dataset's files state."""
    parts = [
        f"{_cell(tool)} {_cell(version)} ({n} {'file' if n == 1 else 'files'})"
        for tool, version, n in tool_versions(infos)
    ]
    return [f"Tool versions, as the files state them: {'; '.join(parts)}.", ""] if parts else []


def login_keys(infos: list[ToolInfo]) -> tuple[int, int, list[tuple[str, str, str, int]]]:
    """(captures, captures with a login, rows): each key with what the initiator sent, what the
    target answered, and in how many captures that pair was seen."""
    captures = [info for info in infos if info.tool == "tshark"]
    with_login = [info.login_keys for info in captures if info.login_keys]
    pairs: Counter[tuple[str, str, str]] = Counter()
    for login in with_login:
        sent, answered = login.get("initiator", {}), login.get("target", {})
        for key in sorted(set(sent) | set(answered)):
            pairs[(key, sent.get(key, ""), answered.get(key, ""))] += 1
    rows = [(key, sent, answered, n) for (key, sent, answered), n in sorted(pairs.items())]
    return len(captures), len(with_login), rows


def _sent(value: str) -> str:
    """A login value as code, or '(not sent)' when that side did not send the key."""
    return _code(value) if value else NOT_SENT


def _login_section(infos: list[ToolInfo]) -> list[str]:
    """The negotiated iSCSI keys as the captures' login PDUs carry them (nothing without captures)."""
    captures, with_login, rows = login_keys(infos)
    if not captures:
        return []
    lines = [
        f"Negotiated iSCSI keys, read from the login PDUs of the captures ({with_login} of {captures} "
        "captures hold a login): what the initiator sent and what the target answered. For a negotiated "
        "key the answer is the session's value (RFC 7143, section 13); MaxRecvDataSegmentLength is "
        "declared by each side for what it receives, and the names are declarations too.",
        "",
    ]
    table = [[_code(key), _sent(sent), _sent(answered), str(n)] for key, sent, answered, n in rows]
    return lines + _table(["key", "initiator sent", "target answered", "captures"], table) + [""]


def published_files(project: Project) -> list[Path]:
    """The published studies' numbers (``data/published/*.yaml``), sorted."""
    folder = project.published_dir
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


def _published_section(project: Project) -> list[str]:
    files = published_files(project)
    if not files:
        return []
    rows = [
        [
            _download(project, p),
            f"{p.stat().st_size:,}",
            f"`{sha256_file(p)}`",
        ]
        for p in files
    ]
    return [
        "## Published numbers",
        "",
        "Numbers transcribed from the studies this book compares with (`data/published/`).",
        "",
        *_table(["file", "bytes", "sha256"], rows),
    ]


def _runs_section(project: Project) -> list[str]:
    lines = [
        "## Runs and their parameters",
        "",
        "Each params file runs its notebooks over one dataset; below, every notebook's effective "
        "parameters (the notebook's defaults with the params file's overrides; the runner's "
        "paths are left out).",
        "",
    ]
    for run, path, dataset, timeout_s, notebooks in run_parameters(project):
        rel = path.relative_to(project.root).as_posix() if path.is_relative_to(project.root) else path
        lines += [
            f"### {_cell(run)}",
            "",
            f"Params file {markup.code(rel)} (sha256 `{sha256_file(path)}`), dataset "
            f"{markup.code(dataset or 'none')}, cell timeout {_cell(timeout_s)} s.",
            "",
        ]
        rows = [
            [_code(nb), _code(key), _code(value)]
            for nb, values in notebooks.items()
            for key, value in values.items()
        ]
        lines += _table(["notebook", "parameter", "value"], rows)
    return lines


def _tables_section(project: Project) -> list[str]:
    csvs = run_tables(project)
    if not csvs:
        return []
    rows = [
        [
            _download(project, p),
            f"{p.stat().st_size:,}",
            f"`{sha256_file(p)}`",
        ]
        for p in csvs
    ]
    return [
        "## Tables",
        "",
        "Every table shown in the book, as the CSV the notebooks wrote.",
        "",
        *_table(["file", "bytes", "sha256"], rows),
    ]


def read_datasets(project: Project, dirs: list[Path] | None = None) -> list[DatasetFiles]:
    """Every dataset a run uses (``dirs``, default :func:`dataset_dirs`), read once (the tool cache saved)."""
    tools = _ToolCache(project)
    used = dataset_dirs(project) if dirs is None else dirs
    sets = [read_dataset(project, raw_dir, tools) for raw_dir in used]
    tools.save()
    return sets


def pages(project: Project, built_at: str, sets: list[DatasetFiles] | None = None) -> dict[str, str]:
    """Every generated page by document name (the summary first), as MyST markdown.

    A function of the inputs and ``built_at`` (the source date, shown on the summary only).
    """
    sets = read_datasets(project) if sets is None else sets
    out = {PAGE: summary_page(project, built_at, sets)}
    out.update({dataset_doc(d.raw_dir.name): dataset_page(project, d) for d in sets})
    return out


def summary_page(project: Project, built_at: str, sets: list[DatasetFiles]) -> str:
    """The summary: one row per dataset and published study, then runs, tables and software."""
    lines = [
        "# Provenance",
        "",
        "What this site was built from, to the byte. Each dataset has a page listing every raw file "
        "with its sha256, size and the tool and version read from the file's content by the same "
        "parsers the chapters use, not from its name.",
        "",
        f"- Built at: {_cell(built_at)}",
        f"- Source (git commit): {_cell(git_state(project.root))}",
        "",
        "## Datasets",
        "",
        "Provenance: *measured* (raw tool outputs), *emulated* (measured over a shaped link), "
        "*reconstructed* (generated from published summaries) or *published* (numbers transcribed "
        "from a study).",
        "",
        *_table(["dataset", "provenance", "files", "tool versions (files)"], _summary_rows(project, sets)),
    ]
    lines += _published_section(project)
    lines += _runs_section(project)
    lines += _tables_section(project)
    versions = package_versions()
    lines += [
        "## Software",
        "",
        *_table(["package", "version"], [[_code(k), _cell(v)] for k, v in versions.items()]),
    ]
    return "\n".join(lines).rstrip() + "\n"


def render(project: Project, built_at: str) -> str:
    """The summary page alone (:func:`pages` gives every page)."""
    return pages(project, built_at)[PAGE]


def doc_path(project: Project, doc: str) -> Path:
    """The markdown file of a generated document (``book/<doc>.md``)."""
    return project.book_dir / f"{doc}.md"


def write_page(project: Project, built_at: str | None = None, dirs: list[Path] | None = None) -> Path:
    """Generate the summary, the dataset pages and their downloads atomically, drop stale ones.

    ``dirs``: the datasets the runs use (:func:`dataset_dirs`), when the caller already has them.
    Returns the summary's path.
    """
    sets = read_datasets(project, dirs)
    written = pages(project, built_at or build_time(project.root), sets)
    for doc, text in written.items():
        write_atomic(doc_path(project, doc), text)
    keep = {doc_path(project, doc) for doc in written}
    for data in sets:
        keep.update(write_assets(project, data))
    folder = project.book_dir / DATASET_FOLDER
    generated = (".md", FILES_CSV_SUFFIX, RAW_ARCHIVE_SUFFIX)
    for stale in sorted(folder.iterdir()) if folder.is_dir() else []:
        # a dataset no run uses any more: its page would be outside the toc, its files unpublished
        if stale.is_file() and stale.name.endswith(generated) and stale not in keep:
            stale.unlink()
    return page_path(project)
