"""The warm pool's executing side without notebooks: a zygote that cannot start makes the process run cold."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iscsi_report.pipeline import execute, warm, zygote


def test_a_zygote_that_cannot_start_is_reported_once_then_refused_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(zygote, "BOOT", "import sys\nprint('no stack here', file=sys.stderr)\nsys.exit(3)")
    pool = warm.Zygote()
    with pytest.raises(OSError, match="did not start: no stack here"):
        pool.socket_path()
    assert pool.starts == 1 and pool.pid() is None
    with pytest.raises(OSError, match="did not start"):  # not started again: the process runs cold
        pool.socket_path()
    assert pool.starts == 1


def test_the_cold_switch_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(warm.COLD_ENV, raising=False)
    assert not warm.cold_by_default()
    monkeypatch.setenv(warm.COLD_ENV, "1")
    assert warm.cold_by_default()


def test_kernels_get_one_blas_thread_unless_the_environment_sets_a_count(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("PYTHONHASHSEED", "7")
    env = execute.kernel_env(tmp_path)
    assert env["OPENBLAS_NUM_THREADS"] == "1" and env["PYTHONHASHSEED"] == "0"
    assert env["JUPYTER_PATH"] == str(tmp_path)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert execute.kernel_env(tmp_path)["OPENBLAS_NUM_THREADS"] == "2"


def test_the_zygote_starts_with_one_blas_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    boot = (
        "import os, sys\nprint('threads', os.environ['OPENBLAS_NUM_THREADS'], file=sys.stderr)\nsys.exit(3)"
    )
    monkeypatch.setattr(zygote, "BOOT", boot)
    with pytest.raises(OSError, match="did not start: threads 1"):
        warm.Zygote().socket_path()


@pytest.mark.parametrize(
    "pythonpath",
    ["", "/a/b", "rel:/a/b/", ":/a::/a", "/a:{site}", "{site}:/a", "{stdlib}"],
)
def test_a_childs_sys_path_is_the_one_a_fresh_interpreter_builds(tmp_path: Path, pythonpath: str) -> None:
    base = zygote.base_sys_path()
    site = next(p for p in base if p.endswith("site-packages"))
    stdlib = next(p for p in base if p.endswith(f"python{sys.version_info[0]}.{sys.version_info[1]}"))
    pythonpath = pythonpath.format(site=site, stdlib=stdlib)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    fresh = subprocess.run(
        [sys.executable, "-c", zygote.BASE_PATH_PROBE],
        env={**env, "PYTHONPATH": pythonpath},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    expected = json.loads(fresh.stdout)
    old = Path.cwd()
    os.chdir(tmp_path)  # relative and empty entries are the folder's
    try:
        assert zygote.fresh_sys_path(pythonpath, base) == expected
    finally:
        os.chdir(old)


def _about(**changes: object) -> dict[str, object]:
    """A fit zygote's answer for this process, with ``changes``."""
    base = zygote.base_sys_path()
    doc: dict[str, object] = {
        "executable": sys.executable,
        "start_env": zygote.start_environ(zygote.kernel_environ(os.environ)),
        "base": base,
        "modules": ["pandas", "yaml"],
        "from_own_pythonpath": [],
        "pythonpath": "",
    }
    return {**doc, **changes}


def test_a_named_zygote_is_refused_when_a_fresh_process_would_differ(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert warm.unfit(_about(), os.environ, tmp_path) == ""
    assert "python9" in warm.unfit(_about(executable="/opt/python9"), os.environ, tmp_path)
    changed = {**zygote.start_environ(zygote.kernel_environ(os.environ)), "PYTHONHASHSEED": "7"}
    assert "PYTHONHASHSEED" in warm.unfit(_about(start_env=changed), os.environ, tmp_path)
    (tmp_path / "lib" / "yaml").mkdir(parents=True)  # would import another yaml than the zygote preloaded
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "lib"))
    assert "holds yaml" in warm.unfit(_about(), os.environ, tmp_path)
    monkeypatch.setenv("PYTHONPATH", "lib")  # relative: the notebooks' folder's, as a fresh process's
    assert "holds yaml" in warm.unfit(_about(), os.environ, tmp_path)
    assert warm.unfit(_about(), os.environ, tmp_path / "lib") == ""
    own = _about(from_own_pythonpath=["yaml"], pythonpath="/x")
    assert "own PYTHONPATH" in warm.unfit(own, os.environ, tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "src"))  # a copy of the project: nothing preloaded in it
    assert warm.unfit(_about(), os.environ, tmp_path) == ""


def test_a_named_zygote_that_does_not_answer_is_said_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(warm.ZYGOTE_ENV, str(tmp_path / "gone.sock"))
    named = warm.Named()
    assert named.socket(tmp_path) is None and named.socket(tmp_path / "other") is None
    assert capsys.readouterr().err.count("is not used: no answer") == 1
    assert "no answer" in named.refusal


def test_the_zygote_compiles_the_notebook_validator_a_papermill_child_reads_with() -> None:
    # the zygote's preload keeps the compiled schema validator; a child reading a notebook must find it
    # under the very key its read asks for (a key mismatch would leave every child compiling its own)
    probe = (
        "import runpy, sys\n"
        f"z = runpy.run_path({str(zygote.__file__)!r})\n"
        "from nbformat import validator\n"
        "z['warm_validator']()\n"
        "kept = set(validator.validators)\n"
        "import nbformat\n"
        "nbformat.reads(nbformat.writes(nbformat.v4.new_notebook()), as_version=4)\n"
        "print(len(kept), set(validator.validators) == kept)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "True"]


def test_a_build_is_forked_only_from_a_zygote_that_already_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # nothing named and none started by this process: the caller builds cold (no zygote started for it)
    monkeypatch.delenv(warm.ZYGOTE_ENV, raising=False)
    monkeypatch.delenv(warm.COLD_ENV, raising=False)
    monkeypatch.setattr(warm, "NAMED", warm.Named())
    monkeypatch.setattr(warm, "ZYGOTE", warm.Zygote())
    with open(tmp_path / "out", "wb") as out:
        assert warm.spawn_build(["--version"], dict(os.environ), (out, out), tmp_path) is None
    assert warm.ZYGOTE.starts == 0


def test_a_forked_build_says_what_a_fresh_jupyter_book_says_and_cold_never_forks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(warm.COLD_ENV, raising=False)
    monkeypatch.setattr(warm, "NAMED", warm.Named())
    named = os.environ.get(warm.ZYGOTE_ENV, "")  # the suite's shared server when e2e tests run too
    served = None if named else warm.start_server()
    try:
        monkeypatch.setenv(warm.ZYGOTE_ENV, str(served.socket) if served is not None else named)
        with open(tmp_path / "out", "w+b") as out, open(tmp_path / "err", "w+b") as err:
            forked = warm.spawn_build(["--version"], dict(os.environ), (out, err), tmp_path)
            assert forked is not None and forked.wait(timeout=120) == 0
        monkeypatch.setenv(warm.COLD_ENV, "1")
        with open(tmp_path / "cold", "wb") as out:
            assert warm.spawn_build(["--version"], dict(os.environ), (out, out), tmp_path) is None
    finally:
        if served is not None:
            served.stop()
    fresh = subprocess.run(
        [sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "--version"],
        capture_output=True,
        check=True,
    )
    assert (tmp_path / "out").read_bytes() == fresh.stdout and b"Jupyter Book" in fresh.stdout
    assert (tmp_path / "err").read_bytes() == fresh.stderr
