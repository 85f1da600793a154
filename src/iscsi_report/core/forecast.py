"""The forecasting engine: today's system, measured, carried to a configuration not yet built.

A user measures *today's* system (ping at the protocol's spacing, iperf3, the device's local fio,
CPU, the negotiated login keys, optionally iSCSI runs and a capture of today's configuration)
and asks what another configuration would give: another delay or link rate, another R2T
window, immediate data or segment size, block size, queue depth or direction. The engine:

1. takes today's network as measured and the target's as the user states it (nominal delay and
   rate), carrying what today's measurement adds to today's nominal values (the stack's own
   one-way time, the share of the nominal rate TCP achieves) to the target;
2. computes the protocol's terms for both with :mod:`iscsi_report.core.model` (trips, wire time
   with PDU headers, exposed R2T rounds under the target's pacing, device, CPU); a target with
   another device (:class:`TargetDevice`, its local fio or spec sheet) pays that device's time
   and ceiling in place of today's;
3. charges the target today's *host residual*: today's measured iSCSI latency less today's
   modelled terms, a host cost the protocol does not explain (zero, and said so, when today has
   no iSCSI measurement): per command and per byte for a target in today's direction, per
   command and per PDU exchanged for a read forecast from writes (a read has no R2T and its
   own Data-In segments, :class:`PerPduHostTime`);
4. caps the result by the link, the device's measured local throughput and the CPU, and names
   the binding bound; at a queue depth above 1 a write also waits where one connection makes it
   wait (engine version 2, :mod:`iscsi_report.core.queueing`: a new command queues behind the data
   ahead of it, so a long path idles the link between R2Ts); gives an interval from the standard
   errors of today's measurements.

Every input carries a :class:`Source`. An input measured on the configuration being forecast is
refused (:class:`LeakageError`): a forecast may use only what today's system shows.
Pure functions, no I/O.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from iscsi_report.core import model, queueing
from iscsi_report.core.errors import ReportError
from iscsi_report.core.units import BITS_PER_BYTE, BYTES_PER_MIB, MS_PER_S

SourceKind = Literal["measured", "nominal", "published", "default"]
Z_95 = 1.959963984540054  # two-sided 95 % normal quantile
# The engine's versions, each scored as declared: 1 took the latency at a queue depth from
# Little's law at the smallest ceiling (as pre-registered for the device sweep); 2 replays several
# writes on one connection (commands queue behind data: :mod:`iscsi_report.core.queueing`); 3 is 2
# with today's host time per R2T round (``Today.per_round_ms``) read from today's captures by the
# calibration (``analyses.forecast_matrix.round_host_time``), not left inside the per-byte residual.
# The default stays 2 until version 3 passes a blind sweep declared for it.
ENGINE_VERSIONS = {
    1: "Little's law at the smallest ceiling",
    2: "version 1, and writes in flight replayed on one connection (commands wait behind data)",
    3: "version 2, and a host time per R2T round measured on today's own captured writes",
}
ENGINE_VERSION = 2


class LeakageError(ReportError):
    """An input of the forecast was measured on the very configuration being forecast."""


@dataclass(frozen=True)
class Source:
    """Where an input comes from: its kind, a description, and the configuration it was measured on."""

    kind: SourceKind
    what: str
    configuration: str | None = None  # Configuration.key() of the measurement; None if none applies


@dataclass(frozen=True)
class Value:
    """A number with its standard error and source."""

    value: float
    source: Source
    se: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.value) and math.isfinite(self.se) and self.se >= 0):
            raise model.ModelInputError(f"{self.source.what}: value {self.value!r} or se {self.se!r} invalid")


@dataclass(frozen=True)
class TargetDevice:
    """The target's device when it is not today's: time and throughput ceiling by request size.

    What a user can know of a device not yet in the system: its local fio (measured on another
    machine, or on the device before it is installed) or a spec sheet; the source says which.
    """

    name: str
    ms_at: Callable[[int], float]  # device time of one request of that size (ms)
    bytes_per_s_at: Callable[[int], float] | None  # throughput ceiling by size (None: not known, none)
    source: Source


@dataclass(frozen=True)
class Configuration:
    """One iSCSI configuration: what a forecast is about, stated as the user would state it."""

    direction: model.Direction
    bs_bytes: int
    queue_depth: int
    params: model.IscsiParams
    one_way_ms: float  # the network's nominal one-way delay
    link_bps: float  # the network's nominal rate
    target_r2t_window: int | None = None  # R2Ts the target itself keeps outstanding (None: as negotiated)
    device: TargetDevice | None = None  # another device than today's (None: today's device)

    def key(self) -> str:
        """A stable text key naming every setting (two configurations are the same iff keys are)."""
        p = self.params
        key = (
            f"{self.direction}|bs={self.bs_bytes}|qd={self.queue_depth}|ow={self.one_way_ms:g}|"
            f"link={self.link_bps:g}|fb={p.first_burst_bytes}|mb={p.max_burst_bytes}|"
            f"imm={int(p.immediate_data)}|ir2t={int(p.initial_r2t)}|r2t={p.max_outstanding_r2t}|"
            f"seg={p.max_recv_data_segment_bytes}|tw={self.target_r2t_window}"
        )
        return key if self.device is None else f"{key}|dev={self.device.name}"


@dataclass(frozen=True)
class Measured:
    """One iSCSI measurement of today's settings: a block size and its mean per-operation latency."""

    bs_bytes: int
    op_ms: Value


Covariance = tuple[tuple[float, float], tuple[float, float]]  # of a fitted line's (intercept, slope)


@dataclass(frozen=True)
class Residual:
    """The host residual fitted over today's runs: a + b x bytes, with its covariance."""

    a_ms: float
    b_ms_per_byte: float
    cov: Covariance
    sizes: int  # distinct block sizes it was fitted on (0: no iSCSI run today, so zero)

    def at(self, bs_bytes: int) -> tuple[float, float]:
        """The residual at ``bs_bytes`` and its standard error."""
        (vaa, vab), (_, vbb) = self.cov
        var = vaa + 2 * bs_bytes * vab + bs_bytes**2 * vbb
        return self.a_ms + self.b_ms_per_byte * bs_bytes, math.sqrt(max(var, 0.0))


@dataclass(frozen=True)
class Today:
    """Today's system as measured: the calibration every forecast starts from."""

    configuration: Configuration
    one_way_ms: Value  # ping RTT / 2 at the protocol's spacing, on today's network
    link_bps: Value  # iperf3 on today's network
    pacing: model.Pacing
    pacing_source: Source
    device_ms: Callable[[int], float]  # local device time per request size (ms)
    device_source: Source
    # Local device throughput per request size (the device ceiling); None: not measured, no ceiling
    device_bytes_per_s: Callable[[int], float] | None
    cpu_ms: Value
    # iSCSI runs of today's settings (delay, rate, keys, window, queue depth, direction) at one or
    # more block sizes: the host residual is fitted over them (a + b x bytes from two sizes on)
    measured: tuple[Measured, ...] = ()
    per_round_ms: Value | None = None  # host time per R2T round (from a capture of today's system)
    cpu_cores: int = 1
    pdu_header_bytes: int = model.BHS_BYTES
    # The engine's own error: the 95th percentile of its absolute error (per cent) on sweeps it was
    # scored on before (split conformal); widens the interval beyond today's measurement error.
    model_error_pct: Value | None = None
    engine_version: int = ENGINE_VERSION  # which of ENGINE_VERSIONS forecasts from this today

    def __post_init__(self) -> None:
        """Refuse an engine version that was never declared (it would silently forecast as another)."""
        if self.engine_version not in ENGINE_VERSIONS:
            known = ", ".join(str(v) for v in ENGINE_VERSIONS)
            raise model.ModelInputError(
                f"engine_version: expected one of {known} (forecast.ENGINE_VERSIONS), "
                f"got {self.engine_version!r}"
            )

    @functools.cached_property
    def measured_keys(self) -> frozenset[str]:
        """The configuration key of each of today's runs (kept: every forecast checks them for leakage)."""
        return frozenset(replace(self.configuration, bs_bytes=m.bs_bytes).key() for m in self.measured)

    @functools.cached_property
    def _breakdowns(self) -> dict[int, model.LatencyBreakdown]:
        """Today's own breakdown by block size, filled as forecasts ask (see :func:`todays_breakdown`)."""
        return {}

    def inputs(self) -> dict[str, Value]:
        """Every numeric input by name (for the leakage check and the provenance table)."""
        named = {"one_way_ms": self.one_way_ms, "link_bps": self.link_bps, "cpu_ms": self.cpu_ms}
        for m in self.measured:
            named[f"op_ms at {m.bs_bytes} B"] = m.op_ms
        if self.per_round_ms is not None:
            named["per_round_ms"] = self.per_round_ms
        if self.model_error_pct is not None:
            named["model_error_pct"] = self.model_error_pct
        return named


@dataclass(frozen=True)
class Forecast:
    """The forecast for one target configuration: latency, its terms and interval, throughput, bound."""

    target: Configuration
    op_ms: float  # mean per-operation latency at the target's queue depth
    ci_low_ms: float
    ci_high_ms: float
    unloaded_ms: float  # one operation alone (queue depth 1)
    terms_ms: dict[str, float]  # the protocol's terms plus the host residual
    mib_per_s: float
    binding: str
    ceilings_mib_per_s: dict[str, float]
    network_one_way_ms: float
    network_link_bps: float
    inputs: dict[str, Value] = field(default_factory=dict)
    device_source: Source | None = None  # where the device term comes from (today's or the target's)


def refuse_leakage(today: Today, target: Configuration) -> None:
    """LeakageError if any input of ``today`` was measured on ``target`` (its key)."""
    key = target.key()
    if key in today.measured_keys:
        raise LeakageError(
            f"today's runs include the configuration being forecast ({key}): its measured latency "
            "would be the answer; leave that run out of today's, or read the measurement"
        )
    for name, v in today.inputs().items():
        if v.source.configuration == key:
            raise LeakageError(
                f"input {name} ({v.source.what}) was measured on the configuration being forecast"
            )
    if target.device is not None and target.device.source.configuration == key:
        raise LeakageError(
            f"the target's device term ({target.device.source.what}) was measured on the configuration "
            "being forecast"
        )


def network_for(today: Today, target: Configuration) -> model.Network:
    """The target's network: its nominal values plus what today's measurement adds to today's nominal."""
    base = today.configuration
    extra_one_way = today.one_way_ms.value - base.one_way_ms  # the stack's own one-way time
    efficiency = today.link_bps.value / base.link_bps  # the share of the nominal rate achieved
    return model.Network(
        one_way_ms=max(target.one_way_ms + extra_one_way, 0.0), link_bps=target.link_bps * efficiency
    )


def _assumptions(today: Today, c: Configuration) -> model.Assumptions:
    """Pacing, target window, host time per round and header bytes for configuration ``c``."""
    per_round = today.per_round_ms.value if today.per_round_ms is not None else 0.0
    return model.Assumptions(
        r2t_pacing=today.pacing,
        target_r2t_window=c.target_r2t_window,
        per_round_ms=per_round,
        pdu_header_bytes=today.pdu_header_bytes,
    )


def device_of(today: Today, c: Configuration) -> TargetDevice:
    """Configuration ``c``'s device: its own when it names one, else today's (time, ceiling, source)."""
    if c.device is not None:
        return c.device
    return TargetDevice("today's device", today.device_ms, today.device_bytes_per_s, today.device_source)


def breakdown(today: Today, c: Configuration, net: model.Network) -> model.LatencyBreakdown:
    """The protocol's terms for configuration ``c`` on ``net`` with its device and today's CPU.

    Today's host residual is fitted with today's device (today's configuration names none), so a
    target with another device is charged that device's time instead of today's, not beside it.
    """
    return model.operation_latency(
        c.direction,
        c.bs_bytes,
        c.params,
        net,
        device_of(today, c).ms_at,
        today.cpu_ms.value,
        device_request_bytes=c.bs_bytes,
        assumptions=_assumptions(today, c),
    )


def _loaded_ms(today: Today, c: Configuration) -> float:
    """The modelled latency of configuration ``c`` (no host residual) at its queue depth."""
    net = network_for(today, c)
    b = breakdown(today, c, net)
    tp = model.throughput(b, net, c.queue_depth, device_bytes_per_s=_dev(today, c))
    return at_depth_ms(today, c, net, tp)


def at_depth_ms(today: Today, c: Configuration, net: model.Network, tp: model.Throughput) -> float:
    """The latency at the queue depth: the ceilings' Little's law, or the wait on one connection if longer."""
    return max(tp.loaded_latency_ms, queued_ms(today, c, net, tp.breakdown.total_ms))


def queued_ms(today: Today, c: Configuration, net: model.Network, unloaded_ms: float) -> float:
    """A write's latency at its queue depth on one connection (version 2; else the unloaded one).

    The device serves one write at a time at its measured local throughput (its ceiling).
    """
    if today.engine_version < 2 or c.direction != "write" or c.queue_depth <= 1:
        return unloaded_ms
    device_ms = c.bs_bytes / _dev(today, c) * MS_PER_S
    x = queueing.exchange_of(c.bs_bytes, c.params, net, _assumptions(today, c), device_ms)
    return queueing.queued_latency_ms(x, c.queue_depth, unloaded_ms)


@functools.lru_cache(maxsize=1024)
def host_residual(today: Today) -> Residual:
    """Today's measured latencies less today's modelled ones, fitted as a + b x bytes (see Residual).

    One block size gives a constant; none gives zero (and the forecast is the model alone).
    """
    zero = ((0.0, 0.0), (0.0, 0.0))
    if not today.measured:
        return Residual(0.0, 0.0, zero, 0)
    bs = np.array([m.bs_bytes for m in today.measured], dtype=float)
    r = np.array(
        [
            m.op_ms.value - _loaded_ms(today, replace(today.configuration, bs_bytes=m.bs_bytes))
            for m in today.measured
        ]
    )
    var_meas = float(np.mean([m.op_ms.se**2 for m in today.measured]))
    if len(set(bs.tolist())) < 2:
        return Residual(float(r.mean()), 0.0, ((var_meas / len(r), 0.0), (0.0, 0.0)), 1)
    intercept, slope, cov = _line_fit(bs, r, var_meas)
    return Residual(intercept, slope, cov, len(set(bs.tolist())))


def _line_fit(x_values: np.ndarray, r: np.ndarray, var_floor: float) -> tuple[float, float, Covariance]:
    """Least squares ``r = a + b x``: (a, b) and their covariance (residual variance at least ``var_floor``).

    The floor is today's own measurement variance: a line through few points that happens to fit
    them exactly must not claim more certainty than the measurements have.
    """
    x = np.column_stack([np.ones_like(x_values), x_values])
    coef, *_ = np.linalg.lstsq(x, r, rcond=None)
    dof = len(r) - x.shape[1]
    rss = float(np.sum((r - x @ coef) ** 2))
    sigma2 = max(rss / dof, var_floor) if dof > 0 else var_floor
    cov = sigma2 * np.linalg.inv(x.T @ x)
    return (
        float(coef[0]),
        float(coef[1]),
        ((float(cov[0, 0]), float(cov[0, 1])), (float(cov[1, 0]), float(cov[1, 1]))),
    )


@dataclass(frozen=True)
class PerPduHostTime:
    """Today's host residual as host time per command and per iSCSI PDU exchanged, with its covariance.

    Each PDU (command, R2T, Data-Out, Data-In, SCSI Response) costs both hosts a receive, a header
    parse and a dispatch. Fitted on today's runs as ``per_command_ms + per_pdu_ms x PDUs``, PDUs
    counted by the protocol for each of today's operations
    (:attr:`iscsi_report.core.model.LatencyBreakdown.pdus_exchanged`). A read exchanges fewer
    PDUs than a write of the same size: no R2T, Data-In cut at the initiator's
    MaxRecvDataSegmentLength (not the target's), the status inside the last Data-In.
    """

    per_command_ms: float
    per_pdu_ms: float
    cov: Covariance

    def at(self, pdus: int) -> tuple[float, float]:
        """The host time of an operation exchanging ``pdus`` PDUs, and its standard error."""
        return Residual(self.per_command_ms, self.per_pdu_ms, self.cov, 0).at(pdus)


def _todays_pdus(today: Today) -> np.ndarray:
    """The PDUs each of today's runs exchanges, counted by the protocol."""
    net = network_for(today, today.configuration)
    return np.array(
        [
            breakdown(today, replace(today.configuration, bs_bytes=m.bs_bytes), net).pdus_exchanged
            for m in today.measured
        ],
        dtype=float,
    )


@functools.lru_cache(maxsize=1024)
def per_pdu_host_time(today: Today) -> PerPduHostTime | None:
    """Fit today's residual per command and per PDU (see :class:`PerPduHostTime`).

    None when today's runs cannot tell the two apart (fewer than two distinct PDU counts).
    """
    pdus = _todays_pdus(today)
    if len(set(pdus.tolist())) < 2:
        return None
    r = np.array([m.op_ms.value for m in today.measured]) - _modelled_today(today)
    var_meas = float(np.mean([m.op_ms.se**2 for m in today.measured]))
    return PerPduHostTime(*_line_fit(pdus, r, var_meas))


def _modelled_today(today: Today) -> np.ndarray:
    """Today's modelled latency (no host residual) at each of today's runs."""
    return np.array(
        [_loaded_ms(today, replace(today.configuration, bs_bytes=m.bs_bytes)) for m in today.measured]
    )


def host_time(today: Today, target: Configuration, b_target: model.LatencyBreakdown) -> tuple[float, float]:
    """The host time today's runs show, carried to ``target`` (breakdown ``b_target``), and its se.

    A target in today's direction carries today's residual per byte (same exchange, same
    segmenting). A target in the other direction (a read forecast from writes, or the reverse)
    carries today's host time per command and per PDU to the PDUs it exchanges: the writes' R2Ts
    and Data-Out segments are not a read's. With no PDU fit possible, the per-byte residual.
    """
    if target.direction != today.configuration.direction and today.measured:
        per_pdu = per_pdu_host_time(today)
        if per_pdu is not None:
            return per_pdu.at(b_target.pdus_exchanged)
    return host_residual(today).at(target.bs_bytes)


# Stands in for "no device ceiling" when the device's throughput was not measured: far above any
# link (10 Tbit/s), so it never binds; the forecast then names no device ceiling.
UNMEASURED_DEVICE_BYTES_PER_S = 1e12 / BITS_PER_BYTE * 10


def _dev(today: Today, c: Configuration) -> float:
    """The device's measured local throughput ceiling at the configuration's request size."""
    rate_at = device_of(today, c).bytes_per_s_at
    if rate_at is None:
        return UNMEASURED_DEVICE_BYTES_PER_S
    return float(rate_at(c.bs_bytes))


def _se_ms(
    today: Today, target: Configuration, b_target: model.LatencyBreakdown, residual_se: float
) -> float:
    """Standard error of the forecast from today's measurements (first order).

    The residual carries today's latency error; the one-way delay's error enters with the trips
    the target pays beyond today's (today's own trips are inside the residual), the host time per
    round likewise.
    """
    b_today = todays_breakdown(today, target.bs_bytes)
    fitted = 1.0 if today.measured else 0.0
    var = residual_se**2
    var += ((b_target.one_way_trips - fitted * b_today.one_way_trips) * today.one_way_ms.se) ** 2
    if today.per_round_ms is not None:
        rounds = b_target.exposed_rounds - fitted * b_today.exposed_rounds
        var += (rounds * today.per_round_ms.se) ** 2
    return math.sqrt(var)


def todays_breakdown(today: Today, bs_bytes: int) -> model.LatencyBreakdown:
    """The protocol's terms of today's own settings at ``bs_bytes`` on today's network, kept per today."""
    kept = today._breakdowns
    if bs_bytes not in kept:
        c = replace(today.configuration, bs_bytes=bs_bytes)
        kept[bs_bytes] = breakdown(today, c, network_for(today, today.configuration))
    return kept[bs_bytes]


def forecast(today: Today, target: Configuration) -> Forecast:
    """Forecast ``target`` from ``today`` alone (see the module docstring); never above a ceiling."""
    refuse_leakage(today, target)
    net = network_for(today, target)
    b = breakdown(today, target, net)
    residual_ms, residual_se = host_time(today, target, b)
    unloaded_ms = max(b.total_ms + residual_ms, 1e-9)
    tp = model.throughput(
        _with_total(b, unloaded_ms),
        net,
        target.queue_depth,
        device_bytes_per_s=_dev(today, target),
        cpu_cores=today.cpu_cores,
    )
    se = _se_ms(today, target, b, residual_se)
    op_ms = at_depth_ms(today, target, net, tp)
    scale = op_ms / unloaded_ms  # a bound above latency stretches the interval with the latency
    half = half_width_ms(se * scale, op_ms, today.model_error_pct)
    return Forecast(
        target=target,
        op_ms=op_ms,
        ci_low_ms=max(op_ms - half, 0.0),
        ci_high_ms=op_ms + half,
        unloaded_ms=unloaded_ms,
        terms_ms={**b.terms, "host_residual_ms": residual_ms},
        mib_per_s=target.queue_depth * target.bs_bytes / BYTES_PER_MIB / (op_ms / MS_PER_S),
        binding=tp.binding,
        ceilings_mib_per_s=_ceilings(today, target, tp),
        network_one_way_ms=net.one_way_ms,
        network_link_bps=float(net.link_bps or 0.0),
        inputs=today.inputs(),
        device_source=device_of(today, target).source,
    )


def half_width_ms(se_ms: float, op_ms: float, model_error_pct: Value | None) -> float:
    """Half-width of the 95 % interval: today's measurement error and the engine's own, combined."""
    own = (model_error_pct.value / 100 * op_ms) if model_error_pct is not None else 0.0
    return math.hypot(Z_95 * se_ms, own)


def _ceilings(today: Today, c: Configuration, tp: model.Throughput) -> dict[str, float]:
    """Each ceiling in MiB/s; an unmeasured device has none (infinite)."""
    out = tp.ceilings_mib_per_s()
    if device_of(today, c).bytes_per_s_at is None:
        out["device"] = math.inf
    return out


def _with_total(b: model.LatencyBreakdown, total_ms: float) -> model.LatencyBreakdown:
    """``b`` with its CPU term shifted so the terms add up to ``total_ms`` (for the queue's ceilings).

    The CPU ceiling reads ``cpu_ms``; keep it and put the difference in the device-free fixed part
    instead: the status trip, which every operation pays once.
    """
    return replace(b, status_one_way_ms=b.status_one_way_ms + (total_ms - b.total_ms))


# ---- packets per trip (the latency distribution's bursts, issue 22) ----------------------------

ETHERNET_MTU_BYTES = 1500  # the usual path MTU; the lab's TUN line carries 65,000 (lab.topology)
IP_TCP_HEADER_BYTES = 52  # IPv4 (20) + TCP (20) + the timestamps option (12), on by default in Linux


def segment_bytes(stream_bytes: int, mtu_bytes: int) -> tuple[int, ...]:
    """IP packet sizes (bytes) of ``stream_bytes`` of TCP payload sent back to back at ``mtu_bytes``."""
    mss = mtu_bytes - IP_TCP_HEADER_BYTES
    if mss <= 0:
        raise model.ModelInputError(f"an MTU of {mtu_bytes} bytes leaves no room for TCP payload")
    full, rest = divmod(int(stream_bytes), mss)
    return (mtu_bytes,) * full + ((rest + IP_TCP_HEADER_BYTES,) if rest else ())


def round_stream_bytes(b: model.LatencyBreakdown, params: model.IscsiParams, header_bytes: int) -> list[int]:
    """iSCSI bytes each round of a write sends out, PDU headers included.

    Round 0 carries the command with its immediate and unsolicited data; each further round the
    bursts its R2Ts asked for. The round count is the breakdown's (its exposed R2T rounds plus
    one); when a window hides rounds, the bursts are shared evenly among the rounds left, in
    order (with window 8 the R2Ts arrive together and their bursts leave back to back).
    """
    if b.direction != "write":
        raise model.ModelInputError("packets per trip are modelled for writes (a read's burst travels back)")
    first = b.immediate_bytes + header_bytes + _pdu_bytes(b.unsolicited_data_out_bytes, params, header_bytes)
    rounds = round_trips_of(b)
    if b.bursts == 0 or rounds == 1:
        return [first]
    last = b.solicited_bytes - (b.bursts - 1) * params.max_burst_bytes
    bursts = [params.max_burst_bytes] * (b.bursts - 1) + [last]
    groups = np.array_split(np.array([_pdu_bytes(x, params, header_bytes) for x in bursts]), rounds - 1)
    return [first] + [int(g.sum()) for g in groups if g.size]


def _pdu_bytes(payload_bytes: int, params: model.IscsiParams, header_bytes: int) -> int:
    """Payload plus one header per data PDU (zero bytes: no PDU)."""
    return payload_bytes + model.data_pdus(payload_bytes, params) * header_bytes


def round_trips_of(b: model.LatencyBreakdown) -> int:
    """Whole round trips of an operation (at least one): its one-way trips over two, rounded."""
    return max(1, round(b.one_way_trips / 2))


def round_packets(
    today: Today, target: Configuration, *, mtu_bytes: int = ETHERNET_MTU_BYTES
) -> list[tuple[int, ...]]:
    """Packet sizes (bytes) of each round's outbound trip of a write of ``target``, in send order."""
    b = breakdown(today, target, network_for(today, target))
    streams = round_stream_bytes(b, target.params, today.pdu_header_bytes)
    return [segment_bytes(s, mtu_bytes) for s in streams]
