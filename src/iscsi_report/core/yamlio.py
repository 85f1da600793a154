"""Strict YAML for files users write (manifests, params, published numbers).

PyYAML's safe loader keeps the last of two equal keys without a word, and aliases nested in
aliases expand a few kilobytes into gigabytes for whoever walks the result. This loader
refuses both: a duplicated key is an error naming the file, its line and the key; aliases
(``*name``) are allowed only while the document they expand to stays under MAX_YAML_NODES
nodes (a published file may reuse a section title; an alias bomb is refused); merge keys
(``<<``) are refused; the file size and the nesting depth are capped. It also records the line
of every mapping key and sequence item, so a schema error can name its line.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from iscsi_report.core import keep
from iscsi_report.core.errors import IngestError
from iscsi_report.core.ingest.textio import read_text

MAX_YAML_BYTES = 2 * 1024 * 1024  # the largest manifest (blog-2023) is 25 KB
MAX_YAML_DEPTH = 32  # manifests nest 4 levels deep
MAX_YAML_NODES = 100_000  # nodes after alias expansion (blog-2023's manifest has about 2,500)
MERGE_TAG = "tag:yaml.org,2002:merge"
MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300  # Python refuses longer integer literals

Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class YamlDoc:
    """A loaded YAML document and the 1-based line of every key and item, by location."""

    path: str
    data: Any
    lines: dict[Loc, int] = field(default_factory=dict)

    def line_of(self, loc: Loc) -> int | None:
        """Line of the deepest recorded prefix of loc (None for an empty document)."""
        for n in range(len(loc), -1, -1):
            if loc[:n] in self.lines:
                return self.lines[loc[:n]]
        return None


def json_path(loc: Loc) -> str:
    """('files', 3, 'labels') -> 'files[3].labels'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _Strict:
    """The strict rules, over either parser: no merge keys, a depth cap, duplicate keys refused.

    Mixed into a loader class below; the composer's and constructor's own methods are named
    explicitly (not through ``super``) because the C parser's loader is not a Python composer.
    """

    source: str
    depth: int
    first_alias: AliasEvent | None

    def _strict_init(self, path: str) -> None:
        """Set the state the rules keep: the file's name, the nesting depth, the first alias."""
        self.source = path
        self.depth = 0
        self.first_alias = None

    def fail(self, mark: Any, message: str) -> IngestError:
        """An IngestError at the line of mark (a yaml Mark, from the Python or the C parser)."""
        return IngestError(self.source, message, line=mark.line + 1 if mark else None)

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        """Refuse nesting deeper than MAX_YAML_DEPTH, else compose as usual (noting aliases)."""
        loader: Any = self  # the parser's event methods come from the loader class this is mixed into
        if self.first_alias is None and loader.check_event(AliasEvent):
            self.first_alias = loader.peek_event()
        self.depth += 1
        if self.depth > MAX_YAML_DEPTH:
            raise self.fail(loader.peek_event().start_mark, f"nested deeper than {MAX_YAML_DEPTH} levels")
        try:
            return Composer.compose_node(loader, parent, index)
        finally:
            self.depth -= 1

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        """A mapping whose keys are unique, hashable and not merge keys."""
        loader: Any = self
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == MERGE_TAG:
                raise self.fail(key_node.start_mark, "YAML merge key '<<' refused: write the keys out")
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError as exc:
                raise self.fail(key_node.start_mark, "a mapping key must be a plain value") from exc
            if first is not None:
                raise self.fail(key_node.start_mark, f"duplicate key {key!r} (first at line {first})")
            seen[key] = line
        return SafeConstructor.construct_mapping(loader, node, deep=deep)


class _PyStrictLoader(_Strict, yaml.SafeLoader):
    """The strict rules over PyYAML's pure-Python parser (used where libyaml is absent)."""

    def __init__(self, text: str, path: str) -> None:
        yaml.SafeLoader.__init__(self, text)
        self._strict_init(path)


class _CStrictLoader(_Strict, Composer, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The strict rules over libyaml's events: the same documents, about five times faster (a lab
    manifest of a thousand files: 6.0 s to 1.2 s). The composer stays PyYAML's Python one, so the
    depth cap and the alias check see every node."""

    def __init__(self, text: str, path: str) -> None:
        getattr(yaml, "CSafeLoader", yaml.SafeLoader).__init__(self, text)
        Composer.__init__(self)
        self._strict_init(path)


_StrictLoader = _CStrictLoader if yaml.__with_libyaml__ else _PyStrictLoader


def _record_lines(loader: Any, node: Node, loc: Loc, lines: dict[Loc, int]) -> None:
    """Fill lines with the line of every mapping key and sequence item under node."""
    if isinstance(node, MappingNode):
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True) if isinstance(key_node, ScalarNode) else None
            if isinstance(key, str | int) and not isinstance(key, bool):
                sub = (*loc, key)
                lines[sub] = key_node.start_mark.line + 1
                _record_lines(loader, value_node, sub, lines)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            lines[(*loc, i)] = item.start_mark.line + 1
            _record_lines(loader, item, (*loc, i), lines)


def _expanded_shape(root: Node) -> tuple[int, int]:
    """(nodes, depth) of the document once every alias is expanded (memoised: linear)."""
    shape: dict[int, tuple[int, int]] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in shape:
            continue
        if isinstance(node, ScalarNode):
            shape[id(node)] = (1, 1)
            continue
        children = [n for pair in node.value for n in pair] if isinstance(node, MappingNode) else node.value
        if children_done:
            sub = [shape[id(c)] for c in children]
            shape[id(node)] = (1 + sum(n for n, _ in sub), 1 + max((d for _, d in sub), default=0))
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in shape)
    return shape[id(root)]


def _refuse_alias_bomb(loader: Any, node: Node) -> None:
    """IngestError when aliases expand the document beyond MAX_YAML_NODES nodes or nest it
    deeper than MAX_YAML_DEPTH levels."""
    alias = loader.first_alias
    if alias is None:
        return
    size, depth = _expanded_shape(node)
    if size > MAX_YAML_NODES or depth > MAX_YAML_DEPTH + 1:
        raise loader.fail(
            alias.start_mark,
            f"aliases (the first, *{alias.anchor}, here) expand the document to {size} nodes "
            f"{depth - 1} levels deep, beyond the limits of {MAX_YAML_NODES} nodes and "
            f"{MAX_YAML_DEPTH} levels: an alias bomb? write the values out",
        )


def load_text(text: str, path: str | Path = "<yaml>") -> YamlDoc:
    """Parse one YAML document strictly (see the module docstring); IngestError when refused."""
    loader = _StrictLoader(text, str(path))
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlDoc(str(path), None)
        _refuse_alias_bomb(loader, node)
        data = loader.construct_document(node)
        lines: dict[Loc, int] = {}
        _record_lines(loader, node, (), lines)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise IngestError(path, f"invalid YAML: {problem}", line=mark.line + 1 if mark else None) from exc
    except yaml.YAMLError as exc:
        raise IngestError(path, f"invalid YAML: {exc}") from exc
    except RecursionError as exc:
        raise IngestError(path, f"invalid YAML: nested deeper than {MAX_YAML_DEPTH} levels") from exc
    except ValueError as exc:  # an integer of more digits than Python converts
        huge = re.search(rf"\d{{{MAX_INT_DIGITS},}}", text)
        line = text.count("\n", 0, huge.start()) + 1 if huge else None
        raise IngestError(path, f"invalid YAML: number out of range ({str(exc)[:80]})", line=line) from exc
    finally:
        loader.dispose()
    return YamlDoc(str(path), data, lines)


def load_file(path: str | Path, max_bytes: int = MAX_YAML_BYTES) -> YamlDoc:
    """Read (through textio, so the read is tracked and bounded) and strictly parse a YAML file.

    A parse of the same text by the same loader is kept across processes (:mod:`.keep`): a lab
    manifest of a thousand entries costs seconds in pure-Python YAML.
    """
    text = read_text(path, max_bytes=max_bytes)
    stored = keep.path_for("yaml", keep.code_of("yamlio.py"), hashlib.sha256(text.encode()).hexdigest())
    doc: YamlDoc = keep.once(stored, lambda: load_text(text, path), lambda kept: isinstance(kept, YamlDoc))
    return replace(doc, path=str(path))
