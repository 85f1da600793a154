"""Tails of iSCSI write latency on a jittered network: forecast from ping, scored with proper scores.

The jitter sweep (``lab run --jitter``) writes 1,000 times per configuration under four delay
shapes. *Today's system* is the fixed-delay network: its ping, iperf3 and its measured writes (the
settings group of the target's window). Each configuration under a jittered shape is forecast
from today plus that network's ping alone (the user's "what if I move to this link, whose ping I
measured"): the mean by the engine (the target's one-way delay is today's plus the extra mean
delay the new ping shows), the distribution by :mod:`iscsi_report.core.distribution`.

Two baselines, as the issue names them: the engine's mean shifted by the ping's own spread (one
round trip's quantile less its mean), and today's measured distribution of the same
configuration rescaled to the engine's mean. Scores: absolute error of p50 and p99 (per cent),
pinball loss at p50, p90 and p99 and CRPS (ms) against the measured writes.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.analyses import forecast_matrix as fm
from iscsi_report.analyses.device_term import size_text
from iscsi_report.core import distribution, forecast
from iscsi_report.core.ingest import iperf3
from iscsi_report.core.measurements import Measurements, open_dataset
from iscsi_report.core.units import NS_PER_MS

REFERENCE = "fixed"
ENGINE = "engine + ping distribution"
SHIFTED = "mean shifted by ping's spread"
RESCALED = "today's distribution rescaled"
METHODS = (ENGINE, SHIFTED, RESCALED)
# Designed after seeing the first jitter sweep's misses, scored on that sweep: not a test
POST_HOC = "multi-packet trips (post hoc)"
POST_HOC_NOTE = "post hoc: designed after seeing this sweep, not a test"
PREREGISTERED_NOTE = "fixed before the sweep"  # the second jitter sweep: model, rule, design committed first
ALL_METHODS = (ENGINE, POST_HOC, SHIFTED, RESCALED)
BURSTS = "engine + multi-packet trips"  # the same model where it is pre-registered (the second sweep)
# Designed after seeing the fourth jitter sweep's misses, scored on sweeps 2 to 4: not a test
FIFO = "FIFO line simulated (post hoc)"
FIFO_NOTE = "post hoc: designed after seeing the fourth sweep, not a test"
FIFO_DECLARED = "engine + FIFO line simulated"  # the same model where it is pre-registered (the fifth sweep)
LEVELS = (0.5, 0.9, 0.99)
MAX_SCORED = 1000  # measured writes per configuration used for CRPS (evenly spaced in rank)


def measured_sample(ds: Measurements, f: Any) -> np.ndarray:
    """Per-write latency (ms) of a json+ run: its completion-latency bins, plus fio's mean submission."""
    res = ds.fio(f)
    h = res.histogram[res.histogram["direction"] == "write"]
    if h.empty:
        raise ValueError(f"{f.rel}: no json+ latency bins (run with --output-format=json+)")
    j = res.jobs.iloc[0]
    slat = float(j["lat_mean_ms"] - j["clat_mean_ms"])
    values = np.repeat(h["lat_ns"].to_numpy(float) / NS_PER_MS, h["count"].to_numpy(int))
    return np.sort(values + slat)


def runs(ds: Measurements) -> pd.DataFrame:
    """One row per (non-captured) run of the jitter sweep: shape, size, window, file, writes, mean."""
    rows = []
    for f in ds.select("fio"):
        if "jitter" not in f.labels or f.labels.get("captured"):
            continue
        sample = measured_sample(ds, f)
        rows.append(
            {
                "jitter": f.labels["jitter"],
                "bs_bytes": int(f.labels["bs_bytes"]),
                "r2t_window": int(f.labels["r2t_window"]),
                "file": f.rel,
                "writes": sample.size,
                "mean_ms": float(sample.mean()),
                **{f"p{int(p * 100)}_ms": float(np.quantile(sample, p)) for p in LEVELS},
            }
        )
    return pd.DataFrame(rows)


def ping_rtt(ds: Measurements, shape: str) -> tuple[np.ndarray, str]:
    """The RTT sample at 2 ms spacing under ``shape``, and its file."""
    f = next(p for p in ds.select("ping") if p.labels.get("jitter") == shape)
    rtt = ds.ping(f).rtt_ms
    return rtt[np.isfinite(rtt)], f.rel


def _today(ds: Measurements, table: pd.DataFrame, window: int) -> forecast.Today:
    """Today's system: the fixed network, its ping and iperf3, and its writes at ``window``."""
    mine = table[(table["jitter"] == REFERENCE) & (table["r2t_window"] == window)]
    first = _fio_file(ds, str(mine["file"].iloc[0]))
    ping = next(p for p in ds.select("ping") if p.labels.get("jitter") == REFERENCE)
    perf = next(p for p in ds.select("iperf3") if p.labels.get("jitter") == REFERENCE)
    rows = pd.DataFrame(
        {
            **{k: first.labels[k] for k in ("rw", "iodepth", "iscsi_parameters", "r2t_window")},
            **{k: first.labels[k] for k in ("immediate_data_bytes", "max_recv_data_segment_bytes")},
            **{k: first.labels[k] for k in ("one_way_delay_ms", "link_mbps")},
            "bs_bytes": mine["bs_bytes"].to_numpy(),
            "measured_ms": mine["mean_ms"].to_numpy(),
            "se_ms": 0.0,
            "runs": 1,
        }
    )
    rows["key"] = [fm.configuration_of(ds, r).key() for _, r in rows.iterrows()]
    point = fm.ping_point(ds, ping)
    for name, value in point.items():
        if name not in ("one_way_delay_ms", "link_mbps"):
            rows[name] = value
    rows["iperf3_bps"] = iperf3.summary(ds.iperf3(perf))["received_bps"]
    rows["iperf3_file"] = perf.rel
    return fm.today(ds, rows)


@dataclass(frozen=True)
class _Target:
    """One jittered configuration to forecast: its row, today's system, the target and its data."""

    row: pd.Series
    today: forecast.Today
    target: forecast.Configuration
    op_ms: float
    rtt_ms: np.ndarray
    measured_ms: np.ndarray
    base: dict[str, Any]


def _targets(ds: Measurements, table: pd.DataFrame) -> Iterator[_Target]:
    """Every jittered configuration with today's system, the engine's mean and the measured writes."""
    ref_rtt, _ = ping_rtt(ds, REFERENCE)
    todays = {w: _today(ds, table, int(w)) for w in sorted(set(table["r2t_window"]))}  # one per window
    for _, t in table[table["jitter"] != REFERENCE].iterrows():
        today = todays[t["r2t_window"]]
        rtt, _ = ping_rtt(ds, str(t["jitter"]))
        extra_one_way = (float(rtt.mean()) - float(ref_rtt.mean())) / 2
        c = today.configuration
        target = replace(c, bs_bytes=int(t["bs_bytes"]), one_way_ms=c.one_way_ms + extra_one_way)
        measured = measured_sample(ds, _fio_file(ds, str(t["file"])))
        base = {"jitter": t["jitter"], "bs_bytes": t["bs_bytes"], "r2t_window": t["r2t_window"]}
        base |= {"writes": t["writes"], "measured_p50_ms": t["p50_ms"], "measured_p99_ms": t["p99_ms"]}
        yield _Target(t, today, target, forecast.forecast(today, target).op_ms, rtt, measured, base)


def score(ds: Measurements) -> pd.DataFrame:
    """One row per (jittered target, method): p50/p99 forecast and errors, pinball losses, CRPS."""
    table = runs(ds)
    out = []
    for x in _targets(ds, table):
        net = forecast.network_for(x.today, x.target)
        trips = forecast.breakdown(x.today, x.target, net).one_way_trips
        today_sample = _today_sample(ds, table, x.row)
        for method, draws in _methods(x.op_ms, trips, x.rtt_ms, today_sample).items():
            out.append(x.base | {"method": method} | _scores(draws, x.measured_ms))
    return pd.DataFrame(out)


def score_bursts(ds: Measurements, method: str = POST_HOC) -> pd.DataFrame:
    """The multi-packet trip model's rows (labelled ``method``), in :func:`score`'s columns.

    On the first jitter sweep it is :data:`POST_HOC` (designed after seeing it: not a test); on
    the second, pre-registered, :data:`BURSTS`. Each round's outbound trip is its burst of
    packets at the line's MTU and rate (the dataset's labels); the per-packet one-way extra is
    deconvolved from the jittered ping over today's; correlation is ping's lag-1 autocorrelation.
    """
    ref_rtt, _ = ping_rtt(ds, REFERENCE)
    out = []
    for x in _targets(ds, runs(ds)):
        offsets = _round_offsets_ms(ds, x)
        r = distribution.ping_correlation(x.rtt_ms)
        d = distribution.forecast_bursts(x.op_ms, x.rtt_ms, ref_rtt, offsets, correlation=r)
        out.append(x.base | {"method": method} | _scores(d.draws_ms, x.measured_ms))
    return pd.DataFrame(out)


def score_fifo(ds: Measurements, method: str = FIFO, ack_every: int = distribution.ACK_EVERY) -> pd.DataFrame:
    """The simulated first-in, first-out line's rows (labelled ``method``), in :func:`score`'s columns.

    Post hoc (:data:`FIFO_NOTE`). As :func:`score_bursts`, but each round goes through the
    per-packet branch of :func:`distribution.forecast_tail`, the tail model every forecast of the
    project uses (the line simulated by :func:`distribution.forecast_fifo`): the way back carries
    the burst's acknowledgements (one per ``ack_every`` packets; 0: none) ahead of the R2T or
    status, and stickiness runs across rounds.
    """
    ref_rtt, _ = ping_rtt(ds, REFERENCE)
    out = []
    for x in _targets(ds, runs(ds)):
        offsets = _round_offsets_ms(ds, x)
        d, rule = distribution.forecast_tail(x.op_ms, x.rtt_ms, ref_rtt, offsets, ack_every=ack_every)
        if rule != distribution.PER_PACKET:  # every shape jitters the fixed line: said, never scored quietly
            raise ValueError(f"{ds.name}: {x.row['jitter']} is no more jittered than the fixed line")
        out.append(x.base | {"method": method} | _scores(d.draws_ms, x.measured_ms))
    return pd.DataFrame(out)


def fifo_test(
    ds: Measurements, ack_every: int = distribution.ACK_EVERY
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """A sweep scored post hoc for the simulated FIFO line beside the multi-packet model and the rest.

    The rows are :func:`score`'s, :func:`score_bursts`'s (as :data:`BURSTS`) and
    :func:`score_fifo`'s (``ack_every`` as there); the summary of all five methods; and the FIFO
    line's rule in words.
    """
    rows = pd.concat([score(ds), score_bursts(ds, BURSTS)], ignore_index=True)
    return fifo_added(ds, rows, ack_every=ack_every)


def fifo_added(
    ds: Measurements,
    rows: pd.DataFrame,
    method: str = FIFO,
    note: str = FIFO_NOTE,
    ack_every: int = distribution.ACK_EVERY,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """:func:`bursts_test`'s rows with the FIFO line's (as ``method``) added: rows, summary, findings.

    The findings are the FIFO line's median errors, the target count and the rule in words (with
    ``note`` saying whether the model was fixed before the sweep), as :func:`bursts_test` gives them.
    """
    combined = pd.concat([rows, score_fifo(ds, method, ack_every)], ignore_index=True)
    table = summary(combined, (method, BURSTS, ENGINE, SHIFTED, RESCALED))
    found = _findings(table, method) | bursts_verdict(combined, method, note, "the simulated FIFO line")
    return combined, table, found


def _findings(table: pd.DataFrame, method: str) -> dict[str, Any]:
    """A model's median p50 and p99 errors and its target count, from a :func:`summary`."""
    row: dict[Hashable, Any] = table.set_index("method").loc[method].to_dict()
    found: dict[str, Any] = {c: float(row[c]) for c in ("p50_error_pct", "p99_error_pct")}
    found["targets"] = int(row["targets"])
    return found


def _round_offsets_ms(ds: Measurements, x: _Target) -> list[np.ndarray]:
    """Each round's outbound packet offsets at the line's MTU and rate (the dataset's labels)."""
    mtu = _path_mtu_bytes(ds, str(x.row["jitter"]))
    packets = forecast.round_packets(x.today, x.target, mtu_bytes=mtu)
    return [distribution.packet_offsets_ms(p, x.target.link_bps) for p in packets]


def bursts_test(
    ds: Measurements, method: str = BURSTS, note: str = PREREGISTERED_NOTE
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """A sweep scored for the multi-packet model: the rows, their summary, and its errors and verdict.

    The rows are :func:`score`'s and :func:`score_bursts`'s together (the model beside the first
    model and both baselines); the dict holds the model's median errors, the target count and
    :func:`bursts_verdict`'s words, as the chapter glues them and the benchmark prints them.
    """
    combined = pd.concat([score(ds), score_bursts(ds, method)], ignore_index=True)
    table = summary(combined, (ENGINE, method, SHIFTED, RESCALED))
    return combined, table, _findings(table, method) | bursts_verdict(combined, method, note)


def worst_shape(scored: pd.DataFrame, method: str) -> dict[str, Any]:
    """The jitter shape whose p99 ``method`` misses most (median |error|), and how its misses lean."""
    mine = scored[scored["method"] == method]
    by = mine.groupby("jitter")["p99_error_pct"]
    return shape_misses(scored, method, str(by.apply(lambda e: e.abs().median()).idxmax()))


def shape_misses(scored: pd.DataFrame, method: str, shape: str) -> dict[str, Any]:
    """How ``method`` misses the p99 under one jitter shape: median |error|, the worst, how many too low."""
    mine = scored[scored["method"] == method]
    errors = mine.loc[mine["jitter"] == shape, "p99_error_pct"]
    return {
        "shape": shape,
        "p99_error_pct": float(errors.abs().median()),
        "worst_p99_error_pct": float(errors.iloc[errors.abs().argmax()]),
        "under": int((errors < 0).sum()),
        "configurations": len(errors),
    }


def packets_per_round(ds: Measurements) -> dict[str, int | str]:
    """The most packets one round of the sweep's largest write sends: at the line's MTU and at Ethernet's.

    The multi-packet model was tested where a round is a handful of 64 KiB packets whose delays the
    line draws independently; at Ethernet's MTU the same round is far more packets, and a real
    network delays neighbouring packets together. The chapter says so with these counts.
    """
    table = runs(ds)
    jittered = table[table["jitter"] != REFERENCE]
    largest = jittered.loc[[jittered["bs_bytes"].idxmax()]]  # one target: its forecast alone is built
    today = table[(table["jitter"] == REFERENCE) & (table["r2t_window"] == largest["r2t_window"].iloc[0])]
    x = next(_targets(ds, pd.concat([today, largest])))
    mtu = _path_mtu_bytes(ds, str(x.row["jitter"]))
    line = forecast.round_packets(x.today, x.target, mtu_bytes=mtu)
    ethernet = forecast.round_packets(x.today, x.target, mtu_bytes=forecast.ETHERNET_MTU_BYTES)
    return {
        "bs_bytes": int(x.target.bs_bytes),
        "size": size_text(x.target.bs_bytes),
        "line_mtu_bytes": mtu,
        "line_packets": max(len(p) for p in line),
        "ethernet_mtu_bytes": forecast.ETHERNET_MTU_BYTES,
        "ethernet_packets": max(len(p) for p in ethernet),
    }


def _path_mtu_bytes(ds: Measurements, shape: str) -> int:
    """The line's MTU (bytes) as the dataset recorded it with the shape's iperf3 run."""
    perf = next(p for p in ds.select("iperf3") if p.labels.get("jitter") == shape)
    return int(perf.labels["path_mtu_bytes"])


def _today_sample(ds: Measurements, table: pd.DataFrame, t: pd.Series) -> np.ndarray:
    """Today's measured writes of the target's size and window (the fixed network)."""
    ref = table[
        (table["jitter"] == REFERENCE)
        & (table["bs_bytes"] == t["bs_bytes"])
        & (table["r2t_window"] == t["r2t_window"])
    ]
    return measured_sample(ds, _fio_file(ds, str(ref["file"].iloc[0])))


def _fio_file(ds: Measurements, rel: str) -> Any:
    """The manifest entry of the fio file ``rel`` (a run of the table above)."""
    return next(x for x in ds.select("fio") if x.rel == rel)


def _methods(mean_ms: float, trips: float, rtt: np.ndarray, today: np.ndarray) -> dict[str, np.ndarray]:
    """Each method's forecast as draws of the latency (ms)."""
    engine = distribution.forecast(mean_ms, trips, rtt, boot=1).draws_ms
    shifted = mean_ms + (rtt - rtt.mean())
    rescaled = today * (mean_ms / today.mean())
    return {ENGINE: engine, SHIFTED: shifted, RESCALED: rescaled}


def _scores(draws: np.ndarray, measured: np.ndarray) -> dict[str, float]:
    """p50/p99 and their errors, pinball at each level, CRPS, against the measured writes."""
    out: dict[str, float] = {}
    for p in LEVELS:
        q = float(np.quantile(draws, p))
        out[f"p{int(p * 100)}_ms"] = q
        out[f"pinball_p{int(p * 100)}_ms"] = distribution.pinball(measured, q, p)
    for p in (0.5, 0.99):
        m = float(np.quantile(measured, p))
        out[f"p{int(p * 100)}_error_pct"] = 100 * (out[f"p{int(p * 100)}_ms"] - m) / m
    ranks = np.linspace(0, measured.size - 1, min(measured.size, MAX_SCORED)).astype(int)
    out["crps_ms"] = distribution.crps(measured[ranks], draws)
    return out


def summary(scored: pd.DataFrame, methods: tuple[str, ...] = METHODS) -> pd.DataFrame:
    """Per method: median |p50| and |p99| error (%), mean pinball losses and CRPS over targets."""
    g = scored.assign(abs_p50=scored["p50_error_pct"].abs(), abs_p99=scored["p99_error_pct"].abs()).groupby(
        "method", sort=False
    )
    return (
        g.agg(
            targets=("abs_p50", "size"),
            p50_error_pct=("abs_p50", "median"),
            p99_error_pct=("abs_p99", "median"),
            pinball_p50_ms=("pinball_p50_ms", "mean"),
            pinball_p90_ms=("pinball_p90_ms", "mean"),
            pinball_p99_ms=("pinball_p99_ms", "mean"),
            crps_ms=("crps_ms", "mean"),
        )
        .reindex(list(methods))
        .reset_index()
    )


def paired(
    scored: pd.DataFrame,
    column: str,
    seed: int = 0,
    engine: str = ENGINE,
    baselines: tuple[str, ...] = (SHIFTED, RESCALED),
) -> dict[str, tuple[float, float, float]]:
    """``engine`` minus each baseline on ``column`` over targets: median and 95 % bootstrap interval."""
    wide = scored.pivot_table(index=["jitter", "bs_bytes", "r2t_window"], columns="method", values=column)
    rng = np.random.default_rng(seed)
    out = {}
    for base in baselines:
        diff = (wide[engine] - wide[base]).to_numpy(float)
        lo, hi = fm.boot_median_ci(diff, rng)
        out[base] = (float(np.median(diff)), lo, hi)
    return out


def load(raw_dir: Any) -> Measurements:
    """The jitter sweep through the measurements layer (every file checked against its sha256)."""
    return open_dataset(raw_dir)


RULE_ERROR_PCT = 10.0  # the rule: p50 and p99 within 10 % median absolute error


def _rule(scored: pd.DataFrame, engine: str) -> tuple[bool, str]:
    """The issue's rule applied to ``engine``: whether it holds, and what misses it (words)."""
    s = summary(scored, tuple(dict.fromkeys((engine, *METHODS)))).set_index("method")
    errors = [float(s.loc[engine, c]) for c in ("p50_error_pct", "p99_error_pct")]  # type: ignore[arg-type]
    within = max(errors) <= RULE_ERROR_PCT
    lower = {}
    for level in ("p50", "p90", "p99"):
        diffs = paired(scored, f"pinball_{level}_ms", engine=engine)
        lower[level] = all(hi < 0 for _, (_, _, hi) in diffs.items())
    passed = within and all(lower.values())
    failing = [lvl for lvl, ok in lower.items() if not ok]
    misses = ([] if within else ["an error above 10 %"]) + (
        [f"pinball not shown lower at {', '.join(failing)}"] if failing else []
    )
    return passed, "; ".join(misses)


def verdict(scored: pd.DataFrame) -> dict[str, Any]:
    """The pre-registered rule in numbers and one sentence: errors within 10 %, pinball below both."""
    passed, misses = _rule(scored, ENGINE)
    words = (
        "By the rule fixed before the sweep (both errors within 10 %, pinball loss below both "
        "baselines with intervals excluding zero) the forecast "
        + ("passes." if passed else f"fails: {misses}.")
    )
    return {"rule_passed": passed, "verdict_words": words}


def bursts_verdict(
    combined: pd.DataFrame,
    method: str = POST_HOC,
    note: str = POST_HOC_NOTE,
    model_words: str = "the multi-packet trip model",
) -> dict[str, Any]:
    """The issue's rule applied to a model beside :func:`score`'s rows (the multi-packet one by default)."""
    passed, misses = _rule(combined, method)
    words = f"Scored by the issue's rule ({note}), {model_words} " + (
        "passes." if passed else f"fails: {misses}."
    )
    return {"bursts_rule_passed": passed, "bursts_words": words}


def runs_table(table: pd.DataFrame) -> pd.DataFrame:
    """Measured runs for people."""
    return table.rename(
        columns={
            "jitter": "Jitter shape",
            "bs_bytes": "Block size (bytes)",
            "r2t_window": "R2T window",
            "file": "fio file",
            "writes": "Writes",
            "mean_ms": "Mean (ms)",
            "p50_ms": "p50 (ms)",
            "p90_ms": "p90 (ms)",
            "p99_ms": "p99 (ms)",
        }
    )


def sweeps_summary(summaries: dict[str, pd.DataFrame], methods: tuple[str, ...]) -> pd.DataFrame:
    """Several sweeps' summaries in one frame, ``methods`` only, each row named by its sweep."""
    parts = [s[s["method"].isin(methods)].assign(sweep=name) for name, s in summaries.items()]
    joined = pd.concat(parts, ignore_index=True)
    return joined[["sweep", *[c for c in joined.columns if c != "sweep"]]]


def summary_table(s: pd.DataFrame) -> pd.DataFrame:
    """The summary for people."""
    return s.rename(
        columns={
            "sweep": "Sweep",
            "method": "Method",
            "targets": "Configurations",
            "p50_error_pct": "p50: median |error| (%)",
            "p99_error_pct": "p99: median |error| (%)",
            "pinball_p50_ms": "Pinball p50 (ms)",
            "pinball_p90_ms": "Pinball p90 (ms)",
            "pinball_p99_ms": "Pinball p99 (ms)",
            "crps_ms": "CRPS (ms)",
        }
    )


def paired_table(scored: pd.DataFrame, engine: str = ENGINE) -> pd.DataFrame:
    """``engine`` less each baseline for each score, with its bootstrap interval, and whether lower."""
    rows = []
    for column in ("pinball_p50_ms", "pinball_p90_ms", "pinball_p99_ms", "crps_ms"):
        for base, (med, lo, hi) in paired(scored, column, engine=engine).items():
            rows.append(
                {
                    "Score": column.replace("_ms", "").replace("_", " "),
                    "Baseline": base,
                    "Model less baseline (ms)": med,
                    "95 % interval": f"[{lo:+.3f}, {hi:+.3f}]",
                    "Model lower": "yes" if hi < 0 else "no",
                }
            )
    return pd.DataFrame(rows)


def misses_table(scored: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: measured p99 and each method's forecast p99 and its error."""
    wide = scored.pivot_table(
        index=["jitter", "bs_bytes", "r2t_window", "measured_p99_ms"],
        columns="method",
        values="p99_error_pct",
    ).reset_index()
    return wide.rename(
        columns={
            "jitter": "Jitter shape",
            "bs_bytes": "Block size (bytes)",
            "r2t_window": "R2T window",
            "measured_p99_ms": "Measured p99 (ms)",
            **{m: f"{m}: p99 error (%)" for m in scored["method"].unique()},
        }
    )


# ---- are the round trips of one write independent? (captures) -------------------------------


def trip_rounds(ds: Measurements) -> pd.DataFrame:
    """One row per round of each captured write: shape, write, round number, its time (ms).

    A round runs from what the initiator sent (the command, or the last Data-Out of a burst) to what
    answers it (the next R2T, or the response): one round trip plus the burst's serialisation.
    """
    rows = []
    for f in ds.select("tshark"):
        if "jitter" not in f.labels:
            continue
        for (stream, itt), g in ds.tshark_timeline(f).groupby(["stream", "itt"], sort=False):
            r2t = g.loc[g["event"] == "r2t", "time_s"].to_numpy(float)
            if r2t.size < 2:
                continue  # not a write with several R2T rounds
            sent = g.loc[(g["event"] == "data_out") & g["final"].fillna(False).astype(bool), "time_s"]
            starts = np.concatenate([[0.0], sent.to_numpy(float)])
            ends = np.concatenate([r2t, g.loc[g["event"] == "response", "time_s"].to_numpy(float)])
            n = min(starts.size, ends.size)
            for k in range(n):
                rows.append(
                    {
                        "jitter": f.labels["jitter"],
                        "write": f"{f.rel}:{stream}:{itt}",
                        "round": k,
                        "round_ms": (ends[k] - starts[k]) * 1000,
                    }
                )
    return pd.DataFrame(rows)


def independence_table(t: pd.DataFrame) -> pd.DataFrame:
    """The independence check for people."""
    return pd.DataFrame(
        {
            "Jitter shape": t["jitter"],
            "Captured writes": t["writes"],
            "Rounds per write": t["rounds_per_write"],
            "Lag-1 correlation of a write's rounds [95 % interval]": [
                f"{r.lag1_rounds:+.3f} [{r.lag1_rounds_low:+.3f}, {r.lag1_rounds_high:+.3f}]"
                for r in t.itertuples()
            ],
            "Lag-1 correlation of ping": t["lag1_ping"],
            "Mean round rise over the fixed line (ms)": t["round_rise_ms"],
            "Mean ping rise over the fixed line (ms)": t["ping_rise_ms"],
        }
    )


def trip_independence(ds: Measurements, seed: int = 0) -> pd.DataFrame:
    """Per shape: captured writes, rounds per write, and the lag-1 correlation of the rounds of one
    write (each round centred on the mean of its position across writes; 95 % bootstrap interval
    over writes) beside the lag-1 correlation of ping at 2 ms spacing (the model draws rounds as
    consecutive ping samples, so the two should agree)."""
    rounds = trip_rounds(ds)
    rng = np.random.default_rng(seed)
    ref_rtt, _ = ping_rtt(ds, REFERENCE)
    ref_rounds = rounds.loc[rounds["jitter"] == REFERENCE, "round_ms"]
    out = []
    for shape, g in rounds.groupby("jitter", sort=True):
        centred = g["round_ms"] - g.groupby("round")["round_ms"].transform("mean")
        per_write = [centred[g["write"] == w].to_numpy(float) for w in g["write"].unique()]
        boot = [
            distribution.lag1([per_write[i] for i in rng.integers(0, len(per_write), len(per_write))])
            for _ in range(500)
        ]
        rtt, _ = ping_rtt(ds, str(shape))
        rc = rtt - rtt.mean()
        out.append(
            {
                "jitter": shape,
                "writes": len(per_write),
                "rounds_per_write": float(np.median([s.size for s in per_write])),
                "round_mean_ms": float(g["round_ms"].mean()),
                "lag1_rounds": distribution.lag1(per_write),
                "lag1_rounds_low": float(np.nanquantile(boot, 0.025)),
                "lag1_rounds_high": float(np.nanquantile(boot, 0.975)),
                "lag1_ping": distribution.lag1([rc]),
                "round_rise_ms": float(g["round_ms"].mean() - ref_rounds.mean()),
                "ping_rise_ms": float(rtt.mean() - ref_rtt.mean()),
            }
        )
    return pd.DataFrame(out)
