"""``project --dataset`` on a dataset of iSCSI runs: the forecasting engine, from today's runs alone.

A dataset whose fio files are labelled iSCSI runs (delay, rate, R2T window, parameter set,
direction, block size, queue depth: the lab's sweeps, or a user's own runs labelled the same way)
is forecast by :mod:`iscsi_report.core.forecast`, the engine the lab's Forecasts chapter scores:

1. **Today** is one settings group of the dataset: writes at queue depth 1 on one network point
   with one parameter set and window, at the block sizes it has (``--today`` picks it; by default
   the group closest to the configuration asked for, by the rule in :func:`choose_today`).
2. **The target** is today's configuration with what the flags change (delay, rate, window,
   keys, block size, queue depth, direction).
3. **Only today's files are read**: the group's fio runs (less the target's own, when the target
   shares today's settings), the ping and iperf3 of today's network point, and the captures the
   pacing is read from (never the target configuration's). The engine refuses any input measured
   on the target (:class:`iscsi_report.core.forecast.LeakageError`).
4. **The R2T pacing** is read from captured writes (:mod:`iscsi_report.analyses.pacing`); the
   document says which pacing was used and why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iscsi_report.analyses import forecast_matrix, lab, pacing
from iscsi_report.core import dataset as datasets
from iscsi_report.core import distribution, forecast, model
from iscsi_report.core.dataset import RawFile
from iscsi_report.core.errors import ReportError
from iscsi_report.core.forecast import Source, Value
from iscsi_report.core.ingest import iperf3
from iscsi_report.core.measurements import Measurements
from iscsi_report.core.units import BITS_PER_BYTE, BITS_PER_MBIT, BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S

# Labels that make a fio file an iSCSI run the engine can use, and those that fix today's settings.
SETTINGS_LABELS = ("one_way_delay_ms", "link_mbps", "r2t_window", "iscsi_parameters")
RUN_LABELS = (*SETTINGS_LABELS, "rw", "bs_bytes", "iodepth")
# Runs on different devices are different systems, never one today: a group is also one device
# (the ``device`` label; a run without one is on the dataset's only, unnamed device).
DEVICE_LABEL = "device"
GROUP_LABELS = (*SETTINGS_LABELS, DEVICE_LABEL)
# Options of ``project`` a dataset of iSCSI runs takes (the device and CPU are today's, measured).
ENGINE_OPTIONS = frozenset(
    {
        "bs",
        "iscsi_parameters",
        "one_way_ms",
        "per_64k_ms",
        "link_mbps",
        "max_outstanding_r2t",
        "target_r2t_window",
        "first_burst",
        "max_burst",
        "max_recv_data_segment",
        "immediate_data",
        "initial_r2t",
        "queue_depth",
        "cpu_cores",
        "pdu_header_bytes",
    }
)
PER_64K_BYTES = 64 * BYTES_PER_KIB  # the size --per-64k-ms times
# The engine's own error where it forecast blind: the lab's sweeps whose forecasts were frozen and
# committed before they ran, scored against what they then measured (split conformal). The
# quantile of those errors widens every interval, beside today's measurement error.
BLIND_SWEEPS = (
    "lab-iscsi-2026-blind",
    "lab-iscsi-2026-blind2",
    "lab-iscsi-2026-blind3",
    "lab-iscsi-2026-blind4",
    "lab-iscsi-2026-blind5",
)
# Per engine version, the blind sweeps whose forecasts that version froze: its own error comes from them.
BLIND_SWEEPS_BY_VERSION = {2: BLIND_SWEEPS, 3: ("lab-iscsi-2026-blind6", "lab-iscsi-2026-blind7")}
ERROR_COLUMNS = ["sweep", "target", "abs_error_pct"]
CLOSEST = "the measured settings closest to the target (fewest differing settings, then delay, rate, window)"


def has_iscsi_runs(ds: Measurements) -> bool:
    """True when the manifest lists fio files labelled as iSCSI runs (no file is read)."""
    return any(_is_run(f) for f in ds.select("fio"))


def _is_run(f: RawFile) -> bool:
    """A fio file labelled with every setting an iSCSI run needs."""
    return all(k in f.labels for k in RUN_LABELS)


def _captured(f: RawFile) -> bool:
    """A run made while a capture ran (its timing is disturbed: left out, as the lab's README says)."""
    return bool(f.labels.get("captured", False))


# ---- today's settings groups (labels only, nothing read) -------------------------------------


@dataclass(frozen=True)
class Group:
    """One settings group a user could call today's system: its labels and its fio runs."""

    settings: tuple[tuple[str, Any], ...]  # (label, value) for GROUP_LABELS
    files: tuple[RawFile, ...]

    @property
    def labels(self) -> dict[str, Any]:
        return dict(self.settings)

    @property
    def sizes(self) -> list[int]:
        return sorted({int(f.labels["bs_bytes"]) for f in self.files})

    def name(self) -> str:
        """Its settings as ``key=value`` pairs, as ``--today`` takes them (an unnamed device left out)."""
        return ",".join(f"{k}={_label_text(v)}" for k, v in self.settings if v != "")


def _label_text(value: Any) -> str:
    """A label value as typed: 1.0 as 1, text as is."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def groups(ds: Measurements) -> list[Group]:
    """Settings groups of writes at queue depth 1 (captured runs left out), in a stable order."""
    by: dict[tuple[tuple[str, Any], ...], list[RawFile]] = {}
    for f in ds.select("fio"):
        if _is_run(f) and not _captured(f) and f.labels["rw"] == "write" and int(f.labels["iodepth"]) == 1:
            key = tuple((k, _settings_value(k, f.labels[k])) for k in SETTINGS_LABELS)
            key += ((DEVICE_LABEL, str(f.labels.get(DEVICE_LABEL, ""))),)
            by.setdefault(key, []).append(f)
    return [Group(k, tuple(v)) for k, v in sorted(by.items(), key=lambda kv: repr(kv[0]))]


def _settings_value(label: str, value: Any) -> Any:
    """Settings labels compared as numbers where they are numbers (1 and 1.0 are one delay)."""
    return str(value) if label in ("iscsi_parameters", DEVICE_LABEL) else float(value)


def parse_today(text: str) -> dict[str, Any]:
    """``--today one_way_delay_ms=0,link_mbps=1000,...`` as a dict of settings labels."""
    out: dict[str, Any] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        if not sep or name not in GROUP_LABELS:
            raise ReportError(
                f"--today {text!r}: expected LABEL=VALUE pairs with LABEL one of {GROUP_LABELS}"
            )
        try:
            out[name] = _settings_value(name, value)
        except ValueError:
            raise ReportError(f"--today {text!r}: {name} must be a number, got {value!r}") from None
    return out


def choose_today(
    found: list[Group], stated: Mapping[str, Any], today: Mapping[str, Any]
) -> tuple[Group, str]:
    """The settings group that plays today's system, and why it was chosen.

    The groups matching ``today`` (``--today``, any of its labels), or all of them; among those,
    the group that differs from the target's ``stated`` settings in the fewest labels, then the
    nearest delay, then the nearest rate (log ratio), then the nearest window, then the most block
    sizes: the measured system most like the one asked about, so the forecast carries as little as
    possible. Groups on different devices are never taken for one another: a tie between devices
    is an error asking for ``--today device=NAME``.
    """
    if not found:
        raise ReportError("the dataset has no writes at queue depth 1 labelled as iSCSI runs: no today")
    if today:
        match = [g for g in found if all(g.labels[k] == v for k, v in today.items())]
        if not match:
            raise ReportError(
                "--today matches no settings group; the dataset's groups have "
                + "; ".join(f"{k} in {{{', '.join(_values(found, k))}}}" for k in GROUP_LABELS)
            )
        if len(match) == 1:
            return match[0], "chosen with --today"
        found = match

    def distance(g: Group) -> tuple[float, ...]:
        lab_ = g.labels
        differ = sum(lab_[k] != v for k, v in stated.items())
        delay = abs(lab_["one_way_delay_ms"] - stated.get("one_way_delay_ms", lab_["one_way_delay_ms"]))
        rate = _log_ratio(lab_["link_mbps"], stated.get("link_mbps", lab_["link_mbps"]))
        window = abs(lab_["r2t_window"] - stated.get("r2t_window", lab_["r2t_window"]))
        return (differ, delay, rate, window, -len(g.sizes))

    best = min(found, key=distance)
    devices = sorted({g.labels[DEVICE_LABEL] for g in found if distance(g) == distance(best)})
    if len(devices) > 1:
        raise ReportError(
            f"today's closest settings were measured on {len(devices)} devices ({', '.join(devices)}): "
            "say which is today's with --today device=NAME (a forecast for another device reads that "
            "device's local fio: the upgrade chapter's device_dataset)"
        )
    return best, CLOSEST + (" among those --today matches" if today else "")


def _values(found: list[Group], label: str) -> list[str]:
    """The distinct values a settings label takes across the groups, as typed."""
    return [_label_text(v) for v in sorted({g.labels[label] for g in found})]


def _log_ratio(a: float, b: float) -> float:
    """|log(a / b)|, with 0 (unlimited) as far from any rate."""
    if a <= 0 or b <= 0:
        return 0.0 if a == b else math.inf
    return abs(math.log(a / b))


# ---- the target ------------------------------------------------------------------------------


def stated_settings(combo: Mapping[str, Any]) -> dict[str, Any]:
    """The target's settings labels the flags state (delay, rate, window, parameter set)."""
    out: dict[str, Any] = {}
    if "one_way_ms" in combo:
        out["one_way_delay_ms"] = float(combo["one_way_ms"])
    link = _link_mbps(combo)
    if link is not None:
        out["link_mbps"] = link
    window = combo.get("target_r2t_window", combo.get("max_outstanding_r2t"))
    if window is not None:
        out["r2t_window"] = float(window)
    if "iscsi_parameters" in combo:
        out["iscsi_parameters"] = str(combo["iscsi_parameters"])
    return out


def _link_mbps(combo: Mapping[str, Any]) -> float | None:
    """The target's nominal rate from --link-mbps or --per-64k-ms (None: today's)."""
    if "link_mbps" in combo:
        return float(combo["link_mbps"])
    if "per_64k_ms" in combo:
        return PER_64K_BYTES * BITS_PER_BYTE / (float(combo["per_64k_ms"]) / MS_PER_S) / BITS_PER_MBIT
    return None


def target_configuration(
    ds: Measurements, base: forecast.Configuration, combo: Mapping[str, Any], direction: model.Direction
) -> forecast.Configuration:
    """Today's configuration with what the flags change: the configuration being forecast."""
    params = base.params
    if "iscsi_parameters" in combo:
        params = lab.iscsi_params(ds, _set_row(ds, str(combo["iscsi_parameters"]), base))
    keys = {
        "first_burst_bytes": combo.get("first_burst"),
        "max_burst_bytes": combo.get("max_burst"),
        "max_recv_data_segment_bytes": combo.get("max_recv_data_segment"),
        "immediate_data": combo.get("immediate_data"),
        "initial_r2t": combo.get("initial_r2t"),
    }
    window = combo.get("target_r2t_window", combo.get("max_outstanding_r2t"))
    negotiated = combo.get("max_outstanding_r2t", window)
    if negotiated is not None:
        keys["max_outstanding_r2t"] = int(negotiated)
    params = replace(params, **{k: v for k, v in keys.items() if v is not None})
    link = _link_mbps(combo)
    return forecast.Configuration(
        direction=direction,
        bs_bytes=int(combo.get("bs", base.bs_bytes)),
        queue_depth=int(combo.get("queue_depth", 1)),
        params=params,
        one_way_ms=float(combo.get("one_way_ms", base.one_way_ms)),
        link_bps=base.link_bps if link is None else link * BITS_PER_MBIT,
        target_r2t_window=int(window) if window is not None else base.target_r2t_window,
        device=base.device,  # today's device: the flags change the network and the protocol, not the disk
    )


def _set_row(ds: Measurements, name: str, base: forecast.Configuration) -> dict[str, Any]:
    """A row naming parameter set ``name`` (for lab.iscsi_params), its immediate data taken from the set."""
    keys = ds.iscsi_parameters.get(name)
    if keys is None:
        sets = sorted(ds.iscsi_parameters)
        raise ReportError(f"--iscsi-parameters {name!r}: the dataset has the sets {sets}")
    imm = int(keys["FirstBurstLength"]) if keys.get("ImmediateData") == "Yes" else 0
    imm = min(imm, int(keys["MaxRecvDataSegmentLength"]))
    return {
        "iscsi_parameters": name,
        "r2t_window": base.params.max_outstanding_r2t,
        "bs_bytes": base.bs_bytes,
        "immediate_data_bytes": imm,
    }


# ---- today, read -----------------------------------------------------------------------------


def _runs(ds: Measurements, files: list[RawFile]) -> pd.DataFrame:
    """Per block size of today's runs: mean per-write latency over replicates, its se, runs, writes."""
    return forecast_matrix.mean_per_configuration(
        pd.DataFrame([lab.fio_row(ds, f) for f in files]), ["bs_bytes"]
    )


def _network(ds: Measurements, group: Group) -> dict[str, Any]:
    """Today's network point: ping (one-way ms and se) and iperf3's received rate, with their files."""
    at = {k: group.labels[k] for k in ("one_way_delay_ms", "link_mbps")}
    point: dict[str, Any] = {}
    for f in ds.select("ping"):
        if _at_point(f, at):
            point |= forecast_matrix.ping_point(ds, f)
    for f in ds.select("iperf3"):
        if _at_point(f, at) and lab.link_rate_run(f):  # the forward rate: a write's data
            point |= {"iperf3_bps": iperf3.summary(ds.iperf3(f))["received_bps"], "iperf3_file": f.rel}
    missing = [w for w, k in (("ping", "ping_file"), ("iperf3", "iperf3_file")) if k not in point]
    if missing:
        raise ReportError(
            f"{ds.root / datasets.MANIFEST}: no {' or '.join(missing)} file at today's network point "
            f"(one_way_delay_ms={at['one_way_delay_ms']:g}, link_mbps={at['link_mbps']:g})"
        )
    return point


def _at_point(f: RawFile, at: Mapping[str, float]) -> bool:
    """A ping or iperf3 file measured at network point ``at``."""
    return (
        float(f.labels.get("one_way_delay_ms", math.nan)) == at["one_way_delay_ms"]
        and float(f.labels.get("link_mbps", 0.0)) == at["link_mbps"]
    )


def todays_runs(ds: Measurements, group: Group, target_key: str) -> tuple[pd.DataFrame, list[str]]:
    """Today's configurations (one row per block size, keyed) and the runs left out as the target's."""
    base = forecast_matrix.configuration_of(ds, pd.Series(_group_row(group, group.sizes[0])))
    kept: list[RawFile] = []
    left_out: list[RawFile] = []
    for f in group.files:
        same = replace(base, bs_bytes=int(f.labels["bs_bytes"])).key() == target_key
        (left_out if same else kept).append(f)
    if not kept:
        raise ReportError("today's only runs are of the configuration being forecast; pick another --today")
    rows = _runs(ds, kept)
    rows["key"] = [replace(base, bs_bytes=int(b)).key() for b in rows["bs_bytes"]]
    for name, value in {**_group_row(group, 0), **_network(ds, group)}.items():
        if name != "bs_bytes":
            rows[name] = value
    return rows, [f.rel for f in left_out]


def _group_row(group: Group, bs_bytes: int) -> dict[str, Any]:
    """A row with the group's labels (as the lab's frames hold them) at block size ``bs_bytes``."""
    first = group.files[0].labels
    named = {k: v for k, v in group.labels.items() if not (k == DEVICE_LABEL and v == "")}
    return {
        **named,
        "rw": "write",
        "iodepth": 1,
        "bs_bytes": bs_bytes,
        "immediate_data_bytes": first.get("immediate_data_bytes"),
        "max_recv_data_segment_bytes": first.get("max_recv_data_segment_bytes"),
    }


def read_pacing(
    ds: Measurements, target_key: str, seen: dict[str, pacing.Counts] | None = None
) -> pacing.PacingEvidence:
    """The pacing from the dataset's captured writes with a window of 2 or more, the target's excluded.

    The pacing belongs to the target's software, so every such capture of today's system counts,
    whatever its delay (short delays are the ones that show it, see :mod:`pacing`). ``seen`` keeps
    each capture's counts across the combinations of a sweep (only the excluded target changes).
    """
    seen = {} if seen is None else seen
    files = [f for f in ds.select("tshark") if int(f.labels.get("r2t_window", 1)) >= 2]
    kept = [f for f in files if _capture_key(ds, f) != target_key]
    for f in kept:
        if f.rel not in seen:
            seen[f.rel] = pacing.file_counts(ds.tshark_timeline(f), int(f.labels["r2t_window"]))
    return pacing.combine((f.rel, seen[f.rel]) for f in kept)


def _capture_key(ds: Measurements, f: RawFile) -> str:
    """The configuration key of a capture (a capture of the target is never read)."""
    if not all(k in f.labels for k in RUN_LABELS):
        return ""
    return forecast_matrix.configuration_of(ds, pd.Series(f.labels)).key()


def ethernet_mtu(why: str) -> Value:
    """Ethernet's MTU as a default path MTU, with ``why`` no measured one was taken."""
    return Value(float(forecast.ETHERNET_MTU_BYTES), Source("default", f"Ethernet's ({why})"))


ETHERNET_MTU = ethernet_mtu("no path MTU given")


@dataclass(frozen=True)
class EngineInputs:
    """What one forecast was made from: today, the target, the pacing and the files left out."""

    today: forecast.Today
    group: Group
    chosen_because: str
    target: forecast.Configuration
    evidence: pacing.PacingEvidence
    pacing_note: str
    left_out: tuple[str, ...]
    ping_file: str  # today's ping log: the floor of the latency distribution
    today_rtt_ms: np.ndarray  # its round trips (ms)
    target_ping: TargetPing | None = None  # the target network's ping (--ping), None: today's network
    mtu: Value = ETHERNET_MTU  # the path MTU each round's packets are cut at
    one_way_from: str = "today's"  # where the target's one-way delay came from
    tail_error: Mapping[float, Value] | None = None  # the tail model's own error (tail_errors), None: unknown


@dataclass(frozen=True)
class TargetPing:
    """The target network's ping sample (``--ping``): its round trips (ms) and the file they came from."""

    rtt_ms: np.ndarray
    file: str

    def one_way_ms(self, today: forecast.Configuration, today_rtt_ms: np.ndarray) -> float:
        """The target's one-way delay: today's plus half the difference of the two samples' mean RTTs."""
        return today.one_way_ms + (float(np.nanmean(self.rtt_ms)) - float(np.nanmean(today_rtt_ms))) / 2


def blind_errors(
    raw_root: Path, preregistered_root: Path, sweeps: tuple[str, ...] = BLIND_SWEEPS
) -> pd.DataFrame:
    """The engine's absolute error (per cent) on each frozen forecast of the blind sweeps present.

    A sweep is used when both its frozen forecasts (checked against their pre-registration's
    sha256) and its raw data are in the project; one row per target (:data:`ERROR_COLUMNS`).
    """
    frames = []
    for sweep in sweeps:
        folder, raw = preregistered_root / sweep, raw_root / sweep
        if not (folder / forecast_matrix.FROZEN_FILE).is_file() or not (raw / datasets.MANIFEST).is_file():
            continue
        m = forecast_matrix.score_frozen(forecast_matrix.load_frozen(folder), lab.load(raw), sweep)
        mine = m.pairs[m.pairs["method"] == forecast_matrix.ENGINE]
        frames.append(mine.assign(sweep=sweep)[ERROR_COLUMNS])
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=ERROR_COLUMNS)


MAX_TAIL_ERROR = 0.5  # an error of 50 % or more leaves no upper bound worth printing: capped there
TAIL_SWEEP = "lab-iscsi-2026-jitter5"  # the jitter sweep the FIFO line was pre-registered for
TAIL_LEVELS = (0.5, 0.99)  # the percentiles that sweep scored the tail model at
TAIL_ERROR_KIND = "tail-errors"  # what the keep cache holds the tail model's scored errors under


def tail_errors(raw_root: Path, level: float = forecast_matrix.CI_LEVEL) -> dict[float, Value]:
    """The ``level`` quantile of the tail model's absolute error per percentile, where it was tested blind.

    Scored on :data:`TAIL_SWEEP` (pre-registered for the simulated FIFO line), every file read and
    checked against its sha256; the scoring is kept across processes by those files and the code.
    Empty when the sweep is not in the project.
    """
    raw = raw_root / TAIL_SWEEP
    if not (raw / datasets.MANIFEST).is_file():
        return {}
    from iscsi_report.analyses import lab_tails
    from iscsi_report.core import keep
    from iscsi_report.core.digest import code_digest, sha256_bytes

    ds = lab_tails.load(raw)
    for f in ds.files:
        ds.text(f)  # read and checked against the manifest's sha256 before a kept scoring is trusted
    inputs = sha256_bytes("\n".join(f"{f.rel} {f.sha256}" for f in ds.files).encode())
    here = Path(__file__).resolve().parent
    code = code_digest(here, here.parent / "core")[:16]
    scored = keep.once(
        keep.path_for(TAIL_ERROR_KIND, code, inputs),
        lambda: lab_tails.score_fifo(ds, lab_tails.FIFO_DECLARED),
        lambda kept: isinstance(kept, pd.DataFrame),
    )
    out = {}
    for p in TAIL_LEVELS:
        name = distribution.percentile_key(p).removesuffix("_ms")
        column = f"{name}_error_pct"
        what = (
            f"{100 * level:.0f} % quantile of the tail model's absolute {name} error on the "
            f"{len(scored)} configurations of {TAIL_SWEEP}, pre-registered for it"
        )
        out[p] = Value(float(np.quantile(scored[column].abs(), level)), Source("measured", what))
    return out


def own_error(errors: pd.DataFrame, target_key: str, level: float = forecast_matrix.CI_LEVEL) -> Value | None:
    """The ``level`` quantile of the engine's blind errors, the target's own left out (None: none left).

    A blind sweep may have measured the very configuration being forecast: its error there is a
    measurement of the target, so it never enters the target's interval.
    """
    kept = errors[errors["target"] != target_key]
    if kept.empty:
        return None
    counts = ", ".join(f"{sweep} ({n})" for sweep, n in kept.groupby("sweep").size().items())
    what = (
        f"{100 * level:.0f} % quantile of the engine's absolute error on {len(kept)} forecasts frozen before "
        f"the lab's blind sweeps ran: {counts}"
    )
    return Value(float(np.quantile(kept["abs_error_pct"], level)), Source("measured", what))


def prepare(
    ds: Measurements,
    combo: Mapping[str, Any],
    direction: model.Direction,
    today_selection: Mapping[str, Any],
    pacing_flag: model.Pacing | None,
    seen: dict[str, pacing.Counts] | None = None,
    errors: pd.DataFrame | None = None,
    target_ping: TargetPing | None = None,
    engine_version: int = forecast.ENGINE_VERSION,
    first_r2t_ms: Mapping[str, np.ndarray] | None = None,
) -> EngineInputs:
    """Today's system read (its files only) and the target built from the flags, ready for the engine.

    ``errors`` (:func:`blind_errors`): the engine's own error widens the interval; None: today's
    measurement error alone. ``target_ping``: the target network's ping, which sets the target's
    one-way delay unless ``--one-way-ms`` does, and the round trips of its latency distribution.
    From ``engine_version`` 3, today's host time per R2T round comes from today's captures
    (``first_r2t_ms``, :func:`forecast_matrix.captured_first_r2t_ms`, read here when not given).
    """
    group, because = choose_today(groups(ds), stated_settings(combo), today_selection)
    base = forecast_matrix.configuration_of(ds, pd.Series(_group_row(group, group.sizes[0])))
    target = target_configuration(ds, base, combo, direction)
    rows, left_out = todays_runs(ds, group, target.key())
    ping_file = str(rows["ping_file"].iloc[0])
    today_rtt = ds.ping(next(p for p in ds.select("ping") if p.rel == ping_file)).rtt_ms
    one_way_from = "--one-way-ms" if "one_way_ms" in combo else "today's"
    if target_ping is not None and "one_way_ms" not in combo:
        target = replace(target, one_way_ms=target_ping.one_way_ms(base, today_rtt))
        one_way_from = f"--ping {target_ping.file}: today's plus half the difference of the mean round trips"
    if engine_version >= forecast_matrix.ROUND_HOST_VERSION and first_r2t_ms is None:
        first_r2t_ms = forecast_matrix.captured_first_r2t_ms(ds)
    t = forecast_matrix.today(ds, rows, engine_version=engine_version, first_r2t_ms=first_r2t_ms)
    evidence = read_pacing(ds, target.key(), seen)
    chosen, note = _pacing_choice(evidence, pacing_flag)
    t = replace(
        t,
        pacing=chosen,
        pacing_source=Source("measured" if note.startswith("detected") else "default", note),
        cpu_cores=int(combo.get("cpu_cores", t.cpu_cores)),
        pdu_header_bytes=int(combo.get("pdu_header_bytes", t.pdu_header_bytes)),
        model_error_pct=None if errors is None else own_error(errors, target.key()),
    )
    mtu = path_mtu(ds, str(rows["iperf3_file"].iloc[0]))
    return EngineInputs(
        t,
        group,
        because,
        target,
        evidence,
        note,
        tuple(left_out),
        ping_file,
        today_rtt,
        target_ping,
        mtu,
        one_way_from,
    )


def _pacing_choice(evidence: pacing.PacingEvidence, given: model.Pacing | None) -> tuple[model.Pacing, str]:
    """The pacing used and why: --r2t-pacing when given, else the detected one, else the default."""
    if given is not None:
        return given, f"--r2t-pacing {given} (as given; the captures say: {evidence.reason()})"
    if evidence.pacing is not None:
        return evidence.pacing, f"detected: {evidence.reason()}"
    default = model.DEFAULT_ASSUMPTIONS.r2t_pacing
    return default, f"default {default} (the pacing was {evidence.reason()}; give --r2t-pacing)"


MTU_LABEL = "path_mtu_bytes"  # the label a dataset's iperf3 file records its path's MTU under


def path_mtu(ds: Measurements, iperf3_rel: str) -> Value:
    """The path MTU (bytes) today's iperf3 file records, else Ethernet's, with its source."""
    f = next(p for p in ds.select("iperf3") if p.rel == iperf3_rel)
    if MTU_LABEL in f.labels:
        return Value(float(f.labels[MTU_LABEL]), Source("measured", f"{MTU_LABEL} of {iperf3_rel}"))
    return ethernet_mtu(f"{iperf3_rel} records none")


TAIL_WORDS = {
    distribution.PER_PACKET: (
        "the target's ping is more jittered than today's: each packet meets an extra delay "
        "deconvolved from it over today's ping, through a first-in, first-out line (the model the "
        "lab's fifth jitter sweep tested, fixed before it ran, on rounds of a few packets; many more "
        "packets per round, as at Ethernet's MTU, no sweep has tested)"
    ),
    distribution.PER_ROUND: (
        "the target's ping is no more jittered than today's: each round meets one whole round trip "
        "drawn from it (no per-packet extra; the lab tested jitter added to a steady network only)"
    ),
}


def percentiles(
    f: forecast.Forecast,
    today: forecast.Today,
    target_rtt_ms: np.ndarray,
    today_rtt_ms: np.ndarray,
    source: str,
    mtu: Value,
    draws: int = distribution.N_DRAWS,
    tail_error: Mapping[float, Value] | None = None,
) -> dict[str, Any]:
    """p50, p90, p99 and p99.9 of a write's latency: the engine's mean through the one tail model.

    :func:`distribution.forecast_tail` on each round's packets (at the path MTU ``mtu``), the
    target's ping (``source``) over today's. Forecast for writes at queue depth 1 only. With
    ``tail_error`` (:func:`tail_errors`), the percentiles the lab scored carry an interval, in the
    case the lab tested (per packet) only.
    """
    if f.target.queue_depth != 1 or f.target.direction != "write":
        why = (
            "at queue depth 1 only"
            if f.target.queue_depth != 1
            else "for writes only (the lab tested no read's tail)"
        )
        return {"p50_ms": None, "p99_ms": None, "percentiles_note": f"forecast {why}"}
    packets = forecast.round_packets(today, f.target, mtu_bytes=int(mtu.value))
    offsets = [distribution.packet_offsets_ms(p, f.target.link_bps) for p in packets]
    d, rule = distribution.forecast_tail(f.unloaded_ms, target_rtt_ms, today_rtt_ms, offsets, draws=draws)
    out: dict[str, Any] = {distribution.percentile_key(p): v for p, v in d.quantiles.items()}
    out |= _tail_intervals(d.quantiles, rule, tail_error or {})
    out["percentiles_rule"] = rule
    out["percentiles_note"] = (
        f"{len(packets)} rounds per write of up to {max(len(p) for p in packets)} packets at a path MTU of "
        f"{mtu.value:.0f} bytes ({mtu.source.what}); the round trips from {source}; {TAIL_WORDS[rule]}; "
        "the mean is the engine's"
    )
    return out


def _tail_intervals(
    quantiles: Mapping[float, float], rule: str, tail_error: Mapping[float, Value]
) -> dict[str, Any]:
    """``p50_ci_ms`` and the like: the measured values the lab's tail error allows, and what they hold.

    An error e per cent of the measured value puts the measured value between forecast / (1 + e)
    and forecast / (1 - e). Given only where the model was tested (per packet, a sweep present).
    """
    if rule != distribution.PER_PACKET:
        return {"percentiles_interval": "none (no sweep tested this case)"}
    if not tail_error:
        return {"percentiles_interval": f"none ({TAIL_SWEEP}, where the tail model was tested, is not here)"}
    out: dict[str, Any] = {}
    for p, err in tail_error.items():
        q, e = quantiles[p], min(err.value / 100, MAX_TAIL_ERROR)
        out[distribution.percentile_key(p).replace("_ms", "_ci_ms")] = [q / (1 + e), q / (1 - e)]
    out["percentiles_interval"] = "; ".join(v.source.what for v in tail_error.values())
    return out


def document(ds: Measurements, e: EngineInputs) -> dict[str, Any]:
    """One engine forecast as a JSON-ready document: the answer, its terms, bounds and every input."""
    f = forecast.forecast(e.today, e.target)
    c = e.target
    other = e.target_ping
    target_rtt, source = (e.today_rtt_ms, e.ping_file) if other is None else (other.rtt_ms, other.file)
    spread = percentiles(f, e.today, target_rtt, e.today_rtt_ms, source, e.mtu, tail_error=e.tail_error)
    return spread | {
        "dataset": ds.name,
        "method": "forecast engine (iscsi_report.core.forecast)",
        "engine_version": e.today.engine_version,
        "engine": forecast.ENGINE_VERSIONS[e.today.engine_version],
        "direction": c.direction,
        "bs_bytes": c.bs_bytes,
        "queue_depth": c.queue_depth,
        "op_ms": f.op_ms,
        "ci_low_ms": f.ci_low_ms,
        "ci_high_ms": f.ci_high_ms,
        "unloaded_ms": f.unloaded_ms,
        "terms": f.terms_ms,
        "iops": f.mib_per_s * BYTES_PER_MIB / c.bs_bytes,
        "mib_per_s": f.mib_per_s,
        "binding": f.binding,
        "ceilings_mib_per_s": {k: (v if math.isfinite(v) else None) for k, v in f.ceilings_mib_per_s.items()},
        "r2t_pacing": e.today.pacing,
        "r2t_pacing_source": e.pacing_note,
        "target": _configuration_doc(c),
        "today": {
            "settings": e.group.name(),
            "chosen": e.chosen_because,
            "block_sizes_bytes": [m.bs_bytes for m in e.today.measured],
            "runs_left_out_as_the_target": list(e.left_out),
        },
        "inputs": {name: _value_doc(v) for name, v in e.today.inputs().items()},
        "network": {
            "one_way_ms": f.network_one_way_ms,
            "one_way_from": e.one_way_from,
            "link_bps": f.network_link_bps,
        },
        "interval": interval_words(e.today.model_error_pct),
        "scope": scope_words(c),
    }


# The smallest read at which a step at the lab's target was seen (lab-iscsi-2026-blind2; the reads
# sweeps traced it to tgtd's allocator): a read this large or larger may take milliseconds more
# than any forecast from writes says, and no blind sweep tested one.
READ_STEP_SEEN_BYTES = 3328 * BYTES_PER_KIB


def scope_words(c: forecast.Configuration) -> str:
    """Whether the lab's blind sweeps tested a forecast like this one, in words (large reads: not)."""
    if c.direction == "read" and c.bs_bytes >= READ_STEP_SEEN_BYTES:
        return (
            f"outside the tested scope: reads of {READ_STEP_SEEN_BYTES // BYTES_PER_KIB:,} KiB and more took "
            "milliseconds longer at the lab's tgt than any forecast from writes, from the target's memory "
            "allocator (the Forecasts chapter, 'Why reads fall short'); the engine does not model it"
        )
    return "inside the scope the lab's blind sweeps tested"


def interval_words(own: Value | None) -> str:
    """What the interval holds: today's measurement error, and the engine's own where it is known."""
    if own is None:
        return (
            "95 %, from today's measurement error only (no blind sweep of the lab in this project: "
            "the engine's own error is in the Forecasts chapter)"
        )
    return (
        f"95 %: today's measurement error and the engine's own error where it forecast blind "
        f"({own.value:.1f} % of the forecast, the {own.source.what}), combined"
    )


def _configuration_doc(c: forecast.Configuration) -> dict[str, Any]:
    """The target configuration as the flags name it."""
    p = c.params
    return {
        "one_way_ms": c.one_way_ms,
        "link_mbps": c.link_bps / BITS_PER_MBIT,
        "max_outstanding_r2t": p.max_outstanding_r2t,
        "target_r2t_window": c.target_r2t_window,
        "first_burst": p.first_burst_bytes,
        "max_burst": p.max_burst_bytes,
        "max_recv_data_segment": p.max_recv_data_segment_bytes,
        "immediate_data": p.immediate_data,
        "initial_r2t": p.initial_r2t,
        "key": c.key(),
    }


def _value_doc(v: Value) -> dict[str, Any]:
    """One input: value, standard error, source kind and what it is."""
    return {"value": v.value, "se": v.se, "kind": v.source.kind, "source": v.source.what}


def refuse_unsupported(given: Mapping[str, Any]) -> None:
    """A clear error for options a dataset of iSCSI runs does not take (the device and CPU are measured)."""
    extra = sorted(set(given) - ENGINE_OPTIONS)
    if extra:
        flags = ", ".join("--" + n.replace("_", "-") for n in extra)
        raise ReportError(
            f"{flags}: not taken with a dataset of iSCSI runs, whose forecast starts from today's "
            "measured device, CPU and host (the forecasting engine)"
        )


def text(doc: Mapping[str, Any]) -> str:
    """The engine document for people: the answer first, then its terms, today and the sources."""
    t = doc["target"]
    lines = [
        f"forecast of an iSCSI {doc['direction']} of {doc['bs_bytes']} bytes at queue depth "
        f"{doc['queue_depth']}: {doc['op_ms']:.3f} ms (95 % {doc['ci_low_ms']:.3f}-{doc['ci_high_ms']:.3f}), "
        f"{doc['mib_per_s']:.2f} MiB/s, bound by {doc['binding']}",
        f"target: one-way {t['one_way_ms']:g} ms, {t['link_mbps']:g} Mbit/s, "
        f"window {t['target_r2t_window']}, FirstBurst {t['first_burst'] // BYTES_PER_KIB} KiB, "
        f"segment {t['max_recv_data_segment'] // BYTES_PER_KIB} KiB "
        f"(one-way delay: {doc['network']['one_way_from']})",
        _percentiles_line(doc),
        f"scope: {doc['scope']}",
        f"engine: version {doc['engine_version']}, {doc['engine']}",
        f"R2T pacing: {doc['r2t_pacing_source']}",
        f"today: {doc['today']['settings']} ({doc['today']['chosen']})",
        f"{'term':<26}{'ms':>10}",
    ]
    lines += [f"{name:<26}{ms:>10.3f}" for name, ms in doc["terms"].items()]
    lines.append("inputs (today's system):")
    lines += [
        f"  {n:<24}{e['value']:>14.6g} ± {e['se']:.3g}  {e['kind']}: {e['source']}"
        for n, e in doc["inputs"].items()
    ]
    return "\n".join(lines)


def _percentiles_line(doc: Mapping[str, Any]) -> str:
    """The forecast percentiles in one line with how they were drawn, or why there are none."""
    if doc.get("p50_ms") is None:
        return f"percentiles: none ({doc['percentiles_note']})"
    levels = [distribution.percentile_key(p) for p in distribution.QUANTILES]
    shown = ", ".join(f"{k.removesuffix('_ms').replace('_', '.')} {doc[k]:.3f}" for k in levels)
    return f"percentiles (ms): {shown} ({doc['percentiles_note']})"


# ---- forecasts frozen before a sweep runs (pre-registration) ----------------------------------

FROZEN_COLUMNS = [
    "target",
    "rw",
    "queue_depth",
    "bs_bytes",
    "one_way_delay_ms",
    "link_mbps",
    "r2t_window",
    "iscsi_parameters",
    "today",
    "group",
    "forecast engine",
    "blog formula",
    "blog formula, one scale factor from today",
    "ci_low_ms",
    "ci_high_ms",
    "binding",
    "r2t_pacing",
]


def frozen_forecast(
    ds: Measurements,
    combo: Mapping[str, Any],
    direction: model.Direction,
    errors: pd.DataFrame | None = None,
    engine_version: int = forecast.ENGINE_VERSION,
    first_r2t_ms: Mapping[str, np.ndarray] | None = None,
) -> dict[str, Any]:
    """One target forecast from ``ds`` by the engine and both baselines, as a row to freeze.

    The row holds everything needed to score it later against a sweep of the target: its key,
    its settings, today's settings and what differs (the group), and the three forecasts.
    """
    e = prepare(
        ds,
        combo,
        direction,
        {},
        None,
        errors=errors,
        engine_version=engine_version,
        first_r2t_ms=first_r2t_ms,
    )
    f = forecast.forecast(e.today, e.target)
    blog_ms = forecast_matrix.blog_ms(e.today, e.target)
    stated = {**e.group.labels, **stated_settings(combo)}
    return {
        "target": e.target.key(),
        "rw": direction,
        "queue_depth": e.target.queue_depth,
        "bs_bytes": e.target.bs_bytes,
        "one_way_delay_ms": stated["one_way_delay_ms"],
        "link_mbps": stated["link_mbps"],
        "r2t_window": int(stated["r2t_window"]),
        "iscsi_parameters": stated["iscsi_parameters"],
        "today": e.group.name(),
        "group": differing(e.group.labels, stated, e.group.sizes, e.target),
        forecast_matrix.ENGINE: f.op_ms,
        forecast_matrix.BLOG: blog_ms,
        forecast_matrix.BLOG_SCALED: blog_ms * forecast_matrix.scale_factor(e.today),
        "ci_low_ms": f.ci_low_ms,
        "ci_high_ms": f.ci_high_ms,
        "binding": f.binding,
        "r2t_pacing": e.today.pacing,
    }


def differing(
    today: Mapping[str, Any], target: Mapping[str, Any], sizes: list[int], c: forecast.Configuration
) -> str:
    """The forecast rule's group: which one dimension differs from today, or two or more at once."""
    names = {
        "one_way_delay_ms": "delay",
        "link_mbps": "link rate",
        "r2t_window": "R2T window",
        "iscsi_parameters": "immediate data and segment",
    }
    differ = [names[k] for k in names if today[k] != target[k]]
    differ += ["block size"] if c.bs_bytes not in sizes else []
    differ += ["queue depth"] if c.queue_depth != 1 else []
    differ += ["direction"] if c.direction != "write" else []
    return differ[0] if len(differ) == 1 else forecast_matrix.SEVERAL
