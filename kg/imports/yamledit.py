"""Edit a profile's YAML text in place: new list items and new keys, nothing else moved.

The positions come from kg's own safe composer (`kg.ingest.yamlsafe`); the inserted fragments
are emitted by ruamel.yaml (so quoting is always right) and indented like their
neighbours. Every line the import does not touch stays byte-identical, comments and
flow style included, so `git diff` shows exactly what the import added. (A whole-file
ruamel round trip re-wraps long flow lists and rewrites `[{label: Paper}]`: see
docs/decisions/0013-importers-and-citation-export.md.)
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from kg.ingest.yamlsafe import MappingNode, Node, ScalarNode, SequenceNode, read_node


def entry(value: dict[str, Any]) -> CommentedMap:
    """A list entry: a block mapping whose values are styled."""
    return CommentedMap((k, styled(v, k)) for k, v in value.items())


def _yaml(width: int = 4096) -> YAML:
    yaml = YAML()
    yaml.width = width  # never wrap a title or an author list
    yaml.brace_single_entry_mapping_in_flow_sequence = True  # [{label: Paper}], as written
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def styled(value: Any, key: str = "") -> Any:
    """Lists of plain values and small mappings in flow style, as the profiles write them;
    an author list with markers is a block list of one-line mappings."""
    if isinstance(value, dict):
        mapping = CommentedMap((k, styled(v, k)) for k, v in value.items())
        if all(not isinstance(v, dict | list) for v in value.values()):
            mapping.fa.set_flow_style()
        return mapping
    if isinstance(value, list):
        seq = CommentedSeq(styled(v) for v in value)
        scalars = all(not isinstance(v, dict | list) for v in value)
        mappings = all(isinstance(v, dict) for v in value) and key != "authors"
        if scalars or mappings:  # [a, b] and [{label: x}], but a block list when mixed
            seq.fa.set_flow_style()
        return seq
    return value


def dump(value: Any, width: int = 4096) -> str:
    out = io.StringIO()
    _yaml(width).dump(value, out)
    return out.getvalue()


def flow(value: Any) -> Any:
    """`value` all in flow style (`{title: …, authors: [a, b]}`), for a flow list."""
    if isinstance(value, dict):
        mapping = CommentedMap((k, flow(v)) for k, v in value.items())
        mapping.fa.set_flow_style()
        return mapping
    if isinstance(value, list):
        seq = CommentedSeq(flow(v) for v in value)
        seq.fa.set_flow_style()
        return seq
    return value


@dataclass
class Edits:
    """Insertions by line, and replacements of exact spans, applied in one go."""

    lines: list[str]
    inserts: dict[int, list[str]] = field(default_factory=dict)
    spans: list[tuple[int, int, int, str]] = field(default_factory=list)
    appended: list[str] = field(default_factory=list)

    def insert(self, line: int, text: str) -> None:
        self.inserts.setdefault(line, []).append(text)

    def replace(self, line: int, start: int, end: int, text: str) -> None:
        """Replace columns [start, end) of one line (end == start inserts)."""
        self.spans.append((line, start, end, text))

    def result(self) -> str:
        lines = list(self.lines)
        for at, start, end, new in sorted(self.spans, reverse=True):  # right to left
            lines[at] = lines[at][:start] + new + lines[at][end:]
        out: list[str] = []
        for i, line in enumerate(lines):
            out += self.inserts.get(i, [])
            out.append(line)
        out += self.inserts.get(len(self.lines), [])
        text = "".join(out)
        if self.appended:
            if text and not text.endswith("\n"):
                text += "\n"
            text += "".join(self.appended)
        return text


class ProfileText:
    """A profile file's text with the nodes of its top-level sections."""

    def __init__(self, path: Path, display: str) -> None:
        self.text = path.read_bytes().decode("utf-8-sig")  # CRLF kept as written
        self.lines = self.text.splitlines(keepends=True)
        root = read_node(path, display)
        self.sections: dict[str, Node] = {}
        if isinstance(root, MappingNode):
            for key, value in root.value:
                if isinstance(key, ScalarNode):
                    self.sections[key.value] = value
        self.edits = Edits(self.lines)

    def items(self, section: str) -> list[Node]:
        node = self.sections.get(section)
        return list(node.value) if isinstance(node, SequenceNode) else []

    def add_items(self, section: str, items: list[dict], before: int | None = None) -> None:
        """New entries at the end of `section` (or before entry `before`)."""
        if not items:
            return
        node = self.sections.get(section)
        existing = self.items(section)
        if isinstance(node, SequenceNode) and node.flow_style and existing:
            self._add_to_flow(node, items)
            return
        if not isinstance(node, SequenceNode) or node.flow_style or not existing:
            self._new_section(section, node, items)
            return
        dash = self._dash_column(existing[0])
        text = _shift(dump([entry(i) for i in items]), dash)
        if before is not None and before < len(existing):
            self.edits.insert(self._above_comments(existing[before].start_mark.line), text)
        else:
            self.edits.insert(_line_after(existing[-1]), text)

    def _add_to_flow(self, node: SequenceNode, items: list[dict]) -> None:
        """`[a, b]` -> `[a, b, {…}]`: new entries as one-line flow mappings before `]`."""
        text = dump(flow(list(items)), width=1 << 30).strip()  # `[{…}, {…}]`, one line
        end = node.end_mark
        self.edits.replace(end.line, end.column - 1, end.column - 1, ", " + text[1:-1])

    def add_top(self, values: dict[str, Any]) -> None:
        """New top-level keys, on the lines after `name:`."""
        name = self.sections.get("name")
        if values and name is not None:
            self.edits.insert(_line_after(name), dump(dict(values)))

    def fill(self, section: str, index: int, values: dict[str, Any]) -> None:
        """New keys in an existing entry (block or flow mapping)."""
        if not values:
            return
        item = self.items(section)[index]
        assert isinstance(item, MappingNode)
        self._add_keys(item, values)

    def fill_author(self, index: int, rank: int, values: dict[str, Any]) -> None:
        """Markers for the author at `rank` (0-based) of publication `index`."""
        entry = self.items("publications")[index]
        assert isinstance(entry, MappingNode)
        authors = next(v for k, v in entry.value if getattr(k, "value", None) == "authors")
        assert isinstance(authors, SequenceNode)
        item = authors.value[rank]
        if isinstance(item, ScalarNode):  # `Yihao Zhao` -> `{name: Yihao Zhao, …}`
            mapping = styled({"name": item.value, **values})
            start, end = item.start_mark, item.end_mark
            self.edits.replace(start.line, start.column, end.column, dump(mapping).strip())
        else:
            assert isinstance(item, MappingNode)
            self._add_keys(item, values)

    def _add_keys(self, item: MappingNode, values: dict[str, Any]) -> None:
        if item.flow_style:  # `{…}`: before the closing brace
            end = item.end_mark
            pieces = dump({k: styled(v) for k, v in values.items()}).strip().splitlines()
            addition = "".join(f", {p}" for p in pieces)
            self.edits.replace(end.line, end.column - 1, end.column - 1, addition)
            return
        column = item.start_mark.column
        text = _shift_mapping(dump({k: styled(v) for k, v in values.items()}), column)
        self.edits.insert(_line_after(item), text)

    def result(self) -> str:
        text = self.edits.result()
        if "\r\n" in self.text:  # a file written on Windows keeps its line ends
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        return text

    def _dash_column(self, item: Node) -> int:
        line = self.lines[item.start_mark.line]
        before = line[: item.start_mark.column]
        return before.rfind("-") if "-" in before else max(item.start_mark.column - 2, 0)

    def _above_comments(self, line: int) -> int:
        while line > 0 and self.lines[line - 1].lstrip().startswith("#"):
            line -= 1
        return line

    def _new_section(self, section: str, node: Node | None, items: list[dict]) -> None:
        if node is not None and (not isinstance(node, SequenceNode) or node.value):
            raise ValueError(f"cannot add to `{section}`: it is not a block list")
        body = _shift(dump([entry(i) for i in items]), 2)
        if node is None:
            self.edits.appended.append(f"{section}:\n{body}")
            return
        start, end = node.start_mark, node.end_mark  # `section: []`
        head = self.lines[start.line][: start.column].rstrip()
        self.edits.replace(start.line, len(head), end.column, "\n" + body.rstrip("\n"))


def _last_node(node: Node) -> Node:
    while isinstance(node, MappingNode | SequenceNode) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    return node


def _line_after(node: Node) -> int:
    end = _last_node(node).end_mark
    return end.line + (1 if end.column > 0 else 0)


def _shift(text: str, dash: int) -> str:
    """Re-indent a dumped top-level list (dash at column 2) to put its dashes at `dash`."""
    return _reindent(text, dash - 2)


def _shift_mapping(text: str, column: int) -> str:
    return _reindent(text, column)


def _reindent(text: str, delta: int) -> str:
    lines = text.splitlines(keepends=True)
    if delta >= 0:
        return "".join((" " * delta + ln) if ln.strip() else ln for ln in lines)
    return "".join(ln[-delta:] if ln[:-delta].strip() == "" else ln for ln in lines)
