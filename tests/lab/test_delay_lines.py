"""The lab's two delay lines: which one a lab and a sweep run, and the compiled one's refusals."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from iscsi_report.cli import build_parser
from iscsi_report.lab import build, topology


def _lab(line: str) -> topology.Lab:
    """A Lab object that is never brought up (no root, no namespaces)."""
    tools = SimpleNamespace(delayline=Path("/x/delayline"))
    return topology.Lab(tools, lambda _: None, delay_line=line)  # type: ignore[arg-type]


def test_a_lab_runs_the_named_delay_line_and_refuses_an_unknown_one() -> None:
    assert _lab("compiled").delay_line_cmd()[0] == "/x/delayline"
    assert _lab("python").delay_line_cmd()[1:3] == ["-m", "iscsi_report.lab.delayline"]
    for line in topology.DELAY_LINES:
        cmd = _lab(line).delay_line_cmd()
        assert cmd[-6:] == ["--ns-b", topology.NS_TGT, "--dev", topology.TUN_DEV, "--params", cmd[-1]]
    with pytest.raises(ValueError, match=r"delay line 'netem': expected one of \('compiled', 'python'\)"):
        _lab("netem")


def test_only_the_python_line_takes_a_jitter() -> None:
    with pytest.raises(ValueError, match="jitter shape 'gamma' needs the Python delay line"):
        _lab("compiled").set_jitter({"shape": "gamma", "k": 2.0, "theta_ms": 0.1})
    compiled = _lab("compiled")
    compiled.set_jitter({"shape": "fixed"})  # no extra delay: the compiled line can do that
    assert compiled.jitter == {"shape": "fixed"}
    python = _lab("python")
    python.set_jitter({"shape": "gamma", "k": 2.0, "theta_ms": 0.1})
    assert python.jitter == {"shape": "gamma", "k": 2.0, "theta_ms": 0.1}


@pytest.mark.parametrize(
    ("extra", "line"),
    [([], None), (["--delay-line", "python"], "python"), (["--delay-line", "compiled"], "compiled")],
)
def test_lab_run_parses_the_delay_line(extra: list[str], line: str | None) -> None:
    args = build_parser("lab").parse_args(["lab", "run", "--out", "X", *extra])
    assert args.delay_line == line
    assert topology.DEFAULT_DELAY_LINE == "python", "the steadier line (delay-line-scatter), and jitter's"


def test_lab_run_refuses_a_jitter_sweep_on_the_compiled_line(tmp_path: Path) -> None:
    from iscsi_report.cli import lab as cli_lab

    args = build_parser("lab").parse_args(
        ["lab", "run", "--out", str(tmp_path / "x"), "--jitter", "1", "--delay-line", "compiled"]
    )
    with pytest.raises(SystemExit, match="only the Python delay line does"):
        cli_lab.run_sweep(args, SimpleNamespace(), str(tmp_path))  # type: ignore[arg-type]
    assert not (tmp_path / "x").exists()  # refused before the folder is cleaned or the lab comes up


@pytest.fixture(scope="module")
def compiled_line(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compiled delay line built from the project's source into a scratch cache."""
    if shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    cache = tmp_path_factory.mktemp("lab-cache")
    return build.build_delayline(cache, cache / "build.log", lambda _: None)


def test_the_compiled_line_refuses_a_jittered_params_file_before_it_opens_a_device(
    compiled_line: Path, tmp_path: Path
) -> None:
    params = tmp_path / "delayline.json"
    params.write_text(
        json.dumps({"one_way_delay_ms": 1.0, "link_mbps": 1000, "jitter": {"shape": "lognormal"}})
    )
    res = subprocess.run(
        [str(compiled_line), "--ns-b", "no-such-namespace", "--params", str(params)],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    assert res.returncode == 2
    assert f"{params} asks for a jitter; the compiled line draws none" in res.stdout


def test_the_compiled_line_names_its_usage_without_a_namespace(compiled_line: Path) -> None:
    res = subprocess.run([str(compiled_line)], capture_output=True, text=True, timeout=10, check=False)
    assert res.returncode == 2 and "usage: delayline --ns-b NAME" in res.stderr


def test_a_native_build_is_reused_until_its_source_changes(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    src = tmp_path / "prog.c"
    src.write_text("int main(void) { return 0; }\n")
    said: list[str] = []
    first = build.build_native(tmp_path, tmp_path / "log", said.append, "prog", src, ("-O0",), [])
    again = build.build_native(tmp_path, tmp_path / "log", said.append, "prog", src, ("-O0",), [])
    assert first == again and len(said) == 1
    src.write_text("int main(void) { return 1; }\n")
    changed = build.build_native(tmp_path, tmp_path / "log", said.append, "prog", src, ("-O0",), [])
    assert changed != first and len(said) == 2
    assert subprocess.run([str(changed)], check=False).returncode == 1
