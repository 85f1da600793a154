"""The papermill engine of every batch: ready as soon as the kernel answers, same words on failure."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from iscsi_report.pipeline import diagnose, execute, zygote
from iscsi_report.pipeline.nbengine import QuickKernelClient, QuickKernelManager

STARTUP_TIMEOUT_S = 60


async def _start_and_run(code: str) -> tuple[QuickKernelManager, dict[str, object]]:
    """A kernel started by the quick manager, ``code`` executed once it is ready: (manager, reply content)."""
    km = QuickKernelManager(kernel_name="python3")
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=STARTUP_TIMEOUT_S)
        reply = await kc.execute(code, reply=True, timeout=STARTUP_TIMEOUT_S)
    finally:
        kc.stop_channels()
    return km, reply["content"]


def test_the_manager_hands_out_the_quick_client_and_a_kernel_runs_code_once_ready() -> None:
    async def go() -> dict[str, object]:
        km, content = await _start_and_run("6 * 7")
        assert isinstance(km.client(), QuickKernelClient)
        await km.shutdown_kernel(now=True)
        return content

    assert asyncio.run(go())["status"] == "ok"


def test_a_kernel_that_dies_at_start_fails_in_the_words_the_batch_retries_on() -> None:
    async def go() -> str:
        km = QuickKernelManager(kernel_name="python3")
        await km.start_kernel()
        kc = km.client()
        kc.start_channels()
        await km.shutdown_kernel(now=True)  # gone before it could answer kernel_info
        try:
            with pytest.raises(RuntimeError) as info:
                await kc.wait_for_ready(timeout=STARTUP_TIMEOUT_S)
        finally:
            kc.stop_channels()
        return str(info.value)

    message = asyncio.run(go())
    assert any(marker in message for marker in diagnose.KERNEL_START_FAILURES), message


def test_every_papermill_process_the_batch_starts_makes_it_the_default_engine() -> None:
    # the cold boot and the zygote's papermill child load the same file by path; run the cold boot's
    # registration in a fresh process and ask papermill which engine it would use
    probe = (
        "import runpy, sys\n"
        f"runpy.run_path({str(zygote.ENGINE_FILE)!r})['register']()\n"
        "from papermill.engines import papermill_engines\n"
        "get = papermill_engines.get_engine\n"
        "print(get(None).__name__, get('iscsi-report').__name__)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["QuickEngine", "QuickEngine"]
    assert "runpy.run_path(sys.argv.pop(1))['register']()" in execute.PAPERMILL_BOOT


def test_a_notebook_keeps_every_output_and_its_kernel_is_killed_not_asked_to_stop(tmp_path: Path) -> None:
    # A kernel asked to stop runs its exit handlers; a killed one does not. The marker file tells which
    # happened, and the executed notebook must still hold the last cell's output.
    import nbformat
    import papermill as pm
    from papermill.engines import papermill_engines

    from iscsi_report.pipeline.nbengine import ENGINE_NAME, QuickEngine

    marker = tmp_path / "exit-handler-ran"
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            f"import atexit, pathlib\natexit.register(pathlib.Path({str(marker)!r}).touch)"
        ),
        nbformat.v4.new_code_cell("print('last cell', 6 * 7)"),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    source, executed = tmp_path / "in.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nb, source)
    papermill_engines.register(ENGINE_NAME, QuickEngine)
    pm.execute_notebook(str(source), str(executed), engine_name=ENGINE_NAME, progress_bar=False)
    last = nbformat.read(executed, as_version=4).cells[-1]
    assert [o.get("text") for o in last.outputs] == ["last cell 42\n"]
    assert not marker.exists(), "the kernel was asked to stop and ran its exit handlers"
