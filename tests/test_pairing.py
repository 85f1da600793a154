"""iostat files pair with the fio run their reports overlap in time; a run label overrides (issue 23)."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from iscsi_report.analyses import storage
from iscsi_report.cli import main
from iscsi_report.core import dataset, pairing
from iscsi_report.core.ingest import iostat
from iscsi_report.core.ingest.textio import sha256_file
from iscsi_report.core.measurements import open_dataset

LAB = "data/raw/lab-veth-2026"
SIZES = ["64k", "128k", "256k", "512k", "1M", "2M"]


def _at(text: str) -> datetime:
    return datetime.strptime(text, "%H:%M:%S").replace(year=2026, month=11, day=21)


def test_fio_and_iostat_spans_come_from_the_files_own_clocks(project_root: Path) -> None:
    fio_path = project_root / LAB / "fio/local-64k.json"
    span = pairing.fio_span(fio_path.read_text(), fio_path)
    assert span == pairing.Span(
        _at("00:09:22"), _at("00:09:25"), frozenset({"vda"})
    )  # 00:09:24 + 1 s, 3 s run
    result = iostat.parse(project_root / LAB / "iostat/local-64k.txt")
    got = pairing.iostat_span(result.devices, result.cpu)
    assert got is not None and (got.start, got.end) == (_at("00:09:21"), _at("00:09:25"))
    assert "vda" in got.devices


def test_partner_is_the_run_overlapped_longest_and_none_when_unclear() -> None:
    runs = {
        "a": pairing.Span(_at("00:00:00"), _at("00:00:10")),
        "b": pairing.Span(_at("00:00:10"), _at("00:00:20")),
    }
    assert pairing.partner(pairing.Span(_at("00:00:01"), _at("00:00:11")), runs) == "a"
    assert pairing.partner(pairing.Span(_at("00:00:05"), _at("00:00:15")), runs) is None  # a tie
    assert pairing.partner(pairing.Span(_at("00:00:30"), _at("00:00:40")), runs) is None  # no overlap
    assert (
        pairing.partner(pairing.Span(_at("00:00:09"), _at("00:00:12")), runs) is None
    )  # too little of a run


def test_runs_tied_in_time_are_told_apart_by_device_names() -> None:
    both = (_at("00:00:00"), _at("00:00:10"))
    runs = {"vda": pairing.Span(*both, frozenset({"vda"})), "vdb": pairing.Span(*both, frozenset({"vdb"}))}
    assert pairing.partner(pairing.Span(*both, frozenset({"vdb", "loop0"})), runs) == "vdb"
    assert pairing.partner(pairing.Span(*both), runs) is None  # no device names: the tie stays


def _copy_lab(root: Path, tmp: Path, iostat_name: str = "local-{}.txt") -> Path:
    """lab-veth-2026's fio and iostat files, the iostat ones renamed so no file name pairs them."""
    out = tmp / "mine"
    for i, size in enumerate(SIZES):
        for sub, src, dest in (
            ("fio", f"local-{size}.json", f"local-{size}.json"),
            ("iostat", f"local-{size}.txt", iostat_name.format(i)),
        ):
            (out / sub).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / LAB / sub / src, out / sub / dest)
    return out


def _manifest_without_runs(root: Path, folder: Path) -> None:
    """A hand-written manifest: device and scenario labels only, no run label on any file."""
    files = []
    for rel in sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.*")):
        labels = {"device": "virtio-ssd", "scenario": "local-psync"}
        files.append(
            {
                "path": rel,
                "tool": rel.split("/")[0],
                "side": "local",
                "sha256": sha256_file(folder / rel),
                "labels": labels,
            }
        )
    doc = {"dataset": "mine", "reconstructed": False, "files": files}
    (folder / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))


def test_without_run_labels_the_chapter_pairs_iostat_with_fio_by_time(
    project_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy_lab(project_root, tmp_path, "sample-{}.txt")
    _manifest_without_runs(project_root, folder)
    requests = storage.iostat_requests(open_dataset(folder)).set_index("file")
    for i, size in enumerate(SIZES):
        assert requests.loc[f"iostat/sample-{i}.txt", "fio_file"] == f"fio/local-{size}.json"
    assert main(["dataset", "check", str(folder)]) == 0, capsys.readouterr().out


def test_init_pairs_by_time_and_a_run_label_overrides(
    project_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy_lab(project_root, tmp_path, "sample-{}.txt")
    defaults = tmp_path / "defaults.yaml"
    defaults.write_text("all: {side: local, device: virtio-ssd}\n'iostat/sample-5.txt': {run: local-1M}\n")
    assert main(["dataset", "init", str(folder), "--defaults", str(defaults)]) == 0
    assert (
        "iostat/sample-0.txt: paired with fio/local-64k.json by the time both files cover"
        in capsys.readouterr().out
    )
    by = {f.rel: f for f in dataset.load(folder).files}
    for i, size in enumerate(SIZES[:5]):
        assert by[f"iostat/sample-{i}.txt"].labels["run"] == f"local-{size}"
        assert (
            by[f"iostat/sample-{i}.txt"].labels["bs_bytes"] == by[f"fio/local-{size}.json"].labels["bs_bytes"]
        )
    assert by["iostat/sample-5.txt"].labels["run"] == "local-1M"  # the user's label, not the clocks'
