"""Stage 3: a `Resolution` -> an rdflib Graph (schema.org + FOAF + kg terms) and a source map.

Every node gets a deterministic IRI under the configured base (no blank nodes); the
source map records the YAML file and line each node came from, for validation reports.
See docs/mapping.md for the table this module implements.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any
from urllib.parse import urlsplit

from rdflib import Graph, Literal, URIRef
from rdflib.term import Node

from kg import scheme
from kg.change import Change
from kg.graph.namespaces import FOAF, KG, RDF, SCHEMA, WD, XSD
from kg.graph.triples import Triples
from kg.ingest.names import slugify, topic_slugs
from kg.iri import arxiv_address, doi_address, encode_path
from kg.model import (
    ACCOUNT_SERVICES,
    PRESENT,
    STATUSES_WITH_DATE,
    STATUSES_WITH_VENUE,
    Award,
    Education,
    KnownPerson,
    Organization,
    PartialDate,
    Position,
    Present,
    Profile,
    Project,
    Publication,
    Service,
    Source,
    Talk,
    Teaching,
    Venue,
    inferred_publication_type,
)
from kg.resolve.identity import PersonEntity, PublicationEntity, Resolution, project_papers

ORG_TYPES = {
    "university": SCHEMA.CollegeOrUniversity,
    "company": SCHEMA.Corporation,
    "institute": SCHEMA.ResearchOrganization,
}
VENUE_TYPES = {
    "conference": SCHEMA.EventSeries,
    "workshop": SCHEMA.EventSeries,
    "journal": SCHEMA.Periodical,
    "preprint-server": SCHEMA.CreativeWorkSeries,
    "report-series": SCHEMA.CreativeWorkSeries,
}
WORK_TYPES = {"report": SCHEMA.Report, "thesis": SCHEMA.Thesis}
# a link to one of these is a profile of the same person elsewhere (schema:sameAs)
PROFILE_HOSTS = frozenset(
    {
        "scholar.google.com",
        "dblp.org",
        "orcid.org",
        "github.com",
        "www.linkedin.com",
        "linkedin.com",
        "www.semanticscholar.org",
        "www.researchgate.net",
    }
)
POSTING_VENUES = ("preprint-server", "report-series")  # where a work is posted, not reviewed
ONGOING = ("in-progress", "expected")
IDENTITY_BASES = {
    "single-document": KG.SingleDocument,
    "decision": KG.IdentityDecision,
    "shared-publication": KG.SharedPublication,
    "name-only": KG.NameOnly,
}  # education statuses of a programme not yet ended


# a date literal's datatype keeps the written precision
_DATE_TYPES = {"year": XSD.gYear, "month": XSD.gYearMonth, "day": XSD.date}


@dataclass
class Mapped:
    """The triples and where each of their subjects came from."""

    triples: Triples
    sources: dict[URIRef, Source] = field(default_factory=dict)
    # what differs from the build before (kg/change.py); None: not known (a full run)
    change: Change | None = None

    @cached_property
    def graph(self) -> Graph:
        """The same triples as an rdflib Graph (built on first use: SPARQL, publishing)."""
        return self.triples.to_graph()


class _Mapper:
    def __init__(
        self,
        resolution: Resolution,
        base: str,
        modified: dict[str, PartialDate],
        created: dict[str, PartialDate],
    ):
        self.r = resolution
        self.base = base
        self.modified = modified
        self.created = created
        self.graph = Triples()
        self.sources: dict[URIRef, Source] = {}
        self.iris: dict[str, URIRef] = {}
        self.literals: dict[tuple[type, str | int | bool], Literal] = {}
        self.typed_literals: dict[tuple[URIRef, str], Literal] = {}
        self.topics = topic_slugs(_topic_labels(resolution), topic_key)
        self.seen: set[URIRef] | None = None  # the subjects the current unit emits (units)
        # the current unit's triples and the sources it sets (emissions), each call as
        # if the unit were mapped alone; the triples added more than once, how often;
        # the subjects whose source is set more than once
        self.emitting: list[Node] | None = None  # s, p, o, s, p, o, ... (flat)
        self.setting: list[tuple[URIRef, Source, bool]] | None = None
        self.repeated: dict[tuple[Node, Node, Node], int] = {}
        self.shared: set[URIRef] = set()

    @cached_property
    def works_by_person(self) -> dict[str, int]:
        """Person key -> how many works they wrote or listed (one pass, not one per person)."""
        count: dict[str, int] = {}
        for pub in self.r.publications.values():
            people = {a.person for a in pub.authors if a.person} | dict(pub.listings).keys()
            for person in people:
                count[person] = count.get(person, 0) + 1
        return count

    # ---------------------------------------------------------------- primitives

    def iri(self, *parts: str | int) -> URIRef:
        text = scheme.mint(self.base, *parts)
        found = self.iris.get(text)
        if found is None:  # one term per IRI, however often it is mentioned
            found = self.iris[text] = URIRef(text)
        return found

    def add(self, s: URIRef, p: URIRef, o: Node | str | int | bool | None) -> None:
        kind = type(o)
        if kind is not URIRef and kind is not Literal:  # the common cases, without an
            if o is None or o == "":  # ABC isinstance or rdflib's Python-level __eq__
                return
            if not isinstance(o, Node):
                o = self.literal(o)
        seen = self.seen
        if seen is not None:
            seen.add(s)
            emitting = self.emitting
            if emitting is not None:
                triple = (s, p, o)
                emitting += triple  # type: ignore[arg-type]  # flat: no tuple kept per triple (decision 0060)
                if not self.graph.add(triple):  # type: ignore[arg-type]
                    repeated = self.repeated
                    repeated[triple] = repeated.get(triple, 1) + 1  # type: ignore[arg-type,index]
                return
        self.graph.add((s, p, o))  # type: ignore[arg-type]

    def touch(self, s: URIRef) -> None:
        """Count `s` as a subject of the current unit (`units`) though it adds nothing."""
        if self.seen is not None:
            self.seen.add(s)

    def literal(self, value: str | int | bool) -> Literal:
        """One term per plain value, however often it is written (years, names, counts
        repeat: rdflib builds a literal slowly and each costs about 200 bytes)."""
        key = (type(value), value)
        found = self.literals.get(key)
        if found is None:
            if isinstance(value, bool) or not isinstance(value, int):
                found = Literal(value)
            else:
                found = Literal(value, datatype=XSD.integer)
            self.literals[key] = found
        return found

    def typed(self, text: str, datatype: URIRef) -> Literal:
        """One term per typed literal (dates and years repeat as plain values do)."""
        key = (datatype, text)
        found = self.typed_literals.get(key)
        if found is None:
            found = self.typed_literals[key] = Literal(text, datatype=datatype)
        return found

    def year(self, year: int) -> Literal:
        return self.typed(f"{year:04d}", XSD.gYear)

    def add_date(self, s: URIRef, p: URIRef, value: PartialDate | Present | None) -> None:
        if isinstance(value, PartialDate):
            self.add(s, p, self.typed(str(value), _DATE_TYPES[value.precision]))

    def node(self, iri: URIRef, types: Iterable[URIRef], source: Source | None) -> URIRef:
        for t in types:
            self.add(iri, RDF.type, t)
        if source is not None:
            self.source(iri, source)
        return iri

    def source(self, s: URIRef, source: Source, forced: bool = False) -> None:
        """Set `s`'s source: the first unit's that sets one, unless a unit forces its
        own (a people registry entry's); recorded for the current unit (emissions)."""
        setting = self.setting
        if setting is not None:
            setting.append((s, source, forced))
            if s in self.sources:
                self.shared.add(s)
        if forced or s not in self.sources:
            self.sources[s] = source

    def named(self, s: URIRef, name: str) -> None:
        self.add(s, SCHEMA.name, name)

    def person(self, key: str) -> URIRef:
        return self.iri("person", key)

    def org(self, ref: str) -> URIRef:
        return self.iri("org", self.r.org(ref))

    # ---------------------------------------------------------------- registries

    def organizations(self) -> None:
        for org in self.r.organizations.values():
            self.organization(org)

    def organization(self, org: Organization) -> None:
        s = self.node(
            self.iri("org", org.key),
            [SCHEMA.Organization, FOAF.Organization, *_opt(ORG_TYPES.get(org.kind))],
            org.source,
        )
        self.named(s, org.name)
        for alias in org.aliases:
            self.add(s, SCHEMA.alternateName, alias)
        if org.parent:
            parent = self.org(org.parent)
            self.add(s, SCHEMA.parentOrganization, parent)
            self.add(parent, SCHEMA.subOrganization, s)
        if org.homepage:
            self.add(s, SCHEMA.url, URIRef(org.homepage))
            self.add(s, FOAF.homepage, URIRef(org.homepage))
        self.add(s, SCHEMA.location, org.location)
        self.add(s, KG.organizationKind, org.kind)
        if org.ror:
            self.same_as(s, f"ror:{org.ror}", f"https://ror.org/{org.ror}")
        if org.wikidata:
            self.same_as(s, f"wikidata:{org.wikidata}", str(WD[org.wikidata]))

    def same_as(self, s: URIRef, identifier: str, iri: str) -> None:
        """An external identifier: `schema:identifier` text and `schema:sameAs` its IRI."""
        self.add(s, SCHEMA.identifier, identifier)
        self.add(s, SCHEMA.sameAs, URIRef(iri))

    def venues(self) -> None:
        for venue in self.r.venues.values():
            self.venue(venue)

    def venue(self, venue: Venue) -> None:
        s = self.node(self.iri("venue", venue.key), [VENUE_TYPES[venue.kind]], venue.source)
        self.named(s, venue.name)
        self.add(s, SCHEMA.alternateName, venue.short_name)
        for alias in venue.aliases:
            self.add(s, SCHEMA.alternateName, alias)
        self.add(s, KG.venueKind, venue.kind)
        if venue.homepage:
            self.add(s, SCHEMA.url, URIRef(venue.homepage))
        if venue.dblp:
            self.same_as(s, f"dblp:{venue.dblp}", f"https://dblp.org/db/{venue.dblp}/")
        if venue.wikidata:
            self.same_as(s, f"wikidata:{venue.wikidata}", str(WD[venue.wikidata]))
        if venue.publisher:
            prop = (
                SCHEMA.organizer if venue.kind in ("conference", "workshop") else SCHEMA.publisher
            )
            self.add(s, prop, self.org(venue.publisher))
        for rank_list, value in sorted(venue.ranks.items()):
            rank = self.node(
                self.iri("venue", venue.key, "rank", slugify(rank_list)),
                [KG.VenueRanking],
                venue.source,
            )
            self.add(s, KG.ranking, rank)
            self.add(rank, KG.rankingList, rank_list)
            self.add(rank, KG.rankValue, value)
            self.named(rank, f"{rank_list}-{value}")
        for year in sorted(venue.editions):
            self.edition(venue.key, year)

    def edition(self, venue_key: str, year: int) -> URIRef:
        """The yearly event of a conference series (or the journal itself)."""
        venue = self.r.venues[venue_key]
        series = self.iri("venue", venue_key)
        if venue.kind not in ("conference", "workshop"):
            return series
        s = self.iri("venue", venue_key, year)
        if self.emitting is None and (s, RDF.type, SCHEMA.Event) in self.graph:
            self.touch(s)  # a unit's subjects do not depend on the units mapped before it
            self.touch(series)
            return s
        detail = venue.editions.get(year)
        self.node(s, [SCHEMA.Event], detail.source if detail else venue.source)
        label = venue.short_name or venue.name
        self.named(s, (detail.name if detail and detail.name else None) or f"{label} {year}")
        self.add(s, SCHEMA.superEvent, series)
        self.add(series, SCHEMA.subEvent, s)
        self.add(s, SCHEMA.startDate, self.year(year))
        if detail:
            self.add(s, KG.editionNumber, detail.ordinal)
            self.add(s, SCHEMA.location, detail.location)
        return s

    def proceedings(self, venue_key: str, year: int) -> URIRef:
        venue = self.r.venues[venue_key]
        event = self.edition(venue_key, year)
        s = self.iri("venue", venue_key, year, "proceedings")
        self.touch(s)
        if self.emitting is not None or (s, RDF.type, SCHEMA.Book) not in self.graph:
            self.node(s, [SCHEMA.Book], venue.source)
            self.named(s, f"Proceedings of {venue.short_name or venue.name} {year}")
            self.add(s, SCHEMA.datePublished, self.year(year))
            self.add(s, SCHEMA.about, event)
            if venue.publisher:
                self.add(s, SCHEMA.publisher, self.org(venue.publisher))
        return s

    # ---------------------------------------------------------------- persons

    def persons(self) -> None:
        for entity in self.r.persons.values():
            self.person_entity(entity)
        for known in self.r.dataset.people:
            self.known_person(known)

    def person_entity(self, entity: PersonEntity) -> None:
        s = self.node(self.person(entity.key), [SCHEMA.Person, FOAF.Person], None)
        self.named(s, entity.name)
        self.add(s, FOAF.name, entity.name)
        for printed in entity.printed:
            if printed != entity.name:
                self.add(s, SCHEMA.alternateName, printed)
        for title in entity.honorifics:
            self.add(s, SCHEMA.honorificPrefix, title)
        for basis in entity.basis:
            self.add(s, KG.identityBasis, self.basis(basis))

    def known_person(self, known: KnownPerson) -> None:
        s = self.person(known.key)
        self.source(s, known.source, forced=True)  # type: ignore[arg-type]
        self.touch(s)  # its source is this unit's, whatever it adds
        for alias in known.aliases:
            self.add(s, SCHEMA.alternateName, alias)
        self.add(s, KG.disambiguation, known.disambiguation)
        if known.affiliation:
            self.add(s, SCHEMA.affiliation, self.org(known.affiliation))
        if known.homepage:
            self.add(s, SCHEMA.url, URIRef(known.homepage))
            self.add(s, FOAF.homepage, URIRef(known.homepage))
        # `note` is the curator's note (evidence for a decision), not a fact any
        # document states about the person: it stays in the resolution report

    def basis(self, name: str) -> URIRef:
        """A kg:IdentityBasis individual, typed and named in the graph it is used in."""
        term = IDENTITY_BASES[name]
        self.add(term, RDF.type, KG.IdentityBasis)
        self.add(term, SCHEMA.name, name)
        return term

    def profile(self, p: Profile) -> None:
        s = self.node(self.person(p.slug), [SCHEMA.Person, FOAF.Person], p.source)
        self.identity(s, p)
        for i, e in enumerate(p.education):
            self.education(s, p.slug, i, e)
        for i, pos in enumerate(p.positions):
            self.position(s, p.slug, i, pos)
        for i, proj in enumerate(p.projects):
            self.project(s, p.slug, i, proj)
        for i, award in enumerate(p.awards):
            self.award(s, p.slug, i, award)
        for i, course in enumerate(p.teaching):
            self.teaching(s, p.slug, i, course)
        for i, service in enumerate(p.service):
            self.service(s, p.slug, i, service)
        for i, talk in enumerate(p.talks):
            self.talk(s, p.slug, i, talk)
        self.profile_page(s, p)

    def identity(self, s: URIRef, p: Profile) -> None:
        self.add(s, SCHEMA.givenName, p.given_name)
        self.add(s, FOAF.givenName, p.given_name)
        self.add(s, SCHEMA.familyName, p.family_name)
        self.add(s, FOAF.familyName, p.family_name)
        self.add(s, SCHEMA.identifier, p.slug)  # the person's id on this site
        if p.photo:
            self.add(s, SCHEMA.image, URIRef(p.photo))
            self.add(s, FOAF.img, URIRef(p.photo))
        for alt in p.alternate_names:
            self.add(s, SCHEMA.alternateName, alt)
        for native in p.native_names:
            self.add(s, SCHEMA.alternateName, Literal(native.name, lang=native.lang))
        self.add(s, SCHEMA.jobTitle, p.headline)
        for email in p.emails:
            self.add(s, SCHEMA.email, email)
            self.add(s, FOAF.mbox, URIRef(f"mailto:{email}"))
        if p.homepage:
            self.add(s, SCHEMA.url, URIRef(p.homepage))
            self.add(s, FOAF.homepage, URIRef(p.homepage))
        if p.orcid:
            self.add(s, SCHEMA.identifier, p.orcid)
            self.add(s, SCHEMA.sameAs, URIRef(f"https://orcid.org/{p.orcid}"))
        for account in p.accounts:
            self.account(s, p.slug, account)
        self.add(s, SCHEMA.address, p.address)
        self.add(s, SCHEMA.description, p.bio)
        for topic in p.interests:
            t = self.topic(topic, None, p.source)
            self.add(s, SCHEMA.knowsAbout, t)
            self.add(s, FOAF.topic_interest, t)
        for group in p.skills:
            for item in group.items:
                self.add(s, SCHEMA.knowsAbout, self.topic(item, group.category, group.source))
        for i, link in enumerate(p.links):
            page = self.node(
                self.iri("person", p.slug, "link", i + 1), [SCHEMA.WebPage], link.source
            )
            self.named(page, link.label)
            self.add(page, SCHEMA.url, URIRef(link.url) if link.url else None)
            self.add(page, SCHEMA.description, link.note)
            self.add(page, SCHEMA.about, s)
            self.add(s, SCHEMA.subjectOf, page)
            if link.url and urlsplit(link.url).hostname in PROFILE_HOSTS:
                self.add(s, SCHEMA.sameAs, URIRef(link.url))  # e.g. their Google Scholar
        self.writes(s, p.slug)
        for statement in p.other:
            self.add(s, KG.statement, statement)

    def writes(self, s: URIRef, slug: str) -> None:
        """How many works the person wrote (schema:agentInteractionStatistic)."""
        count = self.works_by_person.get(slug, 0)
        counter = self.node(self.iri("person", slug, "writes"), [SCHEMA.InteractionCounter], None)
        self.add(counter, SCHEMA.interactionType, SCHEMA.WriteAction)
        self.add(counter, SCHEMA.userInteractionCount, self.literal(count))
        self.add(s, SCHEMA.agentInteractionStatistic, counter)

    def account(self, s: URIRef, slug: str, account) -> None:
        a = self.node(
            self.iri("person", slug, "account", slugify(account.service)),
            [FOAF.OnlineAccount],
            account.source,
        )
        self.add(s, FOAF.account, a)
        self.add(a, FOAF.accountName, account.username)
        prefix = ACCOUNT_SERVICES.get(account.service.lower())
        if prefix:
            home = urlsplit(prefix)
            self.add(a, FOAF.accountServiceHomepage, URIRef(f"{home.scheme}://{home.netloc}/"))
        url = account.url or (prefix + encode_path(account.username) if prefix else None)
        if url:
            self.add(s, SCHEMA.sameAs, URIRef(url))
            self.add(a, SCHEMA.url, URIRef(url))

    def topic(self, label: str, category: str | None, source: Source | None) -> URIRef:
        slug, preferred = self.topics[topic_key(label)]
        t = self.iri("topic", slug)
        self.node(t, [SCHEMA.DefinedTerm], source)
        self.named(t, preferred)
        if category:
            term_set = self.iri("topic-set", slugify(category))
            self.node(term_set, [SCHEMA.DefinedTermSet], source)
            self.named(term_set, category)
            self.add(t, SCHEMA.inDefinedTermSet, term_set)
        return t

    def people_links(self, role: URIRef, person: URIRef, refs, prop: URIRef, person_prop: URIRef):
        for ref in refs:
            other = self.person(self.r.person(ref))
            self.add(role, prop, other)
            self.add(person, person_prop, other)
            self.add(person, SCHEMA.knows, other)
            self.add(person, FOAF.knows, other)

    def period(
        self,
        s: URIRef,
        start: PartialDate | None,
        end: PartialDate | Present | None,
        ongoing: bool = False,
    ):
        """Dates; `kg:current` when the end is `present` or the document says it is ongoing
        (a programme that ends at a planned date, like a Ph.D. expected in 2027)."""
        self.add_date(s, SCHEMA.startDate, start)
        self.add_date(s, SCHEMA.endDate, end)
        if end == PRESENT or ongoing:
            self.add(s, KG.current, True)

    def education(self, s: URIRef, slug: str, i: int, e: Education) -> None:
        role = self.node(
            self.iri("person", slug, "education", i + 1), [SCHEMA.OrganizationRole], e.source
        )
        institution = self.org(e.institution)
        self.add(s, SCHEMA.alumniOf, role)
        self.add(role, SCHEMA.alumniOf, institution)
        self.add(role, SCHEMA.roleName, e.degree or "Student")
        self.period(role, e.start, e.end, e.status in ONGOING)
        self.add(role, KG.educationStatus, e.status)  # ongoing or incomplete, said as such
        self.add(role, KG.department, e.unit)
        self.add(role, KG.program, e.program)
        self.add(role, KG.location, e.location)
        self.people_links(role, s, e.advisors, KG.advisor, KG.advisedBy)
        self.people_links(role, s, e.co_advisors, KG.coAdvisor, KG.advisedBy)
        if e.degree or e.level or e.field:
            cred = self.node(
                self.iri("person", slug, "education", i + 1, "credential"),
                [SCHEMA.EducationalOccupationalCredential],
                e.source,
            )
            if held(e):  # only a completed degree is a credential the person holds
                self.add(s, SCHEMA.hasCredential, cred)
            self.add(role, KG.credential, cred)
            label = ", ".join(x for x in (e.degree, e.field) if x) or e.level or "Degree"
            self.named(cred, label)
            self.add(cred, SCHEMA.credentialCategory, "degree")
            self.add(cred, SCHEMA.educationalLevel, e.level)
            self.add(cred, KG.degreeName, e.degree)
            self.add(cred, KG.fieldOfStudy, e.field)
            self.add(cred, SCHEMA.recognizedBy, institution)
            self.add(cred, KG.educationStatus, e.status)
            self.add(cred, KG.gpa, e.gpa)
            self.add(cred, KG.classRank, e.rank)
        for note in e.notes:
            self.add(role, KG.note, note)

    def position(self, s: URIRef, slug: str, i: int, pos: Position) -> None:
        role = self.node(
            self.iri("person", slug, "position", i + 1), [SCHEMA.EmployeeRole], pos.source
        )
        self.add(s, SCHEMA.worksFor, role)
        self.add(role, SCHEMA.worksFor, self.org(pos.unit or pos.organization))
        if pos.unit:
            self.add(role, KG.organization, self.org(pos.organization))
        self.add(role, SCHEMA.roleName, pos.role or pos.type or "Member")
        self.add(role, KG.positionType, pos.type)
        self.add(role, KG.location, pos.location)
        self.period(role, pos.start, pos.end)
        self.add(role, SCHEMA.description, pos.description)
        for item in pos.highlights:
            self.add(role, KG.highlight, item)
        self.people_links(role, s, pos.mentors, KG.mentor, KG.mentoredBy)
        self.people_links(role, s, pos.supervisors, KG.supervisor, KG.mentoredBy)

    def project(self, s: URIRef, slug: str, i: int, proj: Project) -> None:
        has_code = any("code" in (link.label or "").lower() for link in proj.links)
        types = [SCHEMA.SoftwareSourceCode if has_code else SCHEMA.CreativeWork]
        w = self.node(self.iri("person", slug, "project", slugify(proj.name)), types, proj.source)
        self.named(w, proj.name)
        self.add(w, SCHEMA.creator, s)
        self.add(w, FOAF.maker, s)
        self.add(s, FOAF.made, w)
        self.add_date(w, SCHEMA.dateCreated, proj.date)
        self.add(w, SCHEMA.description, proj.description)
        self.add(w, KG.category, proj.category)
        for org in proj.deployed_at:
            self.add(w, KG.deployedAt, self.org(org))
        if proj.team:
            self.add(w, SCHEMA.sourceOrganization, self.org(proj.team))
        for title in project_papers(proj):
            paper = self.iri("publication", self.r.publication_titled(title))
            self.add(w, KG.describedIn, paper)
            self.add(w, SCHEMA.subjectOf, paper)
            self.add(paper, SCHEMA.about, w)
        for link in proj.links:
            self.add(w, SCHEMA.url, URIRef(link.url) if link.url else None)
        for note in proj.notes:
            self.add(w, KG.note, note)

    def award(self, s: URIRef, slug: str, i: int, award: Award) -> None:
        receipt = self.node(
            self.iri("person", slug, "award", i + 1), [KG.AwardReceipt], award.source
        )
        self.add(s, SCHEMA.award, self.award_text(award))
        self.add(s, KG.received, receipt)
        self.named(receipt, award.name)
        self.add(receipt, KG.recipient, s)
        if award.awarded_by:
            self.add(receipt, KG.awardedBy, self.org(award.awarded_by))
        self.add_date(receipt, KG.awardDate, award.date)
        self.add(receipt, SCHEMA.description, award.note)

    def award_text(self, award: Award) -> str:
        """The award as one text with its qualification, giver and date: repeated awards
        (a Merit Student Award in 2018 and in 2020) stay two values of `schema:award`."""
        details = [award.note] if award.note else []
        if award.awarded_by:
            giver = self.r.organizations[self.r.org(award.awarded_by)]
            details.append(giver.name)
        if award.date:
            details.append(str(award.date))
        return f"{award.name} ({', '.join(details)})" if details else award.name

    def course_iri(self, slug: str, i: int, course: Teaching, *rest: str) -> URIRef:
        """A course at a named institution is shared; one whose institution the document
        does not name stays the person's own (no institution is invented)."""
        if course.institution:
            return self.iri("course", self.r.org(course.institution), slugify(course.course), *rest)
        return self.iri("person", slug, "teaching", i + 1, "course", *rest)

    def teaching(self, s: URIRef, slug: str, i: int, course: Teaching) -> None:
        c = self.node(self.course_iri(slug, i, course), [SCHEMA.Course], course.source)
        self.named(c, course.course)
        if course.institution:
            self.add(c, SCHEMA.provider, self.org(course.institution))
        for term in course.terms or ["unspecified term"]:
            ci = self.node(
                self.course_iri(slug, i, course, slugify(term)),
                [SCHEMA.CourseInstance],
                course.source,
            )
            self.add(c, SCHEMA.hasCourseInstance, ci)
            self.named(ci, f"{course.course}, {term}")
            self.add(ci, KG.academicTerm, term if course.terms else None)
            role = self.node(
                self.iri("person", slug, "teaching", i + 1, slugify(term)),
                [SCHEMA.Role],
                course.source,
            )
            self.add(ci, SCHEMA.instructor, role)
            self.add(role, SCHEMA.instructor, s)
            self.add(role, SCHEMA.roleName, course.role)
            self.add(role, KG.academicTerm, term if course.terms else None)

    def service(self, s: URIRef, slug: str, i: int, service: Service) -> None:
        prop = SCHEMA.editor if "editor" in service.role.lower() else SCHEMA.contributor
        for ref in service.venues:
            key, year = self.r.venue(ref)
            year = service.year or year
            target = self.edition(key, year) if year else self.iri("venue", key)
            role = self.node(
                self.iri("person", slug, "service", i + 1, key), [SCHEMA.Role], service.source
            )
            self.add(target, prop, role)
            self.add(role, prop, s)
            self.add(role, SCHEMA.roleName, service.role)
            if year:
                self.add(role, SCHEMA.startDate, self.year(year))
            self.add(role, KG.asPrinted, service.as_printed)

    def talk(self, s: URIRef, slug: str, i: int, talk: Talk) -> None:
        for j, occasion in enumerate(talk.events):
            e = self.node(
                self.iri("person", slug, "talk", i + 1, j + 1), [SCHEMA.Event], occasion.source
            )
            self.named(e, talk.title)
            self.add_date(e, SCHEMA.startDate, occasion.date)
            if occasion.host:
                self.add(e, SCHEMA.organizer, self.org(occasion.host))
            self.add(e, KG.occasion, occasion.event)
            if occasion.venue:
                key, year = self.r.venue(occasion.venue)
                year = year or (occasion.date.year if occasion.date else None)
                self.add(e, SCHEMA.superEvent, self.edition(key, year) if year else None)
            role = self.node(e + "/speaker", [SCHEMA.PerformanceRole], occasion.source)
            self.add(e, SCHEMA.performer, role)
            self.add(role, SCHEMA.performer, s)
            self.add(role, SCHEMA.roleName, "Invited speaker")

    def profile_page(self, s: URIRef, p: Profile) -> None:
        page = self.node(
            self.iri("profile", p.slug),
            [SCHEMA.ProfilePage, FOAF.PersonalProfileDocument],
            p.source,
        )
        self.named(page, f"{p.name}: researcher profile")
        self.add(page, SCHEMA.mainEntity, s)
        self.add(page, FOAF.primaryTopic, s)
        self.add(s, SCHEMA.mainEntityOfPage, page)
        modified = self.modified.get(p.slug)
        if modified:
            self.add_date(page, SCHEMA.dateModified, modified)
        created = self.created.get(p.slug)
        if created:
            self.add_date(page, SCHEMA.dateCreated, created)

    # ---------------------------------------------------------------- publications

    def publications(self) -> None:
        for pub in self.r.publications.values():
            self.publication(pub)

    def publication(self, pub: PublicationEntity) -> None:
        work_type = pub.type or self._infer_type(pub)
        w = self.node(
            self.iri("publication", pub.key),
            [WORK_TYPES.get(work_type or "", SCHEMA.ScholarlyArticle)],
            pub.listings[0][1].source,
        )
        self.named(w, pub.title)
        self.add(w, KG.publicationType, work_type)
        self.add(w, SCHEMA.creativeWorkStatus, pub.status)
        for slug, listing in pub.listings:
            self.source(w, listing.source)  # type: ignore[arg-type]
            self.add(w, KG.listedIn, self.iri("profile", slug))
        self.place(w, pub)
        if pub.arxiv:
            self.add(w, SCHEMA.identifier, f"arXiv:{pub.arxiv}")
            self.add(w, SCHEMA.sameAs, URIRef(arxiv_address(pub.arxiv)))
        if pub.doi:
            self.add(w, SCHEMA.identifier, f"doi:{pub.doi}")
            self.add(w, SCHEMA.sameAs, URIRef(doi_address(pub.doi)))
        self.media(w, pub)
        for slug, listing in pub.listings:
            for link in listing.links:
                self.add(w, KG.linkLabel, link.label)
                self.add(w, SCHEMA.url, URIRef(link.url) if link.url else None)
            if listing.selected:
                self.add(self.person(slug), KG.selectedPublication, w)
        for slot in pub.authors:
            self.authorship(w, pub, slot)
        for slug, listing in pub.listings:
            self.listing(w, slug, listing)

    def listing(self, w: URIRef, slug: str, listing: Publication) -> None:
        """One document's listing of the work, with the claims only it makes: the venue
        as it printed it, its notes (CCF-A), its marker legend and the authors it marks
        as equal contributors (docs/mapping.md#listings). Listings of one work can
        disagree; each claim keeps the document that makes it."""
        node = self.node(URIRef(f"{w}/listing/{slug}"), [KG.Listing], listing.source)
        self.add(w, KG.listing, node)
        self.add(node, KG.listingOf, w)
        self.add(node, KG.listedIn, self.iri("profile", slug))
        self.add(node, KG.venueAsPrinted, listing.venue_as_printed)
        for note in listing.notes:
            self.add(node, KG.note, note)
        self.add(node, KG.equalContributionNote, listing.equal_contribution_note)
        for rank, ref in enumerate(listing.authors, start=1):
            if ref.equal_contribution:
                self.add(node, KG.claimsEqualContribution, URIRef(f"{w}/author/{rank}"))

    def media(self, w: URIRef, pub: PublicationEntity) -> None:
        """Abstract, full text, code, slides and video (docs/mapping.md); pages, volume,
        issue and publisher as printed."""
        self.add(w, SCHEMA.abstract, pub.abstract)
        self.add(w, SCHEMA.pagination, pub.pages)
        self.add(w, SCHEMA.volumeNumber, pub.volume)
        self.add(w, SCHEMA.issueNumber, pub.issue)
        if pub.publisher:
            publisher = self.node(
                URIRef(f"{w}/publisher"), [SCHEMA.Organization], pub.listings[0][1].source
            )
            self.named(publisher, pub.publisher)
            self.add(w, SCHEMA.publisher, publisher)
        parts = (
            ("pdf", pub.pdf, SCHEMA.encoding, SCHEMA.MediaObject, "PDF"),
            ("code", pub.code, SCHEMA.about, SCHEMA.SoftwareSourceCode, "Code"),
            ("slides", pub.slides, SCHEMA.associatedMedia, SCHEMA.MediaObject, "Slides"),
            ("video", pub.video, SCHEMA.video, SCHEMA.VideoObject, "Video"),
        )
        source = pub.listings[0][1].source
        for name, url, prop, kind, label in parts:
            if url:
                node = self.node(URIRef(scheme.under(w, name)), [kind], source)
                self.named(node, label)
                self.add(node, SCHEMA.url, URIRef(url))
                if name == "pdf":
                    self.add(node, SCHEMA.contentUrl, URIRef(url))
                    self.add(node, SCHEMA.encodingFormat, "application/pdf")
                if name == "code":  # as for projects: the code is what the paper is about
                    self.add(node, SCHEMA.codeRepository, URIRef(url))
                    self.add(node, SCHEMA.subjectOf, w)
                    for slot in pub.authors:  # an artifact is credited to the paper's authors
                        if slot.person:
                            self.add(node, SCHEMA.creator, self.person(slot.person))
                self.add(w, prop, node)

    def _infer_type(self, pub: PublicationEntity) -> str | None:
        """The kind of work its status or venue says; None (a generic scholarly work,
        no `kg:publicationType`) when neither does, e.g. a paper "[In Submission]" to a
        venue the document does not name."""
        kind = self.r.venues[pub.venue].kind if pub.venue else None
        return inferred_publication_type(pub.status, kind)

    def place(self, w: URIRef, pub: PublicationEntity) -> None:
        """Where and when the work appeared, by status (docs/mapping.md#publication-status).

        Only `published` and `accepted` works have a venue (`kg:venue`, proceedings,
        `schema:workFeatured`); a preprint server or report series is where a work is
        posted (`schema:isPartOf`), not a venue; a conference or journal named for any
        other status is only a target (`kg:submittedTo`, `kg:targetYear`).
        """
        venue = self.r.venues[pub.venue] if pub.venue else None
        year = self.year(pub.year) if pub.year else None
        dated = pub.status in STATUSES_WITH_DATE
        self.add(w, SCHEMA.datePublished if dated else KG.targetYear, year)
        if venue is None:
            return
        series = self.iri("venue", venue.key)
        if venue.kind in POSTING_VENUES:
            self.add(w, SCHEMA.isPartOf, series)
        elif pub.status not in STATUSES_WITH_VENUE:
            event = self.edition(venue.key, pub.year) if pub.year else series
            self.add(w, KG.submittedTo, event)
        else:
            self.venue_of(w, venue, pub.year)

    def venue_of(self, w: URIRef, venue: Venue, year: int | None) -> None:
        series = self.iri("venue", venue.key)
        self.add(w, KG.venue, series)
        if venue.kind not in ("conference", "workshop") or not year:
            self.add(w, SCHEMA.isPartOf, series)
            return
        self.add(self.edition(venue.key, year), SCHEMA.workFeatured, w)
        if venue.proceedings:
            self.add(w, SCHEMA.isPartOf, self.proceedings(venue.key, year))

    def authorship(self, w: URIRef, pub: PublicationEntity, slot) -> None:
        printed_ref = pub.listings[0][1].authors[slot.rank - 1]
        a = self.node(w + f"/author/{slot.rank}", [KG.Authorship], printed_ref.source)
        agent = self.person(slot.person) if slot.person else self.group(slot)
        self.add(w, KG.authorship, a)
        self.add(a, KG.author, agent)
        self.add(a, KG.rank, slot.rank)
        for printed in slot.printed:
            self.add(a, KG.printedName, printed)
        # a mark is a claim; no mark is unknown, not false: nothing is written
        self.add(a, KG.equalContribution, True if slot.equal_contribution else None)
        self.add(a, KG.corresponding, slot.corresponding)
        self.add(a, KG.annotation, slot.annotation)
        if len(pub.listings) > 1:  # which listing printed the marks
            for slug in slot.marked_by:
                self.add(a, KG.markedIn, self.iri("profile", slug))
        self.add(w, SCHEMA.author, agent)
        self.add(w, FOAF.maker, agent)
        self.add(agent, FOAF.made, w)
        for member in slot.members:
            self.group_member(w, a, agent, member)

    def group_member(self, w: URIRef, a: URIRef, group: URIRef, slug: str) -> None:
        """The owner of a profile that lists a group-authored work is a member of the group
        and a contributor to the work, so the work reaches them."""
        person = self.person(slug)
        self.add(a, KG.memberAuthor, person)
        self.add(group, SCHEMA.member, person)
        self.add(person, SCHEMA.memberOf, group)
        self.add(w, SCHEMA.contributor, person)
        self.add(w, FOAF.maker, person)
        self.add(person, FOAF.made, w)

    def group(self, slot) -> URIRef:
        name = slot.printed[0]
        try:
            return self.org(name)
        except KeyError:
            g = self.node(
                self.iri("org", slot.group), [SCHEMA.Organization, FOAF.Organization], None
            )
            self.named(g, name)
            return g


def held(e: Education) -> bool:
    """Whether the degree was obtained: written `completed`, or with no status and an
    end date that is not `present`. In progress, expected or incomplete: not held."""
    if e.status is not None:
        return e.status == "completed"
    return isinstance(e.end, PartialDate)


def topic_key(label: str) -> str:
    """Case and spacing make no other topic ("Distributed Systems" = "distributed systems")."""
    return " ".join(label.casefold().split())


def _topic_labels(resolution: Resolution) -> list[str]:
    """Every topic label in the profiles, in order (interests, then skills)."""
    labels = []
    for p in resolution.dataset.profiles:
        labels += p.interests
        labels += [item for group in p.skills for item in group.items]
    return labels


def _opt(value: URIRef | None) -> list[URIRef]:
    return [value] if value is not None else []


Units = dict[str, tuple[str, ...]]  # mapping unit -> the subjects it emits (their IRIs)
# what a unit emits, as if mapped alone: each triple it adds and each source it sets
# (subject, source, forced: a people registry entry's overrides), in order, repeats kept
# a unit's triples, flat (s, p, o, s, p, o, ...: a tuple per triple kept for every unit of
# a full map left ~300 MiB of pymalloc arenas half used at 10k), and its source calls
Emission = tuple[tuple[Node, ...], tuple[tuple[URIRef, Source, bool], ...]]
Emissions = dict[str, Emission]


def map_graph(
    resolution: Resolution,
    base_iri: str,
    modified: dict[str, PartialDate] | None = None,
    created: dict[str, PartialDate] | None = None,
    units: Units | None = None,
    m: _Mapper | None = None,
    emissions: Emissions | None = None,
) -> Mapped:
    """Map the resolved dataset to one RDF graph; `modified` and `created` date the
    profile pages. With `units`, fill it with what each mapping unit emits (`unit`);
    `m`: the `mapper` to map with (made of the same arguments); with `emissions` (and
    `units`), also what each unit emits as if mapped alone (the same graph)."""
    m = m or _Mapper(resolution, base_iri, modified or {}, created or {})
    if units is None:
        m.organizations()
        m.venues()
        m.persons()
        for profile in resolution.dataset.profiles:
            m.profile(profile)
        m.publications()
    else:
        _map_units(m, _every_unit(m), units, emissions)
    return Mapped(m.graph, m.sources)


def unit(kind: str, key: str) -> str:
    """A mapping unit's name: `org`, `venue`, `person` (a resolved person), `known` (a
    people registry entry), `profile` or `publication`, and its key."""
    return f"{kind}\x1f{key}"


def mapper(
    resolution: Resolution,
    base_iri: str,
    modified: dict[str, PartialDate],
    created: dict[str, PartialDate],
) -> _Mapper:
    """A mapper that has mapped nothing yet (for `map_units`, its topics and counts)."""
    return _Mapper(resolution, base_iri, modified, created)


def map_units(m: _Mapper, names: Iterable[str], emissions: Emissions | None = None) -> Units:
    """The subjects each named unit emits, mapped alone (the same as in a full map: a
    unit's subjects do not depend on the units mapped before it); a unit the
    resolution does not have is left out; with `emissions`, also what each emits."""
    r = m.r
    tables: dict[str, dict] = {
        "org": r.organizations,
        "venue": r.venues,
        "person": r.persons,
        "known": {k.key: k for k in r.dataset.people},
        "profile": {p.slug: p for p in r.dataset.profiles},
        "publication": r.publications,
    }
    methods, found = _unit_methods(m), {}
    for name in sorted(names):
        kind, _, key = name.partition("\x1f")
        value = tables.get(kind, {}).get(key)
        if value is not None:
            found[name] = partial(methods[kind], value)
    units: Units = {}
    _map_units(m, iter(found.items()), units, emissions)
    return units


def _unit_methods(m: _Mapper) -> dict[str, Callable[[Any], None]]:
    return {
        "org": m.organization,
        "venue": m.venue,
        "person": m.person_entity,
        "known": m.known_person,
        "profile": m.profile,
        "publication": m.publication,
    }


def _every_unit(m: _Mapper) -> Iterator[tuple[str, Callable[[], None]]]:
    """Every unit, in the full map's order."""
    r, methods = m.r, _unit_methods(m)
    kinds: tuple[tuple[str, Iterable[tuple[str, Any]]], ...] = (
        ("org", r.organizations.items()),
        ("venue", r.venues.items()),
        ("person", r.persons.items()),
        ("known", ((k.key, k) for k in r.dataset.people)),
        ("profile", ((p.slug, p) for p in r.dataset.profiles)),
        ("publication", r.publications.items()),
    )
    for kind, values in kinds:
        for key, value in values:
            yield unit(kind, key), partial(methods[kind], value)


def _map_units(
    m: _Mapper,
    calls: Iterator[tuple[str, Callable[[], None]]],
    units: Units,
    emissions: Emissions | None = None,
) -> None:
    """Run each unit, recording the subjects it emits (the graph's own terms: nothing
    is copied), and with `emissions` its triples and the sources it sets."""
    for name, call in calls:
        seen: set[URIRef] = set()
        m.seen = seen
        if emissions is not None:
            m.emitting, m.setting = [], []
        call()
        units[name] = tuple(seen)
        if emissions is not None:
            emissions[name] = (tuple(m.emitting or ()), tuple(m.setting or ()))
    m.seen = m.emitting = m.setting = None
