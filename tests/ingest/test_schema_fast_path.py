"""The fast path of ``schemas.validate`` accepts only what pandera accepts; errors stay pandera's."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

from iscsi_report.core.ingest import fio, ping, schemas
from iscsi_report.core.ingest.fio import HISTOGRAM_SCHEMA, JOBS_SCHEMA


def _job(**overrides: object) -> pd.DataFrame:
    row: dict[str, object] = {
        "job": "w",
        "rw": "write",
        "direction": "write",
        "bs_bytes": 65536.0,
        "iodepth": 1,
        "numjobs": None,
        "iops": 10.0,
        "bw_bytes_per_s": 655360.0,
        "io_bytes": 2**40,
        "runtime_s": 1.0,
        "clat_mean_ms": None,
        "lat_mean_ms": 1.5,
        "clat_p50_ms": np.nan,
        "clat_p99_ms": 2.0,
        "clat_p999_ms": 3.0,
        "usr_cpu_pct": 0.0,
        "sys_cpu_pct": 1.0,
        "error": 0,
    }
    row.update(overrides)
    return schemas.astype(JOBS_SCHEMA, pd.DataFrame([row], columns=list(JOBS_SCHEMA.columns)))


def _pandera_accepts(schema: pa.DataFrameSchema, df: pd.DataFrame) -> bool:
    try:
        schema.validate(df)
    except pa.errors.SchemaError:
        return False
    return True


BAD = {
    "iops below 0": {"iops": -1.0},
    "bs_bytes 0 (must be > 0)": {"bs_bytes": 0.0},
    "iodepth 0": {"iodepth": 0},
    "direction not a direction": {"direction": "sideways"},
    "direction missing": {"direction": None},
    "iops NaN (not nullable)": {"iops": np.nan},
    "runtime below 0": {"runtime_s": -0.5},
}


def test_a_good_frame_conforms_and_pandera_agrees() -> None:
    df = _job()
    assert schemas.conforms(JOBS_SCHEMA, df) and _pandera_accepts(JOBS_SCHEMA, df)
    assert schemas.validate(JOBS_SCHEMA, df) is df


@pytest.mark.parametrize("overrides", BAD.values(), ids=list(BAD))
def test_every_broken_rule_is_left_to_pandera_which_rejects_it(overrides: dict[str, object]) -> None:
    df = _job(**overrides)
    assert not schemas.conforms(JOBS_SCHEMA, df)
    assert not _pandera_accepts(JOBS_SCHEMA, df)
    with pytest.raises(pa.errors.SchemaError):
        schemas.validate(JOBS_SCHEMA, df)


def test_wrong_columns_or_dtype_do_not_conform() -> None:
    df = _job()
    assert not schemas.conforms(JOBS_SCHEMA, df[list(reversed(df.columns))])
    assert not schemas.conforms(JOBS_SCHEMA, df.astype({"iops": "float32"}))
    assert not schemas.conforms(JOBS_SCHEMA, df.drop(columns="error"))


def test_a_check_the_fast_path_does_not_know_is_left_to_pandera() -> None:
    schema = pa.DataFrameSchema({"x": pa.Column(float, pa.Check(lambda s: s < 10))})
    df = pd.DataFrame({"x": [1.0]})
    assert not schemas.conforms(schema, df)
    assert schemas.validate(schema, df).equals(df)


def test_histogram_frames_of_both_kinds() -> None:
    ok = schemas.astype(
        HISTOGRAM_SCHEMA, pd.DataFrame([{"job": "w", "direction": "read", "lat_ns": 5, "count": 2}])
    )
    assert schemas.conforms(HISTOGRAM_SCHEMA, ok)
    bad = ok.assign(count=-1)
    assert not schemas.conforms(HISTOGRAM_SCHEMA, bad) and not _pandera_accepts(HISTOGRAM_SCHEMA, bad)


def test_parse_error_still_names_the_file_and_pandera_s_reason(tmp_path: Path) -> None:
    doc = (
        '{"fio version": "fio-3.33", "jobs": [{"jobname": "w", "error": 0, "job options": {"rw": "write"},'
        ' "write": {"io_bytes": 1, "bw_bytes": 1, "iops": -1.0, "runtime": 1000}}]}'
    )
    path = tmp_path / "neg.json"
    path.write_text(doc)
    with pytest.raises(Exception) as info:
        fio.parse(path)
    message = str(info.value)
    assert "neg.json" in message and "fio values fail validation" in message and "iops" in message


def test_a_file_without_bins_gets_the_empty_frame_the_schema_makes(fixtures_dir: Path) -> None:
    # the empty bins frame is validated once and copied: it must equal a fresh validation, dtypes
    # included, and a caller changing one result must not reach the next file's
    fresh = schemas.validate(
        HISTOGRAM_SCHEMA,
        schemas.astype(HISTOGRAM_SCHEMA, pd.DataFrame([], columns=list(HISTOGRAM_SCHEMA.columns))),
    )
    path = fixtures_dir / "fio" / "fio-3.33_seqwrite_64k_psync.json"
    first = fio.parse(path).histogram
    pd.testing.assert_frame_equal(first, fresh, check_dtype=True, check_index_type=True)
    assert first.empty and first is not fio.parse(path).histogram
    first.loc[0] = ["w", "write", 1, 1]
    pd.testing.assert_frame_equal(fio.parse(path).histogram, fresh, check_dtype=True)


def _row(**overrides: object) -> dict[str, object]:
    """One jobs row as the parser hands it over (plain Python values, None for a missing figure)."""
    row = _job().astype(object).where(_job().notna(), None).iloc[0].to_dict()
    row.update(overrides)
    return row


def test_a_frame_built_at_its_dtypes_equals_the_cast_and_checked_one() -> None:
    rows = [_row(), _row(job="v", rw=None, iodepth=None, clat_p99_ms=None)]
    built = schemas.checked_frame(JOBS_SCHEMA, rows)
    cast = schemas.validate(
        JOBS_SCHEMA, schemas.astype(JOBS_SCHEMA, pd.DataFrame(rows, columns=list(JOBS_SCHEMA.columns)))
    )
    assert built is not None
    pd.testing.assert_frame_equal(built, cast, check_dtype=True, check_index_type=True, check_exact=True)


REFUSED_TO_BUILD = {
    **BAD,
    "a bool where a number goes": {"iops": True},
    "a number given as text": {"iops": "10"},
    "an integer beyond int64": {"io_bytes": 2**64},
    "a float where an integer goes": {"error": 0.0},
}


@pytest.mark.parametrize("overrides", REFUSED_TO_BUILD.values(), ids=list(REFUSED_TO_BUILD))
def test_a_value_that_might_not_pass_is_left_to_the_casting_path(overrides: dict[str, object]) -> None:
    assert schemas.checked_frame(JOBS_SCHEMA, [_row(), _row(**overrides)]) is None


def test_no_rows_or_a_schema_it_cannot_judge_builds_nothing() -> None:
    assert schemas.checked_frame(JOBS_SCHEMA, []) is None
    custom = pa.DataFrameSchema({"x": pa.Column(float, pa.Check(lambda s: s < 10))})
    assert schemas.checked_frame(custom, [{"x": 1.0}]) is None


@pytest.mark.parametrize(
    "name", ["iputils_loopback_D.txt", "iputils_netns_dup40.txt.xz", "busybox_netns_tbf2mbit.txt"]
)
def test_ping_samples_take_the_fast_path_and_pandera_agrees(
    fixtures_dir: Path, name: str, monkeypatch
) -> None:
    def slow_path(df: pd.DataFrame) -> pd.DataFrame:
        raise AssertionError("pandera's own pass ran on a frame the fast check accepts")

    result = ping.parse(fixtures_dir / "ping" / name)
    with monkeypatch.context() as patched:
        patched.setattr(schemas.PING_SAMPLES, "validate", slow_path)
        samples = result.samples
    pd.testing.assert_frame_equal(schemas.PING_SAMPLES.validate(samples), samples)


def test_ping_samples_with_a_negative_round_trip_are_refused_by_pandera(fixtures_dir: Path) -> None:
    result = ping.parse(fixtures_dir / "ping" / "iputils_loopback_D.txt")
    broken = dataclasses.replace(result, rtt_ms=-result.rtt_ms)
    with pytest.raises(pa.errors.SchemaError, match="rtt_ms"):
        _ = broken.samples
