"""ORCID API 3.0 XML (what ORCID answers unless asked for JSON) -> the JSON shape.

Invariant: the XML is read with kg.imports.xmltree (no DTD, no entity: a file that
declares one is refused; bounded depth) into exactly the structure ORCID's JSON has, so
`kg.imports.orcid` reads both with one code: element names without their namespace
prefix become keys; the leaves ORCID's JSON wraps (`{"value": …}`) are wrapped; the
elements it lists are lists; `put-code` attributes become keys.
"""

from __future__ import annotations

from typing import Any

from kg.imports.record import file_error
from kg.imports.xmltree import Element, parse_xml

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


def orcid_xml(text: str, file: str) -> Any:
    """The document as ORCID's JSON would give it."""
    if "<!DOCTYPE" in text:
        raise file_error(file, 1, "the XML declares a DOCTYPE or entities; expected ORCID's XML")
    root = parse_xml(text, file, "an ORCID record")
    if root.local == "bulk":
        return {"bulk": [{c.local: _value(c)} for c in root.children]}
    return _value(root)


def _value(node: Element) -> Any:
    if not node.children:
        text = "".join(node.text).strip()
        return {"value": text} if node.local in WRAPPED else text
    if node.local == "affiliation-group":  # JSON: {"summaries": [{"employment-summary": …}]}
        return {"summaries": [{c.local: _value(c)} for c in node.children if "summary" in c.local]}
    found: dict[str, Any] = {}
    for key, value in node.attrs.items():
        if key == "put-code":
            found["put-code"] = int(value) if value.isdigit() else value
    for child in node.children:
        if child.local in LISTS:
            found.setdefault(child.local, []).append(_value(child))
        elif child.local not in found:
            found[child.local] = _value(child)
    return found
