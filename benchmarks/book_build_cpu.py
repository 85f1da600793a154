"""The CPU a `book` build spends outside executing notebooks (issue 28), on the reader's lab site.

``setup DEST``: a lab copy as ``tests/browser/conftest.py`` makes it (three chapters, the Reference
part, the provenance page), executed and built once with ``book --jobs 2``.
``compare A B``: whether two built html trees hold the same files with the same bytes (the
``.build-key`` stamp and ``build.log`` aside: the stamp is an input digest, equal for equal inputs).

``sphinx ROOT OUT PROF``: the jupyter-book build ``iscsi-report build`` runs in its subprocess (same
arguments and environment, the toc and provenance pages as the last build left them), in this process
under cProfile, into ``OUT``; the profile goes to ``PROF``.

``parent ROOT``: the CPU seconds of the build's own steps before jupyter-book (toc, checks, input key,
provenance pages) in this process, imports excluded, the same calls as ``build_book`` makes.

``forked ROOT PAIRS``: ``build --force`` on an executed copy, alternating a build with no fork server
(a fresh jupyter-book process) and one whose jupyter-book is forked from a server this script starts
and names; each build's CPU is the command's own and its children's plus what the server's children
used meanwhile (from the server's ``cutime``/``cstime``). The server's first build, which imports the
builder's stack into it, is run and reported first. After each pair the two sites are compared.

The parent's share, profiled: ``PYTHONPATH=src python -m cProfile -o out.prof -m iscsi_report.cli --root DEST
build --force`` (or ``book --jobs 1`` on an executed copy).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def setup(dest: Path) -> None:
    """The reader's lab site copy at ``dest``, executed and built."""
    from browser.harness import CHAPTERS, add_toc_part
    from e2e.projects import LAB, make_project

    root = make_project(dest, runs={LAB: (LAB, CHAPTERS)})
    shutil.copytree(ROOT / "data" / "published", root / "data" / "published")
    add_toc_part(root, "About this build", ["provenance"])
    cmd = [sys.executable, "-m", "iscsi_report.cli", "--root", str(root), "book", "--jobs", "2"]
    subprocess.run(cmd, check=True)


def tree_digest(html: Path) -> dict[str, str]:
    """sha256 of every file under ``html`` by relative path (the build stamp left out)."""
    return {
        p.relative_to(html).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(html.rglob("*"))
        if p.is_file() and p.name != ".build-key"
    }


def compare(a: Path, b: Path) -> int:
    """Print the files that differ between two built sites; 0 when none does."""
    da, db = tree_digest(a.resolve()), tree_digest(b.resolve())
    differ = sorted(k for k in da.keys() | db.keys() if da.get(k) != db.get(k))
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(da)} files against {len(db)}; {len(differ)} differ")
    return 1 if differ else 0


def sphinx(root: Path, out: Path, prof: Path) -> None:
    """Run the build's jupyter-book step for ``root`` in this process under cProfile."""
    import cProfile
    import os

    from jupyter_book.cli.main import main as jupyter_book

    from iscsi_report.core.paths import Project
    from iscsi_report.pipeline.build import build_env, jupyter_book_args

    project = Project.at(root)
    toc = project.build_dir / "toc" / "_toc.yml"
    toc = toc if toc.is_file() else project.book_dir / "_toc.yml"
    os.environ.update(build_env(project))  # the hash seed only matters to a new process: equal here
    os.chdir(root)
    args = jupyter_book_args(project, toc, out)
    profiler = cProfile.Profile()
    try:
        profiler.runcall(jupyter_book, args)
    except SystemExit as done:
        print(f"jupyter-book exited with {done.code}")
    finally:
        profiler.dump_stats(prof)


def parent(root: Path) -> None:
    """Print the CPU seconds of ``build_book``'s steps before its jupyter-book subprocess."""
    import functools
    import inspect
    import time

    from iscsi_report.core.paths import Project
    from iscsi_report.pipeline import build, provenance
    from iscsi_report.pipeline.params import parse_cache

    project = Project.at(root)
    started = time.process_time()
    if "used" in inspect.signature(build.prepare_toc).parameters:  # the datasets found once per build
        used = functools.cache(lambda: provenance.dataset_dirs(project))
        toc_path = build.prepare_toc(project, None, used)
        write = functools.partial(provenance.write_page, project, dirs=used())
    else:  # the code before that change
        toc_path = build.prepare_toc(project, None)
        write = functools.partial(provenance.write_page, project)
    build.check_toc(project, toc_path, None)
    build.input_key(project, toc_path)
    with parse_cache(project):
        write()
    print(f"parent steps: {time.process_time() - started:.2f} s of CPU")


def _children_cpu_s(pid: int) -> float:
    """CPU seconds of the reaped children of process ``pid`` (its ``cutime`` plus ``cstime``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def _build_cpu_s(root: Path, env: dict[str, str], server_pid: int) -> tuple[float, float, str]:
    """(wall s, CPU s, the site folder) of one ``build --force`` of ``root`` in ``env``."""
    import time

    before, server_before, started = os.times(), _children_cpu_s(server_pid), time.monotonic()
    cmd = [sys.executable, "-m", "iscsi_report.cli", "--root", str(root), "build", "--force"]
    done = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    wall, after = time.monotonic() - started, os.times()
    own = after.children_user + after.children_system - before.children_user - before.children_system
    site = (root / "_build" / "html").resolve()
    forked_note = "forked" if "forked from the warm pool" in done.stdout else "cold"
    return wall, own + _children_cpu_s(server_pid) - server_before, f"{forked_note} {site}"


def forked(root: Path, pairs: int) -> None:
    """Print the wall and CPU seconds of cold against forked ``build --force`` of ``root``, paired."""
    from iscsi_report.pipeline import warm

    served = warm.start_server()
    try:
        named = {**os.environ, warm.ZYGOTE_ENV: str(served.socket)}
        cold = {k: v for k, v in os.environ.items() if k != warm.ZYGOTE_ENV}
        wall, cpu, _ = _build_cpu_s(root, named, served.pid)
        print(f"first forked build (the server imports the builder's stack): {wall:.2f} s, {cpu:.2f} s CPU")
        for pair in range(pairs):
            runs = [_build_cpu_s(root, env, served.pid) for env in (cold, named)]
            said = [f"{note.split()[0]} {w:.2f} s, {c:.2f} s CPU" for w, c, note in runs]
            same = compare(Path(runs[0][2].split()[1]), Path(runs[1][2].split()[1])) == 0
            print(f"pair {pair + 1}: {'; '.join(said)}; same bytes: {same}")
    finally:
        served.stop()


def main(argv: list[str]) -> int:
    """``setup DEST``, ``compare A B``, ``sphinx ROOT OUT PROF``, ``parent ROOT`` or ``forked ROOT PAIRS``."""
    if argv[:1] == ["setup"] and len(argv) == 2:
        setup(Path(argv[1]))
        return 0
    if argv[:1] == ["sphinx"] and len(argv) == 4:
        sphinx(Path(argv[1]), Path(argv[2]), Path(argv[3]))
        return 0
    if argv[:1] == ["parent"] and len(argv) == 2:
        parent(Path(argv[1]))
        return 0
    if argv[:1] == ["forked"] and len(argv) == 3:
        forked(Path(argv[1]), int(argv[2]))
        return 0
    if argv[:1] == ["compare"] and len(argv) == 3:
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
