"""Read YAML into position-carrying nodes, safely.

No Python object is ever constructed: the document is only *composed* into nodes,
with no implicit type resolution (every plain scalar is text, so `NO`, `01234` and
`12:30` stay text until the model asks for something else). Explicit tags other than
the three core ones, anchors and aliases (the vehicle of alias bombs), and multiple
documents are refused.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kg.errors import InputError, Problem
from kg.files import NotRegularFile, read_regular
from kg.model import Source

try:  # libyaml's parser when available: same nodes, several times faster
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml.composer import Composer
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Parser(Reader, Scanner, Parser, Composer):  # type: ignore[no-redef]
        def __init__(self, stream: bytes) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            Composer.__init__(self)


MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 64  # nesting levels; kg's own formats use fewer than ten
_COMPACT = re.compile(rb"(?m)^[ \t]*(?:[-?:][ \t]+){%d}" % MAX_DEPTH)
_BRACKETS = re.compile(rb"[\[\]{}]")
CORE_TAGS = frozenset({"tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"})


class _NodeLoader(_Parser, yaml.resolver.BaseResolver):
    """Composes nodes; BaseResolver has no implicit resolvers, so scalars stay text."""

    def __init__(self, stream: bytes) -> None:
        _Parser.__init__(self, stream)
        yaml.resolver.BaseResolver.__init__(self)

    def resolve(self, kind: type, value: object, implicit: object) -> str:
        """BaseResolver's answer without its per-scalar search (no resolvers are registered)."""
        return _DEFAULT_TAGS[kind]

    def descend_resolver(self, current_node: object, current_index: object) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


_DEFAULT_TAGS = {
    ScalarNode: yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG,
    SequenceNode: yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG,
    MappingNode: yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
}


def source_of(node: Node, file: str) -> Source:
    mark = node.start_mark
    return Source(file, mark.line + 1, mark.column + 1)


def read_node(path: Path, display: str) -> Node:
    """Compose one YAML file into a node tree, or raise InputError explaining why not."""
    return node_from_bytes(_read_regular(path, display), display)


def read_yaml_bytes(path: Path, display: str) -> bytes:
    """The bytes of one YAML file (bounded, regular files only), for `node_from_bytes`."""
    return _read_regular(path, display)


def node_from_bytes(data: bytes, display: str) -> Node:
    """Compose the bytes of the file `display` into a node tree, or raise InputError."""
    if len(data) > MAX_FILE_BYTES:
        message = f"file is more than {MAX_FILE_BYTES} bytes; expected at most {MAX_FILE_BYTES}"
        raise _fail(display, 0, 0, message)
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = _line_of(data, exc.start)
        message = f"invalid UTF-8 at byte {exc.start}; expected UTF-8 text"
        raise _fail(display, line, 0, message) from None
    deep = _too_deep(data)
    if deep:
        message = f"nesting is deeper than {MAX_DEPTH} levels; expected at most {MAX_DEPTH}"
        raise _fail(display, deep, 1, message)
    node = _compose(data, display)
    if node is None:
        raise _fail(display, 1, 1, "the file is empty; expected a mapping")
    if not _without_anchors_or_tags(data) and not _plain_tree(node):
        _check_tree(node, display)
    return node


def _without_anchors_or_tags(data: bytes) -> bool:
    """True when the bytes hold no `&` and no `!`: then the document has no anchor (so no
    alias: libyaml refuses an alias to an undefined anchor) and no tag (every node has
    the core tag of its kind), so its tree is plain without walking it. Either byte in a
    text (`R&D`, `Hello!`) only means the tree is walked."""
    return b"&" not in data and b"!" not in data


def _read_regular(path: Path, display: str) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes of a regular file (kg.files.read_regular)."""
    try:
        return read_regular(path, MAX_FILE_BYTES)
    except NotRegularFile:
        raise _fail(display, 0, 0, "cannot read the file (not a regular file)") from None
    except OSError as exc:
        raise _fail(display, 0, 0, f"cannot read the file ({exc.strerror})") from None


def _too_deep(data: bytes) -> int:
    """The line where nesting may pass MAX_DEPTH, else 0: an upper bound found before
    parsing, because libyaml's parser recurses and crashes the process (a segmentation
    fault, not an exception) on some 100,000 nested `[` or `- `. Brackets are counted
    everywhere, also inside quotes, which can only overestimate."""
    compact = _COMPACT.search(data)
    if compact:
        return _line_of(data, compact.start())
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        return 0
    depth = 0
    for match in _BRACKETS.finditer(data):
        depth = depth + 1 if match.group() in (b"[", b"{") else max(depth - 1, 0)
        if depth > MAX_DEPTH:
            return _line_of(data, match.start())
    return 0


def _compose(data: bytes, display: str) -> Node | None:
    loader = _NodeLoader(data)
    try:
        return loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        what = exc.problem or "invalid YAML"
        lines = _YAML_LINES.split(data.decode("utf-8-sig", "replace"))
        if mark and mark.line < len(lines) and "\t" in lines[mark.line][: mark.column + 1]:
            what += " (YAML does not allow tabs for indentation; use spaces)"
        elif mark and mark.line < len(lines) and "mapping values are not allowed" in what:
            what += _quote_hint(lines[mark.line])
        raise _fail(display, line, col, f"YAML syntax error: {what}") from None
    except yaml.reader.ReaderError as exc:  # a character YAML refuses, e.g. NUL
        line, col = _line_column(data, exc.position)
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        what = f"character U+{code:04X} is not allowed in YAML ({exc.reason})"
        raise _fail(display, line, col, what) from None
    except yaml.YAMLError as exc:
        raise _fail(display, 0, 0, f"YAML error: {exc}") from None
    except RecursionError:
        raise _fail(display, 0, 0, "the YAML is nested too deeply") from None
    finally:
        loader.dispose()


def _quote_hint(line: str) -> str:
    """For `title: A: B`: a value holding ': ' must be quoted; show the line quoted."""
    key, sep, value = line.partition(": ")
    value = value.strip()
    if not sep or not value or value[0] in "'\"":
        return " (a value containing ': ' must be quoted)"
    quoted = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f" (a value containing ': ' must be quoted: {key.strip().removeprefix('- ')}: {quoted})"


def _line_column(data: bytes, position: int) -> tuple[int, int]:
    """Line and column (in characters) of a byte offset, as libyaml reports offsets."""
    found = [(data.rfind(brk, 0, position), len(brk)) for brk in _BREAKS]
    start = max((at + size for at, size in found if at >= 0), default=0)
    return _line_of(data, position), len(data[start:position].decode("utf-8", "replace")) + 1


_YAML_LINES = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
# What YAML (libyaml) counts as a line break: LF, CR, CR LF (one break), NEL, LS, PS.
_BREAKS = (b"\n", b"\r", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def _line_of(data: bytes, position: int) -> int:
    """The 1-based line of a byte offset, counting breaks as libyaml does, so a file
    saved with CR LF or lone CR line ends gets the same line numbers as one with LF."""
    breaks = sum(data.count(brk, 0, position) for brk in _BREAKS)
    return breaks - data.count(b"\r\n", 0, position) + 1


def _plain_tree(root: Node) -> bool:
    """True when no node is shared and every tag is a core one (the fast common case)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen or node.tag not in CORE_TAGS:
            return False
        seen.add(id(node))
        if node.__class__ is MappingNode:
            for pair in node.value:
                stack.extend(pair)
        elif node.__class__ is SequenceNode:
            stack.extend(node.value)
    return True


def _check_tree(root: Node, display: str) -> None:
    """Refuse shared nodes (aliases) and non-core tags, iteratively (no recursion).

    An alias composes to the very node its anchor made, so a node met twice is an
    alias; it is reported at the key (or list) that holds the second use.
    """
    seen: set[int] = set()
    stack: list[tuple[Node, Node]] = [(root, root)]
    while stack:
        node, holder = stack.pop()
        if id(node) in seen:
            where = source_of(holder, display)
            raise InputError([Problem(where, "", "anchors and aliases are not allowed")])
        seen.add(id(node))
        if node.tag not in CORE_TAGS:
            where = source_of(node, display)
            raise InputError([Problem(where, "", f"YAML tag {node.tag!r} is not allowed")])
        if isinstance(node, MappingNode):
            for key, value in reversed(node.value):
                stack.extend(((value, key), (key, key)))
        elif isinstance(node, SequenceNode):
            stack.extend((child, node) for child in reversed(node.value))


def _fail(display: str, line: int, col: int, message: str) -> InputError:
    return InputError([Problem(Source(display, line, col), "", message)])


__all__ = ["MappingNode", "Node", "ScalarNode", "SequenceNode", "read_node", "source_of"]
