"""Charts of the fit, validation and what-if chapters: residuals, leverage, coefficients, heatmaps."""

from __future__ import annotations

import altair as alt
import pandas as pd

from iscsi_report.presentation.charts import theme

WIDTH = 260
HEIGHT = 200
PANEL = 150  # heatmap panel side


def _config_label(runs: pd.DataFrame) -> pd.Series:
    return (
        runs["network"].astype(str)
        + " "
        + runs["device"].astype(str)
        + " R2T "
        + runs["max_outstanding_r2t"].astype(int).astype(str)
    )


def residuals(runs: pd.DataFrame) -> alt.Chart:
    """Residual (observed − fitted op ms) against fitted op ms, one colour per network/device/R2T."""
    data = runs.assign(config=_config_label(runs), bs_kib=runs["bs_bytes"] / 1024)
    points = (
        alt.Chart(data)
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("fitted_ms:Q", title="fitted op time (ms)"),
            y=alt.Y("resid_ms:Q", title="observed − fitted (ms)"),
            color=theme.color("network", "network", data["network"]),
            shape=theme.shape("device", data["device"]),
            tooltip=["run:N", "config:N", "bs_kib:Q", "op_ms:Q", "fitted_ms:Q", "resid_ms:Q"],
        )
    )
    zero = alt.Chart(pd.DataFrame({"y": [0.0]})).mark_rule(strokeDash=[4, 4]).encode(y="y:Q")
    return (zero + points).properties(width=2 * WIDTH, height=HEIGHT)


def leverage(runs: pd.DataFrame, threshold_cooks_d: float) -> alt.Chart:
    """Studentized residual against leverage (hat value), point size = Cook's distance."""
    data = runs.assign(config=_config_label(runs), influential=runs["cooks_d"] > threshold_cooks_d)
    points = (
        alt.Chart(data)
        .mark_circle(opacity=0.8)
        .encode(
            x=alt.X("hat:Q", title="leverage (hat value)", scale=alt.Scale(domain=[0, 1])),
            y=alt.Y("student_resid:Q", title="studentized residual"),
            size=alt.Size("cooks_d:Q", title="Cook's distance"),
            color=theme.color("network", "network", data["network"]),
            tooltip=["run:N", "config:N", "hat:Q", "cooks_d:Q", "student_resid:Q"],
        )
    )
    labels = (
        alt.Chart(data[data["influential"]])
        .mark_text(dx=6, align="left", fontSize=9)
        .encode(x="hat:Q", y="student_resid:Q", text="run:N")
    )
    return (points + labels).properties(width=2 * WIDTH, height=HEIGHT)


def coefficients(table: pd.DataFrame) -> alt.FacetChart:
    """Coefficient estimates with 95 % intervals per variant; fixed ones marked, 1 drawn dashed."""
    data = table[table["term"] != "intercept_ms"]
    y = alt.Y("variant:N", title=None)
    bars = (
        alt.Chart()
        .mark_rule()
        .encode(y=y, x=alt.X("ci_low:Q", title="coefficient (1 = model as written)"), x2="ci_high:Q")
    )
    points = (
        alt.Chart()
        .mark_point(filled=True, size=50)
        .encode(
            y=y,
            x="estimate:Q",
            shape=alt.Shape("fixed:N", title="fixed"),
            color=alt.Color("fixed:N", legend=None),
        )
    )
    one = alt.Chart().mark_rule(strokeDash=[4, 4], color="gray").encode(x=alt.datum(1.0))
    return (
        alt.layer(one, bars, points, data=data)
        .properties(width=WIDTH, height=110)
        .facet(facet=alt.Facet("term:N", title=None), columns=2)
    )


def validation(loo: pd.DataFrame) -> alt.Chart:
    """Leave-one-out error against the blog's error per validation configuration."""
    data = loo.melt(
        id_vars=["configuration"],
        value_vars=["error_pct", "blog_error_pct"],
        var_name="source",
        value_name="error",
    )
    data["source"] = data["source"].map({"error_pct": "fitted (leave-one-out)", "blog_error_pct": "blog"})
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y("configuration:N", title=None),
            x=alt.X("error:Q", title="(measured − estimated) / measured (%)"),
            color=alt.Color("source:N", title=None),
            yOffset="source:N",
        )
        .properties(width=2 * WIDTH, height=HEIGHT)
    )


def held_out_errors(nested: pd.DataFrame) -> alt.Chart:
    """Held-out error per validation configuration, one bar per method (identical folds)."""
    return (
        alt.Chart(nested[["configuration", "method", "error_pct"]])
        .mark_bar()
        .encode(
            y=alt.Y("configuration:N", title=None),
            x=alt.X("error_pct:Q", title="(measured − estimated) / measured (%)"),
            color=alt.Color("method:N", title="method"),
            yOffset="method:N",
            tooltip=["configuration:N", "method:N", alt.Tooltip("error_pct:Q", format=".2f")],
        )
        .properties(width=2 * WIDTH, height=2 * HEIGHT)
    )


HEAT_FIELDS = [
    "one_way_ms",
    "link_mbit_per_s",
    "device",
    "max_outstanding_r2t",
    "mib_per_s",
    "dominant_term",
    "one_way_lo",
    "one_way_hi",
    "link_lo",
    "link_hi",
]
POINT_FIELDS = ["run", "one_way_ms", "link_mbit_per_s", "device", "max_outstanding_r2t", "mib_per_s"]


def _heatmap(cells: pd.DataFrame, measured: pd.DataFrame, color: alt.Color) -> alt.FacetChart:
    """Cells as log-axis rectangles and measured runs as diamonds, faceted by device and R2T.

    Both layers share one data set (a ``kind`` column tells them apart), as faceting requires.
    """
    data = pd.concat(
        [cells[HEAT_FIELDS].assign(kind="cell"), measured[POINT_FIELDS].assign(kind="measured")],
        ignore_index=True,
    )
    x = alt.X("one_way_lo:Q", scale=alt.Scale(type="log", nice=False), title="one-way latency (ms, log)")
    y = alt.Y("link_lo:Q", scale=alt.Scale(type="log", nice=False), title="link (Mbit/s, log)")
    rect = (
        alt.Chart()
        .transform_filter(alt.datum.kind == "cell")
        .mark_rect()
        .encode(x=x, x2="one_way_hi:Q", y=y, y2="link_hi:Q", color=color)
    )
    points = (
        alt.Chart()
        .transform_filter(alt.datum.kind == "measured")
        .mark_point(shape="diamond", size=90, filled=True, color="black")
        .encode(x="one_way_ms:Q", y="link_mbit_per_s:Q")
    )
    return (
        alt.layer(rect, points, data=data)
        .properties(width=PANEL, height=PANEL)
        .facet(
            row=alt.Row("device:N", title="device"),
            column=alt.Column("max_outstanding_r2t:O", title="MaxOutstandingR2T"),
        )
    )


def throughput_heatmap(cells: pd.DataFrame, measured: pd.DataFrame) -> alt.FacetChart:
    """Projected MiB/s over one-way latency × link, faceted by device and R2T, measured runs overlaid."""
    return _heatmap(
        cells,
        measured,
        alt.Color("mib_per_s:Q", title="MiB/s", scale=alt.Scale(type="log", scheme="viridis")),
    )


def dominant_heatmap(cells: pd.DataFrame, measured: pd.DataFrame) -> alt.FacetChart:
    """Which term group is largest in each cell, same layout as :func:`throughput_heatmap`."""
    domain = ["one-way latency", "transmission", "device", "CPU"]
    return _heatmap(
        cells, measured, alt.Color("dominant_term:N", title="largest term", scale=alt.Scale(domain=domain))
    )


def upgrades(table: pd.DataFrame) -> alt.Chart:
    """Projected MiB/s with its interval per upgrade question."""
    base = alt.Chart(table).encode(y=alt.Y("label:N", sort=None, title=None))
    return (
        base.mark_rule().encode(
            x=alt.X("mib_per_s_lo:Q", title="projected MiB/s (95 % interval)"), x2="mib_per_s_hi:Q"
        )
        + base.mark_point(filled=True, size=60).encode(x="mib_per_s:Q")
    ).properties(width=2 * WIDTH, height=HEIGHT)
