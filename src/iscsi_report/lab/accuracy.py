"""The delay line's accuracy (set one-way delay vs ping RTT/2) and rate (iperf3), from a dataset."""

from __future__ import annotations

from pathlib import Path

from iscsi_report.core import yamlio
from iscsi_report.core.ingest import iperf3, ping


def accuracy_rows(dataset: Path) -> list[dict[str, float]]:
    """One row per (one_way_delay_ms, link_mbps) point with ping and iperf3 figures."""
    doc = yamlio.load_file(dataset / "manifest.yaml").data
    points: dict[tuple[float, float], dict[str, float]] = {}
    for f in doc["files"]:
        lab = f["labels"]
        key = (float(lab["one_way_delay_ms"]), float(lab.get("link_mbps", 0.0)))
        row = points.setdefault(key, {"one_way_delay_ms": key[0], "link_mbps": key[1]})
        if f["tool"] == "ping":
            rtt = ping.summary(ping.parse(dataset / f["path"]))["rtt_ms"]
            row["rtt_half_p50_ms"] = rtt["p50"] / 2
            row["rtt_half_mean_ms"] = rtt["mean"] / 2
            row["rtt_half_min_ms"] = rtt["min"] / 2
        elif f["tool"] == "iperf3":
            s = iperf3.summary(iperf3.parse(dataset / f["path"]))
            row["iperf3_received_mbps"] = s["received_bps"] / 1e6
    return [points[k] for k in sorted(points)]


def accuracy_table(dataset: Path) -> str:
    """A Markdown table of :func:`accuracy_rows`."""
    head = (
        "| set D (ms) | link (Mbit/s) | RTT/2 median (ms) | RTT/2 mean (ms) | RTT/2 min (ms) "
        "| median − D (ms) | iperf3 received (Mbit/s) |"
    )
    lines = [head, "|" + " --- |" * 7]
    for r in accuracy_rows(dataset):
        link = "unlimited" if r["link_mbps"] == 0 else f"{r['link_mbps']:g}"
        p50 = r.get("rtt_half_p50_ms", float("nan"))
        lines.append(
            f"| {r['one_way_delay_ms']:g} | {link} | {p50:.3f} | "
            f"{r.get('rtt_half_mean_ms', float('nan')):.3f} | "
            f"{r.get('rtt_half_min_ms', float('nan')):.3f} | {p50 - r['one_way_delay_ms']:+.3f} | "
            f"{r.get('iperf3_received_mbps', float('nan')):.0f} |"
        )
    return "\n".join(lines)


MEASURE_POINTS = (
    (0.0, 0.0),
    (0.0, 1000.0),
    (0.5, 1000.0),
    (1.0, 1000.0),
    (2.0, 1000.0),
    (4.0, 1000.0),
    (0.0, 2000.0),
)


def measure(tools, out: Path, say=print) -> str:
    """Bring the lab up, ping and iperf3 at each point of MEASURE_POINTS into ``out``; the table."""
    from iscsi_report.lab.sweep import Runner, write_manifest
    from iscsi_report.lab.topology import Lab

    out.mkdir(parents=True, exist_ok=True)
    with Lab(tools, say) as lab:
        runner = Runner(lab, out, say)
        for one_way_delay_ms, link_mbps in MEASURE_POINTS:
            runner.network(one_way_delay_ms, link_mbps)
        write_manifest(out, runner, True, 0.0, {"passed": None, "note": "accuracy only"})
    return accuracy_table(out)
