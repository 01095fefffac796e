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
from dataclasses import replace

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
from kg.imports.xmltree import Element, parse_xml

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
HOMONYM = re.compile(r"\s+\d{4}$")


def _parse_xml(text: str, file: str) -> Element:
    root = parse_xml(text, file, "dblp's plain XML")
    if root.tag != "dblpperson":
        raise file_error(file, 1, "expected a dblp person file (<dblpperson>)")
    return root


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


def _work(entry: Element, origin: Origin) -> Work:
    title = title_text(squash((entry.find("title") or Element("", {}, 0)).all_text()), dblp=True)
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
