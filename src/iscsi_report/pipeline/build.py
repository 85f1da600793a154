"""The strict jupyter-book build into a fresh folder, then an atomic swap (``iscsi-report build``).

The book is built with execution off (papermill already ran), warnings as errors, nitpicky. It is
built into ``_build/sites/<stamp>``; only when that succeeds does the ``_build/html`` symlink move
to it, so a failed or killed build leaves the previously published site untouched. A build whose
inputs are unchanged since the current site is skipped.

Identical inputs give a byte-identical site: the build runs with ``SOURCE_DATE_EPOCH`` set to the
source date (:func:`provenance.source_date_epoch`) and ``PYTHONHASHSEED`` fixed, and nothing it
reads carries a time or a path of the building machine (the runner strips them from notebooks).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TextIO

from iscsi_report.core import yamlio
from iscsi_report.core.errors import ReportError
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import provenance, toc
from iscsi_report.pipeline.params import RunSpec, discover, parse_cache

KEEP_SITES = 2  # the live site and the one before it
STAMP_FILE = ".build-key"
FAILED_LOG = "last-failed-build.log"
MAX_ERROR_LINES = 30
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
# Sphinx warnings/errors ("file.md:3: WARNING: ...") and Python exceptions ("OSError: [Errno 28] ...").
ERROR_LINE_RE = re.compile(r"\b(WARNING|ERROR|CRITICAL|SEVERE)\b|^\w*(Error|Exception): \S")


def toc_files(project: Project, toc_path: Path | None = None) -> set[str]:
    """Every document named in the toc (default ``book/_toc.yml``; paths relative to book/, no suffix)."""
    path = toc_path or project.book_dir / "_toc.yml"
    doc = yamlio.load_file(path).data  # hand-written when there is no base file: read strictly
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("root", "file") and isinstance(value, str):
                    found.add(value.removesuffix(".ipynb").removesuffix(".md"))
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(doc)
    return found


def prepare_toc(project: Project, runs: list[RunSpec] | None = None) -> Path:
    """The toc to build with: generated from ``book/_toc.base.yml`` and the runs when the base exists.

    Over all runs (``runs`` None: every enabled params file) it is written to ``book/_toc.yml``;
    for chosen runs to ``_build/toc/_toc.yml``, so ``book/_toc.yml`` keeps describing the whole book.
    Without a base file the hand-written ``book/_toc.yml`` is used as it is.
    """
    if not toc.base_path(project).is_file():
        return project.book_dir / toc.TOC_NAME
    if runs is None:
        return toc.write(project, discover(project), project.book_dir / toc.TOC_NAME)
    return toc.write(project, runs, project.build_dir / "toc" / toc.TOC_NAME)


def check_toc(project: Project, toc_path: Path | None = None, runs: set[str] | None = None) -> None:
    """Refuse to build when the toc and the executed notebooks disagree, naming the first gap.

    With ``runs`` (a build of chosen runs) executed notebooks of other runs are not required.
    """
    listed = toc_files(project, toc_path)
    executed = {
        p.relative_to(project.book_dir).with_suffix("").as_posix()
        for p in project.runs_dir.glob("*/*.ipynb")
        if runs is None or p.parent.name in runs
    }
    for rel in sorted(listed):
        if rel.startswith("runs/") and rel not in executed:
            raise ReportError(
                f"book/_toc.yml lists {rel} but it has not been executed "
                "(run `iscsi-report run` for its params file)"
            )
        src = project.book_dir / rel
        if (
            not rel.startswith("runs/")
            and rel != provenance.PAGE
            and not any(src.with_suffix(s).is_file() for s in (".md", ".ipynb"))
        ):
            raise ReportError(f"book/_toc.yml lists {rel} but book/{rel}.md does not exist")
    for rel in sorted(executed - listed):
        raise ReportError(f"{rel}.ipynb was executed but is not in book/_toc.yml: add it there")


def input_key(project: Project, toc_path: Path | None = None) -> str:
    """Digest of everything the site is built from: book/, _config.yml, results/, data/.

    The generated provenance page is left out (its build time changes every build); what it shows
    beyond these files (code, params, package versions, git state) enters via its fingerprint.
    """
    h = hashlib.sha256()
    roots = [project.book_dir, project.results_dir, project.root / "data"]
    files = [project.root / "_config.yml"]
    for root in roots:
        if root.is_dir():
            files.extend(
                p for p in root.rglob("*") if p.is_file() and not provenance.is_generated(project, p)
            )
    for p in sorted(files):
        h.update(p.relative_to(project.root).as_posix().encode())
        h.update(p.read_bytes())
    h.update(provenance.fingerprint(project).encode())
    if toc_path is not None and toc_path.is_file():
        h.update(toc_path.read_bytes())
    return h.hexdigest()


def live_site(project: Project) -> Path:
    """``_build/html``: a symlink to the live site's folder."""
    return project.build_dir / "html"


def _swap(project: Project, new_html: Path) -> None:
    """Point ``_build/html`` at ``new_html`` in one atomic rename of a symlink."""
    link = live_site(project)
    tmp = project.build_dir / f".html-{os.getpid()}"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(os.path.relpath(new_html, project.build_dir))
    if link.exists() and not link.is_symlink():  # a plain folder from an older layout
        shutil.rmtree(link)
    os.replace(tmp, link)


def _complete(site: Path) -> bool:
    """True for a site folder whose build finished (its stamp is written last, before the swap)."""
    return (site / "_build" / "html" / STAMP_FILE).is_file()


def _prune(project: Project, keep: Path) -> None:
    """Remove leftovers of killed or failed builds, and old sites beyond KEEP_SITES (never the live one)."""
    sites = sorted((project.build_dir / "sites").iterdir(), key=lambda p: p.name)
    live = keep.resolve()
    old = [s for s in sites if s.resolve() != live]
    complete = [s for s in old if _complete(s)]
    doomed = [s for s in old if not _complete(s)] + complete[: max(0, len(complete) - (KEEP_SITES - 1))]
    for s in doomed:
        shutil.rmtree(s, ignore_errors=True)


def _save_failed_log(project: Project, output: str) -> str:
    """Keep a failed build's output (``_build/``, else ``.cache/`` when _build is full); say where."""
    for folder in (project.build_dir, project.cache_dir):
        path = folder / FAILED_LOG
        try:
            path.write_text(output, encoding="utf-8")
            return str(path)
        except OSError:
            path.unlink(missing_ok=True)
    return "not saved (no space left for it)"


def build_errors(output: str) -> list[str]:
    """The lines of a build's output that say what went wrong (warnings, errors), colours removed."""
    found: dict[str, None] = {}
    for line in ANSI_RE.sub("", output).splitlines():
        if ERROR_LINE_RE.search(line):
            found.setdefault(line.strip()[:300], None)
    return list(found)


def _failed(project: Project, site_root: Path, output: str, stream: TextIO) -> int:
    """Drop the half-built site, keep the log, say what failed; the live site was never touched."""
    shutil.rmtree(site_root, ignore_errors=True)
    where = _save_failed_log(project, output)
    errors = build_errors(output)
    print("\n".join(errors[:MAX_ERROR_LINES] or output.strip().splitlines()[-25:]), file=stream)
    print(f"book: build FAILED; the previous site is untouched; log: {where}", file=stream, flush=True)
    return 1


def build_env(project: Project) -> dict[str, str]:
    """The environment of the jupyter-book process: fixed hash seed and source date."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    epoch = provenance.source_date_epoch(project.root)
    if epoch is not None:
        env["SOURCE_DATE_EPOCH"] = str(epoch)
    return env


def build_book(
    project: Project, force: bool = False, stream: TextIO = sys.stdout, runs: list[RunSpec] | None = None
) -> int:
    """Build strictly into a new folder and swap it in; 0 on success or when up to date.

    ``runs``: build only these runs' chapters (the toc then holds only their parts).
    """
    toc_path = prepare_toc(project, runs)
    check_toc(project, toc_path, None if runs is None else {r.name for r in runs})
    key = input_key(project, toc_path)
    link = live_site(project)
    stamp_file = link / STAMP_FILE
    if not force and stamp_file.is_file() and stamp_file.read_text() == key:
        print("book: site is up to date (no input changed)", file=stream, flush=True)
        return 0
    with parse_cache(project):  # the provenance page reads every manifest: parses kept, as the kernels do
        provenance.write_page(project)
    site_root = project.build_dir / "sites" / time.strftime("%Y%m%dT%H%M%S")
    site_root = site_root.with_name(f"{site_root.name}-{os.getpid()}")
    cmd = [
        sys.executable,
        "-c",
        "from jupyter_book.cli.main import main; main()",
        "build",
        str(project.book_dir),
        "--config",
        str(project.root / "_config.yml"),
        "--toc",
        str(toc_path),
        "--path-output",
        str(site_root),
        "--builder",
        "html",
        "-W",
        "-n",
        "--keep-going",
    ]
    started = time.monotonic()
    try:
        site_root.mkdir(parents=True)
        proc = subprocess.run(
            cmd, cwd=project.root, env=build_env(project), capture_output=True, text=True, check=False
        )
        output = proc.stdout + proc.stderr
        new_html = site_root / "_build" / "html"
        if proc.returncode != 0 or not (new_html / "index.html").is_file():
            return _failed(project, site_root, output, stream)
        (site_root / "build.log").write_text(output, encoding="utf-8")
        (new_html / STAMP_FILE).write_text(key)
        _swap(project, new_html)
    except OSError as exc:  # e.g. no space left on device while writing the new site
        return _failed(project, site_root, f"{type(exc).__name__}: {exc}", stream)
    except BaseException:  # interrupted: leave no half-built site behind
        shutil.rmtree(site_root, ignore_errors=True)
        raise
    _prune(project, site_root)
    print(f"book: built in {time.monotonic() - started:.1f}s -> {link}/index.html", file=stream, flush=True)
    return 0
