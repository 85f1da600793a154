"""Parsers for raw outputs of ping, iperf3, fio and iostat, returning tidy DataFrames with units."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from iscsi_report.core.errors import IngestError

__all__ = ["IngestError", "lazy_attributes"]


def lazy_attributes(module: str, builders: dict[str, Callable[[], Any]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) building each named attribute on first use.

    The fio and iostat schemas are built so, so that importing a parser does not import pandera.
    """

    def getattr_(name: str) -> Any:
        """The attribute ``name`` of ``module``, built now; AttributeError for any other name."""
        if name in builders:
            return builders[name]()
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return getattr_
