"""Storage chapter analyses: the OLS device fit, run tables, iostat request sizes and CPU per op."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from fast_yaml import load_yaml

from iscsi_report.analyses import storage
from iscsi_report.core.errors import DesignError, IngestError
from iscsi_report.core.measurements import open_dataset
from iscsi_report.core.units import BYTES_PER_MIB
from iscsi_report.pipeline.cache import sha256_file

LAB = "data/raw/lab-veth-2026"
SIZES = np.array([64, 128, 256, 512, 1024, 2048]) * 1024


def synthetic_runs(fixed_ms: float, mib_per_s: float, noise_ms: float, seed: int, repeats: int = 3):
    """Per-op ms = fixed + MiB / bandwidth (+ Gaussian noise), ``repeats`` runs per size."""
    rng = np.random.default_rng(seed)
    bs = np.repeat(SIZES, repeats)
    op_ms = fixed_ms + bs / BYTES_PER_MIB / mib_per_s * 1000 + rng.normal(0, noise_ms, bs.size)
    return op_ms, bs


def test_fit_recovers_exact_line() -> None:
    op_ms, bs = synthetic_runs(0.5, 136.0, 0.0, seed=1)
    fit = storage.fit_device("hdd", op_ms, bs)
    assert fit.fixed_ms == pytest.approx(0.5, abs=1e-9)
    assert fit.streaming_mib_per_s == pytest.approx(136.0, rel=1e-9)
    assert fit.predict_ms(BYTES_PER_MIB) == pytest.approx(0.5 + 1000 / 136.0)
    assert (fit.runs, fit.block_sizes) == (18, 6)


@pytest.mark.parametrize("seed", range(5))
def test_fit_intervals_cover_true_values_under_noise(seed: int) -> None:
    op_ms, bs = synthetic_runs(2.0, 350.0, 0.05, seed=seed)
    fit = storage.fit_device("ssd", op_ms, bs)
    ci = fit.coefficient_ci(0.999)  # wide level: a miss here is a real defect, not bad luck
    assert ci["fixed_ms"][0] < 2.0 < ci["fixed_ms"][1]
    lo, hi = fit.streaming_ci(0.999)
    assert lo < 350.0 < hi
    assert hi - lo < 40  # and the interval is informative (about +-6 %)


def test_fit_interval_coverage_is_near_nominal() -> None:
    hits = 0
    trials = 200
    for seed in range(trials):
        op_ms, bs = synthetic_runs(1.0, 136.0, 0.2, seed=1000 + seed, repeats=1)
        lo, hi = storage.fit_device("hdd", op_ms, bs).coefficient_ci(0.95)["fixed_ms"]
        hits += lo < 1.0 < hi
    assert 0.90 <= hits / trials <= 0.99


def test_streaming_ci_is_unbounded_when_slope_interval_reaches_zero() -> None:
    op_ms = np.array([1.0, 1.2, 0.9, 1.1])
    bs = np.array([1, 2, 3, 4]) * BYTES_PER_MIB
    fit = storage.fit_device("flat", op_ms, bs)
    assert math.isinf(fit.streaming_ci()[1])


def test_fit_needs_three_runs_and_two_sizes() -> None:
    with pytest.raises(DesignError, match="at least 3 runs"):
        storage.fit_device("x", np.array([1.0, 2.0]), np.array([BYTES_PER_MIB, 2 * BYTES_PER_MIB]))
    with pytest.raises(DesignError, match="1 size"):
        storage.fit_device("x", np.array([1.0, 1.1, 0.9]), np.array([BYTES_PER_MIB] * 3))


def test_fit_devices_reports_unfittable_device_instead_of_failing() -> None:
    op_ms, bs = synthetic_runs(0.1, 100.0, 0.0, seed=0, repeats=1)
    kind = {"rw": "write", "iodepth": 1, "engine": "sg", "direct": True, "numjobs": 1}
    runs = pd.DataFrame({"scenario": "local-sg", "device": "a", "op_ms": op_ms, "bs_bytes": bs, **kind})
    one = pd.DataFrame(
        {"scenario": ["local-sg"], "device": ["b"], "op_ms": [1.0], "bs_bytes": [BYTES_PER_MIB], **kind}
    )
    remote = runs.assign(scenario="iscsi-blockdev", device="c")
    fits, skipped = storage.fit_devices(pd.concat([runs, one, remote], ignore_index=True))
    assert list(fits) == ["a"]
    assert list(skipped) == ["b"]


def test_fit_table_and_device_latency_at() -> None:
    op_ms, bs = synthetic_runs(0.0, 128.0, 0.0, seed=0, repeats=2)
    fits = {"hdd": storage.fit_device("hdd", op_ms, bs)}
    table = storage.fit_table(fits)
    assert table.loc[0, "streaming_mib_per_s"] == pytest.approx(128.0)
    at = storage.device_latency_at(fits, "hdd", BYTES_PER_MIB)
    assert at["device_ms"] == pytest.approx(1000 / 128)
    assert not at["extrapolated"]
    assert storage.device_latency_at(fits, "hdd", 4 * BYTES_PER_MIB)["extrapolated"]
    with pytest.raises(KeyError, match="ssd"):
        storage.device_latency_at(fits, "ssd", BYTES_PER_MIB)


def test_throughput_by_bs_averages_repeats_and_remote_share() -> None:
    runs = pd.DataFrame(
        {
            "file": ["a", "b", "c"],
            "scenario": ["local-sg", "local-sg", "iscsi-blockdev"],
            "device": ["hdd"] * 3,
            "network": [None, None, "wired"],
            "max_outstanding_r2t": [None, None, 1],
            "validation": [False, False, True],
            "bs_bytes": [BYTES_PER_MIB] * 3,
            "mib_per_s": [100.0, 140.0, 30.0],
            "iops": [100.0, 140.0, 30.0],
            "op_ms": [10.0, 1000 / 140, 1000 / 30],
        }
    )
    local = storage.local_throughput(runs)
    assert local.loc[0, "runs"] == 2
    assert local.loc[0, "mib_per_s"] == pytest.approx(120.0)
    remote = storage.remote_throughput(runs)
    assert remote.loc[0, "share_of_local_pct"] == pytest.approx(25.0)


def test_cpu_ms_per_op_follows_the_blog_arithmetic() -> None:
    cpu = pd.DataFrame({"busy_pct": [12.0], "fio_iops": [30.0], "bs_bytes": [BYTES_PER_MIB]})
    out = storage.cpu_ms_per_op(cpu)
    assert out.loc[0, "cpu_ms_per_op"] == pytest.approx(4.0)  # 12 % at 30 IOPS (seed 000)
    assert storage.cpu_ms_per_op(cpu, cores=2).loc[0, "cpu_ms_per_op"] == pytest.approx(8.0)


def test_lab_dataset_runs_and_iostat(project_root: Path) -> None:
    ds = open_dataset(project_root / LAB)
    runs = storage.fio_runs(ds)
    assert len(runs) == 6
    assert (runs["op_ms"] * runs["iops"]).round(9).eq(1000).all()
    req = storage.iostat_requests(ds).set_index("bs_bytes")
    assert req.loc[64 * 1024, "request_fraction"] == pytest.approx(1.0, abs=0.01)
    # this virtio disk caps requests at 512 KiB: a 2 MiB write reaches it in quarters
    assert req.loc[2 * BYTES_PER_MIB, "wareq_sz_kb"] == pytest.approx(512, abs=1)
    assert (req["fio_file"].str.startswith("fio/")).all()
    cpu = storage.iostat_cpu(ds)
    assert ((cpu["busy_pct"] > 0) & (cpu["busy_pct"] < 100)).all()


def _copy_dataset(project_root: Path, tmp_path: Path, edit) -> Path:
    """Copy two lab files into a fresh dataset whose manifest ``edit`` may change."""
    src = project_root / LAB
    doc = load_yaml(src / "manifest.yaml")
    keep = [e for e in doc["files"] if e["path"] in ("fio/local-2M.json", "iostat/local-2M.txt")]
    for e in keep:
        (tmp_path / e["path"]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / e["path"], tmp_path / e["path"])
        e["sha256"] = sha256_file(tmp_path / e["path"])
    doc["files"] = keep
    edit(doc)
    (tmp_path / "manifest.yaml").write_text(yaml.safe_dump(doc))
    return tmp_path


def test_block_size_label_contradicting_fio_fails_loudly(project_root: Path, tmp_path: Path) -> None:
    def wrong_bs(doc):
        doc["files"][0]["labels"]["bs_bytes"] = 65536

    ds = open_dataset(_copy_dataset(project_root, tmp_path, wrong_bs))
    with pytest.raises(IngestError, match="bs_bytes=65536 but fio ran with bs=2097152"):
        storage.fio_runs(ds)


def test_iostat_matching_two_fio_runs_is_ambiguous(project_root: Path, tmp_path: Path) -> None:
    def second_run(doc):
        fio_entry = dict(doc["files"][0], labels=dict(doc["files"][0]["labels"]))
        shutil.copy(tmp_path / "fio/local-2M.json", tmp_path / "fio/again.json")
        fio_entry["path"] = "fio/again.json"
        fio_entry["labels"]["run"] = "again"
        doc["files"].append(fio_entry)
        del doc["files"][1]["labels"]["run"]

    ds = open_dataset(_copy_dataset(project_root, tmp_path, second_run))
    with pytest.raises(IngestError, match="matches several fio runs"):
        storage.iostat_requests(ds)
