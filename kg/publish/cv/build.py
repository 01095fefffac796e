"""Build a `CV` from one profile: each section's entries from the document's own fields.

Invariant: reads only the person's `Profile` and, through `Names`, the registries' names
of what it references (organizations, venues) and which author is the owner; never the
merged publication entities, other profiles, or notes of the project.
"""

from __future__ import annotations

import re

from kg.errors import UsageError
from kg.model import (
    ACCOUNT_SERVICES,
    STATUS_SYNONYMS,
    Education,
    PersonRef,
    Position,
    Profile,
    Publication,
    TalkEvent,
)
from kg.publish.cv.model import (
    CV,
    DEFAULT_LEGEND,
    SECTIONS,
    STATUS_GROUPS,
    Author,
    Contact,
    Item,
    Options,
    Paper,
    PaperGroup,
    Section,
    bound,
    date_text,
    in_range,
    period_text,
)
from kg.publish.links import work_addresses
from kg.resolve.identity import Resolution


class Names:
    """The registries' names for what a profile references, and who its owner is."""

    def __init__(self, r: Resolution, profile: Profile) -> None:
        self.r = r
        self.owner = r.owner(profile)

    def org(self, ref: str | None) -> str:
        return self.r.organizations[self.r.org(ref)].name if ref else ""

    def venue(self, ref: str) -> tuple[str, str]:
        """(short name or name, full name)."""
        venue = self.r.venues[self.r.venue(ref)[0]]
        return venue.short_name or venue.name, venue.name

    def venue_kind(self, ref: str | None) -> str | None:
        return self.r.venues[self.r.venue(ref)[0]].kind if ref else None

    def is_owner(self, ref: PersonRef) -> bool:
        return ref.source is not None and self.r.person_of.get(ref.source) == self.owner


def people(refs: list[PersonRef]) -> str:
    return ", ".join(" ".join(x for x in (r.honorific, r.name) if x) for r in refs)


def labelled(label: str, refs: list[PersonRef]) -> tuple[str, ...]:
    if not refs:
        return ()
    return (f"{label}{'s' if len(refs) > 1 else ''}: {people(refs)}",)


def joined(*parts: str | None, sep: str = ", ") -> str:
    return sep.join(p for p in parts if p)


def education_item(e: Education, names: Names) -> Item:
    degree = joined(e.degree, e.field, sep=" in ")
    status = {"incomplete": "incomplete", "expected": "expected"}.get(e.status or "")
    detail = joined(degree, e.unit, e.program, e.location) + (f" ({status})" if status else "")
    grade = joined(e.gpa, f"({e.rank})" if e.rank else None, sep=" ")
    lines = (
        *labelled("Advisor", e.advisors),
        *labelled("Co-advisor", e.co_advisors),
        *((grade,) if grade else ()),
        *e.notes,
    )
    return Item(
        names.org(e.institution),
        detail,
        period_text(e.start, e.end),
        lines,
        bound(e.start, False),
        bound(e.end, True),
        e,
    )


def position_item(x: Position, names: Names) -> Item:
    org, unit = names.org(x.organization), names.org(x.unit)
    lead = unit if org and org in unit else joined(org, unit)
    lines = (
        *labelled("Mentor", x.mentors),
        *labelled("Advisor", x.supervisors),
        *((x.description,) if x.description else ()),
        *x.highlights,
    )
    return Item(
        lead,
        joined(x.role, x.location),
        period_text(x.start, x.end),
        lines,
        bound(x.start, False),
        bound(x.end, True),
        x,
    )


def status_of(pub: Publication, names: Names) -> str:
    """The listing's status, or what its venue implies (docs/mapping.md#publication-status)."""
    if pub.status:
        return STATUS_SYNONYMS.get(pub.status, pub.status)
    kind = names.venue_kind(pub.venue)
    return {"preprint-server": "preprint", "report-series": "report"}.get(kind or "", "published")


def venue_text(pub: Publication, status: str, names: Names) -> tuple[str, str]:
    """(`OSDI 2024`, full name); for work not (yet) at a venue, what the listing says."""
    short, full = names.venue(pub.venue) if pub.venue else ("", "")
    at = joined(short, str(pub.year) if pub.year else None, sep=" ")
    if status == "submitted":
        return (
            f"Submitted to {at}"
            if at and names.venue_kind(pub.venue) != "preprint-server"
            else joined(at, "in submission")
        ), full
    if status == "report" and not at:
        return "Technical report", full
    if status == "preprint" and pub.arxiv:
        return joined(f"arXiv:{pub.arxiv}", str(pub.year) if pub.year else None, sep=" "), full
    return at or (pub.venue_as_printed or ""), full


def paper_links(pub: Publication) -> tuple[tuple[str, str], ...]:
    found = [*work_addresses(pub), *((link.label, link.url) for link in pub.links)]
    return tuple((label, url) for label, url in found if url)


def paper(pub: Publication, number: int, names: Names) -> Paper:
    status = status_of(pub, names)
    venue, full = venue_text(pub, status, names)
    authors = tuple(
        Author(a.name, names.is_owner(a), a.equal_contribution, a.annotation) for a in pub.authors
    )
    return Paper(
        number,
        pub.title,
        authors,
        venue,
        pub.year,
        status,
        tuple(pub.notes),
        paper_links(pub),
        full,
    )


def publication_groups(profile: Profile, names: Names, options: Options) -> tuple[PaperGroup, ...]:
    pubs = [
        p
        for p in profile.publications
        if p.year is None or in_range((p.year, 1), (p.year, 12), options)
    ]
    ordered: list[tuple[str, Publication]] = [
        ("Selected publications", p) for p in pubs if p.selected
    ]
    rest = [(status_of(p, names), p) for p in pubs if not p.selected]  # each once
    for status, heading in STATUS_GROUPS:
        ordered += [(heading, p) for found, p in rest if found == status]
    if options.max_publications is not None:
        ordered = ordered[: options.max_publications]
    groups: dict[str, list[Paper]] = {}
    for number, (heading, pub) in enumerate(ordered, start=1):
        groups.setdefault(heading, []).append(paper(pub, number, names))
    return tuple(PaperGroup(h, tuple(ps)) for h, ps in groups.items())


def legend(profile: Profile, papers: tuple[Paper, ...]) -> str | None:
    if not any(a.equal for p in papers for a in p.authors):
        return None
    notes = [p.equal_contribution_note for p in profile.publications if p.equal_contribution_note]
    return notes[0] if notes else DEFAULT_LEGEND


def talk_items(profile: Profile, names: Names, options: Options) -> tuple[Item, ...]:
    items = []
    for talk in profile.talks:
        events = [
            e for e in talk.events if in_range(bound(e.date, False), bound(e.date, True), options)
        ]
        lines = tuple(joined(e.event, where(e, names), date_text(e.date)) for e in events)
        if events:
            items.append(Item(talk.title, lines=lines, origin=talk))
    return tuple(items)


def where(event: TalkEvent, names: Names) -> str | None:
    """The host (or venue) of a talk, unless the event's own text already names it."""
    name = names.org(event.host) if event.host else None
    if name is None and event.venue:
        name = names.venue(event.venue)[0]
    return None if name is None or name in event.event else name


def term_in_range(term: str, options: Options) -> bool:
    """A term (`Fall 2022`, `2022 Fall`) by its year; a term without one is kept."""
    year = re.search(r"\b(\d{4})\b", term)
    return year is None or in_range((int(year[1]), 1), (int(year[1]), 12), options)


def teaching_items(profile: Profile, names: Names, options: Options) -> tuple[Item, ...]:
    items = []
    for t in profile.teaching:
        terms = [term for term in t.terms if term_in_range(term, options)]
        if terms or not t.terms:
            detail = joined(t.role, names.org(t.institution))
            items.append(Item(t.course, detail, ", ".join(terms), origin=t))
    return tuple(items)


def service_items(profile: Profile, names: Names, options: Options) -> tuple[Item, ...]:
    items = []
    for s in profile.service:
        if s.year is not None and not in_range((s.year, 1), (s.year, 12), options):
            continue
        served = s.as_printed or joined(
            ", ".join(names.venue(v)[0] for v in s.venues), str(s.year) if s.year else None, sep=" "
        )
        items.append(Item(s.role, served, origin=s))
    return tuple(items)


def award_items(profile: Profile, names: Names, options: Options) -> tuple[Item, ...]:
    return tuple(
        Item(a.name, joined(a.note, names.org(a.awarded_by)), date_text(a.date), origin=a)
        for a in profile.awards
        if in_range(bound(a.date, False), bound(a.date, True), options)
    )


def project_items(profile: Profile, names: Names, options: Options) -> tuple[Item, ...]:
    items = []
    for p in profile.projects:
        if not in_range(bound(p.date, False), bound(p.date, True), options):
            continue
        deployed = ", ".join(names.org(o) for o in p.deployed_at)
        lines = (
            *((p.description,) if p.description else ()),
            *((f"Deployed at {deployed}",) if deployed else ()),
            *(joined(link.label, link.url, link.note, sep=": ") for link in p.links),
            *p.notes,
        )
        detail = joined(p.category, names.org(p.team))
        items.append(Item(p.name, detail, date_text(p.date), lines, origin=p))
    return tuple(items)


def dated(items: tuple[Item, ...], options: Options) -> tuple[Item, ...]:
    return tuple(i for i in items if in_range(i.start, i.end, options))


def contact(profile: Profile) -> tuple[Contact, ...]:
    found = [Contact("Email", e, f"mailto:{e}") for e in profile.emails]
    if profile.homepage:
        found.append(Contact("Homepage", profile.homepage, profile.homepage))
    if profile.orcid:
        found.append(Contact("ORCID", profile.orcid, f"https://orcid.org/{profile.orcid}"))
    for a in profile.accounts:
        base = ACCOUNT_SERVICES.get(a.service.casefold())
        url = a.url or (f"{base}{a.username}" if base else None)
        found.append(Contact(a.service.capitalize(), a.username, url))
    if profile.address:
        found.append(Contact("Address", profile.address))
    for link in profile.links:
        text = f"{link.label} ({link.note})" if link.note else link.label
        found.append(Contact("Link", text, link.url))
    return tuple(found)


def sections(profile: Profile, names: Names, options: Options) -> dict[str, Section]:
    headings = dict(SECTIONS)
    items = {
        "interests": tuple(Item(i) for i in profile.interests),
        "education": dated(tuple(education_item(e, names) for e in profile.education), options),
        "positions": dated(tuple(position_item(x, names) for x in profile.positions), options),
        "talks": talk_items(profile, names, options),
        "teaching": teaching_items(profile, names, options),
        "service": service_items(profile, names, options),
        "awards": award_items(profile, names, options),
        "projects": project_items(profile, names, options),
        "skills": tuple(
            Item(s.category or "", ", ".join(s.items), origin=s) for s in profile.skills
        ),
        "other": tuple(Item(o) for o in profile.other),
    }
    found = {k: Section(k, headings[k], v) for k, v in items.items() if v}
    groups = publication_groups(profile, names, options)
    if groups:
        found["publications"] = Section("publications", headings["publications"], groups=groups)
    return found


def build_cv(r: Resolution, slug: str, options: Options | None = None) -> CV:
    """The CV of the profile `slug` (UsageError when there is none)."""
    profile = next((p for p in r.dataset.profiles if p.slug == slug), None)
    if profile is None:
        known = ", ".join(sorted(p.slug for p in r.dataset.profiles))
        raise UsageError(f"no profile {slug!r}; profiles: {known}")
    return cv_of(r, profile, options)


def cv_of(r: Resolution, profile: Profile, options: Options | None = None) -> CV:
    """The CV of one of `r`'s profiles (the site has it at hand: no search by slug)."""
    options = options or Options()
    names = Names(r, profile)
    found = sections(profile, names, options)
    chosen = tuple(found[k] for k in options.sections if k in found)
    papers = tuple(p for s in chosen for g in s.groups for p in g.papers)
    return CV(
        profile.slug,
        profile.name,
        tuple((n.name, n.lang) for n in profile.native_names),
        profile.headline,
        contact(profile),
        profile.bio,
        chosen,
        legend(profile, papers),
        profile,
    )
