"""Merge imported records into one profile: match, add, fill, report conflicts.

Publications match an existing entry by DOI, then arXiv id, then title (ignoring case
and punctuation). A match is never duplicated: fields the profile lacks are filled
(DOI, arXiv id, venue, venue as printed, year, links, notes); fields that disagree
(year, venue, author list or order, title, DOI) are reported and left as written.
Records the same file lists twice are one. Positions and degrees (ORCID) match by
organization and start date. Venues and organizations that the registries do not
know are not invented: a registry entry ready to paste is printed instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml.comments import CommentedMap

from kg.imports.record import GENERIC_VENUE, Affiliation, Work, squash
from kg.imports.yamledit import dump, styled
from kg.ingest.names import name_key, slugify, text_key
from kg.model import PRINTED_DETAILS, Education, Position, Profile, Publication
from kg.publish.citation import publication_type
from kg.resolve.identity import Resolution

DEGREE_LEVELS = (
    (re.compile(r"ph\.?\s?d|doctor|dphil", re.I), "doctoral"),
    (re.compile(r"master|m\.?\s?s\b|m\.?\s?sc|m\.?\s?eng|m\.?\s?phil|mba", re.I), "master"),
    (
        re.compile(r"bachelor|b\.?\s?s\b|b\.?\s?sc|b\.?\s?e\b|b\.?\s?eng|b\.?\s?a\b", re.I),
        "bachelor",
    ),
)
_PREFIX = re.compile(
    r"^(submitted|accepted|to appear|in submission|under review)\s*(to|in|at|for)?\s*[:,]?\s*", re.I
)


@dataclass
class Plan:
    """What an import will do to a profile."""

    added: list[dict[str, Any]] = field(default_factory=list)  # new publications
    filled: dict[int, dict[str, Any]] = field(default_factory=dict)  # index -> new keys
    # publication index -> author rank (0-based) -> markers to add
    filled_authors: dict[int, dict[int, dict[str, Any]]] = field(default_factory=dict)
    added_positions: list[dict[str, Any]] = field(default_factory=list)
    added_education: list[dict[str, Any]] = field(default_factory=list)
    filled_positions: dict[int, dict[str, Any]] = field(default_factory=dict)
    filled_education: dict[int, dict[str, Any]] = field(default_factory=dict)
    top: dict[str, Any] = field(default_factory=dict)  # new top-level keys (`orcid`)
    matched: int = 0
    conflicts: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    registry_entries: dict[str, str] = field(default_factory=dict)  # file -> YAML to paste

    @property
    def changes(self) -> bool:
        return bool(
            self.top
            or self.added
            or self.filled
            or self.filled_authors
            or self.added_positions
            or self.added_education
            or self.filled_positions
            or self.filled_education
        )


# --------------------------------------------------------------------------- venues


_ACRONYM_YEAR = re.compile(r"\b([A-Z][A-Za-z]*[A-Z][A-Za-z]*\s*['’]?\s*(?:\d{4}|\d{2}))\b")


def venue_candidates(text: str, arxiv: str | None, series: str | None = None) -> list[str]:
    """Texts to look up for a printed venue, most specific first: the text, ACM's
    `series` (`ASPLOS 2023`), what stands before a colon (dblp's `SIGCOMM '22: …`),
    acronyms in parentheses, the name without "Proceedings of the", ordinals, years and
    volumes, and an acronym followed by a year (`ACM SIGCOMM 2023` -> `SIGCOMM 2023`;
    a bare acronym is not enough: `ACM SIGCOMM Computer Communication Review` is a
    journal, not the conference)."""
    base = _PREFIX.sub("", squash(text))
    found = [text, base, series or "", base.split(":")[0], *re.findall(r"\(([^()]+)\)", base)]
    short = re.sub(r"^(proceedings of (the )?|in )", "", base, flags=re.I)
    short = re.sub(r",?\s*volume \d+$", "", short, flags=re.I)
    short = re.sub(r"\([^()]*\)|\b\d+(st|nd|rd|th)\b|\b(19|20)\d{2}\b|'\d{2}\b", " ", short)
    found.append(squash(short).strip(" ,.:"))
    found.append(re.sub(r"\s+(conference|symposium)$", "", found[-1], flags=re.I))
    if "workshop" not in text.lower():  # a workshop names its host conference too
        found += _ACRONYM_YEAR.findall(base)
    if arxiv or "arxiv" in text.lower() or text.strip().lower() == "corr":
        found.append("arXiv")
    return [c for c in dict.fromkeys(found) if c]


def find_venue(r: Resolution, work: Work) -> str | None:
    """The registry key of the work's venue, or None."""
    if not work.venue:
        found = r.find_venue("arXiv") if work.arxiv else None
        return found[0] if found else None
    for candidate in venue_candidates(work.venue, work.arxiv, work.series):
        found = r.find_venue(candidate)
        if found:
            return found[0]
    return None


VENUE_KINDS = {
    "journal-article": "journal",
    "workshop-paper": "workshop",
    "preprint": "preprint-server",
    "report": "report-series",
}


def _venue_name(work: Work) -> str:
    assert work.venue
    name = squash(re.sub(r"\b(19|20)\d{2}\b|'\d{2}\b", " ", _PREFIX.sub("", work.venue)))
    return name.strip(" ,.:") or work.venue


def venue_key(work: Work) -> str:
    """The registry key `venue_entry` would suggest (cheap: no YAML is emitted)."""
    return slugify(_venue_name(work))


def venue_entry(work: Work) -> tuple[str, str]:
    """A `data/venues.yaml` entry ready to paste, for a venue the registry lacks."""
    assert work.venue
    name = _venue_name(work)
    kind = VENUE_KINDS.get(work.type or "", "conference")
    if "workshop" in name.lower() and kind == "conference":
        kind = "workshop"
    entry: dict[str, Any] = {"name": name, "kind": kind}
    if name != work.venue:
        entry["aliases"] = styled([work.venue])
    key = slugify(name)
    return key, registry_entry(key, entry)


def registry_entry(key: str, entry: dict[str, Any]) -> str:
    """A registry entry as the registries write them: block mapping, flow lists."""
    return dump({key: CommentedMap(entry)})


# --------------------------------------------------------------------------- publications


def author_value(a, person: str | None = None) -> str | dict[str, Any]:
    marks: dict[str, Any] = {}
    if a.equal_contribution:
        marks["equal_contribution"] = True
    if a.corresponding:
        marks["corresponding"] = True
    if a.annotation:
        marks["annotation"] = a.annotation
    if a.group:
        marks["group"] = True
    if person:
        marks["person"] = person
    return {"name": a.name, **marks} if marks else a.name


def known_person(r: Resolution, author) -> str | None:
    """The `data/people.yaml` key dblp's homonym number points to, if registered."""
    if not author.disambiguation:
        return None
    key = name_key(author.name)
    for known in r.dataset.people:
        names = {name_key(n) for n in (known.name, *known.aliases)}
        if key in names and known.disambiguation == author.disambiguation:
            return known.key
    return None


def new_publication(r: Resolution, work: Work, venue: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "title": work.title,
        "authors": [author_value(a, known_person(r, a)) for a in work.authors],
    }
    if work.type and work.type != publication_type(r, venue, work.status):
        entry["type"] = work.type
    if venue:
        entry["venue"] = venue
    if work.venue:
        entry["venue_as_printed"] = work.venue
    if work.year:
        entry["year"] = work.year
    if work.status != "published":
        entry["status"] = work.status
    if work.notes:
        entry["notes"] = list(work.notes)
    if work.equal_contribution_note:
        entry["equal_contribution_note"] = work.equal_contribution_note
    if work.arxiv:
        entry["arxiv"] = work.arxiv
    if work.doi:
        entry["doi"] = work.doi
    entry.update(media(work))
    links = _links(work)
    if links:
        entry["links"] = links
    if work.selected:
        entry["selected"] = True
    return entry


WEB_ADDRESS = re.compile(r"^https?://[^\s<>\"{}|\\^`]+$")  # what the loader accepts as a url
ADDRESS_FIELDS = ("pdf", "code", "slides", "video")


def media(work: Work) -> dict[str, str]:
    """Abstract, pages, volume, issue, publisher and the pdf/code/slides/video addresses
    the record gives (an address that is not http(s), such as al-folio's local file
    name, is left out: the profile's field takes a web address)."""
    found = {}
    for name in PRINTED_DETAILS:  # a profile keeps them under the same names
        value = getattr(work, name)
        if value and (name not in ADDRESS_FIELDS or WEB_ADDRESS.match(value)):
            found[name] = value
    return found


def _links(work: Work) -> list[dict[str, str]]:
    """Links the record gives; an address that is not http(s) (`javascript:`, `file:`)
    is dropped, so an import cannot put one on a page."""
    links = []
    for label, url in work.links:
        links.append({"label": label, "url": url} if WEB_ADDRESS.match(url) else {"label": label})
    known = {link.get("url") for link in links}
    url = work.url or ""
    if WEB_ADDRESS.match(url) and url not in known and not _identifier_url(url):
        links.append({"label": "Paper", "url": url})
    return links


def _identifier_url(url: str) -> bool:
    return "doi.org/" in url or "arxiv.org/" in url


def _name(value: str | dict[str, Any]) -> str:
    return value if isinstance(value, str) else value["name"]


class _Existing:
    """An entry to match against: one of the profile's, or one this import adds."""

    def __init__(self, index: int | None, values: dict[str, Any], pub: Publication | None):
        self.index, self.values, self.pub = index, values, pub

    def get(self, name: str) -> Any:
        return getattr(self.pub, name) if self.pub is not None else self.values.get(name)


def _entry_values(pub: Publication) -> dict[str, Any]:
    return {"authors": [a.name for a in pub.authors], "links": [{"url": x.url} for x in pub.links]}


class PublicationMerger:
    def __init__(self, r: Resolution, profile: Profile, plan: Plan) -> None:
        self.r, self.profile, self.plan = r, profile, plan
        self.entries: list[_Existing] = []
        # DOI, arXiv id and title key -> the first entry that has it: one look-up per
        # record, so an import of n records into m entries takes O(n + m), not O(n * m)
        self.index: dict[tuple[str, str], _Existing] = {}
        for i, p in enumerate(profile.publications):
            self._remember(_Existing(i, _entry_values(p), p))
        self.owner = {name_key(n) for n in (profile.name, *profile.alternate_names)}

    def _remember(self, e: _Existing) -> None:
        self.entries.append(e)
        self._index(e)

    def _index(self, e: _Existing) -> None:
        for kind, value in (
            ("doi", (e.get("doi") or "").lower()),
            ("arxiv", e.get("arxiv") or ""),
            ("title", text_key(e.get("title") or "")),
        ):
            if value:
                self.index.setdefault((kind, value), e)

    def match(self, work: Work) -> _Existing | None:
        doi = (work.doi or "").lower()
        found = self.index.get(("doi", doi)) if doi else None
        if found is None and work.arxiv:
            found = self.index.get(("arxiv", work.arxiv))
        title = text_key(work.title)
        return found or (self.index.get(("title", title)) if title else None)

    def merge(self, work: Work) -> None:
        if not any(name_key(a.name) in self.owner for a in work.authors):
            self.plan.warnings.append(
                f"{work.origin}: {self.profile.name} is not among the authors of "
                f"{work.title!r}; imported all the same"
            )
        venue = find_venue(self.r, work)
        existing = self.match(work)
        generic = bool(work.venue and GENERIC_VENUE.match(work.venue.strip()))
        if (
            work.venue
            and venue is None
            and not generic
            and work.type != "thesis"
            and (existing is None or not existing.get("venue"))
        ):
            where = f"data/venues.yaml: {venue_key(work)}"
            if where not in self.plan.registry_entries:  # emitted once per venue
                self.plan.registry_entries[where] = venue_entry(work)[1]
        if existing is None:
            entry = new_publication(self.r, work, venue)
            self.plan.added.append(entry)
            self._remember(_Existing(None, entry, None))
            return
        self.plan.matched += 1
        self._conflicts(existing, work, venue)
        self._author_markers(existing, work)
        fills = self._fills(existing, work, venue)
        if fills and existing.index is not None:
            self.plan.filled.setdefault(existing.index, {}).update(fills)
        elif fills:
            existing.values.update(fills)
        if fills:
            self._index(existing)  # a filled DOI or arXiv id matches later records

    def _fills(self, e: _Existing, work: Work, venue: str | None) -> dict[str, Any]:
        fills: dict[str, Any] = {}
        for name, value in (
            ("venue", venue),
            ("venue_as_printed", work.venue),
            ("year", work.year),
            ("arxiv", work.arxiv),
            ("doi", work.doi),
            ("equal_contribution_note", work.equal_contribution_note),
            *media(work).items(),
        ):
            if value and not e.get(name) and not self._pending(e, name):
                fills[name] = value
        if not e.get("notes") and work.notes and not self._pending(e, "notes"):
            fills["notes"] = list(work.notes)
        known = {link.get("url") for link in (e.values.get("links") or [])}
        known |= {link.get("url") for link in self._pending(e, "links") or []}
        new_links = [x for x in _links(work) if x.get("url") and x["url"] not in known]
        if new_links and not e.get("links"):
            fills["links"] = new_links
        return fills

    def _author_markers(self, e: _Existing, work: Work) -> None:
        """Equal-contribution and corresponding marks the entry lacks, when it names the
        same authors in the same order."""
        names = e.values.get("authors") or []
        if [name_key(_name(n)) for n in names] != [name_key(a.name) for a in work.authors]:
            return
        for rank, author in enumerate(work.authors):
            marks = {
                flag: True
                for flag in ("equal_contribution", "corresponding")
                if getattr(author, flag) and not self._has(e, rank, flag)
            }
            if not marks:
                continue
            if e.index is None:  # an entry this import adds: mark it directly
                current = names[rank]
                names[rank] = {**({"name": current} if isinstance(current, str) else current)}
                names[rank].update(marks)
            else:
                self.plan.filled_authors.setdefault(e.index, {}).setdefault(rank, {}).update(marks)

    def _has(self, e: _Existing, rank: int, flag: str) -> bool:
        if e.pub is not None:
            pending = self.plan.filled_authors.get(e.index or 0, {}).get(rank, {})
            return bool(getattr(e.pub.authors[rank], flag) or pending.get(flag))
        value = e.values["authors"][rank]
        return isinstance(value, dict) and bool(value.get(flag))

    def _pending(self, e: _Existing, name: str) -> Any:
        if e.index is None:
            return None
        return self.plan.filled.get(e.index, {}).get(name)

    def _conflicts(self, e: _Existing, work: Work, venue: str | None) -> None:
        where = "an entry added above"
        if e.pub is not None:
            line = f"{e.pub.source.file}:{e.pub.source.line}, " if e.pub.source else ""
            where = f"{line}publications[{e.index}]"
        subject = f"{work.origin}: {work.title!r} matches {where}"
        ours = e.get("year")
        if ours and work.year and ours != work.year:
            self.plan.conflicts.append(f"{subject}: year {work.year} here, {ours} in the profile")
        our_venue = e.get("venue")
        if our_venue:
            found = self.r.find_venue(our_venue)
            our_venue = found[0] if found else our_venue
        if our_venue and venue and our_venue != venue:
            self.plan.conflicts.append(
                f"{subject}: venue {venue!r} here, {our_venue!r} in the profile"
            )
        self._author_conflict(e, work, subject)
        if text_key(e.get("title")) != text_key(work.title):
            self.plan.conflicts.append(f"{subject}: title {work.title!r} here")
        if e.get("doi") and work.doi and e.get("doi").lower() != work.doi.lower():
            self.plan.conflicts.append(f"{subject}: DOI {work.doi} here, {e.get('doi')} there")

    def _author_conflict(self, e: _Existing, work: Work, subject: str) -> None:
        names = e.values.get("authors") or []
        ours = [name_key(_name(n)) for n in names]
        theirs = [name_key(a.name) for a in work.authors]
        if work.truncated:
            ours = ours[: len(theirs)]
        if ours == theirs:
            return
        if sorted(ours) == sorted(theirs):
            detail = "the same authors in a different order"
        else:
            detail = f"different authors ({', '.join(a.name for a in work.authors)})"
        self.plan.conflicts.append(f"{subject}: {detail}")


def newest_first(profile: Profile) -> bool:
    years = [p.year for p in profile.publications]
    return all(y is not None for y in years) and years == sorted(years, reverse=True)  # type: ignore[type-var]


def insertion_index(profile: Profile, year: int | None) -> int | None:
    """Where a new publication goes: by year when the list is newest-first, else the end."""
    if year is None or not newest_first(profile):
        return None
    return next((i for i, p in enumerate(profile.publications) if (p.year or 0) < year), None)


# --------------------------------------------------------------------------- ORCID affiliations


def degree_level(degree: str | None) -> str | None:
    for pattern, level in DEGREE_LEVELS:
        if degree and pattern.search(degree):
            return level
    return None


def merge_affiliations(r: Resolution, profile: Profile, items, plan: Plan) -> None:
    for item in items:
        org = r.find_org(item.organization)
        if org is None:
            key = slugify(item.organization, max_length=40)
            entry = {
                "name": item.organization,
                "kind": "university" if item.kind == "education" else "company",
            }
            if item.location:
                entry["location"] = item.location
            if item.ror:
                entry["ror"] = item.ror
            plan.registry_entries.setdefault(
                f"data/organizations.yaml: {key}", registry_entry(key, entry)
            )
            plan.warnings.append(
                f"{item.origin}: {item.organization!r} is not in data/organizations.yaml; "
                "this entry was skipped (paste the entry below, then import again)"
            )
            continue
        if item.kind == "education":
            _merge_education(r, profile, item, org, plan)
        else:
            _merge_position(r, profile, item, org, plan)


def _same_start(ours, theirs) -> bool:
    return ours is None or theirs is None or ours.year == theirs.year


def _merge_education(r: Resolution, profile: Profile, item: Affiliation, org: str, plan) -> None:
    level = degree_level(item.role)
    for i, e in enumerate(profile.education):
        if (
            r.find_org(e.institution) == org
            and _same_start(e.start, item.start)
            and (e.level is None or level is None or e.level == level)
        ):
            fills = _missing(
                e,
                {
                    "degree": item.role,
                    "level": level,
                    "unit": item.department,
                    "start": item.start,
                    "end": item.end,
                },
            )
            if fills:
                plan.filled_education.setdefault(i, {}).update(fills)
            return
    entry = {
        "institution": org,
        "degree": item.role,
        "level": level,
        "unit": item.department,
        "location": item.location,
        "start": item.start,
        "end": item.end,
    }
    plan.added_education.append(_present(entry))


def _merge_position(r: Resolution, profile: Profile, item: Affiliation, org: str, plan) -> None:
    for i, pos in enumerate(profile.positions):
        if r.find_org(pos.organization) == org and _same_start(pos.start, item.start):
            fills = _missing(
                pos,
                {
                    "role": item.role,
                    "start": item.start,
                    "end": item.end,
                    "location": item.location,
                },
            )
            if fills:
                plan.filled_positions.setdefault(i, {}).update(fills)
            return
    entry = {
        "organization": org,
        "role": item.role,
        "location": item.location,
        "start": item.start,
        "end": item.end,
    }
    if item.department:
        entry["description"] = item.department
    plan.added_positions.append(_present(entry))


def _missing(current: Education | Position, values: dict[str, Any]) -> dict[str, Any]:
    return _present({k: v for k, v in values.items() if getattr(current, k) is None})


def _present(values: dict[str, Any]) -> dict[str, Any]:
    return {k: (str(v) if k in ("start", "end") else v) for k, v in values.items() if v is not None}
