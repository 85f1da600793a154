"""Model-chapter helpers: manifest iSCSI keys, the PDU exchange, measured inputs, latency terms."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from iscsi_report.analyses import blog, r2t
from iscsi_report.core import model
from iscsi_report.core.errors import IngestError
from iscsi_report.core.units import BYTES_PER_MIB

MANIFEST = Path("manifest.yaml")
LIO = {
    "FirstBurstLength": 65536,
    "MaxBurstLength": 262144,
    "ImmediateData": "Yes",
    "InitialR2T": "No",
    "MaxOutstandingR2T": 1,
    "MaxRecvDataSegmentLength": 8192,
    "HeaderDigest": "CRC32C,None",
}


def test_parameter_set_reads_yes_no_and_digit_strings() -> None:
    params, rows = r2t.parse_parameter_set(
        "s", {**LIO, "InitialR2T": "no", "MaxOutstandingR2T": "16", "ImmediateData": True}, MANIFEST
    )
    assert params == model.IscsiParams(
        first_burst_bytes=65536,
        max_burst_bytes=262144,
        immediate_data=True,
        initial_r2t=False,
        max_outstanding_r2t=16,
        max_recv_data_segment_bytes=8192,
    )
    assert {r["source"] for r in rows} == {"manifest"}


def test_missing_keys_take_rfc_defaults_and_say_so() -> None:
    params, rows = r2t.parse_parameter_set("s", {"MaxOutstandingR2T": 4}, MANIFEST)
    assert params.initial_r2t is True  # RFC 7143 default, unlike LIO's No
    assert params.max_outstanding_r2t == 4
    sources = {r["key"]: r["source"] for r in rows}
    assert sources["MaxOutstandingR2T"] == "manifest"
    assert sources["InitialR2T"] == r2t.RFC7143_DEFAULTS_NAME


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("InitialR2T", "maybe"),
        ("MaxBurstLength", "256k"),
        ("MaxOutstandingR2T", True),
        ("FirstBurstLength", 1.5),
    ],
)
def test_bad_values_name_the_key(key: str, value: object) -> None:
    with pytest.raises(IngestError, match=rf"iscsi_parameters\.s\.{key}"):
        r2t.parse_parameter_set("s", {**LIO, key: value}, MANIFEST)


def test_inconsistent_set_is_refused_with_its_path() -> None:
    with pytest.raises(IngestError, match=r"iscsi_parameters\.s: .*first_burst_bytes"):
        r2t.parse_parameter_set("s", {**LIO, "FirstBurstLength": 524288}, MANIFEST)


def test_empty_manifest_parameters_give_the_rfc_what_if() -> None:
    sets = r2t.parameter_sets({}, MANIFEST)
    assert sets.what_if
    configs = r2t.configurations(sets, 2 * BYTES_PER_MIB)
    assert [c.params.max_outstanding_r2t for c in configs] == [1, 8]
    ex = r2t.exchange_table(configs, [2 * BYTES_PER_MIB]).set_index("max_outstanding_r2t")
    # InitialR2T=Yes: only immediate data (capped by MaxRecvDataSegmentLength 8192) goes unsolicited
    assert ex.loc[1, "unsolicited_kib"] == 8
    assert ex.loc[1, "bursts"] == 8  # ceil((2048 - 8) / 256)
    assert (ex.loc[1, "waves"], ex.loc[8, "waves"]) == (8, 1)
    assert ex.loc[8, "model"] == r2t.ALL_AT_ONCE


def test_blog_sets_need_no_what_if_and_match_the_blog_exchange() -> None:
    sets = r2t.parameter_sets({"lio-default": LIO, "lio-r2t16": {**LIO, "MaxOutstandingR2T": 16}}, MANIFEST)
    configs = r2t.configurations(sets, 2 * BYTES_PER_MIB)
    assert [c.label for c in configs] == ["lio-default", "lio-r2t16"]
    ex = r2t.exchange_table(configs, [64 * 1024, 2 * BYTES_PER_MIB]).set_index(["configuration", "bs_kib"])
    serial = ex.loc[("lio-default", 2048)]
    # seed 000: 64 KiB immediate, then 8 R2Ts (seven of 256 KiB and one of 192 KiB) one at a time
    assert (serial["unsolicited_kib"], serial["solicited_kib"], serial["bursts"]) == (64, 1984, 8)
    assert serial["one_way_trips"] == 18
    assert ex.loc[("lio-r2t16", 2048), "one_way_trips"] == 4
    assert ex.loc[("lio-default", 64), "model"] == r2t.NO_R2T
    assert r2t.trips_range(ex.reset_index(), 2 * BYTES_PER_MIB) == (4, 18)


def test_network_inputs_halve_the_mean_rtt_and_flag_missing_pieces() -> None:
    rtt = pd.DataFrame(
        {
            "network": ["wifi", "wifi", "lan"],
            "interval_s": [1.0, 0.002, 1.0],
            "files": 1,
            "replies": 10,
            "mean_rtt_ms": [5.5, 2.95, 0.31],
        }
    )
    iperf = pd.DataFrame(
        {"file": ["a", "b"], "network": ["wifi", "wifi"], "received_mbit_per_s": [590.0, 610.0]}
    )
    out = r2t.network_inputs(rtt, iperf).set_index("network")
    assert out.loc["wifi", "one_way_ms"] == pytest.approx(1.475)
    assert out.loc["wifi", "per_64k_ms"] == pytest.approx(65536 * 8 / 600e6 * 1000)
    assert out.loc["wifi", "missing"] == ""
    assert "no ping at 2 ms" in out.loc["lan", "missing"]
    assert "no forward TCP iperf3" in out.loc["lan", "missing"]
    with pytest.raises(ValueError, match="lan"):
        r2t.to_network(out.reset_index().iloc[0].to_dict())


def test_request_size_prefers_target_iostat_and_otherwise_assumes_the_block() -> None:
    req = pd.DataFrame(
        {
            "device": ["hdd", "hdd", "hdd"],
            "bs_bytes": [2.0 * BYTES_PER_MIB] * 3,
            "side": ["local", "target", "target"],
            "request_bytes": [512.0 * 1024, BYTES_PER_MIB, BYTES_PER_MIB],
        }
    )
    assert r2t.request_bytes_for(req, "hdd", 2 * BYTES_PER_MIB) == (
        BYTES_PER_MIB,
        "iostat wareq-sz (2 files)",
    )
    size, source = r2t.request_bytes_for(req, "ssd", 2 * BYTES_PER_MIB)
    assert size == 2 * BYTES_PER_MIB and "assumed" in source


def test_cpu_input_is_the_blogs_scaled_busy_share() -> None:
    table = pd.DataFrame(
        {
            "file": ["x"],
            "scenario": ["iscsi-libiscsi"],
            "side": ["target"],
            "bs_bytes": [BYTES_PER_MIB],
            "cpu_ms_per_op": [0.12 / 30 * 1000],
        }
    )
    cpu = r2t.cpu_input(table, 2 * BYTES_PER_MIB, scenario="iscsi-libiscsi", reference_bs_bytes=BYTES_PER_MIB)
    assert cpu.cpu_ms == pytest.approx(8.0)  # 12 % at 30 IOPS of 1 MiB, doubled (seed 000)
    absent = r2t.cpu_input(
        table, 2 * BYTES_PER_MIB, scenario="iscsi-libiscsi", reference_bs_bytes=2 * BYTES_PER_MIB
    )
    assert absent.cpu_ms == 0 and absent.file is None and "set to 0" in absent.source


def test_latency_terms_reproduce_the_blog_worked_examples() -> None:
    sets = r2t.parameter_sets({"serial": LIO, "burst": {**LIO, "MaxOutstandingR2T": 16}}, MANIFEST)
    configs = r2t.configurations(sets, 2 * BYTES_PER_MIB)
    inputs = [r2t.Inputs("wireless", "hdd", blog.inputs().networks["wireless"], 7.3, BYTES_PER_MIB, 8.0)]
    terms = r2t.latency_terms(configs, inputs, 2 * BYTES_PER_MIB, blog.BLOG_ASSUMPTIONS)
    totals = r2t.latency_totals(terms).set_index("configuration")
    assert totals.loc["serial", "total_ms"] == pytest.approx(70.14)  # seed 000, R2T=1
    assert totals.loc["burst", "total_ms"] == pytest.approx(49.14)  # seed 000, R2T=16
    assert totals.loc["serial", "one_way_ms_total"] == pytest.approx(18 * 1.5)
    sums = terms.groupby("configuration")["ms"].sum()
    assert sums["serial"] == pytest.approx(70.14)


def test_model_inputs_skip_networks_lacking_data() -> None:
    nets = pd.DataFrame(
        {
            "network": ["a", "b"],
            "one_way_ms": [1.0, 1.0],
            "received_mbit_per_s": [600.0, None],
            "missing": ["", "no iperf3"],
        }
    )
    devs = pd.DataFrame({"device": ["hdd", "ssd"], "device_ms": [7.3, 2.7], "request_kib": [1024.0, 1024.0]})
    out = r2t.model_inputs(nets, devs, r2t.CpuInput(8.0, "x", "f"))
    assert [(i.network_label, i.device_label) for i in out] == [("a", "hdd"), ("a", "ssd")]
    assert out[0].device_request_bytes == BYTES_PER_MIB
