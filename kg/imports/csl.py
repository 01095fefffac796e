"""CSL-JSON (Zotero, Mendeley, citeproc) -> records.

A file is a JSON array of items (or `{"items": [...]}`); each item is reported at the
line it starts on. kg's own export adds a `custom.kg` object (equal contribution,
annotations, notes, labelled links) that other tools ignore.
"""

from __future__ import annotations

import json
from typing import Any

from kg.imports.record import (
    Author,
    Bad,
    BadValue,
    NotAPaper,
    Origin,
    Parsed,
    Work,
    arxiv_id,
    clean_doi,
    file_error,
    is_arxiv_doi,
    looks_like_group,
    split_annotation,
    squash,
    status_in,
    strip_marks,
    title_text,
    year_of,
)

TYPES = {
    "paper-conference": "conference-paper",
    "article-journal": "journal-article",
    "article": None,  # Zotero's "Preprint"
    "manuscript": None,
    "report": "report",
    "thesis": "thesis",
    "speech": None,
    "webpage": None,
    "post": None,
}


class CslFormatError(BadValue):
    pass


def parse_csl(text: str, file: str) -> Parsed:
    items = _items_with_lines(text, file)
    works, bad, warnings = [], [], []
    for line, item in items:
        key = str(item.get("id", "")) if isinstance(item, dict) else ""
        origin = Origin(file, line, key)
        try:
            works.append(_work(item, origin))
        except NotAPaper as exc:
            warnings.append(f"{origin}: {exc}; skipped")
        except BadValue as exc:
            bad.append(Bad(origin, str(exc)))
        except (TypeError, AttributeError, KeyError) as exc:  # a field of the wrong JSON type
            bad.append(Bad(origin, f"a field has the wrong JSON type ({exc}); expected CSL-JSON"))
    return Parsed(works=tuple(works), bad=tuple(bad), warnings=tuple(warnings))


def _items_with_lines(text: str, file: str) -> list[tuple[int, Any]]:
    """The array's items and the line each starts on (JSON itself keeps no positions)."""
    decoder = json.JSONDecoder()
    try:
        whole = decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise file_error(file, exc.lineno, f"not JSON: {exc.msg}") from None
    if isinstance(whole, dict) and isinstance(whole.get("items"), list):
        start = text.index("[", text.index('"items"'))
    elif isinstance(whole, list):
        start = text.index("[")
    else:
        raise file_error(file, 1, "expected a JSON array of CSL items")
    found: list[tuple[int, Any]] = []
    index = start + 1
    while True:
        while text[index] in " \t\r\n,":
            index += 1
        if text[index] == "]":
            return found
        item, end = decoder.raw_decode(text, index)
        found.append((text.count("\n", 0, index) + 1, item))
        index = end


def _work(item: Any, origin: Origin) -> Work:
    if not isinstance(item, dict):
        raise CslFormatError("expected a CSL item (a JSON object)")
    if str(item.get("type", "")) not in TYPES:
        raise NotAPaper(f"type {item.get('type')!r} is not a kind of publication kg keeps")
    title = title_text(_text(item.get("title")))
    if not title:
        raise CslFormatError("no title; expected a `title`")
    kg_extra = (item.get("custom") or {}).get("kg") or {}
    authors = _authors(item.get("author"), kg_extra)
    kind = str(item.get("type", ""))
    venue = _text(item.get("container-title")) or _text(item.get("event-title")) or None
    venue = venue or _text(kg_extra.get("printed")) or None  # kg's "Tech Report"
    doi, arxiv, url = _identifiers(item)
    note = _text(item.get("note")) or None
    status = status_in(_text(item.get("status"))) or _status(kind, venue, arxiv, note)
    if status in ("submitted", "in-submission") and not venue and note:
        venue = note  # "Submitted to ATC'25" names the venue it went to
    preprint = bool(arxiv) and not venue
    return Work(
        title=title,
        authors=authors,
        origin=origin,
        type="preprint" if preprint else TYPES[kind],
        status=status,
        venue=venue,
        year=_year(item.get("issued")) or year_of(kg_extra.get("year")),
        doi=None if is_arxiv_doi(doi) else doi,
        arxiv=arxiv,
        url=url,
        notes=tuple(str(n) for n in kg_extra.get("notes", ())),
        links=tuple((str(lb), str(u or "")) for lb, u in kg_extra.get("links", ())),
        selected=kg_extra.get("selected") is True,
        equal_contribution_note=kg_extra.get("equal_contribution_note"),
        abstract=_text(item.get("abstract")) or None,
        pdf=_text(kg_extra.get("pdf")) or None,
        code=_text(kg_extra.get("code")) or None,
        slides=_text(kg_extra.get("slides")) or None,
        video=_text(kg_extra.get("video")) or None,
        pages=_text(item.get("page")) or None,
        volume=_text(item.get("volume")) or None,
        issue=_text(item.get("issue")) or None,
        publisher=(_text(item.get("publisher")) or None) if not arxiv else None,
    )


def _identifiers(item: dict) -> tuple[str | None, str | None, str | None]:
    """DOI, arXiv id and URL; Zotero writes preprints as `number: "arXiv:…"`,
    `publisher: "arXiv"` and an arXiv DOI (10.48550/…)."""
    doi = clean_doi(_text(item.get("DOI")))
    url = _text(item.get("URL")) or None
    number = _text(item.get("number"))
    arxiv = arxiv_id(number) if "arxiv" in number.lower() else None
    arxiv = arxiv or (arxiv_id(doi) if is_arxiv_doi(doi) else None)
    publisher = _text(item.get("publisher")).lower()
    if not arxiv and (publisher == "arxiv" or "arxiv.org" in (url or "")):
        arxiv = arxiv_id(url) or arxiv_id(_text(item.get("note")))
    return doi, arxiv, url


def _status(kind: str, venue: str | None, arxiv: str | None, note: str | None) -> str:
    if kind == "report":
        return "report"
    if arxiv and not venue:
        return "preprint"
    return status_in(note) or ("in-submission" if kind == "manuscript" else "published")


def _text(value: Any) -> str:
    return squash(str(value)) if isinstance(value, str | int) else ""


def _authors(value: Any, kg_extra: dict) -> tuple[Author, ...]:
    if not isinstance(value, list) or not value:
        raise CslFormatError("no authors; expected `author`: a list of {family, given}")
    equal = set(kg_extra.get("equal_contribution", ()))
    corresponding = set(kg_extra.get("corresponding", ()))
    annotations = {int(k): str(v) for k, v in (kg_extra.get("annotations") or {}).items()}
    authors = []
    for rank, person in enumerate(value, start=1):
        if not isinstance(person, dict):
            raise CslFormatError(f"author {rank}: expected an object with family/given or literal")
        literal = _text(person.get("literal"))
        name = literal or " ".join(
            p for p in (_text(person.get("given")), _text(person.get("family"))) if p
        )
        if not name:
            raise CslFormatError(f"author {rank}: no name; expected family/given or literal")
        name, annotation = split_annotation(name)
        name, marked, mail = strip_marks(name)
        authors.append(
            Author(
                name=name,
                equal_contribution=marked or rank in equal,
                corresponding=mail or rank in corresponding,
                annotation=annotations.get(rank) or annotation,
                group=bool(literal) and looks_like_group(literal),
            )
        )
    return tuple(authors)


def _year(issued: Any) -> int | None:
    if not isinstance(issued, dict):
        return None
    parts = issued.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        return year_of(parts[0][0])
    raw = _text(issued.get("raw")) or _text(issued.get("literal"))
    return year_of(raw[:4]) if raw else None
