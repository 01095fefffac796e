"""dblp person XML (`https://dblp.org/pid/….xml`) -> records. dblp's BibTeX goes
through `kg.imports.bibtex`.

dblp quirks handled: titles end with a period; names carry a homonym number
(`Wei Wang 0001`), kept apart from the printed name; CoRR entries
(`publtype="informal"`, `<journal>CoRR</journal>`, `<volume>abs/…</volume>`) are arXiv
preprints; `<ee>` holds DOIs and publisher links. The XML is read with expat; a
document declaring entities is refused (no entity expansion).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from xml.parsers import expat

from kg.imports.record import (
    Author,
    Bad,
    Origin,
    Parsed,
    Work,
    arxiv_id,
    clean_doi,
    file_error,
    is_arxiv_doi,
    squash,
    title_text,
    year_of,
)

KINDS = {
    "inproceedings": "conference-paper",
    "article": "journal-article",
    "phdthesis": "thesis",
    "mastersthesis": "thesis",
    "proceedings": None,
    "book": None,
    "incollection": None,
    "www": None,
    "data": None,
}
MAX_XML_DEPTH = 64
HOMONYM = re.compile(r"\s+\d{4}$")


@dataclass
class _Element:
    tag: str
    attrs: dict[str, str]
    line: int
    children: list[_Element] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def all_text(self) -> str:
        return "".join(self.text) + "".join(c.all_text() + c.tail for c in self.children)

    tail: str = ""

    def find(self, tag: str) -> _Element | None:
        return next((c for c in self.children if c.tag == tag), None)

    def findall(self, tag: str) -> list[_Element]:
        return [c for c in self.children if c.tag == tag]


def _parse_xml(text: str, file: str) -> _Element:
    """A small element tree with line numbers (ElementTree keeps none)."""
    if "<!ENTITY" in text:
        raise file_error(file, 1, "the XML declares entities; expected dblp's plain XML")
    parser = expat.ParserCreate()
    stack: list[_Element] = []
    roots: list[_Element] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        if len(stack) >= MAX_XML_DEPTH:  # dblp nests 4 deep; a title's markup a few more
            line = parser.CurrentLineNumber
            raise file_error(file, line, f"elements nested more than {MAX_XML_DEPTH} deep")
        element = _Element(tag, attrs, parser.CurrentLineNumber)
        (stack[-1].children if stack else roots).append(element)
        stack.append(element)

    def end(tag: str) -> None:
        stack.pop()

    def data(chunk: str) -> None:
        if not stack:
            return
        top = stack[-1]
        if top.children:
            top.children[-1].tail += chunk
        else:
            top.text.append(chunk)

    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.CharacterDataHandler = data
    try:
        parser.Parse(text.encode("utf-8"), True)
    except expat.ExpatError as exc:
        reason = expat.errors.messages[exc.code]
        raise file_error(file, exc.lineno, f"not well-formed XML: {reason}") from None
    if not roots or roots[0].tag != "dblpperson":
        raise file_error(file, 1, "expected a dblp person file (<dblpperson>)")
    return roots[0]


def parse_dblp_xml(text: str, file: str) -> Parsed:
    root = _parse_xml(text, file)
    works, bad = [], []
    for r in root.findall("r"):
        for entry in r.children:
            origin = Origin(file, entry.line, entry.attrs.get("key", ""))
            if entry.tag not in KINDS:
                bad.append(Bad(origin, f"unknown dblp record <{entry.tag}>"))
                continue
            if KINDS[entry.tag] is None and entry.tag != "article":
                continue  # edited volumes, books, data: not authored papers
            try:
                works.append(_work(entry, origin))
            except ValueError as exc:
                bad.append(Bad(origin, str(exc)))
    return Parsed(works=tuple(works), bad=tuple(bad))


def dblp_author(text: str) -> Author:
    """`Wei Wang 0001` -> `Wei Wang`, disambiguation `0001` (dblp's homonym number)."""
    name = squash(text)
    match = HOMONYM.search(name)
    return Author(HOMONYM.sub("", name), disambiguation=match[0].strip() if match else None)


def with_dblp_names(parsed: Parsed) -> Parsed:
    """dblp's BibTeX prints the homonym numbers too."""
    works = tuple(
        replace(
            w,
            title=title_text(w.title, dblp=True),
            authors=tuple(replace(a, **_split(a.name)) for a in w.authors),
        )
        for w in parsed.works
    )
    return replace(parsed, works=works)


def _split(name: str) -> dict:
    author = dblp_author(name)
    return {"name": author.name, "disambiguation": author.disambiguation}


def _work(entry: _Element, origin: Origin) -> Work:
    title = title_text(squash((entry.find("title") or _Element("", {}, 0)).all_text()), dblp=True)
    if not title:
        raise ValueError("no <title>")
    authors = tuple(dblp_author(a.all_text()) for a in entry.findall("author"))
    if not authors:
        raise ValueError("no <author>")
    venue_el = entry.find("booktitle") or entry.find("journal")
    venue = squash(venue_el.all_text()) if venue_el else None
    links = [squash(e.all_text()) for e in entry.findall("ee")]
    doi = next((clean_doi(u) for u in links if "doi.org/" in u), None)
    informal = entry.attrs.get("publtype") == "informal"
    arxiv = None
    if venue == "CoRR":
        volume = entry.find("volume")
        arxiv = arxiv_id(volume.all_text() if volume else "") or next(
            (arxiv_id(u) for u in links if "arxiv.org" in u), None
        )
    preprint = bool(arxiv) or informal
    year_el = entry.find("year")
    return Work(
        title=title,
        authors=authors,
        origin=origin,
        type="preprint" if preprint else KINDS[entry.tag],
        status="preprint" if preprint else "published",
        venue=re.sub(r"\s*\(\d+\)$", "", venue) if venue else None,
        year=year_of(year_el.all_text() if year_el else None),
        doi=None if is_arxiv_doi(doi) else doi,
        arxiv=arxiv,
        url=next((u for u in links if "doi.org/" not in u and "arxiv.org" not in u), None),
    )
