"""Conclusions: every upgrade estimate on the site side by side, and the front page's answers.

Four kinds of estimate answer "what would an upgrade buy?" for the blog's 2 MiB writes:

- the blog's own formula with its printed, rounded inputs (Projections chapter, part a);
- the physical model with inputs measured from the dataset's raw files and the link, device and
  CPU ceilings (Projections chapter, part b; what ``iscsi-report project --dataset`` computes);
- the fitted model with 95 % prediction intervals (What-if chapter);
- and, for the R2T window only, the real iSCSI lab's measured latencies (lab-iscsi-2026).

Beside them stands the blog's own measurement of each configuration (its fio runs, published).
:func:`reconcile` computes all of them with the chapters' own functions, so each value here
equals the one its chapter shows; :func:`wide_table` lays them out one row per upgrade.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.analyses import blog, fit, lab, projections, storage, uncertainty, whatif
from iscsi_report.core import model
from iscsi_report.core.errors import ReportError
from iscsi_report.core.measurements import Measurements, open_dataset
from iscsi_report.core.paths import Project
from iscsi_report.core.units import BITS_PER_MBIT, BYTES_PER_MIB

Config = tuple[int, str, str]  # (MaxOutstandingR2T, network, device), as in the blog's table
CEILINGS = ("link", "device", "cpu")  # the physical bounds every model caps its estimate by

BLOG_DATASET = "blog-2023"
LAB_DATASET = "lab-iscsi-2026"

PUBLISHED = "Blog's runs (published)"
BLOG_FORMULA = "Blog formula"
PHYSICAL = "Physical model"
FITTED = "Fitted model, 95 % interval"
LAB = "Real iSCSI lab (measured)"
# Why the lab's row is empty for an upgrade: its target writes to memory (no disk), its links are
# emulated on one machine (no wireless link, none faster than the blog's wired one).
NOT_IN_LAB = "no such change in the lab (no disk, no wireless link, no faster link)"
SOURCES = (PUBLISHED, BLOG_FORMULA, PHYSICAL, FITTED, LAB)
CHAPTERS = {
    PUBLISHED: "runs/blog-2023/projections",
    BLOG_FORMULA: "runs/blog-2023/projections",
    PHYSICAL: "runs/blog-2023/projections",
    FITTED: "runs/blog-2023/whatif",
    LAB: "runs/lab-iscsi-2026/lab_latency",
}


@dataclass(frozen=True)
class Upgrade:
    """One upgrade: the configuration before and after, and optionally a faster link after."""

    key: str
    label: str
    before: Config
    after: Config
    after_link_bps: float | None = None
    why: str = ""


@dataclass(frozen=True)
class Settings:
    """The parameters of the estimates: the same defaults as the Projections and What-if chapters."""

    bs_bytes: int = projections.DEFAULT_BS_BYTES
    ping_interval_s: float = 0.002
    cpu_scenario: str = projections.DEFAULT_CPU_SCENARIO
    cpu_reference_bs_bytes: int = projections.DEFAULT_CPU_REFERENCE_BS_BYTES
    faster_link_bps: float = whatif.FASTER_LINK_BPS
    device_request_fraction: float = 0.5
    n_draws: int = uncertainty.DEFAULT_DRAWS
    seed: int = uncertainty.DEFAULT_SEED
    lab_window_before: int = 1
    lab_window_after: int = 8
    lab_immediate_data_bytes: int = 65536
    lab_max_recv_data_segment_bytes: int = 262144
    lab_link_mbps: float = 1000.0


NETWORK_WORDS = {"wireless": "Wi-Fi", "wired": "Ethernet"}
INTERVAL_PCT = uncertainty.UPPER_PCT - uncertainty.LOWER_PCT  # the fitted model's prediction interval


def upgrades(settings: Settings = Settings()) -> list[Upgrade]:
    """The upgrades the blog asked about, each from the configuration it would replace."""
    today: Config = (1, "wireless", "hdd")
    wired: Config = (1, "wired", "hdd")
    burst: Config = (16, "wireless", "hdd")
    best: Config = (16, "wired", "ssd")
    faster = f"{settings.faster_link_bps / 1e9:g} Gbit/s"
    return [
        Upgrade(
            "wired",
            "Ethernet instead of Wi-Fi",
            today,
            wired,
            why="Same physics; they differ in rounding, PDU headers and fitted weights.",
        ),
        Upgrade(
            "ssd",
            f"SSD instead of HDD, on {NETWORK_WORDS['wired']}",
            wired,
            (1, "wired", "ssd"),
            why="The fitted model scales device time by a fitted coefficient.",
        ),
        Upgrade(
            "r2t",
            f"MaxOutstandingR2T {burst[0]} instead of {today[0]}",
            today,
            burst,
            why="The lab's RAM disk and small CPU time leave the R2T rounds a larger share.",
        ),
        Upgrade(
            "all",
            "all three",
            today,
            best,
            why="Gains do not multiply: CPU time and sending the block remain.",
        ),
        Upgrade(
            "faster_link",
            f"{faster} link after all three",
            best,
            best,
            after_link_bps=settings.faster_link_bps,
            why="Never measured; device and CPU time, paid in series, then dominate.",
        ),
    ]


# ---- the estimates, one source at a time ---------------------------------------------------------


def _row(projs: list[projections.Projection], config: Config) -> projections.Projection:
    """The projection of one configuration; ReportError naming it if absent."""
    found = [p for p in projs if (p.max_outstanding_r2t, p.network, p.device) == config]
    if len(found) != 1:
        raise ReportError(f"no projection for R2T={config[0]}, {config[1]}, {config[2]}")
    return found[0]


def blog_formula(config: Config, link_bps: float | None, published: Path) -> projections.Projection:
    """The blog's formula for one of its six configurations, optionally on a faster link."""
    p = _row(projections.blog_projections(published), config)
    if link_bps is None:
        return p
    net = model.Network(p.network_in.one_way_ms, link_bps=link_bps)
    b = model.write_latency(
        p.breakdown.bs_bytes,
        blog.inputs(published).params(p.max_outstanding_r2t),
        net,
        p.breakdown.device_ms,
        p.breakdown.cpu_ms,
        assumptions=blog.BLOG_ASSUMPTIONS,
    )
    return dataclasses.replace(
        p, network_in=net, breakdown=b, measured_mib_per_s=math.nan, throughput=model.throughput(b, net)
    )


def faster_link_inputs(
    inputs: projections.MeasuredInputs, config: Config, link_bps: float
) -> projections.MeasuredInputs:
    """Measured inputs with one validation configuration moved to a faster link of the same latency."""
    r2t_value, network, device = config
    val = inputs.validation
    sel = val[
        (val["max_outstanding_r2t"] == r2t_value) & (val["network"] == network) & (val["device"] == device)
    ]
    if len(sel) != 1:
        raise ReportError(f"no validation runs for R2T={r2t_value}, {network}, {device}")
    name = f"{network} at {link_bps / 1e9:g} Gbit/s"
    nets = inputs.networks[inputs.networks["network"] == network].assign(
        network=name, received_mbit_per_s=link_bps / BITS_PER_MBIT
    )
    moved = sel.assign(network=name, measured_mib_per_s=math.nan)
    return dataclasses.replace(
        inputs, networks=pd.concat([inputs.networks, nets], ignore_index=True), validation=moved
    )


def physical(
    ds: Measurements, inputs: projections.MeasuredInputs, config: Config, link_bps: float | None
) -> projections.Projection:
    """The physical model with measured inputs and ceilings, optionally on a faster link."""
    if link_bps is None:
        return _row(projections.measured_projections(ds, inputs), config)
    (p,) = projections.measured_projections(ds, faster_link_inputs(inputs, config, link_bps))
    return p


def config_label(config: Config, link_bps: float | None = None) -> str:
    """'R2T 1, wireless, hdd', with the link when it is not the network's measured one."""
    link = f", {link_bps / 1e9:g} Gbit/s" if link_bps else ""
    return f"R2T {config[0]}, {config[1]}, {config[2]}{link}"


def _question_label(q: dict[str, Any]) -> str:
    """config_label of a What-if question."""
    config = (int(q["max_outstanding_r2t"]), str(q["network"]), str(q["device"]))
    return config_label(config, q.get("link_bps"))


def fitted_questions(ups: list[Upgrade], s: Settings) -> list[dict[str, Any]]:
    """The What-if chapter's questions in its order, then any other configuration the upgrades need.

    Keeping the chapter's order first keeps its seeded Monte Carlo draws, so its intervals match.
    """
    out = {_question_label(q): q for q in whatif.blog_questions(s.bs_bytes, s.faster_link_bps)}
    for u in ups:
        for config, link in ((u.before, None), (u.after, u.after_link_bps)):
            out.setdefault(
                config_label(config, link),
                {
                    "label": config_label(config, link),
                    "max_outstanding_r2t": config[0],
                    "network": config[1],
                    "device": config[2],
                    "bs_bytes": s.bs_bytes,
                    "link_bps": link,
                },
            )
    return [{**q, "key": k} for k, q in out.items()]


def fitted(ds: Measurements, published: Path, ups: list[Upgrade], s: Settings) -> pd.DataFrame:
    """The What-if chapter's fitted model with run intervals at every configuration of the upgrades."""
    runs, device_fits = fit.runs_from_dataset(ds, published)
    result = fit.fit_variant(runs, fit.variant_by_name(fit.PRIMARY_VARIANT))
    devices = {**whatif.profiles_from_storage(device_fits), whatif.NVME_DEFAULT.name: whatif.NVME_DEFAULT}
    cpu = whatif.cpu_profile_from_runs(runs)
    questions = fitted_questions(ups, s)
    configs = whatif.upgrade_configs(runs, cpu, devices, questions, s.device_request_fraction)
    table = uncertainty.project(
        configs,
        result,
        fit.rtt_samples_by_network(ds),
        kind="run",
        n_draws=s.n_draws,
        seed=s.seed,
        reconstructed=ds.reconstructed,
    )
    return table.assign(key=[q["key"] for q in questions])


def lab_window_effect(raw_dir: Path, s: Settings) -> pd.DataFrame:
    """Lab: throughput of one write in flight at window before/after, per one-way delay (medians)."""
    ds = open_dataset(raw_dir)
    runs = lab.fio_runs(ds)
    sel = runs[
        (runs["rw"] == "write")
        & (runs["iodepth"] == 1)
        & (runs["bs_bytes"] == s.bs_bytes)
        & (runs["immediate_data_bytes"] == s.lab_immediate_data_bytes)
        & (runs["max_recv_data_segment_bytes"] == s.lab_max_recv_data_segment_bytes)
        & (runs["link_mbps"] == s.lab_link_mbps)
        & runs["r2t_window"].isin([s.lab_window_before, s.lab_window_after])
        & ~runs["captured"].astype(bool)  # dumpcap ran: the lab's README leaves these runs out
    ]
    if sel.empty:
        raise ReportError(f"{raw_dir}: no lab write runs at {s.bs_bytes} bytes with those settings")
    med = sel.groupby(["one_way_delay_ms", "r2t_window"])["latency_ms"].agg(["median", "size"]).unstack()
    nets = lab.networks(ds).set_index(["one_way_delay_ms", "link_mbps"])["one_way_ms"]
    b, a = s.lab_window_before, s.lab_window_after
    out = pd.DataFrame(
        {
            "one_way_delay_ms": med.index.to_numpy(dtype=float),
            "measured_one_way_ms": [float(nets.loc[(d, s.lab_link_mbps)]) for d in med.index],
            "runs_per_window": med[("size", b)].to_numpy(dtype=int),
            "before_latency_ms": med[("median", b)].to_numpy(dtype=float),
            "after_latency_ms": med[("median", a)].to_numpy(dtype=float),
        }
    )
    out["before_mib_per_s"] = [model.mib_per_s(s.bs_bytes, ms) for ms in out["before_latency_ms"]]
    out["after_mib_per_s"] = [model.mib_per_s(s.bs_bytes, ms) for ms in out["after_latency_ms"]]
    out["gain_pct"] = (out["after_mib_per_s"] / out["before_mib_per_s"] - 1.0) * 100.0
    return out


LAB_HEADERS = {
    "one_way_delay_ms": "Delay set, one way (ms)",
    "measured_one_way_ms": "Delay measured, one way (ms)",
    "runs_per_window": "Runs per window",
    "before_latency_ms": "Latency, window before (ms)",
    "after_latency_ms": "Latency, window after (ms)",
    "before_mib_per_s": "MiB/s, window before",
    "after_mib_per_s": "MiB/s, window after",
    "gain_pct": "Gain (%)",
}


def lab_table(effect: pd.DataFrame, s: Settings) -> pd.DataFrame:
    """The lab's window effect with headers for people (the windows named)."""
    names = {
        k: v.replace("window before", f"window {s.lab_window_before}").replace(
            "window after", f"window {s.lab_window_after}"
        )
        for k, v in LAB_HEADERS.items()
    }
    return effect[list(names)].rename(columns=names)


def nearest_delay(effect: pd.DataFrame, one_way_ms: float) -> pd.Series:
    """The lab's delay point whose measured one-way latency is nearest ``one_way_ms``."""
    at = int(np.argmin(np.abs(effect["measured_one_way_ms"].to_numpy() - one_way_ms)))
    return effect.iloc[at]


# ---- the reconciliation --------------------------------------------------------------------------


@dataclass(frozen=True)
class Reconciliation:
    """Every estimate (tidy), the lab's window effect per delay, and the inputs the answers need."""

    estimates: pd.DataFrame  # one row per (upgrade, source)
    lab_window: pd.DataFrame
    lab_point: pd.Series
    blog_questions: pd.DataFrame  # projections.blog_questions from measured inputs
    blog_questions_blog: pd.DataFrame  # the same from the blog's inputs
    upgrades: list[Upgrade]
    settings: Settings


def _estimate(u: Upgrade, source: str, before: float, after: float, **extra: Any) -> dict[str, Any]:
    """One tidy row: the upgrade, the source, MiB/s before and after, the gain."""
    gain = (after / before - 1.0) * 100.0 if before > 0 and math.isfinite(after) else math.nan
    return {
        "upgrade": u.key,
        "label": u.label,
        "before": config_label(u.before),
        "after": config_label(u.after, u.after_link_bps),
        "source": source,
        "chapter": CHAPTERS[source],
        "before_mib_per_s": before,
        "after_mib_per_s": after,
        "gain_pct": gain,
        "after_lo_mib_per_s": extra.get("lo", math.nan),
        "after_hi_mib_per_s": extra.get("hi", math.nan),
        "binding": extra.get("binding", ""),
        "before_binding": extra.get("before_binding", ""),
        **{f"after_{k}_ceiling_mib_per_s": extra.get(k, math.nan) for k in CEILINGS},
        "note": extra.get("note", ""),
    }


def _model_rows(
    u: Upgrade, source: str, before: projections.Projection, after: projections.Projection
) -> dict[str, Any]:
    """A model source's row: its MiB/s before and after and the bound binding the after case."""
    ceilings = {k: v for k, v in after.throughput.ceilings_mib_per_s().items() if k in CEILINGS}
    return _estimate(
        u,
        source,
        before.mib_per_s,
        after.mib_per_s,
        binding=after.throughput.binding,
        before_binding=before.throughput.binding,
        **ceilings,
    )


def _fitted_row(u: Upgrade, table: pd.DataFrame) -> dict[str, Any]:
    """The fitted model's row, with the run interval of the after case."""

    def pick(config: Config, link: float | None) -> pd.Series:
        sel = table[table["key"] == config_label(config, link)]
        if len(sel) != 1:
            raise ReportError(f"no fitted projection for {config_label(config, link)}")
        return sel.iloc[0]

    b, a = pick(u.before, None), pick(u.after, u.after_link_bps)
    lo, hi = float(a["mib_per_s_lo"]), float(a["mib_per_s_hi"])
    ceilings = {k: float(a[f"{k}_mib_per_s"]) for k in CEILINGS}
    return _estimate(
        u,
        FITTED,
        float(b["mib_per_s"]),
        float(a["mib_per_s"]),
        lo=lo,
        hi=hi,
        binding=a["binding"],
        before_binding=b["binding"],
        **ceilings,
    )


def _published_row(u: Upgrade, blog_projs: list[projections.Projection]) -> dict[str, Any]:
    """The blog's measured MiB/s of both configurations (none for a link it never had)."""
    before = _row(blog_projs, u.before).measured_mib_per_s
    if u.after_link_bps is not None:
        return _estimate(u, PUBLISHED, before, math.nan, note="not measured: no such link in the study")
    return _estimate(u, PUBLISHED, before, _row(blog_projs, u.after).measured_mib_per_s)


def _lab_row(u: Upgrade, point: pd.Series, s: Settings) -> dict[str, Any]:
    """The lab's measured window effect (R2T upgrade only; other rows say why there is none)."""
    if u.key != "r2t":
        return _estimate(u, LAB, math.nan, math.nan, note=NOT_IN_LAB)
    return _estimate(
        u,
        LAB,
        float(point["before_mib_per_s"]),
        float(point["after_mib_per_s"]),
        binding="latency",
        note=f"R2T window forced by the patched target, {s.lab_window_before} vs {s.lab_window_after}, at "
        f"{float(point['measured_one_way_ms']):.2f} ms one way (not a negotiated MaxOutstandingR2T)",
    )


def reconcile(project_root: str | Path, settings: Settings = Settings()) -> Reconciliation:
    """Compute every estimate of every upgrade with the chapters' own functions."""
    project = Project(Path(project_root))
    published = project.published_dir
    s = settings
    ds = open_dataset(project.dataset_dir(BLOG_DATASET))
    inputs = projections.measured_inputs(
        ds,
        s.bs_bytes,
        ping_interval_s=s.ping_interval_s,
        cpu_scenario=s.cpu_scenario,
        cpu_reference_bs_bytes=s.cpu_reference_bs_bytes,
    )
    ups = upgrades(s)
    blog_projs = projections.blog_projections(published)
    measured = projections.measured_projections(ds, inputs)
    fitted_table = fitted(ds, published, ups, s)
    effect = lab_window_effect(project.dataset_dir(LAB_DATASET), s)
    setup = projections.QuestionSetup()
    nets = inputs.networks
    point = nearest_delay(
        effect, float(nets.loc[nets["network"] == setup.slow_network, "one_way_ms"].iloc[0])
    )
    rows = []
    for u in ups:
        rows.append(_published_row(u, blog_projs))
        rows.append(
            _model_rows(
                u,
                BLOG_FORMULA,
                blog_formula(u.before, None, published),
                blog_formula(u.after, u.after_link_bps, published),
            )
        )
        rows.append(
            _model_rows(
                u,
                PHYSICAL,
                physical(ds, inputs, u.before, None),
                physical(ds, inputs, u.after, u.after_link_bps),
            )
        )
        rows.append(_fitted_row(u, fitted_table))
        rows.append(_lab_row(u, point, s))
    local = storage.local_throughput(storage.fio_runs(ds))
    blog_table = projections.projection_table(blog_projs)
    measured_table = projections.projection_table(measured)
    return Reconciliation(
        estimates=pd.DataFrame(rows),
        lab_window=effect,
        lab_point=point,
        blog_questions=projections.blog_questions(
            measured_table, projections.terms_table(measured), setup, local, s.bs_bytes
        ),
        blog_questions_blog=projections.blog_questions(
            blog_table, projections.terms_table(blog_projs), setup, local, s.bs_bytes
        ),
        upgrades=ups,
        settings=s,
    )


# ---- tables for people -------------------------------------------------------------------------

DASH = "—"  # a value a source does not give; the table's note says why


def _gain_text(row: pd.Series) -> str:
    """'+100 % (62)': gain and MiB/s after, '; lo–hi' with an interval; an em dash when not given."""
    if not math.isfinite(row["gain_pct"]) and not math.isfinite(row["after_mib_per_s"]):
        return DASH
    after = f"{row['after_mib_per_s']:.0f}"
    if math.isfinite(row["after_lo_mib_per_s"]):
        after += f"; {row['after_lo_mib_per_s']:.0f}–{row['after_hi_mib_per_s']:.0f}"
    if not math.isfinite(row["gain_pct"]):
        return after
    return f"{row['gain_pct']:+.0f} % ({after})"


def binding_text(estimates: pd.DataFrame, upgrade: str, column: str = "binding") -> str:
    """The bounds binding the upgraded configuration (``column="before_binding"``: the one it
    replaces), per model source ('latency' when all agree)."""
    sel = estimates[
        (estimates["upgrade"] == upgrade) & (estimates["source"].isin([BLOG_FORMULA, PHYSICAL, FITTED]))
    ]
    found = list(dict.fromkeys(str(b) for b in sel[column] if b))
    if not found:
        raise ReportError(f"upgrade {upgrade!r}: no model names a binding bound")
    return (
        found[0]
        if len(found) == 1
        else "; ".join(f"{s}: {b}" for s, b in zip(sel["source"], sel[column], strict=True))
    )


BINDING_WORDS = {
    "latency": "latency",
    "link": "the link rate",
    "device": "the device's local throughput",
    "cpu": "the target CPU",
}


def wide_table(rec: Reconciliation) -> pd.DataFrame:
    """One row per upgrade: gain and MiB/s after, per source; the binding bound; why they differ."""
    est = rec.estimates
    rows = []
    for u in rec.upgrades:
        sel = est[est["upgrade"] == u.key].set_index("source")
        binding = binding_text(est, u.key)
        rows.append(
            {
                "Upgrade": u.label,
                **{source: _gain_text(sel.loc[[source]].iloc[0]) for source in SOURCES},
                "Binding bound": BINDING_WORDS.get(binding, binding),
                "Why the estimates differ": u.why,
            }
        )
    return pd.DataFrame(rows)


def provenance_table(rec: Reconciliation) -> pd.DataFrame:
    """What each source's numbers are: measured, published, reconstructed, emulated or modelled."""
    return pd.DataFrame(
        [
            {
                "Source": PUBLISHED,
                "What it is": "published measurements: the blog's fio runs, as printed",
                "Inputs": "none (these are the outcomes)",
            },
            {
                "Source": BLOG_FORMULA,
                "What it is": "model: the blog's additive formula, lock-step R2T groups, no PDU headers",
                "Inputs": "published: the blog's rounded latency, link, device and CPU figures",
            },
            {
                "Source": PHYSICAL,
                "What it is": "model: RFC 7143 PDUs with 48-byte headers, sliding R2T window, capped by "
                "the link, the device's local throughput and the CPU",
                "Inputs": "reconstructed: pings, iperf3, fio and iostat files generated from the blog's "
                "summaries (the means match what it printed; the shapes are invented)",
            },
            {
                "Source": FITTED,
                "What it is": "model: coefficients fitted by regression on the remote runs, 95 % "
                "prediction intervals by Monte Carlo",
                "Inputs": "reconstructed: the same files; the intervals use the invented ping samples",
            },
            {
                "Source": LAB,
                "What it is": "measured: real tgt and libiscsi traffic on this machine",
                "Inputs": "emulated network (a delay line) and a RAM-backed disk; "
                f"{int(rec.lab_point['runs_per_window'])} runs per window at the chosen delay",
            },
        ]
    )


# ---- the front page's answers --------------------------------------------------------------------


def _q(table: pd.DataFrame, key: str) -> float:
    """One value of a blog_questions table by key."""
    sel = table.loc[table["glue_key"] == key, "value"]
    if len(sel) != 1:
        raise ReportError(f"no answer {key!r} in the blog's questions")
    return float(sel.iloc[0])


def _est(rec: Reconciliation, upgrade: str, source: str, column: str) -> float:
    """One value of the tidy estimates."""
    sel = rec.estimates[(rec.estimates["upgrade"] == upgrade) & (rec.estimates["source"] == source)]
    return float(sel[column].iloc[0])


def side(values: list[float], reference: float) -> str:
    """Where ``values`` lie against ``reference``: 'above', 'below' or 'on both sides of'."""
    if all(v > reference for v in values):
        return "above"
    if all(v < reference for v in values):
        return "below"
    return "on both sides of"


def answers(rec: Reconciliation) -> dict[str, float | str]:
    """The values the front page and the conclusions glue, by key."""
    q = rec.blog_questions
    out: dict[str, float | str] = {
        "measured_mib_per_s": _q(q, "q1_measured_mib_per_s"),
        "link_mib_per_s": _q(q, "q1_link_mib_per_s"),
        "local_device_mib_per_s": _q(q, "q1_local_device_mib_per_s"),
        "op_ms": _q(q, "q1_op_ms"),
        "trips_share_pct": _q(q, "q1_one_way_trips_share_pct"),
        "transmission_share_pct": _q(q, "q1_transmission_share_pct"),
        "device_share_pct": _q(q, "q1_device_share_pct"),
        "cpu_share_pct": _q(q, "q1_cpu_share_pct"),
        "ssd_local_gain_pct": _q(q, "q3_local_gain_pct"),
        "lab_one_way_ms": float(rec.lab_point["measured_one_way_ms"]),
    }
    out["network_share_pct"] = float(out["trips_share_pct"]) + float(out["transmission_share_pct"])
    s = rec.settings
    out["bs_mib"] = s.bs_bytes / BYTES_PER_MIB
    out["serial_r2t"] = projections.QuestionSetup().serial_r2t
    out["burst_r2t"] = next(u.after[0] for u in rec.upgrades if u.key == "r2t")
    out["lab_window_before"] = s.lab_window_before
    out["lab_window_after"] = s.lab_window_after
    out["faster_link_gbit_per_s"] = s.faster_link_bps / 1e9
    out["interval_pct"] = INTERVAL_PCT
    for u in rec.upgrades:
        for source, tag in (
            (PUBLISHED, "measured"),
            (BLOG_FORMULA, "blog"),
            (PHYSICAL, "model"),
            (FITTED, "fitted"),
        ):
            out[f"{u.key}_{tag}_gain_pct"] = _est(rec, u.key, source, "gain_pct")
            out[f"{u.key}_{tag}_mib_per_s"] = _est(rec, u.key, source, "after_mib_per_s")
        out[f"{u.key}_fitted_lo_mib_per_s"] = _est(rec, u.key, FITTED, "after_lo_mib_per_s")
        out[f"{u.key}_fitted_hi_mib_per_s"] = _est(rec, u.key, FITTED, "after_hi_mib_per_s")
        out[f"{u.key}_binding"] = binding_text(rec.estimates, u.key)
        for k in CEILINGS:
            out[f"{u.key}_model_{k}_ceiling_mib_per_s"] = _est(
                rec, u.key, PHYSICAL, f"after_{k}_ceiling_mib_per_s"
            )
    out["r2t_lab_gain_pct"] = _est(rec, "r2t", LAB, "gain_pct")
    out["today_fitted_mib_per_s"] = _est(rec, "wired", FITTED, "before_mib_per_s")
    out["today_blog_mib_per_s"] = _est(rec, "wired", BLOG_FORMULA, "before_mib_per_s")
    out["today_model_mib_per_s"] = _est(rec, "wired", PHYSICAL, "before_mib_per_s")
    out["today_binding"] = binding_text(rec.estimates, "wired", "before_binding")
    for key in ("today", *(u.key for u in rec.upgrades)):
        binding = str(out[f"{key}_binding"])
        out[f"{key}_binding_words"] = BINDING_WORDS.get(binding, binding)
    for key in ("wired", "ssd", "r2t", "all"):
        models = [float(out[f"{key}_{tag}_gain_pct"]) for tag in ("blog", "model", "fitted")]
        out[f"{key}_models_side"] = side(models, float(out[f"{key}_measured_gain_pct"]))
        lo, hi = float(out[f"{key}_fitted_lo_mib_per_s"]), float(out[f"{key}_fitted_hi_mib_per_s"])
        measured = float(out[f"{key}_measured_mib_per_s"])
        out[f"{key}_interval_holds"] = "holds" if lo <= measured <= hi else "misses"
    return out


def binding_words(values: dict[str, float | str]) -> dict[str, str]:
    """The binding bound in words per upgrade key (and ``today``), from :func:`answers`."""
    suffix = "_binding_words"
    return {key[: -len(suffix)]: str(v) for key, v in values.items() if key.endswith(suffix)}


# ---- the front page's figure ---------------------------------------------------------------------

MEASURED = "measured (blog)"  # the series of the blog's own throughputs in the front page's figure
QUESTIONS = (  # the blog's three questions: (key in the answers, label; the configuration's ceilings)
    ("today", "1. Why so slow? Wi-Fi, HDD"),
    ("wired", "2. Ethernet instead of Wi-Fi"),
    ("ssd", "3. SSD instead of HDD, on Ethernet"),
)
QUESTION_SERIES = (  # series of the figure: (its name, the answers' tag of its MiB/s)
    (MEASURED, "measured"),
    (BLOG_FORMULA, "blog"),
    (PHYSICAL, "model"),
    ("Fitted model", "fitted"),
)


def _question_ceilings(values: dict[str, float | str], key: str) -> dict[str, float]:
    """The link's and the device's MiB/s for one question's configuration, as the page quotes them."""
    if key == "today":
        return {"link": float(values["link_mib_per_s"]), "device": float(values["local_device_mib_per_s"])}
    return {k: float(values[f"{key}_model_{k}_ceiling_mib_per_s"]) for k in ("link", "device")}


def question_rows(values: dict[str, float | str]) -> pd.DataFrame:
    """The front page's figure as data: per question, measured and forecast MiB/s, the link's and the
    device's ceilings and the binding bound in words, all read from :func:`answers` (the numbers the
    page's prose glues, so the figure and the text cannot differ)."""
    rows = []
    for order, (key, label) in enumerate(QUESTIONS):
        measured_key = "measured_mib_per_s" if key == "today" else f"{key}_measured_mib_per_s"
        bound = str(values[f"{key}_binding_words"])
        common = {"order": order, "question": label, "binding": bound}
        for series, tag in QUESTION_SERIES:
            value = values[measured_key] if tag == "measured" else values[f"{key}_{tag}_mib_per_s"]
            interval = (
                (values[f"{key}_fitted_lo_mib_per_s"], values[f"{key}_fitted_hi_mib_per_s"])
                if tag == "fitted" and key != "today"
                else (math.nan, math.nan)
            )
            rows.append(
                common
                | {"kind": "throughput", "series": series, "mib_per_s": float(value)}
                | {"lo_mib_per_s": float(interval[0]), "hi_mib_per_s": float(interval[1])}
            )
        for ceiling, value in _question_ceilings(values, key).items():
            rows.append(
                common
                | {"kind": "ceiling", "series": f"{ceiling} ceiling", "mib_per_s": value}
                | {"lo_mib_per_s": math.nan, "hi_mib_per_s": math.nan}
            )
    return pd.DataFrame(rows)
