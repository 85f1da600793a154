"""Reproduction audit of the blog study: every published number's verdict asserted explicitly, so a
change to the raw files, the transcription or an analysis that moves any number fails here."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from iscsi_report.analyses import blog_audit
from iscsi_report.analyses.audit import MATCH, MISMATCH, WITHIN, PublishedNumber, load_published
from iscsi_report.core.dataset import RawFile
from iscsi_report.core.errors import IngestError, ReportError
from iscsi_report.pipeline.cache import sha256_file

EXPECTED_VERDICTS = {
    "intro.observed_mib_per_s": MATCH,
    "intro.iperf3_mib_per_s": MISMATCH,
    "hardware.hdd_krpm": MISMATCH,
    "network.iperf3.wireless_mbit_per_s": MATCH,
    "network.iperf3.wired_mbit_per_s": MATCH,
    "latency.wireless_initial_estimate_ms": MATCH,
    "latency.wireless_1s.upper_mode_ms": MATCH,
    "setup.ping_interval_fast_ms": MATCH,
    "setup.ping_interval_slow_s": MATCH,
    "setup.ping_duration_min": MATCH,
    "latency.wired_1s.mean_ms": MATCH,
    "latency.wired_1s.p50_ms": MATCH,
    "latency.wired_1s.p99_ms": MATCH,
    "latency.wired_1s.max_ms": MATCH,
    "latency.wired_1s.sstdev_ms": MATCH,
    "latency.wired_1s.cv_pct": MATCH,
    "latency.wireless_1s.mean_ms": MATCH,
    "latency.wireless_1s.p50_ms": MATCH,
    "latency.wireless_1s.p99_ms": WITHIN,
    "latency.wireless_1s.max_ms": MATCH,
    "latency.wireless_1s.sstdev_ms": MATCH,
    "latency.wireless_1s.cv_pct": WITHIN,
    "latency.wired_2ms.mean_ms": MATCH,
    "latency.wired_2ms.p50_ms": MATCH,
    "latency.wired_2ms.p99_ms": MATCH,
    "latency.wired_2ms.max_ms": MATCH,
    "latency.wired_2ms.sstdev_ms": MATCH,
    "latency.wired_2ms.cv_pct": MATCH,
    "latency.wireless_2ms.mean_ms": MATCH,
    "latency.wireless_2ms.p50_ms": MATCH,
    "latency.wireless_2ms.p99_ms": MATCH,
    "latency.wireless_2ms.max_ms": MATCH,
    "latency.wireless_2ms.sstdev_ms": MATCH,
    "latency.wireless_2ms.cv_pct": MATCH,
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
    "fio.local.hdd.64k.mib_per_s": MATCH,
    "fio.local.hdd.64k.iops": WITHIN,
    "fio.local.hdd.128k.mib_per_s": MATCH,
    "fio.local.hdd.128k.iops": WITHIN,
    "fio.local.hdd.256k.mib_per_s": MATCH,
    "fio.local.hdd.256k.iops": MATCH,
    "fio.local.hdd.512k.mib_per_s": MATCH,
    "fio.local.hdd.512k.iops": MATCH,
    "fio.local.hdd.1m.mib_per_s": MATCH,
    "fio.local.hdd.1m.iops": MATCH,
    "fio.local.hdd.2m.mib_per_s": MATCH,
    "fio.local.hdd.2m.iops": WITHIN,
    "fio.local.ssd.64k.mib_per_s": MATCH,
    "fio.local.ssd.64k.iops": WITHIN,
    "fio.local.ssd.128k.mib_per_s": MATCH,
    "fio.local.ssd.128k.iops": WITHIN,
    "fio.local.ssd.256k.mib_per_s": MATCH,
    "fio.local.ssd.256k.iops": MATCH,
    "fio.local.ssd.512k.mib_per_s": MATCH,
    "fio.local.ssd.512k.iops": MATCH,
    "fio.local.ssd.1m.mib_per_s": MATCH,
    "fio.local.ssd.1m.iops": MATCH,
    "fio.local.ssd.2m.mib_per_s": MATCH,
    "fio.local.ssd.2m.iops": WITHIN,
    "fio.wireless.libiscsi_hdd.64k.mib_per_s": MATCH,
    "fio.wireless.libiscsi_hdd.64k.iops": MATCH,
    "fio.wireless.libiscsi_hdd.64k.cpu_pct": MATCH,
    "fio.wireless.libiscsi_hdd.128k.mib_per_s": MATCH,
    "fio.wireless.libiscsi_hdd.128k.iops": MATCH,
    "fio.wireless.libiscsi_hdd.128k.cpu_pct": MATCH,
    "fio.wireless.libiscsi_hdd.256k.mib_per_s": MATCH,
    "fio.wireless.libiscsi_hdd.256k.iops": WITHIN,
    "fio.wireless.libiscsi_hdd.256k.cpu_pct": MATCH,
    "fio.wireless.libiscsi_hdd.512k.mib_per_s": MATCH,
    "fio.wireless.libiscsi_hdd.512k.iops": MATCH,
    "fio.wireless.libiscsi_hdd.512k.cpu_pct": MATCH,
    "fio.wireless.libiscsi_hdd.1m.mib_per_s": MATCH,
    "fio.wireless.libiscsi_hdd.1m.iops": WITHIN,
    "fio.wireless.libiscsi_hdd.1m.cpu_pct": MATCH,
    "fio.wireless.libiscsi_hdd.2m.mib_per_s": MATCH,
    "fio.wireless.libiscsi_hdd.2m.iops": WITHIN,
    "fio.wireless.libiscsi_hdd.2m.cpu_pct": MATCH,
    "fio.wireless.blockdev_hdd.64k.mib_per_s": MISMATCH,
    "fio.wireless.blockdev_hdd.64k.iops": MATCH,
    "fio.wireless.blockdev_hdd.128k.mib_per_s": MATCH,
    "fio.wireless.blockdev_hdd.128k.iops": MATCH,
    "fio.wireless.blockdev_hdd.256k.mib_per_s": MATCH,
    "fio.wireless.blockdev_hdd.256k.iops": MATCH,
    "fio.wireless.blockdev_hdd.512k.mib_per_s": MATCH,
    "fio.wireless.blockdev_hdd.512k.iops": WITHIN,
    "fio.wireless.blockdev_hdd.1m.mib_per_s": MATCH,
    "fio.wireless.blockdev_hdd.1m.iops": MATCH,
    "fio.wireless.blockdev_hdd.2m.mib_per_s": MATCH,
    "fio.wireless.blockdev_hdd.2m.iops": MATCH,
    "fio.wireless.blockdev_ssd.64k.mib_per_s": MATCH,
    "fio.wireless.blockdev_ssd.64k.iops": MATCH,
    "fio.wireless.blockdev_ssd.128k.mib_per_s": MATCH,
    "fio.wireless.blockdev_ssd.128k.iops": MATCH,
    "fio.wireless.blockdev_ssd.256k.mib_per_s": MATCH,
    "fio.wireless.blockdev_ssd.256k.iops": MATCH,
    "fio.wireless.blockdev_ssd.512k.mib_per_s": MATCH,
    "fio.wireless.blockdev_ssd.512k.iops": WITHIN,
    "fio.wireless.blockdev_ssd.1m.mib_per_s": MATCH,
    "fio.wireless.blockdev_ssd.1m.iops": MATCH,
    "fio.wireless.blockdev_ssd.2m.mib_per_s": MATCH,
    "fio.wireless.blockdev_ssd.2m.iops": MATCH,
    "discussion.blockdev_ssd_vs_hdd_2m_pct": MATCH,
    "discussion.end_to_end_iops_2m": MATCH,
    "discussion.hdd_raw_iops_2m": WITHIN,
    "discussion.cpu_pct_2m": MATCH,
    "discussion.projected_iops_at_full_cpu": WITHIN,
    "network.iperf3.wireless_mib_per_s": MISMATCH,
    "network.iperf3.wireless_2m_iops": MISMATCH,
    "model.data_pdu_kib": MATCH,
    "model.block_mib": MATCH,
    "model.immediate_data_kib": MATCH,
    "model.r2t1.r2t_rounds_repeat": MATCH,
    "model.wireless.one_way_ms": MATCH,
    "model.wireless.net_64k_ms": MATCH,
    "iostat.excerpt.w_per_s": MATCH,
    "iostat.excerpt.wkB_per_s": MATCH,
    "iostat.excerpt.w_await_ms": MATCH,
    "iostat.excerpt.wareq_sz_kB": MATCH,
    "iostat.excerpt.aqu_sz": MATCH,
    "iostat.excerpt.util_pct": MATCH,
    "model.transfer_1mib_ms": WITHIN,
    "model.transfer_1mib_factor": MATCH,
    "model.hdd.io_1m_ms": MATCH,
    "model.hdd.iops_1m": MATCH,
    "model.cpu_pct_ref": MATCH,
    "model.cpu_ref_iops": WITHIN,
    "model.cpu_2m_ms": MATCH,
    "model.r2t1.wireless_hdd.op_ms": MATCH,
    "model.r2t1.wireless_hdd.iops": MATCH,
    "model.r2t1.wireless_hdd.mib_per_s": MATCH,
    "model.r2t1.wireless_hdd.actual_mib_per_s": MATCH,
    "model.r2t1.wireless_hdd.divergence_pct": MATCH,
    "model.r2t16.max_outstanding_r2t": MATCH,
    "model.r2t16.r2ts_per_2m": MATCH,
    "model.r2t16.transfer_kib": MATCH,
    "model.r2t16.wireless_hdd.op_ms": MATCH,
    "model.r2t16.wireless_hdd.iops": MATCH,
    "model.r2t16.wireless_hdd.mib_per_s": WITHIN,
    "model.r2t16.wireless_hdd.actual_mib_per_s": MATCH,
    "model.r2t16.wireless_hdd.divergence_pct": MATCH,
    "projection.r2t1.wireless_hdd.io_lat_ms": MATCH,
    "projection.r2t1.wireless_hdd.cpu_lat_ms": MATCH,
    "projection.r2t1.wireless_hdd.net_lat_ms": MATCH,
    "projection.r2t1.wireless_hdd.net_64k_ms": MATCH,
    "projection.r2t1.wireless_hdd.op_ms": MATCH,
    "projection.r2t1.wireless_hdd.iops": MATCH,
    "projection.r2t1.wireless_hdd.est_mib_per_s": MATCH,
    "projection.r2t1.wireless_hdd.actual_mib_per_s": MATCH,
    "projection.r2t1.wireless_hdd.error_pct": MATCH,
    "projection.r2t1.wired_hdd.io_lat_ms": MATCH,
    "projection.r2t1.wired_hdd.cpu_lat_ms": MATCH,
    "projection.r2t1.wired_hdd.net_lat_ms": MATCH,
    "projection.r2t1.wired_hdd.net_64k_ms": MISMATCH,
    "projection.r2t1.wired_hdd.op_ms": MISMATCH,
    "projection.r2t1.wired_hdd.iops": MISMATCH,
    "projection.r2t1.wired_hdd.est_mib_per_s": MISMATCH,
    "projection.r2t1.wired_hdd.actual_mib_per_s": MATCH,
    "projection.r2t1.wired_hdd.error_pct": MISMATCH,
    "projection.r2t1.wired_ssd.io_lat_ms": MISMATCH,
    "projection.r2t1.wired_ssd.cpu_lat_ms": MATCH,
    "projection.r2t1.wired_ssd.net_lat_ms": MATCH,
    "projection.r2t1.wired_ssd.net_64k_ms": MISMATCH,
    "projection.r2t1.wired_ssd.op_ms": MISMATCH,
    "projection.r2t1.wired_ssd.iops": MISMATCH,
    "projection.r2t1.wired_ssd.est_mib_per_s": MISMATCH,
    "projection.r2t1.wired_ssd.actual_mib_per_s": MATCH,
    "projection.r2t1.wired_ssd.error_pct": MISMATCH,
    "projection.r2t16.wireless_hdd.io_lat_ms": MATCH,
    "projection.r2t16.wireless_hdd.cpu_lat_ms": MATCH,
    "projection.r2t16.wireless_hdd.net_lat_ms": MATCH,
    "projection.r2t16.wireless_hdd.net_64k_ms": MATCH,
    "projection.r2t16.wireless_hdd.op_ms": MATCH,
    "projection.r2t16.wireless_hdd.iops": MATCH,
    "projection.r2t16.wireless_hdd.est_mib_per_s": MATCH,
    "projection.r2t16.wireless_hdd.actual_mib_per_s": MATCH,
    "projection.r2t16.wireless_hdd.error_pct": MATCH,
    "projection.r2t16.wired_hdd.io_lat_ms": MATCH,
    "projection.r2t16.wired_hdd.cpu_lat_ms": MATCH,
    "projection.r2t16.wired_hdd.net_lat_ms": MATCH,
    "projection.r2t16.wired_hdd.net_64k_ms": MISMATCH,
    "projection.r2t16.wired_hdd.op_ms": MATCH,
    "projection.r2t16.wired_hdd.iops": WITHIN,
    "projection.r2t16.wired_hdd.est_mib_per_s": MATCH,
    "projection.r2t16.wired_hdd.actual_mib_per_s": MATCH,
    "projection.r2t16.wired_hdd.error_pct": MATCH,
    "projection.r2t16.wired_ssd.io_lat_ms": MISMATCH,
    "projection.r2t16.wired_ssd.cpu_lat_ms": MATCH,
    "projection.r2t16.wired_ssd.net_lat_ms": MATCH,
    "projection.r2t16.wired_ssd.net_64k_ms": MISMATCH,
    "projection.r2t16.wired_ssd.op_ms": MATCH,
    "projection.r2t16.wired_ssd.iops": MATCH,
    "projection.r2t16.wired_ssd.est_mib_per_s": MATCH,
    "projection.r2t16.wired_ssd.actual_mib_per_s": MATCH,
    "projection.r2t16.wired_ssd.error_pct": MATCH,
    "projection.r2t1.error_low_pct": MISMATCH,
    "projection.r2t1.error_high_pct": MATCH,
    "projection.r2t16.error_typical_pct": MATCH,
    "projection.r2t16.error_wireless_hdd_pct": MATCH,
    "projection.r2t16.wireless_iops": MATCH,
    "projection.r2t16.one_way_contributions": MATCH,
    "projection.r2t16.message_interval_ms": MATCH,
    "conclusions.ssd_speedup_wired_pct": MATCH,
    "conclusions.local_ssd_speedup_pct": WITHIN,
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


def test_every_mismatch_is_explained_by_the_module(table) -> None:
    why = blog_audit.explanations()
    for key in table.index[table["verdict"] == MISMATCH]:
        assert key in why, f"{key}: mismatch without an explanation of ours"
        assert table.loc[key, "explanation"] == why[key]


def test_every_within_tolerance_row_says_why(table) -> None:
    why = blog_audit.explanations()
    for key in table.index[table["verdict"] == WITHIN]:
        assert table.loc[key, "explanation"] in (why.get(key), blog_audit.TRUNCATION_NOTE), key


def test_explanations_name_only_published_ids() -> None:
    assert set(blog_audit.explanations()) <= set(EXPECTED_VERDICTS)


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
    truncated = {k: v for k, v in result.values.items() if v.truncated}
    assert len(truncated) == 34  # 30 fio table cells and 4 quoted in the text
    for key, rec in truncated.items():
        assert math.floor(rec.value) == result.published[key].value, key


def _number(value: float, decimals: int = 0) -> PublishedNumber:
    return PublishedNumber("x", value, decimals, "IOPS", "s", "src")


def test_truncation_widens_the_tolerance_only_when_floor_reproduces() -> None:
    pub = _number(30)
    widened = blog_audit._truncation_tolerance(pub, blog_audit.Recomputed(30.8, "raw", "f", truncated=True))
    assert widened.tolerance_rel == pytest.approx(1 / 30)
    above = blog_audit.Recomputed(31.2, "raw", "f", truncated=True)
    assert blog_audit._truncation_tolerance(pub, above) is pub
    below = blog_audit.Recomputed(29.9, "raw", "f", truncated=True)
    assert blog_audit._truncation_tolerance(pub, below) is pub
    plain = blog_audit.Recomputed(30.8, "raw", "f")
    assert blog_audit._truncation_tolerance(pub, plain) is pub


def test_iostat_excerpt_is_one_second_of_its_run(result) -> None:
    ex = result.excerpt.set_index("field")
    assert (ex["excerpt_report"] == ex["published"]).all()
    assert set(ex["file"]) == {"iostat/blockdev-wireless-hdd-2m.txt"}
    assert set(ex["device"]) == {"sdb"}
    # the excerpt is a single report, not the run's mean
    assert ex.loc["w_per_s", "run_mean"] != pytest.approx(ex.loc["w_per_s", "published"], abs=0.005)


def test_counts_cover_every_number_and_verdict(table) -> None:
    counts = blog_audit.verdict_counts(table.reset_index()).set_index("verdict")
    assert list(counts.index) == [MATCH, WITHIN, MISMATCH]
    assert counts["total"].sum() == len(EXPECTED_VERDICTS)
    expected = {v: list(EXPECTED_VERDICTS.values()).count(v) for v in (MATCH, WITHIN, MISMATCH)}
    assert counts["total"].to_dict() == expected


def test_mismatches_table_lists_exactly_the_mismatches(table) -> None:
    mm = blog_audit.mismatches(table.reset_index())
    assert set(mm["id"]) == {k for k, v in EXPECTED_VERDICTS.items() if v == MISMATCH}
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
        blog_audit.job_options(f)
    assert "bad.json" in str(err.value) and "jobs[0]" in str(err.value)


def test_printed_inputs_are_read_from_the_published_file(tmp_path: Path, result) -> None:
    published = dict(result.published)
    published["model.cpu_2m_ms"] = replace(published["model.cpu_2m_ms"], value=9.0)
    sets = blog_audit.r2t.parameter_sets(blog_audit.load_dataset(RAW).iscsi_parameters, RAW / "manifest.yaml")
    formula = blog_audit.formula_table(published, sets).set_index("key")
    assert formula.loc["model.r2t1.wireless_hdd", "op_ms"] == pytest.approx(71.14, abs=1e-9)
