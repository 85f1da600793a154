"""The fleet chapter's table: each row equals what the dataset's own chapter computes, gaps are explained."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from fast_yaml import load_yaml

from iscsi_report.analyses import fleet, lab, projections, r2t
from iscsi_report.core import dataset as datasets
from iscsi_report.core import model
from iscsi_report.core.dataset import update_checksums
from iscsi_report.core.errors import ReportError
from iscsi_report.core.ingest import textio
from iscsi_report.core.measurements import open_dataset

RAW = Path(__file__).resolve().parents[1] / "data" / "raw"


@pytest.fixture(scope="module")
def small_fleet() -> pd.DataFrame:
    """The two quick datasets (the lab's fit is tested apart: it takes a minute to read)."""
    return fleet.fleet_table(RAW, ["blog-2023", "lab-veth-2026"])


def _copy_with(tmp_path: Path, source: str, keep_tools: set[str], drop_label: str | None = None) -> Path:
    """A copy of a dataset whose manifest lists only ``keep_tools`` files (optionally without a label)."""
    dest = tmp_path / "raw" / "host-a"
    shutil.copytree(RAW / source, dest)
    manifest = dest / datasets.MANIFEST
    doc = load_yaml(manifest)
    doc["dataset"] = "host-a"
    doc["files"] = [f for f in doc["files"] if f["tool"] in keep_tools]
    for f in doc["files"]:
        (f.get("labels") or {}).pop(drop_label, None)
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return dest


def test_default_is_every_dataset_with_a_manifest(tmp_path: Path) -> None:
    assert fleet.manifests(RAW) == sorted(p.parent.name for p in RAW.glob("*/manifest.yaml"))
    (tmp_path / "no-manifest").mkdir()
    with pytest.raises(ReportError, match=r"no dataset with a manifest\.yaml"):
        fleet.fleet_table(tmp_path)


def test_blog_rows_equal_the_projections_chapter(small_fleet: pd.DataFrame) -> None:
    ds = open_dataset(RAW / "blog-2023")
    inputs = projections.measured_inputs(ds)
    expected = projections.projection_table(projections.measured_projections(ds, inputs))
    got = small_fleet[small_fleet["dataset"] == "blog-2023"].reset_index(drop=True)
    assert len(got) == len(expected) > 0
    for col_fleet, col_chapter in [
        ("modelled_mib_per_s", "mib_per_s"),
        ("measured_mib_per_s", "measured_mib_per_s"),
        ("error_pct", "error_pct"),
    ]:
        assert got[col_fleet].tolist() == pytest.approx(expected[col_chapter].tolist(), rel=1e-12)
    assert got["binding"].tolist() == expected["binding"].tolist()
    rtt = inputs.networks.set_index("network")["mean_rtt_ms"]
    assert got["rtt_ms"].tolist() == pytest.approx(rtt[got["network"]].tolist())
    assert set(got["provenance"]) == {"reconstructed"}


def test_unmeasured_dataset_is_modelled_like_the_model_chapter(small_fleet: pd.DataFrame) -> None:
    got = small_fleet[small_fleet["dataset"] == "lab-veth-2026"]
    ds = open_dataset(RAW / "lab-veth-2026")
    inputs = projections.measured_inputs(ds)
    configs = r2t.configurations(inputs.parameter_sets, inputs.bs_bytes)
    terms = r2t.latency_terms(
        configs, r2t.model_inputs(inputs.networks, inputs.devices, inputs.cpu), inputs.bs_bytes
    )
    totals = r2t.latency_totals(terms).set_index("configuration")["mib_per_s"]
    assert len(got) == len(totals) > 0
    for _, row in got.iterrows():  # capped by link, device and CPU: never above the uncapped model
        assert row["modelled_mib_per_s"] <= totals[row["configuration"]] * (1 + 1e-12)
        if row["binding"] == "latency":
            assert row["modelled_mib_per_s"] == pytest.approx(totals[row["configuration"]], rel=1e-12)
    assert got["measured_mib_per_s"].isna().all()
    assert got["note"].str.contains("no iSCSI run").all()
    assert set(got["provenance"]) == {"emulated"}  # its link was shaped by tbf (link_limit_mbps)


def test_dataset_with_nothing_to_model_shows_a_dash_and_why(tmp_path: Path) -> None:
    _copy_with(tmp_path, "lab-veth-2026", {"ping"})
    table = fleet.fleet_table(tmp_path / "raw")
    assert len(table) == 1
    row = table.iloc[0]
    assert math.isnan(row["modelled_mib_per_s"]) and math.isnan(row["measured_mib_per_s"])
    assert "nothing to model" in row["note"] and "iperf3" in row["note"]
    shown = fleet.shown(table).iloc[0]
    assert shown["modelled_mib_per_s"] == fleet.DASH and shown["binding"] == fleet.DASH
    assert shown["link_mbit_per_s"] == fleet.DASH and shown["rtt_ms"] != fleet.DASH  # what it did measure
    assert (
        "note" not in fleet.shown(table) and fleet.notes(table)["note"].str.contains("nothing to model").all()
    )
    summary = fleet.per_dataset(table)
    assert summary.loc[0, "modelled"] == 0 and summary.loc[0, "bindings"] == fleet.DASH


def test_provenance_kinds(tmp_path: Path) -> None:
    assert fleet.provenance(open_dataset(RAW / "blog-2023")).kind == "reconstructed"
    assert fleet.provenance(open_dataset(RAW / "lab-veth-2026")).kind == "emulated"
    plain = _copy_with(tmp_path, "lab-veth-2026", {"ping", "iperf3", "fio"}, drop_label="link_limit_mbps")
    assert fleet.provenance(open_dataset(plain)).kind == "measured"


def test_lab_bounds_name_the_smaller_ceiling() -> None:
    slow_link = fleet.lab_bounds(1 << 20, latency_ms=1.0, link_bps=8e6)  # 1 MB/s link, 1000 MiB/s latency
    assert slow_link == (pytest.approx(8e6 / 8 / (1 << 20)), "link")
    assert fleet.lab_bounds(1 << 20, latency_ms=1000.0, link_bps=8e9) == (pytest.approx(1.0), "latency")


@pytest.mark.skipif(not (RAW / "lab-iscsi-2026" / "manifest.yaml").is_file(), reason="lab dataset absent")
def test_lab_rows_equal_the_lab_latency_chapter() -> None:
    got = pd.DataFrame(fleet.dataset_rows(RAW / "lab-iscsi-2026"), columns=fleet.COLUMNS)
    data = lab.load(RAW / "lab-iscsi-2026")
    rows = lab.write_fit_rows(lab.features(data))
    coef = lab.coefficients(rows[rows["design_role"] == "fit"])
    at = rows[(rows["bs_bytes"] == 1 << 20) & (rows["immediate_data_bytes"] == 65536)]
    at = at[(at["max_recv_data_segment_bytes"] == 262144) & (at["r2t_window"] == at["r2t_window"].max())]
    lines = lab.model_lines(data, coef, at).sort_values(lab.NETWORK_KEYS)
    assert len(got) == len(lines) > 0
    measured = (1 << 20) / (lines["measured_ms"] / 1000) / (1 << 20)
    assert got["measured_mib_per_s"].tolist() == pytest.approx(measured.tolist(), rel=1e-12)
    latency_bound = (1 << 20) / (lines["predicted_ms"] / 1000) / (1 << 20)
    assert (got["modelled_mib_per_s"].to_numpy() <= latency_bound.to_numpy() * (1 + 1e-12)).all()
    assert set(got["provenance"]) == {"emulated"} and set(got["device"]) == {"ram"}
    assert got["binding"].isin(["latency", "link"]).all()


def test_a_diagnosis_without_a_captured_login_is_a_row_that_says_why_not_a_crash() -> None:
    """The segments diagnosis has no fit run and no login keys: one note row, and a clear error below it."""
    name = "lab-iscsi-2026-segments"
    if not (RAW / name).is_dir():
        pytest.skip(f"{name} is absent")
    got = pd.DataFrame(fleet.dataset_rows(RAW / name), columns=fleet.COLUMNS)
    assert len(got) == 1 and "no write run is labelled design_role=fit" in got["note"].iloc[0]
    with pytest.raises(ReportError, match=r"has no FirstBurstLength.*captured no login"):
        lab.features(lab.load(RAW / name))


def test_cache_reuses_rows_until_a_file_of_the_dataset_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = _copy_with(tmp_path, "lab-veth-2026", {"ping", "iperf3", "fio", "iostat"}).parent
    cache = tmp_path / "cache"
    first = fleet.fleet_table(raw, cache_dir=cache)
    pd.testing.assert_frame_equal(first, fleet.fleet_table(raw))  # cached rows = computed rows
    assert len(list(cache.glob("host-a-*.json"))) == 1

    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("dataset_rows ran on a cache hit")

    with monkeypatch.context() as m:
        m.setattr(fleet, "dataset_rows", must_not_run)
        pd.testing.assert_frame_equal(first, fleet.fleet_table(raw, cache_dir=cache))
        with pytest.raises(AssertionError, match="cache hit"):  # other options: another key
            fleet.fleet_table(raw, cache_dir=cache, bs_bytes=1 << 20)
    calls = []
    monkeypatch.setattr(fleet, "dataset_rows", lambda *a, **k: calls.append(a) or [])
    unlisted = raw / "host-a" / "secret.txt"  # not in the manifest: never read, never a key
    unlisted.write_text("not a measurement\n", encoding="utf-8")
    fleet.fleet_table(raw, cache_dir=cache)
    assert calls == [] and unlisted.resolve() not in textio.files_read()
    listed = next((raw / "host-a" / "ping").glob("*.txt"))
    listed.write_text(listed.read_text().replace("time=", "time=1", 1), encoding="utf-8")
    update_checksums(raw / "host-a")  # an intended change to a listed file
    fleet.fleet_table(raw, cache_dir=cache)
    assert len(calls) == 1 and len(list(cache.glob("host-a-*.json"))) == 1  # the stale entry is gone


def test_a_file_the_manifest_does_not_list_is_neither_read_nor_linked(tmp_path: Path) -> None:
    """An unlisted ``secret.txt`` beside the raw files is never read, so the fleet page's list of raw
    files (the only links the site copies into ``_downloads``) never names it (issue 24)."""
    from iscsi_report.presentation.report import Context

    raw = _copy_with(tmp_path, "lab-veth-2026", {"ping", "iperf3", "fio", "iostat"})
    secrets = [raw / "secret.txt", raw / "ping" / "secret.txt"]
    for secret in secrets:
        secret.write_text("password\n", encoding="utf-8")
    fleet.fleet_table(raw.parent)  # cold: every listed file parsed
    read = [p for p in textio.files_read() if p.is_relative_to(tmp_path.resolve())]
    assert read and not {s.resolve() for s in secrets} & set(read)
    links = Context("r", "", tmp_path.resolve(), tmp_path / "results").raw_links_markdown(read)
    assert "host-a/ping/" in links and "secret" not in links


def test_binding_counts_name_every_bound_and_skip_unmodelled_rows() -> None:
    table = pd.DataFrame({"binding": ["latency", "latency", "link", fleet.DASH]})
    counts = fleet.binding_counts(table)
    assert list(counts.index) == list(model.BOUND_NAMES)
    assert counts["latency"] == 2 and counts["link"] == 1 and counts["device"] == 0
    assert counts.sum() == 3
