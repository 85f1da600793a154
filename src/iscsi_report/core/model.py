"""Latency model of one iSCSI write or read, and the physical ceilings that cap a queue of them.

A write's exchange (RFC 7143): the SCSI command PDU carries the *immediate data* (at most
min(FirstBurstLength, MaxRecvDataSegmentLength) when ImmediateData=Yes); with InitialR2T=No the
initiator then sends the rest of the first burst as unsolicited Data-Out PDUs. Everything else
is solicited: the target sends one R2T per burst of at most MaxBurstLength, the initiator
answers each with Data-Out PDUs of at most MaxRecvDataSegmentLength bytes, and after the last
byte the target writes (device time), spends its CPU time and returns the status.

R2T pacing (:class:`Assumptions`):

* ``sliding`` (LIO): the target keeps up to W R2Ts outstanding and issues a new one as each
  burst completes; W = min(MaxOutstandingR2T, the target's own window).
* ``serial`` (tgt): the next R2T only after the previous burst completes (W = 1 on the wire,
  whatever was negotiated).
* ``lockstep`` (the blog's model, seed 000): R2Ts go out W at a time and the next group waits
  for the whole previous group's data.

With R = 2 x one-way + per-round processing (the time from a burst's last byte leaving the
initiator to the next R2T arriving there) and t the wire time of a full burst, the first W
bursts start one R2T round after the unsolicited data has arrived, and every later group of W
bursts starts one *cycle* C after the previous group: C = max(W t, R + t) for a sliding window
(the link is busy whenever (W - 1) t >= R) and C = R + W t in lock-step. By induction over the
groups each burst inside a group starts when its predecessor ends, so the solicited phase lasts
R + g C + i t + t_last, with g = (n - 1) // W and i = (n - 1) % W for n bursts. The exposed
round-trip time is R + g (C - W t), charged to the R2T/Data one-way and per-round terms in
proportion. :func:`burst_schedule` computes the same schedule event by event, burst by burst,
and the tests check the two agree.

Reads need no R2T: command trip, device, CPU, Data-In transmission and one trip back, the
status riding on the last Data-In PDU. A queue of operations is a pipeline: throughput is the
smallest of Little's law (queue depth / unloaded latency), the link, the device's local
throughput at this request size and the CPU; :func:`throughput` names the binding one.
Pure functions, no I/O; the study's constants (the blog's inputs and table) live in
:mod:`iscsi_report.analyses.blog`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from iscsi_report.core.errors import ReportError
from iscsi_report.core.units import BITS_PER_BYTE, BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S

# The old names of two unit constants, still read by cli/project.py (being split by another
# engineer): new code imports iscsi_report.core.units instead.
KIB = BYTES_PER_KIB
MIB = BYTES_PER_MIB
TRANSMIT_REFERENCE_BYTES = 64 * BYTES_PER_KIB  # the blog quotes link speed as "ms to transmit 64 KiB"
MAX_BS_BYTES = 2**53  # block sizes are exact in a float up to here

# RFC 7143 section 13 defaults and ranges of the negotiated keys this model uses.
DEFAULT_FIRST_BURST_BYTES = 65536  # FirstBurstLength
DEFAULT_MAX_BURST_BYTES = 262144  # MaxBurstLength
DEFAULT_MAX_OUTSTANDING_R2T = 1  # MaxOutstandingR2T
DEFAULT_MAX_RECV_DATA_SEGMENT_BYTES = 8192  # MaxRecvDataSegmentLength
DEFAULT_INITIAL_R2T = True  # InitialR2T=Yes
DEFAULT_IMMEDIATE_DATA = True  # ImmediateData=Yes
MIN_BURST_BYTES = 512  # lower bound of FirstBurstLength/MaxBurstLength/MaxRecvDataSegmentLength
MAX_BURST_BYTES_LIMIT = 2**24 - 1  # upper bound of the same keys
MAX_OUTSTANDING_R2T_LIMIT = 65535
ROUNDS_DIGITS = 9  # exposed round trips are rounded to hide float noise (1.0000000000000009)
COMMAND_PDUS = 1  # every operation opens with one SCSI Command PDU
BHS_BYTES = 48  # Basic Header Segment of every iSCSI PDU (no AHS, no digests)
DATA_SEGMENT_ALIGN_BYTES = 4  # a PDU's data segment is padded to a multiple of 4 bytes (RFC 7143 11.1)

# The device may see smaller requests than the initiator's block. The blog charged one 1 MiB
# request's time to a 2 MiB write ("shadowing": the device writes the first half while the
# second is still on a slow network); the default charges the whole block.
DEFAULT_DEVICE_REQUEST_FRACTION = 1.0

Direction = Literal["write", "read"]
Pacing = Literal["sliding", "serial", "lockstep"]
PACINGS: tuple[str, ...] = ("sliding", "serial", "lockstep")
DeviceLatency = float | Callable[[int], float]


class ModelInputError(ReportError, ValueError):
    """A model input is out of range or inconsistent (e.g. FirstBurstLength > MaxBurstLength)."""


def _require(condition: bool | np.bool_, message: str) -> None:
    """Raise :class:`ModelInputError` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise ModelInputError(message)


def _finite_nonneg(name: str, value: float) -> None:
    """Reject NaN, infinite and negative numbers."""
    _require(
        isinstance(value, int | float | np.number) and math.isfinite(value) and value >= 0,
        f"{name} must be a finite number >= 0, got {value!r}",
    )


def _finite_pos(name: str, value: float) -> None:
    """Reject NaN, infinite, zero and negative numbers."""
    _require(
        isinstance(value, int | float | np.number) and math.isfinite(value) and value > 0,
        f"{name} must be a finite number > 0, got {value!r}",
    )


@dataclass(frozen=True)
class IscsiParams:
    """Negotiated iSCSI session keys that shape the exchange (RFC 7143 defaults)."""

    first_burst_bytes: int = DEFAULT_FIRST_BURST_BYTES
    max_burst_bytes: int = DEFAULT_MAX_BURST_BYTES
    immediate_data: bool = DEFAULT_IMMEDIATE_DATA
    initial_r2t: bool = DEFAULT_INITIAL_R2T
    max_outstanding_r2t: int = DEFAULT_MAX_OUTSTANDING_R2T
    max_recv_data_segment_bytes: int = DEFAULT_MAX_RECV_DATA_SEGMENT_BYTES
    # The initiator's own MaxRecvDataSegmentLength (declared, not negotiated: RFC 7143 13.12),
    # which bounds each Data-In PDU of a read; None: equal to ``max_recv_data_segment_bytes``.
    initiator_max_recv_data_segment_bytes: int | None = None

    def __post_init__(self) -> None:
        names = ["first_burst_bytes", "max_burst_bytes", "max_recv_data_segment_bytes"]
        if self.initiator_max_recv_data_segment_bytes is not None:
            names.append("initiator_max_recv_data_segment_bytes")
        for name in names:
            value = getattr(self, name)
            _require(
                isinstance(value, int | np.integer) and MIN_BURST_BYTES <= value <= MAX_BURST_BYTES_LIMIT,
                f"{name} must be an integer in [{MIN_BURST_BYTES}, {MAX_BURST_BYTES_LIMIT}], got {value!r}",
            )
        _require(
            self.first_burst_bytes <= self.max_burst_bytes,
            f"first_burst_bytes ({self.first_burst_bytes}) must not exceed max_burst_bytes "
            f"({self.max_burst_bytes}) (RFC 7143 FirstBurstLength <= MaxBurstLength)",
        )
        _require(
            isinstance(self.max_outstanding_r2t, int | np.integer)
            and 1 <= self.max_outstanding_r2t <= MAX_OUTSTANDING_R2T_LIMIT,
            f"max_outstanding_r2t must be an integer in [1, {MAX_OUTSTANDING_R2T_LIMIT}], "
            f"got {self.max_outstanding_r2t!r}",
        )


@dataclass(frozen=True)
class Assumptions:
    """How the model turns the keys into time: R2T pacing, per-round cost, PDU headers, device share.

    ``target_r2t_window`` is how many R2Ts the target itself keeps outstanding (``None``: as many
    as negotiated); ``per_round_ms`` is the processing time of one R2T exchange (target and
    initiator) on top of the two one-way trips; ``pdu_header_bytes`` is put on the wire per PDU;
    ``device_request_fraction`` is the share of the block one device request holds (the device
    time charged per operation is that request's).
    """

    r2t_pacing: Pacing = "sliding"
    target_r2t_window: int | None = None
    per_round_ms: float = 0.0
    pdu_header_bytes: int = BHS_BYTES
    device_request_fraction: float = DEFAULT_DEVICE_REQUEST_FRACTION
    # A read's status rides on its last Data-In PDU (S bit, RFC 7143 11.7.1; tgt and LIO do so for
    # GOOD status); False: a separate SCSI Response PDU follows the data.
    read_status_in_last_data_in: bool = True

    def __post_init__(self) -> None:
        _require(self.r2t_pacing in PACINGS, f"r2t_pacing must be one of {PACINGS}, got {self.r2t_pacing!r}")
        window = self.target_r2t_window
        _require(
            window is None or (isinstance(window, int | np.integer) and window >= 1),
            f"target_r2t_window must be None or an integer >= 1, got {window!r}",
        )
        _finite_nonneg("per_round_ms", self.per_round_ms)
        _require(
            isinstance(self.pdu_header_bytes, int | np.integer) and 0 <= self.pdu_header_bytes <= 2**16,
            f"pdu_header_bytes must be an integer in [0, 65536], got {self.pdu_header_bytes!r}",
        )
        frac = self.device_request_fraction
        _require(
            isinstance(frac, int | float) and math.isfinite(frac) and 0 < frac <= 1,
            f"device_request_fraction must be in (0, 1], got {frac!r}",
        )


DEFAULT_ASSUMPTIONS = Assumptions()
# The blog's model (seed 000): lock-step R2T groups, no PDU headers, no per-round cost, and one
# half-size device request charged per operation. Only for reproducing its worked examples.
LOCKSTEP_SHADOWING = Assumptions(
    r2t_pacing="lockstep", per_round_ms=0.0, pdu_header_bytes=0, device_request_fraction=0.5
)


def effective_r2t_window(params: IscsiParams, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> int:
    """R2Ts outstanding on the wire: min(MaxOutstandingR2T, target's window); 1 when serial."""
    if assumptions.r2t_pacing == "serial":
        return 1
    window = params.max_outstanding_r2t
    if assumptions.target_r2t_window is not None:
        window = min(window, int(assumptions.target_r2t_window))
    return int(window)


def per_64k_ms_from_link_bps(link_bps: float) -> float:
    """Milliseconds to put 64 KiB on a link of ``link_bps`` bits per second."""
    _finite_pos("link_bps", link_bps)
    return TRANSMIT_REFERENCE_BYTES * BITS_PER_BYTE / link_bps * MS_PER_S


def link_bps_from_per_64k_ms(per_64k_ms: float) -> float:
    """Link bits per second implied by ``per_64k_ms`` milliseconds per 64 KiB."""
    _finite_pos("per_64k_ms", per_64k_ms)
    return TRANSMIT_REFERENCE_BYTES * BITS_PER_BYTE / (per_64k_ms / MS_PER_S)


@dataclass(frozen=True)
class Network:
    """One-way latency and link speed; give exactly one of ``link_bps`` or ``per_64k_ms``."""

    one_way_ms: float
    per_64k_ms: float | None = None
    link_bps: float | None = None

    def __post_init__(self) -> None:
        _finite_nonneg("one_way_ms", self.one_way_ms)
        given = (self.per_64k_ms is not None) + (self.link_bps is not None)
        _require(given == 1, "give exactly one of per_64k_ms or link_bps")
        if self.per_64k_ms is not None:
            object.__setattr__(self, "link_bps", link_bps_from_per_64k_ms(self.per_64k_ms))
        elif self.link_bps is not None:  # always, given exactly one of the two
            object.__setattr__(self, "per_64k_ms", per_64k_ms_from_link_bps(self.link_bps))

    def transmit_ms(self, n_bytes: float) -> float:
        """Time to put ``n_bytes`` on the wire, proportional to the per-64-KiB time."""
        assert self.per_64k_ms is not None  # set by __post_init__
        return n_bytes / TRANSMIT_REFERENCE_BYTES * self.per_64k_ms

    @property
    def bytes_per_s(self) -> float:
        """Link rate in bytes per second."""
        assert self.link_bps is not None  # set by __post_init__
        return float(self.link_bps) / BITS_PER_BYTE


# ---- PDU arithmetic ----------------------------------------------------------------------------


def immediate_bytes(bs_bytes: int, params: IscsiParams) -> int:
    """Data in the command PDU: min(FirstBurstLength, MaxRecvDataSegmentLength, block) if ImmediateData."""
    if not params.immediate_data:
        return 0
    return min(params.first_burst_bytes, params.max_recv_data_segment_bytes, int(bs_bytes))


def unsolicited_data_out_bytes(bs_bytes: int, params: IscsiParams) -> int:
    """Unsolicited Data-Out: the rest of the first burst, only when InitialR2T=No."""
    if params.initial_r2t:
        return 0
    return min(params.first_burst_bytes, int(bs_bytes)) - immediate_bytes(bs_bytes, params)


def unsolicited_bytes(bs_bytes: int, params: IscsiParams) -> int:
    """Bytes sent without an R2T: immediate data plus unsolicited Data-Out."""
    return immediate_bytes(bs_bytes, params) + unsolicited_data_out_bytes(bs_bytes, params)


def data_pdus(n_bytes: int, params: IscsiParams) -> int:
    """Data PDUs needed for ``n_bytes``: segments of at most MaxRecvDataSegmentLength."""
    return -(-int(n_bytes) // params.max_recv_data_segment_bytes)


def data_in_segment_bytes(params: IscsiParams) -> int:
    """Largest Data-In payload: the initiator's MaxRecvDataSegmentLength (the target's when not given)."""
    initiator = params.initiator_max_recv_data_segment_bytes
    return params.max_recv_data_segment_bytes if initiator is None else initiator


def data_in_pdus(n_bytes: int, params: IscsiParams) -> int:
    """Data-In PDUs a read of ``n_bytes`` arrives in: segments of the initiator's MaxRecvDataSegmentLength."""
    return -(-int(n_bytes) // data_in_segment_bytes(params))


def data_in_sequences(n_bytes: int, params: IscsiParams) -> int:
    """Data-In sequences (at most MaxBurstLength each); at ErrorRecoveryLevel 0 none waits for a reply."""
    return -(-int(n_bytes) // params.max_burst_bytes)


def r2t_bursts(solicited_bytes: int, params: IscsiParams) -> int:
    """Number of R2Ts (bursts of at most MaxBurstLength) needed for the solicited bytes."""
    return -(-int(solicited_bytes) // params.max_burst_bytes)


def r2t_waves(bursts: int, params: IscsiParams, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> int:
    """Groups of R2Ts: bursts / effective window, rounded up (the lock-step model's waves)."""
    return -(-int(bursts) // effective_r2t_window(params, assumptions))


def _burst_sizes(solicited: int, params: IscsiParams) -> tuple[int, int, int]:
    """(bursts, full burst bytes, last burst bytes) of the solicited data."""
    n = r2t_bursts(solicited, params)
    if n == 0:
        return 0, 0, 0
    return n, params.max_burst_bytes, solicited - (n - 1) * params.max_burst_bytes


def _wire_bytes(payload: int, params: IscsiParams, assumptions: Assumptions) -> int:
    """Payload plus one header per data PDU."""
    return payload + data_pdus(payload, params) * assumptions.pdu_header_bytes


# ---- the solicited phase -----------------------------------------------------------------------


def cycle_ms(window: int, burst_ms: float, round_ms: float, pacing: Pacing) -> float:
    """Time between the starts of consecutive groups of ``window`` bursts (module docstring)."""
    if pacing == "lockstep":
        return round_ms + window * burst_ms
    return max(window * burst_ms, round_ms + burst_ms)


def solicited_phase_ms(
    bursts: int, burst_ms: float, last_ms: float, window: int, round_ms: float, pacing: Pacing
) -> float:
    """From the target holding the unsolicited data to the last solicited byte at the target."""
    if bursts == 0:
        return 0.0
    w = 1 if pacing == "serial" else window
    groups, inside = divmod(bursts - 1, w)
    return round_ms + groups * cycle_ms(w, burst_ms, round_ms, pacing) + inside * burst_ms + last_ms


@dataclass(frozen=True)
class BurstEvent:
    """One burst's times (ms from the target holding the unsolicited data)."""

    burst: int
    r2t_sent_ms: float
    r2t_arrives_ms: float
    start_ms: float
    end_ms: float
    arrives_ms: float


def burst_schedule(
    bursts: int,
    burst_ms: float,
    last_ms: float,
    window: int,
    one_way_ms: float,
    per_round_ms: float,
    pacing: Pacing,
) -> list[BurstEvent]:
    """Event-driven schedule of every burst: R2T issue and arrival, transmission, arrival at target.

    The reference the closed form of :func:`solicited_phase_ms` is checked against, and the
    model's PDU timeline for a chapter. O(bursts).
    """
    w = 1 if pacing == "serial" else window
    events: list[BurstEvent] = []
    link_free = 0.0
    for j in range(bursts):
        if j < w:
            trigger = 0.0
        elif pacing == "lockstep":
            group_start = (j // w) * w
            trigger = events[group_start - 1].arrives_ms  # the previous group's last burst
        else:
            trigger = events[j - w].arrives_ms  # the burst whose completion frees a slot
        sent = trigger + per_round_ms
        arrives = sent + one_way_ms
        start = max(link_free, arrives)
        size_ms = last_ms if j == bursts - 1 else burst_ms
        end = start + size_ms
        link_free = end
        events.append(BurstEvent(j + 1, sent, arrives, start, end, end + one_way_ms))
    return events


# ---- one operation -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LatencyBreakdown:
    """Every term of one operation's latency (ms), stackable, plus the counts that produced them.

    For reads ``solicited_transmit_ms`` holds the Data-In transmission; the R2T, unsolicited and
    status terms are zero (status rides on the last Data-In PDU). ``exposed_rounds`` is how many
    R2T round trips the latency pays in full (fractional when a sliding window hides part).
    """

    direction: Direction
    bs_bytes: int
    command_one_way_ms: float
    unsolicited_transmit_ms: float
    r2t_one_way_ms: float
    data_one_way_ms: float
    r2t_processing_ms: float
    solicited_transmit_ms: float
    status_one_way_ms: float
    device_ms: float
    cpu_ms: float
    immediate_bytes: int
    unsolicited_data_out_bytes: int
    solicited_bytes: int
    bursts: int
    waves: int
    effective_r2t_window: int
    exposed_rounds: float
    data_pdus: int
    wire_bytes: int
    device_request_bytes: int
    r2t_pacing: str
    response_pdus: int = 1  # a separate SCSI Response PDU (0: the status rode on the last Data-In)

    @property
    def unsolicited_bytes(self) -> int:
        """Immediate data plus unsolicited Data-Out."""
        return self.immediate_bytes + self.unsolicited_data_out_bytes

    @property
    def terms(self) -> dict[str, float]:
        """Term name -> ms, in the order the exchange happens (device and CPU last)."""
        return {name: getattr(self, name) for name in TERM_NAMES}

    @property
    def total_ms(self) -> float:
        """Operation latency: the sum of the terms."""
        return math.fsum(self.terms.values())

    @property
    def pdus_exchanged(self) -> int:
        """iSCSI PDUs of the operation, both directions: command, R2Ts, data PDUs and a separate status.

        A write: the command (its immediate data inside), one R2T per burst, its Data-Out PDUs and
        the SCSI Response. A read: the command and its Data-In PDUs, plus a SCSI Response only
        when the status does not ride on the last Data-In (``response_pdus``).
        """
        return COMMAND_PDUS + self.bursts + self.data_pdus + self.response_pdus

    @property
    def one_way_trips(self) -> float:
        """One-way latencies paid (command, exposed R2T and data trips, status)."""
        return 2.0 + 2.0 * self.exposed_rounds if self.direction == "write" else 2.0

    def to_frame(self) -> pd.DataFrame:
        """Tidy (term, ms) frame, one row per term, for stacked bar charts."""
        return pd.DataFrame({"term": list(self.terms), "ms": list(self.terms.values())})


TERM_NAMES: tuple[str, ...] = (
    "command_one_way_ms",
    "unsolicited_transmit_ms",
    "r2t_one_way_ms",
    "data_one_way_ms",
    "r2t_processing_ms",
    "solicited_transmit_ms",
    "status_one_way_ms",
    "device_ms",
    "cpu_ms",
)
COUNT_NAMES: tuple[str, ...] = (
    "bs_bytes",
    "immediate_bytes",
    "unsolicited_data_out_bytes",
    "solicited_bytes",
    "bursts",
    "waves",
    "effective_r2t_window",
    "data_pdus",
    "wire_bytes",
    "device_request_bytes",
)


def default_device_request_bytes(bs_bytes: int, fraction: float = DEFAULT_DEVICE_REQUEST_FRACTION) -> int:
    """Request size the device sees: ``bs_bytes`` times ``fraction`` (blog: 0.5), at least 1."""
    _require(0 < fraction <= 1, f"device_request_fraction must be in (0, 1], got {fraction!r}")
    return max(1, round(bs_bytes * fraction))


def device_term_ms(device_ms: DeviceLatency, device_request_bytes: int) -> float:
    """Synchronous device time: a constant, or ``device_ms(device_request_bytes)``."""
    value = device_ms(device_request_bytes) if callable(device_ms) else device_ms
    _finite_nonneg("device_ms", value)
    return float(value)


def _check_bs(bs_bytes: int) -> None:
    """Block size must be a positive whole number of bytes, exact in a float."""
    _require(
        isinstance(bs_bytes, int | np.integer) and 0 < bs_bytes <= MAX_BS_BYTES,
        f"bs_bytes must be an integer in [1, 2**53], got {bs_bytes!r}",
    )


def _device_and_cpu(
    bs_bytes: int,
    device_ms: DeviceLatency,
    cpu_ms: float,
    device_request_bytes: int | None,
    fraction: float,
) -> tuple[float, float, int]:
    """Validate and resolve the device term, the CPU term and the device request size."""
    _check_bs(bs_bytes)
    _finite_nonneg("cpu_ms", cpu_ms)
    req = device_request_bytes
    if req is None:
        req = default_device_request_bytes(bs_bytes, fraction)
    _require(req > 0, f"device_request_bytes must be > 0, got {req!r}")
    return device_term_ms(device_ms, req), float(cpu_ms), int(req)


def _fraction(given: float | None, assumptions: Assumptions) -> float:
    """The device request fraction: the argument when given, else the assumptions'."""
    return assumptions.device_request_fraction if given is None else given


def _checked(b: LatencyBreakdown) -> LatencyBreakdown:
    """Refuse a breakdown whose terms or total left the floating-point range."""
    values = list(b.terms.values())
    _require(
        all(math.isfinite(v) for v in values),
        f"inputs give a non-finite latency term ({b.terms}); check for absurdly large inputs",
    )
    try:
        math.fsum(values)
    except OverflowError:
        raise ModelInputError("inputs give a latency beyond floating-point range") from None
    return b


def write_latency(
    bs_bytes: int,
    params: IscsiParams,
    network: Network,
    device_ms: DeviceLatency,
    cpu_ms: float,
    *,
    device_request_bytes: int | None = None,
    device_request_fraction: float | None = None,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
) -> LatencyBreakdown:
    """Latency terms of one write of ``bs_bytes`` (see the module docstring for the exchange)."""
    fraction = _fraction(device_request_fraction, assumptions)
    dev, cpu, req = _device_and_cpu(bs_bytes, device_ms, cpu_ms, device_request_bytes, fraction)
    try:
        return _checked(_write(int(bs_bytes), params, network, dev, cpu, req, assumptions))
    except OverflowError:
        raise ModelInputError("inputs give a latency beyond floating-point range") from None


def _write(
    bs: int, params: IscsiParams, network: Network, dev: float, cpu: float, req: int, a: Assumptions
) -> LatencyBreakdown:
    """The write's terms from validated inputs."""
    imm = immediate_bytes(bs, params)
    unsol_out = unsolicited_data_out_bytes(bs, params)
    solicited = bs - imm - unsol_out
    n, full, last = _burst_sizes(solicited, params)
    window = effective_r2t_window(params, a)
    h = a.pdu_header_bytes
    unsol_wire = imm + _wire_bytes(unsol_out, params, a) + h  # the command PDU's header too
    full_ms = network.transmit_ms(_wire_bytes(full, params, a))
    last_ms = network.transmit_ms(_wire_bytes(last, params, a))
    round_ms = 2.0 * network.one_way_ms + a.per_round_ms
    phase = solicited_phase_ms(n, full_ms, last_ms, window, round_ms, a.r2t_pacing)
    solicited_transmit = (n - 1) * full_ms + last_ms if n else 0.0
    exposed = _exposed_rounds(n, window, full_ms, round_ms, a.r2t_pacing, phase - solicited_transmit)
    pdus = data_pdus(unsol_out, params) + (n - 1) * data_pdus(full, params) + data_pdus(last, params)
    solicited_wire = (n - 1) * _wire_bytes(full, params, a) + _wire_bytes(last, params, a) if n else 0
    return LatencyBreakdown(
        direction="write",
        bs_bytes=bs,
        command_one_way_ms=network.one_way_ms,
        unsolicited_transmit_ms=network.transmit_ms(unsol_wire),
        r2t_one_way_ms=exposed * network.one_way_ms,
        data_one_way_ms=exposed * network.one_way_ms,
        r2t_processing_ms=exposed * a.per_round_ms,
        solicited_transmit_ms=solicited_transmit,
        status_one_way_ms=network.one_way_ms,
        device_ms=dev,
        cpu_ms=cpu,
        immediate_bytes=imm,
        unsolicited_data_out_bytes=unsol_out,
        solicited_bytes=solicited,
        bursts=n,
        waves=-(-n // (1 if a.r2t_pacing == "serial" else window)),
        effective_r2t_window=window,
        exposed_rounds=exposed,
        data_pdus=pdus,
        wire_bytes=unsol_wire + solicited_wire,
        device_request_bytes=req,
        r2t_pacing=a.r2t_pacing,
    )


def write_wire_bytes(
    bs_bytes: int, params: IscsiParams, assumptions: Assumptions = DEFAULT_ASSUMPTIONS
) -> tuple[int, tuple[int, ...]]:
    """What a write puts on the wire toward the target: the command's bytes and each burst's.

    The command's are its header, its immediate data and any unsolicited Data-Out; a burst's are
    its Data-Out PDUs with their headers (the same counts as :func:`write_latency`).
    """
    _check_bs(bs_bytes)
    imm = immediate_bytes(bs_bytes, params)
    unsol_out = unsolicited_data_out_bytes(bs_bytes, params)
    n, full, last = _burst_sizes(bs_bytes - imm - unsol_out, params)
    command = imm + _wire_bytes(unsol_out, params, assumptions) + assumptions.pdu_header_bytes
    if n == 0:
        return command, ()
    full_wire, last_wire = _wire_bytes(full, params, assumptions), _wire_bytes(last, params, assumptions)
    return command, (full_wire,) * (n - 1) + (last_wire,)


def _exposed_rounds(
    bursts: int, window: int, burst_ms: float, round_ms: float, pacing: Pacing, exposed_ms: float
) -> float:
    """Round trips paid in full: the exposed time over one round (by pacing when a round costs 0)."""
    if bursts == 0:
        return 0.0
    if round_ms > 0:
        return round(max(exposed_ms, 0.0) / round_ms, ROUNDS_DIGITS)
    w = 1 if pacing == "serial" else window
    groups = (bursts - 1) // w
    hidden = pacing == "sliding" and w > 1 and burst_ms > 0
    return 1.0 if hidden else float(1 + groups)


def read_latency(
    bs_bytes: int,
    params: IscsiParams,
    network: Network,
    device_ms: DeviceLatency,
    cpu_ms: float,
    *,
    device_request_bytes: int | None = None,
    device_request_fraction: float | None = None,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
) -> LatencyBreakdown:
    """Latency terms of one read (RFC 7143): the command's trip, device, CPU, Data-In, a trip back.

    The SCSI Read command PDU (a header, no data) goes out; the target answers with Data-In PDUs of
    at most the initiator's MaxRecvDataSegmentLength, in sequences of at most MaxBurstLength that
    wait for nothing (no R2T, no DataACK at ErrorRecoveryLevel 0); the status rides on the last
    Data-In unless ``assumptions.read_status_in_last_data_in`` is False (then one more header
    follows the data). One-way trips: two.
    """
    fraction = _fraction(device_request_fraction, assumptions)
    dev, cpu, req = _device_and_cpu(bs_bytes, device_ms, cpu_ms, device_request_bytes, fraction)
    try:
        return _checked(_read(int(bs_bytes), params, network, dev, cpu, req, assumptions))
    except OverflowError:
        raise ModelInputError("inputs give a latency beyond floating-point range") from None


def read_wire_bytes(bs_bytes: int, params: IscsiParams, assumptions: Assumptions) -> tuple[int, int]:
    """(command PDU bytes out, Data-In bytes back with their headers and any separate status PDU)."""
    h = assumptions.pdu_header_bytes
    status_pdu_bytes = 0 if assumptions.read_status_in_last_data_in else h
    return h, int(bs_bytes) + data_in_pdus(bs_bytes, params) * h + status_pdu_bytes


def _read(
    bs: int, params: IscsiParams, network: Network, dev: float, cpu: float, req: int, a: Assumptions
) -> LatencyBreakdown:
    """The read's terms from validated inputs."""
    command_wire_bytes, data_in_wire_bytes = read_wire_bytes(bs, params, a)
    return LatencyBreakdown(
        direction="read",
        bs_bytes=bs,
        command_one_way_ms=network.one_way_ms,
        unsolicited_transmit_ms=network.transmit_ms(command_wire_bytes),  # the command PDU's header
        r2t_one_way_ms=0.0,
        data_one_way_ms=network.one_way_ms,
        r2t_processing_ms=0.0,
        solicited_transmit_ms=network.transmit_ms(data_in_wire_bytes),
        status_one_way_ms=0.0,
        device_ms=dev,
        cpu_ms=cpu,
        immediate_bytes=0,
        unsolicited_data_out_bytes=0,
        solicited_bytes=bs,
        bursts=0,
        waves=0,
        effective_r2t_window=0,
        exposed_rounds=0.0,
        data_pdus=data_in_pdus(bs, params),
        wire_bytes=data_in_wire_bytes,  # the direction that carries the data (the link's bound)
        device_request_bytes=req,
        r2t_pacing="none",
        response_pdus=0 if a.read_status_in_last_data_in else 1,
    )


def operation_latency(direction: Direction, *args: object, **kwargs: object) -> LatencyBreakdown:
    """:func:`write_latency` or :func:`read_latency` by ``direction``."""
    _require(direction in ("write", "read"), f"direction must be write or read, got {direction!r}")
    fn = write_latency if direction == "write" else read_latency
    return fn(*args, **kwargs)  # type: ignore[arg-type]


def iops(latency_ms: float) -> float:
    """Operations per second of one outstanding operation taking ``latency_ms``."""
    _require(latency_ms > 0, f"latency_ms must be > 0, got {latency_ms!r}")
    return MS_PER_S / latency_ms


def mib_per_s(bs_bytes: int, latency_ms: float) -> float:
    """Throughput in MiB/s (2**20 bytes) of back-to-back ``bs_bytes`` operations."""
    return iops(latency_ms) * bs_bytes / BYTES_PER_MIB


def error_pct(measured: float, estimated: float) -> float:
    """The blog's error: (measured - estimated) / measured x 100 (positive = underestimate)."""
    _require(measured != 0, "measured must be non-zero")
    return (measured - estimated) / measured * 100.0


def cpu_ms_from_utilization(utilization: float, ops_per_s: float, cores: int = 1) -> float:
    """CPU ms per operation from a busy fraction at an observed rate (blog: 0.12 at 30 IOPS)."""
    _require(0 <= utilization <= 1, f"utilization must be a fraction in [0, 1], got {utilization!r}")
    _require(ops_per_s > 0, f"ops_per_s must be > 0, got {ops_per_s!r}")
    return utilization * cores / ops_per_s * MS_PER_S


def device_ms_from_iops(iops_by_request_bytes: Mapping[int, float]) -> Callable[[int], float]:
    """Device latency per request size from local IOPS (1000/IOPS), linear between sizes.

    Sizes outside the measured range raise instead of extrapolating.
    """
    _require(len(iops_by_request_bytes) > 0, "iops_by_request_bytes is empty")
    sizes = np.array(sorted(iops_by_request_bytes), dtype=float)
    for size in sizes:
        _require(iops_by_request_bytes[int(size)] > 0, f"IOPS at {int(size)} bytes must be > 0")
    lat_ms = np.array([MS_PER_S / iops_by_request_bytes[int(s)] for s in sizes])

    def lookup(request_bytes: int) -> float:
        _require(
            sizes[0] <= request_bytes <= sizes[-1],
            f"device request of {request_bytes} bytes is outside the measured sizes "
            f"[{int(sizes[0])}, {int(sizes[-1])}]",
        )
        return float(np.interp(request_bytes, sizes, lat_ms))

    return lookup


# ---- physical ceilings and the queue (seed 001: CPU-bound versus network-bound) ---------------

BOUND_NAMES: tuple[str, ...] = ("latency", "link", "device", "cpu")


@dataclass(frozen=True)
class Bounds:
    """IOPS ceilings of a queue of operations; ``cpu`` is ``inf`` when no CPU time was given.

    ``achieved_iops`` is the smallest ceiling and ``binding`` names it (first in
    :data:`BOUND_NAMES` order on ties); ``latency`` is Little's law at the unloaded latency.
    """

    latency: float
    link: float
    device: float
    cpu: float
    achieved_iops: float
    binding: str

    def as_dict(self) -> dict[str, float]:
        """Bound name -> IOPS."""
        return {name: getattr(self, name) for name in BOUND_NAMES}


def device_bytes_per_s_from_time(device_ms: float, request_bytes: int) -> float:
    """Local device throughput implied by serving ``request_bytes`` in ``device_ms`` (one at a time)."""
    _require(
        device_ms > 0,
        "the device ceiling is unknown: give the device's local throughput at this size "
        "(--device-mib-s) or a device time above 0 ms (--device-ms)",
    )
    return request_bytes / (device_ms / MS_PER_S)


def littles_law_latency_ms(in_flight: float, ops_per_s: float) -> float:
    """Mean time in system (ms) of ``in_flight`` operations completing at ``ops_per_s`` (L = X R)."""
    return in_flight / ops_per_s * MS_PER_S


def cpu_bound_iops(cpu_ms_per_op: float, cpu_cores: float = 1) -> float:
    """Operations per second ``cpu_cores`` cores sustain at ``cpu_ms_per_op`` each (inf when 0: no limit)."""
    return cpu_cores * MS_PER_S / cpu_ms_per_op if cpu_ms_per_op > 0 else math.inf


def throughput_bounds(
    bs_bytes: int,
    latency_ms: float,
    queue_depth: int,
    link_bps: float,
    *,
    device_bytes_per_s: float,
    cpu_ms_per_op: float,
    cpu_cores: int = 1,
    wire_bytes_per_op: float | None = None,
) -> Bounds:
    """Ceilings on IOPS: Little's law (queue_depth / latency), link, device and CPU.

    ``wire_bytes_per_op`` defaults to ``bs_bytes``; ``cpu_ms_per_op = 0`` means no CPU limit.
    """
    _check_bs(bs_bytes)
    _require(
        isinstance(queue_depth, int | np.integer) and queue_depth >= 1,
        f"queue_depth must be an integer >= 1, got {queue_depth!r}",
    )
    _finite_pos("latency_ms", latency_ms)
    _finite_pos("link_bps", link_bps)
    _finite_pos("device_bytes_per_s", device_bytes_per_s)
    _finite_nonneg("cpu_ms_per_op", cpu_ms_per_op)
    _require(cpu_cores >= 1, f"cpu_cores must be >= 1, got {cpu_cores!r}")
    wire = bs_bytes if wire_bytes_per_op is None else wire_bytes_per_op
    _finite_pos("wire_bytes_per_op", wire)
    candidates = {
        "latency": queue_depth * iops(latency_ms),
        "link": link_bps / BITS_PER_BYTE / wire,
        "device": device_bytes_per_s / bs_bytes,
        "cpu": cpu_bound_iops(cpu_ms_per_op, cpu_cores),
    }
    binding = min(candidates, key=lambda k: (candidates[k], BOUND_NAMES.index(k)))
    return Bounds(**candidates, achieved_iops=candidates[binding], binding=binding)


@dataclass(frozen=True)
class Throughput:
    """One operation's breakdown at a queue depth, its ceilings and what the pipeline achieves."""

    breakdown: LatencyBreakdown
    queue_depth: int
    bounds: Bounds
    device_bytes_per_s: float

    @property
    def iops(self) -> float:
        """Achieved operations per second (the smallest ceiling)."""
        return self.bounds.achieved_iops

    @property
    def mib_per_s(self) -> float:
        """Achieved MiB/s."""
        return self.iops * self.breakdown.bs_bytes / BYTES_PER_MIB

    @property
    def binding(self) -> str:
        """Name of the bound that sets the throughput."""
        return self.bounds.binding

    @property
    def loaded_latency_ms(self) -> float:
        """Per-operation latency at this queue depth (Little's law at the achieved rate)."""
        return littles_law_latency_ms(self.queue_depth, self.iops)

    def ceilings_mib_per_s(self) -> dict[str, float]:
        """Each bound in MiB/s."""
        return {k: v * self.breakdown.bs_bytes / BYTES_PER_MIB for k, v in self.bounds.as_dict().items()}


def throughput(
    breakdown: LatencyBreakdown,
    network: Network,
    queue_depth: int = 1,
    *,
    device_bytes_per_s: float | None = None,
    cpu_cores: int = 1,
) -> Throughput:
    """Pipeline ``queue_depth`` copies of ``breakdown``, capped by link, device and CPU.

    The device ceiling is ``device_bytes_per_s`` (its local throughput at this size) or, when
    absent, the rate implied by the breakdown's device time for its request size.
    """
    rate = device_bytes_per_s
    if rate is None:
        rate = device_bytes_per_s_from_time(breakdown.device_ms, breakdown.device_request_bytes)
    assert network.link_bps is not None  # set by Network.__post_init__
    bounds = throughput_bounds(
        breakdown.bs_bytes,
        breakdown.total_ms,
        queue_depth,
        float(network.link_bps),
        device_bytes_per_s=rate,
        cpu_ms_per_op=breakdown.cpu_ms,
        cpu_cores=cpu_cores,
        wire_bytes_per_op=max(breakdown.wire_bytes, 1),
    )
    return Throughput(breakdown, int(queue_depth), bounds, float(rate))


def breakdown_frame(
    breakdowns: LatencyBreakdown | Mapping[str, LatencyBreakdown], label: str = "config"
) -> pd.DataFrame:
    """Tidy frame of terms for stacked bars; a mapping adds a ``label`` column with its keys."""
    if isinstance(breakdowns, LatencyBreakdown):
        return breakdowns.to_frame()
    frames = [b.to_frame().assign(**{label: key}) for key, b in breakdowns.items()]
    if not frames:
        return pd.DataFrame({label: [], "term": [], "ms": []})
    return pd.concat(frames, ignore_index=True)[[label, "term", "ms"]]


def breakdown_counts(breakdown: LatencyBreakdown) -> dict[str, int]:
    """The integer counts of a breakdown (bytes, bursts, PDUs), for tables and JSON."""
    return {name: int(getattr(breakdown, name)) for name in COUNT_NAMES}
