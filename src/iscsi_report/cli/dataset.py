"""The ``iscsi-report dataset`` subcommand: init, check and update a raw dataset; the label page.

``init`` writes ``manifest.yaml`` for a folder of raw files (labels inferred from the files,
the rest from ``--label`` or ``--defaults``); ``check`` lists every problem before any notebook
runs; ``update`` refreshes checksums and says what changed; ``labels`` prints (or writes) the
book page documenting every label, generated from the manifest schema.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from iscsi_report.core import dataset, labels, yamlio
from iscsi_report.core.atomic import write_atomic
from iscsi_report.core.errors import IngestError

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_BAD_INPUT = 2
SHA_PREFIX = 12  # characters of a sha256 shown when it changes
SHOW_FILES = 6  # files named per missing label before "and N more"
LABEL_PAGE = "book/labels.md"


def configure(parser: argparse.ArgumentParser) -> None:
    """Sub-subcommands init, check, update and labels."""
    subs = parser.add_subparsers(dest="action", required=True)
    init = subs.add_parser("init", help="write manifest.yaml for a folder of raw files")
    init.add_argument("dir", type=Path, metavar="DIR")
    init.add_argument("--name", help="dataset name (default: the folder's name)")
    init.add_argument("--title", help="title shown in the book (default: the name)")
    init.add_argument("--defaults", type=Path, metavar="FILE", help="YAML: {all|TOOL|GLOB: {label: value}}")
    init.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a label for every file (repeatable)",
    )
    init.add_argument("--skip-unknown", action="store_true", help="leave out files no tool recognises")
    init.add_argument("--force", action="store_true", help="replace an existing manifest.yaml")
    check = subs.add_parser("check", help="every problem of a dataset, before any notebook runs")
    check.add_argument("dir", type=Path, metavar="DIR")
    update = subs.add_parser("update", help="refresh checksums after an intended change")
    update.add_argument("dir", type=Path, metavar="DIR")
    page = subs.add_parser("labels", help="the label contract as a book page (Markdown)")
    page.add_argument("--write", type=Path, metavar="PATH", help=f"write it there (e.g. {LABEL_PAGE})")


def run(args: argparse.Namespace) -> int:
    """Dispatch to the chosen action; an IngestError is one line on stderr and exit 2."""
    action = {"init": run_init, "check": run_check, "update": run_update, "labels": run_labels}[args.action]
    try:
        return action(args)
    except IngestError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT


# ---- init ------------------------------------------------------------------------------------------


def parse_value(text: str) -> Any:
    """A --label value as YAML reads it (8 -> int, 0.002 -> float, true -> bool, else str)."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, (str, int, float, bool)) else text


def parse_label_flags(flags: Sequence[str]) -> dict[str, Any]:
    """['network=lan', 'side=initiator'] -> {'network': 'lan', 'side': 'initiator'}."""
    out: dict[str, Any] = {}
    for flag in flags:
        key, sep, value = flag.partition("=")
        if not sep or not key.strip():
            raise IngestError("--label", f"expected KEY=VALUE, got {flag!r}")
        out[key.strip()] = parse_value(value.strip())
    return out


def read_defaults(path: Path) -> dict[str, dict[str, Any]]:
    """A defaults file: a mapping of selector (all, a tool, or a glob) to a mapping of labels."""
    doc = yamlio.load_file(path)
    if doc.data is None:
        return {}
    if not isinstance(doc.data, dict):
        raise IngestError(path, "expected a mapping of selector (all, ping, fio, a glob) to labels", line=1)
    out: dict[str, dict[str, Any]] = {}
    for selector, mapping in doc.data.items():
        line = doc.line_of((selector,))
        if not isinstance(mapping, dict):
            raise IngestError(path, f"{selector!r}: expected a mapping of label: value", line=line)
        for key, value in mapping.items():
            if not isinstance(value, (str, int, float, bool)):
                raise IngestError(
                    path, f"{selector}.{key}: expected a scalar label value, got {value!r}", line=line
                )
        out[str(selector)] = {str(k): v for k, v in mapping.items()}
    return out


def combined_defaults(defaults: Path | None, flags: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The defaults file with the --label flags added to its 'all' entry (flags win)."""
    out = read_defaults(defaults) if defaults is not None else {}
    out[labels.ALL_FILES] = {**out.get(labels.ALL_FILES, {}), **parse_label_flags(flags)}
    return out


def _few(paths: Sequence[str]) -> str:
    """Up to SHOW_FILES paths, then 'and N more'."""
    shown = ", ".join(paths[:SHOW_FILES])
    return shown + (f" and {len(paths) - SHOW_FILES} more" if len(paths) > SHOW_FILES else "")


def _missing_hint(key: str) -> str:
    """How to give a missing label."""
    if key == labels.SIDE_KEY:
        return "--label side=initiator|target|local"
    return f"--label {key}=VALUE (or a defaults entry per tool or glob)"


def write_manifest(
    root: Path,
    name: str | None = None,
    defaults: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    title: str | None = None,
    skip_unknown: bool = False,
    out: Any = None,
) -> int:
    """Scaffold, report and (when nothing is missing) write root/manifest.yaml; the exit status."""
    out = out or sys.stdout
    sc = labels.scaffold(root, defaults, name)
    for note in sc.notes:
        print(f"note: {note}", file=out)
    for err in sc.errors:
        print(f"error: {err}", file=out)
    verb = "left out" if skip_unknown else "refused (use --skip-unknown to leave them out)"
    if sc.unknown:
        print(f"{len(sc.unknown)} file(s) not recognised as ping/iperf3/fio/iostat, {verb}:", file=out)
        for rel in sc.unknown:
            print(f"  {rel}", file=out)
    if sc.unsupported:
        what = "recognised in a format the project does not read"
        print(f"{len(sc.unsupported)} file(s) {what}, {verb}:", file=out)
        for line in sc.unsupported:
            print(f"  {line}", file=out)
    for key, paths in sc.missing.items():
        print(f"missing {key} on {len(paths)} file(s) ({_few(paths)}): give {_missing_hint(key)}", file=out)
    if not sc.ok or ((sc.unknown or sc.unsupported) and not skip_unknown):
        print(f"{root / dataset.MANIFEST}: not written", file=out)
        return EXIT_PROBLEMS
    if title:
        sc.doc["title"] = title
    target = root / dataset.MANIFEST
    labels.validate_doc(sc.doc, target)
    try:
        write_atomic(target, yaml.safe_dump(sc.doc, sort_keys=False, allow_unicode=True))
    except OSError as exc:
        why = exc.strerror or exc
        raise IngestError(target, f"cannot write the manifest: {why} (read-only data?)") from exc
    tools = Counter(e["tool"] for e in sc.doc["files"])
    counts = ", ".join(f"{tool} {n}" for tool, n in sorted(tools.items()))
    print(f"wrote {target}: {len(sc.doc['files'])} files ({counts})", file=out)
    return EXIT_OK


def run_init(args: argparse.Namespace) -> int:
    """iscsi-report dataset init DIR."""
    root = args.dir.resolve()
    if not root.is_dir():
        raise IngestError(args.dir, "not a folder")
    if root == Path(root.anchor):
        raise IngestError(args.dir, "the file system's root is no dataset folder: give a folder of raw files")
    if (root / dataset.MANIFEST).exists() and not args.force:
        raise IngestError(
            root / dataset.MANIFEST,
            "exists already: refresh its checksums with iscsi-report dataset update, "
            "or rebuild it with --force",
        )
    defaults = combined_defaults(args.defaults, args.label)
    return write_manifest(root, args.name, defaults, title=args.title, skip_unknown=args.skip_unknown)


# ---- check and update ------------------------------------------------------------------------------


def run_check(args: argparse.Namespace) -> int:
    """iscsi-report dataset check DIR: every problem at once; exit 1 if any."""
    report = labels.dataset_problems(args.dir)
    for note in report.notes:
        print(f"note: {note}")
    for problem in report.problems:
        print(problem)
    if report.problems:
        print(f"{args.dir}: {len(report.problems)} problem(s) in {report.files} listed file(s)")
        return EXIT_PROBLEMS
    print(f"{args.dir}: ok, {report.files} files, checksums, labels, pairing and grouping consistent")
    return EXIT_OK


def update_lines(root: Path) -> tuple[list[str], list[str], dict[str, Any], bool, list[str]]:
    """(changes, problems, new document, changed?, notes) for refreshing root's manifest checksums."""
    manifest = root / dataset.MANIFEST
    doc = yamlio.load_file(manifest)
    files = doc.data.get("files") if isinstance(doc.data, dict) else None
    if not isinstance(files, list):
        raise IngestError(manifest, "expected a mapping with a 'files' list", line=1)
    changes: list[str] = []
    problems: list[str] = []
    listed = []
    for i, item in enumerate(files):
        rel = item.get("path") if isinstance(item, dict) else None
        if not isinstance(rel, str):
            raise IngestError(manifest, "expected a string 'path'", line=doc.line_of(("files", i)))
        listed.append(rel)
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: listed (line {doc.line_of(('files', i, 'path'))}) but missing")
            continue
        sha, size = labels.entry_sha(path)
        old = item.get("sha256")
        if old != sha or item.get("bytes") != size:
            sizes = f"{item.get('bytes')} -> {size} bytes"
            changes.append(f"{rel}: sha256 {str(old)[:SHA_PREFIX]}... -> {sha[:SHA_PREFIX]}... ({sizes})")
        item["sha256"], item["bytes"] = sha, size
    unlisted, notes = labels.unlisted_report(root, listed)
    return changes, problems + unlisted, doc.data, bool(changes), notes


def run_update(args: argparse.Namespace) -> int:
    """iscsi-report dataset update DIR: refresh sha256/bytes, say what changed; exit 1 if files are
    missing (nothing written) or raw outputs are present but unlisted (checksums still refreshed).
    Other unlisted files (notes.yaml is never one) are noted only."""
    root = args.dir.resolve()
    changes, problems, doc, changed, notes = update_lines(root)
    missing = [p for p in problems if p.endswith("but missing")]
    for note in notes:
        print(f"note: {note}")
    for line in changes + problems:
        print(line)
    if missing:
        print(f"{root / dataset.MANIFEST}: not updated ({len(missing)} listed file(s) missing)")
        return EXIT_PROBLEMS
    if changed:
        labels.validate_doc(doc, root / dataset.MANIFEST)
        dataset.write_manifest(root / dataset.MANIFEST, doc)
    print(f"{root / dataset.MANIFEST}: {len(changes)} file(s) changed, {len(doc['files'])} listed")
    return EXIT_PROBLEMS if problems else EXIT_OK


# ---- the label page --------------------------------------------------------------------------------


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _yaml(value: object) -> str:
    """A label value as it is written in a manifest (true, 1, tcp)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def label_page() -> str:
    """The book page documenting every manifest label, generated from the pydantic schema."""
    rows = labels.contract_rows()
    lines = [
        "% Generated by `iscsi-report dataset labels --write book/labels.md` from the manifest schema",
        "% (iscsi_report.core.dataset); edit the field descriptions there, not this file.",
        "# Labels of a dataset",
        "",
        "Every raw file of a dataset is one entry of its `manifest.yaml`: the tool that wrote it, the "
        "side it ran on, its sha256, and labels. `iscsi-report dataset init DIR` writes the manifest: "
        "it reads each label whose *set by* names a file from that file itself and asks only for the others "
        "(`--label KEY=VALUE` for every file, or `--defaults FILE` with entries for `all`, a tool or a "
        "glob). `iscsi-report dataset check DIR` lists every problem at once; `iscsi-report dataset "
        "update DIR` refreshes the checksums after an intended change.",
        "",
        "| label | type | unit | set by | meaning | effect |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        cells = (
            f"`{row['label']}`",
            row["type"],
            row["unit"] or "-",
            row["set_by"],
            row["meaning"],
            row["effect"],
        )
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += ["", "## What each tool's files need from you", ""]
    for tool, keys in labels.USER_LABELS.items():
        need = ", ".join(f"`{k}`" for k in ("side", *keys))
        extra = (
            " and `interval_s` when the file cannot show it (no `-D`, no statistics)"
            if tool == "ping"
            else ""
        )
        lines.append(f"- {tool}: {need}{extra}.")
    lines += [
        "",
        "## Runs that are never pooled",
        "",
        "The chapters group runs by every label that says how a run was made, and name each group:",
        "",
        f"- local fio runs (side `local`, or a scenario with a `{labels.LOCAL_PREFIX}` part) are fitted per "
        f"{', '.join(f'`{k}`' for k in labels.DEVICE_FIT_KEYS)}; the model reads only the fits of "
        f"{', '.join(f'`{k}: {_yaml(v)}`' for k, v in labels.MODEL_FIT_LABELS.items())} runs;",
        f"- fio runs are tabulated per {', '.join(f'`{k}`' for k in labels.THROUGHPUT_KEYS)};",
        f"- iperf3 runs are summarised per {', '.join(f'`{k}`' for k in labels.LINK_KEYS)}; the link "
        "capacity is that of "
        f"{', '.join(f'`{k}: {_yaml(v)}`' for k, v in labels.LINK_CAPACITY_LABELS.items())} "
        "runs (a UDP rate is what was offered, a reverse run measures the other direction);",
        "- device request sizes from iostat are averaged per "
        f"{', '.join(f'`{k}`' for k in labels.REQUEST_SIZE_KEYS)}.",
        "",
        "`dataset init` derives a `scenario` that keeps such runs apart: `local-ENGINE` for direct "
        "writes at queue depth 1 on the device's machine, `iscsi-ENGINE` over iSCSI, with `qdN-` "
        "and `buffered-` prefixes for other queue depths and for buffered writes.",
        "",
    ]
    return "\n".join(lines)


def run_labels(args: argparse.Namespace) -> int:
    """Print the label page, or write it to --write."""
    text = label_page()
    if args.write is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        args.write.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise IngestError(args.write, f"--write: cannot write the label page: {exc.strerror or exc}") from exc
    print(f"wrote {args.write}")
    return EXIT_OK
