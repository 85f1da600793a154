"""Audit of every number the cross-study analyses reproduce: each verdict is asserted explicitly,
so a change to the transcribed data or to an analysis that moves any number fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

from iscsi_report.analyses import crossstudy
from iscsi_report.analyses.audit import MATCH, MISMATCH, audit_table

EXPECTED_VERDICTS = {
    "scst.peak.diff_pct.512": MATCH,
    "scst.peak.diff_pct.1024": MATCH,
    "scst.peak.diff_pct.1536": MATCH,
    "scst.peak.diff_pct.2048": MATCH,
    "scst.peak.mbps.512": MATCH,
    "scst.peak.mbps.1024": MATCH,
    "scst.peak.mbps.1536": MATCH,
    "scst.peak.mbps.2048": MATCH,
    "scst.peak.mbps.3072": MATCH,
    "scst.peak.mbps.4096": MATCH,
    "scst.peak.mbps.16384": MATCH,
    "scst.peak.mbps.65536": MISMATCH,
    "scst.peak.mbps.262144": MISMATCH,
    "scst.peak.mbps.1048576": MISMATCH,
    "scst.peak.net_pct.512": MATCH,
    "scst.peak.net_pct.1024": MATCH,
    "scst.peak.net_pct.1536": MATCH,
    "scst.peak.net_pct.2048": MATCH,
    "scst.peak.net_pct.3072": MATCH,
    "scst.peak.net_pct.4096": MATCH,
    "scst.peak.net_pct.16384": MATCH,
    "scst.peak.net_pct.65536": MATCH,
    "scst.peak.net_pct.262144": MATCH,
    "scst.peak.net_pct.1048576": MATCH,
    "scst.tpt.tpt_us.512": MATCH,
    "scst.tpt.tpt_us.1024": MISMATCH,
    "scst.tpt.tpt_us.1536": MISMATCH,
    "scst.tpt.tpt_us.2048": MISMATCH,
    "scst.tpt.tpt_us.3072": MATCH,
    "scst.tpt.tpt_us.4096": MATCH,
    "scst.tpt.tpt_us.16384": MATCH,
    "scst.tpt.tpt_us.65536": MISMATCH,
    "scst.tpt.tpt_us.262144": MISMATCH,
    "scst.tpt.tpt_us.1048576": MISMATCH,
    "scst.tpt.net_reply_us.512": MISMATCH,
    "scst.tpt.net_reply_us.1024": MATCH,
    "scst.tpt.net_reply_us.1536": MATCH,
    "scst.tpt.net_reply_us.2048": MATCH,
    "scst.tpt.net_reply_us.3072": MATCH,
    "scst.tpt.net_reply_us.4096": MISMATCH,
    "scst.tpt.net_reply_us.16384": MISMATCH,
    "scst.tpt.net_reply_us.65536": MISMATCH,
    "scst.tpt.net_reply_us.262144": MISMATCH,
    "scst.tpt.net_reply_us.1048576": MISMATCH,
    "scst.tpt.cpu_us_adaptive.512": MATCH,
    "scst.tpt.cpu_us_adaptive.1024": MISMATCH,
    "scst.tpt.cpu_us_nodelay.512": MATCH,
    "scst.tpt.cpu_us_nodelay.1024": MISMATCH,
    "scst.tpt.cpu_us_nodelay.1536": MATCH,
    "scst.tpt.cpu_us_nodelay.2048": MATCH,
    "scst.nagle.nodelay_peak_512_iops": MATCH,
    "scst.nagle.adaptive_peak_512_iops": MATCH,
    "scst.nagle.gain_512_pct": MATCH,
    "scst.nagle.adaptive_net_pct_512": MATCH,
    "scst.nagle.nodelay_net_pct_512": MISMATCH,
    "scst.nagle.nodelay_fraction_of_link_512": MISMATCH,
    "scst.nagle.adaptive_peak_1024_iops": MISMATCH,
    "scst.nagle.nodelay_peak_1024_iops": MISMATCH,
    "scst.nagle.nodelay_peak_1536_iops": MATCH,
    "scst.nagle.full_nagle_peak_1536_iops": MISMATCH,
    "scst.nagle.adaptive_peak_1536_iops": MISMATCH,
    "scst.nagle.net_limit_1536_iops": MATCH,
    "scst.nagle.nodelay_cpu_bound_1536_iops": MATCH,
    "scst.nagle.threshold96_1536_iops": MATCH,
    "scst.nagle.threshold96_1536_pct_of_max": MATCH,
    "scst.nagle.clock_reduction_pct": MATCH,
    "scst.nagle.reduced_clock_nodelay_drop_pct": MATCH,
    "scst.nagle.reduced_clock_nodelay_iops": MISMATCH,
    "scst.nagle.reduced_clock_adaptive_net_pct": MATCH,
    "scst.nagle.reduced_clock_adaptive_iops": MISMATCH,
    "scst.nagle.reduced_clock_adaptive_gain_pct": MATCH,
    "scst.nagle.l2_gap_nodelay_us": MISMATCH,
    "scst.nagle.l2_gap_adaptive_us": MISMATCH,
    "scst.cpus.cpu0_gain_pct": MATCH,
    "l3.initial.network_utilisation_pct": MATCH,
    "l3.conclusions.write_million_iops": MATCH,
    "l3.conclusions.read_million_iops": MATCH,
    "l3.conclusions.medium_block_gbit_per_s": MISMATCH,
    "l3.record.write_mib_per_s": MISMATCH,
    "l3.reading.read_mib_per_s": MISMATCH,
    "comstar.read.outstanding": MATCH,
    "comstar.read.improvement_x": MATCH,
    "comstar.read.iops_per_cpu_improvement_x": MATCH,
    "comstar.write.throughput_gain_pct": MATCH,
}


@pytest.fixture(scope="module")
def audit(project_root: Path):
    published, recomputed = crossstudy.audit_rows(project_root / "data" / "published")
    return audit_table(published, recomputed).set_index("id")


def test_audit_covers_exactly_the_expected_ids(audit) -> None:
    assert set(audit.index) == set(EXPECTED_VERDICTS)


@pytest.mark.parametrize(("key", "expected"), sorted(EXPECTED_VERDICTS.items()))
def test_verdict(audit, key: str, expected: str) -> None:
    row = audit.loc[key]
    assert row["verdict"] == expected, f"{key}: published {row['published']}, recomputed {row['recomputed']}"


def test_every_row_is_explained_and_sourced(audit) -> None:
    assert (audit["explanation"].str.len() > 10).all()
    assert set(audit["source"]) == {"Butterfield 2017", "L3 iSCSI n.d.", "Bourbonnais 2009"}


def test_mismatches_say_why(audit) -> None:
    mismatches = audit[audit["verdict"] == MISMATCH]
    # one rule for round figures: 'fifty percent' (1 significant digit) covers 45..55, '1 million' 0.5..1.5
    assert audit.loc["comstar.write.throughput_gain_pct", "verdict"] == MATCH
    assert audit.loc["l3.conclusions.write_million_iops", "verdict"] == MATCH
    assert "12.3GB/s" in mismatches.loc["l3.conclusions.medium_block_gbit_per_s", "explanation"]
    assert "38,165" in mismatches.loc["scst.nagle.reduced_clock_nodelay_iops", "explanation"]
    assert "62,200" in mismatches.loc["scst.nagle.nodelay_peak_1024_iops", "explanation"]
    assert "47.7%" in audit.loc["comstar.write.throughput_gain_pct", "explanation"]


def test_key_recomputed_values(audit) -> None:
    # computed by hand from the printed numbers
    assert audit.loc["scst.nagle.reduced_clock_nodelay_iops", "recomputed"] == pytest.approx(57247 / 1.5)
    assert audit.loc["comstar.read.improvement_x", "recomputed"] == pytest.approx(85 / 31)
    assert audit.loc["l3.record.write_mib_per_s", "recomputed"] == pytest.approx(1171000 * 4096 / 2**20)
    assert audit.loc["scst.tpt.net_reply_us.1536", "recomputed"] == pytest.approx(
        (1584 + 1584 / 8948 * 90) * 8 / 1000
    )
    assert audit.loc["scst.cpus.cpu0_gain_pct", "recomputed"] == pytest.approx(
        100 * (62798 / ((52615 + 54514) / 2) - 1)
    )
