"""The device sweep's design and the lab's record of slow-device mounts (pure parts, runnable anywhere)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from iscsi_report.analyses import storage
from iscsi_report.cli import build_parser
from iscsi_report.core.units import BYTES_PER_KIB
from iscsi_report.lab import device_sweep as ds
from iscsi_report.lab import state, sweep


def _setting(r: sweep.FioRun) -> tuple[object, ...]:
    """A run's configuration without its device."""
    return (
        r.rw,
        r.iodepth,
        r.bs_bytes,
        r.r2t_window,
        r.one_way_delay_ms,
        r.link_mbps,
        r.replicate,
        r.captured,
    )


def test_every_device_runs_the_same_configurations() -> None:
    runs = ds.design()
    per_device = {d: sorted(_setting(r) for r in runs if r.device == d) for d in ds.DEVICES}
    assert set(per_device) == {sweep.RAM_DEVICE, "hdd-like", "ssd-like"}
    first = per_device[sweep.RAM_DEVICE]
    assert all(v == first for v in per_device.values())
    scored = [r for r in runs if not r.captured]
    # per device and point: 3 sizes x 2 windows, queue depth 4, a read; 3 replicates each
    assert len(scored) == len(ds.DEVICES) * len(ds.POINTS) * 8 * ds.REPLICATES
    assert sum(r.captured for r in runs) == len(ds.DEVICES)
    assert {(r.rw, r.iodepth) for r in scored} == {("write", 1), ("write", 4), ("read", 1)}


DESIGNS_BEFORE = (1, 2, 3)  # the confirmation designs run before the device sweep (4 and 5 came after)


def test_the_points_and_sizes_are_ones_no_earlier_sweep_measured() -> None:
    earlier_runs = sweep.design()[0] + [r for n in DESIGNS_BEFORE for r in sweep.design(confirm=n)[0]]
    earlier_points = {(r.one_way_delay_ms, r.link_mbps) for r in earlier_runs}
    earlier_sizes = {r.bs_bytes for r in earlier_runs}
    assert not set(ds.POINTS) & earlier_points
    assert not set(ds.WRITE_BS) & earlier_sizes


def test_file_names_name_the_device_and_earlier_names_are_unchanged() -> None:
    runs = ds.design()
    stems = [r.stem() for r in runs]
    assert len(set(stems)) == len(stems)
    for r in runs:
        assert (f"-dev{r.device}" in r.stem()) is (r.device != sweep.RAM_DEVICE)
        assert r.labels()["device"] == r.device
    ram = sweep.FioRun(1, 1000.0, 1.0, 65536, 262144, False, 1, "write", 1, 1024 * BYTES_PER_KIB, 8)
    assert ram.stem() == "write-qd1-bs1024k-w1-imm64k-seg256k-d1ms-l1000-r1"


@pytest.mark.parametrize("bs", ds.WRITE_BS)
def test_local_fio_labels_are_the_run_kind_the_device_term_reads(bs: int) -> None:
    row = pd.Series({**ds.local_labels("hdd-like", bs), "side": storage.LOCAL_SIDE})
    assert storage.exclusion_reason(row) == ""
    assert bool(storage.is_local(pd.DataFrame([row])).iloc[0])


def test_lab_run_takes_the_device_sweep() -> None:
    args = build_parser("lab").parse_args(["lab", "run", "--device", "--out", "x"])
    assert args.device is True
    assert build_parser("lab").parse_args(["lab", "run", "--out", "x"]).device is False


def test_a_mount_outside_the_labs_shm_prefix_is_never_recorded(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(state, "STATE_DIR", tmp_path)
    monkeypatch.setattr(state, "STATE_FILE", tmp_path / "state.json")
    rec = state.LabState()
    with pytest.raises(ValueError, match="under"):
        rec.add_mount("/mnt/elsewhere")
    rec.add_mount(f"{state.SHM_PREFIX}hdd-like/mnt")
    assert state.load_state()["mounts"] == [f"{state.SHM_PREFIX}hdd-like/mnt"]
    rec.drop_mount(f"{state.SHM_PREFIX}hdd-like/mnt")
    assert state.load_state()["mounts"] == []


def test_the_manifest_says_the_devices_are_emulated_with_their_settings() -> None:
    words = ds.note()
    for d in ds.EMULATED:
        assert f"{d.name} {d.per_request_ms:g} ms" in words
    assert "emulated" in words


def test_files_on_an_emulated_device_make_the_dataset_say_so() -> None:
    from iscsi_report.core import dataset

    on_hdd = next(r for r in ds.design() if r.device == "hdd-like")
    on_ram = next(r for r in ds.design() if r.device == sweep.RAM_DEVICE)
    assert "device_emulation" not in on_ram.labels()
    assert on_hdd.labels()["device_emulation"] == ds.emulation("hdd-like")
    assert ds.local_labels("ssd-like", ds.WRITE_BS[0])["device_emulation"] == ds.emulation("ssd-like")
    f = dataset.RawFile(Path("x.json"), "x.json", "fio", "initiator", "0" * 64, on_hdd.labels())
    assert "device emulated" in dataset.provenance(False, [f]).detail
