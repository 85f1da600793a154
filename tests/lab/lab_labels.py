"""The labels every lab fio and tshark file carries (shared by the design and dataset tests)."""

from __future__ import annotations

REQUIRED_LABELS = frozenset(
    {
        "one_way_delay_ms",
        "link_mbps",
        "bs_bytes",
        "rw",
        "iodepth",
        "r2t_window",
        "immediate_data_bytes",
        "max_recv_data_segment_bytes",
        "replicate",
    }
)
