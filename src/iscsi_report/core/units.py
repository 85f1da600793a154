"""Unit conversions: the one home of every factor between two units, each named with both units.

Only conversions live here (``MS_PER_S``: milliseconds per second); protocol sizes live in the
module that owns the protocol (the iSCSI basic header segment: :data:`iscsi_report.core.model.BHS_BYTES`).
Binary prefixes (KiB, MiB) are powers of 2, decimal ones (kB, MB, Mbit) powers of 10: MiB/s in this
package always means 2**20 bytes per second, and link rates are decimal megabits, as iperf3 prints them.
``tests/test_units.py`` refuses a second definition of any of these names under ``src/``.
"""

from __future__ import annotations

# ---- information -------------------------------------------------------------------------------
BITS_PER_BYTE = 8
BYTES_PER_KIB = 2**10  # also sysstat's "kB", which is 1024 bytes
BYTES_PER_MIB = 2**20
KIB_PER_MIB = 2**10
BYTES_PER_MB = 1e6  # decimal megabyte (the SCST paper's MBPS column)
BYTES_PER_GB = 1e9  # decimal gigabyte
BITS_PER_MBIT = 1e6  # decimal megabit: link rates as iperf3 prints them
BITS_PER_GBIT = 1e9  # decimal gigabit

# ---- time --------------------------------------------------------------------------------------
S_PER_MIN = 60.0
MS_PER_S = 1000.0
US_PER_S = 1e6
NS_PER_MS = 1e6

# ---- rates and ratios --------------------------------------------------------------------------
IOPS_PER_KIOPS = 1e3  # "k IOPS" as the sources print them
IOPS_PER_MIOPS = 1e6  # "million IOPS"
PERCENT_PER_FRACTION = 100.0
