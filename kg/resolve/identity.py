"""Stage 2: a `Dataset` -> a `Resolution`: which mentions are the same thing.

- persons: a profile's owner, `data/people.yaml` entries and every printed name
  (authors, advisors, mentors) become person entities; names match ignoring case,
  spacing, punctuation, honorifics and annotations. A name shared by several
  registered people must be disambiguated with `person:`; never by surname alone.
- publications: listings with the same title (ignoring case and punctuation) are one
  publication holding the union of their facts.
- organizations and venues: registry keys, names and aliases; `OSDI '24` names the
  2024 edition of OSDI.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from kg import scheme
from kg.errors import InputError, Problem
from kg.ingest.names import clean_person_name, honorific_of, name_key, slugify, text_key
from kg.model import (
    PRINTED_DETAILS,
    STATUS_SYNONYMS,
    Dataset,
    KnownPerson,
    Organization,
    PersonRef,
    PrintedDetails,
    Profile,
    Project,
    Publication,
    Source,
    Venue,
)

NEAR_MISS_RATIO = 0.85
FAMILY_ALL_PAIRS = 64  # a family name this common or less: every pair of it is compared
STATUS_ORDER = ("submitted", "preprint", "report", "accepted", "published")
_YEAR_SUFFIX = re.compile(r"^(?P<base>.*?[^\s'’‘`-])[\s'’‘`]+(?P<year>\d{4}|\d{2})$")


@dataclass(frozen=True, slots=True)
class PersonEntity:
    key: str
    name: str
    profile: str | None = None
    known: str | None = None
    printed: tuple[str, ...] = ()
    mentioned_in: tuple[str, ...] = ()
    honorifics: tuple[str, ...] = ()  # titles printed with the name ("Prof.")
    basis: tuple[str, ...] = ()  # how its mentions were merged (see `identity_basis`)


@dataclass(frozen=True, slots=True)
class AuthorSlot:
    rank: int
    person: str | None
    group: str | None
    printed: tuple[str, ...]
    equal_contribution: bool = False
    corresponding: bool | None = None  # None: no listing says (unknown, not false)
    annotation: str | None = None
    members: tuple[str, ...] = ()  # group author: the profiles that list the work as theirs
    marked_by: tuple[str, ...] = ()  # the profiles whose listing carries the marks


@dataclass(frozen=True, slots=True)
class PublicationEntity(PrintedDetails):
    key: str
    title: str
    authors: tuple[AuthorSlot, ...]
    listings: tuple[tuple[str, Publication], ...]
    venue: str | None = None
    year: int | None = None
    status: str = "published"
    type: str | None = None
    notes: tuple[str, ...] = ()
    venue_as_printed: tuple[str, ...] = ()
    equal_contribution_note: str | None = None
    arxiv: str | None = None
    doi: str | None = None


@dataclass(frozen=True, slots=True)
class Note:
    """A line of the merge report."""

    kind: str  # "merged", "unconfirmed" (name only) or "near-miss"
    subject: str
    detail: str


@dataclass
class Resolution:
    dataset: Dataset
    persons: dict[str, PersonEntity]
    person_of: dict[Source, str]
    organizations: dict[str, Organization]
    venues: dict[str, Venue]
    publications: dict[str, PublicationEntity]
    publication_of: dict[Source, str]
    notes: list[Note] = field(default_factory=list)
    _org_index: dict[str, str] = field(default_factory=dict, repr=False)
    _venue_index: dict[str, str] = field(default_factory=dict, repr=False)
    _titles: dict[str, str] = field(default_factory=dict, repr=False)
    # the data's lint warnings, when the build kept them (kg.ingest.lint.kept); else None
    warnings: tuple[Problem, ...] | None = field(default=None, repr=False, compare=False)

    def publication_titled(self, title: str) -> str:
        """The key of the publication with this title (project references were checked)."""
        return self._titles[text_key(title)]

    def org(self, ref: str) -> str:
        """The key of the organization a reference names (references were checked)."""
        return self._org_index[text_key(ref)]

    def venue(self, ref: str) -> tuple[str, int | None]:
        """The venue key and, for refs like `OSDI '24`, the edition year."""
        found = _lookup_venue(self._venue_index, ref)
        assert found is not None, ref
        return found

    def find_venue(self, ref: str) -> tuple[str, int | None] | None:
        """Like `venue`, for text that may name no registered venue (importers)."""
        return _lookup_venue(self._venue_index, ref)

    def find_org(self, ref: str) -> str | None:
        """The key of the organization a text names, or None (importers)."""
        return self._org_index.get(text_key(ref))

    def person(self, ref: PersonRef) -> str:
        assert ref.source is not None
        return self.person_of[ref.source]

    def owner(self, profile: Profile) -> str:
        return self.person_of[_owner_source(profile)]


# --------------------------------------------------------------------------- registries


def _index(entries: Any, names: Any, what: str, problems: list[Problem]) -> dict[str, str]:
    index: dict[str, str] = {}
    for entry in entries:
        for name in names(entry):
            key = text_key(name)
            other = index.get(key)
            if other is not None and other != entry.key:
                problems.append(
                    Problem(
                        entry.source, entry.key, f"{what} name {name!r} is also used by {other!r}"
                    )
                )
            index[key] = entry.key
    return index


def _org_names(org: Organization) -> list[str]:
    return [org.key, org.name, *org.aliases]


def _venue_names(venue: Venue) -> list[str]:
    return [
        venue.key,
        venue.name,
        *([venue.short_name] if venue.short_name else []),
        *venue.aliases,
    ]


def _lookup_venue(index: dict[str, str], ref: str) -> tuple[str, int | None] | None:
    """The venue a reference names; `OSDI '24` / `NSDI 2025` also name the edition year.
    A name as proceedings print it, with an ordinal and the acronym and year in
    parentheses ("Thirty-Seventh Conference on Neural Information Processing Systems
    (NeurIPS 2023)"), names the venue of its name or its acronym."""
    found = _lookup_exact(index, ref)
    if found is not None:
        return found
    text = " ".join(ref.split())
    paren = _PAREN.search(text)
    inner = _lookup_exact(index, paren.group(1)) if paren else None
    name = _ORDINAL.sub("", text[: paren.start()] if paren else text)
    if "workshop" in text_key(name).split():
        inner = None  # a workshop's parentheses may name the conference it is held with
    if name != text:
        found = _lookup_exact(index, name)
        if found is not None:
            year = inner[1] if inner and inner[0] == found[0] else found[1]
            return found[0], year
    return inner


def _lookup_exact(index: dict[str, str], ref: str) -> tuple[str, int | None] | None:
    key = index.get(text_key(ref))
    if key is not None:
        return key, None
    match = _YEAR_SUFFIX.match(ref.strip())
    if not match or not match["base"].strip():
        return None
    key = index.get(text_key(match["base"]))
    if key is None:
        return None
    digits = match["year"]
    spelled = ref.strip()[len(match["base"]) :].strip()
    if len(digits) == 2 and spelled == digits and len(match["base"].split()) >= 3:
        return key, None  # a volume after a full name ("Advances in … Systems 36")
    return key, int(digits) if len(digits) == 4 else 2000 + int(digits)


class _Refs:
    """Checks registry references and reports the unknown ones with a suggestion and, the
    first time each is met, the YAML that adds it to its registry."""

    def __init__(self, orgs: dict[str, str], venues: dict[str, str], problems: list[Problem]):
        self.orgs, self.venues, self.problems = orgs, venues, problems
        self.seen: set[tuple[str, str]] = set()

    def org(self, ref: str | None, source: Source | None, path: str) -> None:
        if ref is not None and text_key(ref) not in self.orgs:
            self._unknown(ref, self.orgs, source, path, "organizations")

    def venue(self, ref: str | None, source: Source | None, path: str) -> None:
        if ref is not None and _lookup_venue(self.venues, ref) is None:
            self._unknown(_without_year(ref), self.venues, source, path, "venues")

    def _unknown(self, ref: str, index: dict[str, str], source, path: str, registry: str):
        what = "organization" if registry == "organizations" else "venue"
        close = suggest_entry(ref, index)
        hint = f" (did you mean {close!r}?)" if close else ""
        file = f"data/{registry}.yaml"
        message = f"unknown {what} {ref!r}; expected a key, name or alias from {file}{hint}"
        first = (registry, text_key(ref)) not in self.seen
        self.seen.add((registry, text_key(ref)))
        fix = f"to add it, append to {file}:\n{registry_snippet(registry, ref)}" if first else ""
        self.problems.append(Problem(source or Source("?", 0, 0), path, message, fix))


# words that many registry names share: a suggestion must agree on the other words
_GENERIC_WORDS = (
    "a an and at de der des di for in of on the "
    "university univ uni college school institute inst institution academy "
    "technology tech science sciences research center centre laboratory lab labs "
    "department dept national international intl state "
    "conference conf symposium symp workshop journal transactions proceedings annual "
    "acm ieee usenix sigplan computer computing systems "
    "company corporation corp inc ltd group"
)
_GENERIC = frozenset(_GENERIC_WORDS.split())


def _distinctive(key: str) -> str:
    return " ".join(w for w in key.split() if w not in _GENERIC)


def suggest_entry(ref: str, index: dict[str, str]) -> str | None:
    """The registry key a mistyped reference probably meant, or None.

    The words registry names share ("University", "of", "Conference"...) must not carry a
    match: the other words must be close, and so must the whole names. "Tsinghua
    University" never suggests Peking University, nor "Hong Kong University" HKUST.
    """
    full = text_key(ref)
    wanted = _distinctive(full)
    if not wanted:
        return None
    best, best_score = None, 0.0
    cutoff = 0.85 if len(wanted) <= 5 else 0.75  # "HKU" is not a typo of "HKUST"
    matcher = difflib.SequenceMatcher(None, b=wanted)
    for name, key in index.items():
        own = _distinctive(name)
        matcher.set_seq1(own)
        score = matcher.ratio() if own else 0.0
        if score < cutoff or score <= best_score:
            continue
        # an abbreviation (`ATC`) matches on its own; a full name must match as a whole too
        if own == name or difflib.SequenceMatcher(None, full, name).ratio() >= 0.6:
            best, best_score = key, score
    return best


def _without_year(ref: str) -> str:
    match = _YEAR_SUFFIX.match(ref.strip())
    return match["base"].strip() if match and match["base"].strip() else ref


_ORG_KIND_WORDS = {"university": "university", "college": "university", "inc": "company"}


def registry_snippet(registry: str, ref: str) -> str:
    """YAML for a new registry entry named `ref`: kg's bundled entry when it knows it."""
    from kg.ingest.catalog import bundled_entry

    bundled = bundled_entry(registry, ref)
    if bundled:
        return bundled
    key = slugify(ref)
    if registry == "organizations":
        words = text_key(ref).split()
        kind = next((_ORG_KIND_WORDS[w] for w in words if w in _ORG_KIND_WORDS), "other")
        return (
            f"{key}:\n  name: {_yaml_text(ref)}\n  kind: {kind}"
            "  # university, company, institute, lab, team, department, group or other"
        )
    return _venue_snippet(ref)


_PAREN = re.compile(r"\s*\(([^()]*)\)\s*$")
_YEARS = re.compile(r"\s*(?:'\d{2}|\b(?:19|20)\d{2})\b\s*")
_UNITS = "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth"
_ORDINAL = re.compile(  # "18th", "Eighteenth", "Thirty-Seventh" before a venue's name
    rf"^(?:the\s+)?(?:\d+(?:st|nd|rd|th)|(?:twenty|thirty|forty|fifty)-?(?:{_UNITS})|{_UNITS}"
    r"|tenth|eleventh|twelfth|(?:thir|four|fif|six|seven|eigh|nine)teenth"
    r"|twentieth|thirtieth|fortieth|fiftieth)\s+",
    re.I,
)


def _venue_snippet(ref: str) -> str:
    """A venue entry for `ref` as printed: the acronym in parentheses as the short name,
    no year or ordinal in the name, the kind guessed from its words, and the printed
    text as an alias so the reference resolves once the entry is pasted."""
    text = " ".join(ref.split())
    short = None
    found = _PAREN.search(text)
    if found:
        short = _YEARS.sub(" ", found.group(1)).strip() or None
        text = text[: found.start()]
    name = _ORDINAL.sub("", _YEARS.sub(" ", text).strip()).strip(" ,") or text
    if short is None and len(name) <= 16 and " " not in name:
        short = name
    words = text_key(name).split()
    kind = "conference"
    if "workshop" in words:
        kind = "workshop"
    elif {"journal", "transactions", "letters"} & set(words):
        kind = "journal"
    key = slugify(short or name)
    note = "  # the full name" if name == short else ""
    lines = [f"{key}:", f"  name: {_yaml_text(name)}{note}"]
    if short:
        lines.append(f"  short_name: {_yaml_text(short)}")
    lines.append(f"  kind: {kind}  # conference, journal, workshop, preprint-server, ...")
    if ref.strip() not in (name, short):
        lines.append(f"  aliases: [{_yaml_text(ref.strip())}]")
    return "\n".join(lines)


def _yaml_text(text: str) -> str:
    import json

    plain = text[:1].isalnum() and not any(c in text for c in ":#{}[],&*!|>'\"%@`")
    return text if plain else json.dumps(text, ensure_ascii=False)


def reference_problems(data: Dataset) -> list[Problem]:
    """Unknown organizations and venues (and clashing registry names) in what was loaded:
    reported together with the structural problems of the same run."""
    problems: list[Problem] = []
    org_index = _index(data.organizations, _org_names, "organization", problems)
    venue_index = _index(data.venues, _venue_names, "venue", problems)
    _check_references(data, _Refs(org_index, venue_index, problems))
    people = _PersonIndex(data, problems)
    for profile in data.profiles:
        for ref, path in person_mentions(profile):
            people.resolve(ref, path, profile.slug)  # in order, as resolve() does
    return problems


def _check_references(data: Dataset, refs: _Refs) -> None:
    for org in data.organizations:
        refs.org(org.parent, org.source, f"{org.key}.parent")
    for venue in data.venues:
        refs.org(venue.publisher, venue.source, f"{venue.key}.publisher")
    for person in data.people:
        refs.org(person.affiliation, person.source, f"{person.key}.affiliation")
    for p in data.profiles:
        for i, e in enumerate(p.education):
            refs.org(e.institution, e.source, f"education[{i}].institution")
        for i, pos in enumerate(p.positions):
            refs.org(pos.organization, pos.source, f"positions[{i}].organization")
            refs.org(pos.unit, pos.source, f"positions[{i}].unit")
        for i, pub in enumerate(p.publications):
            refs.venue(pub.venue, pub.source, f"publications[{i}].venue")
        for i, proj in enumerate(p.projects):
            for org_key in proj.deployed_at:
                refs.org(org_key, proj.source, f"projects[{i}].deployed_at")
            refs.org(proj.team, proj.source, f"projects[{i}].team")
        for i, award in enumerate(p.awards):
            refs.org(award.awarded_by, award.source, f"awards[{i}].awarded_by")
        for i, course in enumerate(p.teaching):
            refs.org(course.institution, course.source, f"teaching[{i}].institution")
        for i, service in enumerate(p.service):
            for venue_key in service.venues:
                refs.venue(venue_key, service.source, f"service[{i}].venues")
        for i, talk in enumerate(p.talks):
            for j, event in enumerate(talk.events):
                refs.org(event.host, event.source, f"talks[{i}].events[{j}].host")
                refs.venue(event.venue, event.source, f"talks[{i}].events[{j}].venue")


# --------------------------------------------------------------------------- persons


def _owner_source(profile: Profile) -> Source:
    assert profile.source is not None
    return profile.source


def person_mentions(profile: Profile) -> list[tuple[PersonRef, str]]:
    """Every person a profile names, with the key path it is named at."""
    return [(r, f"{part}[{i}].{field}") for refs, part, i, field in _named(profile) for r in refs]


def mention_refs(profile: Profile) -> list[PersonRef]:
    """The refs of `person_mentions`, in its order, without their key paths."""
    return [r for refs, _, _, _ in _named(profile) for r in refs]


def _named(profile: Profile) -> Iterator[tuple[list[PersonRef], str, int, str]]:
    """The lists of person refs of a profile, in order, with where each list is."""
    for i, e in enumerate(profile.education):
        yield e.advisors, "education", i, "advisors"
        yield e.co_advisors, "education", i, "co_advisors"
    for i, pos in enumerate(profile.positions):
        yield pos.mentors, "positions", i, "mentors"
        yield pos.supervisors, "positions", i, "supervisors"
    for i, pub in enumerate(profile.publications):
        yield [r for r in pub.authors if not r.group], "publications", i, "authors"


class _PersonIndex:
    """Name -> candidate person keys, from profiles and `data/people.yaml`."""

    def __init__(self, data: Dataset, problems: list[Problem]) -> None:
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self.entities: dict[str, PersonEntity] = {}
        self.problems = problems
        self.scoped: dict[tuple[str, str], str] = {}  # (document, name key) -> same_as decision
        self.slugs = {p.slug for p in data.profiles}
        for profile in data.profiles:
            names = [
                profile.name,
                *profile.alternate_names,
                *(n.name for n in profile.native_names),
            ]
            self._register(PersonEntity(profile.slug, profile.name, profile=profile.slug), names)
        for known in data.people:
            self._register_known(known)

    def _register(self, entity: PersonEntity, names: list[str]) -> None:
        self.entities[entity.key] = entity
        for key in dict.fromkeys(name_key(n) for n in names):
            self.by_name[key].append(entity.key)

    def _register_known(self, known: KnownPerson) -> None:
        if known.key in self.entities:
            message = f"key {known.key!r} is also a profile slug; people keys must differ"
            self.problems.append(Problem(known.source or Source("?", 0, 0), known.key, message))
            return
        names = [known.name, *known.aliases]
        self._register(PersonEntity(known.key, known.name, known=known.key), names)
        for doc in known.same_as:
            if doc not in self.slugs:
                message = f"same_as names {doc!r}; expected the slug of a profile"
                self.problems.append(Problem(known.source or Source("?", 0, 0), known.key, message))
            for name in names:
                self.scoped[(doc, name_key(name))] = known.key

    def resolve(self, ref: PersonRef, path: str, doc: str) -> tuple[str | None, bool]:
        """The person a mention in profile `doc` names, and whether a decision says so
        (a `person:` key or a `same_as` entry) rather than the name alone."""
        if ref.person is not None:
            return self._by_key(ref, path), True
        key = name_key(ref.name)
        decided = self.scoped.get((doc, key))
        if decided is not None:
            return decided, True
        return self._by_name(ref, path, key), False

    def _by_key(self, ref: PersonRef, path: str) -> str | None:
        assert ref.person is not None
        if ref.person is not None:
            if ref.person in self.entities:
                return ref.person
            self._unknown_person(ref, path)
        return None

    def _by_name(self, ref: PersonRef, path: str, key: str) -> str | None:
        candidates = self.by_name.get(key, [])
        if len(candidates) > 1:
            self._problem(
                ref,
                path,
                f"{ref.name!r} could be any of {', '.join(candidates)}; "
                "expected `person: KEY` to say which",
            )
            return None
        if candidates:
            return candidates[0]
        return self._mint(ref.name, key)

    def _unknown_person(self, ref: PersonRef, path: str) -> None:
        assert ref.person is not None
        close = suggest_person_key(ref.person, list(self.entities))
        hint = f" (did you mean {close!r}?)" if close else ""
        fix = (
            "to add it, append to data/people.yaml:\n"
            f"{ref.person}:\n  name: {_yaml_text(clean_person_name(ref.name))}"
        )
        if len(self.by_name.get(name_key(ref.name), [])) <= 1:
            fix += "\nor drop `person:`: the name alone names one person"
        message = (
            f"unknown person {ref.person!r}; expected a profile slug "
            f"or a key of data/people.yaml{hint}"
        )
        self.problems.append(Problem(ref.source or Source("?", 0, 0), path, message, fix))

    def _mint(self, printed: str, key: str) -> str:
        name = clean_person_name(printed)
        slug = base = slugify(name)
        n = 2
        while slug in self.entities and name_key(self.entities[slug].name) != key:
            slug, n = f"{base}-{n}", n + 1
        if slug not in self.entities:
            self.entities[slug] = PersonEntity(slug, name)
            self.by_name[key].append(slug)
        return slug

    def _problem(self, ref: PersonRef, path: str, message: str) -> None:
        self.problems.append(Problem(ref.source or Source("?", 0, 0), path, message))


def suggest_person_key(wanted: str, keys: list[str]) -> str | None:
    """A person key that is a likely typo of `wanted`: same family name (the last part of
    the slug), close given name. "xin-jin" never suggests "xianyan-jia"."""
    parts = wanted.rsplit("-", 1)
    if len(parts) < 2:
        close = difflib.get_close_matches(wanted, keys, n=1, cutoff=0.85)
        return close[0] if close else None
    given, family = parts
    same_family = [k for k in keys if k.rsplit("-", 1)[-1] == family]
    by_given = {k.rsplit("-", 1)[0]: k for k in same_family if "-" in k}
    close = difflib.get_close_matches(given, list(by_given), n=1, cutoff=0.75)
    if close:
        return by_given[close[0]]
    close = difflib.get_close_matches(wanted, keys, n=1, cutoff=0.9)
    return close[0] if close else None


def _resolve_persons(data: Dataset, problems: list[Problem]) -> tuple[dict, dict, dict, dict]:
    index = _PersonIndex(data, problems)
    person_of: dict[Source, str] = {}
    mentioned: dict[str, tuple[str | None, ...]] = {}  # slug -> each mention's person
    printed: dict[str, set[str]] = defaultdict(set)
    where: dict[str, set[str]] = defaultdict(set)
    titles: dict[str, set[str]] = defaultdict(set)
    decided: dict[str, set[str]] = defaultdict(set)
    for profile in data.profiles:
        person_of[_owner_source(profile)] = profile.slug
        printed[profile.slug].update([profile.name, *profile.alternate_names])
        where[profile.slug].add(profile.slug)
        keys: list[str | None] = []
        for ref, path in person_mentions(profile):
            key, by_decision = index.resolve(ref, path, profile.slug)
            keys.append(key)
            if key is not None and ref.source is not None:
                person_of[ref.source] = key
                printed[key].add(ref.name)
                where[key].add(profile.slug)
                if by_decision:
                    decided[key].add(profile.slug)
                title = ref.honorific or honorific_of(ref.name)
                if title:
                    titles[key].add(title)
        mentioned[profile.slug] = tuple(keys)
    persons = {
        key: PersonEntity(
            e.key,
            e.name,
            e.profile,
            e.known,
            tuple(sorted(printed[key])),
            tuple(sorted(where[key])),
            tuple(sorted(titles[key])),
        )
        for key, e in sorted(index.entities.items())
    }
    return persons, person_of, decided, mentioned


def _person_notes(
    persons: dict[str, PersonEntity],
    decisions: dict[str, set[str]],
    evidence: dict[str, str] | None = None,
    near: list[Note] | None = None,
) -> list[Note]:
    """The merge report; `evidence` (the `note` of a data/people.yaml entry, by key) is
    the curator's reason for a decision: it lives here, never in the graph. `near`: the
    near misses when they are known (they depend on the persons' names only)."""
    notes = []
    for p in persons.values():
        if len(p.printed) > 1 or len(p.mentioned_in) > 1:
            kind = "unconfirmed" if NAME_ONLY in p.basis else "merged"
            detail = (
                f"printed as {', '.join(map(repr, p.printed))} in "
                f"{', '.join(p.mentioned_in)}: {_basis_text(p)}"
            )
            if evidence and p.key in evidence:
                detail += f"; evidence: {evidence[p.key]}"
            notes.append(Note(kind, scheme.path(scheme.PERSON, p.key), detail))
    return notes + (near_misses(persons, decisions) if near is None else near)


def _basis_text(p: PersonEntity) -> str:
    reasons = {
        SINGLE_DOCUMENT: "one document, same name ignoring case, spacing, honorifics and "
        "annotations",
        SHARED_PUBLICATION: "the same place in the author list of a publication both "
        "documents list",
        DECISION: f"a decision in data/people.yaml ({p.known!r})"
        if p.known
        else "a `person:` key in the document",
        NAME_ONLY: "the same name alone; confirm with `same_as` or split with "
        "`distinct_from` in data/people.yaml",
    }
    return "; ".join(reasons[b] for b in p.basis)


# --------------------------------------------------------------------------- identity basis

SINGLE_DOCUMENT = "single-document"
SHARED_PUBLICATION = "shared-publication"
DECISION = "decision"
NAME_ONLY = "name-only"
_REGISTRY = "@registry"  # the registry entry (or profile) itself, as a document


def identity_basis(
    persons: dict[str, PersonEntity],
    decided: dict[str, set[str]],
    publications: dict[str, PublicationEntity],
    only: set[str] | None = None,
) -> dict[str, PersonEntity]:
    """Each person with the basis of the merge of their mentions across documents.

    The documents naming a person are joined when a decision says so (`person:` keys,
    `same_as`) or when both list the same publication with the person at the same place;
    documents still apart after that were merged on the name alone (`name-only`).
    `only`: the persons whose basis is made again (the others' is kept as it is).
    """
    joins: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for pub in publications.values():
        if len(pub.listings) < 2:
            continue
        docs = list(dict.fromkeys(slug for slug, _ in pub.listings))
        for slot in pub.authors:
            if slot.person and len(docs) > 1 and (only is None or slot.person in only):
                joins[slot.person] += [(docs[0], d, SHARED_PUBLICATION) for d in docs[1:]]
    out = {}
    for key, p in persons.items():
        if only is not None and key not in only:
            out[key] = p
            continue
        links = joins.get(key, []) + [(_REGISTRY, d, DECISION) for d in decided.get(key, ())]
        if p.profile:
            links.append((_REGISTRY, p.profile, ""))
        nodes = set(p.mentioned_in) | ({_REGISTRY} if p.known or decided.get(key) else set())
        out[key] = replace(p, basis=_basis(nodes, links))
    return out


def _basis(nodes: set[str], links: list[tuple[str, str, str]]) -> tuple[str, ...]:
    parent = {n: n for n in nodes}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    used = set()
    for a, b, why in links:
        if a in parent and b in parent and root(a) != root(b):
            parent[root(a)] = root(b)
            used.add(why)
    used.discard("")
    if len({root(n) for n in nodes}) > 1:
        used.add(NAME_ONLY)
    order = (SINGLE_DOCUMENT, DECISION, SHARED_PUBLICATION, NAME_ONLY)
    return tuple(b for b in order if b in used) or (SINGLE_DOCUMENT,)


# --------------------------------------------------------------------------- near misses

# letters of other scripts that look like Latin ones (Cyrillic, Greek), folded for comparison
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁӏвкмнтАЕОРСУХІЈЅВКМНТαοιρνυκτχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdlbkmhtAEOPCYXIJSBKMHTaoipvuktxABEZHIKMNOPTYX",
)


def skeleton(name: str) -> str:
    """A name as it looks: look-alike letters of other scripts folded to Latin, accents
    dropped, case and punctuation ignored ("Yіhao Zhao" with a Cyrillic і = "yihao zhao")."""
    text = unicodedata.normalize("NFKD", name_key(name).translate(_LOOKALIKES))
    return "".join(c for c in text if not unicodedata.combining(c)).casefold()


def near_misses(persons: dict[str, PersonEntity], decisions: dict[str, set[str]]) -> list[Note]:
    """Different entities a reader could take for one person: for a human to confirm or split.

    Every pair that could be confused is compared, found through blocking keys instead of
    comparing all pairs: names that become the same string after at most two deletions
    each (a deletion neighbourhood; look-alike letters of another script and accents
    folded first), a name written with initials against the full names with that family
    name and initial, and all pairs within a family name that at most FAMILY_ALL_PAIRS
    people share (the 42 Zhaos of the seeds).

    An initial-and-family block grows with the corpus (" y wang" holds a hundred names
    at 30,000 people): its pairs are only kept when `_confusable` could say yes (one
    side written with initials, or the letters the names share reach the ratio), tested
    on a bitmask of each name's letters, so the pairs and notes are the same as
    comparing every pair of the block, at a fraction of a microsecond per pair.
    """
    shapes = {p.key: _shape(p.name) for p in persons.values()}  # once per person, not pair
    people = [p for p in persons.values() if shapes[p.key].words]
    blocks: dict[str, list[int]] = defaultdict(list)
    families: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(people):
        words = shapes[p.key].words
        blocks[f"{words[0][0]} {words[-1]}"].append(i)  # initial and family name
        families[words[-1]].append(i)
    small = [m for m in families.values() if 1 < len(m) <= FAMILY_ALL_PAIRS]
    pairs = _deletion_pairs([shapes[p.key].flat for p in people])
    letters = _Letters([shapes[p.key] for p in people])
    for members in [*blocks.values(), *small]:
        if len(members) > 1:
            pairs.update(letters.candidates(members))
    notes = [
        n for a, b in sorted(pairs) for n in _near_miss(people[a], people[b], decisions, shapes)
    ]
    return sorted(notes, key=lambda n: n.subject)


class _Letters:
    """Each name's length, letters (a bitmask: one bit per letter and occurrence, so that
    the letters two names share are the bits their masks share) and whether its given
    names are all initials, for ruling pairs of a block out cheaply."""

    def __init__(self, shapes: list[_Shape]) -> None:
        bits: dict[tuple[str, int], int] = {}
        self.lengths = [len(s.flat) for s in shapes]
        self.masks = [_letter_mask(s.flat, bits) for s in shapes]
        self.initials = [
            len(s.words) > 1 and all(len(w) == 1 for w in s.words[:-1]) for s in shapes
        ]

    def candidates(self, members: list[int]) -> Iterator[tuple[int, int]]:
        """The pairs of `members` that `_confusable` may not rule out: one side written
        with initials, or neither of `_quick_ratios_below`'s bounds below the ratio."""
        lengths, masks, initials = self.lengths, self.masks, self.initials
        for n, a in enumerate(members):
            la, ma, ia = lengths[a], masks[a], initials[a]
            for b in members[n + 1 :]:
                lb = lengths[b]
                length = la + lb
                if not (ia or initials[b]):
                    if 2.0 * (la if la < lb else lb) / length < NEAR_MISS_RATIO:
                        continue
                    if 2.0 * (ma & masks[b]).bit_count() / length < NEAR_MISS_RATIO:
                        continue
                if a != b:
                    yield (a, b) if a < b else (b, a)


def _letter_mask(flat: str, bits: dict[tuple[str, int], int]) -> int:
    """A bit for each letter of `flat` and each time it occurs (`bits` numbers them)."""
    mask = 0
    seen: dict[str, int] = {}
    for letter in flat:
        k = seen[letter] = seen.get(letter, 0) + 1
        bit = bits.setdefault((letter, k), len(bits))
        mask |= 1 << bit
    return mask


def _deletion_pairs(flats: list[str]) -> set[tuple[int, int]]:
    """The pairs of `flats` (by index) that share a string of `_deletions`.

    A shared string has one length: the strings of each length are gathered in turn,
    from the names of that length or one or two letters longer, so that only one length's strings
    are held at a time (all of them at once were most of resolve's memory at 100,000
    people: about 75 strings per name)."""
    by_length: dict[int, list[int]] = defaultdict(list)
    for i, flat in enumerate(flats):
        by_length[len(flat)].append(i)
    pairs: set[tuple[int, int]] = set()
    for size in sorted({max(0, length - d) for length in by_length for d in range(3)}):
        keys = [
            (i, _deleted(flats[i], deleted))
            for deleted in range(3)
            for i in by_length.get(size + deleted, ())
        ]
        counts: Counter[str] = Counter()
        for _, strings in keys:
            counts.update(strings)  # counted in C: most strings belong to one name
        shared = {key for key, count in counts.items() if count > 1}
        holders: dict[str, list[int]] = defaultdict(list)
        for i, strings in keys:
            for key in strings & shared:
                holders[key].append(i)
        pairs.update(
            (a, b) if a < b else (b, a)
            for members in holders.values()
            if len(members) > 1
            for n, a in enumerate(members)
            for b in members[n + 1 :]
            if a != b
        )
    return pairs


def _deleted(flat: str, count: int) -> set[str]:
    """The strings `flat` becomes with exactly `count` (0, 1 or 2) letters deleted."""
    if count == 0:
        return {flat}
    one = {flat[:i] + flat[i + 1 :] for i in range(len(flat))}
    return one if count == 1 else {w[:i] + w[i + 1 :] for w in one for i in range(len(w))}


def _deletions(flat: str) -> set[str]:
    """The string with none, one or two of its letters deleted."""
    one = {flat[:i] + flat[i + 1 :] for i in range(len(flat))}
    return {flat} | one | {w[:i] + w[i + 1 :] for w in one for i in range(len(w))}


def _near_miss(
    pa: PersonEntity, pb: PersonEntity, decisions: dict[str, set[str]], shapes: dict[str, _Shape]
) -> list[Note]:
    if (pa.known and pb.known) or pb.key in decisions.get(pa.key, ()):
        return []  # both registered, or a person decided they differ
    why = _confusable(shapes[pa.key], shapes[pb.key])
    if why is None:
        return []
    first, second = sorted((pa, pb), key=lambda p: p.key)
    detail = f"{first.name!r} and {second.name!r} {why}; kept apart"
    pair = f"{scheme.path(scheme.PERSON, first.key)} ~ {scheme.path(scheme.PERSON, second.key)}"
    return [Note("near-miss", pair, detail)]


class _Shape(NamedTuple):
    """A name's skeleton, its words and its letters without spaces."""

    skeleton: str
    words: list[str]
    flat: str


def _shape(name: str) -> _Shape:
    sk = skeleton(name)
    return _Shape(sk, sk.split(), sk.replace(" ", ""))


def _confusable(a: _Shape, b: _Shape) -> str | None:
    """Why two names, by their shapes, could be taken for one, or None."""
    if a.skeleton == b.skeleton:
        return "look alike (letters of another script, or accents)"
    if _initials_match(a.words, b.words):
        return "may be the same (initials against a full name)"
    fa, fb = a.flat, b.flat
    if _quick_ratios_below(fa, fb):
        return None
    ratio = difflib.SequenceMatcher(None, fa, fb).ratio()
    return f"look alike (similarity {ratio:.2f})" if ratio >= NEAR_MISS_RATIO else None


def _quick_ratios_below(a: str, b: str) -> bool:
    """difflib's `real_quick_ratio() < NEAR_MISS_RATIO or quick_ratio() < NEAR_MISS_RATIO`
    (the same upper bounds of the ratio: by the lengths, then by the letters shared),
    without building the SequenceMatcher most pairs never need."""
    length = len(a) + len(b)
    if not length:
        return False  # difflib's ratios of two empty sequences are 1.0
    if 2.0 * min(len(a), len(b)) / length < NEAR_MISS_RATIO:
        return True
    shared = sum(min(a.count(letter), b.count(letter)) for letter in set(a))
    return 2.0 * shared / length < NEAR_MISS_RATIO


def _initials_match(a: list[str], b: list[str]) -> bool:
    """ "x jin" against "xin jin": the same family name, one given name written as initials."""
    if a[-1] != b[-1] or len(a) < 2 or len(b) < 2 or a == b:
        return False
    ga, gb = a[:-1], b[:-1]
    if not (all(len(w) == 1 for w in ga) or all(len(w) == 1 for w in gb)):
        return False
    short, full = (ga, gb) if all(len(w) == 1 for w in ga) else (gb, ga)
    letters = [w[0] for w in full]
    return "".join(short) in ("".join(letters), letters[0])


# --------------------------------------------------------------------------- publications


def _resolve_publications(
    data: Dataset,
    person_of: dict,
    refs: _Refs,
    venue_index: dict[str, str],
    problems: list[Problem],
    changed: frozenset[str] | None = None,
):
    """Every publication entity, merged from its listings (a group: same title key).
    `changed`: the profiles whose listings may differ from those of a last build that
    resolved without problems (kg.resolve.kept); a group none of them lists is a part
    of a group that passed then, with the same persons, so its listings are not checked
    against each other again (None: every group is checked)."""
    groups: dict[str, list[tuple[str, Publication]]] = defaultdict(list)
    checked: set[str] = set()  # the groups a changed profile lists
    for profile in data.profiles:
        mine = changed is None or profile.slug in changed
        for pub in profile.publications:
            title = text_key(pub.title)
            groups[title].append((profile.slug, pub))
            if mine:
                checked.add(title)
    kinds = {v.key: v.kind for v in data.venues}
    publications: dict[str, PublicationEntity] = {}
    publication_of: dict[Source, str] = {}
    notes: list[Note] = []
    for title, listings in sorted(groups.items()):  # (by title key: each group has one)
        key = _publication_key(listings, publications)
        check = title in checked
        entity = _merge_listings(key, listings, person_of, (venue_index, kinds), problems, check)
        if entity is None:
            continue
        publications[key] = entity
        for _, pub in listings:
            if pub.source is not None:
                publication_of[pub.source] = key
        if len(listings) > 1:
            who = ", ".join(slug for slug, _ in listings)
            merged = scheme.path(scheme.PUBLICATION, key)
            notes.append(Note("merged", merged, f"listed by {who}: same title"))
    return publications, publication_of, notes


def _publication_key(listings: list[tuple[str, Publication]], taken: dict) -> str:
    chosen = next((p.id for _, p in listings if p.id), None)
    base = chosen or slugify(listings[0][1].title)
    key, n = base, 2
    while key in taken:
        key, n = f"{base}-{n}", n + 1
    return key


def _merge_listings(
    key, listings, person_of, venues, problems, check=True
) -> PublicationEntity | None:
    venue_index, kinds = venues
    first = listings[0][1]
    authors = _merge_authors(listings, person_of, problems, check)
    if authors is None:
        return None
    venue, year = _merge_venue(listings, venue_index, problems)
    statuses = [_status(p, kinds.get(venue or "")) for _, p in listings]
    return PublicationEntity(
        key=key,
        title=first.title,
        authors=authors,
        listings=tuple(listings),
        venue=venue,
        year=year,
        status=max(statuses, key=STATUS_ORDER.index),
        type=next((p.type for _, p in listings if p.type), None),
        notes=tuple(dict.fromkeys(n for _, p in listings for n in p.notes)),
        venue_as_printed=tuple(
            dict.fromkeys(p.venue_as_printed for _, p in listings if p.venue_as_printed)
        ),
        equal_contribution_note=next(
            (p.equal_contribution_note for _, p in listings if p.equal_contribution_note), None
        ),
        arxiv=next((p.arxiv for _, p in listings if p.arxiv), None),
        doi=next((p.doi for _, p in listings if p.doi), None),
        **{
            name: next((getattr(p, name) for _, p in listings if getattr(p, name)), None)
            for name in PRINTED_DETAILS
        },
    )


def _status(pub: Publication, kind: str | None) -> str:
    """The status a listing states, or the one its venue (of this `kind`) implies."""
    if pub.status is not None:
        return STATUS_SYNONYMS.get(pub.status, pub.status)
    if kind == "preprint-server" or (kind is None and pub.type == "preprint"):
        return "preprint"
    if kind == "report-series" or (kind is None and pub.type == "report"):
        return "report"
    return "published"


def _merge_authors(listings, person_of, problems, check=True) -> tuple[AuthorSlot, ...] | None:
    """The author slots of a group's listings; None when a listing names other authors
    than the first (`check`: False when that is known not to be so)."""
    first_slug, first = listings[0]
    people = [person_of.get(r.source) for r in first.authors]  # each Source hashed once
    a = _author_keys(first.authors, people) if check and listings[1:] else []
    for _, pub in listings[1:] if check else ():
        if a != _author_keys(pub.authors, [person_of.get(r.source) for r in pub.authors]):
            message = (
                f"this listing of {pub.title!r} names different authors than "
                f"profiles/{first_slug}.yaml; expected the same people in the same order"
            )
            problems.append(Problem(pub.source or Source("?", 0, 0), "authors", message))
            return None
    named = {person for person, r in zip(people, first.authors, strict=True) if not r.group}
    claimants = tuple(slug for slug, _ in listings if slug not in named)
    if not listings[1:]:
        return _single_listing_slots(first_slug, first.authors, people, claimants)
    slots = []
    for rank, refs in enumerate(zip(*(p.authors for _, p in listings), strict=True), start=1):
        head = refs[0]
        person = None if head.group else people[rank - 1]
        group = slugify(head.name) if head.group else None
        members = claimants if head.group else ()
        printed = tuple(dict.fromkeys([r.name for r in refs]))
        if not any(
            [r.equal_contribution or r.corresponding is not None or r.annotation for r in refs]
        ):  # no listing marks the slot (most slots): the marks' defaults
            slots.append(AuthorSlot(rank, person, group, printed, members=members))
            continue
        slots.append(
            AuthorSlot(
                rank=rank,
                person=person,
                group=group,
                printed=printed,
                equal_contribution=any(r.equal_contribution for r in refs),
                corresponding=_corresponding(refs),
                annotation=next((r.annotation for r in refs if r.annotation), None),
                members=members,
                marked_by=tuple(
                    slug
                    for (slug, _), r in zip(listings, refs, strict=True)
                    if r.equal_contribution or r.corresponding or r.annotation
                ),
            )
        )
    return tuple(slots)


def _single_listing_slots(
    slug: str, authors: list[PersonRef], people: list[str | None], claimants: tuple[str, ...]
) -> tuple[AuthorSlot, ...]:
    """`_merge_authors`' slots of a work one document lists (most works): the same
    values, without gathering each author's marks across listings."""
    slots = []
    for rank, (head, person) in enumerate(zip(authors, people, strict=True), start=1):
        marked = head.equal_contribution or head.corresponding or head.annotation
        slots.append(
            AuthorSlot(
                rank=rank,
                person=None if head.group else person,
                group=slugify(head.name) if head.group else None,
                printed=(head.name,),
                equal_contribution=bool(head.equal_contribution),
                corresponding=None if head.corresponding is None else bool(head.corresponding),
                annotation=head.annotation if head.annotation else None,
                members=claimants if head.group else (),
                marked_by=(slug,) if marked else (),
            )
        )
    return tuple(slots)


def _author_keys(authors: list[PersonRef], people: list[str | None]) -> list[str]:
    """Who each author is: the person resolved, else the name's text key."""
    return [
        person if person is not None else text_key(r.name)
        for person, r in zip(people, authors, strict=True)
    ]


def _corresponding(refs: tuple[PersonRef, ...]) -> bool | None:
    """True if a listing marks it, False if one says it is not, None if none says."""
    said = [r.corresponding for r in refs if r.corresponding is not None]
    return any(said) if said else None


def _merge_venue(listings, venue_index, problems) -> tuple[str | None, int | None]:
    venues, years = set(), set()
    for _, pub in listings:
        if pub.venue:
            found = _lookup_venue(venue_index, pub.venue)
            if found:
                venues.add(found[0])
                if found[1]:
                    years.add(found[1])
        if pub.year:
            years.add(pub.year)
    if len(venues) > 1 or len(years) > 1:
        pub = listings[-1][1]
        message = (
            f"the venue and year given for {pub.title!r} disagree "
            f"({', '.join(sorted(venues))} {sorted(years)}); expected one venue and one year "
            "(a venue written with a year, like OSDI '24, names that year)"
        )
        problems.append(Problem(pub.source or Source("?", 0, 0), "venue", message))
    return (min(venues) if venues else None), (min(years) if years else None)


# --------------------------------------------------------------------------- entry point


def resolve(data: Dataset, with_notes: bool = True) -> Resolution:
    """Decide identities across the whole dataset; raise InputError listing every problem.

    `with_notes=False` skips the notes for humans (merges, near misses), which nothing
    but `kg check`/`build` shows: `kg import` resolves only to check the edited profile."""
    return resolve_with_parts(data, with_notes)[0]


@dataclass(frozen=True)
class Parts:
    """What `resolve` decided on the way that a rebuild can keep (kg/resolve/kept.py):
    the decisions by person, each profile's mentions' persons (in `person_mentions`
    order) and the near-miss notes."""

    decided: dict[str, set[str]]
    mentioned: dict[str, tuple[str | None, ...]]
    near: list[Note]


def resolve_with_parts(data: Dataset, with_notes: bool = True) -> tuple[Resolution, Parts]:
    """`resolve`, with the parts a rebuild keeps."""
    problems: list[Problem] = []
    org_index = _index(data.organizations, _org_names, "organization", problems)
    venue_index = _index(data.venues, _venue_names, "venue", problems)
    refs = _Refs(org_index, venue_index, problems)
    _check_references(data, refs)
    _check_units(data, org_index, problems)
    persons, person_of, decided, mentioned = _resolve_persons(data, problems)
    publications, publication_of, pub_notes = _resolve_publications(
        data, person_of, refs, venue_index, problems
    )
    persons = identity_basis(persons, decided, publications)
    decisions = _distinct_decisions(data, persons, problems)
    evidence = {k.key: k.note for k in data.people if k.note}
    near = near_misses(persons, decisions) if with_notes else []
    notes = _person_notes(persons, decisions, evidence, near) if with_notes else []
    titles = _title_index(publications)
    _check_project_papers(data, titles, problems)
    if problems:
        raise InputError(problems)
    works, indexes = (publications, publication_of), (org_index, venue_index, titles)
    resolution = assemble(data, persons, person_of, works, notes + pub_notes, indexes)
    return resolution, Parts(dict(decided), mentioned, near)


def assemble(
    data: Dataset,
    persons: dict[str, PersonEntity],
    person_of: dict[Source, str],
    works: tuple[dict[str, PublicationEntity], dict[Source, str]],
    notes: list[Note],
    indexes: tuple[dict[str, str], dict[str, str], dict[str, str]],
) -> Resolution:
    """The `Resolution` of these parts, a full run's or a patched one's (kg.resolve.kept):
    `works` the publications and `publication_of`, `indexes` the organizations', venues'
    and titles' name indexes."""
    publications, publication_of = works
    org_index, venue_index, titles = indexes
    return Resolution(
        dataset=data,
        persons=persons,
        person_of=person_of,
        organizations={o.key: o for o in data.organizations},
        venues={v.key: v for v in data.venues},
        publications=publications,
        publication_of=publication_of,
        notes=notes,
        _org_index=org_index,
        _venue_index=venue_index,
        _titles=titles,
    )


def _distinct_decisions(
    data: Dataset, persons: dict[str, PersonEntity], problems: list[Problem]
) -> dict[str, set[str]]:
    """`distinct_from` decisions, both ways; each must name a person of the graph."""
    pairs: dict[str, set[str]] = defaultdict(set)
    for known in data.people:
        for other in known.distinct_from:
            if other not in persons:
                message = f"distinct_from names {other!r}; expected the key of a person"
                problems.append(Problem(known.source or Source("?", 0, 0), known.key, message))
            pairs[known.key].add(other)
            pairs[other].add(known.key)
    return pairs


def _title_index(publications: dict[str, PublicationEntity]) -> dict[str, str]:
    return {text_key(p.title): key for key, p in publications.items()}


def _check_project_papers(data: Dataset, titles: dict[str, str], problems: list[Problem]):
    """A project's `publication(s)` must name one of the profile's publications."""
    for profile in data.profiles:
        own = {text_key(p.title) for p in profile.publications}
        for i, proj in enumerate(profile.projects):
            for title in project_papers(proj):
                if text_key(title) not in own or text_key(title) not in titles:
                    message = (
                        f"no publication titled {title!r} in this profile; expected the title "
                        "of one of its publications"
                    )
                    problems.append(
                        Problem(
                            proj.source or Source("?", 0, 0), f"projects[{i}].publication", message
                        )
                    )


def project_papers(proj: Project) -> list[str]:
    """The titles of the publications about a project."""
    return [*([proj.publication] if proj.publication else []), *proj.publications]


def _check_units(data: Dataset, org_index: dict[str, str], problems: list[Problem]) -> None:
    """A position's unit must sit inside its organization (through `parent` links)."""
    parents = {o.key: o.parent and org_index.get(text_key(o.parent)) for o in data.organizations}
    for profile in data.profiles:
        for i, pos in enumerate(profile.positions):
            org = org_index.get(text_key(pos.organization))
            unit = pos.unit and org_index.get(text_key(pos.unit))
            if not (org and unit):
                continue
            chain, seen = parents.get(unit), {unit}
            while chain and chain != org and chain not in seen:
                seen.add(chain)
                chain = parents.get(chain)
            if chain != org:
                message = (
                    f"unit {pos.unit!r} is not part of {pos.organization!r}; expected an "
                    "organization whose parent chain reaches it"
                )
                problems.append(
                    Problem(pos.source or Source("?", 0, 0), f"positions[{i}].unit", message)
                )
