"""The lab load's kept assembly: never stale, never unchecked, the same frames as assembling.

`lab.load` keeps the frames it assembles (runs, networks, captures) in the parse cache folder,
keyed by every loaded file's checked sha256 and labels and by the code that assembles them.
A changed raw file or changed code must miss; a tampered file must still fail its checksum with
the assembly kept; every file must still be read (and recorded as read) once per load.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from iscsi_report.analyses import lab
from iscsi_report.core import dataset as datasets
from iscsi_report.core import keep, measurements
from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import textio

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
SWEEP = "lab-iscsi-2026-jitter"  # the smallest real lab sweep with every tool the lab load reads


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the sweep, with a private cache folder and an empty process cache."""
    monkeypatch.setenv(keep.PARSE_CACHE_ENV, str(tmp_path / "kept"))
    measurements.forget()
    return Path(shutil.copytree(RAW / SWEEP, tmp_path / SWEEP))


def _load_afresh(root: Path) -> lab.LabData:
    """``lab.load`` as a new process would run it (no dataset kept in this process)."""
    measurements.forget()
    return lab.load(root)


def _loaded(data: lab.LabData) -> list[datasets.RawFile]:
    """The files the lab load reads."""
    return [f for f in data.dataset.files if f.tool in lab.LOADED_TOOLS]


def _assert_same_frames(a: lab.LabData, b: lab.LabData) -> None:
    """Equal runs, networks and captures frames (values, dtypes, index and column order)."""
    pd.testing.assert_frame_equal(a.runs, b.runs)
    pd.testing.assert_frame_equal(a.networks, b.networks)
    pd.testing.assert_frame_equal(a.captures, b.captures)


def _rewrite_one_fio_latency(path: Path) -> None:
    """Change fio's mean completion latency of the file's writes (still valid fio JSON)."""
    text = path.read_text(encoding="utf-8")
    clat = text.index('"clat_ns" : {', text.index('"write" : {'))
    at = text.index('"mean" : ', clat) + len('"mean" : ')
    path.write_text(text[:at] + "9" + text[at:], encoding="utf-8")


def test_a_kept_assembly_gives_the_frames_assembling_gives(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _load_afresh(root)
    assert first.dataset.parse_counts, "nothing was kept yet: the frames were assembled from parses"
    again = _load_afresh(root)
    assert not again.dataset.parse_counts, "the kept assembly served the frames: no file parsed"
    _assert_same_frames(first, again)
    monkeypatch.delenv(keep.PARSE_CACHE_ENV)
    _assert_same_frames(_load_afresh(root), again)  # nothing kept at all: assembled in full
    pd.testing.assert_frame_equal(first.path, again.path)  # the captures, parsed when asked


def test_a_kept_load_still_reads_checks_and_records_every_file_once(root: Path) -> None:
    _load_afresh(root)
    data = _load_afresh(root)
    loaded = _loaded(data)
    assert {f.rel: data.dataset.read_counts[f.rel] for f in loaded} == {f.rel: 1 for f in loaded}
    assert {f.path for f in loaded} <= set(textio.files_read()), "the batch sees every file as read"
    capture = data.dataset.select("tshark")[0]
    assert len(data.capture_files[capture.rel].pdus) > 0
    assert data.dataset.read_counts[capture.rel] == 1, (
        "a later parse uses the checked text, not a second read"
    )


def test_a_tampered_file_fails_its_checksum_with_the_assembly_kept(root: Path) -> None:
    _load_afresh(root)
    target = _loaded(_load_afresh(root))[-1]
    data = bytearray(target.path.read_bytes())
    data[len(data) // 2] ^= 1  # one bit of one byte
    target.path.write_bytes(bytes(data))
    with pytest.raises(IngestError, match=r"sha256 is [0-9a-f]{64}, manifest says") as err:
        _load_afresh(root)
    assert target.path.name in str(err.value)


def test_a_changed_raw_file_misses_the_kept_assembly(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _load_afresh(root)
    target = before.dataset.select("fio")[0]
    _rewrite_one_fio_latency(target.path)
    datasets.update_checksums(root)  # an intended change: the manifest records the new bytes
    after = _load_afresh(root)
    assert after.dataset.parse_counts[target.rel] == 1, "the changed file was parsed, not served stale"
    changed = after.runs.set_index("file").loc[target.rel, "clat_mean_ms"]
    assert changed != before.runs.set_index("file").loc[target.rel, "clat_mean_ms"]
    monkeypatch.delenv(keep.PARSE_CACHE_ENV)
    _assert_same_frames(_load_afresh(root), after)


def test_changed_assembly_code_misses_the_kept_assembly(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _load_afresh(root)
    assert not _load_afresh(root).dataset.parse_counts
    monkeypatch.setattr(lab, "assembly_code", lambda: "changed-code")
    assert _load_afresh(root).dataset.parse_counts, "new code: assembled again"


def test_the_assembly_code_digest_follows_the_parsers_code(monkeypatch: pytest.MonkeyPatch) -> None:
    lab.assembly_code.cache_clear()
    today = lab.assembly_code()
    monkeypatch.setattr(keep, "code_of", lambda relative: f"edited {relative}")
    lab.assembly_code.cache_clear()
    try:
        assert lab.assembly_code() != today
    finally:
        monkeypatch.undo()
        lab.assembly_code.cache_clear()
    assert lab.assembly_code() == today


def test_each_capture_timeline_is_computed_once_and_kept(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The path check and a write's timeline share one computation per capture, kept for a new process."""
    calls: list[str] = []
    real = lab.tshark.timeline

    def counted(result: lab.tshark.TsharkResult) -> pd.DataFrame:
        calls.append(str(result.path))
        return real(result)

    monkeypatch.setattr(lab.tshark, "timeline", counted)
    data = _load_afresh(root)
    captured = list(data.capture_files)
    assert captured, "the sweep holds captures"
    data.path  # noqa: B018 (computed on first use)
    lab.write_timeline(data, captured[0])
    assert sorted(calls) == sorted(set(calls)) and len(calls) == len(captured)
    calls.clear()
    again = _load_afresh(root)  # as a new process: the kept timelines are read, not computed
    again.path  # noqa: B018
    assert calls == []
