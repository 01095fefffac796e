"""ORCID API 3.0 XML (what ORCID answers unless asked for JSON) -> the JSON shape.

Invariant: the XML is read with expat (no DTD, no entity: a file that declares one is
refused; at most MAX_DEPTH levels) into exactly the structure ORCID's JSON has, so
`kg.imports.orcid` reads both with one code: element names without their namespace
prefix become keys; the leaves ORCID's JSON wraps (`{"value": …}`) are wrapped; the
elements it lists are lists; `put-code` attributes become keys.
"""

from __future__ import annotations

from typing import Any
from xml.parsers import expat

from kg.imports.record import file_error

MAX_DEPTH = 64
# leaves that ORCID's JSON writes as {"value": …}
WRAPPED = frozenset(
    {
        "title",
        "subtitle",
        "journal-title",
        "year",
        "month",
        "day",
        "credit-name",
        "url",
        "external-id-normalized",
        "external-id-url",
        "short-description",
        "citation-value",
    }
)
# elements that ORCID's JSON writes as lists of their repeated children
LISTS = frozenset({"group", "work-summary", "external-id", "contributor", "affiliation-group"})


class _Node:
    def __init__(self, name: str, attrs: dict[str, str]) -> None:
        self.name, self.attrs = name, attrs
        self.children: list[_Node] = []
        self.text: list[str] = []


def orcid_xml(text: str, file: str) -> Any:
    """The document as ORCID's JSON would give it."""
    if "<!ENTITY" in text or "<!DOCTYPE" in text:
        raise file_error(file, 1, "the XML declares a DOCTYPE or entities; expected ORCID's XML")
    root = _parse(text, file)
    if root.name == "bulk":
        return {"bulk": [{c.name: _value(c)} for c in root.children]}
    return _value(root)


def _parse(text: str, file: str) -> _Node:
    parser = expat.ParserCreate()
    stack: list[_Node] = []
    roots: list[_Node] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        if len(stack) >= MAX_DEPTH:
            line = parser.CurrentLineNumber
            raise file_error(file, line, f"elements nested more than {MAX_DEPTH} deep")
        node = _Node(tag.rsplit(":", 1)[-1], attrs)
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)

    def data(chunk: str) -> None:
        if stack:
            stack[-1].text.append(chunk)

    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: stack.pop()
    parser.CharacterDataHandler = data
    try:
        parser.Parse(text.encode("utf-8"), True)
    except expat.ExpatError as exc:
        reason = expat.errors.messages[exc.code]
        raise file_error(file, exc.lineno, f"not well-formed XML: {reason}") from None
    if not roots:
        raise file_error(file, 1, "no element; expected an ORCID record")
    return roots[0]


def _value(node: _Node) -> Any:
    if not node.children:
        text = "".join(node.text).strip()
        return {"value": text} if node.name in WRAPPED else text
    if node.name == "affiliation-group":  # JSON: {"summaries": [{"employment-summary": …}]}
        return {"summaries": [{c.name: _value(c)} for c in node.children if "summary" in c.name]}
    found: dict[str, Any] = {}
    for key, value in node.attrs.items():
        if key == "put-code":
            found["put-code"] = int(value) if value.isdigit() else value
    for child in node.children:
        if child.name in LISTS:
            found.setdefault(child.name, []).append(_value(child))
        elif child.name not in found:
            found[child.name] = _value(child)
    return found
