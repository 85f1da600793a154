"""``iscsi-report project --dataset``: measured inputs with their sources, overrides, sweeps."""

from __future__ import annotations

import importlib.util
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iscsi_report import cli
from iscsi_report.analyses import projections as P
from iscsi_report.core import dataset as datasets
from iscsi_report.core.measurements import open_dataset

ROOT = Path(__file__).resolve().parents[1]
BLOG = ["--dataset", "blog-2023"]
WIRELESS_HDD = [*BLOG, "--network", "wireless", "--device", "hdd"]
pytestmark = pytest.mark.skipif(
    not (ROOT / "data/raw/blog-2023").is_dir() or not (ROOT / "data/raw/lab-veth-2026").is_dir(),
    reason="bundled datasets absent",
)
_READ = P.read_sources
_CACHE: dict[str, Any] = {}


@pytest.fixture(autouse=True)
def _read_each_dataset_once(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The CLI reads a dataset per call; the same dataset read once per session keeps the tests quick."""

    def cached(ds: datasets.Dataset, **kw: Any) -> P.DatasetSources:
        key = f"{ds.root}{sorted(kw.items())}"
        if key not in _CACHE:
            _CACHE[key] = _READ(ds, **kw)
        return _CACHE[key]

    present = {n: e for n, e in cli.SUBCOMMANDS.items() if importlib.util.find_spec(e[0]) is not None}
    monkeypatch.setattr(cli, "SUBCOMMANDS", present)
    monkeypatch.setattr(P, "read_sources", cached)
    yield


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``iscsi-report --root ROOT project ARGV`` -> (exit status, stdout, stderr)."""
    try:
        status = cli.main(["--root", str(ROOT), "project", *argv])
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    """The --json document, parsed strictly (NaN or Infinity refused)."""
    status, out, err = _run(capsys, *argv, "--json")
    assert status == 0, err

    def refuse(name: str) -> None:
        raise ValueError(f"not JSON: {name}")

    doc: dict[str, Any] = json.loads(out, parse_constant=refuse)
    return doc


def _values(doc: dict[str, Any]) -> dict[str, Any]:
    return {name: entry["value"] for name, entry in doc["inputs"].items()}


@pytest.fixture(scope="module")
def blog_measured() -> Any:
    """The projections chapter's measured-input table of the blog dataset."""
    ds = open_dataset(ROOT / "data/raw/blog-2023")
    inputs = P.measured_inputs(ds)
    return P.projection_table(P.measured_projections(ds, inputs)), inputs


@pytest.mark.parametrize(("keys", "r2t"), [("lio-default", 1), ("lio-r2t16", 16)])
def test_blog_wireless_inputs_reproduce_the_chapters_op_time(
    capsys: pytest.CaptureFixture[str], blog_measured: Any, keys: str, r2t: int
) -> None:
    table, inputs = blog_measured
    doc = _json(capsys, *WIRELESS_HDD, "--iscsi-parameters", keys)
    row = table[
        (table["max_outstanding_r2t"] == r2t) & (table["network"] == "wireless") & (table["device"] == "hdd")
    ]
    assert doc["op_ms"] == pytest.approx(float(row["op_ms"].iloc[0]), rel=1e-12)
    assert doc["mib_per_s"] == pytest.approx(float(row["mib_per_s"].iloc[0]), rel=1e-12)
    wireless = inputs.networks.set_index("network").loc["wireless"]
    got = doc["inputs"]
    assert got["one_way_ms"]["value"] == pytest.approx(float(wireless["mean_rtt_ms"]) / 2)
    assert got["link_mbps"]["value"] == pytest.approx(float(wireless["received_mbit_per_s"]))
    assert got["max_outstanding_r2t"]["value"] == r2t
    assert f"iscsi_parameters.{keys}.MaxOutstandingR2T" in got["max_outstanding_r2t"]["source"]
    assert (
        "ping/wireless-2ms" in got["one_way_ms"]["source"] and "2 ms intervals" in got["one_way_ms"]["source"]
    )
    assert "iperf3/wireless.json" in got["link_mbps"]["source"]
    assert "fio/local-hdd-2m.json" in got["device_fixed_ms"]["source"]
    assert got["cpu_ms"]["value"] > 0 and "iostat/" in got["cpu_ms"]["source"]


@pytest.mark.parametrize(
    ("flag", "value", "name", "expected"),
    [
        ("--link-mbps", "10000", "link_mbps", 10000.0),
        ("--max-outstanding-r2t", "16", "max_outstanding_r2t", 16),
        ("--device-ms", "3.5", "device_ms", 3.5),
    ],
)
def test_an_override_changes_only_that_input(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, name: str, expected: float
) -> None:
    base = _json(capsys, *WIRELESS_HDD, "--iscsi-parameters", "lio-default")
    changed = _json(capsys, *WIRELESS_HDD, "--iscsi-parameters", "lio-default", flag, value)
    before, after = _values(base), _values(changed)
    assert after[name] == expected != before[name]
    assert {k: v for k, v in after.items() if k != name} == {k: v for k, v in before.items() if k != name}
    assert changed["inputs"][name]["source"] == flag
    assert changed["op_ms"] != base["op_ms"]


def _check_rows(rows: list[dict[str, Any]]) -> None:
    """No row above any of its ceilings; the binding bound is the smallest one."""
    for row in rows:
        caps = {
            k.removesuffix("_ceiling_mib_per_s"): v
            for k, v in row.items()
            if k.endswith("_ceiling_mib_per_s")
        }
        finite = {k: v for k, v in caps.items() if v is not None}
        assert all(row["mib_per_s"] <= v * (1 + 1e-12) for v in finite.values())
        assert finite[row["binding"]] == pytest.approx(min(finite.values()))
        assert row["mib_per_s"] == pytest.approx(finite[row["binding"]])


def test_sweep_has_one_row_per_combination_none_above_its_ceilings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    r2ts, sizes = [1, 2, 8, 16], [256 * 1024, 2 * 2**20]
    doc = _json(
        capsys,
        *WIRELESS_HDD,
        "--iscsi-parameters",
        "lio-default",
        "--max-outstanding-r2t",
        "1,2,8,16",
        "--bs",
        "256k,2M",
        "--queue-depth",
        "1,8",
    )
    assert doc["swept"] == ["bs", "max_outstanding_r2t", "queue_depth"]
    assert len(doc["rows"]) == 4 * 2 * 2
    got = {(r["bs"], r["max_outstanding_r2t"], r["queue_depth"]) for r in doc["rows"]}
    assert got == set(itertools.product(sizes, r2ts, [1, 8]))
    _check_rows(doc["rows"])
    assert {"device_request_bytes", "device_ms", "cpu_ms"} <= set(doc["rows"][0])  # vary with the block size
    assert {r["binding"] for r in doc["rows"]} >= {"latency", "link"}  # queue depth 8 fills the wireless link


def test_sweep_over_networks_and_devices(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json(
        capsys,
        *BLOG,
        "--network",
        "wired,wireless",
        "--device",
        "hdd,ssd",
        "--iscsi-parameters",
        "lio-default",
        "--queue-depth",
        "32",
    )
    assert len(doc["rows"]) == 4
    _check_rows(doc["rows"])
    by = {(r["network"], r["device"]): r for r in doc["rows"]}
    wired_hdd = by[("wired", "hdd")]  # a deep queue: Gigabit Ethernet (~112 MiB/s) below the disk (~136)
    assert wired_hdd["binding"] == "link"
    assert wired_hdd["link_ceiling_mib_per_s"] < wired_hdd["device_ceiling_mib_per_s"]
    assert by[("wireless", "ssd")]["one_way_ms"] > by[("wired", "ssd")]["one_way_ms"]


def test_text_sweep_names_the_binding_bound_per_row(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "--run", "lab-veth-2026", "--max-outstanding-r2t", "1,16", "--bs", "64k,2M")
    assert status == 0
    table = out.split("combinations")[1].splitlines()[1:]
    assert "binding" in table[0] and len(table) == 1 + 4
    assert all(line.split()[-4] in {"latency", "link", "device", "cpu"} for line in table[1:])


def test_lab_inputs_and_their_sources(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json(capsys, "--dataset", "lab-veth-2026")
    got = doc["inputs"]
    assert doc["dataset"] == "lab-veth-2026" and got["bs"]["value"] == 2 * 2**20
    assert got["one_way_ms"]["source"].endswith("ping/veth-2ms.txt")  # not the 200 ms ping
    assert got["link_mbps"]["source"].endswith("iperf3/veth-tcp.json")
    assert (
        "RFC 7143" in got["max_outstanding_r2t"]["source"]
        and "no iscsi_parameters" in got["initial_r2t"]["source"]
    )
    assert got["cpu_ms"]["value"] == 0 and "set to 0" in got["cpu_ms"]["source"]
    fio_files = sorted(p.name for p in (ROOT / "data/raw/lab-veth-2026/fio").glob("local-*.json"))
    assert all(name in got["device_fixed_ms"]["source"] for name in fio_files)
    _check_rows([{k: v for k, v in doc.items()} | _caps(doc)])


def _caps(doc: dict[str, Any]) -> dict[str, Any]:
    """A single projection's bounds in the row layout of a sweep."""
    return {f"{b}_ceiling_mib_per_s": e["mib_per_s"] for b, e in doc["bounds"].items()}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (BLOG, "several networks (wired, wireless): choose with --network"),
        (
            [*WIRELESS_HDD, "--iscsi-parameters", "nope"],
            "no parameter_set 'nope' to project (usable: lio-default",
        ),
        (
            ["--dataset", "lab-veth-2026", "--device", "sda"],
            "no device 'sda' to project (usable: virtio-ssd)",
        ),
        (["--run", "lab-veth-2026", "--dataset", "blog-2023"], "reads dataset lab-veth-2026, not blog-2023"),
        (["--run", "no-such-run"], "no such params file"),
        (["--network", "wired", "--bs", "2M", "--one-way-ms", "1", "--link-mbps", "100"], "give --dataset"),
    ],
)
def test_what_cannot_be_projected_is_named(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, out, err = _run(capsys, *argv)
    assert (status, out) == (2, "")
    assert message in err


def test_a_forecast_from_a_lab_dataset_loads_neither_statsmodels_nor_scipy_stats() -> None:
    # together about 2 s of every `project --dataset` call; the lab's forecast fits no device and
    # takes no t quantile, so storage imports each only where a fit or a quantile needs it
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "import iscsi_report.analyses.dataset_forecast, iscsi_report.analyses.projection_request\n"
        "print(sorted(m for m in ('statsmodels', 'scipy.stats') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
