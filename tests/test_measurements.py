"""The measurements layer: every raw file checked against its sha256 and read and parsed once.

The lab chapters carry the headline result, so a changed byte in a lab file must fail them as it
fails `dataset check`; a chapter's functions must share one parse of each file (the storage
chapter used to parse each fio file four times and check its checksum seven times).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from iscsi_report.analyses import about, lab, network, storage
from iscsi_report.core import measurements
from iscsi_report.core.errors import IngestError, ReportError
from iscsi_report.core.ingest import textio
from iscsi_report.core.measurements import open_dataset

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
VETH = "lab-veth-2026"
LAB_SMALL = "lab-iscsi-2026-confirm3"  # the smallest real lab sweep (every tool the lab writes)


def _copy(name: str, dest: Path) -> Path:
    """A private copy of a committed dataset."""
    return Path(shutil.copytree(RAW / name, dest / name))


def _flip_one_byte(path: Path) -> None:
    """Change one byte in the middle of the file (a digit stays a digit, so it still parses)."""
    data = bytearray(path.read_bytes())
    i = next(i for i in range(len(data) // 2, len(data)) if chr(data[i]).isdigit())
    data[i] = ord("7") if data[i] != ord("7") else ord("3")
    path.write_bytes(bytes(data))


def _storage_chapter(ds: measurements.Measurements) -> None:
    """What the storage chapter computes over a dataset, in its order."""
    runs = storage.fio_runs(ds)
    storage.fit_devices(runs)
    storage.iostat_requests(ds)
    storage.iostat_cpu(ds)
    storage.latency_percentiles(ds)
    storage.iostat_over_time(ds)


def test_the_storage_chapters_functions_read_and_parse_each_file_once(tmp_path: Path) -> None:
    ds = open_dataset(_copy(VETH, tmp_path))
    _storage_chapter(ds)
    network.rtt_samples(ds)
    network.ping_files(ds)
    network.iperf_summary(ds)
    about.dataset_facts(ds, "storage")
    used = {f.rel for f in ds.select("fio")} | {f.rel for f in ds.select("iostat")}
    assert used <= set(ds.parse_counts), "every fio and iostat file was parsed"
    assert set(ds.parse_counts.values()) == {1}, ds.parse_counts
    assert set(ds.read_counts.values()) == {1}, ds.read_counts


def test_the_cells_of_one_notebook_share_one_dataset_and_its_parses(tmp_path: Path) -> None:
    root = _copy(VETH, tmp_path)
    first = open_dataset(root)
    storage.fio_runs(first)
    again = open_dataset(root)
    assert again is first
    storage.fio_runs(again)
    assert set(again.parse_counts.values()) == {1}


@pytest.mark.parametrize("tool", ["fio", "ping", "iperf3", "tshark"])
def test_a_changed_byte_in_a_lab_file_fails_the_lab_chapters_load(tmp_path: Path, tool: str) -> None:
    root = _copy(LAB_SMALL, tmp_path)
    target = next(f for f in open_dataset(root).select(tool))
    measurements.forget()
    _flip_one_byte(target.path)
    with pytest.raises(IngestError, match=r"sha256 is [0-9a-f]{64}, manifest says") as err:
        lab.load(root)
    assert target.rel.split("/")[-1] in str(err.value), "the error names the changed file"


@pytest.mark.parametrize("tool", ["fio", "iostat", "ping", "iperf3"])
def test_a_changed_byte_fails_the_measured_chapters(tmp_path: Path, tool: str) -> None:
    root = _copy(VETH, tmp_path)
    ds = open_dataset(root)
    target = ds.select(tool)[0]
    _flip_one_byte(target.path)
    with pytest.raises(IngestError, match="manifest says") as err:
        ds.parsed(target)
    assert str(target.path) in str(err.value)


def test_a_file_changed_after_its_parse_is_checked_again(tmp_path: Path) -> None:
    root = _copy(VETH, tmp_path)
    ds = open_dataset(root)
    f = ds.select("fio")[0]
    ds.fio(f)
    _flip_one_byte(f.path)
    with pytest.raises(IngestError, match="manifest says"):
        ds.fio(f)


def test_an_edited_manifest_gives_a_fresh_dataset(tmp_path: Path) -> None:
    root = _copy(VETH, tmp_path)
    first = open_dataset(root)
    manifest = root / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace("title: 'This machine", "title: 'Edited machine", 1))
    assert open_dataset(root) is not first
    assert open_dataset(root).title.startswith("Edited")


def test_a_file_of_another_tool_is_refused_by_name(tmp_path: Path) -> None:
    ds = open_dataset(_copy(VETH, tmp_path))
    ping_file = ds.select("ping")[0]
    with pytest.raises(IngestError, match=r"expected a fio file, the manifest says tool: ping"):
        ds.fio(ping_file)


def test_notes_are_read_through_the_read_tracker_and_follow_edits(tmp_path: Path) -> None:
    root = _copy(VETH, tmp_path)
    ds = open_dataset(root)
    notes = root / "notes.yaml"
    before = about.notes(ds)["network"]
    assert notes.resolve() in textio.files_read(), "the batch's cache sees notes.yaml as read"
    notes.write_text(notes.read_text().replace("Both ends", "Edited. Both ends", 1), encoding="utf-8")
    after = about.notes(ds)["network"]
    assert after.startswith("Edited.") and after != before


def test_duplicate_keys_in_notes_are_refused_with_their_line(tmp_path: Path) -> None:
    root = _copy(VETH, tmp_path)
    (root / "notes.yaml").write_text("chapters:\n  network: a\n  network: b\n", encoding="utf-8")
    with pytest.raises(ReportError, match=r"notes\.yaml:3"):
        about.notes(open_dataset(root))


def test_a_parse_is_kept_across_processes_by_bytes_and_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from iscsi_report.core import keep

    monkeypatch.setenv(keep.PARSE_CACHE_ENV, str(tmp_path / "kept"))
    root = _copy(VETH, tmp_path)
    f = open_dataset(root).select("fio")[0]
    first = measurements.Measurements(open_dataset(root).dataset).fio(f)
    calls: list[str] = []
    monkeypatch.setitem(measurements.PARSERS, "fio", lambda text, path: calls.append(str(path)))
    again = measurements.Measurements(open_dataset(root).dataset).fio(f)  # a new process, in effect
    assert calls == [] and again.jobs.equals(first.jobs)
    elsewhere = _copy(VETH, tmp_path / "elsewhere")  # the same bytes in another dataset
    g = open_dataset(elsewhere).select("fio")[0]
    assert open_dataset(elsewhere).fio(g).path == str(g.path), "a kept parse names the file it stands for"
    assert calls == []
    stored = keep.path_for("fio", keep.code_of("ingest"), f.sha256)
    assert stored is not None and stored.is_file()
    stored.write_bytes(b"not a pickle")  # unreadable: parsed again, never an error
    with pytest.raises(AssertionError):  # the stub parser returns None: proof it ran
        measurements.Measurements(open_dataset(root).dataset).fio(f)
    assert calls == [str(f.path)]
    _flip_one_byte(f.path)  # the check still runs on every use, kept parse or not
    with pytest.raises(IngestError, match="manifest says"):
        measurements.Measurements(open_dataset(root).dataset).fio(f)
