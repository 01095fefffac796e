"""A small XML element tree from expat, with line numbers, for the importers' XML
(dblp person files, ORCID's XML answers).

Invariant: a document that declares entities is refused before any parsing (no entity
is ever expanded; expat fetches no external DTD), elements nest at most MAX_DEPTH deep,
and every error names the file and line (`file_error`). ElementTree keeps no line numbers
and expands internal entities, hence this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.parsers import expat

from kg.imports.record import file_error

MAX_DEPTH = 64  # dblp nests 4 deep and ORCID about 10; a title's markup a few more


@dataclass
class Element:
    tag: str  # as written, with its namespace prefix (`local` drops it)
    attrs: dict[str, str]
    line: int
    children: list[Element] = field(default_factory=list)
    text: list[str] = field(default_factory=list)  # before the first child
    tail: str = ""  # after this element, inside its parent

    @property
    def local(self) -> str:
        """The tag without its namespace prefix (`work:title` -> `title`)."""
        return self.tag.rsplit(":", 1)[-1]

    def all_text(self) -> str:
        return "".join(self.text) + "".join(c.all_text() + c.tail for c in self.children)

    def find(self, tag: str) -> Element | None:
        return next((c for c in self.children if c.tag == tag), None)

    def findall(self, tag: str) -> list[Element]:
        return [c for c in self.children if c.tag == tag]


def parse_xml(text: str, file: str, expected: str) -> Element:
    """The document's root element; `expected` says what the file should be, for the
    errors (`dblp's plain XML`)."""
    if "<!ENTITY" in text:
        raise file_error(file, 1, f"the XML declares entities; expected {expected}")
    parser = expat.ParserCreate()
    stack: list[Element] = []
    roots: list[Element] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        if len(stack) >= MAX_DEPTH:
            line = parser.CurrentLineNumber
            raise file_error(file, line, f"elements nested more than {MAX_DEPTH} deep")
        element = Element(tag, attrs, parser.CurrentLineNumber)
        (stack[-1].children if stack else roots).append(element)
        stack.append(element)

    def data(chunk: str) -> None:
        if not stack:
            return
        top = stack[-1]
        if top.children:
            top.children[-1].tail += chunk
        else:
            top.text.append(chunk)

    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: stack.pop()
    parser.CharacterDataHandler = data
    try:
        parser.Parse(text.encode("utf-8"), True)
    except expat.ExpatError as exc:
        reason = expat.errors.messages[exc.code]
        raise file_error(file, exc.lineno, f"not well-formed XML: {reason}") from None
    if not roots:
        raise file_error(file, 1, f"no element; expected {expected}")
    return roots[0]
