"""Tool auto-detection: ask each tool module's sniff() in turn, from the file's content only."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

# Order matters: JSON producers first (cheap, unambiguous checks on keys), then text formats.
# iostat text and ping text never share their anchor lines, so their relative order is free.
TOOL_ORDER = ("ping", "iperf3", "fio", "iostat", "tshark")
TOOLS = TOOL_ORDER


def tool_module(tool: str) -> ModuleType | None:
    """Import iscsi_report.core.ingest.<tool> lazily; None if that module does not exist (yet)."""
    name = f"iscsi_report.core.ingest.{tool}"
    try:
        return import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return None


def detect_tool(text: str) -> tuple[str, str] | None:
    """Return (tool, format) for the first module whose sniff() accepts text, else None."""
    for tool in TOOL_ORDER:
        module = tool_module(tool)
        if module is None:
            continue
        fmt = module.sniff(text)
        if fmt is not None:
            return tool, fmt
    return None


def sole_claimant(text: str) -> str | None:
    """The one tool whose claims() recognises text by its header though no sniff() accepted it
    (its parser then names the specific problem, e.g. a decimal comma); None if zero or several."""
    found = []
    for tool in TOOL_ORDER:
        module = tool_module(tool)
        claims = getattr(module, "claims", None)
        if claims is not None and claims(text):
            found.append(tool)
    return found[0] if len(found) == 1 else None
