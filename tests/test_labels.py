"""core/labels.py: labels inferred from real raw files, contradictions, pairing, pooling, the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from iscsi_report.cli.dataset import label_page
from iscsi_report.core import dataset, labels
from iscsi_report.core.labels import Entry, Inferred


def test_snap_interval_to_the_1_2_5_series_or_two_digits() -> None:
    assert labels.snap_interval(0.00214) == 0.002
    assert labels.snap_interval(0.2031) == 0.2
    assert labels.snap_interval(1.02) == 1.0
    assert labels.snap_interval(0.0503) == 0.05
    assert labels.snap_interval(0.3) == 0.3  # 40 % from 0.2 and from 0.5: not snapped


def test_ping_labels_from_d_timestamps_ipv6_and_quiet(fixtures_dir: Path) -> None:
    timed = labels.infer_file(fixtures_dir / "ping/iputils_loopback_D.txt")
    assert timed is not None and timed.tool == "ping"
    assert timed.labels["interval_s"] == 0.2 and timed.labels["ip_version"] == 4
    assert timed.labels["quiet"] is False and timed.labels["ping_format"] == "iputils"
    assert "-D timestamps" in timed.notes[0]
    v6 = labels.infer_file(fixtures_dir / "ping/iputils_ipv6_loopback.txt")
    assert v6 is not None and v6.labels["ip_version"] == 6
    quiet = labels.infer_file(fixtures_dir / "ping/iputils_loopback_quiet.txt")
    assert quiet is not None and quiet.labels["quiet"] is True
    assert quiet.labels["interval_s"] == 0.05  # 20 probes in 1055 ms: at most 55.5 ms apart
    assert "upper bound" in quiet.notes[0]
    lost = labels.infer_file(fixtures_dir / "ping/iputils_netns_loss100.txt")
    assert lost is not None and lost.labels["quiet"] is False  # no replies because none came back


def test_ping_without_timing_asks_for_the_interval(fixtures_dir: Path) -> None:
    busybox = labels.infer_file(fixtures_dir / "ping/busybox_netns_tbf2mbit.txt")
    assert busybox is not None and "interval_s" not in busybox.labels
    assert "set the label" in busybox.notes[0]


def test_iperf3_labels(fixtures_dir: Path) -> None:
    udp = labels.infer_file(fixtures_dir / "iperf3/udp_100M.json.gz")
    assert udp is not None
    assert udp.labels["protocol"] == "udp" and udp.labels["offered_bits_per_s"] == 100_000_000
    rev = labels.infer_file(fixtures_dir / "iperf3/tcp_reverse.json")
    assert rev is not None and rev.labels["reverse"] is True and rev.labels["protocol"] == "tcp"
    p4 = labels.infer_file(fixtures_dir / "iperf3/tcp_P4.json")
    assert p4 is not None and p4.labels["streams"] == 4 and "offered_bits_per_s" not in p4.labels


def test_fio_labels_from_job_options(fixtures_dir: Path) -> None:
    big = labels.infer_file(fixtures_dir / "fio/fio-3.33_seqwrite_2m_libaio_qd4.jsonplus.json.xz")
    assert big is not None
    assert big.labels == {
        "rw": "write",
        "bs_bytes": 2 * 1024 * 1024,
        "iodepth": 4,
        "numjobs": 1,
        "engine": "libaio",
        "direct": True,
    }
    mixed = labels.infer_file(fixtures_dir / "fio/fio-3.33_read_and_randrw.json")
    assert mixed is not None and "bs_bytes" not in mixed.labels
    assert any("bs_bytes differs between jobs" in n for n in mixed.notes)


def test_iostat_units_devices_cpu(fixtures_dir: Path) -> None:
    mb = labels.infer_file(fixtures_dir / "iostat/iostat-12.6.1_x_m.txt")
    kb = labels.infer_file(fixtures_dir / "iostat/iostat-12.6.1_json_x.json")
    assert mb is not None and mb.labels["iostat_units"] == "MB"
    assert kb is not None and kb.labels["iostat_units"] == "kB"
    assert kb.labels["block_devices"] == "vda" and kb.labels["cpu_stats"] is True


def test_unknown_and_broken_files(tmp_path: Path, fixtures_dir: Path) -> None:
    (tmp_path / "notes.txt").write_text("what I did on Tuesday\n")
    assert labels.infer_file(tmp_path / "notes.txt") is None
    with pytest.raises(Exception, match="iperf3 reported an error"):
        labels.infer_file(fixtures_dir / "iperf3/error_no_server.json")


def test_contradiction_names_both_values(fixtures_dir: Path) -> None:
    inferred = labels.infer_file(fixtures_dir / "fio/fio-3.33_seqwrite_2m_libaio_qd4.jsonplus.json.xz")
    assert inferred is not None
    found = labels.contradictions({"bs_bytes": 65536, "engine": "libaio"}, inferred)
    assert found == ["bs_bytes: the manifest says 65536 but the file says 2097152"]
    ping = Inferred("ping", "iputils", {"interval_s": 0.002}, bounds={"interval_s": (0.001, 0.003)})
    assert labels.contradictions({"interval_s": 0.002}, ping) == []
    assert "0.2" in labels.contradictions({"interval_s": 0.2}, ping)[0]


def _fio(rel: str, **lab: object) -> Entry:
    return Entry(rel, "fio", "local", {"device": "ssd", "rw": "write", "engine": "libaio", **lab})


def test_pooling_queue_depths_and_buffered_runs_in_the_device_fit() -> None:
    entries = [
        _fio("a", scenario="local-libaio", iodepth=1, direct=True, bs_bytes=65536),
        _fio("b", scenario="local-libaio", iodepth=1, direct=True, bs_bytes=131072),
        _fio("c", scenario="local-libaio", iodepth=8, direct=True, bs_bytes=262144),
        _fio("d", scenario="local-libaio", iodepth=1, direct=False, bs_bytes=524288),
    ]
    # the chapters fit per device and run kind (DEVICE_FIT_KEYS): a qd8 or buffered run is its own group
    assert labels.pooling_problems(entries) == []
    grouped = {tuple(e.labels.get(k) for k in labels.DEVICE_FIT_KEYS) for e in entries}
    assert len(grouped) == 3


def test_derived_scenarios_keep_runs_apart() -> None:
    runs = [
        ("a", {"engine": "libaio", "iodepth": 1, "direct": True}),
        ("c", {"engine": "libaio", "iodepth": 8, "direct": True}),
        ("d", {"engine": "libaio", "iodepth": 1, "direct": False}),
    ]
    scenarios = [labels.derived_scenario("local", lab) for _, lab in runs]
    assert scenarios == ["local-libaio", "qd8-local-libaio", "buffered-local-libaio"]
    entries = [_fio(rel, scenario=s, **lab) for (rel, lab), s in zip(runs, scenarios, strict=True)]
    assert labels.pooling_problems(entries) == []
    assert labels.derived_scenario("initiator", runs[0][1]) == "iscsi-libaio"


def test_udp_run_pooled_into_link_capacity() -> None:
    tcp = Entry("t.json", "iperf3", "initiator", {"network": "lan", "protocol": "tcp", "reverse": False})
    udp = Entry("u.json", "iperf3", "initiator", {"network": "lan", "protocol": "udp", "reverse": False})
    # link rates are summarised per network, protocol and direction (LINK_KEYS): never averaged
    assert labels.pooling_problems([tcp, udp]) == []
    assert labels.LINK_CAPACITY_LABELS["protocol"] == "tcp"


def test_pings_and_iperf3_must_pair_by_network() -> None:
    ping = Entry("p.txt", "ping", "initiator", {"network": "wired", "interval_s": 0.002})
    iperf = Entry("i.json", "iperf3", "initiator", {"network": "wire"})
    problems = labels.pairing_problems([ping, iperf])
    assert len(problems) == 2
    assert "'wired'" in problems[0] and "no iperf3 file" in problems[0] and "['wire']" in problems[0]
    assert labels.pairing_problems([ping, Entry("i.json", "iperf3", "initiator", {"network": "wired"})]) == []


def test_every_label_is_documented() -> None:
    for row in labels.contract_rows():
        assert row["meaning"] and row["effect"] and row["type"], row["label"]
    documented = {row["label"] for row in labels.contract_rows()}
    assert set(dataset.Labels.model_fields) | {"side"} == documented


def test_label_page_is_generated_from_the_schema(project_root: Path) -> None:
    page = (project_root / "book/labels.md").read_text(encoding="utf-8")
    assert page == label_page(), "book/labels.md is stale: iscsi-report dataset labels --write book/labels.md"
    assert "| `bs_bytes` | integer > 0 | bytes |" in page
    toc = (project_root / "book/_toc.yml").read_text(encoding="utf-8")
    assert "- file: labels" in toc
