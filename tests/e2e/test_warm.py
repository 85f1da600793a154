"""The warm kernel pool (issue 28): forked kernels give a cold kernel's results, and nothing leaks.

Every notebook's kernel is forked from one fork server ("zygote") per executing process. These tests
run real batches on small throwaway projects: the chapters of one params file executed cold
publish the same bytes as the study executed warm once per test run (``projects.shared_study``);
a notebook that pollutes its process (a pandas option, the working folder, module globals) leaves
the next notebook untouched; a crashed kernel, and a crashed zygote, fail only their own
notebook; ``--cold`` never uses the zygote. A fork server named in ``warm.ZYGOTE_ENV`` (the suite
names one for its whole run, ``tests/conftest.py``) forks every notebook of any batch, each with the
caller's PYTHONPATH; a dead one is said once and the batch runs as without it. Tests of a process's
own zygote run without the shared one.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
import yaml

from iscsi_report.pipeline import warm

from .projects import (
    LAB,
    add_notebook,
    cli,
    copy_package,
    make_project,
    make_study_project,
    shared_study,
    without_named_zygote,
)

pytestmark = [pytest.mark.e2e]

RUN = "t"
SMALL_RUN = LAB  # the params file whose every chapter is compared warm against cold (runs in seconds)
# Records what a notebook's process looks like: the pandas option, working folder and module globals
# a polluting notebook changes, and the kernel's parent (the zygote when warm, papermill when cold).
PROBE = (
    "import json, os, pathlib\nimport numpy as np\nimport pandas as pd\n"
    "from iscsi_report.presentation import report\n"
    "parent = pathlib.Path(f'/proc/{os.getppid()}/cmdline').read_bytes().replace(b'\\0', b' ').decode()\n"
    "seen = {'max_columns': pd.get_option('display.max_columns'),\n"
    "        'cwd_is_root': os.path.samefile(os.getcwd(), project_root),\n"
    "        'numpy_polluted': hasattr(np, 'polluted'), 'report_polluted': hasattr(report, 'polluted'),\n"
    "        'parent_pid': os.getppid(), 'parent': parent}\n"
    "pathlib.Path(project_root, f'probe-{run_name}.json').write_text(json.dumps(seen))"
)
POLLUTE = (
    "import os, pathlib\nimport numpy as np\nimport pandas as pd\n"
    "from iscsi_report.presentation import report\n"
    "pathlib.Path(project_root, 'polluter.pid').write_text(str(os.getppid()))\n"
    "pd.set_option('display.max_columns', 3)\nnp.polluted = True\nreport.polluted = True\nos.chdir('/')"
)
CRASH_KERNEL = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"
CRASH_ZYGOTE = (  # warm: the kernel's parent is the zygote
    "import os, pathlib, signal\npathlib.Path(project_root, 'zygote.pid').write_text(str(os.getppid()))\n"
    "os.kill(os.getppid(), signal.SIGKILL)"
)
ZYGOTE_MARK = "zygote.py serve"  # in the zygote's command line
# What a fresh process would import from: the kernel's sys.path and where the project's package came from.
PATHS = (
    "import json, os, pathlib, sys\nimport iscsi_report\n"
    "seen = {'sys_path': sys.path, 'package': iscsi_report.__file__, 'parent_pid': os.getppid()}\n"
    "pathlib.Path(project_root, f'paths-{run_name}.json').write_text(json.dumps(seen))"
)
NOT_USED = "is not used"  # in the message about a named fork server that cannot be used


def _project(dest: Path, notebooks: list[str]) -> Path:
    """A tiny project whose one run executes ``notebooks`` in this order (with ``--jobs 1``)."""
    project = make_project(dest, runs={RUN: (LAB, notebooks)})
    for name, code in (
        ("probe", PROBE),
        ("pollute", POLLUTE),
        ("crash", CRASH_KERNEL),
        ("zkill", CRASH_ZYGOTE),
        ("paths", PATHS),
    ):
        add_notebook(project, name, code)
    return project


def _probe(project: Path) -> dict[str, object]:
    seen: dict[str, object] = json.loads((project / f"probe-{RUN}.json").read_text())
    return seen


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_every_chapter_of_a_run_publishes_the_same_bytes_warm_and_cold(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # warm: the study the chapter tests execute once per test run, every params file, with --warm
    warm, warm_stdout = shared_study(tmp_path_factory)
    assert "kernel pool unavailable" not in warm_stdout
    cold = make_study_project(tmp_path / "cold")
    result = cli(cold, "run", SMALL_RUN, "--jobs", "2", "--cold")
    assert result.returncode == 0, result.stdout + result.stderr
    outputs = {
        mode: (_digests(root / "book" / "runs" / SMALL_RUN), _digests(root / "results" / SMALL_RUN))
        for mode, root in (("warm", warm), ("cold", cold))
    }
    chapters = yaml.safe_load((cold / "params" / f"{SMALL_RUN}.yaml").read_text())["notebooks"]
    notebooks, tables = outputs["cold"]
    assert sorted(notebooks) == sorted(f"{nb}.ipynb" for nb in chapters)
    assert tables, "the run should publish CSV tables"
    assert outputs["warm"] == outputs["cold"]


@pytest.mark.parametrize("mode", ["warm", "cold"])
def test_a_polluting_notebook_does_not_reach_the_next_one(tmp_path: Path, mode: str) -> None:
    project = _project(tmp_path / "p", ["pollute", "probe"])
    result = cli(project, "run", "--jobs", "1", f"--{mode}")
    assert result.returncode == 0, result.stdout + result.stderr
    seen = _probe(project)
    assert seen["max_columns"] == 20  # pandas' default in a Jupyter kernel, not the polluter's 3
    assert seen["cwd_is_root"] is True
    assert seen["numpy_polluted"] is False and seen["report_polluted"] is False
    if mode == "warm":  # the same zygote forked both kernels
        assert ZYGOTE_MARK in str(seen["parent"])
        assert int((project / "polluter.pid").read_text()) == seen["parent_pid"]
    else:  # --cold never asks a zygote: the kernel's parent is papermill's own process
        assert ZYGOTE_MARK not in str(seen["parent"]) and "papermill" in str(seen["parent"])


def test_a_crashed_kernel_fails_its_notebook_and_the_next_gets_a_fresh_one(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", ["crash", "probe"])
    result = cli(project, "run", "--jobs", "1", "--warm")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"FAILED {RUN}/crash: cell 2 [import os, signal]: the kernel died" in result.stdout
    assert f"{RUN:24} {'probe':18}" in result.stdout and (project / f"probe-{RUN}.json").is_file()
    assert ZYGOTE_MARK in str(_probe(project)["parent"])


def test_a_crashed_zygote_fails_its_notebook_and_is_restarted(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", ["zkill", "probe"])
    # the batch's own zygote: never the suite's shared one
    result = cli(project, "run", "--jobs", "1", "--warm", env=without_named_zygote())
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"FAILED {RUN}/zkill:" in result.stdout
    assert "fork server died" in result.stdout
    seen = _probe(project)  # the next notebook ran, in a kernel forked by a new zygote
    assert ZYGOTE_MARK in str(seen["parent"])
    assert seen["parent_pid"] != int((project / "zygote.pid").read_text())
    assert not (project / "book" / "runs" / RUN / "zkill.ipynb").exists()
    assert (project / "book" / "runs" / RUN / "probe.ipynb").is_file()


def test_a_small_local_batch_starts_cold_unless_asked(tmp_path: Path) -> None:
    # the fork server costs more to start than a few notebooks save (batch.WARM_MIN_LOCAL_NOTEBOOKS)
    project = _project(tmp_path / "p", ["probe"])
    result = cli(project, "run", "--jobs", "1", env=without_named_zygote())
    assert result.returncode == 0, result.stdout + result.stderr
    parent = str(_probe(project)["parent"])
    assert ZYGOTE_MARK not in parent and "papermill" in parent


def _named() -> Path:
    """The suite's shared fork server (tests/conftest.py), which these tests must never stop."""
    named = os.environ.get(warm.ZYGOTE_ENV)
    assert named, f"the suite names a shared fork server in {warm.ZYGOTE_ENV}"
    return Path(named)


def test_a_named_server_forks_a_one_notebook_batch_and_outlives_it(tmp_path: Path) -> None:
    named = _named()
    server_pid = warm.hello(named)["pid"]
    project = _project(tmp_path / "p", ["probe"])
    result = cli(project, "run", "--jobs", "1")  # one notebook: cold without a named server
    assert result.returncode == 0, result.stdout + result.stderr
    assert NOT_USED not in result.stderr and "kernel pool unavailable" not in result.stdout
    seen = _probe(project)
    assert seen["parent_pid"] == server_pid and ZYGOTE_MARK in str(seen["parent"])
    assert warm.hello(named)["pid"] == server_pid  # the batch left it running


def test_a_dead_named_server_is_said_once_and_the_batch_runs_as_without_it(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", ["probe", "pollute"])
    gone = tmp_path / "gone.sock"  # nothing listens here
    env = {**without_named_zygote(), warm.ZYGOTE_ENV: str(gone)}
    result = cli(project, "run", "--jobs", "1", env=env)  # two notebooks: cold, as without it
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.count(NOT_USED) == 1 and str(gone) in result.stderr
    parent = str(_probe(project)["parent"])
    assert ZYGOTE_MARK not in parent and "papermill" in parent
    warm_run = cli(project, "run", "--jobs", "1", "--force", "--warm", env=env)  # its own zygote
    assert warm_run.returncode == 0, warm_run.stdout + warm_run.stderr
    assert warm_run.stderr.count(NOT_USED) == 1
    seen = _probe(project)
    assert ZYGOTE_MARK in str(seen["parent"]) and seen["parent_pid"] != warm.hello(_named())["pid"]


@pytest.mark.parametrize("how", ["--cold", warm.COLD_ENV])
def test_cold_never_asks_a_named_server(tmp_path: Path, how: str) -> None:
    _named()
    project = _project(tmp_path / "p", ["probe"])
    # the environment's switch wins even over --warm
    env = {**os.environ, warm.COLD_ENV: "1"} if how == warm.COLD_ENV else None
    result = cli(project, "run", "--jobs", "1", "--cold" if how == "--cold" else "--warm", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    parent = str(_probe(project)["parent"])
    assert ZYGOTE_MARK not in parent and "papermill" in parent
    assert NOT_USED not in result.stderr


def test_a_forked_kernel_gets_the_callers_pythonpath_not_the_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a server started with its own PYTHONPATH, serving a caller that imports a private copy of the package
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(elsewhere))
    served = warm.start_server()
    try:
        project = _project(tmp_path / "p", ["paths"])
        env = without_named_zygote(copy_package(project))
        result = cli(project, "run", "--jobs", "1", env={**env, warm.ZYGOTE_ENV: str(served.socket)})
        assert result.returncode == 0, result.stdout + result.stderr
        assert NOT_USED not in result.stderr
        forked = json.loads((project / f"paths-{RUN}.json").read_text())
        result = cli(project, "run", "--jobs", "1", "--force", "--cold", env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        cold = json.loads((project / f"paths-{RUN}.json").read_text())
    finally:
        served.stop()
    assert forked["parent_pid"] == served.pid and cold["parent_pid"] != served.pid
    assert forked["package"] == cold["package"]
    assert Path(forked["package"]).is_relative_to(project / "src")
    assert str(elsewhere) not in forked["sys_path"]
    assert forked["sys_path"] == cold["sys_path"]
