"""pandera schemas for the ping and iperf3 DataFrames (fio/iostat keep theirs in their modules).

Imported lazily (only when a DataFrame is built), so the summarize CLI does not pay for pandera.
"""

from __future__ import annotations

import pandera.pandas as pa

PING_SAMPLES = pa.DataFrameSchema(
    {
        "seq": pa.Column("int64", pa.Check.ge(0)),
        "rtt_ms": pa.Column("float64", pa.Check.ge(0.0)),
        "timestamp_s": pa.Column("float64", pa.Check.ge(0.0), nullable=True),
        "duplicate": pa.Column(bool),
    },
    strict=True,
    ordered=True,
)

IPERF3_INTERVALS = pa.DataFrameSchema(
    {
        "interval": pa.Column("int64", pa.Check.ge(0)),
        "stream": pa.Column(str),  # socket number as text, or "sum"
        "direction": pa.Column(str, pa.Check.isin(["forward", "reverse"])),
        "sender": pa.Column("boolean", nullable=True),
        "start_s": pa.Column("float64", pa.Check.ge(0.0)),
        "end_s": pa.Column("float64", pa.Check.ge(0.0)),
        "bytes": pa.Column("int64", pa.Check.ge(0)),
        "bits_per_s": pa.Column("float64", pa.Check.ge(0.0)),
        "omitted": pa.Column(bool),
    },
    strict=False,
    ordered=False,
)
