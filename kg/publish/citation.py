"""Citations from the resolved model: BibTeX, CSL-JSON and a plain-text reference.

Deterministic: entries come newest first (then by title), citation keys are minted
once for the whole dataset (`zhao2024seallm`, `…b` on a clash), fields in a fixed
order. A person's file uses their own listing of each paper (how *they* printed the
venue, their notes and links), so exporting and importing it gives the listing back:
kg's extras travel in fields that BibTeX styles ignore (`author+an` as biblatex
defines it, `annote`, `kg-links`, `pubstate`) and in CSL's `custom` object. The
"Cite" block on a publication page leaves the extras out (`extras=False`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from kg.ingest.names import text_key
from kg.iri import arxiv_address, doi_address
from kg.model import (
    PRINTED_DETAILS,
    STATUS_SYNONYMS,
    PrintedDetails,
    Profile,
    Publication,
    inferred_publication_type,
)
from kg.publish.fragments import Fragments
from kg.resolve.identity import PublicationEntity, Resolution

STOP_WORDS = frozenset({"a", "an", "the", "on", "of", "in", "for", "to", "and", "towards", "how"})
BIBTEX_TYPES = {
    "conference-paper": ("inproceedings", "booktitle"),
    "workshop-paper": ("inproceedings", "booktitle"),
    "journal-article": ("article", "journal"),
    "preprint": ("misc", "howpublished"),
    "report": ("techreport", "institution"),
    "thesis": ("phdthesis", "school"),
}
CSL_TYPES = {
    "conference-paper": "paper-conference",
    "workshop-paper": "paper-conference",
    "journal-article": "article-journal",
    "preprint": "article",
    "report": "report",
    "thesis": "thesis",
}
PUBSTATE = {
    "submitted": "submitted",
    "in-submission": "underreview",
    "accepted": "forthcoming",
    "preprint": "prepublished",
}
# Every character BibTeX or LaTeX reads as syntax, as text commands that keep the braces
# balanced: a title can neither close its field (`}`) nor run a command (`\input`,
# `\write18`), and bibtexparser, pybtex and kg's importer read the text back.
BIB_ESCAPES = {
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
}
_SPECIAL = re.compile(r"[\\{}~^&%$#_]")
_AND_WORD = re.compile(r"(^|\s)and(\s|$)", re.I)  # BibTeX splits author lists on it


@dataclass(frozen=True)
class CiteAuthor:
    name: str
    given: str
    family: str
    group: bool
    equal_contribution: bool
    corresponding: bool | None  # None: the listing does not say
    annotation: str | None


@dataclass(frozen=True)
class Citable(PrintedDetails):
    """One publication as a person lists it (or as the graph merges it)."""

    key: str
    title: str
    authors: tuple[CiteAuthor, ...]
    type: str
    status: str
    venue: str | None  # as printed, else the registry's name
    year: int | None
    doi: str | None
    arxiv: str | None
    notes: tuple[str, ...]
    links: tuple[tuple[str, str | None], ...]
    selected: bool = False
    equal_contribution_note: str | None = None


# al-folio's BibTeX fields for links kg keeps with these labels
FOLIO_LINKS = {"HTML": "html", "Website": "website", "Poster": "poster", "Supplement": "supp"}
FOLIO_LINKS["Blog"] = "blog"


# --------------------------------------------------------------------------- selection


def publication_type(r: Resolution, venue: str | None, status: str) -> str | None:
    """The type kg infers when a listing gives none (`kg.model.inferred_publication_type`,
    as the graph does): None for a generic work (BibTeX `@misc`, CSL `article`)."""
    return inferred_publication_type(status, r.venues[venue].kind if venue else None)


def works_by_person(r: Resolution) -> dict[str, list[tuple[PublicationEntity, Publication | None]]]:
    """Person key -> their publications, newest first, with their own listing when they
    list it (one pass over the publications)."""
    found: dict[str, dict[str, tuple[PublicationEntity, Publication | None]]] = {}
    for pub in r.publications.values():
        for who, listing in pub.listings:
            found.setdefault(who, {})[pub.key] = (pub, listing)
        for slot in pub.authors:
            if slot.person:
                found.setdefault(slot.person, {}).setdefault(pub.key, (pub, None))
    return {
        person: sorted(works.values(), key=lambda pl: _newest_first(pl[0]))
        for person, works in found.items()
    }


def _newest_first(pub: PublicationEntity) -> tuple:
    return (pub.year is None, -(pub.year or 0), text_key(pub.title), pub.key)


def citation_keys(r: Resolution) -> dict[str, str]:
    """Publication key -> BibTeX key, unique over the dataset, the same on every build."""
    keys: dict[str, str] = {}
    taken: set[str] = set()
    for pub in sorted(r.publications.values(), key=lambda p: p.key):
        first = pub.authors[0] if pub.authors else None
        name = first.printed[0] if first else "anon"
        family = _ascii(name.split()[0] if first and first.group else _split_name(name)[1])
        family = family.replace(" ", "") or "anon"
        word = next((w for w in _ascii(pub.title).split() if w not in STOP_WORDS), "")
        base = f"{family}{pub.year or ''}{word}"
        key, n = base, 1
        while key in taken:
            n += 1
            key = base + chr(ord("a") + n - 1)
        taken.add(key)
        keys[pub.key] = key
    return keys


def _ascii(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9 ]+", "", plain.replace("-", " "))


def citable(
    r: Resolution,
    pub: PublicationEntity,
    key: str,
    listing: Publication | None,
    profiles: dict[str, Profile] | None = None,
) -> Citable:
    """The facts to cite: from `listing` (one person's) when given, else as merged."""
    profiles = profiles if profiles is not None else {p.slug: p for p in r.dataset.profiles}
    own = listing is not None
    source = listing or pub.listings[0][1]
    venue_key = r.venue(source.venue)[0] if source.venue else pub.venue
    # a listing that gives no status has the one resolve decided (kg.model status model)
    status = STATUS_SYNONYMS.get(source.status, source.status) if own and source.status else None
    status = status or pub.status
    printed = source.venue_as_printed if own else next(iter(pub.venue_as_printed), None)
    return Citable(
        key=key,
        title=pub.title,
        authors=_cite_authors(pub, source, own, profiles),
        type=source.type or pub.type or publication_type(r, venue_key, status) or "",
        status=status,
        venue=printed or (r.venues[venue_key].name if venue_key else None),
        year=source.year if own else pub.year,
        doi=source.doi if own else pub.doi,
        arxiv=source.arxiv if own else pub.arxiv,
        notes=tuple(source.notes if own else pub.notes),
        links=tuple((link.label, link.url) for link in source.links),
        selected=own and source.selected,
        equal_contribution_note=source.equal_contribution_note,
        **{name: getattr(source if own else pub, name) for name in PRINTED_DETAILS},
    )


def _cite_authors(
    pub: PublicationEntity, source: Publication, own: bool, profiles: dict[str, Profile]
) -> tuple[CiteAuthor, ...]:
    """Names as the listing prints them; markers from it (own) or merged (the page)."""
    authors = []
    for slot, ref in zip(pub.authors, source.authors, strict=True):
        given, family = _names(profiles.get(slot.person or ""), ref.name)
        flags = ref if own else slot
        authors.append(
            CiteAuthor(
                ref.name,
                given,
                family,
                ref.group,
                flags.equal_contribution,
                bool(flags.corresponding),  # unknown (None) prints no mark
                flags.annotation,
            )
        )
    return tuple(authors)


def _names(profile: Profile | None, printed: str) -> tuple[str, str]:
    """Given and family name: the profile's when it prints them so, else the last word."""
    given, family = (profile.given_name, profile.family_name) if profile else (None, None)
    if given and family and f"{given} {family}" == printed:
        return given, family
    return _split_name(printed)


def _split_name(name: str) -> tuple[str, str]:
    words = name.split()
    return (" ".join(words[:-1]), words[-1]) if len(words) > 1 else ("", name)


# --------------------------------------------------------------------------- BibTeX


def _latex(text: str) -> str:
    """Text as a BibTeX field value that reads back as the same text."""
    return _SPECIAL.sub(lambda m: BIB_ESCAPES[m.group()], text)


def _address(text: str) -> str:
    """A URL, DOI or eprint: characters BibTeX reads as syntax percent-encoded."""
    return text.replace("\\", "%5C").replace("{", "%7B").replace("}", "%7D")


def _protect(title: str) -> str:
    """Braces around words whose capitals a style must not lower (GPU, SeaLLM); the rest
    escaped (words are found in the text, before escaping, so `_` stays inside a word)."""
    out, last = [], 0
    for match in re.finditer(r"[^\W_][\w'’-]*", title):
        w = match.group()
        out.append(_latex(title[last : match.start()]))
        out.append(f"{{{_latex(w)}}}" if any(c.isupper() for c in w[1:]) else _latex(w))
        last = match.end()
    return "".join(out) + _latex(title[last:])


def _name_part(text: str) -> str:
    """One part of a name; braced when BibTeX would split it (`and`, a comma, `others`)."""
    escaped = _latex(text)
    if "," in text or _AND_WORD.search(text) or text.strip().lower() == "others":
        return "{" + escaped + "}"
    return escaped


def _bib_name(a: CiteAuthor) -> str:
    if a.group:
        return "{" + _latex(a.name) + "}"
    if not a.given:
        return _name_part(a.family)
    return f"{_name_part(a.family)}, {_name_part(a.given)}"


def _annotations(authors: tuple[CiteAuthor, ...]) -> str:
    parts = []
    for rank, a in enumerate(authors, start=1):
        marks = [
            m
            for m, on in (("equal", a.equal_contribution), ("corresponding", a.corresponding))
            if on
        ]
        if a.annotation:
            marks.append('"' + _latex(re.sub(r'["=;,]', " ", a.annotation)).strip() + '"')
        if marks:
            parts.append(f"{rank}={','.join(marks)}")
    return "; ".join(parts)


# A printed "venue" that only states a status ("Tech Report", "In Submission"): never
# put where a proceedings title, journal or institution goes (issue 27).
_STATUS_TEXT = re.compile(
    r"^\s*(in )?(submission|submitted|in submission|under review|preprint|"
    r"tech(nical)? report|to appear|accepted|forthcoming)\s*$",
    re.I,
)
UNPUBLISHED = ("submitted", "in-submission")


def _unpublished(c: Citable) -> bool:
    return c.status in UNPUBLISHED and c.type != "preprint"


def venue_name(c: Citable) -> str | None:
    """The venue text that names a venue (not a status), or None."""
    return c.venue if c.venue and not _STATUS_TEXT.match(c.venue) else None


def bibtex_entry(c: Citable, extras: bool = True) -> str:
    """One entry. A submitted paper is `@unpublished` with its venue text in `note` and
    no `year` (the year of the edition it went to is not a publication date; kg keeps
    it in `kg-year`); status text is never a booktitle, journal or institution."""
    entry_type, venue_field = BIBTEX_TYPES.get(c.type, ("misc", "howpublished"))
    unpublished = _unpublished(c)
    if unpublished:
        entry_type, venue_field = "unpublished", "note"
    fields: list[tuple[str, str]] = [
        ("title", _protect(c.title)),
        ("author", " and ".join(_bib_name(a) for a in c.authors)),
    ]
    venue = c.venue if unpublished else venue_name(c)
    if venue:
        fields.append((venue_field, _latex(venue)))
    if c.year and not unpublished:
        fields.append(("year", str(c.year)))
    fields += [
        (name, _latex(value))
        for name, value in (
            ("volume", c.volume),
            ("number", c.issue),
            ("pages", (c.pages or "").replace("\u2013", "--")),
            ("publisher", c.publisher),
        )
        if value
    ]
    if c.status in PUBSTATE:
        fields.append(("pubstate", PUBSTATE[c.status]))
    if c.doi:
        fields.append(("doi", _address(c.doi)))
    if c.arxiv:
        fields += [("eprint", _address(c.arxiv)), ("archiveprefix", "arXiv")]
        if extras:  # al-folio's arXiv badge reads this field
            fields.append(("arxiv", _address(c.arxiv)))
    url = next((u for _, u in c.links if u), None)
    if url:
        fields.append(("url", _address(url)))
    if extras:
        fields += _extras(c)
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{entry_type}{{{c.key},\n{body}\n}}\n"


def _extras(c: Citable) -> list[tuple[str, str]]:
    fields = [("abstract", _latex(c.abstract))] if c.abstract else []
    if c.year and _unpublished(c):
        fields.append(("kg-year", str(c.year)))
    if c.venue and not _unpublished(c) and not venue_name(c):
        fields.append(("kg-printed", _latex(c.venue)))
    fields += [
        (name, _address(url))
        for name, url in (
            ("pdf", c.pdf),
            ("code", c.code),
            ("slides", c.slides),
            ("video", c.video),
        )
        if url
    ]
    fields += [
        (FOLIO_LINKS[label], _address(url))
        for label, url in c.links
        if url and label in FOLIO_LINKS
    ]
    marks = _annotations(c.authors)
    if marks:
        fields.append(("author+an", marks))
    if c.notes:
        fields.append(("annote", _latex("; ".join(c.notes))))
    if c.equal_contribution_note:
        fields.append(("kg-equal-note", _latex(c.equal_contribution_note)))
    if c.selected:
        fields.append(("selected", "true"))
    if c.links:
        fields.append(
            (
                "kg-links",
                "; ".join(
                    f"{_latex(label)} <{_address(url)}>" if url else _latex(label)
                    for label, url in c.links
                ),
            )
        )
    return fields


# Each BibTeX entry a process wrote, for its `Citable`: a work is in the file of each of
# its authors, and their listings mostly give the same facts (at 1k, 11,394 entries of
# 2,500 works are 2,500 distinct ones). At most this many (~1 KB each with its key),
# then the memo starts again: a bound on a render worker's memory, not on the hits.
ENTRIES_KEPT = 8_000


class Citations:
    """Citation keys, each person's works and their profiles, computed once per dataset
    (a build renders every person's file from one of these); the entries a process
    wrote (`entries`: empty when made, and when pickled for another machine)."""

    def __init__(self, r: Resolution) -> None:
        self.r = r
        self.keys = citation_keys(r)
        self.works = works_by_person(r)
        self.profiles = {p.slug: p for p in r.dataset.profiles}
        self.entries: dict[str, tuple[Citable, str]] = {}

    def __getstate__(self) -> dict:
        return {**self.__dict__, "entries": {}}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def entry(self, c: Citable) -> str:
        """`bibtex_entry(c)`, once per process for equal citables (`ENTRIES_KEPT`): kept
        by the work's citation key with the citable it was made for (a key's string
        hash is kept by Python; a citable's is every field's, on every lookup)."""
        found = self.entries.get(c.key)
        if found is not None and found[0] == c:
            return found[1]
        if len(self.entries) >= ENTRIES_KEPT:
            self.entries.clear()
        text = bibtex_entry(c)
        self.entries[c.key] = (c, text)
        return text

    def of(self, slug: str) -> list[Citable]:
        return [self._citable(pub, own) for pub, own in self.works.get(slug, [])]

    def _citable(self, pub: PublicationEntity, own: Publication | None) -> Citable:
        return citable(self.r, pub, self.keys[pub.key], own, self.profiles)

    def bibtex(
        self,
        slug: str,
        kept: Fragments | None = None,
        work: Callable[[PublicationEntity], bytes] | None = None,
    ) -> str:
        """A person's publications as one BibTeX file (UTF-8), newest first; `kept`:
        entries the previous build made for equal `Citable`s (decision 0062), or with
        `work` (a digest of everything a work's `Citable` is made of but the settings,
        `kg.publish.fingerprint.Fingerprints.work`) for the same digest: a kept entry is
        then not made into a `Citable` at all (decision 0078)."""
        name = self.r.persons[slug].name if slug in self.r.persons else slug
        head = f"% Publications of {name}, exported by kg (UTF-8).\n"
        if kept is None:
            return head + "".join("\n" + self.entry(c) for c in self.of(slug))
        if work is None:
            return head + "".join(
                "\n" + kept.text(c, partial(self.entry, c)) for c in self.of(slug)
            )
        works = self.works.get(slug, [])
        made = (kept.keyed(b"b" + work(p), partial(self._entry, p, own)) for p, own in works)
        return head + "".join("\n" + text for text in made)

    def _entry(self, pub: PublicationEntity, own: Publication | None) -> str:
        return self.entry(self._citable(pub, own))

    def csl(self, slug: str) -> str:
        """A person's publications as a CSL-JSON array, newest first."""
        items = [csl_item(c) for c in self.of(slug)]
        return json.dumps(items, indent=2, ensure_ascii=False) + "\n"

    def cite_block(self, pub: PublicationEntity) -> tuple[str, str]:
        """(BibTeX, plain text) for a publication page's Cite block: the merged facts."""
        c = citable(self.r, pub, self.keys[pub.key], None, self.profiles)
        return bibtex_entry(c, extras=False), plain_citation(c)


# --------------------------------------------------------------------------- CSL-JSON


def csl_item(c: Citable, extras: bool = True) -> dict:
    item: dict = {"id": c.key, "type": CSL_TYPES.get(c.type, "article"), "title": c.title}
    item["author"] = [
        {"literal": a.name} if a.group or not a.given else {"family": a.family, "given": a.given}
        for a in c.authors
    ]
    if _unpublished(c):  # "Submitted to ATC'25" is a note, not a container or a date
        if c.venue:
            item["note"] = c.venue
    else:
        if venue_name(c):
            item["container-title"] = venue_name(c)
        if c.year:
            item["issued"] = {"date-parts": [[c.year]]}
    for name, key in (("pages", "page"), ("volume", "volume"), ("issue", "issue")):
        if getattr(c, name):
            item[key] = getattr(c, name)
    if c.publisher:
        item["publisher"] = c.publisher
    if c.abstract and extras:
        item["abstract"] = c.abstract
    if c.status != "published":
        item["status"] = c.status
    if c.doi:
        item["DOI"] = c.doi
    if c.arxiv:
        item["number"] = f"arXiv:{c.arxiv}"
    url = next((u for _, u in c.links if u), None)
    if url:
        item["URL"] = url
    if extras:
        kg = _csl_extras(c)
        if kg:
            item["custom"] = {"kg": kg}
    return item


def _csl_extras(c: Citable) -> dict:
    kg: dict = {}
    ranks = list(enumerate(c.authors, start=1))
    if any(a.equal_contribution for a in c.authors):
        kg["equal_contribution"] = [i for i, a in ranks if a.equal_contribution]
    if any(a.corresponding for a in c.authors):
        kg["corresponding"] = [i for i, a in ranks if a.corresponding]
    if any(a.annotation for a in c.authors):
        kg["annotations"] = {str(i): a.annotation for i, a in ranks if a.annotation}
    if c.notes:
        kg["notes"] = list(c.notes)
    if c.links:
        kg["links"] = [[label, url or ""] for label, url in c.links]
    if c.equal_contribution_note:
        kg["equal_contribution_note"] = c.equal_contribution_note
    if c.selected:
        kg["selected"] = True
    if c.year and _unpublished(c):
        kg["year"] = c.year
    if c.venue and not _unpublished(c) and not venue_name(c):
        kg["printed"] = c.venue
    for name in ("pdf", "code", "slides", "video"):
        if getattr(c, name):
            kg[name] = getattr(c, name)
    return kg


# --------------------------------------------------------------------------- plain text


def plain_citation(c: Citable) -> str:
    """`A, B and C. Title. Venue, 2024. https://doi.org/…`"""
    names = [a.name for a in c.authors]
    people = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)
    title = c.title if c.title[-1:] in ".?!" else f"{c.title}."
    year = str(c.year) if c.year and str(c.year) not in (c.venue or "") else None
    year = None if _unpublished(c) else year
    where = ", ".join(x for x in (c.venue, year) if x)
    text = f"{people}. {title}" + (f" {where}." if where else "")
    if c.doi:
        text += f" {doi_address(c.doi)}"
    elif c.arxiv:
        text += f" {arxiv_address(c.arxiv)}"
    return text


def bibtex_file(r: Resolution, slug: str) -> str:
    """A person's publications as one BibTeX file (see `Citations` to render many)."""
    return Citations(r).bibtex(slug)


def csl_file(r: Resolution, slug: str) -> str:
    """A person's publications as CSL-JSON (see `Citations` to render many)."""
    return Citations(r).csl(slug)
