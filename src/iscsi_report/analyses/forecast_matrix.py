"""The forecast protocol on the real lab: calibrate on one configuration, forecast every other.

Each settings group A of a sweep in turn plays "today's system": one network point, parameter set
and R2T window, written at queue depth 1 with fio at the block sizes the sweep used, the way a
user measures what they have. Its ping and iperf3 and its measured mean write latencies are all
the engine (:mod:`iscsi_report.core.forecast`) is given. Every configuration B of the sweep that
differs from today in one or more of one-way delay, link rate, R2T window, parameter set
(immediate data and segment size), block size, queue depth, direction or device is forecast from
today alone (a target on another device is given that device's local fio, as a user knows a disk
before it is installed): B's network enters only as the nominal delay and rate a user would
type, and when B shares today's settings (another block size) B's own runs are left out of
today's.

Scored per target B on the mean per-operation latency (fio's ``lat`` mean, replicates pooled),
beside the two baselines the rule names: the blog's formula at the same network, and the same
formula with one scale factor calibrated on A. A group's error is the median over its targets of
each target's median absolute error across its calibrations; "better" is claimed only when the
paired bootstrap interval (over targets) of the difference excludes zero.

Runs made while dumpcap ran (``captured``) are left out, as the lab's README says.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.analyses import lab
from iscsi_report.core import forecast, model
from iscsi_report.core.dataset import RawFile
from iscsi_report.core.errors import IngestError
from iscsi_report.core.forecast import Source, Value
from iscsi_report.core.ingest import textio
from iscsi_report.core.measurements import Measurements
from iscsi_report.core.units import BITS_PER_MBIT, BYTES_PER_MIB, MS_PER_S

ENGINE = "forecast engine"
BLOG = "blog formula"
BLOG_SCALED = "blog formula, one scale factor from today"
METHODS = (ENGINE, BLOG, BLOG_SCALED)
# The dimensions a target may differ in, as the rule names them, and the columns that define each.
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "delay": ("one_way_delay_ms",),
    "link rate": ("link_mbps",),
    "R2T window": ("r2t_window",),
    "immediate data and segment": ("iscsi_parameters",),
    "block size": ("bs_bytes",),
    "queue depth": ("iodepth",),
    "direction": ("rw",),
    "device": ("device",),
}
# The parameter set fixes these two; they are kept as columns for the negotiated keys' checks.
KEY_COLUMNS = [c for cols in DIMENSIONS.values() for c in cols] + [
    "immediate_data_bytes",
    "max_recv_data_segment_bytes",
]
SEVERAL = "two or more at once"
ENGINE_VERSION = forecast.ENGINE_VERSION  # the engine every matrix runs unless asked for another
MEDIAN_SE_FACTOR = 1.2533  # the median's standard error is sqrt(pi / 2) x the mean's (normal data)
N_BOOT = 2000
CI_LEVEL = 0.95
LAB_PACING: model.Pacing = lab.PACING
RAM_SOURCE = Source("default", "the lab's target stores in memory: no device time measured")
PACING_SOURCE = Source(
    "default",
    "sliding R2T pacing: the lab's patched tgt issues a new R2T as each burst completes, up to its window",
)


@dataclass(frozen=True)
class Matrix:
    """Every (today, target) pair of a sweep with each method's forecast, and its configurations."""

    sweep: str
    configurations: pd.DataFrame  # one row per configuration: keys, measured mean, se, runs, writes
    pairs: pd.DataFrame  # one row per (today, target, method): forecast_ms, error_pct, group


def mean_per_configuration(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per configuration (``keys``): fio's mean latency over replicates, its se, runs and writes."""
    g = runs.groupby(keys, sort=True)
    out = g.agg(
        measured_ms=("lat_mean_ms", "mean"),
        sd_ms=("lat_mean_ms", "std"),
        runs=("lat_mean_ms", "size"),
        writes=("n_ios", "sum"),
    ).reset_index()
    out["se_ms"] = (out["sd_ms"] / np.sqrt(out["runs"])).fillna(0.0)
    return out


def configurations(data: lab.LabData) -> pd.DataFrame:
    """One row per configuration (captured runs left out): mean latency, its se, runs and writes."""
    out = mean_per_configuration(data.runs[~data.runs["captured"].astype(bool)], KEY_COLUMNS)
    net = _network_points(data)
    out = out.merge(net, on=lab.NETWORK_KEYS, how="left", validate="many_to_one")
    out["key"] = [_key(data, r) for _, r in out.iterrows()]
    return out


def ping_point(ds: Measurements, f: RawFile) -> dict[str, Any]:
    """One ping file as a network point: nominal delay and rate, measured one-way ms (median / 2), se."""
    rtt = ds.ping(f).rtt_ms
    rtt = rtt[np.isfinite(rtt)]
    se = MEDIAN_SE_FACTOR * float(np.std(rtt, ddof=1)) / math.sqrt(len(rtt)) / 2 if len(rtt) > 1 else 0.0
    return {
        "one_way_delay_ms": float(f.labels["one_way_delay_ms"]),
        "link_mbps": float(f.labels.get("link_mbps", 0.0)),
        "ping_one_way_ms": float(np.median(rtt)) / 2,
        "ping_one_way_se_ms": se,
        "ping_file": f.rel,
    }


def _network_points(data: lab.LabData) -> pd.DataFrame:
    """Per network point: measured one-way ms (ping median / 2) with its se, and iperf3's rate."""
    ping = pd.DataFrame([ping_point(data.dataset, f) for f in data.dataset.select("ping")])
    rates = data.networks[[*lab.NETWORK_KEYS, "iperf3_bps", "iperf3_file"]]
    return ping.merge(rates, on=lab.NETWORK_KEYS, how="inner", validate="one_to_one")


def configuration_of(ds: Measurements, row: pd.Series) -> forecast.Configuration:
    """A configuration as a user would state it: nominal delay and rate, negotiated keys, window, device.

    The device is named only when the lab measured it locally (:func:`lab.devices`); the RAM-backed
    LUN of the earlier sweeps is today's device of every configuration that has it.
    """
    params = lab.iscsi_params(ds, row)
    return forecast.Configuration(
        direction=str(row["rw"]),  # type: ignore[arg-type]
        bs_bytes=int(row["bs_bytes"]),
        queue_depth=int(row["iodepth"]),
        params=params,
        one_way_ms=float(row["one_way_delay_ms"]),
        link_bps=float(row["link_mbps"]) * BITS_PER_MBIT,
        target_r2t_window=int(row["r2t_window"]),
        device=lab.devices(ds).get(str(row.get("device", lab.RAM_DEVICE))),
    )


def _key(data: lab.LabData, row: pd.Series) -> str:
    return configuration_of(data.dataset, row).key()


SETTINGS_COLUMNS = [c for c in KEY_COLUMNS if c != "bs_bytes"]


ROUND_HOST_VERSION = 3  # the first engine version whose today carries a host time per R2T round


def captured_first_r2t_ms(ds: Measurements) -> dict[str, np.ndarray]:
    """Per configuration key: each captured write's time from its command to its first R2T (ms)."""
    out: dict[str, list[float]] = {}
    for f in ds.select("tshark"):
        try:
            key = configuration_of(ds, pd.Series(f.labels)).key()
        except KeyError:
            continue  # a capture without a configuration's labels (a diagnosis's): no one's today
        first = ds.tshark_writes(f)["first_r2t_s"].dropna().to_numpy(float) * MS_PER_S
        out.setdefault(key, []).extend(first.tolist())
    return {key: np.array(values) for key, values in out.items()}


def round_host_time(
    t: forecast.Today, first_r2t_ms: Mapping[str, np.ndarray], keys: Iterable[str]
) -> Value | None:
    """Today's host time per R2T round from today's own captured writes (engine version 3); None: none.

    Why: a round costs the hosts a turnaround (the target builds and sends an R2T, the initiator
    answers) that fewer rounds save; carried inside the per-byte residual it would be charged at a
    wider window as at today's. Each captured write of ``keys`` (today's configurations, never the
    target's) gives its command-to-first-R2T time less ping's round trip and the command PDU's
    immediate data on the wire at iperf3's rate; the median over them, with its standard error.
    """
    samples = [first_r2t_ms[k] for k in keys if k in first_r2t_ms]
    excess = np.concatenate(samples) if samples else np.zeros(0)
    if len(excess) == 0:
        return None
    c = t.configuration
    net = forecast.network_for(t, c)  # today's network as measured (ping's one-way time, iperf3's rate)
    command_bytes = model.immediate_bytes(c.bs_bytes, c.params) + t.pdu_header_bytes
    excess = excess - 2.0 * net.one_way_ms - net.transmit_ms(command_bytes)
    se = MEDIAN_SE_FACTOR * float(np.std(excess, ddof=1)) / math.sqrt(len(excess)) if len(excess) > 1 else 0.0
    what = (
        f"median over {len(excess)} captured writes of today's settings: command to first R2T, less "
        "ping's round trip and the command's immediate data on the wire"
    )
    return Value(max(float(np.median(excess)), 0.0), Source("measured", what), se)


def today(
    ds: Measurements,
    rows: pd.DataFrame,
    model_error: Value | None = None,
    leave_out: str | None = None,
    engine_version: int = forecast.ENGINE_VERSION,
    first_r2t_ms: Mapping[str, np.ndarray] | None = None,
) -> forecast.Today:
    """One settings group (``rows``: its configurations at several block sizes) as today's system.

    ``leave_out`` is a target's key: its runs (and its captures) are not today's when it shares
    today's settings; ``engine_version`` picks one of :data:`iscsi_report.core.forecast.ENGINE_VERSIONS`;
    from version 3, ``first_r2t_ms`` (:func:`captured_first_r2t_ms`) gives today's host time per round.
    """
    keys = rows["key"].tolist()  # plain columns: a pandas row per run costs more than the forecast
    kept = [i for i, key in enumerate(keys) if key != leave_out]
    first = rows.iloc[kept[0]]
    bs_bytes, measured_ms, se_ms, runs = (
        rows[c].tolist() for c in ("bs_bytes", "measured_ms", "se_ms", "runs")
    )
    measured = tuple(
        forecast.Measured(
            int(bs_bytes[i]),
            Value(
                float(measured_ms[i]),
                Source("measured", f"fio mean latency over {int(runs[i])} runs", str(keys[i])),
                float(se_ms[i]),
            ),
        )
        for i in kept
    )
    t = forecast.Today(
        configuration=configuration_of(ds, first),
        one_way_ms=Value(
            float(first["ping_one_way_ms"]),
            Source("measured", f"ping median RTT / 2, {first['ping_file']}"),
            float(first["ping_one_way_se_ms"]),
        ),
        link_bps=Value(
            float(first["iperf3_bps"]), Source("measured", f"iperf3 received rate, {first['iperf3_file']}")
        ),
        pacing=LAB_PACING,
        pacing_source=PACING_SOURCE,
        device_ms=lambda _request_bytes: 0.0,  # a configuration with a measured device names it
        device_source=RAM_SOURCE,
        device_bytes_per_s=None,
        cpu_ms=Value(0.0, Source("default", "no CPU time per operation measured in the lab")),
        measured=measured,
        model_error_pct=model_error,
        engine_version=engine_version,
    )
    if engine_version < ROUND_HOST_VERSION or first_r2t_ms is None:
        return t
    return replace(t, per_round_ms=round_host_time(t, first_r2t_ms, [keys[i] for i in kept]))


def device_table(data: lab.LabData) -> pd.DataFrame:
    """Per device the sweep measured locally and per block size it writes: the device term and ceiling."""
    sizes = sorted(int(b) for b in data.runs.loc[data.runs["rw"] == "write", "bs_bytes"].unique())
    rows = [
        {
            "device": name,
            "bs_bytes": bs,
            "device_ms": dev.ms_at(bs),
            "ceiling_mib_per_s": dev.bytes_per_s_at(bs) / BYTES_PER_MIB if dev.bytes_per_s_at else math.nan,
            "source": dev.source.what,
        }
        for name, dev in sorted(lab.devices(data.dataset).items())
        for bs in sizes
    ]
    return pd.DataFrame(rows, columns=["device", "bs_bytes", "device_ms", "ceiling_mib_per_s", "source"])


def device_added(m: Matrix, data: lab.LabData) -> pd.DataFrame:
    """Per measured device and block size: its local fio time per write beside what it added to iSCSI.

    "Added" is the median, over the sweep's network points and windows, of the device's measured
    mean write latency at queue depth 1 less the RAM LUN's at the same settings: what the engine
    charges in place of today's device should match it.
    """
    c = m.configurations
    writes = c[(c["rw"] == "write") & (c["iodepth"] == 1)]
    wide = writes.pivot_table(
        index=["bs_bytes", "r2t_window", "one_way_delay_ms", "link_mbps"],
        columns="device",
        values="measured_ms",
    )
    added = [
        {"device": name, "bs_bytes": int(bs), "added_ms": float(diff.xs(bs, level="bs_bytes").median())}
        for name in sorted(lab.devices(data.dataset))
        for diff in [wide[name] - wide[lab.RAM_DEVICE]]
        for bs in sorted(wide.index.get_level_values("bs_bytes").unique())
    ]
    local = device_table(data).rename(columns={"device_ms": "local_ms"}).drop(columns="source")
    out = local.merge(pd.DataFrame(added), on=["device", "bs_bytes"], how="inner", validate="one_to_one")
    return out.assign(local_less_added_ms=out["local_ms"] - out["added_ms"])


def device_moves(m: Matrix) -> pd.DataFrame:
    """The engine's signed errors on the group "device", per (today's device, the target's device).

    Misses shown beside hits: the median, the worst under- and over-forecast and the pairs counted.
    """
    device_of = dict(zip(m.configurations["key"], m.configurations["device"], strict=True))
    today_device = {settings_name(k): d for k, d in device_of.items()}
    e = m.pairs[(m.pairs["method"] == ENGINE) & (m.pairs["group"] == "device")]
    e = e.assign(today_device=e["today"].map(today_device), target_device=e["target"].map(device_of))
    g = e.groupby(["today_device", "target_device"], sort=True)["error_pct"]
    return g.agg(pairs="size", median_pct="median", lowest_pct="min", highest_pct="max").reset_index()


def blog_ms(t: forecast.Today, c: forecast.Configuration) -> float:
    """The blog's formula for ``c`` on the network the engine derives for it from today."""
    net = forecast.network_for(t, c)
    device_ms = forecast.device_of(t, c).ms_at(c.bs_bytes)  # the blog's formula adds the local device time
    b = model.operation_latency(
        c.direction, c.bs_bytes, c.params, net, device_ms, 0.0, assumptions=model.LOCKSTEP_SHADOWING
    )
    return b.total_ms


def scale_factor(t: forecast.Today) -> float:
    """One factor s with s x blog formula closest to today's runs (least squares through zero)."""
    x = np.array([blog_ms(t, replace(t.configuration, bs_bytes=m.bs_bytes)) for m in t.measured])
    y = np.array([m.op_ms.value for m in t.measured])
    return float(x @ y / (x @ x))


def group_of(settings: Mapping[Hashable, Any], sizes: set[int], b: Mapping[Hashable, Any]) -> str:
    """Which of the rule's dimensions differ between today's settings (at ``sizes``) and target ``b``."""
    differ = [
        name for name, cols in DIMENSIONS.items() if any(settings[c] != b[c] for c in cols if c != "bs_bytes")
    ]
    if int(b["bs_bytes"]) not in sizes:
        differ.append("block size")
    return differ[0] if len(differ) == 1 else SEVERAL


def settings_name(key: str) -> str:
    """A configuration key without its block size: the name of today's settings."""
    return "|".join(part for part in key.split("|") if not part.startswith("bs="))


def _todays(confs: pd.DataFrame, max_today: int | None) -> list[pd.DataFrame]:
    """Settings groups a user could call today's system: writes at queue depth 1, two sizes or more."""
    calib = confs[(confs["rw"] == "write") & (confs["iodepth"] == 1)]
    groups = [g for _, g in calib.groupby(SETTINGS_COLUMNS, sort=True) if g["bs_bytes"].nunique() >= 2]
    if max_today is not None and len(groups) > max_today:
        groups = [groups[i] for i in np.linspace(0, len(groups) - 1, max_today).round().astype(int)]
    return groups


def run(
    data: lab.LabData,
    sweep: str,
    max_today: int | None = None,
    model_error: Value | None = None,
    engine_version: int = forecast.ENGINE_VERSION,
) -> Matrix:
    """Every (today, target) pair of one sweep, each method's forecast and its error (that engine)."""
    confs = configurations(data)
    # plain rows, as each is read once per today's settings
    targets = [(r.to_dict(), configuration_of(data.dataset, r)) for _, r in confs.iterrows()]
    first = captured_first_r2t_ms(data.dataset) if engine_version >= ROUND_HOST_VERSION else None
    rows: list[dict[str, Any]] = []
    for group in _todays(confs, max_today):
        settings = group.iloc[0].to_dict()
        name = settings_name(str(settings["key"]))
        full = today(data.dataset, group, model_error, engine_version=engine_version, first_r2t_ms=first)
        full_scale = scale_factor(full)
        sizes = set(group["bs_bytes"].astype(int))
        keys = set(group["key"])
        for b, c in targets:
            inside = str(b["key"]) in keys
            t = (
                today(data.dataset, group, model_error, str(b["key"]), engine_version, first)
                if inside
                else full
            )
            if not t.measured:
                continue
            f = forecast.forecast(t, c)
            blog_b = blog_ms(t, c)
            scale = scale_factor(t) if inside else full_scale
            seen = sizes - {int(b["bs_bytes"])} if inside else sizes
            base = {
                "today": name,
                "target": b["key"],
                "group": group_of(settings, seen, b),
                "measured_ms": b["measured_ms"],
            }
            for method, value in ((ENGINE, f.op_ms), (BLOG, blog_b), (BLOG_SCALED, blog_b * scale)):
                rows.append({**base, "method": method, "forecast_ms": value})
            rows[-3].update(ci_low_ms=f.ci_low_ms, ci_high_ms=f.ci_high_ms, binding=f.binding)
    pairs = pd.DataFrame(rows)
    pairs["error_pct"] = 100 * (pairs["forecast_ms"] - pairs["measured_ms"]) / pairs["measured_ms"]
    pairs["abs_error_pct"] = pairs["error_pct"].abs()
    return Matrix(sweep, confs, pairs)


def per_target(pairs: pd.DataFrame) -> pd.DataFrame:
    """Each target's median absolute error across its calibrations, per group and method (wide)."""
    med = pairs.groupby(["group", "target", "method"])["abs_error_pct"].median()
    return med.unstack("method")


def boot_median_ci(diff: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap interval of the median of ``diff`` (resampling targets)."""
    if len(diff) < 2:
        return (math.nan, math.nan)
    idx = rng.integers(0, len(diff), size=(N_BOOT, len(diff)))
    meds = np.median(diff[idx], axis=1)
    lo, hi = np.quantile(meds, [(1 - CI_LEVEL) / 2, (1 + CI_LEVEL) / 2])
    return float(lo), float(hi)


def summary(m: Matrix, seed: int = 0) -> pd.DataFrame:
    """Per group (and overall): targets, each method's median error, and the engine's paired differences."""
    wide = per_target(m.pairs)
    overall = m.pairs.groupby(["target", "method"])["abs_error_pct"].median().unstack("method")
    rng = np.random.default_rng(seed)
    rows = []
    frames = [(g, wide.xs(g, level="group")) for g in sorted(wide.index.get_level_values("group").unique())]
    for group, w in [("every target", overall), *frames]:
        row: dict[str, Any] = {"sweep": m.sweep, "group": group, "targets": len(w)}
        for method in METHODS:
            row[method] = float(w[method].median())
        for base in (BLOG, BLOG_SCALED):
            diff = (w[ENGINE] - w[base]).to_numpy(float)
            lo, hi = boot_median_ci(diff, rng)
            name = "blog" if base == BLOG else "scaled"
            row[f"diff_vs_{name}"] = float(np.median(diff))
            row[f"diff_vs_{name}_low"], row[f"diff_vs_{name}_high"] = lo, hi
            row[f"better_than_{name}"] = bool(hi < 0)
        rows.append(row)
    return pd.DataFrame(rows)


def model_error(m: Matrix, quantile: float = CI_LEVEL) -> Value:
    """The engine's ``quantile`` absolute error (per cent) over a scored sweep: its own error, declared."""
    e = m.pairs.loc[m.pairs["method"] == ENGINE, "abs_error_pct"]
    q = float(np.quantile(e, quantile))
    what = f"{quantile:.0%} quantile of the engine's absolute error over {len(e)} pairs of {m.sweep}"
    return Value(q, Source("measured", what))


def coverage_words(pct: float, level: float = CI_LEVEL) -> str:
    """Whether intervals meant to hold ``level`` of the measurements are too wide, too narrow or right."""
    if math.isnan(pct):
        return "no forecast to judge"
    if pct > 100 * level + 2.5:
        return "the intervals are wider than they need to be (cautious, not overconfident)"
    if pct < 100 * level - 2.5:
        return "the intervals are too narrow: the engine is overconfident there"
    return "about as often as a 95 % interval should"


def coverage(m: Matrix) -> float:
    """Share of the engine's pairs whose 95 % interval holds the measured mean (per cent)."""
    e = m.pairs[m.pairs["method"] == ENGINE]
    inside = (e["ci_low_ms"] <= e["measured_ms"]) & (e["measured_ms"] <= e["ci_high_ms"])
    return float(100 * inside.mean())


@dataclass(frozen=True)
class Verdict:
    """The forecast protocol over the lab: the training sweep's matrix, then each judged sweep's."""

    training: str
    model_error: Value
    matrices: dict[str, Matrix]  # by sweep, the training sweep first
    summaries: dict[str, pd.DataFrame]  # by sweep, :func:`summary`
    coverage_pct: dict[str, float]  # by judged sweep: share of intervals holding the measurement


def verdict(sweeps: dict[str, lab.LabData], training: str) -> Verdict:
    """Run the protocol: the engine's own error declared on ``training``, then every other sweep judged.

    The engine fits nothing on any sweep; ``training`` only sets the width of its intervals (the
    95 % quantile of its absolute error there), whose coverage the judged sweeps then measure.
    """
    first = run(sweeps[training], training)
    error = model_error(first)
    matrices = {training: first}
    matrices.update({n: run(d, n, model_error=error) for n, d in sweeps.items() if n != training})
    return Verdict(
        training=training,
        model_error=error,
        matrices=matrices,
        summaries={n: summary(m) for n, m in matrices.items()},
        coverage_pct={n: coverage(m) for n, m in matrices.items() if n != training},
    )


def headline(v: Verdict, sweep: str) -> dict[str, Any]:
    """The numbers a page opens with for one judged sweep: each method's error and the paired test."""
    row = v.summaries[sweep].iloc[0]
    groups = v.summaries[sweep].iloc[1:]
    return {
        "targets": int(row["targets"]),
        "pairs": len(v.matrices[sweep].pairs) // len(METHODS),
        "engine_pct": float(row[ENGINE]),
        "blog_pct": float(row[BLOG]),
        "scaled_pct": float(row[BLOG_SCALED]),
        "diff_scaled": float(row["diff_vs_scaled"]),
        "diff_scaled_low": float(row["diff_vs_scaled_low"]),
        "diff_scaled_high": float(row["diff_vs_scaled_high"]),
        "better_than_scaled": bool(row["better_than_scaled"]),
        "better_than_blog": bool(row["better_than_blog"]),
        "groups_not_better": [str(g) for g in groups.loc[~groups["better_than_scaled"], "group"]],
        "coverage_pct": v.coverage_pct.get(sweep, math.nan),
    }


def score_frozen(frozen: pd.DataFrame, data: lab.LabData, sweep: str) -> Matrix:
    """Forecasts frozen before ``sweep`` ran (one today each), scored against its measured means.

    ``frozen`` has one row per target (its key, group and each method's forecast in ms, see
    :func:`iscsi_report.analyses.dataset_forecast.frozen_forecast`). A target the sweep did not
    measure, or a configuration it measured that was not forecast, is an error: nothing is
    dropped silently.
    """
    confs = configurations(data).set_index("key")
    missing = sorted(set(frozen["target"]) - set(confs.index))
    extra = sorted(set(confs.index) - set(frozen["target"]))
    if missing or extra:
        raise ValueError(
            f"frozen forecasts and {sweep} differ: not measured {missing[:3]}, not forecast {extra[:3]}"
        )
    rows = []
    for _, r in frozen.iterrows():
        measured = float(confs.loc[r["target"], "measured_ms"])
        base = {"today": r["today"], "target": r["target"], "group": r["group"], "measured_ms": measured}
        for method in METHODS:
            rows.append({**base, "method": method, "forecast_ms": float(r[method])})
        rows[-3].update(
            ci_low_ms=float(r["ci_low_ms"]), ci_high_ms=float(r["ci_high_ms"]), binding=r["binding"]
        )
    pairs = pd.DataFrame(rows)
    pairs["error_pct"] = 100 * (pairs["forecast_ms"] - pairs["measured_ms"]) / pairs["measured_ms"]
    pairs["abs_error_pct"] = pairs["error_pct"].abs()
    return Matrix(sweep, confs.reset_index(), pairs)


FROZEN_FILE = "forecasts.csv"
PREREGISTRATION = "README.md"


def load_frozen(folder: Path) -> pd.DataFrame:
    """The frozen forecasts of a pre-registration, checked against the sha256 its README states.

    A forecast file changed after the README was committed is refused (IngestError naming both).
    """
    readme = textio.read_text(folder / PREREGISTRATION)
    stated = re.search(r"sha256\s*`([0-9a-f]{64})`", readme)
    if stated is None:
        raise IngestError(
            folder / PREREGISTRATION, "no sha256 of the frozen forecasts stated (sha256 `<hex>`)"
        )
    raw, digest = textio.read_checked(folder / FROZEN_FILE)
    if digest != stated.group(1):
        raise IngestError(
            folder / FROZEN_FILE,
            f"sha256 {digest} is not the {stated.group(1)} its pre-registration ({PREREGISTRATION}) states",
        )
    return pd.read_csv(io.BytesIO(raw))


@dataclass(frozen=True)
class BlindTest:
    """A pre-registered blind sweep's two tests: the matrix inside it, and the frozen forecasts."""

    within: Matrix
    within_summary: pd.DataFrame
    frozen: Matrix
    frozen_summary: pd.DataFrame


def blind_test(
    data: lab.LabData, sweep: str, preregistered: Path, engine_version: int = ENGINE_VERSION
) -> BlindTest:
    """Score a blind sweep: the forecast matrix inside it and its frozen forecasts (sha256 checked)."""
    forecasts = load_frozen(preregistered / sweep)  # refused first, before any work, if changed
    within = run(data, sweep, engine_version=engine_version)
    frozen = score_frozen(forecasts, data, sweep)
    return BlindTest(within, summary(within), frozen, summary(frozen))


def signed_by(m: Matrix, group: str, columns: list[str]) -> pd.DataFrame:
    """Median signed error (per cent) of each method in one group, by the target's settings.

    A post hoc reading of where a group's misses lie (which way, at which settings); not a test.
    """
    confs = m.configurations[["key", *columns]]
    pairs = m.pairs[m.pairs["group"] == group].merge(
        confs, left_on="target", right_on="key", validate="many_to_one"
    )
    out = pairs.pivot_table(index=columns, columns="method", values="error_pct", aggfunc="median")
    return out[list(METHODS)].reset_index()


def measured_means(m: Matrix, level: float = CI_LEVEL) -> pd.DataFrame:
    """Each configuration's measured mean with its runs, I/Os per run and t interval (replicates as samples).

    Why: a forecast can be judged no more finely than the mean it is compared with; the interval
    uses Student's t with runs - 1 degrees of freedom (3 replicates: about 4.3 standard errors).
    """
    from scipy import stats  # imported here: the lab's forecasts load this module without it

    c = m.configurations
    runs = c["runs"].astype(int)
    t = np.where(runs > 1, stats.t.ppf(0.5 + level / 2, np.maximum(runs - 1, 1)), np.nan)
    half = t * c["se_ms"]
    settings = [
        "rw",
        "bs_bytes",
        "iodepth",
        "one_way_delay_ms",
        "link_mbps",
        "r2t_window",
        "iscsi_parameters",
    ]
    return c[["key", *settings]].assign(
        **{
            "runs": runs,
            "ios_per_run": c["writes"] / runs,
            "measured_ms": c["measured_ms"],
            "ci_low_ms": c["measured_ms"] - half,
            "ci_high_ms": c["measured_ms"] + half,
            "half_width_pct": 100 * half / c["measured_ms"],
        }
    )


def precision(m: Matrix, level: float = CI_LEVEL) -> dict[str, Any]:
    """One sweep's measured means in a line: configurations, runs, I/Os per run, interval half-widths."""
    means = measured_means(m, level)
    return {
        "sweep": m.sweep,
        "configurations": len(means),
        "runs_min": int(means["runs"].min()),
        "runs_max": int(means["runs"].max()),
        "ios_per_run_min": float(means["ios_per_run"].min()),
        "ios_per_run_max": float(means["ios_per_run"].max()),
        "median_half_width_pct": float(means["half_width_pct"].median()),
        "max_half_width_pct": float(means["half_width_pct"].max()),
        # how far one run's mean strays from another's, whatever the number of runs
        "median_run_sd_pct": float(
            (100 * m.configurations["sd_ms"] / m.configurations["measured_ms"]).median()
        ),
    }


def versions_compared(newer: Matrix, older: Matrix, seed: int = 0) -> dict[str, Any]:
    """Two engine versions' matrices of one sweep: newer less older, in points, with the paired interval.

    Why: one version is called better than another only when the bootstrap interval (over targets)
    of the difference of each target's median absolute error excludes zero, as for the baselines.
    """

    def per_target(m: Matrix) -> pd.Series:
        engine = m.pairs[m.pairs["method"] == ENGINE]
        return engine.groupby("target")["abs_error_pct"].median()

    a, b = per_target(newer), per_target(older)
    diff = (a - b.loc[a.index]).to_numpy(float)
    low, high = boot_median_ci(diff, np.random.default_rng(seed))
    return {
        "targets": len(diff),
        "diff": float(np.median(diff)),
        "low": low,
        "high": high,
        "better": bool(high < 0),
    }


def forecasts_apart(m: Matrix) -> pd.DataFrame:
    """Per group: how far apart the engine's and the rescaled formula's forecasts lie, and the measured error.

    Why: where the two forecast nearly the same latency (a gap the size of the measured means' own
    standard error), no sweep of this size can show either better, so "not better" there is a tie,
    not a loss. Per target the median over its todays, then the median over the group's targets;
    both in per cent of the measured mean.
    """
    keys = ["group", "target", "today"]
    wide = m.pairs.pivot_table(index=keys, columns="method", values="forecast_ms", aggfunc="first")
    measured = m.pairs.drop_duplicates(keys).set_index(keys).loc[wide.index, "measured_ms"]
    gap = (100 * (wide[ENGINE] - wide[BLOG_SCALED]).abs() / measured).rename("apart_pct").reset_index()
    confs = m.configurations.set_index("key")
    se_pct = 100 * confs["se_ms"] / confs["measured_ms"]
    rows = []
    groups = sorted(gap["group"].unique())
    for group, part in [("every target", gap), *((g, gap[gap["group"] == g]) for g in groups)]:
        per_target = part.groupby("target")["apart_pct"].median()
        rows.append(
            {
                "group": group,
                "targets": len(per_target),
                "apart_pct": float(per_target.median()),
                "se_pct": float(se_pct.loc[per_target.index].median()),
            }
        )
    return pd.DataFrame(rows)


RULE_ERROR_PCT = 5.0  # issue 21's rule: at most 5 % median error overall and in every group


def rule_verdict(summary_frame: pd.DataFrame) -> tuple[bool, str]:
    """The pre-registered rule over a :func:`summary`: passed, and one sentence naming every failure."""
    failures = []
    for _, r in summary_frame.iterrows():
        what = f"{r['group']} ({int(r['targets'])} configurations)"
        if r[ENGINE] > RULE_ERROR_PCT:
            failures.append(f"{what}: {r[ENGINE]:.2f} % above {RULE_ERROR_PCT:g} %")
        not_better = [name for name in ("blog", "scaled") if not r[f"better_than_{name}"]]
        if not_better:
            names = " and ".join(
                "the blog formula" if n == "blog" else "the rescaled formula" for n in not_better
            )
            failures.append(f"{what}: not shown better than {names}")
    if not failures:
        return True, "The engine passes the rule in every group."
    return False, "The engine fails the rule: " + "; ".join(failures) + "."
