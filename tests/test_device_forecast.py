"""The device sweep: a target on another device is forecast from that device's local fio alone."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iscsi_report import cli
from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab, storage
from iscsi_report.core import forecast
from iscsi_report.core.units import BYTES_PER_MIB, MS_PER_S

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
SWEEP = "lab-iscsi-2026-device"


@pytest.fixture(scope="module")
def data() -> lab.LabData:
    return lab.load(RAW / SWEEP)


@pytest.fixture(scope="module")
def matrix(data: lab.LabData) -> fm.Matrix:
    return fm.run(data, SWEEP)


def test_local_fio_is_the_device_not_an_iscsi_run(data: lab.LabData) -> None:
    local = [f for f in data.dataset.select("fio") if f.side == storage.LOCAL_SIDE]
    assert len(local) == 6
    assert not set(data.runs["file"]) & {f.rel for f in local}
    devices = lab.devices(data.dataset)
    assert set(devices) == {"hdd-like", "ssd-like"}
    for f in local:
        job = data.dataset.fio(f).jobs.iloc[0]
        bs = int(f.labels["bs_bytes"])
        # the device term at a measured size is local fio's time per write there, no faster
        assert devices[str(f.labels["device"])].ms_at(bs) >= MS_PER_S / float(job["iops"]) * (1 - 1e-9)
        assert f.rel in devices[str(f.labels["device"])].source.what


def test_a_target_on_another_device_is_charged_that_devices_local_time(data: lab.LabData) -> None:
    confs = fm.configurations(data)
    ram = confs[(confs["device"] == lab.RAM_DEVICE) & (confs["rw"] == "write") & (confs["iodepth"] == 1)]
    group = ram[(ram["r2t_window"] == 1) & (ram["one_way_delay_ms"] == ram["one_way_delay_ms"].min())]
    today = fm.today(data.dataset, group)
    hdd = lab.devices(data.dataset)["hdd-like"]
    for bs in group["bs_bytes"].astype(int):
        on_hdd = dataclasses.replace(today.configuration, bs_bytes=bs, device=hdd)
        f = forecast.forecast(today, on_hdd)
        assert f.terms_ms["device_ms"] == pytest.approx(hdd.ms_at(bs))
        assert f.device_source == hdd.source
        # the same target on today's device is today's own run: refused, never read
        with pytest.raises(forecast.LeakageError):
            forecast.forecast(today, dataclasses.replace(on_hdd, device=None))


def test_the_device_group_holds_pairs_that_differ_in_the_device_alone(matrix: fm.Matrix) -> None:
    confs = matrix.configurations.set_index("key")
    device_pairs = matrix.pairs[(matrix.pairs["group"] == "device") & (matrix.pairs["method"] == fm.ENGINE)]
    assert len(device_pairs) > 0
    for _, p in device_pairs.iterrows():
        target = confs.loc[p["target"]]
        assert fm.settings_name(p["target"]).replace(f"|dev={target['device']}", "") in p["today"]
        assert not p["today"].endswith(f"dev={target['device']}")


def test_local_less_added_is_what_the_two_measurements_say(data: lab.LabData, matrix: fm.Matrix) -> None:
    added = fm.device_added(matrix, data).set_index(["device", "bs_bytes"])
    c = matrix.configurations
    writes = c[(c["rw"] == "write") & (c["iodepth"] == 1)]
    bs = int(writes["bs_bytes"].min())
    smallest = writes[writes["bs_bytes"] == bs]
    at = smallest.set_index(["r2t_window", "one_way_delay_ms", "device"])["measured_ms"]
    diffs = [at[(w, d, dev)] - at[(w, d, lab.RAM_DEVICE)] for w, d, dev in at.index if dev == "hdd-like"]
    assert added.loc[("hdd-like", bs), "added_ms"] == pytest.approx(float(np.median(diffs)))
    row = added.loc[("hdd-like", bs)]
    assert row["local_less_added_ms"] == pytest.approx(row["local_ms"] - row["added_ms"])


def _project(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any] | None, str]:
    """``iscsi-report project --dataset SWEEP ARGV --json`` -> (status, document or None, stderr)."""
    try:
        status = cli.main(["--root", str(ROOT), "project", "--dataset", SWEEP, *argv, "--json"])
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, json.loads(out) if status == 0 else None, err


def test_project_never_pools_devices_and_keeps_todays_device(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _project(capsys, "--bs", "1m", "--one-way-ms", "2")
    assert status == 2 and "3 devices" in err and "--today device=NAME" in err
    docs = {}
    for name in ("hdd-like", "ssd-like"):
        status, doc, err = _project(capsys, "--bs", "1m", "--one-way-ms", "2", "--today", f"device={name}")
        assert status == 0 and doc is not None, err
        assert doc["today"]["settings"].endswith(f"device={name}")
        assert doc["terms"]["device_ms"] == pytest.approx(
            lab.devices(lab.load(RAW / SWEEP).dataset)[name].ms_at(BYTES_PER_MIB)
        )
        docs[name] = doc
    assert docs["hdd-like"]["op_ms"] > docs["ssd-like"]["op_ms"]
