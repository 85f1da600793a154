"""The device term of a forecast: a sane fit or fio's measured per-size times, never beating the disk."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iscsi_report.analyses import device_term as D
from iscsi_report.analyses import projections as P
from iscsi_report.analyses import r2t, storage
from iscsi_report.core import model
from iscsi_report.core.measurements import open_dataset
from iscsi_report.core.units import BYTES_PER_KIB, BYTES_PER_MIB

LAB = "data/raw/lab-veth-2026"
KIND = {"rw": "write", "iodepth": 1, "engine": "psync", "direct": True, "numjobs": 1}


def local_runs(op_ms: list[float], sizes_kib: list[int], device: str = "disk") -> pd.DataFrame:
    """Model-kind local fio run rows, one per (op ms, size)."""
    bs = np.array(sizes_kib) * BYTES_PER_KIB
    return pd.DataFrame({"scenario": "local-psync", "device": device, "op_ms": op_ms, "bs_bytes": bs, **KIND})


def test_a_negative_slope_fit_is_refused_with_its_reason_and_the_measured_time_used() -> None:
    runs = local_runs([2.0, 1.6, 1.9, 1.2], [512, 1024, 1536, 2048])
    term = D.device_terms(runs)[0]["disk"]
    assert term.fit is not None and term.fit.ms_per_mib < 0
    assert term.method == "measured"
    assert term.refusal.startswith("negative slope")
    assert f"R² {term.fit.r_squared:.2f}" in term.refusal
    assert term.device_ms(2 * BYTES_PER_MIB, 2 * BYTES_PER_MIB) == pytest.approx(1.2)
    text = term.sentence(2 * BYTES_PER_MIB, 2 * BYTES_PER_MIB)
    assert text.startswith("device term: fio's measured latency at 2 MiB (fit refused: negative slope, R² ")


def test_a_negative_slope_never_shows_an_infinite_bandwidth() -> None:
    fit = storage.fit_device("disk", np.array([2.0, 1.6, 1.2]), np.array([1, 2, 3]) * BYTES_PER_MIB)
    assert np.isnan(fit.streaming_mib_per_s)
    table = storage.fit_table({"disk": fit})
    assert (
        table[["streaming_mib_per_s", "streaming_mib_per_s_lo", "streaming_mib_per_s_hi"]]
        .isna()
        .all(axis=None)
    )


@pytest.mark.parametrize(
    ("op_ms", "sizes_kib", "reason"),
    [
        ([1.0, 2.0, 1.0, 2.1], [1024, 2048, 1024, 2048], "2 block sizes, fewer than 3"),
        ([1.0, 3.0, 1.5, 2.9], [1024, 1536, 2048, 4096], f"below {D.FIT_MIN_R_SQUARED:g}"),
    ],
)
def test_a_fit_on_too_few_sizes_or_with_a_low_r_squared_is_refused(
    op_ms: list[float], sizes_kib: list[int], reason: str
) -> None:
    term = D.device_terms(local_runs(op_ms, sizes_kib))[0]["disk"]
    assert term.method == "measured"
    assert reason in term.refusal


def test_a_sane_fit_is_used_and_its_r_squared_stated() -> None:
    sizes = [256, 512, 1024, 2048]
    term = D.device_terms(local_runs([0.5 + s / 1024 for s in sizes], sizes))[0]["disk"]
    assert term.method == "fit" and term.refusal == ""
    assert term.request_ms(3 * BYTES_PER_MIB // 2) == pytest.approx(2.0)
    text = term.sentence(2 * BYTES_PER_MIB, 3 * BYTES_PER_MIB // 2)
    assert text == "device term: the local fio fit at 1.5 MiB (R² 1.00 over 4 block sizes)"


def test_measured_times_are_interpolated_between_sizes_and_an_extrapolation_is_named() -> None:
    term = D.device_terms(local_runs([1.0, 3.0], [1024, 2048]))[0]["disk"]
    assert term.request_ms(3 * BYTES_PER_MIB // 2) == pytest.approx(2.0)
    assert "interpolated at 1.5 MiB between 1 MiB and 2 MiB" in term.measured.where(3 * BYTES_PER_MIB // 2)
    assert term.block_ms(4 * BYTES_PER_MIB) == pytest.approx(6.0)
    assert "extrapolated to 4 MiB" in term.sentence(4 * BYTES_PER_MIB, 4 * BYTES_PER_MIB)
    assert "smallest size measured" in term.sentence(512 * BYTES_PER_KIB, 512 * BYTES_PER_KIB)


def test_a_request_never_implies_more_than_the_local_throughput_at_the_block() -> None:
    # a sane fit that is fast at half the block, where the whole block measured slow
    sizes = [512, 1024, 1536, 2048, 2048]
    term = D.device_terms(local_runs([0.55, 1.0, 1.45, 1.9, 2.3], sizes))[0]["disk"]
    assert term.method == "fit"
    bs, request = 2 * BYTES_PER_MIB, BYTES_PER_MIB
    assert term.request_ms(request) < term.block_ms(bs) / 2
    assert term.device_ms(bs, request) == pytest.approx(term.block_ms(bs) / 2)
    assert term.bytes_per_s(bs) == pytest.approx(bs / (2.1 / 1000))
    assert "would beat the device's local throughput" in term.sentence(bs, request)


@pytest.mark.parametrize("queue_depth", [1, 8])
def test_a_forecast_on_a_fast_network_never_beats_the_local_fio(project_root: Path, queue_depth: int) -> None:
    """lab-veth-2026 at 64 KiB: its fit predicts faster than fio measured; the forecast stays below fio."""
    ds = open_dataset(project_root / LAB)
    runs = storage.fio_runs(ds)
    bs = 64 * BYTES_PER_KIB
    local_mib_s = float(runs.loc[runs["bs_bytes"] == bs, "mib_per_s"].mean())
    fit = storage.fit_devices(runs)[0]["virtio-ssd"]
    assert bs / (fit.predict_ms(bs) / 1000) / BYTES_PER_MIB > local_mib_s  # what the old ceiling allowed
    found = P.dataset_inputs(P.read_sources(ds), bs)
    fast = model.Network(0.001, link_bps=100e9)
    b = model.write_latency(
        bs,
        model.IscsiParams(),
        fast,
        float(found["device_ms"].value),
        0.0,
        device_request_bytes=int(found["device_request_bytes"].value),
    )
    rate = float(found["device_mib_s"].value) * BYTES_PER_MIB
    forecast = model.throughput(b, fast, queue_depth, device_bytes_per_s=rate)
    assert forecast.mib_per_s <= local_mib_s * (1 + 1e-9)
    assert "fio's measured latency at 64 KiB" in found["device_ms"].source


def test_the_device_table_says_which_term_it_used(project_root: Path) -> None:
    ds = open_dataset(project_root / LAB)
    terms, _ = D.device_terms(storage.fio_runs(ds))
    table = r2t.device_inputs(terms, storage.iostat_requests(ds), 64 * BYTES_PER_KIB)
    row = table.iloc[0]
    assert row["device_term_method"] == "measured"
    assert row["device_term"].startswith("device term: fio's measured latency at 64 KiB")
    assert row["device_ms"] >= row["local_block_ms"] * row["request_kib"] / row["bs_kib"]


def test_the_engine_reads_a_whole_write_never_faster_than_fio_measured() -> None:
    """core/forecast's Today takes device_ms and device_bytes_per_s per size: these two methods."""
    sizes = [512, 1024, 2048, 2048]
    term = D.device_terms(local_runs([0.55, 1.0, 1.9, 2.3], sizes))[0]["disk"]
    bs = 2 * BYTES_PER_MIB
    assert term.write_ms(bs) == pytest.approx(2.1)  # the mean of the two 2 MiB runs, above the fit's line
    assert term.bytes_per_s(bs) * term.write_ms(bs) / 1000 == pytest.approx(bs)
