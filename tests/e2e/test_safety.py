"""Safe under faults: read-only raw data, reproducible tables, interrupts, kernel deaths, a full
disk, concurrent runs, hanging cells and malformed params, each on a small throwaway project.

Most fault tests clone one tiny built project (one fast chapter, a site already published) so
that each starts from "a previous site exists" without paying for a build. The read-only and
same-tables checks read the two lab copies ``test_reproducible_site.py`` compares (``lab_pair``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
import yaml

from iscsi_report.core.digest import code_digest
from iscsi_report.core.paths import Project
from iscsi_report.pipeline import batch, cache, warm
from iscsi_report.pipeline.build import STAMP_FILE, input_key
from iscsi_report.pipeline.params import discover, jobs_for

from .lab_pair import LabPair, lab_pair
from .projects import LAB, ROOT, add_notebook, cli, make_project, parent_pid

pytestmark = [pytest.mark.e2e]

RUN = "t"
WAIT_S = 600  # upper bound for a state the test waits for (never a timed assertion)
POLL_S = 0.02
QUICK = (
    "import pandas as pd\nfrom iscsi_report.presentation import report\n"
    "ctx = report.start(run_name, dataset, project_root, results_dir or None)\n"
    "ctx.table(pd.DataFrame({'x_ms': [1.5, 2.25]}), 'quick_table')"
)
# Writes a table, records the kernel's pid, then waits while the file `hold` exists.
SLEEPY = (
    "import os, pathlib, time\nimport pandas as pd\nfrom iscsi_report.presentation import report\n"
    "ctx = report.start(run_name, dataset, project_root, results_dir or None)\n"
    "ctx.table(pd.DataFrame({'y_ms': [3.0]}), 'sleepy_table')\n"
    "root = pathlib.Path(project_root)\n"
    "(root / 'kernel.pid').write_text(str(os.getpid()))\n"
    "while (root / 'hold').exists():\n    time.sleep(0.05)"
)


# ------------------------------------------------------------------------------ helpers


def _set_chapters(project: Path, notebooks: list[str], timeout_s: int = 120) -> None:
    """Point run RUN's params file and the toc at exactly these notebooks."""
    doc = {"title": "tiny", "dataset": LAB, "timeout_s": timeout_s, "notebooks": notebooks}
    (project / "params" / f"{RUN}.yaml").write_text(yaml.safe_dump(doc))
    toc = {
        "format": "jb-book",
        "root": "intro",
        "parts": [{"caption": "Runs", "chapters": [{"file": f"runs/{RUN}/{nb}"} for nb in notebooks]}],
    }
    (project / "book" / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))


def _tiny_project(dest: Path) -> Path:
    project = make_project(dest, runs={RUN: (LAB, ["quick"])})
    add_notebook(project, "quick", QUICK)
    add_notebook(project, "sleepy", SLEEPY)
    return project


def _popen(project: Path, *args: str) -> subprocess.Popen[str]:
    """Start ``iscsi-report --root project ARGS`` in its own process group (like a shell job)."""
    return subprocess.Popen(
        [sys.executable, "-m", "iscsi_report.cli", "--root", str(project), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(POLL_S)


def _kernel_pid_written(project: Path) -> bool:
    """The sleepy cell has written its whole pid (write_text creates the file before it fills it)."""
    pid_file = project / "kernel.pid"
    return pid_file.is_file() and pid_file.read_text().strip().isdigit()


def _kill_kernel(project: Path) -> None:
    """Kill the sleepy kernel if it outlived its runner (its pid is in kernel.pid)."""
    pid_file = project / "kernel.pid"
    if pid_file.exists():
        with suppress(ProcessLookupError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def _forked_in(folder: Path) -> list[int]:
    """PIDs of the suite's fork server's children working in ``folder`` (there: a forked jupyter-book)."""
    server = warm.hello(Path(os.environ[warm.ZYGOTE_ENV]))["pid"]
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or parent_pid(int(entry.name)) != server:
            continue
        with suppress(OSError):  # gone meanwhile
            if Path(os.readlink(entry / "cwd")) == folder:
                found.append(int(entry.name))
    return found


def _live(project: Path) -> tuple[Path, bytes]:
    """The live site's folder and its index.html bytes."""
    html = project / "_build" / "html"
    return html.resolve(), (html / "index.html").read_bytes()


def _assert_site_valid(project: Path) -> None:
    """The live site is complete, built from the current inputs, and no half-built site lingers."""
    html = (project / "_build" / "html").resolve()
    assert (html / "index.html").is_file()
    proj = Project.at(project)
    assert (html / STAMP_FILE).read_text() == input_key(proj, proj.book_dir / "_toc.yml")
    for site in (project / "_build" / "sites").iterdir():
        assert (site / "_build" / "html" / STAMP_FILE).is_file(), f"half-built site left: {site}"


def _assert_nothing_published_for_sleepy(project: Path) -> None:
    assert not (project / "book" / "runs" / RUN / "sleepy.ipynb").exists()
    assert not (project / "results" / RUN / "sleepy_table.csv").exists()
    assert not (project / ".cache" / "runs" / RUN / "sleepy.json").exists()


def _recovers(project: Path) -> None:
    """With the hold released, a plain `book` finishes the job without any manual cleanup."""
    (project / "hold").unlink(missing_ok=True)
    result = cli(project, "book", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"queued  {RUN}/sleepy: never run" in result.stdout
    assert (project / "results" / RUN / "sleepy_table.csv").is_file()
    assert (project / "_build" / "html" / "runs" / RUN / "sleepy.html").is_file()
    assert not list((project / ".cache" / "exec").rglob("*.csv"))  # killed run's staging is gone
    _assert_site_valid(project)


@contextmanager
def _mounted(*commands: list[str], target: Path) -> Iterator[None]:
    """Run mount commands (root only), unmount ``target`` on exit."""
    try:
        for cmd in commands:
            subprocess.run(cmd, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"cannot mount here ({exc}); needs root with CAP_SYS_ADMIN")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False, capture_output=True)


def _can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


# ------------------------------------------------------------------------------ interrupts


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny project whose book is built: the 'previous site' every fault test must preserve."""
    project = _tiny_project(tmp_path_factory.mktemp("template"))
    result = cli(project, "book", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    return project


@pytest.fixture
def clone(template: Path, tmp_path: Path) -> Iterator[Path]:
    """A private copy of the built template (relative symlink and cache records stay valid)."""
    project = tmp_path / "proj"
    shutil.copytree(template, project, symlinks=True)
    yield project
    _kill_kernel(project)


def _start_sleepy(project: Path, *args: str) -> subprocess.Popen[str]:
    """Add the sleepy chapter, start a run, and return once its cell is running."""
    _set_chapters(project, ["quick", "sleepy"])
    (project / "hold").write_text("")
    proc = _popen(project, *args)
    _wait_for(lambda: _kernel_pid_written(project) or proc.poll() is not None, "the sleepy cell")
    assert proc.poll() is None, proc.communicate()
    return proc


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_interrupted_batch_keeps_site_and_next_run_recovers(clone: Path, sig: signal.Signals) -> None:
    before = _live(clone)
    proc = _start_sleepy(clone, "book", "--jobs", "2")
    staged = list((clone / ".cache" / "exec").rglob("sleepy_table.csv"))
    assert staged, "the sleepy cell should have staged a table before it blocked"
    os.killpg(proc.pid, sig)  # Ctrl-C reaches the whole process group; SIGKILL too, here
    _, err = proc.communicate(timeout=WAIT_S)
    _kill_kernel(clone)
    if sig == signal.SIGINT:
        assert proc.returncode == 130, err
        assert "interrupted" in err and "previous site is untouched" in err
    else:
        assert proc.returncode == -signal.SIGKILL
    assert _live(clone) == before
    _assert_nothing_published_for_sleepy(clone)
    assert cache.why_stale(Project.at(clone), _job(clone, "sleepy"), _code()) == "never run"
    _recovers(clone)


def _job(project: Path, notebook: str) -> batch.NotebookJob:
    p = Project.at(project)
    return next(j for spec in discover(p) for j in jobs_for(p, spec) if j.notebook == notebook)


def _code() -> str:
    """The package code digest the runner uses in its cache keys."""
    return code_digest(Project.at(ROOT).package_dir)


def test_build_killed_midway_keeps_site_and_next_run_recovers(clone: Path) -> None:
    before = _live(clone)
    intro = clone / "book" / "intro.md"
    intro.write_text(intro.read_text() + "\nOne more sentence, so the site must be rebuilt.\n")
    sites = clone / "_build" / "sites"
    existing = set(sites.iterdir())
    assert os.environ.get(warm.ZYGOTE_ENV), "the suite names a fork server: the build is forked from it"
    proc = _popen(clone, "book", "--jobs", "2")
    _wait_for(lambda: set(sites.iterdir()) - existing or proc.poll() is not None, "the build to start")
    _wait_for(lambda: _forked_in(clone.resolve()) or proc.poll() is not None, "the forked jupyter-book")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=WAIT_S)
    assert proc.returncode == -signal.SIGKILL
    _wait_for(lambda: not _forked_in(clone.resolve()), "the forked build to die with its book")
    assert _live(clone) == before
    assert set(sites.iterdir()) - existing, "the killed build should leave its half-built folder"
    result = cli(clone, "book", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "One more sentence" in (clone / "_build" / "html" / "intro.html").read_text()
    _assert_site_valid(clone)  # the half-built folder was pruned, not kept as "the previous site"


def test_kernel_killed_mid_cell_fails_clearly_and_next_run_recovers(clone: Path) -> None:
    before = _live(clone)
    proc = _start_sleepy(clone, "book", "--jobs", "2")
    os.kill(int((clone / "kernel.pid").read_text()), signal.SIGKILL)
    out, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 1, out + err
    assert f"FAILED {RUN}/sleepy: cell 2 [import os, pathlib, time]: the kernel died" in out
    assert "the previous site is untouched" in err
    assert _live(clone) == before
    _assert_nothing_published_for_sleepy(clone)
    _recovers(clone)


def test_cache_record_is_written_last(clone: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Die just before the record: outputs are in place, yet the run is not taken as finished."""
    project = Project.at(clone)
    _set_chapters(clone, ["quick", "sleepy"])
    job = _job(clone, "sleepy")
    seen = {}

    def die_instead_of_recording(project_: Project, job_: batch.NotebookJob, record: cache.Record) -> None:
        seen.update(record.outputs)
        seen["published"] = all(
            cache.digests(project_, list(record.outputs)).get(k) == v for k, v in record.outputs.items()
        )
        raise KeyboardInterrupt  # as if killed here

    monkeypatch.setattr(cache, "save_record", die_instead_of_recording)
    with pytest.raises(KeyboardInterrupt):
        batch.run_jobs(project, [job], 1, stream=open(os.devnull, "w"))  # noqa: SIM115
    assert seen.pop("published") is True  # every output was already published when the record was due
    assert f"results/{RUN}/sleepy_table.csv" in seen
    monkeypatch.undo()
    assert cache.why_stale(project, job, _code()) == "never run"
    result = cli(clone, "run")
    assert f"queued  {RUN}/sleepy: never run" in result.stdout, result.stdout + result.stderr


def test_two_books_at_once_wait_for_each_other(clone: Path) -> None:
    exec_dir = clone / ".cache" / "exec"
    shutil.rmtree(exec_dir, ignore_errors=True)  # reappears once the first run holds the lock
    first = _popen(clone, "book", "--force", "--jobs", "2")
    _wait_for(lambda: exec_dir.is_dir() or first.poll() is not None, "the first run to take the lock")
    second = _popen(clone, "book", "--force", "--jobs", "2")
    out1, err1 = first.communicate(timeout=WAIT_S)
    out2, err2 = second.communicate(timeout=WAIT_S)
    assert first.returncode == 0, out1 + err1
    assert second.returncode == 0, out2 + err2
    assert "waiting for another run to finish" in err2
    assert f"queued  {RUN}/quick: forced" in out2 and "book: built" in out2
    _assert_site_valid(clone)


# ------------------------------------------------------------------------------ full disk


def test_full_disk_during_build_keeps_site_and_says_so(clone: Path) -> None:
    if not _can_mount():
        pytest.skip("simulating a full disk needs root to mount a tmpfs")
    build = clone / "_build"
    shutil.rmtree(build)
    build.mkdir()
    with _mounted(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(build)], target=build):
        result = cli(clone, "build")  # the first site, inside the tmpfs
        assert result.returncode == 0, result.stdout + result.stderr
        before = _live(clone)
        used_kib = int(
            subprocess.run(
                ["du", "-sk", str(build)], capture_output=True, text=True, check=True
            ).stdout.split()[0]
        )
        subprocess.run(["mount", "-o", f"remount,size={used_kib + 256}k", str(build)], check=True)
        intro = clone / "book" / "intro.md"
        intro.write_text(intro.read_text() + "\nA change that needs a new site.\n")
        result = cli(clone, "build")
        assert result.returncode == 1, result.stdout + result.stderr
        assert "No space left on device" in result.stdout
        assert "build FAILED; the previous site is untouched" in result.stdout
        assert _live(clone) == before
        subprocess.run(["mount", "-o", "remount,size=64m", str(build)], check=True)
        result = cli(clone, "build")  # room again: the next build just works
        assert result.returncode == 0, result.stdout + result.stderr
        _assert_site_valid(clone)


# ------------------------------------------------------------------------------ hangs and bad params


def test_hanging_cell_is_stopped_by_the_timeout_with_run_and_cell_named(clone: Path) -> None:
    add_notebook(clone, "hang", "import time\ntime.sleep(3600)")
    _set_chapters(clone, ["quick", "hang"], timeout_s=3)
    result = cli(clone, "run", "--jobs", "2")
    assert result.returncode == 1
    assert (
        f"FAILED {RUN}/hang: cell 2 [import time]: timed out after 3 s (the execution timeout, "
        f"`timeout_s` in params/{RUN}.yaml)"
    ) in result.stdout
    assert not (clone / "book" / "runs" / RUN / "hang.ipynb").exists()


def _bad_params(project: Path, edit) -> tuple[Path, subprocess.CompletedProcess[str]]:
    path = project / "params" / f"{LAB}.yaml"
    doc = yaml.safe_load(path.read_text())
    edit(doc)
    path.write_text(yaml.safe_dump(doc))
    return path, cli(project, "book")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d.update(notebooks=[{"storage": {"ci_level": "high"}}]),
            "notebooks.storage.ci_level: expected float, got str 'high'",
        ),
        (lambda d: d.update(timeout=30), "unknown key 'timeout'"),
        (lambda d: d.update(timeout_s="5 minutes"), "key 'timeout_s': expected a positive integer"),
    ],
    ids=["wrong-type", "unknown-top-level-key", "wrong-type-top-level"],
)
def test_malformed_params_fail_before_any_notebook_runs(tmp_path: Path, edit, message: str) -> None:
    project = make_project(tmp_path)
    path, result = _bad_params(project, edit)
    assert result.returncode == 2
    # the file, the line of the offending key when it has one, then what was expected
    assert re.search(rf"{re.escape(str(path))}(:\d+)?: {re.escape(message)}", result.stderr), result.stderr
    assert not (project / "book" / "runs").exists()
    assert not (project / ".cache" / "exec").exists()


# ------------------------------------------------------------------------------ raw data, reproducibility
# Last in the file: the pair is built once per test run and shared with test_reproducible_site.py;
# on another worker it may still be building, and the tests above need none of it.


@pytest.fixture(scope="module")
def two_copies(tmp_path_factory: pytest.TempPathFactory) -> LabPair:
    """Two copies of the lab project at different paths; the first was built with data/raw read-only."""
    return lab_pair(tmp_path_factory)


def test_pipeline_runs_with_raw_data_read_only_and_never_changes_it(two_copies: LabPair) -> None:
    result = two_copies.first_build
    assert result.returncode == 0, result.stdout + result.stderr
    assert two_copies.raw_after == two_copies.raw_before  # same files, same bytes
    assert len(two_copies.raw_before) > 10
    if two_copies.protection.startswith("none"):
        pytest.skip(f"raw files unchanged, but writes could not be blocked: {two_copies.protection}")
    assert two_copies.write_error in ("Read-only file system", "Permission denied")  # really blocked


def test_same_inputs_give_byte_identical_tables(two_copies: LabPair) -> None:
    second_result = two_copies.second_build
    assert second_result.returncode == 0, second_result.stdout + second_result.stderr
    first = two_copies.first / "results" / LAB
    second = two_copies.second / "results" / LAB
    names = sorted(p.name for p in first.glob("*.csv"))
    assert names and names == sorted(p.name for p in second.glob("*.csv"))
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
