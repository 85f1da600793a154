"""Parsers for raw outputs of ping, iperf3, fio and iostat, returning tidy DataFrames with units."""

from iscsi_report.core.errors import IngestError

__all__ = ["IngestError"]
