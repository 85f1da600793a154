"""Parser for tshark's field export of an iSCSI capture: one row per PDU, and a timeline per write.

The export is ``tshark -r CAP -Y iscsi -T fields -E header=y -E separator=/t -E occurrence=a
-E aggregator=';'`` with the fields of :data:`EXPORT_FIELDS` (the header line names them, in
any order). A frame may carry several PDUs: every field then lists one value per PDU that has
it, in PDU order. ``iscsi.opcode``, ``iscsi.initiatortasktag`` and ``iscsi.datasegmentlength``
are present in every PDU; the other fields only in the opcodes of :data:`OPCODE_FIELDS`, which
is how the values are dealt back to their PDUs (a frame whose counts do not add up is an error
naming its line).

:func:`timeline` reduces the PDUs to the events of each SCSI command (command, each R2T with its
offset and desired length, each Data-Out, each Data-In, the response) with times relative to the
command; :func:`writes` gives one row per write: R2Ts on the wire, the most R2Ts outstanding
(sent by the target, their burst not yet completed by a Data-Out with the F bit) and latency.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest.textio import read_text

FORMAT = "tshark-iscsi-fields"
EXPORT_FIELDS: tuple[str, ...] = (
    "frame.number",
    "frame.time_epoch",
    "ip.src",
    "ip.dst",
    "tcp.stream",
    "iscsi.opcode",
    "iscsi.initiatortasktag",
    "iscsi.targettransfertag",
    "iscsi.bufferOffset",
    "iscsi.desireddatalength",
    "iscsi.datasegmentlength",
    "iscsi.scsicommand.expecteddatatransferlength",
    "iscsi.scsicommand.W",
    "iscsi.scsidata.F",
    "iscsi.r2tsn",
    "iscsi.keyvalue",
)
FRAME_FIELDS = ("frame.number", "frame.time_epoch", "ip.src", "ip.dst", "tcp.stream")
UNIVERSAL_FIELDS = ("iscsi.opcode", "iscsi.initiatortasktag", "iscsi.datasegmentlength")
REQUIRED_FIELDS = ("frame.number", "frame.time_epoch", "tcp.stream", *UNIVERSAL_FIELDS)

OP_NOP_OUT, OP_COMMAND, OP_LOGIN, OP_TEXT, OP_DATA_OUT, OP_LOGOUT = 0x00, 0x01, 0x03, 0x04, 0x05, 0x06
OP_NOP_IN, OP_RESPONSE, OP_LOGIN_RSP, OP_TEXT_RSP, OP_DATA_IN = 0x20, 0x21, 0x23, 0x24, 0x25
OP_LOGOUT_RSP, OP_R2T = 0x26, 0x31
OPCODE_NAMES = {
    OP_NOP_OUT: "nop_out",
    OP_COMMAND: "command",
    OP_LOGIN: "login",
    OP_TEXT: "text",
    OP_DATA_OUT: "data_out",
    OP_LOGOUT: "logout",
    OP_NOP_IN: "nop_in",
    OP_RESPONSE: "response",
    OP_LOGIN_RSP: "login_response",
    OP_TEXT_RSP: "text_response",
    OP_DATA_IN: "data_in",
    OP_LOGOUT_RSP: "logout_response",
    OP_R2T: "r2t",
}
# Fields (besides the universal ones) that Wireshark's iSCSI dissector shows for each opcode.
OPCODE_FIELDS: dict[int, tuple[str, ...]] = {
    OP_COMMAND: ("iscsi.scsicommand.expecteddatatransferlength", "iscsi.scsicommand.W"),
    OP_DATA_OUT: ("iscsi.targettransfertag", "iscsi.bufferOffset", "iscsi.scsidata.F"),
    OP_DATA_IN: ("iscsi.bufferOffset", "iscsi.scsidata.F"),
    OP_R2T: ("iscsi.targettransfertag", "iscsi.bufferOffset", "iscsi.desireddatalength", "iscsi.r2tsn"),
    OP_NOP_OUT: ("iscsi.targettransfertag",),
    OP_NOP_IN: ("iscsi.targettransfertag",),
}
VARIABLE_FIELDS = ("iscsi.keyvalue",)  # login/text key=value pairs: any number, one PDU a frame

PDU_COLUMNS = [
    "frame",
    "time_epoch_s",
    "src",
    "dst",
    "stream",
    "pdu",
    "opcode",
    "itt",
    "ttt",
    "offset_bytes",
    "length_bytes",
    "data_segment_bytes",
    "expected_bytes",
    "write",
    "final",
    "r2tsn",
    "keyvalues",
]


@dataclass
class TsharkResult:
    """PDUs of one export (one row per iSCSI PDU, in capture order) and the login keys."""

    path: str
    pdus: pd.DataFrame
    login_keys: dict[str, dict[str, str]] = field(default_factory=dict)  # side -> key -> value
    # lines whose frame tshark decoded as an opcode iSCSI does not define (its heuristics after
    # a lost segment read payload as a header): skipped, and counted here
    skipped_lines: list[int] = field(default_factory=list)


def sniff(text: str) -> str | None:
    """FORMAT if ``text`` starts with a tshark field-export header naming the iSCSI fields."""
    first = text.lstrip("\ufeff").split("\n", 1)[0].rstrip("\r").split("\t")
    if all(f in first for f in REQUIRED_FIELDS):
        return FORMAT
    return None


def _int(raw: str, path: str, line: int, name: str) -> int:
    try:
        return int(raw, 0)
    except ValueError:
        raise IngestError(path, f"{name}: expected an integer, got {raw!r}", line=line) from None


def _bool(raw: str) -> bool:
    return raw.strip().lower() in ("1", "true", "set")


def _split(raw: str) -> list[str]:
    return [] if raw == "" else raw.split(";")


def _first(cols: dict[str, str], name: str) -> str | None:
    """A one-PDU frame's value of ``name``: the first the dissector showed, None when it showed none."""
    raw = cols.get(name, "")
    return None if raw == "" else raw.split(";", 1)[0]


def _one_pdu(cols: dict[str, str], path: str, line: int) -> list[dict[str, Any]] | None:
    """:func:`_frame_pdus` for a frame of exactly one PDU, the common case, without the per-PDU dealing.

    Reads the same values the general path takes when a frame has one opcode (the first value a
    field shows, none when empty), so its rows are the same; a frame of several PDUs, or one whose
    universal fields do not each hold one value, goes the general way (and its errors).
    """
    op = _int(cols["iscsi.opcode"], path, line, "iscsi.opcode") & 0x3F
    if op not in OPCODE_NAMES:
        return None
    value = functools.partial(_first, cols)
    raw = (cols["iscsi.datasegmentlength"], cols["iscsi.initiatortasktag"], cols.get("iscsi.keyvalue", ""))
    return [_pdu_row(op, value, *raw, path, line)]


Value = Callable[[str], str | None]  # a PDU's raw value of a field, None when the frame shows none


def _pdu_row(
    op: int, value: Value, dsl_raw: str, itt_raw: str, keyvalues: str, path: str, line: int
) -> dict[str, Any]:
    """One PDU's row from its opcode, its field values (``value``) and its own segment length and tag.

    Both ways of reading a frame build their rows here, so they read the fields in one order: a
    frame with two bad values fails on the same one either way.
    """

    def num(name: str) -> int | None:
        raw = value(name)
        return None if raw in (None, "") else _int(raw, path, line, name)

    offset, desired = num("iscsi.bufferOffset"), num("iscsi.desireddatalength")
    dsl = _int(dsl_raw, path, line, "iscsi.datasegmentlength")
    final_raw, write_raw = value("iscsi.scsidata.F"), value("iscsi.scsicommand.W")
    return {
        "pdu": OPCODE_NAMES.get(op, f"opcode_{op:#04x}"),
        "opcode": op,
        "itt": _int(itt_raw, path, line, "itt"),
        "ttt": num("iscsi.targettransfertag"),
        "offset_bytes": offset,
        "length_bytes": desired if op == OP_R2T else (dsl if op in (OP_DATA_OUT, OP_DATA_IN) else None),
        "data_segment_bytes": dsl,
        "expected_bytes": num("iscsi.scsicommand.expecteddatatransferlength"),
        "write": None if write_raw is None else _bool(write_raw),
        "final": None if final_raw is None else _bool(final_raw),
        "r2tsn": num("iscsi.r2tsn"),
        "keyvalues": keyvalues if op in (OP_LOGIN, OP_LOGIN_RSP, OP_TEXT, OP_TEXT_RSP) else "",
    }


def _single_valued(cols: dict[str, str]) -> bool:
    """True if each universal field holds exactly one value (one PDU in the frame)."""
    return all((v := cols.get(name, "")) != "" and ";" not in v for name in UNIVERSAL_FIELDS)


def _frame_pdus(cols: dict[str, str], path: str, line: int) -> list[dict[str, Any]] | None:
    """Deal one frame's aggregated field values back to its PDUs (None: not a valid iSCSI frame)."""
    if _single_valued(cols):
        return _one_pdu(cols, path, line)
    return _dealt_pdus(cols, path, line)


def _dealt_pdus(cols: dict[str, str], path: str, line: int) -> list[dict[str, Any]] | None:
    """:func:`_frame_pdus` for any frame: each field's values dealt to the PDUs whose opcode has it."""
    opcodes = [_int(v, path, line, "iscsi.opcode") & 0x3F for v in _split(cols["iscsi.opcode"])]
    if not opcodes:
        return []
    if any(op not in OPCODE_NAMES for op in opcodes):
        return None
    values = {name: _split(cols.get(name, "")) for name in cols if name.startswith("iscsi.")}
    for name in UNIVERSAL_FIELDS:
        if len(values.get(name, [])) != len(opcodes):
            raise IngestError(
                path, f"{name} has {len(values.get(name, []))} values for {len(opcodes)} PDUs", line=line
            )
    wanted: dict[str, int] = {}
    for op in opcodes:
        for name in OPCODE_FIELDS.get(op, ()):
            wanted[name] = wanted.get(name, 0) + 1
    for name, vals in values.items():
        if name in UNIVERSAL_FIELDS or name in VARIABLE_FIELDS:
            continue
        if name not in EXPORT_FIELDS:
            continue
        if len(vals) != wanted.get(name, 0):
            if len(opcodes) == 1:  # unambiguous: take what the dissector showed
                continue
            raise IngestError(
                path,
                f"{name} has {len(vals)} values, the frame's opcodes "
                f"{[hex(o) for o in opcodes]} imply {wanted.get(name, 0)}",
                line=line,
            )
    cursor = dict.fromkeys(values, 0)

    def take(name: str, *, op: int) -> str | None:
        vals = values.get(name, [])
        if len(opcodes) == 1:
            return vals[0] if vals else None
        if name not in OPCODE_FIELDS.get(op, ()):
            return None
        i = cursor[name]
        cursor[name] = i + 1
        return vals[i]

    pdus = []
    for k, op in enumerate(opcodes):
        keyvalues = ";".join(values.get("iscsi.keyvalue", [])) if k == 0 else ""
        raw = (values["iscsi.datasegmentlength"][k], values["iscsi.initiatortasktag"][k], keyvalues)
        pdus.append(_pdu_row(op, functools.partial(take, op=op), *raw, path, line))
    return pdus


def parse_text(text: str, path: str | Path = "<text>") -> TsharkResult:
    """Parse a field export (header line first) into one row per PDU."""
    path = str(path)
    lines = text.lstrip("\ufeff").splitlines()
    if not text.strip():
        raise IngestError(path, "empty file: no tshark field export in it")
    if not lines or sniff(lines[0]) is None:
        raise IngestError(
            path,
            f"expected a tshark -T fields -E header=y export with the fields {', '.join(REQUIRED_FIELDS)}",
            line=1,
        )
    header = lines[0].split("\t")
    rows: list[dict[str, Any]] = []
    skipped: list[int] = []
    for lineno, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        parts = raw.split("\t")
        if len(parts) != len(header):
            raise IngestError(
                path, f"expected {len(header)} tab-separated fields, got {len(parts)}", line=lineno
            )
        cols = dict(zip(header, parts, strict=True))
        try:
            t = float(cols["frame.time_epoch"])
        except ValueError:
            raise IngestError(
                path, f"frame.time_epoch: not a number: {cols['frame.time_epoch']!r}", line=lineno
            ) from None
        frame = _int(cols["frame.number"], path, lineno, "frame.number")
        stream = _int(cols["tcp.stream"].split(";")[0], path, lineno, "tcp.stream")
        pdus_here = _frame_pdus(cols, path, lineno)
        if pdus_here is None:
            skipped.append(lineno)
            continue
        for pdu in pdus_here:
            rows.append(
                {
                    "frame": frame,
                    "time_epoch_s": t,
                    "src": cols.get("ip.src", ""),
                    "dst": cols.get("ip.dst", ""),
                    "stream": stream,
                    **pdu,
                }
            )
    pdus = pd.DataFrame(rows, columns=PDU_COLUMNS)
    login: dict[str, dict[str, str]] = {}
    for _, r in pdus[pdus["pdu"].isin(["login", "login_response"])].iterrows():
        side = "initiator" if r["pdu"] == "login" else "target"
        for kv in str(r["keyvalues"]).split(";"):
            if "=" in kv:
                key, value = kv.split("=", 1)
                login.setdefault(side, {})[key] = value
    return TsharkResult(path, pdus, login, skipped)


def parse(path: str | Path) -> TsharkResult:
    """Parse a tshark field-export file."""
    return parse_text(read_text(path), path)


EVENT_COLUMNS = [
    "stream",
    "itt",
    "event",
    "time_s",
    "offset_bytes",
    "length_bytes",
    "final",
    "r2tsn",
    "outstanding_r2t",
]


def timeline(result: TsharkResult) -> pd.DataFrame:
    """Per SCSI command, its events with times relative to the command (seconds).

    ``outstanding_r2t`` is the number of R2Ts seen whose burst had not yet completed, just
    after the event (an R2T adds one, a Data-Out with the F bit that answers an R2T removes one).
    Each command's rows are walked as plain lists: a capture holds thousands of PDUs, and a
    pandas row per PDU cost seconds per file.
    """
    pdus = result.pdus
    io = pdus[pdus["pdu"].isin(["command", "r2t", "data_out", "data_in", "response"])]
    out: list[dict[str, Any]] = []
    for (stream, itt), rows in _by_command(io, _TIMELINE_COLUMNS).items():
        out.extend(_command_events(int(stream), int(itt), rows))
    return pd.DataFrame(out, columns=EVENT_COLUMNS)


# The PDU columns a command's events are made from.
_TIMELINE_COLUMNS: tuple[str, ...] = (
    "pdu",
    "time_epoch_s",
    "ttt",
    "offset_bytes",
    "length_bytes",
    "final",
    "r2tsn",
    "data_segment_bytes",
)


def _by_command(frame: pd.DataFrame, names: tuple[str, ...]) -> dict[tuple[Any, Any], dict[str, list[Any]]]:
    """``frame``'s rows per (stream, itt) in order of first appearance, ``names`` as lists in row order.

    The same groups, in the same order, as ``groupby(["stream", "itt"], sort=False)``, without a
    small frame per command (issue 28: that was most of a capture's parse).
    """
    columns = {name: frame[name].tolist() for name in (*names, "stream", "itt")}
    out: dict[tuple[Any, Any], dict[str, list[Any]]] = {}
    for i, key in enumerate(zip(columns["stream"], columns["itt"], strict=True)):
        command = out.setdefault(key, {name: [] for name in names})
        for name in names:
            command[name].append(columns[name][i])
    return out


def _command_events(stream: int, itt: int, cols: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """One command's events in capture order, with the R2Ts outstanding after each ([] if no command)."""
    events = cols["pdu"]
    if "command" not in events:
        return []  # a command whose start the capture missed
    segment = cols["data_segment_bytes"]
    t0 = float(cols["time_epoch_s"][events.index("command")])
    outstanding = 0
    out = []
    for i, event in enumerate(events):
        final = cols["final"][i]
        if event == "r2t":
            outstanding += 1
        elif event == "data_out" and final and cols["ttt"][i] not in (None, 0xFFFFFFFF) and outstanding > 0:
            outstanding -= 1
        out.append(
            {
                "stream": stream,
                "itt": itt,
                "event": event,
                "time_s": float(cols["time_epoch_s"][i]) - t0,
                "offset_bytes": cols["offset_bytes"][i] if event != "command" else 0,
                "length_bytes": segment[i] if event == "command" else cols["length_bytes"][i],
                "final": final,
                "r2tsn": cols["r2tsn"][i],
                "outstanding_r2t": outstanding,
            }
        )
    return out


WRITE_COLUMNS = [
    "stream",
    "itt",
    "bytes",
    "immediate_bytes",
    "r2t_count",
    "max_outstanding_r2t",
    "data_out_pdus",
    "r2t_bytes",
    "latency_s",
    "first_r2t_s",
]


def writes(result: TsharkResult, events: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per complete write command: R2Ts on the wire, most outstanding, latency.

    ``events``: the capture's :func:`timeline` when already computed. Each command's events are
    walked as plain lists (as :func:`timeline` walks its PDUs): boolean masks on a small frame per
    command cost most of a capture's parse (issue 28).
    """
    ev = timeline(result) if events is None else events
    by_command = _by_command(ev, ("event", "time_s", "length_bytes", "outstanding_r2t"))
    pdus = result.pdus
    cmds = pdus[(pdus["pdu"] == "command") & (pdus["write"].fillna(False).astype(bool))]
    rows = []
    for _, c in cmds.iterrows():
        e = by_command.get((c["stream"], c["itt"]))
        if e is None or "response" not in e["event"]:
            continue
        r2t = [i for i, kind in enumerate(e["event"]) if kind == "r2t"]
        rows.append(
            {
                "stream": int(c["stream"]),
                "itt": int(c["itt"]),
                "bytes": c["expected_bytes"],
                "immediate_bytes": int(c["data_segment_bytes"]),
                "r2t_count": len(r2t),
                "max_outstanding_r2t": int(max(e["outstanding_r2t"])),
                "data_out_pdus": e["event"].count("data_out"),
                "r2t_bytes": int(sum(_or_zero(e["length_bytes"][i]) for i in r2t)),
                "latency_s": float(e["time_s"][e["event"].index("response")]),
                "first_r2t_s": float(e["time_s"][r2t[0]]) if r2t else None,
            }
        )
    return pd.DataFrame(rows, columns=WRITE_COLUMNS)


def _or_zero(value: Any) -> Any:
    """A missing length (None or NaN) as 0, as pandas' fillna(0) gives it."""
    return 0 if value is None or value != value else value


def summary(result: TsharkResult) -> dict[str, Any]:
    """Counts per PDU kind, writes seen, R2Ts per write and the negotiated login keys."""
    w = writes(result)
    return {
        "tool": "tshark",
        "format": FORMAT,
        "pdus": len(result.pdus),
        "pdu_counts": {k: int(v) for k, v in result.pdus["pdu"].value_counts().items()},
        "writes": len(w),
        "r2t_per_write": sorted({int(x) for x in w["r2t_count"]}) if len(w) else [],
        "max_outstanding_r2t": int(w["max_outstanding_r2t"].max()) if len(w) else 0,
        "login_keys": result.login_keys,
        "skipped_frames": len(result.skipped_lines),
    }
