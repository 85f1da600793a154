"""A new user's path, end to end: a fresh copy of the project, an empty folder, real captures made
here (ping and iperf3 over loopback, fio and iostat on a scratch file), `book` on that run alone, and
the user's forecast page (issue 23).

Nothing of the project's fixtures or bundled datasets enters the user's run; the bundled study is
never executed. The page must name the bound that limits today's write and no forecast that keeps
today's device may write faster than fio measured that device writing on its own.
"""

from __future__ import annotations

import json
import re
import shutil
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
import yaml

from iscsi_report.core.model import BOUND_NAMES

from .projects import cli, make_study_project, with_tool_cache

pytestmark = [pytest.mark.e2e]

LOOPBACK = "127.0.0.1"
TOOLS = ("ping", "iperf3", "fio", "iostat")
RUN = "mine"
BS_BYTES = 2 * 2**20  # the upgrade chapter's default block size: fio must measure it
BYTES_PER_MIB = 2**20
CAPTURE_TIMEOUT_S = 600
BOOK_TIMEOUT_S = 1800
DEVICE_SWAP = "the device replaced"  # how the page's "what changes" column starts for another device
FLOAT_SLACK = 1e-12  # the chapter turns iops into ms per op and back: a few ulps, never more


def _capture(project: Path, scratch: Path, port: int) -> None:
    """`iscsi-report capture` into the empty data/raw/mine: the side inferred (a file: local)."""
    raw = project / "data" / "raw" / RUN  # absolute: the command's folder is not the project's
    argv = ["capture", str(raw), "--host", LOOPBACK, "--port", str(port)]
    argv += ["--filename", str(scratch / "fio.dat"), "--size", "64m", "--runtime", "2"]
    argv += ["--bs", "64k,256k,1m,2m", "--qd", "1", "--ping-count", "500", "--iperf3-seconds", "2"]
    argv += ["--network", "loopback", "--device", "scratch"]
    done = cli(project, *argv, timeout=CAPTURE_TIMEOUT_S)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (raw / "manifest.yaml").is_file(), "the capture lands in the project's own data/raw"
    checked = cli(project, "dataset", "check", str(raw))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _bytes(size: str) -> int:
    """fio's size text ('2m', '64k', '4096') in bytes (binary multiples, as fio reads bs)."""
    units = {"k": 2**10, "m": 2**20, "g": 2**30}
    text = size.strip().lower()
    return int(text[:-1]) * units[text[-1]] if text[-1:] in units else int(text)


def _fio_mib_per_s(raw: Path, bs_bytes: int) -> float:
    """fio's own write throughput at ``bs_bytes``, queue depth 1: its JSON ``iops`` times the size.

    ``iops`` is what the chapter reads (per-op ms = 1000 / iops); ``bw_bytes`` would not do, since
    fio truncates it to whole bytes per second and prints ``iops`` to six decimals, so the two
    differ by a byte or two per second either way.
    """
    for path in sorted((raw / "fio").glob("*.json")):
        job = json.loads(path.read_text(encoding="utf-8"))["jobs"][0]
        options = job["job options"]
        if _bytes(options.get("bs", "")) == bs_bytes and options.get("iodepth") == "1":
            return float(job["write"]["iops"]) * bs_bytes / BYTES_PER_MIB
    raise AssertionError(f"no fio run at {bs_bytes} bytes, queue depth 1, in {raw}")


def _page_text(html: Path) -> str:
    """The visible words of a built page, whitespace collapsed."""
    body = re.sub(r"<script.*?</script>|<style.*?</style>", " ", html.read_text(encoding="utf-8"), flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", body)).split())


def test_from_an_empty_folder_of_own_captures_to_a_forecast_page(
    tmp_path: Path, iperf3_server: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    project = make_study_project(tmp_path / "clone")  # what a clone holds: bundled params and data
    with_tool_cache(tmp_path_factory, project)  # the bundled datasets' tools named, as after a first build
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    _capture(project, scratch, iperf3_server)
    doc = {
        "title": "My machine",
        "short_title": "my machine",
        "dataset": RUN,
        "notebooks": ["network", "storage", "model", "upgrade"],
    }
    (project / "params" / f"{RUN}.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")

    built = cli(project, "book", RUN, "--jobs", "1", timeout=BOOK_TIMEOUT_S)
    assert built.returncode == 0, built.stdout + built.stderr

    executed = sorted(p.name for p in (project / "results").iterdir() if p.is_dir())
    assert executed == [RUN], "the bundled study is not executed for a user's own run"
    table = pd.read_csv(project / "results" / RUN / "upgrade_scenarios.csv")
    today = table[table["scenario"] == "today"].iloc[0]
    measured = _fio_mib_per_s(project / "data/raw" / RUN, BS_BYTES)
    kept = table[~table["what changes"].str.startswith(DEVICE_SWAP)]
    assert len(kept) >= 2 and (kept["MiB/s"] <= measured * (1 + FLOAT_SLACK)).all(), (measured, kept["MiB/s"])
    assert (kept["device ceiling (MiB/s)"] <= measured * (1 + FLOAT_SLACK)).all()

    page = _page_text(project / "_build" / "html" / "runs" / RUN / "upgrade.html")
    assert today["binding bound"] in BOUND_NAMES
    assert f"bound by {today['binding bound']}" in page, "the page names today's binding bound"
