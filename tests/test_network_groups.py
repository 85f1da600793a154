"""Ping groups (network, host, address family, interval) and findings that name the one key differing.

Small synthetic ping logs in iputils' format, read through `dataset init` like a user's own files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iscsi_report.analyses import about, network
from iscsi_report.cli import main
from iscsi_report.core.ingest import ping
from iscsi_report.core.measurements import Measurements, open_dataset
from iscsi_report.presentation import about as words
from iscsi_report.presentation.charts import network as charts

REPLIES = 40
START_S = 1_700_000_000.0
JITTER_MS = 0.002  # spread of the synthetic round trips around their mean


def ping_log(host: str, address: str, interval_s: float, mean_ms: float) -> str:
    """An iputils `ping -D -i INTERVAL HOST` log with REPLIES replies around ``mean_ms``."""
    ipv6 = ":" in address
    header = (
        f"PING {host}({address}) 56 data bytes" if ipv6 else f"PING {host} ({address}) 56(84) bytes of data."
    )
    rtt = mean_ms + JITTER_MS * np.sin(np.arange(REPLIES))
    rtt = np.round(rtt, 3)
    ttl = "" if ipv6 else " ttl=64"
    lines = [header] + [
        f"[{START_S + i * interval_s:.6f}] 64 bytes from {address}: icmp_seq={i + 1}{ttl} time={r:.3f} ms"
        for i, r in enumerate(rtt)
    ]
    mdev = float(rtt.std())
    elapsed_ms = round((REPLIES - 1) * interval_s * 1000)
    footer = [
        "",
        f"--- {host} ping statistics ---",
        f"{REPLIES} packets transmitted, {REPLIES} received, 0% packet loss, time {elapsed_ms}ms",
        f"rtt min/avg/max/mdev = {rtt.min():.3f}/{rtt.mean():.3f}/{rtt.max():.3f}/{mdev:.3f} ms",
    ]
    return "\n".join(lines + footer) + "\n"


def dataset_of(tmp_path: Path, logs: dict[str, str]) -> Measurements:
    """A dataset of the given ping logs, labelled network=lan, made by `dataset init`."""
    folder = tmp_path / "mine"
    (folder / "ping").mkdir(parents=True)
    for name, text in logs.items():
        (folder / "ping" / name).write_text(text, encoding="utf-8")
    argv = ["dataset", "init", str(folder), "--label", "network=lan", "--label", "side=initiator"]
    assert main(argv) == 0
    return open_dataset(folder)


def findings_of(ds: Measurements) -> tuple[about.NetworkFindings, list[str]]:
    """The chapter's findings over ``ds``, as data and as the page's paragraphs."""
    samples = network.rtt_samples(ds)
    found = about.network_findings(ds, samples, network.latency_summary(samples))
    return found, words.network_findings(found)


def test_the_header_names_the_host_and_the_family() -> None:
    assert ping.destination("PING ::1(::1) 56 data bytes") == ("::1", "::1")
    assert ping.destination("PING localhost(localhost (::1)) 56 data bytes") == ("localhost", "::1")
    assert ping.destination("PING nas (10.0.0.9) 56(84) bytes of data.") == ("nas", "10.0.0.9")
    assert ping.destination("64 bytes from 10.0.0.9: icmp_seq=1 ttl=64 time=0.1 ms") is None
    assert network.host_of("::1", "::1") == network.host_of("127.0.0.1", "127.0.0.1") == "loopback"
    assert network.host_of("nas", "fe80::1") == "nas"
    assert network.host_of("10.0.0.9", "10.0.0.9") == "10.0.0.9"
    assert network.family_name(6) == "IPv6" and network.family_name("4") == "IPv4"
    assert network.family_name(None) == network.UNKNOWN


def test_two_families_at_one_interval_are_a_difference_of_family(tmp_path: Path) -> None:
    ds = dataset_of(
        tmp_path,
        {
            "v4.txt": ping_log("127.0.0.1", "127.0.0.1", 0.2, 0.05),
            "v6.txt": ping_log("::1", "::1", 0.2, 0.5),
        },
    )
    summary = network.latency_summary(network.rtt_samples(ds))
    assert summary[["host", "family"]].values.tolist() == [["loopback", "IPv4"], ["loopback", "IPv6"]]
    assert summary["interval_s"].tolist() == [0.2, 0.2] and summary["samples"].tolist() == [REPLIES] * 2
    found, text = findings_of(ds)
    (row,) = [r for _, r in found.group_effects.iterrows()]
    assert (row["key"], row["low"], row["high"]) == ("family", "IPv4", "IPv6")
    assert row["ratio"] == pytest.approx(10.0, rel=0.01)
    (paragraph,) = text
    assert paragraph.startswith("**IPv4 and IPv6 round trips differ.**")
    assert "differ only in their address family (both to loopback, every 200 ms, on lan)" in paragraph
    assert "How often the path is used" not in paragraph


def test_two_intervals_of_one_family_are_a_difference_of_interval(tmp_path: Path) -> None:
    ds = dataset_of(
        tmp_path,
        {
            "fast.txt": ping_log("127.0.0.1", "127.0.0.1", 0.002, 0.02),
            "slow.txt": ping_log("127.0.0.1", "127.0.0.1", 1.0, 0.1),
        },
    )
    found, text = findings_of(ds)
    (row,) = [r for _, r in found.group_effects.iterrows()]
    assert (row["key"], row["low"], row["high"], row["family"]) == ("interval_s", 0.002, 1.0, "IPv4")
    (paragraph,) = text
    assert paragraph.startswith("**How often the path is used changes its round trip.**")
    assert "differ only in their ping interval (both over IPv4, to loopback" in paragraph


def test_groups_differing_in_family_and_interval_are_not_compared(tmp_path: Path) -> None:
    """The reported fault: IPv4 pinged every 2 ms, IPv6 every second; the page put the difference
    down to the interval. Two keys differ, so neither can be named: no finding."""
    ds = dataset_of(
        tmp_path,
        {
            "v4-2ms.txt": ping_log("127.0.0.1", "127.0.0.1", 0.002, 0.02),
            "v6-1s.txt": ping_log("::1", "::1", 1.0, 0.4),
        },
    )
    found, text = findings_of(ds)
    assert found.group_effects.empty and text == []


def test_pooled_groups_and_chart_panels_keep_the_families_apart(tmp_path: Path) -> None:
    ds = dataset_of(
        tmp_path,
        {
            "v4.txt": ping_log("127.0.0.1", "127.0.0.1", 0.2, 0.05),
            "v6.txt": ping_log("::1", "::1", 0.2, 0.5),
        },
    )
    samples = network.rtt_samples(ds)
    panels = charts.rtt_histogram(network.log_histogram(samples)).to_dict()
    groups = sorted({row["group"] for row in panels["datasets"][panels["data"]["name"]]})
    assert groups == ["lan, IPv4, every 200 ms", "lan, IPv6, every 200 ms"]
    assert set(network.ecdf_points(samples)["family"]) == {"IPv4", "IPv6"}


def test_two_network_labels_are_shown_side_by_side_never_compared() -> None:
    """The user's labels say wired and wireless are two networks: a finding would say nothing new."""
    summary = pd.DataFrame(
        {
            "network": ["wired", "wireless"],
            "host": ["nas", "nas"],
            "family": ["IPv4", "IPv4"],
            "interval_s": [0.002, 0.002],
            "mean_ms": [0.4, 3.0],
        }
    )
    assert about.group_effects(summary).empty
    moved = summary.assign(network="wired", family=["IPv4", "IPv6"])
    assert about.group_effects(moved)["key"].tolist() == ["family"]


def test_a_model_input_never_pools_two_families_of_one_network(tmp_path: Path) -> None:
    """IPv4 and IPv6 pings of one network label at one spacing are two paths: the round trip a model
    reads is refused with both files named (R2T chapter), and the upgrade chapter leaves it out saying why."""
    from iscsi_report.analyses import r2t
    from iscsi_report.core.errors import ReportError

    ds = dataset_of(
        tmp_path,
        {
            "v4.txt": ping_log("127.0.0.1", "127.0.0.1", 0.002, 0.05),
            "v6.txt": ping_log("::1", "::1", 0.002, 0.09),
        },
    )
    mixed = network.mixed_paths(network.rtt_samples(ds))
    assert list(mixed) == [("lan", 0.002)]
    assert "loopback over IPv4: ping/v4.txt" in mixed[("lan", 0.002)]
    assert "loopback over IPv6: ping/v6.txt" in mixed[("lan", 0.002)]
    with pytest.raises(ReportError, match=r"network 'lan': its pings every 2 ms reached more than one"):
        r2t.rtt_means(ds)
    one = dataset_of(tmp_path / "one", {"v4.txt": ping_log("127.0.0.1", "127.0.0.1", 0.002, 0.05)})
    assert network.mixed_paths(network.rtt_samples(one)) == {}


def test_the_upgrade_chapter_leaves_out_a_network_pinged_over_two_families(tmp_path: Path) -> None:
    """The veth lab data plus an IPv6 ping of the same network label at the same 2 ms: left out, said why."""
    import shutil

    import yaml
    from fast_yaml import load_yaml

    from iscsi_report.analyses import upgrade
    from iscsi_report.core.dataset import update_checksums

    raw = Path(
        shutil.copytree(Path(__file__).resolve().parents[1] / "data/raw/lab-veth-2026", tmp_path / "veth")
    )
    (raw / "ping" / "veth-v6.txt").write_text(ping_log("::1", "::1", 0.002, 0.09), encoding="utf-8")
    doc = load_yaml(raw / "manifest.yaml")
    entry = {"path": "ping/veth-v6.txt", "tool": "ping", "side": "initiator", "sha256": "0", "bytes": 0}
    doc["files"].append(entry | {"labels": {"network": "veth", "interval_s": 0.002}})
    (raw / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    update_checksums(raw)
    nets = upgrade.measured_networks(open_dataset(raw), 0.002)
    assert nets.usable == {}
    assert "more than one host or address family" in nets.left_out["veth"]
    assert "ping/veth-v6.txt" in nets.left_out["veth"]


def test_the_fit_never_pools_two_families_of_one_network(tmp_path: Path) -> None:
    from iscsi_report.analyses.fit import inputs
    from iscsi_report.core.errors import DesignError

    logs = {
        "v4.txt": ping_log("127.0.0.1", "127.0.0.1", 0.002, 0.05),
        "v6.txt": ping_log("::1", "::1", 0.002, 0.09),
    }
    ds = dataset_of(tmp_path, logs)
    with pytest.raises(
        DesignError, match=r"network 'lan'.*more than one host or address family.*ping/v6\.txt"
    ):
        inputs.rtt_samples_by_network(ds, 0.002)
