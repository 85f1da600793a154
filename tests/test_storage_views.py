"""Storage page views: latency percentiles from fio json+ bins, and iostat over time (issue 14)."""

from __future__ import annotations

import json
import lzma
import math
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from iscsi_report.analyses import storage
from iscsi_report.core import dataset as datasets
from iscsi_report.core.ingest import fio, iostat
from iscsi_report.core.ingest.textio import sha256_file
from iscsi_report.core.measurements import open_dataset
from iscsi_report.presentation import report
from iscsi_report.presentation.charts import storage as charts

ROOT = Path(__file__).resolve().parents[1]
LAB = "data/raw/lab-veth-2026"
FIX = "tests/fixtures"
QD4 = "fio/fio-3.33_seqwrite_2m_libaio_qd4.jsonplus.json.xz"  # real fio 3.33 json+ output


def build(tmp: Path, entries: list[tuple[str, str, dict[str, Any]]]) -> datasets.Dataset:
    """A dataset in tmp of local fio files: (source, rel, labels) each, checksums computed."""
    files = []
    for src, rel, labels in entries:
        dest = tmp / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / src, dest)
        files.append(
            {"path": rel, "tool": "fio", "side": "local", "sha256": sha256_file(dest), "labels": labels}
        )
    doc = {"dataset": tmp.name, "title": "views", "reconstructed": False, "files": files}
    (tmp / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return open_dataset(tmp)


def _fio_printed(path: Path) -> dict[str, float]:
    """fio's own clat percentile map of the write job, in ms, read straight from the JSON."""
    doc = json.loads(lzma.decompress(path.read_bytes()))
    return {float(k): v / 1e6 for k, v in doc["jobs"][0]["write"]["clat_ns"]["percentile"].items()}


def test_bin_percentiles_equal_fios_own_on_a_real_json_plus_run() -> None:
    path = ROOT / FIX / QD4
    result = fio.parse(path)
    bins = result.histogram[result.histogram["direction"] == "write"]
    got = storage.bin_percentiles(bins)
    printed = _fio_printed(path)
    assert got == {"p50": printed[50.0], "p90": printed[90.0], "p99": printed[99.0], "p99_9": printed[99.9]}
    levels = {f"p{lvl:g}": lvl for lvl in printed}  # every level fio printed, 1 to 99.99
    assert storage.bin_percentiles(bins, levels) == {f"p{lvl:g}": v for lvl, v in printed.items()}


def test_bin_percentile_rule_by_hand() -> None:
    # 100 writes at 1..100 ms: p50 is the 50th, p99 the 99th, p99.9 the slowest; bins are unordered
    bins = pd.DataFrame({"lat_ns": [int(i * 1e6) for i in range(100, 0, -1)], "count": 1})
    assert storage.bin_percentiles(bins) == {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p99_9": 100.0}
    # one slow write in 1000: p99 stays fast; p99.9 is the slow one, since 99.9 / 100 * 1000 is a
    # hair above 999 in doubles, as in fio's own comparison (stat.c computes it the same way)
    skew = pd.DataFrame({"lat_ns": [1_000_000, 50_000_000], "count": [999, 1]})
    assert storage.bin_percentiles(skew) == {"p50": 1.0, "p90": 1.0, "p99": 1.0, "p99_9": 50.0}
    assert storage.bin_percentiles(skew.assign(count=[9991, 9]))["p99_9"] == 1.0
    assert all(math.isnan(v) for v in storage.bin_percentiles(skew.assign(count=0)).values())


def test_percentile_table_compares_bins_with_fio_where_both_exist(tmp_path: Path) -> None:
    entries = [
        (f"{LAB}/fio/local-{s}.json", f"fio/local-{s}.json", {"device": "disk"}) for s in ("64k", "1M", "2M")
    ]
    ds = build(tmp_path, [*entries, (f"{FIX}/{QD4}", "fio/qd4.json.xz", {"device": "disk"})])
    table, cdf = storage.latency_percentiles(ds)
    assert len(table) == 4
    qd4 = table.set_index("file").loc["fio/qd4.json.xz"]
    assert qd4["completions"] == 6038 and qd4["iodepth"] == 4
    for p in ("p50", "p99", "p99_9"):
        assert qd4[f"bins_{p}_ms"] == qd4[f"fio_{p}_ms"]
    plain = table[table["file"] != "fio/qd4.json.xz"]
    assert plain["bins_p50_ms"].isna().all() and plain["fio_p50_ms"].notna().all()
    assert set(plain["source"]) == {"fio's percentiles only (no json+ bins)"}
    assert storage.percentile_summary(table) == {
        "percentile_runs": 4.0,
        "percentile_runs_bins": 1.0,
        "percentile_runs_both": 1.0,
        "percentile_runs_agree": 1.0,
    }
    # the CDF is thinned but keeps the fastest and slowest bins and ends at 100 %
    assert len(cdf) <= storage.MAX_CDF_POINTS + 2 and set(cdf["file"]) == {"fio/qd4.json.xz"}
    assert cdf["cumulative_pct"].is_monotonic_increasing and cdf["cumulative_pct"].iloc[-1] == pytest.approx(
        100
    )
    points = storage.percentile_points(table)
    assert set(points["source"]) == {"fio", "json+ bins"}
    assert set(points.loc[points["source"] == "json+ bins", "percentile"]) == {"p50", "p90", "p99", "p99_9"}
    for chart in (charts.latency_percentiles(points), charts.latency_cdf(cdf)):
        assert report.svg(chart).lstrip().startswith("<svg")


def test_iostat_over_time_on_the_lab_dataset_matches_the_raw_reports() -> None:
    ds = open_dataset(ROOT / LAB)
    table = storage.iostat_over_time(ds)
    assert set(table["file"]) == {f.rel for f in ds.select("iostat")}
    assert (table["reports_averaged"] == 1).all()  # few reports: nothing averaged
    first = ds.select("iostat")[0]
    raw = iostat.parse(first.path).devices
    raw = raw[~raw["since_boot"] & (raw["device"] == table["block_device"].iloc[0])]
    mine = table[table["file"] == first.rel]
    assert mine["w_mib_per_s"].tolist() == pytest.approx((raw["wkb_per_s"] / 1024).tolist())
    assert mine["elapsed_s"].tolist() == [float(i) for i in range(len(raw))]  # iostat -t, 1 s apart


def test_iostat_over_time_is_aggregated_to_a_few_hundred_points() -> None:
    ds = open_dataset(ROOT / "data/raw/blog-2023")
    table = storage.iostat_over_time(ds, max_points=300)
    assert len(table) <= 300 and table["reports_averaged"].max() > 1
    per_file = table.groupby("file")["reports_averaged"].sum()
    for f in ds.select("iostat")[:3]:
        devices = iostat.parse(f.path).devices
        busiest = table.loc[table["file"] == f.rel, "block_device"].iloc[0]
        assert per_file[f.rel] == int((~devices["since_boot"] & (devices["device"] == busiest)).sum())
    assert report.svg(charts.iostat_over_time(table)).lstrip().startswith("<svg")


def _kinds_table() -> pd.DataFrame:
    """Local throughput rows of one device: queue depth 1 direct, queue depth 8 direct, buffered."""
    rows = []
    for iodepth, direct in ((1, True), (8, True), (1, False)):
        for bs_kib, mib in ((64, 100.0), (1024, 300.0)):
            rows.append(
                {"scenario": "local", "device": "ssd", "rw": "write", "iodepth": iodepth, "engine": "libaio",
                 "direct": direct, "numjobs": 1, "bs_bytes": bs_kib * 1024, "bs_kib": bs_kib,
                 "mib_per_s": mib * iodepth, "iops": mib * iodepth * 1024 / bs_kib, "op_ms": bs_kib / mib}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_each_run_kind_is_its_own_series_and_the_fit_shows_only_its_points() -> None:
    table = _kinds_table()
    words = storage.run_kind_words(table)
    # only what varies is named: the queue depth and direct vs buffered, not rw, engine or jobs
    assert sorted(set(words)) == ["queue depth 1, buffered", "queue depth 1, direct", "queue depth 8, direct"]
    assert set(storage.run_kind_words(table[table["iodepth"] == 8])) == {""}
    spec = charts.throughput_by_bs(table.assign(kind=words)).to_dict()
    encoding = spec["hconcat"][0]["encoding"]
    assert encoding["strokeDash"]["field"] == "kind" and encoding["shape"]["field"] == "kind"
    single = charts.throughput_by_bs(table[table["iodepth"] == 8].assign(kind=""))
    assert "strokeDash" not in single.to_dict()["hconcat"][0]["encoding"]  # one kind: no second legend
    fitted = storage.fitted_points(table)
    assert set(zip(fitted["iodepth"], fitted["direct"], strict=True)) == {(1, True)}
    assert len(fitted) == 2
