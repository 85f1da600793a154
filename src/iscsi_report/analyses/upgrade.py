"""Your system, your upgrade: a user's measured system carried by the forecasting engine to upgrades.

Today's system is what a user's dataset measured: the network by ping (mean round trip at the
ping interval closest to the protocol's spacing, halved) and forward TCP iperf3, the device by
local fio (mean latency and throughput of sequential direct writes at queue depth 1, per block
size), and the negotiated keys from the manifest (RFC 7143's defaults when it records none, said
so). Each scenario changes one thing (a link rate, the network of another dataset, MaxOutstandingR2T,
the device, the queue depth) and :func:`iscsi_report.core.forecast.forecast` gives its mean
per-write latency, throughput, binding bound and interval.

The device term is the measured local latency at the block size, interpolated linearly between
measured sizes (never extrapolated: a block size outside the measured range is refused) and its
throughput ceiling the measured local throughput there, so no forecast can exceed what the disk
wrote on its own. With no iSCSI run today there is no host residual: the forecast is the protocol,
wire and device alone, a lower bound on the latency, and the page says so.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from iscsi_report.analyses import dataset_forecast, device_term, r2t, storage
from iscsi_report.analyses import network as network_analysis
from iscsi_report.analyses.projections import MissingDataError
from iscsi_report.core import forecast, model
from iscsi_report.core.errors import ReportError
from iscsi_report.core.forecast import Source, Value
from iscsi_report.core.measurements import Measurements
from iscsi_report.core.units import BITS_PER_MBIT, BYTES_PER_MIB, MS_PER_S

GBE_1_BPS = 1e9  # 1 Gigabit Ethernet's wire rate
GBE_10_BPS = 1e10  # 10 Gigabit Ethernet's wire rate
SATA3_LINE_BPS = 6e9  # SATA revision 3.0 line rate
SATA_8B10B = 0.8  # 8b/10b coding: 8 data bits per 10 line bits
SATA3_BYTES_PER_S = SATA3_LINE_BPS * SATA_8B10B / 8  # 600 MB/s: the interface's payload ceiling
WIDE_WINDOW = 16  # MaxOutstandingR2T a tuned initiator and target negotiate
DEEP_QUEUE = 8  # operations in flight for the queue-depth scenario
TAIL_DRAWS = 5_000  # simulated writes per scenario: a p99 from 50 draws beyond it, to a few per cent
NOMINAL_LABELS = ("link_mbps", "link_limit_mbps")  # iperf3 labels naming the network's nominal rate
DEFAULT_PING_INTERVAL_S = r2t.DEFAULT_PING_INTERVAL_S
# Bounds of a declared scenario: beyond them a value is a typo, not a network or a disk.
MAX_ONE_WAY_MS = 10_000.0  # 10 s one way: a satellite hop is 300 ms
MAX_LINK_MBPS = 10_000_000.0  # 10 Tbit/s
MAX_DEVICE_MIB_S = 1_000_000.0  # about 1 TB/s
MAX_OUTSTANDING_R2T = 65_535  # RFC 7143: 1 to 65535
MAX_QUEUE_DEPTH = 65_536


@dataclass(frozen=True)
class Device:
    """A device as the engine takes it: time per write and throughput ceiling by size, with a source."""

    name: str
    ms_at: Callable[[int], float]  # device time of one write of that size (ms)
    rate_at: Callable[[int], float]  # throughput ceiling at that size (bytes per second)
    source: Source
    says: Callable[[int], str] = lambda _bs: ""  # the page's sentence on how the term is read at a size


def measured_devices(ds: Measurements) -> dict[str, Device]:
    """Per device: the device term of :mod:`device_term` (the model chapter's), from local fio.

    A sane fit or the measured per-size times, never faster than the disk wrote locally; its
    ceiling is local fio's throughput at the size.
    """
    runs = storage.fio_runs(ds)
    terms, _ = device_term.device_terms(runs) if len(runs) else ({}, {})
    out: dict[str, Device] = {}
    for name, term in terms.items():
        files = ", ".join(sorted(storage.model_groups(runs)[name]["file"]))
        out[name] = Device(
            name=name,
            ms_at=term.write_ms,
            rate_at=term.bytes_per_s,
            source=Source("measured", f"local fio, sequential direct writes at queue depth 1: {files}"),
            says=functools.partial(_sentence, term),
        )
    return out


def _sentence(term: device_term.DeviceTerm, bs_bytes: int) -> str:
    """How the device term is read for a whole write of ``bs_bytes`` (the model chapter's words)."""
    return term.sentence(bs_bytes, bs_bytes)


def sata_ssd() -> Device:
    """A SATA SSD as its interface allows at best: transfer at 600 MB/s, no access time (a bound)."""
    return Device(
        name="SATA SSD (interface limit)",
        ms_at=lambda b: b / SATA3_BYTES_PER_S * MS_PER_S,
        rate_at=lambda _b: SATA3_BYTES_PER_S,
        source=Source(
            "nominal",
            "SATA 6 Gbit/s after 8b/10b coding (600 MB/s), no access time: the best any SATA SSD can do",
        ),
        says=lambda _b: "device term: the SATA interface's 600 MB/s, no access time (a bound)",
    )


@dataclass(frozen=True)
class Network:
    """A measured network: one-way ms (mean RTT / 2) with its se, TCP rate, nominal rate, files."""

    name: str
    one_way: Value
    link: Value
    nominal_bps: float
    ping_interval_s: float
    rtt_ms: tuple[float, ...] = ()  # the ping sample at that spacing: the spread of the round trips


@dataclass(frozen=True)
class Networks:
    """Usable networks by label, and why each other measured network was left out (said, not dropped)."""

    usable: dict[str, Network] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)

    def chosen(self, given: str, dataset: str) -> Network:
        """The named usable network, or the only one; the error names the networks left out and why."""
        return self.usable[choose(self.usable, given, "network", dataset, self.left_out)]


def measured_networks(ds: Measurements, ping_interval_s: float) -> Networks:
    """Per network label with both iperf3 and ping within ``PING_INTERVAL_FACTOR`` of ``ping_interval_s``.

    A ping at another spacing measures another network (the blog's Wi-Fi: 2.95 ms mean at 2 ms,
    5.50 ms at 1 s), so a network pinged only far from the protocol's spacing is left out, with why.
    """
    samples = network_analysis.rtt_samples(ds) if ds.select("ping") else pd.DataFrame()
    iperf = r2t.iperf_rates(ds)
    out = Networks()
    mixed = network_analysis.mixed_paths(samples) if len(samples) else {}
    for name in sorted(set(samples.get("network", [])) & set(iperf.get("network", []))):
        on_net = samples[samples["network"] == name]
        intervals = pd.DataFrame({"interval_s": sorted(set(on_net["interval_s"]))})
        closest = r2t.closest_interval(intervals, ping_interval_s)
        if closest.empty:
            out.left_out[str(name)] = r2t.ping_missing(intervals, ping_interval_s)
            continue
        interval = float(closest["interval_s"].iloc[0])
        if (str(name), interval) in mixed:
            out.left_out[str(name)] = mixed[(str(name), interval)]
            continue
        rtt = on_net.loc[on_net["interval_s"] == interval, "rtt_ms"].to_numpy(float)
        files = sorted(set(on_net.loc[on_net["interval_s"] == interval, "file"]))
        runs = iperf[(iperf["network"] == name) & network_analysis.capacity_runs(iperf)]
        if runs.empty or rtt.size < 2:
            out.left_out[str(name)] = "no forward TCP iperf3 run" if runs.empty else "fewer than 2 pings"
            continue
        bps = float(runs["received_mbit_per_s"].mean()) * BITS_PER_MBIT
        one_way = Value(
            float(rtt.mean()) / 2,
            Source(
                "measured", f"ping mean RTT / 2 at {interval * MS_PER_S:g} ms spacing: {', '.join(files)}"
            ),
            float(rtt.std(ddof=1)) / math.sqrt(rtt.size) / 2,
        )
        link = Value(bps, Source("measured", f"iperf3 forward TCP: {', '.join(sorted(runs['file']))}"))
        nominal = _nominal_bps(ds, str(name), bps)
        sample = tuple(float(x) for x in rtt)
        out.usable[str(name)] = Network(str(name), one_way, link, nominal, interval, sample)
    return out


def _nominal_bps(ds: Measurements, name: str, measured_bps: float) -> float:
    """The network's nominal rate from an iperf3 file's label, else what TCP measured."""
    for f in ds.select("iperf3", network=name):
        for label in NOMINAL_LABELS:
            if label in f.labels:
                return float(f.labels[label]) * BITS_PER_MBIT
    return measured_bps


def params_of(ds: Measurements) -> tuple[model.IscsiParams, str]:
    """The negotiated keys of the dataset's only parameter set, or RFC 7143's defaults (said so)."""
    sets = r2t.parameter_sets(ds.iscsi_parameters, ds.root / "manifest.yaml")
    if sets.what_if or len(ds.iscsi_parameters) != 1:
        return model.IscsiParams(), "RFC 7143 defaults (the dataset records no single negotiated set)"
    name, keys = next(iter(ds.iscsi_parameters.items()))
    params = model.IscsiParams(
        first_burst_bytes=int(keys["FirstBurstLength"]),
        max_burst_bytes=int(keys["MaxBurstLength"]),
        immediate_data=str(keys["ImmediateData"]).lower() == "yes",
        initial_r2t=str(keys["InitialR2T"]).lower() == "yes",
        max_outstanding_r2t=int(keys.get("MaxOutstandingR2T", model.DEFAULT_MAX_OUTSTANDING_R2T)),
        max_recv_data_segment_bytes=int(keys["MaxRecvDataSegmentLength"]),
    )
    return params, f"negotiated set {name} from the manifest"


def today_of(
    net: Network, device: Device, params: model.IscsiParams, bs_bytes: int, pacing: model.Pacing
) -> forecast.Today:
    """Today's system for the engine: the measured network and device, no iSCSI run (no residual)."""
    configuration = forecast.Configuration(
        direction="write",
        bs_bytes=bs_bytes,
        queue_depth=1,
        params=params,
        one_way_ms=net.one_way.value,
        link_bps=net.nominal_bps,
    )
    return forecast.Today(
        configuration=configuration,
        one_way_ms=net.one_way,
        link_bps=net.link,
        pacing=pacing,
        pacing_source=Source("default", f"{pacing} R2T pacing (no capture of today's target)"),
        device_ms=device.ms_at,
        device_source=device.source,
        device_bytes_per_s=device.rate_at,
        cpu_ms=Value(0.0, Source("default", "CPU per operation not charged: no iSCSI target was measured")),
    )


@dataclass(frozen=True)
class Scenario:
    """One upgrade: a name, what it changes (a sentence), and the target it makes of today's configuration."""

    name: str
    what: str
    change_target: Callable[[forecast.Configuration], forecast.Configuration]
    rtt_ms: tuple[float, ...] | None = None  # another network's ping sample (None: today's spread)


def _same(x: Any) -> Any:
    return x


def default_scenarios(today: forecast.Today, others: Mapping[str, Device]) -> list[Scenario]:
    """Today, 1 and 10 GbE wire rates, MaxOutstandingR2T 16, queue depth 8, and each other device."""
    c = today.configuration
    out = [
        Scenario("today", "the system as measured", _same),
        Scenario(
            "1 GbE wire rate",
            "the link at 1 Gbit/s (TCP keeps today's share of the nominal rate)",
            lambda t: replace(t, link_bps=GBE_1_BPS),
        ),
        Scenario(
            "10 GbE wire rate",
            "the link at 10 Gbit/s (TCP keeps today's share of the nominal rate)",
            lambda t: replace(t, link_bps=GBE_10_BPS),
        ),
        Scenario(
            f"MaxOutstandingR2T {WIDE_WINDOW}",
            f"{WIDE_WINDOW} R2Ts outstanding at once ({today.pacing} pacing)",
            lambda t: replace(
                t,
                params=replace(t.params, max_outstanding_r2t=WIDE_WINDOW),
                target_r2t_window=WIDE_WINDOW,
            ),
        ),
        Scenario(
            f"queue depth {DEEP_QUEUE}",
            f"{DEEP_QUEUE} writes in flight (throughput up to the first ceiling)",
            lambda t: replace(t, queue_depth=DEEP_QUEUE),
        ),
    ]
    for dev in others.values():
        out.append(Scenario(dev.name, f"the device replaced: {dev.source.what}", _device(dev)))
    del c
    return out


def _device(dev: Device) -> Callable[[forecast.Configuration], forecast.Configuration]:
    """The target with ``dev`` in place of today's device (time and ceiling by size, with its source).

    A change of the target, not of today: today's host residual is fitted with today's device.
    """
    target_device = forecast.TargetDevice(dev.name, dev.ms_at, dev.rate_at, dev.source)
    return lambda c: replace(c, device=target_device)


def forecasts(
    today: forecast.Today, scenarios: list[Scenario], rtt_ms: tuple[float, ...] = ()
) -> pd.DataFrame:
    """One row per scenario: latency with its interval and percentiles, MiB/s, binding bound, change.

    ``rtt_ms`` is today's ping sample: p50 and p99 of one write come from the one tail model
    (:func:`dataset_forecast.percentiles`) with the scenario's network's sample over today's, at
    queue depth 1 only (NaN above it).
    """
    rows = []
    for s in scenarios:
        f = forecast.forecast(today, s.change_target(today.configuration))
        rows.append(
            _percentiles(today, f, s.rtt_ms if s.rtt_ms is not None else rtt_ms, rtt_ms)
            | {
                "scenario": s.name,
                "what": s.what,
                "op_ms": f.op_ms,
                "ci_low_ms": f.ci_low_ms,
                "ci_high_ms": f.ci_high_ms,
                "mib_per_s": f.mib_per_s,
                "binding": f.binding,
                "device_ms": f.terms_ms["device_ms"],
                "device_ceiling_mib_per_s": f.ceilings_mib_per_s["device"],
                "link_ceiling_mib_per_s": f.ceilings_mib_per_s["link"],
            }
        )
    table = pd.DataFrame(rows)
    tail = ["p50_ms", "p99_ms", "tail_rule"]
    table = table[[c for c in table.columns if c not in tail] + tail]
    base = forecast.forecast(today, today.configuration).mib_per_s
    table["gain_pct"] = 100 * (table["mib_per_s"] / base - 1)
    return table


PATH_MTU = dataset_forecast.ethernet_mtu("no run records the path MTU")


def _percentiles(
    t: forecast.Today, f: forecast.Forecast, target_rtt_ms: tuple[float, ...], today_rtt_ms: tuple[float, ...]
) -> dict[str, Any]:
    """p50 and p99 of one write and the tail rule used (NaN and "" without a sample, or above depth 1)."""
    if not target_rtt_ms or not today_rtt_ms:
        return {"p50_ms": math.nan, "p99_ms": math.nan, "tail_rule": ""}
    target, today = np.asarray(target_rtt_ms, dtype=float), np.asarray(today_rtt_ms, dtype=float)
    found = dataset_forecast.percentiles(
        f, t, target, today, "the scenario's ping", PATH_MTU, draws=TAIL_DRAWS
    )
    out = {k: math.nan if found[k] is None else float(found[k]) for k in ("p50_ms", "p99_ms")}
    return out | {"tail_rule": str(found.get("percentiles_rule", ""))}


def headline(table: pd.DataFrame) -> dict[str, Any]:
    """Today's numbers and the scenario that buys the most throughput."""
    today = table[table["scenario"] == "today"].iloc[0]
    best = table.iloc[int(table["mib_per_s"].to_numpy().argmax())]
    return {
        "today_ms": float(today["op_ms"]),
        "today_mib_per_s": float(today["mib_per_s"]),
        "today_binding": str(today["binding"]),
        "today_p99_ms": float(today["p99_ms"]),
        "today_tail_words": dataset_forecast.TAIL_WORDS.get(str(today["tail_rule"]), "no ping sample"),
        "best": str(best["scenario"]),
        "best_mib_per_s": float(best["mib_per_s"]),
        "best_gain_pct": float(best["gain_pct"]),
        "best_binding": str(best["binding"]),
    }


def choose(
    options: Mapping[str, Any], given: str, what: str, dataset: str, left_out: Mapping[str, str] | None = None
) -> str:
    """The named option, or the only one; a clear error listing the choices (and why others are out)."""
    why = "".join(f"; {name} left out: {reason}" for name, reason in (left_out or {}).items())
    if given:
        if given not in options:
            has = ", ".join(options) or "none"
            raise ReportError(f"dataset {dataset}: no {what} {given!r} (has: {has}{why})")
        return given
    if not options:
        raise MissingDataError(f"dataset {dataset}: no {what} with the measurements a forecast needs{why}")
    return next(iter(options))


def inputs_table(today: forecast.Today) -> pd.DataFrame:
    """Today's numeric inputs with their standard errors, kinds and sources (for the page)."""
    rows = [
        {
            "input": name,
            "value": v.value,
            "standard error": v.se,
            "kind": v.source.kind,
            "source": v.source.what,
        }
        for name, v in today.inputs().items()
    ]
    rows.append(
        {
            "input": "device",
            "value": math.nan,
            "standard error": math.nan,
            "kind": today.device_source.kind,
            "source": today.device_source.what,
        }
    )
    return pd.DataFrame(rows)


def scenario_table(table: pd.DataFrame) -> pd.DataFrame:
    """The scenario forecasts with human headers, in the order the chart shows them."""
    return table.rename(
        columns={
            "scenario": "scenario",
            "what": "what changes",
            "op_ms": "time per write (ms)",
            "ci_low_ms": "95 % low (ms)",
            "ci_high_ms": "95 % high (ms)",
            "mib_per_s": "MiB/s",
            "gain_pct": "change (%)",
            "binding": "binding bound",
            "device_ms": "device time (ms)",
            "device_ceiling_mib_per_s": "device ceiling (MiB/s)",
            "link_ceiling_mib_per_s": "link ceiling (MiB/s)",
            "p50_ms": "p50 per write (ms)",
            "p99_ms": "p99 per write (ms)",
            "tail_rule": "tail drawn",
        }
    )


# ---- scenarios declared in a params file ------------------------------------------------------


class Declared(BaseModel):
    """One scenario as a params file declares it (``scenarios:`` of the upgrade notebook).

    Each key changes one thing; absent keys keep today's value. A network comes from nominal values
    (``one_way_ms``, ``link_mbps``) or another dataset's measurements (``network_dataset`` and
    optionally ``network``); a device from another dataset's local fio (``device_dataset``, optionally
    ``device``) or a spec sheet (``device_mib_s`` with ``device_access_ms``).
    """

    model_config = ConfigDict(extra="forbid")

    name: StrictStr = Field(min_length=1, max_length=80)
    one_way_ms: float | None = Field(default=None, ge=0, le=MAX_ONE_WAY_MS, allow_inf_nan=False)
    link_mbps: float | None = Field(default=None, gt=0, le=MAX_LINK_MBPS, allow_inf_nan=False)
    network_dataset: StrictStr | None = None
    network: StrictStr | None = None
    device_dataset: StrictStr | None = None
    device: StrictStr | None = None
    device_mib_s: float | None = Field(default=None, gt=0, le=MAX_DEVICE_MIB_S, allow_inf_nan=False)
    device_access_ms: float = Field(default=0.0, ge=0, le=MAX_ONE_WAY_MS, allow_inf_nan=False)
    max_outstanding_r2t: StrictInt | None = Field(default=None, ge=1, le=MAX_OUTSTANDING_R2T)
    queue_depth: StrictInt | None = Field(default=None, ge=1, le=MAX_QUEUE_DEPTH)


def declared(items: list[Any], raw_root: Path, today: forecast.Today, where: str) -> list[Scenario]:
    """The scenarios of a params file, each validated (errors name ``where`` and the item's key)."""
    out = []
    for i, item in enumerate(items):
        try:
            spec = Declared.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(str(p) for p in first["loc"]) or "(the item)"
            raise ReportError(f"{where}[{i}].{key}: {first['msg']} (got {first.get('input')!r})") from None
        out.append(_scenario(spec, raw_root, today, f"{where}[{i}]"))
    return out


def _scenario(spec: Declared, raw_root: Path, today: forecast.Today, where: str) -> Scenario:
    """One validated declaration as a scenario (what changes, said in words with its sources)."""
    words: list[str] = []
    other = _other_network(spec, raw_root, today, where)
    target = _target_change(spec, other, today, words)
    device = _device_change(spec, raw_root, where, words)
    if not words:
        raise ReportError(f"{where}: scenario {spec.name!r} changes nothing")
    return Scenario(
        spec.name,
        "; ".join(words),
        lambda c: device(target(c)),
        None if other is None else other[1].rtt_ms,
    )


def _other_network(
    spec: Declared, raw_root: Path, today: forecast.Today, where: str
) -> tuple[Measurements, Network] | None:
    """The network another dataset measured (``network_dataset``), read once; None when not declared."""
    if spec.network_dataset is None:
        return None
    other = _open(raw_root, spec.network_dataset, where)
    return other, measured_networks(other, today_interval(today)).chosen(spec.network or "", other.name)


def _target_change(
    spec: Declared,
    other: tuple[Measurements, Network] | None,
    today: forecast.Today,
    words: list[str],
) -> Callable[[forecast.Configuration], forecast.Configuration]:
    """The change to the configuration: network (another dataset's ``other``), window, queue depth."""
    changes: dict[str, Any] = {}
    if other is not None:
        ds, net = other
        efficiency = today.link_bps.value / today.configuration.link_bps
        extra = today.one_way_ms.value - today.configuration.one_way_ms
        changes |= {"one_way_ms": net.one_way.value - extra, "link_bps": net.link.value / efficiency}
        words.append(
            f"the network of {_named(ds)} ({net.name}: {net.one_way.source.what}; {net.link.source.what})"
        )
    if spec.one_way_ms is not None:
        changes["one_way_ms"] = spec.one_way_ms
        words.append(f"one-way delay {spec.one_way_ms:g} ms")
    if spec.link_mbps is not None:
        changes["link_bps"] = spec.link_mbps * BITS_PER_MBIT
        words.append(f"link {spec.link_mbps:g} Mbit/s nominal")
    if spec.queue_depth is not None:
        changes["queue_depth"] = spec.queue_depth
        words.append(f"queue depth {spec.queue_depth}")
    window = spec.max_outstanding_r2t

    def change(c: forecast.Configuration) -> forecast.Configuration:
        c = replace(c, **changes)
        if window is not None:
            c = replace(c, params=replace(c.params, max_outstanding_r2t=window), target_r2t_window=window)
        return c

    if window is not None:
        words.append(f"MaxOutstandingR2T {window}")
    return change


def _device_change(
    spec: Declared, raw_root: Path, where: str, words: list[str]
) -> Callable[[forecast.Configuration], forecast.Configuration]:
    """The target's device: another dataset's measured one, or a spec sheet's."""
    if spec.device_dataset is not None and spec.device_mib_s is not None:
        raise ReportError(f"{where}: give device_dataset or device_mib_s, not both")
    if spec.device_dataset is not None:
        other = _open(raw_root, spec.device_dataset, where)
        devs = measured_devices(other)
        dev = devs[choose(devs, spec.device or "", "device", other.name)]
        words.append(f"the device {dev.name} of {_named(other)} ({dev.source.what})")
        return _device(dev)
    if spec.device_mib_s is not None:
        rate = spec.device_mib_s * BYTES_PER_MIB
        access = spec.device_access_ms
        source = Source(
            "nominal", f"declared: {spec.device_mib_s:g} MiB/s, {access:g} ms access time per request"
        )
        words.append(f"a device of {spec.device_mib_s:g} MiB/s and {access:g} ms per request (declared)")
        return _device(
            Device(
                name=spec.name,
                ms_at=lambda b: access + b / rate * MS_PER_S,
                rate_at=lambda b: b / (access / MS_PER_S + b / rate),
                source=source,
            )
        )
    return _same


def today_interval(today: forecast.Today) -> float:
    """The ping spacing today's one-way time was read at (from its source), for another dataset."""
    return DEFAULT_PING_INTERVAL_S if today.one_way_ms.source.kind != "measured" else _interval_of(today)


def _interval_of(today: forecast.Today) -> float:
    """The spacing in seconds named in today's ping source ('at 2 ms spacing')."""
    words = today.one_way_ms.source.what.split(" ms spacing")[0].rsplit(" ", 1)[-1]
    try:
        return float(words) / MS_PER_S
    except ValueError:
        return DEFAULT_PING_INTERVAL_S


def _named(ds: Measurements) -> str:
    """A dataset's name, with "reconstructed" when its files are not measurements."""
    return f"{ds.name} (reconstructed, not measured)" if ds.dataset.reconstructed else ds.name


def _open(raw_root: Path, name: str, where: str) -> Measurements:
    """Another dataset of the project, by name; a clear error when it is not there."""
    from iscsi_report.core.measurements import open_dataset

    folder = raw_root / name
    if "/" in name or name.startswith(".") or not (folder / "manifest.yaml").is_file():
        raise ReportError(f"{where}: no dataset {name!r} under {raw_root}")
    return open_dataset(folder)
