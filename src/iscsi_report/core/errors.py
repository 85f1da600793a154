"""Error types shared by every layer, so callers can catch one family and print one line."""

from __future__ import annotations

from pathlib import Path


class ReportError(Exception):
    """Base class for every error this package raises on purpose."""


class IngestError(ReportError):
    """A raw file could not be read; the message names the file, the place and what was expected.

    ``line`` is 1-based; ``json_path`` is a dotted/indexed path such as ``jobs[0].write.iops``.
    """

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        line: int | None = None,
        json_path: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.json_path = json_path
        self.detail = message
        where = self.path
        if line is not None:
            where += f":{line}"
        if json_path is not None:
            where += f": at {json_path}"
        super().__init__(f"{where}: {message}")


class ParamsError(ReportError):
    """A params file or notebook parameter cell is malformed; raised before anything executes."""


class RunError(ReportError):
    """A notebook run failed; carries the run, notebook and path of the saved failed notebook."""


class DesignError(ReportError):
    """A regression design cannot identify the requested coefficients (singular or collinear)."""
