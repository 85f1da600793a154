"""Analyses never pool what differs: qd>1 and buffered fio runs, UDP and reverse iperf3 runs, ping
intervals and request sizes at other queue depths each stay out of the model's inputs (issue 14).

Each case builds a small dataset in tmp from real files (the lab-veth-2026 captures and
tests/fixtures) and compares the result with the one computed from the runs that belong.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from iscsi_report.analyses import r2t, storage
from iscsi_report.core import dataset as datasets
from iscsi_report.core.ingest.textio import sha256_file
from iscsi_report.core.measurements import open_dataset

LAB = "data/raw/lab-veth-2026"
FIX = "tests/fixtures"
QD1 = ["64k", "128k", "256k", "512k", "1M", "2M"]
QD4 = "fio/fio-3.33_seqwrite_2m_libaio_qd4.jsonplus.json.xz"
BUFFERED = "fio/fio-3.33_seqwrite_1m_psync_buffered.json"


Entry = tuple[str, str, str, str, dict[str, Any]]


def build(root: Path, tmp: Path, entries: list[Entry]) -> datasets.Dataset:
    """A dataset in tmp: (source, rel, tool, side, labels) per file, checksums computed."""
    files = []
    for src, rel, tool, side, labels in entries:
        dest = tmp / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / src, dest)
        files.append({"path": rel, "tool": tool, "side": side, "sha256": sha256_file(dest), "labels": labels})
    doc = {"dataset": tmp.name, "title": "pooling", "reconstructed": False, "files": files}
    (tmp / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return open_dataset(tmp)


def qd1_entries() -> list[Entry]:
    """The six real queue-depth-1 direct psync writes of lab-veth-2026."""
    return [
        (f"{LAB}/fio/local-{s}.json", f"fio/local-{s}.json", "fio", "local", {"device": "disk", "run": s})
        for s in QD1
    ]


def odd_runs(scenario: str) -> list[Entry]:
    """A real qd4 libaio run and a real buffered run, labelled with the same device."""
    return [
        (f"{FIX}/{QD4}", "fio/qd4.json.xz", "fio", "local", {"device": "disk", "scenario": scenario}),
        (f"{FIX}/{BUFFERED}", "fio/buffered.json", "fio", "local", {"device": "disk", "scenario": "local"}),
    ]


def test_qd4_and_buffered_runs_stay_out_of_the_device_fit(project_root: Path, tmp_path: Path) -> None:
    alone = storage.fit_devices(storage.fio_runs(build(project_root, tmp_path / "a", qd1_entries())))[0]
    ds = build(project_root, tmp_path / "b", qd1_entries() + odd_runs("local"))
    runs = storage.fio_runs(ds)
    fits, skipped = storage.fit_devices(runs)
    assert list(fits) == ["disk"] and skipped == {}
    assert fits["disk"].runs == 6
    assert fits["disk"].fixed_ms == pytest.approx(alone["disk"].fixed_ms, rel=1e-12)
    assert fits["disk"].streaming_mib_per_s == pytest.approx(alone["disk"].streaming_mib_per_s, rel=1e-12)
    pooled = storage.fit_device("disk", runs["op_ms"].to_numpy(), runs["bs_bytes"].to_numpy())
    assert abs(pooled.fixed_ms - fits["disk"].fixed_ms) > 1e-3  # pooling would have moved the fit
    groups = storage.grouping_table(runs).set_index("files")
    why = groups["excluded_because"]
    assert "iodepth=4" in why["fio/qd4.json.xz"] and "one request at a time" in why["fio/qd4.json.xz"]
    assert "direct=false" in why["fio/buffered.json"] and "page cache" in why["fio/buffered.json"]
    qd1 = groups.loc[", ".join(f"fio/local-{s}.json" for s in QD1)]
    assert qd1["runs"] == 6 and qd1["excluded_because"] == "" and "device fit" in qd1["used_for"]


def test_a_derived_qd_scenario_is_local_not_remote(project_root: Path, tmp_path: Path) -> None:
    ds = build(project_root, tmp_path / "d", qd1_entries() + odd_runs("qd4-local-libaio"))
    runs = storage.fio_runs(ds)
    assert storage.is_local(runs).all()
    assert storage.remote_throughput(runs).empty
    local = storage.local_throughput(runs)
    at_2m = local[local["bs_bytes"] == 2 * 1024 * 1024]
    assert sorted(at_2m["iodepth"]) == [1, 4]  # two rows, not one average


def test_link_capacity_is_forward_tcp_only(project_root: Path, tmp_path: Path) -> None:
    net = {"network": "veth"}
    ds = build(
        project_root,
        tmp_path / "n",
        [
            (f"{LAB}/ping/veth-2ms.txt", "ping/2ms.txt", "ping", "initiator", {**net, "interval_s": 0.002}),
            (f"{LAB}/iperf3/veth-tcp.json", "iperf3/tcp.json", "iperf3", "initiator", net),
            (f"{FIX}/iperf3/udp_100M.json.gz", "iperf3/udp.json.gz", "iperf3", "initiator", net),
            (f"{FIX}/iperf3/tcp_reverse.json", "iperf3/rev.json", "iperf3", "initiator", net),
        ],
    )
    rates = r2t.iperf_rates(ds).set_index("file")
    assert rates.loc["iperf3/udp.json.gz", "rate_kind"].startswith("offered rate")
    assert rates.loc["iperf3/rev.json", "rate_kind"].startswith("reverse direction")
    row = r2t.network_inputs(r2t.rtt_means(ds), r2t.iperf_rates(ds)).iloc[0]
    assert row["received_mbit_per_s"] == pytest.approx(rates.loc["iperf3/tcp.json", "received_mbit_per_s"])
    assert (row["iperf3_files"], row["iperf3_excluded"]) == (1, 2)
    assert rates["received_mbit_per_s"].mean() != pytest.approx(row["received_mbit_per_s"])


def test_closest_ping_interval_is_used_and_named(project_root: Path, tmp_path: Path) -> None:
    net = {"network": "veth"}
    ds = build(
        project_root,
        tmp_path / "p",
        [
            (f"{LAB}/ping/veth-2ms.txt", "ping/2ms.txt", "ping", "initiator", {**net, "interval_s": 0.002}),
            (f"{LAB}/ping/veth-200ms.txt", "ping/200ms.txt", "ping", "initiator", {**net, "interval_s": 0.2}),
            (f"{LAB}/iperf3/veth-tcp.json", "iperf3/tcp.json", "iperf3", "initiator", net),
        ],
    )
    rtt = r2t.rtt_means(ds)
    at_2ms = float(rtt.loc[rtt["interval_s"] == 0.002, "mean_rtt_ms"].iloc[0])
    row = r2t.network_inputs(rtt, r2t.iperf_rates(ds), 0.003).iloc[0]  # not equal to any: closest
    assert (row["ping_interval_ms"], row["model_interval_ms"]) == (2.0, 3.0)
    assert row["one_way_ms"] == pytest.approx(at_2ms / 2) and row["missing"] == ""
    far = r2t.network_inputs(rtt, r2t.iperf_rates(ds), 0.02).iloc[0]  # 2 ms and 200 ms are 10x away
    assert "no ping at 20 ms or within 2x" in far["missing"] and "2 ms, 200 ms" in far["missing"]


def test_request_sizes_are_not_averaged_across_queue_depths() -> None:
    kib = 1024.0
    req = pd.DataFrame(
        {
            "device": ["disk"] * 3,
            "bs_bytes": [1024 * kib] * 3,
            "side": ["local"] * 3,
            "iodepth": [1, 8, 8],
            "request_bytes": [1024 * kib, 1854 * kib, 1854 * kib],
        }
    )
    assert r2t.request_bytes_for(req, "disk", 1024 * 1024) == (1024 * kib, "iostat wareq-sz (1 file)")
