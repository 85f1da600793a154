"""A release a reviewer can cite, archive and verify: one deterministic ``.tar.gz`` (issue 27).

``build_release`` writes the report as one self-contained HTML file (:mod:`.single_html`) and packs
it with the code (git-tracked files, the lock among them), ``data/raw``, the built
site (``_build/html`` resolved, as ``site/``), the runs' tables (``results/``) and executed chapters
(``book/runs/``), ``CHANGES-numbers.md`` and ``MANIFEST.sha256`` (the sha256 of every other member)
under one folder ``iscsi-report-<version>/``: members sorted, mtimes the source date, owner 0, gzip
without a timestamp, so the same inputs give the same bytes.

``verify_release`` unpacks an archive into an empty folder (refusing absolute names, ``..`` and
links leading outside), checks every sha256 of the manifest, re-executes the archived runs offline
with the archive's own code and data, and compares every published number with the archived one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path, PurePosixPath

from iscsi_report.core import yamlio
from iscsi_report.core.archive import write_archive
from iscsi_report.core.atomic import write_atomic
from iscsi_report.core.digest import sha256_bytes
from iscsi_report.core.errors import ReportError
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import numbers, single_html
from iscsi_report.pipeline.provenance import git_state, source_date_epoch

MANIFEST = "MANIFEST.sha256"
CHANGES = "CHANGES-numbers.md"
SITE = "site"  # the built site's folder inside the archive
LOCK = "requirements.lock.txt"
CITATION = "CITATION.cff"
PREFIX = "iscsi-report-"  # archive iscsi-report-<version>.tar.gz holds the folder iscsi-report-<version>/
SUFFIX = ".tar.gz"
REEXECUTED = ("results", "book/runs", SITE)  # what the rebuild makes again: left out of its copy
OFFLINE_PROXY = "http://127.0.0.1:9"  # a closed port: any attempt to reach the network fails at once
RERUN_TIMEOUT_S = 3600


@dataclass(frozen=True)
class Release:
    """What ``release build`` wrote: the archive, its size, its members, and the changed numbers."""

    path: Path
    size_bytes: int
    members: int
    previous: str | None
    changed: list[numbers.Difference]
    tree: str  # the checkout's git state: a dirty tree's untracked files are not in the archive
    report: Path  # the whole report as one self-contained HTML file, beside the archive
    notes: list[str]  # what a publisher should fix first (a citation naming another version)


@dataclass
class Verification:
    """What ``release verify`` found: refused or tampered members, differing numbers, notes."""

    problems: list[str] = field(default_factory=list)
    differences: list[numbers.Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing was refused or tampered with and every number was reproduced."""
        return not self.problems and not self.differences


# ------------------------------------------------------------------ build


def archive_name(version: str) -> str:
    """``iscsi-report-<version>.tar.gz``; the version must be a plain name (no slash, no leading dot)."""
    if not version or "/" in version or version.startswith(".") or version != version.strip():
        raise ReportError(f"release: {version!r} is not a usable version (e.g. 0.1.0)")
    return f"{PREFIX}{version}{SUFFIX}"


def tracked_files(root: Path) -> list[str]:
    """The git-tracked files of the checkout at ``root`` that exist as regular files."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ReportError(f"release: cannot list the code with git ({exc})") from exc
    if proc.returncode != 0:
        raise ReportError(f"release: {root} is not a git checkout: {proc.stderr.decode().strip()[:200]}")
    names = [n for n in proc.stdout.decode().split("\0") if n]
    return sorted(n for n in names if (root / n).is_file() and not (root / n).is_symlink())


def _walk(folder: Path, under: str) -> dict[str, Path]:
    """Every regular file below ``folder`` (symlinks followed), keyed by ``under``/relative path."""
    if not folder.is_dir():
        return {}
    out = {}
    for dirpath, _, files in os.walk(folder, followlinks=True):
        for name in files:
            path = Path(dirpath) / name
            if path.is_file() and "__pycache__" not in path.parts:
                out[f"{under}/{path.relative_to(folder).as_posix()}"] = path
    return out


def release_runs(project: Project, runs: list[str] | None) -> list[str]:
    """The runs to release: ``runs`` (each with published tables or chapters), else every such run."""
    present = {
        p.name for base in (project.results_dir, project.runs_dir) if base.is_dir() for p in base.iterdir()
    }
    chosen = runs if runs else sorted(present)
    missing = [r for r in chosen if r not in present]
    if missing or not chosen:
        raise ReportError(
            f"release: no published results for {', '.join(missing) or 'any run'}: run the book first"
        )
    return chosen


def collect(project: Project, runs: list[str]) -> dict[str, Path]:
    """Member name (below the archive's folder) -> source file, for every member but the generated two."""
    site = project.build_dir / "html"
    if not site.is_dir():
        raise ReportError(f"release: no built site at {site}: run the book first (make book)")
    members = {name: project.root / name for name in tracked_files(project.root)}
    if (project.root / LOCK).is_file():
        members[LOCK] = project.root / LOCK
    members.update(_walk(project.raw_dir, project.relative(project.raw_dir)))
    for run in runs:
        members.update(_walk(project.run_results_dir(run), f"results/{run}"))
        members.update(_walk(project.run_pages_dir(run), f"book/runs/{run}"))
    members.update(_walk(site.resolve(), SITE))
    members.pop(MANIFEST, None)
    members.pop(CHANGES, None)
    return members


def manifest(blobs: Mapping[str, bytes]) -> bytes:
    """``MANIFEST.sha256``: one ``<sha256>  <name>`` line per member, sorted (``sha256sum -c`` reads it)."""
    return "".join(f"{sha256_bytes(blobs[name])}  {name}\n" for name in sorted(blobs)).encode()


def read_archive(path: Path) -> dict[str, bytes]:
    """The regular members of a release archive, keyed by name without the archive's top folder."""
    out = {}
    with tarfile.open(path, "r:gz") as tar:
        for info in tar:
            parts = PurePosixPath(info.name).parts
            extracted = tar.extractfile(info) if info.isfile() and len(parts) > 1 else None
            if extracted is not None:
                out["/".join(parts[1:])] = extracted.read()
    return out


def previous_release(out_dir: Path, current: Path) -> Path | None:
    """The newest other release archive in ``out_dir`` (by modification time), if any."""
    others = [p for p in out_dir.glob(f"{PREFIX}*{SUFFIX}") if p.resolve() != current.resolve()]
    return max(others, key=lambda p: (p.stat().st_mtime, p.name)) if others else None


def number_changes(previous: Path | None, blobs: Mapping[str, bytes]) -> list[numbers.Difference]:
    """Every published number that differs between the previous release and ``blobs``."""
    if previous is None:
        return []
    before = numbers.published_numbers(read_archive(previous))
    return numbers.differences(before, numbers.published_numbers(blobs))


def book_title(project: Project) -> str:
    """The book's title from ``_config.yml`` (the single file's heading)."""
    config = project.root / "_config.yml"
    doc = yamlio.load_text(config.read_text(encoding="utf-8"), config).data if config.is_file() else None
    title = doc.get("title") if isinstance(doc, dict) else None
    return str(title) if title else "iSCSI report"


def citation_notes(project: Project, version: str) -> list[str]:
    """A note when ``CITATION.cff`` is missing or cites another version than the one being released."""
    path = project.root / CITATION
    if not path.is_file():
        return [f"no {CITATION}: the release cannot be cited as GitHub and Zenodo expect"]
    doc = yamlio.load_text(path.read_text(encoding="utf-8"), path).data
    cited = str(doc.get("version", "")) if isinstance(doc, dict) else ""
    if cited != version:
        return [
            f"{CITATION} cites version {cited or '(none)'}, this is {version}: update it and .zenodo.json"
        ]
    return []


def single_report(project: Project, version: str, tree: str) -> bytes:
    """The built site as one self-contained HTML file (:mod:`.single_html`), headed by the release."""
    subtitle = f"Release {version}, one self-contained file of the book's site; code {tree}."
    text, _ = single_html.single_html((project.build_dir / "html").resolve(), book_title(project), subtitle)
    outside = single_html.outside_references(text)
    if outside:
        raise ReportError(f"release: the single-file report refers outside itself: {', '.join(outside[:5])}")
    return text.encode()


def build_release(project: Project, version: str, runs: list[str] | None, out_dir: Path) -> Release:
    """Pack ``out_dir/iscsi-report-<version>.tar.gz``, and write the single-file report beside it."""
    name = archive_name(version)
    path = out_dir / name
    tree = git_state(project.root)
    sources = collect(project, release_runs(project, runs))
    blobs = {member: src.read_bytes() for member, src in sources.items()}
    report_name = name.removesuffix(SUFFIX) + ".html"
    blobs[report_name] = single_report(project, version, tree)
    modes = {member: os.access(src, os.X_OK) for member, src in sources.items()}
    previous = previous_release(out_dir, path)
    changed = number_changes(previous, blobs)
    blobs[CHANGES] = numbers.changelog(previous.name if previous else None, changed, version).encode()
    blobs[MANIFEST] = manifest(blobs)
    write_archive(path, name.removesuffix(SUFFIX), blobs, modes, source_date_epoch(project.root) or 0)
    write_atomic(out_dir / report_name, blobs[report_name])
    before = previous.name if previous else None
    notes = citation_notes(project, version)
    return Release(path, path.stat().st_size, len(blobs), before, changed, tree, out_dir / report_name, notes)


# ------------------------------------------------------------------ verify


def unsafe_member(info: tarfile.TarInfo) -> str:
    """Why a member must not be unpacked (empty if it may): absolute, ``..``, a link leading out, a device."""
    name = PurePosixPath(info.name)
    if name.is_absolute() or info.name.startswith("\\"):
        return f"{info.name}: absolute path refused"
    if ".." in name.parts:
        return f"{info.name}: '..' in the path refused"
    if info.issym() or info.islnk():
        target = PurePosixPath(info.linkname)
        joined = target if info.islnk() else name.parent / target
        if target.is_absolute() or os.path.normpath(joined.as_posix()).startswith(".."):
            return f"{info.name}: link to {info.linkname} leads outside the archive, refused"
        return ""
    if not (info.isfile() or info.isdir()):
        return f"{info.name}: not a regular file, folder or link, refused"
    return ""


def safe_extract(archive: Path, dest: Path) -> tuple[Path | None, list[str]]:
    """Unpack ``archive`` into the empty folder ``dest``: (its one top folder, refused members).

    Nothing is unpacked when any member is refused or the archive has more than one top folder.
    """
    if dest.exists() and any(dest.iterdir()):
        raise ReportError(f"release verify: {dest} is not empty")
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = tar.getmembers()
            refused = [why for why in map(unsafe_member, members) if why]
            tops = {PurePosixPath(m.name).parts[0] for m in members if PurePosixPath(m.name).parts}
            if not refused and len(tops) != 1:
                refused.append(f"expected one top folder, found {len(tops)}: {', '.join(sorted(tops))[:200]}")
            if refused:
                return None, refused
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        return None, [f"{archive}: not a readable .tar.gz ({exc})"]
    return dest / tops.pop(), []


def _files(top: Path) -> Iterator[str]:
    """Every regular file below ``top``, as a relative POSIX path."""
    for dirpath, _, files in os.walk(top):
        for name in files:
            yield (Path(dirpath) / name).relative_to(top).as_posix()


def check_manifest(top: Path) -> list[str]:
    """Every problem with the unpacked archive's manifest: missing, tampered or unlisted members."""
    listing = top / MANIFEST
    if not listing.is_file():
        return [f"{MANIFEST} is missing"]
    expected: dict[str, str] = {}
    for number, line in enumerate(listing.read_text(encoding="utf-8").splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            return [f"{MANIFEST} line {number}: not '<sha256>  <name>'"]
        expected[name] = digest
    problems = []
    for name, digest in sorted(expected.items()):
        path = top / name
        if not path.is_file():
            problems.append(f"{name}: listed in {MANIFEST} but missing")
        elif (actual := sha256_bytes(path.read_bytes())) != digest:
            problems.append(f"{name}: sha256 {actual} differs from the manifest's {digest} (tampered)")
    unlisted = sorted(set(_files(top)) - set(expected) - {MANIFEST})
    problems += [f"{name}: in the archive but not in {MANIFEST}" for name in unlisted]
    return problems


def self_contained(top: Path) -> list[str]:
    """A problem for each reference outside itself in the archived single-file report (``<top>.html``)."""
    report = top / f"{top.name}.html"
    if not report.is_file():
        return [f"{report.name}: the single-file report is missing"]
    outside = single_html.outside_references(report.read_text(encoding="utf-8"))
    return [f"{report.name}: refers outside itself: {ref}" for ref in outside[:20]]


def archived_runs(top: Path) -> list[str]:
    """The runs whose executed chapters the archive holds."""
    runs_dir = top / "book" / "runs"
    return sorted(p.name for p in runs_dir.iterdir() if p.is_dir()) if runs_dir.is_dir() else []


def lock_pins(text: str) -> dict[str, set[str]]:
    """Each locked package's pinned versions (a universal lock pins some twice, under exclusive markers)."""
    pins: dict[str, set[str]] = {}
    for line in text.splitlines():
        if line.startswith((" ", "#")):
            continue
        name, sep, version = line.split(";")[0].split("\\")[0].strip().partition("==")
        if sep:
            pins.setdefault(name.strip().lower(), set()).add(version.strip())
    return pins


def lock_notes(lock: Path) -> list[str]:
    """Installed packages at none of the lock's versions (the re-execution runs this environment)."""
    if not lock.is_file():
        return [f"no {LOCK} in the archive: the environment's versions are unchecked"]
    notes = []
    for name, pinned in sorted(lock_pins(lock.read_text(encoding="utf-8")).items()):
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue  # a package of another platform or extra: not part of this environment
        if installed not in pinned:
            notes.append(f"{name} {installed} installed, the lock pins {' or '.join(sorted(pinned))}")
    return notes


def offline_env(src: Path) -> dict[str, str]:
    """The environment of the re-execution: the archive's own package first, no network reachable."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        env[var] = OFFLINE_PROXY
    env["no_proxy"] = env["NO_PROXY"] = ""
    return env


def offline(command: list[str]) -> tuple[list[str], str]:
    """``command`` wrapped to run with no network (``unshare -n``, loopback up), and the isolation it gets.

    Without the right to make a network namespace (not root), ``command`` as is: the proxies of
    :func:`offline_env` still point at a closed port.
    """
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if unshare and ip:
        try:
            probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            probe = None
        if probe is not None and probe.returncode == 0:
            wrapped = [
                unshare,
                "-n",
                "--",
                "/bin/sh",
                "-c",
                f'{ip} link set lo up && exec "$@"',
                "sh",
                *command,
            ]
            return (
                wrapped,
                "re-executed with no network: a new network namespace with only loopback (unshare -n)",
            )
    return (
        command,
        f"re-executed without a network namespace (unshare -n refused): proxies at {OFFLINE_PROXY}",
    )


def _not_copied(top: Path) -> Callable[[str, list[str]], list[str]]:
    """``copytree``'s ignore: the archive's re-executed outputs (results, executed chapters, site)."""
    left_out = {top / rel for rel in REEXECUTED}
    return lambda folder, names: [name for name in names if Path(folder) / name in left_out]


def reexecute(top: Path, rebuild: Path, runs: list[str], jobs: int) -> tuple[str, str]:
    """Copy the archive's code and data to ``rebuild`` and execute ``runs`` there offline.

    Returns ('' or why it failed, how the network was kept out).
    """
    shutil.copytree(top, rebuild, ignore=_not_copied(top))
    command, isolation = offline(
        [
            sys.executable,
            "-m",
            "iscsi_report.cli",
            "--root",
            str(rebuild),
            "run",
            *runs,
            "--jobs",
            str(jobs),
        ]
    )
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, env=offline_env(rebuild / "src"),
            timeout=RERUN_TIMEOUT_S, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"re-execution did not finish in {RERUN_TIMEOUT_S} s", isolation
    if proc.returncode != 0:
        return (
            f"re-execution failed (exit {proc.returncode}): {(proc.stdout + proc.stderr)[-2000:]}",
            isolation,
        )
    return "", isolation


def _published(top: Path) -> dict[str, numbers.Numbers]:
    """The published numbers below ``top`` (its results/ and book/runs/)."""
    files = {rel: (top / rel).read_bytes() for rel in _files(top) if numbers.is_published(rel)}
    return numbers.published_numbers(files)


def verify_release(archive: Path, jobs: int = 1, workdir: Path | None = None) -> Verification:
    """Unpack, check the manifest, re-execute offline, compare every published number (module docstring)."""
    report = Verification()
    with tempfile.TemporaryDirectory(prefix="iscsi-release-", dir=workdir) as tmp:
        top, refused = safe_extract(archive, Path(tmp) / "archive")
        report.problems += refused
        if top is None:
            return report
        report.problems += check_manifest(top)
        if report.problems:
            report.notes.append("not re-executed: the archive is not the one its manifest describes")
            return report
        report.problems += self_contained(top)
        report.runs = archived_runs(top)
        report.notes += lock_notes(top / LOCK)
        failure, isolation = reexecute(top, Path(tmp) / "rebuild", report.runs, jobs)
        report.notes.append(isolation)
        if failure:
            report.problems.append(failure)
            return report
        report.differences = numbers.differences(_published(top), _published(Path(tmp) / "rebuild"))
    return report
