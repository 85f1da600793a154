"""What-if grid: agreement with model.write_latency, monotonicity, dominant-term labels, cell edges."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from iscsi_report.analyses import blog, whatif
from iscsi_report.core import model
from iscsi_report.core.units import BYTES_PER_MIB, MS_PER_S

ONES = {"one_way_ms": 1.0, "transmit_ms": 1.0, "device_ms": 1.0, "cpu_ms": 1.0}
DEVICES = {
    "hdd": whatif.DeviceProfile("hdd", 0.0, 7.35, "test"),
    "ssd": whatif.DeviceProfile("ssd", 0.0, 2.78, "test"),
}
CPU = whatif.CpuProfile(0.0, 4.0)
OW = [0.01, 0.1, 1.0, 5.0]
LINK = whatif.mbit_to_bps([100, 1000, 10000])
BS = whatif.kib_to_bytes([64, 256, 2048])


@pytest.fixture(scope="module")
def cells() -> pd.DataFrame:
    return whatif.grid(OW, LINK, DEVICES, [1, 4, 16], BS, ONES, CPU, device_request_fraction=0.5)


def test_grid_size_and_columns(cells):
    assert len(cells) == len(OW) * len(LINK) * len(DEVICES) * 3 * len(BS)
    assert {"op_ms", "mib_per_s", "dominant_term"} <= set(cells.columns)


def test_cells_equal_write_latency_with_unit_coefficients(cells):
    row = cells[
        (cells.one_way_ms == 1.0)
        & (cells.link_mbit_per_s == 1000)
        & (cells.device == "hdd")
        & (cells.max_outstanding_r2t == 1)
        & (cells.bs_bytes == 2 * BYTES_PER_MIB)
    ].iloc[0]
    expected = model.write_latency(
        2 * BYTES_PER_MIB,
        model.IscsiParams(max_outstanding_r2t=1),
        model.Network(one_way_ms=1.0, link_bps=1e9),
        lambda req: 7.35 * req / BYTES_PER_MIB,
        8.0,
        device_request_fraction=0.5,
    ).total_ms
    assert row["op_ms"] == pytest.approx(expected)


def test_blog_wireless_serial_example_reproduced():
    cells = whatif.grid(
        [1.5],
        [model.link_bps_from_per_64k_ms(0.87)],
        {"hdd": whatif.DeviceProfile("hdd", 7.3, 0.0, "blog")},
        [1, 16],
        [2 * BYTES_PER_MIB],
        ONES,
        whatif.CpuProfile(8.0, 0.0),
        assumptions=blog.BLOG_ASSUMPTIONS,
    )
    assert cells.set_index("max_outstanding_r2t")["op_ms"].to_dict() == pytest.approx({1: 70.14, 16: 49.14})


@pytest.mark.parametrize("queue_depth", [1, 4, 32])
def test_hdd_over_10gbe_stays_under_its_local_throughput(queue_depth: int) -> None:
    """One 1 MiB request's time per 2 MiB write (the blog's shortcut) no longer lifts a cell over 136."""
    hdd = whatif.DeviceProfile("hdd", 0.0, MS_PER_S / 136.0, "136 MiB/s local")
    for assumptions in (model.DEFAULT_ASSUMPTIONS, blog.BLOG_ASSUMPTIONS):
        cells = whatif.grid(
            [0.01, 0.05, 0.1],
            whatif.mbit_to_bps([1000, 10000, 100000]),
            {"hdd": hdd},
            [1, 4, 16],
            [2 * BYTES_PER_MIB],
            ONES,
            whatif.CpuProfile(0.5, 0.0),
            assumptions=assumptions,
            queue_depth=queue_depth,
        )
        assert cells["mib_per_s"].max() <= 136.0 + 1e-9
        fast = cells[cells["link_mbit_per_s"] >= 10000]
        assert set(fast["binding"]) <= {"latency", "device"}
        if queue_depth > 1:
            assert (fast["binding"] == "device").all()


def test_throughput_falls_with_latency_and_rises_with_link_and_r2t(cells):
    keys = ["link_mbit_per_s", "device", "max_outstanding_r2t", "bs_bytes"]
    by_latency = cells.sort_values("one_way_ms").groupby(keys)["mib_per_s"]
    assert by_latency.apply(lambda s: bool(np.all(np.diff(s) <= 1e-12))).all()
    by_link = cells.sort_values("link_mbit_per_s").groupby(
        ["one_way_ms", "device", "max_outstanding_r2t", "bs_bytes"]
    )["mib_per_s"]
    assert by_link.apply(lambda s: bool(np.all(np.diff(s) >= -1e-12))).all()
    by_r2t = cells.sort_values("max_outstanding_r2t").groupby(
        ["one_way_ms", "link_mbit_per_s", "device", "bs_bytes"]
    )["mib_per_s"]
    assert by_r2t.apply(lambda s: bool(np.all(np.diff(s) >= 0))).all()
    ssd = cells[cells.device == "ssd"]["mib_per_s"].to_numpy()
    hdd = cells[cells.device == "hdd"]["mib_per_s"].to_numpy()
    assert np.all(ssd > hdd)


def test_dominant_term_labels(cells):
    slow_net = cells[
        (cells.one_way_ms == 5.0) & (cells.link_mbit_per_s == 10000) & (cells.bs_bytes == 64 * 1024)
    ]
    assert set(slow_net["dominant_term"]) == {"one-way latency"}
    slow_link = cells[(cells.one_way_ms == 0.01) & (cells.link_mbit_per_s == 100)]
    assert set(slow_link["dominant_term"]) == {"transmission"}
    frame = pd.DataFrame(
        {
            "one_way_term_ms": [1, 0, 0, 0],
            "transmit_term_ms": [0, 2, 0, 0],
            "device_term_ms": [0, 1, 3, 0],
            "cpu_term_ms": [0, 0, 1, 9],
        }
    )
    assert list(whatif.dominant_terms(frame)) == ["one-way latency", "transmission", "device", "CPU"]


def test_log_cell_edges_tile_the_axis():
    edges = whatif.log_cell_edges([10, 1, 100])
    assert list(edges["value"]) == [1, 10, 100]
    assert np.allclose(edges["hi"].to_numpy()[:-1], edges["lo"].to_numpy()[1:])
    assert np.allclose(np.sqrt(edges["lo"] * edges["hi"]), edges["value"])
    with pytest.raises(ValueError, match="positive"):
        whatif.log_cell_edges([0, 1])


def test_intercept_adds_to_every_cell():
    base = whatif.grid([1.0], [1e9], DEVICES, [1], [65536], ONES, CPU)
    shifted = whatif.grid([1.0], [1e9], DEVICES, [1], [65536], {**ONES, "intercept_ms": 2.0}, CPU)
    assert np.allclose(shifted["op_ms"] - base["op_ms"], 2.0)
