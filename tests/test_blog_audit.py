"""Reproduction audit of the blog study: every published number's verdict asserted explicitly, so a
change to the raw files, the transcription or an analysis that moves any number fails here."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from iscsi_report.analyses import audit, blog_audit
from iscsi_report.analyses.audit import (
    MATCH,
    MISMATCH,
    NOT_RECOMPUTABLE,
    RECONSTRUCTED,
    VERDICTS,
    PublishedNumber,
    load_published,
)
from iscsi_report.core.dataset import Dataset, RawFile
from iscsi_report.core.errors import IngestError, ReportError
from iscsi_report.core.measurements import Measurements
from iscsi_report.pipeline.cache import sha256_file

EXPECTED_VERDICTS = {
    "intro.observed_mib_per_s": RECONSTRUCTED,
    "intro.iperf3_mib_per_s": MISMATCH,
    "hardware.hdd_krpm": NOT_RECOMPUTABLE,
    "network.iperf3.wireless_mbit_per_s": RECONSTRUCTED,
    "network.iperf3.wired_mbit_per_s": RECONSTRUCTED,
    "latency.wireless_initial_estimate_ms": RECONSTRUCTED,
    "latency.wireless_1s.upper_mode_ms": RECONSTRUCTED,
    "setup.ping_interval_fast_ms": MATCH,
    "setup.ping_interval_slow_s": MATCH,
    "setup.ping_duration_min": MATCH,
    "latency.wired_1s.mean_ms": RECONSTRUCTED,
    "latency.wired_1s.p50_ms": RECONSTRUCTED,
    "latency.wired_1s.p99_ms": RECONSTRUCTED,
    "latency.wired_1s.max_ms": RECONSTRUCTED,
    "latency.wired_1s.sstdev_ms": RECONSTRUCTED,
    "latency.wired_1s.cv_pct": RECONSTRUCTED,
    "latency.wireless_1s.mean_ms": RECONSTRUCTED,
    "latency.wireless_1s.p50_ms": RECONSTRUCTED,
    "latency.wireless_1s.p99_ms": MISMATCH,
    "latency.wireless_1s.max_ms": RECONSTRUCTED,
    "latency.wireless_1s.sstdev_ms": RECONSTRUCTED,
    "latency.wireless_1s.cv_pct": MISMATCH,
    "latency.wired_2ms.mean_ms": RECONSTRUCTED,
    "latency.wired_2ms.p50_ms": RECONSTRUCTED,
    "latency.wired_2ms.p99_ms": RECONSTRUCTED,
    "latency.wired_2ms.max_ms": RECONSTRUCTED,
    "latency.wired_2ms.sstdev_ms": RECONSTRUCTED,
    "latency.wired_2ms.cv_pct": RECONSTRUCTED,
    "latency.wireless_2ms.mean_ms": RECONSTRUCTED,
    "latency.wireless_2ms.p50_ms": RECONSTRUCTED,
    "latency.wireless_2ms.p99_ms": RECONSTRUCTED,
    "latency.wireless_2ms.max_ms": RECONSTRUCTED,
    "latency.wireless_2ms.sstdev_ms": RECONSTRUCTED,
    "latency.wireless_2ms.cv_pct": RECONSTRUCTED,
    "setup.fio_size_gib": MATCH,
    "setup.fio_numjobs": MATCH,
    "setup.fio_runtime_s": MATCH,
    "setup.fio_version_blockdev": MATCH,
    "setup.fio_version_libiscsi": MATCH,
    "setup.fio_version_libiscsi_commits": MATCH,
    "iscsi_parameters.lio_default.DefaultTime2Retain": MATCH,
    "iscsi_parameters.lio_default.DefaultTime2Wait": MATCH,
    "iscsi_parameters.lio_default.ErrorRecoveryLevel": MATCH,
    "iscsi_parameters.lio_default.FirstBurstLength": MATCH,
    "iscsi_parameters.lio_default.MaxBurstLength": MATCH,
    "iscsi_parameters.lio_default.MaxConnections": MATCH,
    "iscsi_parameters.lio_default.MaxOutstandingR2T": MATCH,
    "iscsi_parameters.lio_default.MaxRecvDataSegmentLength": MATCH,
    "iscsi_parameters.lio_default.MaxXmitDataSegmentLength": MATCH,
    "setup.libiscsi_port": MATCH,
    "fio.local.hdd.64k.mib_per_s": RECONSTRUCTED,
    "fio.local.hdd.64k.iops": RECONSTRUCTED,
    "fio.local.hdd.128k.mib_per_s": RECONSTRUCTED,
    "fio.local.hdd.128k.iops": RECONSTRUCTED,
    "fio.local.hdd.256k.mib_per_s": RECONSTRUCTED,
    "fio.local.hdd.256k.iops": RECONSTRUCTED,
    "fio.local.hdd.512k.mib_per_s": RECONSTRUCTED,
    "fio.local.hdd.512k.iops": RECONSTRUCTED,
    "fio.local.hdd.1m.mib_per_s": RECONSTRUCTED,
    "fio.local.hdd.1m.iops": RECONSTRUCTED,
    "fio.local.hdd.2m.mib_per_s": RECONSTRUCTED,
    "fio.local.hdd.2m.iops": RECONSTRUCTED,
    "fio.local.ssd.64k.mib_per_s": RECONSTRUCTED,
    "fio.local.ssd.64k.iops": RECONSTRUCTED,
    "fio.local.ssd.128k.mib_per_s": RECONSTRUCTED,
    "fio.local.ssd.128k.iops": RECONSTRUCTED,
    "fio.local.ssd.256k.mib_per_s": RECONSTRUCTED,
    "fio.local.ssd.256k.iops": RECONSTRUCTED,
    "fio.local.ssd.512k.mib_per_s": RECONSTRUCTED,
    "fio.local.ssd.512k.iops": RECONSTRUCTED,
    "fio.local.ssd.1m.mib_per_s": RECONSTRUCTED,
    "fio.local.ssd.1m.iops": RECONSTRUCTED,
    "fio.local.ssd.2m.mib_per_s": RECONSTRUCTED,
    "fio.local.ssd.2m.iops": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.64k.mib_per_s": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.64k.iops": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.64k.cpu_pct": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.128k.mib_per_s": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.128k.iops": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.128k.cpu_pct": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.256k.mib_per_s": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.256k.iops": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.256k.cpu_pct": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.512k.mib_per_s": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.512k.iops": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.512k.cpu_pct": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.1m.mib_per_s": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.1m.iops": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.1m.cpu_pct": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.2m.mib_per_s": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.2m.iops": RECONSTRUCTED,
    "fio.wireless.libiscsi_hdd.2m.cpu_pct": RECONSTRUCTED,
    "fio.wireless.blockdev_hdd.64k.mib_per_s": MISMATCH,
    "fio.wireless.blockdev_hdd.64k.iops": RECONSTRUCTED,
    "fio.wireless.blockdev_hdd.128k.mib_per_s": RECONSTRUCTED,
    "fio.wireless.blockdev_hdd.128k.iops": RECONSTRUCTED,
    "fio.wireless.blockdev_hdd.256k.mib_per_s": RECONSTRUCTED,
    "fio.wireless.blockdev_hdd.256k.iops": RECONSTRUCTED,
    "fio.wireless.blockdev_hdd.512k.mib_per_s": RECONSTRUCTED,
    "fio.wireless.blockdev_hdd.512k.iops": RECONSTRUCTED,
    "fio.wireless.blockdev_hdd.1m.mib_per_s": RECONSTRUCTED,
    "fio.wireless.blockdev_hdd.1m.iops": RECONSTRUCTED,
    "fio.wireless.blockdev_hdd.2m.mib_per_s": RECONSTRUCTED,
    "fio.wireless.blockdev_hdd.2m.iops": RECONSTRUCTED,
    "fio.wireless.blockdev_ssd.64k.mib_per_s": RECONSTRUCTED,
    "fio.wireless.blockdev_ssd.64k.iops": RECONSTRUCTED,
    "fio.wireless.blockdev_ssd.128k.mib_per_s": RECONSTRUCTED,
    "fio.wireless.blockdev_ssd.128k.iops": RECONSTRUCTED,
    "fio.wireless.blockdev_ssd.256k.mib_per_s": RECONSTRUCTED,
    "fio.wireless.blockdev_ssd.256k.iops": RECONSTRUCTED,
    "fio.wireless.blockdev_ssd.512k.mib_per_s": RECONSTRUCTED,
    "fio.wireless.blockdev_ssd.512k.iops": RECONSTRUCTED,
    "fio.wireless.blockdev_ssd.1m.mib_per_s": RECONSTRUCTED,
    "fio.wireless.blockdev_ssd.1m.iops": RECONSTRUCTED,
    "fio.wireless.blockdev_ssd.2m.mib_per_s": RECONSTRUCTED,
    "fio.wireless.blockdev_ssd.2m.iops": RECONSTRUCTED,
    "discussion.blockdev_ssd_vs_hdd_2m_pct": MATCH,
    "discussion.end_to_end_iops_2m": RECONSTRUCTED,
    "discussion.hdd_raw_iops_2m": RECONSTRUCTED,
    "discussion.cpu_pct_2m": RECONSTRUCTED,
    "discussion.projected_iops_at_full_cpu": MISMATCH,
    "network.iperf3.wireless_mib_per_s": MISMATCH,
    "network.iperf3.wireless_2m_iops": MISMATCH,
    "model.data_pdu_kib": MATCH,
    "model.block_mib": MATCH,
    "model.immediate_data_kib": MATCH,
    "model.r2t1.r2t_rounds_repeat": MATCH,
    "model.wireless.one_way_ms": MATCH,
    "model.wireless.net_64k_ms": MATCH,
    "iostat.excerpt.w_per_s": RECONSTRUCTED,
    "iostat.excerpt.wkB_per_s": RECONSTRUCTED,
    "iostat.excerpt.w_await_ms": RECONSTRUCTED,
    "iostat.excerpt.wareq_sz_kB": RECONSTRUCTED,
    "iostat.excerpt.aqu_sz": RECONSTRUCTED,
    "iostat.excerpt.util_pct": RECONSTRUCTED,
    "model.transfer_1mib_ms": MISMATCH,
    "model.transfer_1mib_factor": MATCH,
    "model.hdd.io_1m_ms": RECONSTRUCTED,
    "model.hdd.iops_1m": RECONSTRUCTED,
    "model.cpu_pct_ref": RECONSTRUCTED,
    "model.cpu_ref_iops": RECONSTRUCTED,
    "model.cpu_2m_ms": MATCH,
    "model.r2t1.wireless_hdd.op_ms": MATCH,
    "model.r2t1.wireless_hdd.iops": MATCH,
    "model.r2t1.wireless_hdd.mib_per_s": MATCH,
    "model.r2t1.wireless_hdd.actual_mib_per_s": RECONSTRUCTED,
    "model.r2t1.wireless_hdd.divergence_pct": MATCH,
    "model.r2t16.max_outstanding_r2t": MATCH,
    "model.r2t16.r2ts_per_2m": MATCH,
    "model.r2t16.transfer_kib": MATCH,
    "model.r2t16.wireless_hdd.op_ms": MATCH,
    "model.r2t16.wireless_hdd.iops": MATCH,
    "model.r2t16.wireless_hdd.mib_per_s": MISMATCH,
    "model.r2t16.wireless_hdd.actual_mib_per_s": RECONSTRUCTED,
    "model.r2t16.wireless_hdd.divergence_pct": MATCH,
    "projection.r2t1.wireless_hdd.io_lat_ms": RECONSTRUCTED,
    "projection.r2t1.wireless_hdd.cpu_lat_ms": MATCH,
    "projection.r2t1.wireless_hdd.net_lat_ms": MATCH,
    "projection.r2t1.wireless_hdd.net_64k_ms": MATCH,
    "projection.r2t1.wireless_hdd.op_ms": MATCH,
    "projection.r2t1.wireless_hdd.iops": MATCH,
    "projection.r2t1.wireless_hdd.est_mib_per_s": MATCH,
    "projection.r2t1.wireless_hdd.actual_mib_per_s": RECONSTRUCTED,
    "projection.r2t1.wireless_hdd.error_pct": MATCH,
    "projection.r2t1.wired_hdd.io_lat_ms": RECONSTRUCTED,
    "projection.r2t1.wired_hdd.cpu_lat_ms": MATCH,
    "projection.r2t1.wired_hdd.net_lat_ms": MATCH,
    "projection.r2t1.wired_hdd.net_64k_ms": MISMATCH,
    "projection.r2t1.wired_hdd.op_ms": MISMATCH,
    "projection.r2t1.wired_hdd.iops": MISMATCH,
    "projection.r2t1.wired_hdd.est_mib_per_s": MISMATCH,
    "projection.r2t1.wired_hdd.actual_mib_per_s": RECONSTRUCTED,
    "projection.r2t1.wired_hdd.error_pct": MISMATCH,
    "projection.r2t1.wired_ssd.io_lat_ms": MISMATCH,
    "projection.r2t1.wired_ssd.cpu_lat_ms": MATCH,
    "projection.r2t1.wired_ssd.net_lat_ms": MATCH,
    "projection.r2t1.wired_ssd.net_64k_ms": MISMATCH,
    "projection.r2t1.wired_ssd.op_ms": MISMATCH,
    "projection.r2t1.wired_ssd.iops": MISMATCH,
    "projection.r2t1.wired_ssd.est_mib_per_s": MISMATCH,
    "projection.r2t1.wired_ssd.actual_mib_per_s": RECONSTRUCTED,
    "projection.r2t1.wired_ssd.error_pct": MISMATCH,
    "projection.r2t16.wireless_hdd.io_lat_ms": RECONSTRUCTED,
    "projection.r2t16.wireless_hdd.cpu_lat_ms": MATCH,
    "projection.r2t16.wireless_hdd.net_lat_ms": MATCH,
    "projection.r2t16.wireless_hdd.net_64k_ms": MATCH,
    "projection.r2t16.wireless_hdd.op_ms": MATCH,
    "projection.r2t16.wireless_hdd.iops": MATCH,
    "projection.r2t16.wireless_hdd.est_mib_per_s": MATCH,
    "projection.r2t16.wireless_hdd.actual_mib_per_s": RECONSTRUCTED,
    "projection.r2t16.wireless_hdd.error_pct": MATCH,
    "projection.r2t16.wired_hdd.io_lat_ms": RECONSTRUCTED,
    "projection.r2t16.wired_hdd.cpu_lat_ms": MATCH,
    "projection.r2t16.wired_hdd.net_lat_ms": MATCH,
    "projection.r2t16.wired_hdd.net_64k_ms": MISMATCH,
    "projection.r2t16.wired_hdd.op_ms": MATCH,
    "projection.r2t16.wired_hdd.iops": MISMATCH,
    "projection.r2t16.wired_hdd.est_mib_per_s": MATCH,
    "projection.r2t16.wired_hdd.actual_mib_per_s": RECONSTRUCTED,
    "projection.r2t16.wired_hdd.error_pct": MATCH,
    "projection.r2t16.wired_ssd.io_lat_ms": MISMATCH,
    "projection.r2t16.wired_ssd.cpu_lat_ms": MATCH,
    "projection.r2t16.wired_ssd.net_lat_ms": MATCH,
    "projection.r2t16.wired_ssd.net_64k_ms": MISMATCH,
    "projection.r2t16.wired_ssd.op_ms": MATCH,
    "projection.r2t16.wired_ssd.iops": MATCH,
    "projection.r2t16.wired_ssd.est_mib_per_s": MATCH,
    "projection.r2t16.wired_ssd.actual_mib_per_s": RECONSTRUCTED,
    "projection.r2t16.wired_ssd.error_pct": MATCH,
    "projection.r2t1.error_low_pct": MISMATCH,
    "projection.r2t1.error_high_pct": MATCH,
    "projection.r2t16.error_typical_pct": MATCH,
    "projection.r2t16.error_wireless_hdd_pct": MATCH,
    "projection.r2t16.wireless_iops": MATCH,
    "projection.r2t16.one_way_contributions": MATCH,
    "projection.r2t16.message_interval_ms": MATCH,
    "conclusions.ssd_speedup_wired_pct": MATCH,
    "conclusions.local_ssd_speedup_pct": MATCH,
}


ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw" / "blog-2023"
PUBLISHED = ROOT / "data" / "published"


@pytest.fixture(scope="module")
def result() -> blog_audit.BlogAudit:
    return blog_audit.run(RAW, PUBLISHED)


@pytest.fixture(scope="module")
def table(result: blog_audit.BlogAudit):
    return blog_audit.audit_frame(result).set_index("id")


def test_every_published_number_has_an_expected_verdict() -> None:
    published = load_published(PUBLISHED / blog_audit.BLOG_FILE)
    assert set(published) == set(EXPECTED_VERDICTS)
    assert len(published) == 218


@pytest.mark.parametrize("key", sorted(EXPECTED_VERDICTS))
def test_verdict(table, key: str) -> None:
    assert table.loc[key, "verdict"] == EXPECTED_VERDICTS[key], table.loc[key, "explanation"]


def test_recompute_returns_every_id_as_a_float(result) -> None:
    values = blog_audit.recompute(RAW, PUBLISHED)
    assert set(values) == set(EXPECTED_VERDICTS)
    assert all(isinstance(v, float) for v in values.values())
    for key, rec in result.values.items():
        assert values[key] == rec.value or (math.isnan(values[key]) and math.isnan(rec.value)), key
    assert math.isnan(values["hardware.hdd_krpm"])  # the only number nothing recomputes


def test_every_mismatch_is_explained_in_the_published_yaml(table) -> None:
    published = load_published(PUBLISHED / blog_audit.BLOG_FILE)
    for key in table.index[table["verdict"].isin([MISMATCH, NOT_RECOMPUTABLE])]:
        assert published[key].explanation, f"{key}: mismatch without an explanation"
        assert table.loc[key, "explanation"] == published[key].explanation


def test_generation_targets_are_never_called_a_match(result, table) -> None:
    targets = audit.load_generation_targets(RAW)
    assert result.generated_from == targets and len(targets) > 100
    assert not set(table.index[table["verdict"] == MATCH]) & targets
    assert set(table.index[table["verdict"] == RECONSTRUCTED]) <= targets
    # the four: the 4 ms upper mode, 7.3 ms = 1000 / 136 and the iostat line
    for key in ("latency.wireless_1s.upper_mode_ms", "model.hdd.io_1m_ms", "iostat.excerpt.w_await_ms"):
        assert table.loc[key, "verdict"] == RECONSTRUCTED, key


def test_without_the_targets_file_the_same_values_are_matches(tmp_path: Path, result) -> None:
    published, recomputed, _ = blog_audit.audit_rows("", "", result=result)
    plain = audit.audit_table(published, recomputed).set_index("id")
    assert plain.loc["model.hdd.io_1m_ms", "verdict"] == MATCH
    assert audit.load_generation_targets(tmp_path) == frozenset()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("model.r2t1.wireless_hdd.op_ms", 70.14),
        ("projection.r2t1.wireless_hdd.op_ms", 70.14),
        ("model.r2t16.wireless_hdd.op_ms", 49.14),
        ("projection.r2t16.wireless_hdd.op_ms", 49.14),
    ],
)
def test_worked_examples_come_out_exactly(result, table, key: str, value: float) -> None:
    assert result.values[key].value == pytest.approx(value, abs=1e-9)
    assert table.loc[key, "verdict"] == MATCH


def test_wired_serial_op_times_follow_the_formula_not_the_print(result) -> None:
    hdd = result.values["projection.r2t1.wired_hdd.op_ms"].value
    ssd = result.values["projection.r2t1.wired_ssd.op_ms"].value
    assert hdd == pytest.approx(33.28, abs=1e-9)
    assert ssd == pytest.approx(28.68, abs=1e-9)
    gap = 1.5 - 0.11  # one one-way term left at the wireless value
    assert 34.67 - hdd == pytest.approx(gap, abs=1e-9)
    assert 30.07 - ssd == pytest.approx(gap, abs=1e-9)


def test_every_truncated_iops_floors_to_the_printed_value(result) -> None:
    truncated = {k for k, pub in result.published.items() if pub.printed_as == audit.TRUNCATED}
    assert len(truncated) == 34  # 30 fio table cells and 4 quoted in the text
    for key in truncated:
        assert math.floor(result.values[key].value) == result.published[key].value, key


def _number(value: float, decimals: int = 0) -> PublishedNumber:
    return PublishedNumber("x", value, decimals, "IOPS", "s", "src")


def test_truncated_iops_stand_for_the_unit_above_them() -> None:
    pub = PublishedNumber("x", 30, 0, "IOPS", "s", "src", printed_as=audit.TRUNCATED)
    assert audit.verdict(pub, 30.8) == MATCH
    assert audit.verdict(pub, 30.0) == MATCH
    assert audit.verdict(pub, 31.0) == MISMATCH
    assert audit.verdict(pub, 29.9) == MISMATCH
    assert audit.verdict(PublishedNumber("x", 31, 0, "IOPS", "s", "src"), 31.8) == MISMATCH


def test_iostat_excerpt_is_one_second_of_its_run(result) -> None:
    ex = result.excerpt.set_index("field")
    assert (ex["excerpt_report"] == ex["published"]).all()
    assert set(ex["file"]) == {"iostat/blockdev-wireless-hdd-2m.txt"}
    assert set(ex["device"]) == {"sdb"}
    # the excerpt is a single report, not the run's mean
    assert ex.loc["w_per_s", "run_mean"] != pytest.approx(ex.loc["w_per_s", "published"], abs=0.005)


def test_counts_cover_every_number_and_verdict(table) -> None:
    counts = blog_audit.verdict_counts(table.reset_index()).set_index("verdict")
    assert list(counts.index) == list(VERDICTS)
    assert counts["total"].sum() == len(EXPECTED_VERDICTS)
    expected = {v: list(EXPECTED_VERDICTS.values()).count(v) for v in VERDICTS}
    assert counts["total"].to_dict() == expected


def test_mismatches_table_lists_exactly_the_mismatches(table) -> None:
    mm = blog_audit.mismatches(table.reset_index())
    assert set(mm["id"]) == {k for k, v in EXPECTED_VERDICTS.items() if v in (MISMATCH, NOT_RECOMPUTABLE)}
    assert mm["explanation"].str.len().gt(0).all()


def test_a_published_id_nothing_recomputes_is_an_error(tmp_path: Path) -> None:
    doc = yaml.safe_load((PUBLISHED / blog_audit.BLOG_FILE).read_text())
    doc["numbers"].append({"id": "extra.unknown", "value": 1, "section": "x"})
    (tmp_path / "blog.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(ReportError, match=r"extra\.unknown"):
        blog_audit.run(RAW, tmp_path, "blog.yaml")


def test_labels_and_versions() -> None:
    assert [blog_audit.size_label(b) for b in (65536, 524288, 2**20, 2**21)] == ["64k", "512k", "1m", "2m"]
    assert blog_audit.interval_label(1.0) == "1s" and blog_audit.interval_label(0.002) == "2ms"
    assert blog_audit.fio_version("fio-3.36-17", Path("f")) == (pytest.approx(3.36), 17)
    assert blog_audit.fio_version("fio-3.30", Path("f")) == (pytest.approx(3.30), 0)
    with pytest.raises(IngestError, match="fio version"):
        blog_audit.fio_version("3.30", Path("f"))
    assert blog_audit.libiscsi_port(r"iscsi\://192.168.1.220\:3260/iqn.x\:sn.y/0", Path("f")) == 3260
    with pytest.raises(IngestError, match="no port"):
        blog_audit.libiscsi_port(r"iscsi\://192.168.1.220/iqn/0", Path("f"))


def test_job_options_names_the_file_and_json_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"jobs": [{"jobname": "x"}]}')
    f = RawFile(bad, "bad.json", "fio", "initiator", sha256_file(bad))
    with pytest.raises(IngestError, match=r"job options") as err:
        blog_audit.job_options(Measurements(Dataset("x", tmp_path, "x", False, "", {}, [f])), f)
    assert "bad.json" in str(err.value) and "jobs[0]" in str(err.value)


def test_job_options_refuse_an_option_written_twice_with_two_values(tmp_path: Path) -> None:
    twice = tmp_path / "twice.json"
    twice.write_text('{"jobs": [{"job options": {"bs": "4k", "bs": "1m"}}]}')
    f = RawFile(twice, "twice.json", "fio", "initiator", sha256_file(twice))
    with pytest.raises(IngestError, match="duplicate key 'bs'") as err:
        blog_audit.job_options(Measurements(Dataset("x", tmp_path, "x", False, "", {}, [f])), f)
    assert "twice.json" in str(err.value) and "jobs[0].job options.bs" in str(err.value)


def test_printed_inputs_are_read_from_the_published_file(tmp_path: Path, result) -> None:
    published = dict(result.published)
    published["model.cpu_2m_ms"] = replace(published["model.cpu_2m_ms"], value=9.0)
    sets = blog_audit.r2t.parameter_sets(blog_audit.open_dataset(RAW).iscsi_parameters, RAW / "manifest.yaml")
    formula = blog_audit.formula_table(published, sets).set_index("key")
    assert formula.loc["model.r2t1.wireless_hdd", "op_ms"] == pytest.approx(71.14, abs=1e-9)


def test_the_verdict_chart_counts_every_number_once(table) -> None:
    from iscsi_report.presentation.charts import audit as audit_charts

    counts = blog_audit.verdict_counts(table)
    spec = audit_charts.verdict_bars(counts).to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert sum(r["numbers"] for r in rows) == len(table)
    assert {r["verdict"] for r in rows} == set(table["verdict"])
    assert spec["encoding"]["y"]["sort"] == list(audit.VERDICTS)
