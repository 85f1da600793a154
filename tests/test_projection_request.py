"""analyses.projection_request: the projection as a typed request, with no argparse in sight."""

from __future__ import annotations

import dataclasses
import re

import pytest

from iscsi_report.analyses.projection_request import ProjectionRequest, answer, as_text
from iscsi_report.core.errors import ReportError

MIB = 2**20
# The blog's 2 MiB write: InitialR2T=No, lock-step pacing, no PDU headers (70.14 ms per write).
BLOG = ProjectionRequest(
    bs_bytes=(2 * MIB,),
    one_way_ms=(1.5,),
    per_64k_ms=(0.87,),
    device_ms=(7.3,),
    cpu_ms=(8.0,),
    initial_r2t=(False,),
    pdu_header_bytes=(0,),
    r2t_pacing="lockstep",
)


def test_one_configuration_names_inputs_as_the_options_do() -> None:
    doc = answer(BLOG)
    assert doc["op_ms"] == pytest.approx(70.14, abs=1e-9)
    assert doc["inputs"]["bs"] == {"value": 2 * MIB, "unit": "bytes", "source": "--bs"}
    assert doc["inputs"]["first_burst"]["source"] == "default (no --dataset)"
    assert "op time (ms)" in as_text(doc) and as_text(doc).startswith("inputs:")


def test_several_values_sweep_one_row_each() -> None:
    doc = answer(dataclasses.replace(BLOG, max_outstanding_r2t=(1, 16), queue_depth=(1, 8)))
    assert doc["swept"] == ["max_outstanding_r2t", "queue_depth"]
    assert [(r["max_outstanding_r2t"], r["queue_depth"]) for r in doc["rows"]] == [
        (1, 1),
        (1, 8),
        (16, 1),
        (16, 8),
    ]
    assert doc["rows"][0]["op_ms"] == pytest.approx(70.14, abs=1e-9)


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (ProjectionRequest(one_way_ms=(1.0,), link_mbps=(100.0,)), "required without --dataset: --bs"),
        (ProjectionRequest(bs_bytes=(MIB,), one_way_ms=(1.0,)), "--per-64k-ms --link-mbps is required"),
        (
            ProjectionRequest(device=("hdd",), network=("lan",)),
            "--network, --device choose(s) from a dataset",
        ),
    ],
)
def test_missing_inputs_are_named_by_their_flags(request_: ProjectionRequest, message: str) -> None:
    with pytest.raises(ReportError, match=re.escape(message)):
        answer(request_)
