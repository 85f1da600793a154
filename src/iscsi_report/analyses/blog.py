"""The blog's model inputs, worked examples and projection table, read from ``data/published/blog-2023.yaml``.

Every number here is the blog's printed value (Guerri 2023), read by id from the published
file; nothing is typed in code. Its model is run under :data:`BLOG_ASSUMPTIONS` (lock-step R2T
groups, no PDU headers, no per-round cost, one 1 MiB device request charged per 2 MiB write),
which reproduce its worked examples exactly; :func:`projection_table` can rerun the same rows
under any other :class:`~iscsi_report.core.model.Assumptions` to show what the physical model
changes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from iscsi_report.analyses import audit
from iscsi_report.core import model
from iscsi_report.core.errors import ReportError
from iscsi_report.core.model import IscsiParams, LatencyBreakdown, Network
from iscsi_report.core.paths import Project
from iscsi_report.core.published import PublishedNumber
from iscsi_report.core.units import BYTES_PER_MIB

BLOG_FILE = "blog-2023.yaml"
DEFAULT_PUBLISHED_DIR = Project(Path(__file__).resolve().parents[3]).published_dir  # this checkout's
BLOG_ASSUMPTIONS = model.LOCKSTEP_SHADOWING
BLOG_R2T_SETTINGS = (1, 16)
# (network, device) of the projection table's rows, in the blog's order within each R2T setting.
BLOG_SETUPS = (("wireless", "hdd"), ("wired", "hdd"), ("wired", "ssd"))
# Not printed by the blog: its model sends the whole 64 KiB first burst unsolicited and ignores
# MaxRecvDataSegmentLength, which under RFC 7143 needs InitialR2T=No with ImmediateData=Yes.
BLOG_INITIAL_R2T = False
BLOG_IMMEDIATE_DATA = True


def published_path(published: str | Path | None = None) -> Path:
    """The blog's YAML: ``published`` (a file or the ``data/published`` folder) or the repository's."""
    p = Path(published) if published is not None else DEFAULT_PUBLISHED_DIR
    return p / BLOG_FILE if p.is_dir() else p


def _numbers(published: str | Path | None) -> dict[str, PublishedNumber]:
    """The published numbers keyed by id."""
    return audit.load_published(published_path(published))


def _value(numbers: dict[str, PublishedNumber], key: str) -> float:
    """One printed value; ReportError naming the id when the file lacks it."""
    if key not in numbers:
        raise ReportError(f"{BLOG_FILE}: no number with id {key!r} (an input of the blog's model)")
    return numbers[key].value


@dataclass(frozen=True)
class BlogInputs:
    """The blog's model inputs as printed: block, session keys, networks, devices, CPU."""

    bs_bytes: int
    first_burst_bytes: int
    max_burst_bytes: int
    max_recv_data_segment_bytes: int
    networks: dict[str, Network]
    device_ms: dict[str, float]
    cpu_ms: float

    def params(self, max_outstanding_r2t: int) -> IscsiParams:
        """The blog's session keys with this MaxOutstandingR2T."""
        return IscsiParams(
            first_burst_bytes=self.first_burst_bytes,
            max_burst_bytes=self.max_burst_bytes,
            immediate_data=BLOG_IMMEDIATE_DATA,
            initial_r2t=BLOG_INITIAL_R2T,
            max_outstanding_r2t=max_outstanding_r2t,
            max_recv_data_segment_bytes=self.max_recv_data_segment_bytes,
        )


def inputs(published: str | Path | None = None) -> BlogInputs:
    """The printed inputs of the blog's model (worked examples and projection table)."""
    n = _numbers(published)
    key = "iscsi_parameters.lio_default"
    networks = {
        "wireless": Network(
            _value(n, "model.wireless.one_way_ms"), per_64k_ms=_value(n, "model.wireless.net_64k_ms")
        ),
        "wired": Network(
            _value(n, "projection.r2t1.wired_hdd.net_lat_ms"),
            per_64k_ms=_value(n, "projection.r2t1.wired_hdd.net_64k_ms"),
        ),
    }
    return BlogInputs(
        bs_bytes=round(_value(n, "model.block_mib") * BYTES_PER_MIB),
        first_burst_bytes=int(_value(n, f"{key}.FirstBurstLength")),
        max_burst_bytes=int(_value(n, f"{key}.MaxBurstLength")),
        max_recv_data_segment_bytes=int(_value(n, f"{key}.MaxRecvDataSegmentLength")),
        networks=networks,
        device_ms={
            "hdd": _value(n, "model.hdd.io_1m_ms"),
            "ssd": _value(n, "projection.r2t1.wired_ssd.io_lat_ms"),
        },
        cpu_ms=_value(n, "model.cpu_2m_ms"),
    )


def breakdown(
    blog: BlogInputs,
    max_outstanding_r2t: int,
    network: str,
    device: str,
    assumptions: model.Assumptions = BLOG_ASSUMPTIONS,
) -> LatencyBreakdown:
    """One 2 MiB write of the blog's model with its printed inputs."""
    return model.write_latency(
        blog.bs_bytes,
        blog.params(max_outstanding_r2t),
        blog.networks[network],
        blog.device_ms[device],
        blog.cpu_ms,
        assumptions=assumptions,
    )


@dataclass(frozen=True)
class WorkedExample:
    """One of the blog's two worked wireless HDD examples: what it printed inline."""

    max_outstanding_r2t: int
    op_ms: float
    iops: float
    mib_per_s: float
    measured_mib_per_s: float


def worked_examples(published: str | Path | None = None) -> list[WorkedExample]:
    """The serial (R2T=1) and all-at-once (R2T=16) worked examples as printed."""
    n = _numbers(published)
    out = []
    for m in BLOG_R2T_SETTINGS:
        k = f"model.r2t{m}.wireless_hdd"
        out.append(
            WorkedExample(
                m,
                _value(n, f"{k}.op_ms"),
                _value(n, f"{k}.iops"),
                _value(n, f"{k}.mib_per_s"),
                _value(n, f"{k}.actual_mib_per_s"),
            )
        )
    return out


@dataclass(frozen=True)
class ProjectionRow:
    """One printed row of the blog's projection table, with its inputs."""

    max_outstanding_r2t: int
    network: str
    device: str
    network_in: Network
    device_ms: float
    cpu_ms: float
    measured_mib_per_s: float
    published_op_ms: float
    published_iops: float
    published_mib_per_s: float
    published_error_pct: float
    published_error_decimals: int
    published_op_decimals: int
    published_rate_decimals: int


def projection_rows(published: str | Path | None = None) -> list[ProjectionRow]:
    """The six rows of the printed projection table, in its order."""
    n = _numbers(published)
    rows = []
    for m in BLOG_R2T_SETTINGS:
        for net, dev in BLOG_SETUPS:
            k = f"projection.r2t{m}.{net}_{dev}"
            rows.append(
                ProjectionRow(
                    m,
                    net,
                    dev,
                    Network(_value(n, f"{k}.net_lat_ms"), per_64k_ms=_value(n, f"{k}.net_64k_ms")),
                    _value(n, f"{k}.io_lat_ms"),
                    _value(n, f"{k}.cpu_lat_ms"),
                    _value(n, f"{k}.actual_mib_per_s"),
                    _value(n, f"{k}.op_ms"),
                    _value(n, f"{k}.iops"),
                    _value(n, f"{k}.est_mib_per_s"),
                    _value(n, f"{k}.error_pct"),
                    n[f"{k}.error_pct"].decimals,
                    n[f"{k}.op_ms"].decimals,
                    n[f"{k}.est_mib_per_s"].decimals,
                )
            )
    return rows


def row_breakdown(
    blog: BlogInputs, row: ProjectionRow, assumptions: model.Assumptions = BLOG_ASSUMPTIONS
) -> LatencyBreakdown:
    """A projection row's write with the row's own printed inputs."""
    return model.write_latency(
        blog.bs_bytes,
        blog.params(row.max_outstanding_r2t),
        row.network_in,
        row.device_ms,
        row.cpu_ms,
        assumptions=assumptions,
    )


def projection_table(
    published: str | Path | None = None, assumptions: model.Assumptions = BLOG_ASSUMPTIONS
) -> pd.DataFrame:
    """Recompute the blog's projection table from its printed inputs, beside what it printed."""
    blog = inputs(published)
    records = []
    for row in projection_rows(published):
        op_ms = row_breakdown(blog, row, assumptions).total_ms
        est = model.mib_per_s(blog.bs_bytes, op_ms)
        records.append(
            {
                "max_outstanding_r2t": row.max_outstanding_r2t,
                "network": row.network,
                "device": row.device.upper(),
                "device_ms": row.device_ms,
                "cpu_ms": row.cpu_ms,
                "one_way_ms": row.network_in.one_way_ms,
                "per_64k_ms": row.network_in.per_64k_ms,
                "op_ms": op_ms,
                "iops": model.iops(op_ms),
                "mib_per_s": est,
                "measured_mib_per_s": row.measured_mib_per_s,
                "error_pct": model.error_pct(row.measured_mib_per_s, est),
                "published_op_ms": row.published_op_ms,
                "published_iops": row.published_iops,
                "published_mib_per_s": row.published_mib_per_s,
                "published_error_pct": row.published_error_pct,
            }
        )
    return pd.DataFrame.from_records(records)


def prints_as(value: float, published: float, decimals: int) -> bool:
    """True if ``value`` rounds to the printed ``published`` at ``decimals`` places."""
    return abs(value - published) <= 0.5 * 10.0 ** (-decimals) * (1 + 1e-9)


def wired_r2t1_discrepancy(published: str | Path | None = None) -> pd.DataFrame:
    """Published vs formula op time of the wired R2T=1 rows, and the one-stale-latency test.

    The hypothesis: the blog left one one-way term at the wireless latency instead of the wired
    one. ``explained`` is True when the op time recomputed that way prints as published.
    """
    blog = inputs(published)
    wireless_ms = blog.networks["wireless"].one_way_ms
    records = []
    for row in projection_rows(published):
        if row.max_outstanding_r2t != 1 or row.network != "wired":
            continue
        formula = row_breakdown(blog, row)
        stale = replace(formula, status_one_way_ms=wireless_ms).total_ms
        est = model.mib_per_s(blog.bs_bytes, formula.total_ms)
        records.append(
            {
                "device": row.device.upper(),
                "published_op_ms": row.published_op_ms,
                "formula_op_ms": formula.total_ms,
                "gap_ms": row.published_op_ms - formula.total_ms,
                "wireless_minus_wired_one_way_ms": wireless_ms - row.network_in.one_way_ms,
                "op_ms_with_one_wireless_one_way": stale,
                "explained": prints_as(stale, row.published_op_ms, row.published_op_decimals),
                "formula_mib_per_s": est,
                "formula_error_pct": model.error_pct(row.measured_mib_per_s, est),
                "published_error_pct": row.published_error_pct,
            }
        )
    return pd.DataFrame.from_records(records)


def published_consistency(published: str | Path | None = None) -> pd.DataFrame:
    """Check each printed column of the projection table against the printed column before it."""
    blog = inputs(published)
    records = []
    for row in projection_rows(published):
        iops_from_op = model.iops(row.published_op_ms)
        mib_from_op = model.mib_per_s(blog.bs_bytes, row.published_op_ms)
        err_from_op = model.error_pct(row.measured_mib_per_s, mib_from_op)
        records.append(
            {
                "max_outstanding_r2t": row.max_outstanding_r2t,
                "network": row.network,
                "device": row.device.upper(),
                "published_op_ms": row.published_op_ms,
                "published_iops": row.published_iops,
                "iops_from_published_op_ms": iops_from_op,
                "iops_ok": prints_as(iops_from_op, row.published_iops, row.published_rate_decimals),
                "published_mib_per_s": row.published_mib_per_s,
                "mib_per_s_from_published_op_ms": mib_from_op,
                "mib_per_s_ok": prints_as(mib_from_op, row.published_mib_per_s, row.published_rate_decimals),
                "published_error_pct": row.published_error_pct,
                "error_pct_from_published_op_ms": err_from_op,
                "error_ok": prints_as(err_from_op, row.published_error_pct, row.published_error_decimals),
            }
        )
    return pd.DataFrame.from_records(records)


def window_sweep(
    published: str | Path | None = None,
    windows: tuple[int, ...] = (1, 2, 4, 8, 16),
    pacings: tuple[model.Pacing, ...] = ("lockstep", "sliding", "serial"),
) -> pd.DataFrame:
    """The wireless HDD worked example at each MaxOutstandingR2T under each R2T pacing.

    Only the pacing changes between rows (blog constants, no headers, no per-round cost), so the
    table isolates what lock-step groups cost against a sliding window.
    """
    blog = inputs(published)
    rows = []
    for pacing in pacings:
        a = replace(BLOG_ASSUMPTIONS, r2t_pacing=pacing)
        for w in windows:
            b = breakdown(blog, w, "wireless", "hdd", a)
            rows.append(
                {
                    "r2t_pacing": pacing,
                    "max_outstanding_r2t": w,
                    "effective_r2t_window": b.effective_r2t_window,
                    "exposed_rounds": b.exposed_rounds,
                    "op_ms": b.total_ms,
                    "mib_per_s": model.mib_per_s(b.bs_bytes, b.total_ms),
                }
            )
    return pd.DataFrame(rows)
