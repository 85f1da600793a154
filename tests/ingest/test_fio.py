"""fio parser: real fio 3.33 fixtures and the third-party corpus, checked against fio's own fields."""

from __future__ import annotations

import gzip
import json
import lzma
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest import fio

NS_PER_MS = 1e6
US_PER_MS = 1e3


def _load_json(path: Path) -> dict:
    """fio's JSON read directly (decompressing by name, skipping text lines before the JSON)."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    elif path.suffix == ".xz":
        raw = lzma.decompress(raw)
    text = raw.decode()
    start = re.search(r"^\{", text, re.MULTILINE).start()
    return json.JSONDecoder().raw_decode(text, start)[0]


def _active(job: dict) -> list[str]:
    """Directions of a fio job that did I/O, read straight from the JSON."""
    return [d for d in ("read", "write", "trim") if d in job and job[d]["io_bytes"] > 0]


def _check_against_json(result: fio.FioResult, doc: dict) -> None:
    """Every parsed row equals the corresponding fio JSON fields after unit conversion."""
    expected_rows = [(j, d) for j in doc["jobs"] for d in _active(j)]
    assert len(result.jobs) == len(expected_rows)
    for (job, direction), row in zip(expected_rows, result.jobs.itertuples(), strict=True):
        stats = job[direction]
        assert row.job == job["jobname"]
        assert row.direction == direction
        assert row.iops == pytest.approx(stats["iops"])
        assert row.runtime_s == pytest.approx(stats["runtime"] / 1000)
        # bw_bytes appeared after fio 3.1; before it only bw (KiB/s)
        bw = stats["bw_bytes"] if "bw_bytes" in stats else stats["bw"] * 1024
        assert row.bw_bytes_per_s == pytest.approx(bw)
        if "io_kbytes" in stats:  # fio 3.x: io_bytes in bytes, io_kbytes alongside
            assert row.io_bytes == stats["io_bytes"] == stats["io_kbytes"] * 1024
        else:  # fio 2.x wrote KiB under the name io_bytes
            assert row.io_bytes == stats["io_bytes"] * 1024
        if "clat_ns" in stats:  # fio 3.x: ns
            assert row.clat_mean_ms == pytest.approx(stats["clat_ns"]["mean"] / NS_PER_MS)
            assert row.lat_mean_ms == pytest.approx(stats["lat_ns"]["mean"] / NS_PER_MS)
            pct = stats["clat_ns"].get("percentile", {})
            div = NS_PER_MS
        else:  # fio 2.x: µs
            assert row.clat_mean_ms == pytest.approx(stats["clat"]["mean"] / US_PER_MS)
            assert row.lat_mean_ms == pytest.approx(stats["lat"]["mean"] / US_PER_MS)
            pct = stats["clat"].get("percentile", {})
            div = US_PER_MS
        if "99.000000" in pct:
            assert row.clat_p99_ms == pytest.approx(pct["99.000000"] / div)
            assert row.clat_p50_ms == pytest.approx(pct["50.000000"] / div)
            assert row.clat_p999_ms == pytest.approx(pct["99.900000"] / div)
        assert row.usr_cpu_pct == pytest.approx(job["usr_cpu"])
        assert row.sys_cpu_pct == pytest.approx(job["sys_cpu"])
        assert row.error == 0


# ---------------------------------------------------------------- own fixtures (fio 3.33)


def test_seqwrite_64k_psync(fixtures_dir: Path) -> None:
    """A single sequential-write job: every field matches fio's JSON, options parsed to bytes."""
    path = fixtures_dir / "fio" / "fio-3.33_seqwrite_64k_psync.json"
    doc = _load_json(path)
    result = fio.parse(path)
    assert result.format == "fio-json"
    assert result.fio_version == "fio-3.33"
    _check_against_json(result, doc)
    row = result.jobs.iloc[0]
    assert (row.rw, row.bs_bytes, row.iodepth, row.numjobs) == ("write", 65536, 1, 1)
    assert result.unparsed == []
    assert result.histogram.empty


def test_jsonplus_xz_histogram(fixtures_dir: Path) -> None:
    """json+ (xz-compressed): the latency bins become a histogram with fio's counts."""
    path = fixtures_dir / "fio" / "fio-3.33_seqwrite_2m_libaio_qd4.jsonplus.json.xz"
    doc = _load_json(path)
    result = fio.parse(path)
    assert result.format == "fio-json+"
    _check_against_json(result, doc)
    assert result.jobs.iloc[0].bs_bytes == 2 * 1024 * 1024
    assert result.jobs.iloc[0].iodepth == 4
    bins = doc["jobs"][0]["write"]["clat_ns"]["bins"]
    hist = result.histogram
    assert set(hist.direction) == {"write"}
    assert len(hist) == len(bins)
    assert hist["count"].sum() == sum(bins.values())
    assert dict(zip(hist.lat_ns.astype(str), hist["count"], strict=True)) == bins
    # fio's total_ios counts the same completions the bins do
    assert hist["count"].sum() == doc["jobs"][0]["write"]["total_ios"]


def test_numjobs_without_group_reporting(fixtures_dir: Path) -> None:
    """numjobs=2 without group_reporting: two entries, options from 'global options'."""
    path = fixtures_dir / "fio" / "fio-3.33_numjobs2_no_group.json"
    doc = _load_json(path)
    assert "global options" in doc
    result = fio.parse(path)
    _check_against_json(result, doc)
    assert len(result.jobs) == 2
    assert result.jobs.numjobs.tolist() == [2, 2]
    assert result.jobs.bs_bytes.tolist() == [65536, 65536]
    assert result.jobs.iodepth.tolist() == [4, 4]


def test_numjobs_group_reporting_gzip(fixtures_dir: Path) -> None:
    """numjobs=2 with group_reporting (gzip): one aggregated entry named after the group."""
    path = fixtures_dir / "fio" / "fio-3.33_numjobs2_group_reporting.json.gz"
    doc = _load_json(path)
    result = fio.parse(path)
    _check_against_json(result, doc)
    assert result.jobs.job.tolist() == ["nj2-grouped"]
    assert result.jobs.numjobs.tolist() == [2]


def test_read_and_randrw(fixtures_dir: Path) -> None:
    """A read job and a randrw job: randrw gives a read row and a write row, rw kept."""
    path = fixtures_dir / "fio" / "fio-3.33_read_and_randrw.json"
    doc = _load_json(path)
    result = fio.parse(path)
    _check_against_json(result, doc)
    got = list(zip(result.jobs.job, result.jobs.rw, result.jobs.direction, strict=True))
    assert got == [
        ("seqread-64k", "read", "read"),
        ("randrw-4k", "randrw", "read"),
        ("randrw-4k", "randrw", "write"),
    ]
    assert result.jobs.bs_bytes.tolist() == [65536, 4096, 4096]


def test_normal_text_then_json(fixtures_dir: Path) -> None:
    """--output-format=normal,json: the text lines are kept as unparsed, the JSON is read."""
    path = fixtures_dir / "fio" / "fio-3.33_normal_then_json.txt"
    doc = _load_json(path)
    text = path.read_text()
    start = re.search(r"^\{", text, re.MULTILINE).start()
    end = json.JSONDecoder().raw_decode(text, start)[1]
    first, last = text.count("\n", 0, start) + 1, text.count("\n", 0, end) + 1
    result = fio.parse(path)
    _check_against_json(result, doc)
    expected = [(n, ln) for n, ln in enumerate(text.splitlines(), 1) if ln.strip() and not first <= n <= last]
    assert len(expected) > 20  # fio's normal report, before and after the JSON
    assert result.unparsed == expected
    assert any("unparsed" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("name", "job", "errno", "message"),
    [
        ("fio-3.33_error_enospc.json", "enospc", 28, "No space left on device"),
        ("fio-3.33_error_directory.json", "dir-as-file", 21, "Is a directory"),
    ],
)
def test_failed_job_is_refused_with_fios_message(
    fixtures_dir: Path, name: str, job: str, errno: int, message: str
) -> None:
    """A job with a non-zero error: IngestError naming the job, the errno and fio's message."""
    path = fixtures_dir / "fio" / name
    assert _load_json(path)["jobs"][0]["error"] == errno
    with pytest.raises(IngestError) as exc:
        fio.parse(path)
    assert exc.value.json_path == "jobs[0].error"
    assert repr(job) in str(exc.value)
    assert f"err={errno}/" in str(exc.value)
    assert message in str(exc.value)


def test_error_without_text_gives_errno(tmp_path: Path, fixtures_dir: Path) -> None:
    """Without fio's text lines the error message falls back to the errno description."""
    text = (fixtures_dir / "fio" / "fio-3.33_error_enospc.json").read_text()
    only_json = text[re.search(r"^\{", text, re.MULTILINE).start() :]
    path = tmp_path / "enospc.json"
    path.write_text(only_json)
    with pytest.raises(IngestError, match=r"errno 28 \(No space left on device\)"):
        fio.parse(path)


def test_summary_contract(fixtures_dir: Path) -> None:
    """summary(): the contract's keys plus direction; clat_mean_ms is fio's clat, lat_mean_ms its lat."""
    path = fixtures_dir / "fio" / "fio-3.33_read_and_randrw.json"
    doc = _load_json(path)
    s = fio.summary(fio.parse(path))
    json.dumps(s)
    assert s["fio_version"] == doc["fio version"]
    keys = {"job", "rw", "direction", "bs_bytes", "iodepth", "iops", "bw_bytes_per_s", "clat_mean_ms"}
    keys.add("lat_mean_ms")
    assert all(set(j) == keys for j in s["jobs"])
    randrw_write = doc["jobs"][1]["write"]
    assert s["jobs"][2] == {
        "job": "randrw-4k",
        "rw": "randrw",
        "direction": "write",
        "bs_bytes": 4096,
        "iodepth": 4,
        "iops": pytest.approx(randrw_write["iops"]),
        "bw_bytes_per_s": pytest.approx(randrw_write["bw_bytes"]),
        "clat_mean_ms": pytest.approx(randrw_write["clat_ns"]["mean"] / NS_PER_MS),
        "lat_mean_ms": pytest.approx(randrw_write["lat_ns"]["mean"] / NS_PER_MS),
    }
    assert randrw_write["lat_ns"]["mean"] != randrw_write["clat_ns"]["mean"]  # the two differ


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("fio-3.33_seqwrite_64k_psync.json", "fio-json"),
        ("fio-3.33_normal_then_json.txt", "fio-json"),
        ("fio-3.33_seqwrite_2m_libaio_qd4.jsonplus.json.xz", "fio-json+"),
    ],
)
def test_sniff(fixtures_dir: Path, name: str, expected: str) -> None:
    """sniff() recognises fio output by content."""
    from iscsi_report.core.ingest.textio import read_text

    assert fio.sniff(read_text(fixtures_dir / "fio" / name)) == expected


def test_sniff_rejects_other_tools(fixtures_dir: Path) -> None:
    """sniff() says None for iostat JSON and text."""
    from iscsi_report.core.ingest.textio import read_text

    for path in (fixtures_dir / "iostat").iterdir():
        assert fio.sniff(read_text(path)) is None, path.name


# ---------------------------------------------------------------- option parsing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2M", 2 * 1024**2),
        ("64k", 65536),
        ("64K", 65536),
        ("4096B", 4096),
        ("4096", 4096),
        ("1MiB", 1024**2),
        ("128KB", 128 * 1024),
        ("1g", 1024**3),
    ],
)
def test_parse_size_bytes(text: str, expected: int) -> None:
    """fio sizes with kb_base=1024 (fio's default)."""
    assert fio.parse_size_bytes(text) == expected


def test_parse_size_kb_base_1000() -> None:
    """With kb_base=1000, k is 1000 but KiB stays 1024."""
    assert fio.parse_size_bytes("4k", kb_base=1000) == 4000
    assert fio.parse_size_bytes("4KiB", kb_base=1000) == 4096


@pytest.mark.parametrize("bad", ["", "abc", "4x", "1.5B", "-4k"])
def test_parse_size_rejects(bad: str) -> None:
    """Anything that is not a fio size raises ValueError."""
    with pytest.raises(ValueError):
        fio.parse_size_bytes(bad)


def test_block_size_per_direction() -> None:
    """bs=read,write[,trim]; ranges with equal ends; unequal ranges are NaN."""
    assert fio.block_size_bytes("4k,64k", "read") == 4096
    assert fio.block_size_bytes("4k,64k", "write") == 65536
    assert fio.block_size_bytes("4k,64k", "trim") == 65536
    assert fio.block_size_bytes("4096B-4096B", "write") == 4096
    assert math.isnan(fio.block_size_bytes("4k-64k", "read"))


# ---------------------------------------------------------------- malformed input


def test_no_json(tmp_path: Path) -> None:
    """A file with no JSON at all names what it found."""
    path = tmp_path / "x.json"
    path.write_text("hello\n")
    with pytest.raises(IngestError, match="no fio JSON output found"):
        fio.parse(path)


def test_truncated_json_names_line(tmp_path: Path, fixtures_dir: Path) -> None:
    """Truncated JSON: IngestError with the line where decoding failed."""
    text = (fixtures_dir / "fio" / "fio-3.33_seqwrite_64k_psync.json").read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2])
    with pytest.raises(IngestError) as exc:
        fio.parse(path)
    assert exc.value.line is not None and exc.value.line > 1


def test_non_numeric_field_names_json_path(tmp_path: Path, fixtures_dir: Path) -> None:
    """A string where fio writes a number: the JSON path is named."""
    doc = _load_json(fixtures_dir / "fio" / "fio-3.33_seqwrite_64k_psync.json")
    doc["jobs"][0]["write"]["clat_ns"]["mean"] = "fast"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(IngestError) as exc:
        fio.parse(path)
    assert exc.value.json_path == "jobs[0].write.clat_ns.mean"


def test_bad_bs_option_names_json_path(tmp_path: Path, fixtures_dir: Path) -> None:
    """An unreadable bs option is refused with its JSON path."""
    doc = _load_json(fixtures_dir / "fio" / "fio-3.33_seqwrite_64k_psync.json")
    doc["jobs"][0]["job options"]["bs"] = "huge"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(IngestError) as exc:
        fio.parse(path)
    assert exc.value.json_path == "jobs[0].job options.bs"


def test_negative_iops_fails_schema(tmp_path: Path, fixtures_dir: Path) -> None:
    """Values outside the schema's ranges are an IngestError, not a silent row."""
    doc = _load_json(fixtures_dir / "fio" / "fio-3.33_seqwrite_64k_psync.json")
    doc["jobs"][0]["write"]["iops"] = -1.0
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(IngestError, match="validation"):
        fio.parse(path)


# ---------------------------------------------------------------- third-party corpus

CORPUS_PARSED = [
    "fioplot_fio-2.18_randread_dup-zero-percentile-keys.json",
    "fioplot_fio-3.14_randread_single-job.json",
    "fioplot_fio-3.16_randrw_group_reporting_8-jobs.json",
    "fioplot_fio-3.1_floppy_randwrite.json",
    "fioplot_fio-3.6_8-jobs-no-group-reporting.json",
    "pkb_fio-2.1.4_multi-job.json",
    "pkb_fio-2.17_group_reporting_hist.json",
]
CORPUS_REFUSED = {
    "fioplot_fio-3.33_error-text-before-json.json": "failed with error 22",
    "fioplot_fio_error-only_engine-not-loadable.txt": "engine libaio not loadable",
    "fioplot_fio_error-only_shm.txt": "failed to setup shm segment",
    "fioplot_fio-3.34_sigint-text-before-json.json": "fio was interrupted",
}


def test_corpus_is_fully_classified(corpus_dir: Path) -> None:
    """Every corpus fio file is listed as parsed or refused below."""
    names = {p.name for p in (corpus_dir / "fio").iterdir()}
    assert names == set(CORPUS_PARSED) | set(CORPUS_REFUSED)


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS_PARSED)
def test_corpus_parsed(corpus_dir: Path, name: str) -> None:
    """Corpus files that fio completed: values equal the file's own fields."""
    path = corpus_dir / "fio" / name
    doc = _load_json(path)
    result = fio.parse(path)
    _check_against_json(result, doc)
    assert result.fio_version == doc["fio version"]


@pytest.mark.corpus
@pytest.mark.parametrize(("name", "message"), sorted(CORPUS_REFUSED.items()))
def test_corpus_refused(corpus_dir: Path, name: str, message: str) -> None:
    """fio error outputs are refused with fio's own message."""
    with pytest.raises(IngestError, match=re.escape(message)):
        fio.parse(corpus_dir / "fio" / name)


@pytest.mark.corpus
def test_corpus_fio2_percentile_padding(corpus_dir: Path) -> None:
    """fio 2.18's duplicate "0.00": 0 percentile keys do not hide the real percentiles."""
    result = fio.parse(corpus_dir / "fio" / "fioplot_fio-2.18_randread_dup-zero-percentile-keys.json")
    row = result.jobs.iloc[0]
    assert row.clat_p99_ms > 0 and row.clat_p50_ms > 0


@pytest.mark.corpus
def test_corpus_old_fio_without_options(corpus_dir: Path) -> None:
    """fio 2.1.4 recorded no options: rw/bs/iodepth are missing values, with a warning."""
    result = fio.parse(corpus_dir / "fio" / "pkb_fio-2.1.4_multi-job.json")
    assert result.jobs.rw.isna().all()
    assert result.jobs.bs_bytes.isna().all()
    assert result.jobs.iodepth.isna().all()
    assert any("no job options" in w for w in result.warnings)
    assert all(j["rw"] is None and j["iodepth"] is None for j in fio.summary(result)["jobs"])


@pytest.mark.corpus
def test_corpus_group_reporting_options(corpus_dir: Path) -> None:
    """fio 2.17 group_reporting: options merged from 'global options' and 'job options'."""
    path = corpus_dir / "fio" / "pkb_fio-2.17_group_reporting_hist.json"
    doc = _load_json(path)
    result = fio.parse(path)
    expected = [(j["job options"]["rw"], fio.parse_size_bytes(j["job options"]["bs"])) for j in doc["jobs"]]
    assert list(zip(result.jobs.rw, result.jobs.bs_bytes, strict=True)) == expected
    assert result.jobs.numjobs.tolist() == [int(j["job options"]["numjobs"]) for j in doc["jobs"]]


@pytest.mark.corpus
def test_corpus_sigint_warning(corpus_dir: Path) -> None:
    """'fio: terminating on signal 2' before the JSON: an error, or a flagged result when asked."""
    path = corpus_dir / "fio" / "fioplot_fio-3.34_sigint-text-before-json.json"
    with pytest.raises(IngestError, match=r"fio was interrupted \(line 2: .*signal 2\)") as info:
        fio.parse(path)
    assert "shortened run" in str(info.value)
    result = fio.parse(path, allow_interrupted=True)
    assert result.unparsed == [(2, "fio: terminating on signal 2")]
    assert result.interrupted is not None and "signal 2" in result.interrupted
    assert any(w.startswith("INTERRUPTED") for w in result.warnings)
    assert fio.summary(result)["interrupted"] == result.interrupted


def test_frames_have_schema_dtypes(fixtures_dir: Path) -> None:
    """The jobs frame has the documented columns in order."""
    result = fio.parse(fixtures_dir / "fio" / "fio-3.33_seqwrite_64k_psync.json")
    assert list(result.jobs.columns) == list(fio.JOBS_SCHEMA.columns)
    assert pd.api.types.is_float_dtype(result.jobs.bw_bytes_per_s)


@pytest.mark.parametrize(
    ("bs", "direction", "expected"),
    [
        ("bs=(R) 64.0KiB-64.0KiB, (W) 2048KiB-2048KiB, (T) 4096B-4096B", "read", 65536),
        ("bs=(R) 64.0KiB-64.0KiB, (W) 2048KiB-2048KiB, (T) 4096B-4096B", "write", 2 * 1024**2),
        ("(R) 64.0KiB-64.0KiB, (W) 2048KiB-2048KiB, (T) 4096B-4096B", "trim", 4096),
        ("4K-4K/16K-16K/4K-4K", "write", 16384),  # fio 2.x text header
    ],
)
def test_block_size_text_forms(bs: str, direction: str, expected: int) -> None:
    """The block-size forms of fio's text header lines."""
    assert fio.block_size_bytes(bs, direction) == expected


def test_options_from_text_header_when_json_has_none(tmp_path: Path, fixtures_dir: Path) -> None:
    """No options in the JSON: rw, bs, iodepth come from fio's text header; numjobs unknown."""
    text = (fixtures_dir / "fio" / "fio-3.33_normal_then_json.txt").read_text()
    start = re.search(r"^\{", text, re.MULTILINE).start()
    doc, end = json.JSONDecoder().raw_decode(text, start)
    del doc["jobs"][0]["job options"]
    path = tmp_path / "noopts.txt"
    path.write_text(text[:start] + json.dumps(doc, indent=2) + text[end:])
    header = text.splitlines()[0]  # "normal-then-json: (g=0): rw=write, bs=(R) 64.0KiB-..."
    assert "rw=write" in header and "64.0KiB" in header and "iodepth=1" in header
    row = fio.parse(path).jobs.iloc[0]
    assert (row.rw, row.bs_bytes, row.iodepth) == ("write", 65536, 1)
    assert pd.isna(row.numjobs)
