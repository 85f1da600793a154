"""The committed lab dataset: manifest, checksums, labels, budget, and captures that match the protocol."""

from __future__ import annotations

from pathlib import Path

import pytest
from fast_yaml import load_yaml
from lab_labels import REQUIRED_LABELS

from iscsi_report.core import dataset as ds
from iscsi_report.core.ingest import tshark
from iscsi_report.lab.sweep import r2t_per_write

DATASET = Path(__file__).resolve().parents[2] / "data" / "raw" / "lab-iscsi-2026"

pytestmark = pytest.mark.skipif(
    not (DATASET / "manifest.yaml").exists(), reason="data/raw/lab-iscsi-2026 not collected yet"
)


@pytest.fixture(scope="module")
def manifest() -> dict:
    """The raw manifest document."""
    return load_yaml(DATASET / "manifest.yaml")


def test_manifest_loads_and_checksums_match(monkeypatch: pytest.MonkeyPatch) -> None:
    if "tshark" not in ds.TOOLS:  # until the dataset layer lists the new tool
        monkeypatch.setattr(ds, "TOOLS", (*ds.TOOLS, "tshark"))
    data = ds.load(DATASET)
    assert data.name == "lab-iscsi-2026" and not data.reconstructed
    for f in data.files:
        ds.verify(f)
    assert {f.tool for f in data.files} == {"fio", "tshark", "ping", "iperf3"}


def test_labels_and_budget(manifest: dict) -> None:
    files = manifest["files"]
    for f in files:
        if f["tool"] in ("fio", "tshark"):
            assert set(f["labels"]) >= REQUIRED_LABELS, f["path"]
    total = sum(p.stat().st_size for p in DATASET.rglob("*") if p.is_file())
    assert total <= 20e6
    delays = {f["labels"]["one_way_delay_ms"] for f in files if f["tool"] == "fio"}
    assert {0.0, 0.5, 1.0, 2.0, 4.0} <= delays
    assert manifest["lab"]["libiscsi_verify_at_window_8"]["passed"] is True
    assert manifest["lab"]["sweep_s"] <= 25 * 60


def test_captures_show_the_protocol(manifest: dict) -> None:
    """R2Ts per write = bytes beyond immediate data in 256 KiB bursts; window honoured at qd 1."""
    caps = [f for f in manifest["files"] if f["tool"] == "tshark"]
    assert len(caps) >= 100
    complete = 0
    for f in caps:
        lab = f["labels"]
        w = tshark.writes(tshark.parse(DATASET / f["path"]))
        if len(w) == 0:
            continue
        complete += 1
        assert set(w["r2t_count"]) == {r2t_per_write(lab["bs_bytes"], lab["immediate_data_bytes"])}
        assert set(w["immediate_bytes"]) == {min(lab["bs_bytes"], lab["immediate_data_bytes"])}
        assert w["max_outstanding_r2t"].max() <= lab["r2t_window"]
    assert complete >= 0.95 * len(caps)


def test_delay_line_accuracy_from_the_dataset() -> None:
    """ping RTT/2 is the set one-way delay plus a small constant; iperf3 reaches the set rate."""
    from iscsi_report.lab.accuracy import accuracy_rows, accuracy_table

    rows = accuracy_rows(DATASET)
    assert len(rows) >= 6
    for r in rows:
        assert 0 <= r["rtt_half_p50_ms"] - r["one_way_delay_ms"] < 0.5
        if r["link_mbps"] > 0:
            assert r["iperf3_received_mbps"] == pytest.approx(r["link_mbps"], rel=0.1)
    assert accuracy_table(DATASET).startswith("| set D (ms)")
