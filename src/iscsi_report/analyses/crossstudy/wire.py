"""Bytes on the wire: how a read reply is framed on an Ethernet link carrying TCP/IPv4 (first principles).

The iSCSI part (one basic header segment per Data-In PDU, data padded to a multiple of 4 bytes)
comes from :mod:`iscsi_report.core.model`; the TCP/IP and Ethernet framing is this chapter's own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from iscsi_report.analyses.crossstudy.cpu import peak_table
from iscsi_report.analyses.crossstudy.studies import Study
from iscsi_report.core.model import BHS_BYTES, DATA_SEGMENT_ALIGN_BYTES
from iscsi_report.core.units import (
    BITS_PER_BYTE,
    BITS_PER_GBIT,
    PERCENT_PER_FRACTION,
    US_PER_S,
)

# --- Protocol framing (bytes) ---------------------------------------------------------------------
IPV4_HEADER_BYTES = 20  # without options
TCP_HEADER_BYTES = 20  # without options
TCP_TIMESTAMPS_OPTION_BYTES = 12  # 10-byte timestamps option plus 2 bytes of NOP padding
ETH_PREAMBLE_SFD_BYTES = 8  # 7-byte preamble + start frame delimiter
ETH_HEADER_BYTES = 14  # destination, source, EtherType
ETH_FCS_BYTES = 4
ETH_INTERFRAME_GAP_BYTES = 12  # 96 bit times of idle line


@dataclass(frozen=True)
class WireModel:
    """How a read reply is framed on an Ethernet link carrying TCP/IPv4.

    ``packing="stream"`` charges framing per MSS of a continuously full pipe (replies packed back
    to back, the paper's "efficiently packed"); ``"per_op"`` sends each reply in whole frames.
    ``max_data_segment_bytes`` splits a reply into Data-In PDUs of that size (None: one PDU).
    """

    link_bit_per_s: float = 1 * BITS_PER_GBIT
    mtu_bytes: int = 9000
    tcp_timestamps: bool = True
    packing: Literal["stream", "per_op"] = "stream"
    max_data_segment_bytes: int | None = None

    @property
    def tcp_ip_header_bytes(self) -> int:
        """IPv4 + TCP headers, with the timestamps option when enabled."""
        options = TCP_TIMESTAMPS_OPTION_BYTES if self.tcp_timestamps else 0
        return IPV4_HEADER_BYTES + TCP_HEADER_BYTES + options

    @property
    def mss_bytes(self) -> int:
        """TCP payload carried by one full frame."""
        return self.mtu_bytes - self.tcp_ip_header_bytes

    @property
    def frame_overhead_bytes(self) -> int:
        """Line bytes per frame beyond its TCP payload: headers, Ethernet framing, gap."""
        ethernet = ETH_PREAMBLE_SFD_BYTES + ETH_HEADER_BYTES + ETH_FCS_BYTES + ETH_INTERFRAME_GAP_BYTES
        return ethernet + self.tcp_ip_header_bytes

    @property
    def payload_efficiency(self) -> float:
        """Fraction of line time that carries TCP payload when frames are full."""
        return self.mss_bytes / (self.mss_bytes + self.frame_overhead_bytes)


def iscsi_stream_bytes(size_bytes: float, model: WireModel) -> float:
    """TCP payload bytes of one read reply: data padded to 4 bytes plus one BHS per Data-In PDU."""
    pdus = (
        1
        if model.max_data_segment_bytes is None
        else max(1, math.ceil(size_bytes / model.max_data_segment_bytes))
    )
    padded = math.ceil(size_bytes / DATA_SEGMENT_ALIGN_BYTES) * DATA_SEGMENT_ALIGN_BYTES
    return padded + pdus * BHS_BYTES


def wire_bytes_per_read(size_bytes: float, model: WireModel) -> float:
    """Line bytes (payload, headers, framing, gap) one read reply occupies."""
    stream = iscsi_stream_bytes(size_bytes, model)
    frames = stream / model.mss_bytes if model.packing == "stream" else math.ceil(stream / model.mss_bytes)
    return stream + frames * model.frame_overhead_bytes


def reply_time_us(size_bytes: float, model: WireModel) -> float:
    """Microseconds the link needs to carry one read reply."""
    return wire_bytes_per_read(size_bytes, model) * BITS_PER_BYTE / model.link_bit_per_s * US_PER_S


def network_ceiling_iops(size_bytes: float, model: WireModel) -> float:
    """Reads per second that fill the link (one reply per reply time)."""
    return US_PER_S / reply_time_us(size_bytes, model)


def paper_style_reply_time_us(size_bytes: float, model: WireModel) -> float:
    """Our reading of the paper's arithmetic: framing charged per MTU of iSCSI stream, not per MSS.

    ``(size + 48) * (MTU + overhead) / MTU`` at the link rate reproduces every printed cell of
    Butterfield 2017's network reply column to its last digit (overhead 90 bytes at MTU 9000).
    """
    stream = size_bytes + BHS_BYTES
    line = stream * (model.mtu_bytes + model.frame_overhead_bytes) / model.mtu_bytes
    return line * BITS_PER_BYTE / model.link_bit_per_s * US_PER_S


def network_reply_table(scst: Study, model: WireModel | None = None) -> pd.DataFrame:
    """Per size: the paper's network reply time beside ours (stream and per-op framing), ceilings."""
    model = model or WireModel()
    per_op = WireModel(**{**model.__dict__, "packing": "per_op"})
    tpt = scst.table("throughput_time")
    peaks = peak_table(scst).set_index("size_bytes")
    rows = []
    for size, paper_us in zip(tpt["size_bytes"], tpt["net_reply_us"], strict=True):
        ours_us = reply_time_us(size, model)
        rows.append(
            {
                "size_bytes": int(size),
                "paper_reply_us": paper_us,
                "model_reply_us": ours_us,
                "model_minus_paper_us": ours_us - paper_us,
                "model_diff_pct": PERCENT_PER_FRACTION * (ours_us - paper_us) / paper_us,
                "paper_style_reply_us": paper_style_reply_time_us(size, model),
                "per_op_reply_us": reply_time_us(size, per_op),
                "network_ceiling_iops": network_ceiling_iops(size, model),
                "per_op_ceiling_iops": network_ceiling_iops(size, per_op),
                "best_peak_iops": peaks.loc[size, "adaptive_iops"],
            }
        )
    out = pd.DataFrame(rows)
    out["best_peak_fraction_of_ceiling"] = out["best_peak_iops"] / out["network_ceiling_iops"]
    return out
