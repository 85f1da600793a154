"""The ``iscsi-report summarize`` subcommand: per-file JSON or text summaries of raw outputs.

Kept light on imports (numpy only for ping), so summarizing one file is a fast process.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest.detect import TOOL_ORDER, detect_tool, sole_claimant, tool_module
from iscsi_report.core.ingest.textio import read_text

EXIT_OK = 0
EXIT_BAD_INPUT = 2
# Summaries do no linear algebra: one BLAS thread spares OpenBLAS starting (and spinning) a
# worker per core when numpy is imported, which costs CPU time on a busy machine.
BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"
# Terminal control characters (C0 but tab, DEL, C1) a raw file or its name may carry: shown
# escaped, so a file cannot move the cursor, recolour or retitle the user's terminal.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escape_control(text: str) -> str:
    """text with every terminal control character written as a visible \\xNN escape."""
    return _CONTROL_RE.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


def summarize_path(path: str | Path, tool: str = "auto") -> dict[str, Any]:
    """Summarize one raw file: {'path', 'tool', 'format', ...tool keys}; IngestError if unreadable."""
    path = str(path)
    text = None
    if tool == "auto":
        text = read_text(path)
        if not text or text.isspace():  # not text.strip(): no copy of a 27 MB log to learn it is not blank
            raise IngestError(path, "empty file: no tool output to summarize")
        found = detect_tool(text)
        claimant = sole_claimant(text) if found is None else None
        if found is None and claimant is None:
            raise IngestError(path, _unrecognised(text))
        tool = found[0] if found is not None else str(claimant)  # the parser names the problem
    module = tool_module(tool)
    if module is None:
        raise IngestError(path, f"no parser for tool {tool!r} is installed")
    if text is not None and hasattr(module, "parse_text"):
        result = module.parse_text(text, path)  # the file was already read for detection
    else:
        result = module.parse(path)
    body = module.summary(result)
    body.pop("path", None)
    body.pop("tool", None)
    fmt = body.pop("format", getattr(result, "format", None))
    return {"path": path, "tool": tool, "format": fmt, **body}


def _unrecognised(text: str) -> str:
    """Why no parser took the text: a JSON shape no tool writes is named, else the tool list."""
    body = text.strip()
    if body.startswith("["):
        return (
            "a JSON array; each tool writes one JSON object "
            "(fio --output-format=json, iperf3 -J, iostat -o JSON)"
        )
    if re.fullmatch(r"\{\s*\}", body):
        return "an empty JSON object {}: no tool's output (iperf3 -J writes start, intervals and end)"
    return f"not recognised as the output of any of: {', '.join(TOOL_ORDER)}"


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments: PATH... [--tool auto|ping|iperf3|fio|iostat] [--json]."""
    parser.add_argument("paths", nargs="+", metavar="PATH", help="raw tool output files")
    parser.add_argument("--tool", default="auto", choices=("auto", *TOOL_ORDER))
    parser.add_argument("--json", action="store_true", help="one JSON object per file per line")


def _fmt(value: Any) -> str:
    """Short human rendering of a number; any text with control characters escaped."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return escape_control(str(value))


def render_text(summary: dict[str, Any]) -> str:
    """A short human-readable block for one file's summary."""
    lines = [escape_control(f"{summary['path']}: {summary['tool']} ({summary['format']})")]
    for key, value in summary.items():
        if key in ("path", "tool", "format"):
            continue
        if isinstance(value, dict):
            inner = ", ".join(f"{_fmt(k)}={_fmt(v)}" for k, v in value.items())
            lines.append(f"  {key}: {inner}")
        elif isinstance(value, list):
            lines.extend(f"  {key}: {_fmt(item)}" for item in value)
        else:
            lines.append(f"  {key}: {_fmt(value)}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Summarize every path; exit 2 (one stderr line per bad file) if any could not be read."""
    if "numpy" not in sys.modules:  # a fresh CLI process: no one else's numpy is affected
        os.environ.setdefault(BLAS_THREADS_ENV, "1")
    status = EXIT_OK
    out = sys.stdout
    for path in args.paths:
        try:
            summary = summarize_path(path, args.tool)
        except IngestError as exc:
            print(escape_control(str(exc)), file=sys.stderr)  # one line: newlines are escaped too
            status = EXIT_BAD_INPUT
            continue
        if args.json:
            out.write(json.dumps(summary, allow_nan=False, default=_json_default) + "\n")
        else:
            out.write(render_text(summary) + "\n\n")
        out.flush()
    return status


def _json_default(value: Any) -> Any:
    """numpy scalars -> Python numbers, for summaries built by other modules."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
