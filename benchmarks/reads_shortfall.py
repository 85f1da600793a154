"""Post hoc (issue 21): why the engine under-forecasts reads from writes, on every sweep with reads.

Post hoc: written after the second blind sweep (lab-iscsi-2026-blind2) was scored. For every read
at queue depth 1 of each sweep, and every writes-only "today" of the same settings (the forecast
matrix's group "direction"), it prints

1. the read's *residual*: the measured mean latency less the protocol's terms (model, no host
   time), beside the host time the engine carries from the writes (per command and per PDU,
   version 2), the writes' own per-byte residual at that size, and the engine's shortfall (ms, %);
2. the residual by read size pooled over network points (median, range), with the Data-In PDUs
   per read and the residual per PDU;
3. the candidate causes tested against the residual at the largest read size of each sweep: a
   slower reverse path (the residual would grow with the wire time, so it is shown per ms of wire
   time at each link rate) and a window limit on the target's sending (it would grow with the
   one-way delay);
4. every read target of the forecast matrix (any today, any group): the engine's signed error by
   today's segment size and window and the read's size, since reads are only ever at 256 KiB
   segments and segment size can be varied on today's side only.

Run from the project root:
    PYTHONPATH=src .venv/bin/python benchmarks/reads_shortfall.py [SWEEP ...]
(no argument: every committed lab-iscsi-2026* sweep with a read run).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses import lab
from iscsi_report.core import forecast
from iscsi_report.core.units import BYTES_PER_KIB

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"
TODAY_FREE = ("rw", "iodepth")  # the settings a direction target may differ from today in


def same_settings_reads(confs: pd.DataFrame, settings: pd.Series) -> pd.DataFrame:
    """Reads at queue depth 1 with today's settings in everything but the direction."""
    reads = confs[(confs["rw"] == "read") & (confs["iodepth"] == 1)]
    for col in fm.SETTINGS_COLUMNS:
        if col not in TODAY_FREE:
            reads = reads[reads[col] == settings[col]]
    return reads


def write_residual_at(t: forecast.Today, bs_bytes: int) -> float:
    """Today's measured write latency less its modelled terms at ``bs_bytes`` (NaN: not measured)."""
    for m in t.measured:
        if m.bs_bytes == bs_bytes:
            c = replace(t.configuration, bs_bytes=bs_bytes)
            return m.op_ms.value - forecast.breakdown(t, c, forecast.network_for(t, c)).total_ms
    return float("nan")


def with_median(data: lab.LabData, confs: pd.DataFrame) -> pd.DataFrame:
    """``confs`` with each configuration's median over its runs of fio's per-run median latency."""
    runs = data.runs[~data.runs["captured"].astype(bool)]
    med = runs.groupby(fm.KEY_COLUMNS, dropna=False)["latency_ms"].median().rename("median_ms")
    return confs.merge(med.reset_index(), on=fm.KEY_COLUMNS, how="left", validate="one_to_one")


def rows_of(sweep: str, engine_version: int = forecast.ENGINE_VERSION) -> pd.DataFrame:
    """One row per (read target, writes-only today): measured, forecast, the terms and the residual."""
    data = lab.load(RAW / sweep)
    confs = with_median(data, fm.configurations(data))
    out = []
    for group in fm._todays(confs, None):
        t = fm.today(data.dataset, group, engine_version=engine_version)
        for _, r in same_settings_reads(confs, group.iloc[0]).iterrows():
            c = fm.configuration_of(data.dataset, r)
            f = forecast.forecast(t, c)
            b = forecast.breakdown(t, c, forecast.network_for(t, c))
            out.append(
                {
                    "sweep": sweep,
                    "device": r.get("device", lab.RAM_DEVICE),
                    "ow_ms": r["one_way_delay_ms"],
                    "link_mbps": r["link_mbps"],
                    "seg_kib": r["max_recv_data_segment_bytes"] // BYTES_PER_KIB,
                    "bs_kib": r["bs_bytes"] // BYTES_PER_KIB,
                    "measured_ms": r["measured_ms"],
                    "forecast_ms": f.op_ms,
                    "wire_ms": b.solicited_transmit_ms,
                    "device_ms": b.device_ms,
                    "data_in_pdus": b.data_pdus,
                    "read_residual_ms": r["measured_ms"] - b.total_ms,
                    "median_residual_ms": r["median_ms"] - b.total_ms,
                    "carried_ms": f.terms_ms["host_residual_ms"],
                    "write_residual_same_bs_ms": write_residual_at(t, int(r["bs_bytes"])),
                    "writes_per_byte_ms": forecast.host_residual(t).at(c.bs_bytes)[0],
                    "shortfall_ms": r["measured_ms"] - f.op_ms,
                    "error_pct": 100 * (f.op_ms - r["measured_ms"]) / r["measured_ms"],
                }
            )
    return pd.DataFrame(out)


def per_target(d: pd.DataFrame) -> pd.DataFrame:
    """Per read configuration: medians over its todays."""
    keys = ["device", "seg_kib", "ow_ms", "link_mbps", "bs_kib"]
    cols = [
        "measured_ms",
        "forecast_ms",
        "wire_ms",
        "data_in_pdus",
        "read_residual_ms",
        "median_residual_ms",
        "carried_ms",
        "write_residual_same_bs_ms",
        "writes_per_byte_ms",
        "shortfall_ms",
        "error_pct",
    ]
    return d.groupby(keys)[cols].median().reset_index()


def by_size(t: pd.DataFrame) -> pd.DataFrame:
    """The RAM LUN's read residual by read size over the network points: median, range, per PDU."""
    ram = t[t["device"] == lab.RAM_DEVICE]
    g = ram.groupby("bs_kib")
    out = g.agg(
        points=("read_residual_ms", "size"),
        residual_median_ms=("read_residual_ms", "median"),
        residual_min_ms=("read_residual_ms", "min"),
        residual_max_ms=("read_residual_ms", "max"),
        median_run_residual_ms=("median_residual_ms", "median"),
        data_in_pdus=("data_in_pdus", "first"),
        shortfall_median_ms=("shortfall_ms", "median"),
        error_median_pct=("error_pct", "median"),
    )
    return out.assign(residual_per_pdu_ms=out["residual_median_ms"] / out["data_in_pdus"]).reset_index()


def largest(t: pd.DataFrame) -> pd.DataFrame:
    """At the sweep's largest read: the residual against link rate (per ms of wire) and delay."""
    ram = t[t["device"] == lab.RAM_DEVICE]
    top = ram[ram["bs_kib"] == ram["bs_kib"].max()]
    cols = ["bs_kib", "ow_ms", "link_mbps", "wire_ms", "read_residual_ms"]
    return top[cols].assign(residual_per_wire_ms_pct=100 * top["read_residual_ms"] / top["wire_ms"])


def by_todays_segment(sweep: str) -> pd.DataFrame:
    """The engine's signed error on every read target of the matrix, by today's segment, window and size."""
    m = fm.run(lab.load(RAW / sweep), sweep)
    e = m.pairs[(m.pairs["method"] == fm.ENGINE) & m.pairs["target"].str.startswith("read|")]
    today = e["today"].str.extract(r"seg=(?P<today_seg>\d+)\|tw=(?P<today_window>\d+)")
    size = e["target"].str.extract(r"bs=(?P<bs>\d+)")["bs"].astype(int) // BYTES_PER_KIB
    e = pd.concat([e, today], axis=1).assign(bs_kib=size)
    g = e.groupby(["today_seg", "today_window", "bs_kib"])["error_pct"]
    return g.agg(pairs="size", median_pct="median", lowest_pct="min", highest_pct="max").reset_index()


def sweeps_with_reads() -> list[str]:
    """Every committed lab-iscsi-2026* sweep with a read run of fio (its files are named read-*)."""
    return sorted(p.name for p in RAW.glob("lab-iscsi-2026*") if any((p / "fio").glob("read-*.json")))


def main(sweeps: list[str]) -> None:
    """Print the three tables for each sweep (see the module docstring)."""
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 500)
    pd.set_option("display.max_columns", 50)
    fmt = {"float_format": lambda v: f"{v:.2f}", "index": False}
    for sweep in sweeps or sweeps_with_reads():
        d = rows_of(sweep)
        if d.empty:
            print(f"== {sweep}: no read at queue depth 1 with a writes-only today of its settings ==")
            continue
        t = per_target(d)
        print(f"== {sweep} (engine {forecast.ENGINE_VERSION}; {len(t)} read configurations) ==")
        print(t.to_string(**fmt))
        print("-- the RAM LUN's read residual by read size --")
        print(by_size(t).to_string(**fmt))
        print("-- at the largest read: residual against link rate and delay --")
        print(largest(t).to_string(**fmt))
        print("-- every read target of the matrix: engine error (%) by today's segment, window, read size --")
        print(by_todays_segment(sweep).to_string(**fmt))


if __name__ == "__main__":
    main(sys.argv[1:])
