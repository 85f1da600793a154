"""``lab smoke``: a short check (well under 90 s) that the lab measures the protocol.

1. window 1, D = 0: every 2 MiB write shows 8 R2Ts on the wire, never more than 1 outstanding;
2. window 1, D = 2 ms: the latency added by D (difference of fio's median latencies of 8
   writes) matches (one-way trips × ΔD) within 20 %;
3. window 8: at least 4 R2Ts outstanding, and fio's crc32c verify passes (libiscsi answers
   several outstanding R2Ts with the right data).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from iscsi_report.core.ingest import tshark as tshark_ingest
from iscsi_report.core.units import BYTES_PER_MIB
from iscsi_report.lab.build import Tools
from iscsi_report.lab.sweep import LINK_MBPS, FioRun, Runner, one_way_trips
from iscsi_report.lab.topology import Lab, target_params

SMOKE_BS_BYTES = 2 * BYTES_PER_MIB
SMOKE_DELAY_MS = 2.0
SMOKE_IOS = 8
IMMEDIATE_DATA_BYTES = 65536
SEGMENT_BYTES = 262144
TOLERANCE = 0.20


def _run(window: int, delay_ms: float, captured: bool) -> FioRun:
    return FioRun(
        window,
        LINK_MBPS,
        delay_ms,
        IMMEDIATE_DATA_BYTES,
        SEGMENT_BYTES,
        captured,
        0 if captured else 1,
        "write",
        1,
        SMOKE_BS_BYTES,
        SMOKE_IOS,
    )


def _fio_median_latency_s(path: Path) -> float:
    """Median write completion latency of a fio run (robust to the shared machine's hiccups)."""
    job = json.loads(path.read_text())["jobs"][0]
    return job["write"]["clat_ns"]["percentile"]["50.000000"] / 1e9


def smoke(tools: Tools, say=print, delay_line: str = "compiled") -> dict[str, Any]:
    """Run the checks on ``delay_line``; returns the figures and a list of failed checks (empty = pass)."""
    t0 = time.monotonic()
    failed: list[str] = []
    out: dict[str, Any] = {"delay_line": delay_line}
    with (
        tempfile.TemporaryDirectory(prefix="iscsilab-smoke-") as tmp,
        Lab(tools, say, delay_line=delay_line) as lab,
    ):
        runner = Runner(lab, Path(tmp), say)
        lab.start_target(target_params(1, IMMEDIATE_DATA_BYTES, SEGMENT_BYTES))
        # 1: R2Ts per write at window 1 (captured), latency at D = 0
        cap = runner.captured([_run(1, 0.0, True)])[0]
        w1 = tshark_ingest.writes(tshark_ingest.parse(cap))
        lat0 = _fio_median_latency_s(runner.fio(_run(1, 0.0, False)))
        out["window_1"] = {
            "writes": len(w1),
            "r2t_per_write": sorted(set(w1["r2t_count"])),
            "max_outstanding_r2t": int(w1["max_outstanding_r2t"].max()),
        }
        if len(w1) == 0 or set(w1["r2t_count"]) != {8}:
            failed.append(f"window 1: R2Ts per 2 MiB write {out['window_1']['r2t_per_write']}, want 8")
        if len(w1) and int(w1["max_outstanding_r2t"].max()) != 1:
            failed.append(f"window 1: {out['window_1']['max_outstanding_r2t']} R2Ts outstanding, want 1")
        # 2: latency added by D
        lat_d = _fio_median_latency_s(runner.fio(_run(1, SMOKE_DELAY_MS, False)))
        trips = one_way_trips(SMOKE_BS_BYTES, IMMEDIATE_DATA_BYTES, 1)
        want_s = trips * SMOKE_DELAY_MS / 1000
        got_s = lat_d - lat0
        out["added_latency"] = {
            "one_way_delay_ms": SMOKE_DELAY_MS,
            "one_way_trips": trips,
            "expected_ms": round(want_s * 1000, 3),
            "measured_ms": round(got_s * 1000, 3),
            "latency_d0_ms": round(lat0 * 1000, 3),
            "latency_d_ms": round(lat_d * 1000, 3),
            "relative_error": round(got_s / want_s - 1, 4),
        }
        if abs(got_s / want_s - 1) > TOLERANCE:
            failed.append(
                f"latency added by D = {SMOKE_DELAY_MS} ms: {got_s * 1000:.2f} ms, "
                f"want {want_s * 1000:.2f} ms ± {TOLERANCE:.0%}"
            )
        # 3: window 8 on the wire, and data verified
        cap8 = runner.captured([_run(8, SMOKE_DELAY_MS, True)])[0]
        w8 = tshark_ingest.writes(tshark_ingest.parse(cap8))
        out["window_8"] = {
            "writes": len(w8),
            "r2t_per_write": sorted(set(w8["r2t_count"])),
            "max_outstanding_r2t": int(w8["max_outstanding_r2t"].max()) if len(w8) else 0,
        }
        if out["window_8"]["max_outstanding_r2t"] < 4:
            failed.append(
                f"window 8: at most {out['window_8']['max_outstanding_r2t']} R2Ts outstanding, want >= 4"
            )
        vpath = runner.fio(_run(8, 0.0, False), verify=True)
        job = json.loads(vpath.read_text())["jobs"][0] if vpath.exists() else {"error": -1}
        out["verify_window_8"] = {
            "fio_error": job.get("error"),
            "verified_bytes": job.get("read", {}).get("io_bytes"),
        }
        if job.get("error") != 0 or not job.get("read", {}).get("io_bytes"):
            failed.append("window 8: fio crc32c verify failed")
        out["login_keys"] = runner.login_keys
        failed += runner.failures
    out["seconds"] = round(time.monotonic() - t0, 1)
    out["failed"] = failed
    return out
