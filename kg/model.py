"""Typed, frozen model of the profile format (what `kg.ingest.load` produces).

Every class here is one YAML mapping in `data/`. The docstring of a class and the
`doc` metadata of its fields are the single source for `docs/profile-format.md`
and the JSON Schema printed by `kg schema`.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from typing import Any

# --------------------------------------------------------------------------- helpers


@dataclass(frozen=True, order=True, slots=True)
class Source:
    """Where a value was written: file, 1-based line and column."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


def f(
    doc: str,
    default: Any = None,
    *,
    required: bool = False,
    example: Any = None,
    choices: tuple[str, ...] | None = None,
    fmt: str | None = None,
) -> Any:
    """A model field with documentation (and a default unless required).

    `choices` closes the set of allowed values; `fmt` names a text format checked by
    the loader (`email`, `url`, `orcid`, `lang`, `key`, `ror`, `wikidata`, `dblp`, `doi`, `arxiv`,
    `file`: a URL or a path under the project's `static/`).
    """
    meta = {"doc": doc, "example": example, "choices": choices, "format": fmt}
    if required:
        return field(metadata=meta)
    if isinstance(default, list | dict | tuple):
        empty = type(default)
        return field(default_factory=empty, metadata=meta)
    return field(default=default, metadata=meta)


SOURCE = field(default=None, compare=False, repr=False, metadata={"internal": True})

_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


@dataclass(frozen=True, order=True, slots=True)
class PartialDate:
    """A date written with year, year-month or full precision: 2024, 2024-05, 2024-05-03."""

    year: int
    month: int | None = None
    day: int | None = None

    @classmethod
    def parse(cls, text: str) -> PartialDate:
        import calendar

        match = _DATE.match(text.strip())
        if not match:
            raise ValueError("a date written as YYYY, YYYY-MM or YYYY-MM-DD")
        year, month, day = (int(g) if g else None for g in match.groups())
        assert year is not None  # the pattern always captures the year
        if month is not None and not 1 <= month <= 12:
            raise ValueError(f"a month between 01 and 12 (got {month:02d})")
        if day is not None and not 1 <= day <= calendar.monthrange(year, month or 1)[1]:
            raise ValueError(f"a day that exists in {year}-{month:02d} (got {day:02d})")
        return cls(year, month, day)

    def __str__(self) -> str:
        text = f"{self.year:04d}"
        if self.month is not None:
            text += f"-{self.month:02d}"
        if self.day is not None:
            text += f"-{self.day:02d}"
        return text

    @property
    def precision(self) -> str:
        return "day" if self.day else "month" if self.month else "year"


@dataclass(frozen=True, slots=True)
class Present:
    """The open end of a period, written `present`."""

    def __str__(self) -> str:
        return "present"


PRESENT = Present()

DEGREE_LEVELS = ("bachelor", "master", "doctoral", "other")
EDUCATION_STATUSES = ("completed", "in-progress", "expected", "incomplete")
POSITION_TYPES = (
    "employment",
    "internship",
    "part-time",
    "research-assistant",
    "other",
)
PUBLICATION_TYPES = (
    "conference-paper",
    "journal-article",
    "workshop-paper",
    "preprint",
    "report",
    "thesis",
)


def inferred_publication_type(status: str | None, venue_kind: str | None) -> str | None:
    """The kind of work its status or its venue's kind says, when a listing gives none;
    None (a generic scholarly work) when neither does, e.g. a paper "[In Submission]" to
    a venue the document does not name. The one rule for the graph, citations and pages."""
    if status == "report" or venue_kind == "report-series":
        return "report"
    if status == "preprint" or venue_kind == "preprint-server":
        return "preprint"
    return {
        "journal": "journal-article",
        "workshop": "workshop-paper",
        "conference": "conference-paper",
    }.get(venue_kind or "")


PUBLICATION_STATUSES = (
    "published",
    "accepted",
    "submitted",
    "in-submission",
    "preprint",
    "report",
)
# The status model (docs/mapping.md#publication-status). `in-submission` is another
# spelling of `submitted` ("under review"); the graph only ever says `submitted`.
STATUS_SYNONYMS = {"in-submission": "submitted"}
STATUSES_WITH_VENUE = ("published", "accepted")  # appeared (or will) at a peer-reviewed venue
STATUSES_WITH_DATE = ("published", "accepted", "preprint", "report")  # has a publication date
ORGANIZATION_KINDS = (
    "university",
    "company",
    "institute",
    "lab",
    "team",
    "department",
    "group",
    "other",
)
PRIVATE_FIELDS = (
    "emails",
    "homepage",
    "orcid",
    "accounts",
    "address",
    "interests",
    "bio",
    "links",
    "education",
    "positions",
    "projects",
    "awards",
    "teaching",
    "service",
    "talks",
    "skills",
    "other",
    "native_names",
    "alternate_names",
    "photo",
    "headline",
)
# services whose profile address kg derives from the user name (`service` in any case)
ACCOUNT_SERVICES = {
    "github": "https://github.com/",
    "gitlab": "https://gitlab.com/",
    "twitter": "https://twitter.com/",
    "x": "https://x.com/",
    "linkedin": "https://www.linkedin.com/in/",
    "google-scholar": "https://scholar.google.com/citations?user=",
    "dblp": "https://dblp.org/pid/",
    "semantic-scholar": "https://www.semanticscholar.org/author/",
}
# a member's place in the group, in the order the site lists them
LAB_ROLES = (
    "pi",
    "faculty",
    "postdoc",
    "phd",
    "masters",
    "undergrad",
    "staff",
    "visitor",
    "alumni",
)
VENUE_KINDS = ("conference", "journal", "workshop", "preprint-server", "report-series")

# --------------------------------------------------------------------------- shared parts


@dataclass(frozen=True, kw_only=True, slots=True)
class PrintedDetails:
    """What a paper's page shows beyond its citation, as printed (al-folio's and Hugo
    Blox's fields): the one list of them for an importer's record, a resolved publication
    and a citation, which inherit it (a profile's `Publication` declares the same fields
    with their documentation)."""

    abstract: str | None = None
    pdf: str | None = None
    code: str | None = None
    slides: str | None = None
    video: str | None = None
    pages: str | None = None
    volume: str | None = None
    issue: str | None = None
    publisher: str | None = None


PRINTED_DETAILS = tuple(PrintedDetails.__dataclass_fields__)


@dataclass(frozen=True, kw_only=True, slots=True)
class PersonRef:
    """A person as printed in a list (author, advisor, mentor).

    Written either as a plain string (the name exactly as printed) or as a mapping
    when the listing marks something about the person.
    """

    name: str = f("The name exactly as printed, without markers such as `*`.", required=True)
    equal_contribution: bool = f("Marked as equal contribution (`*`, co-first author).", False)
    corresponding: bool | None = f(
        "Marked (`true`) or explicitly not marked (`false`) as corresponding author; "
        "omitted when the listing does not say (unknown, not false).",
        None,
    )
    annotation: str | None = f(
        "A note printed beside the name, kept apart from it, e.g. `Advisor`.",
        example="Advisor",
    )
    honorific: str | None = f("A title printed before the name, e.g. `Prof.`.", example="Prof.")
    person: str | None = f(
        "Key of the person in `data/people.yaml` or of a profile, to pick one of several "
        "people who share this name.",
        example="wei-wang-hkust",
    )
    group: bool = f("A group author (a team, a consortium), not a person.", False)
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Link:
    """A link the document gives (or names without an address)."""

    label: str = f("What the link is, as written.", required=True, example="Google Scholar")
    url: str | None = f("The address; omitted when the document names the link only.", fmt="url")
    note: str | None = f("Anything the document says about the link.", example="outdated")
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Account:
    """An account on an online service."""

    service: str = f(
        "The service, e.g. `github`; the profile address is derived for "
        + ", ".join(ACCOUNT_SERVICES)
        + " (in any case).",
        required=True,
        example="github",
    )
    username: str = f("The user name on that service.", required=True, example="PKUFlyingPig")
    url: str | None = f("The profile address; derived for known services when omitted.", fmt="url")
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class LocalizedName:
    """A name in another script, with its BCP 47 language tag."""

    name: str = f("The name in that script.", required=True, example="赵汉宇")
    lang: str = f("BCP 47 language tag.", required=True, example="zh", fmt="lang")
    source: Source | None = SOURCE


# --------------------------------------------------------------------------- profile sections


@dataclass(frozen=True, kw_only=True, slots=True)
class Education:
    """A degree programme at an institution."""

    institution: str = f(
        "The institution: a key, name or alias from `data/organizations.yaml`.",
        required=True,
        example="PKU",
    )
    degree: str | None = f("The degree as written.", example="Ph.D.")
    level: str | None = f("Degree level.", example="doctoral", choices=DEGREE_LEVELS)
    field: str | None = f("Field of study as written.", example="Computer Science")
    unit: str | None = f(
        "School, department or programme as written.",
        example="School of Computer Science",
    )
    program: str | None = f("A named track, class or direction as written.", example="Turing Class")
    location: str | None = f("Where, as written.", example="Beijing, China")
    start: PartialDate | None = f("Start date (YYYY or YYYY-MM).", example="2021-09")
    end: PartialDate | Present | None = f("End date, or `present`.", example="present")
    status: str | None = f(
        "Whether the programme is `completed`, `in-progress`, `expected` (the end date is "
        "planned) or `incomplete`.",
        example="in-progress",
        choices=EDUCATION_STATUSES,
    )
    advisors: list[PersonRef] = f("Advisors, as printed.", [], example=["Xuanzhe Liu"])
    co_advisors: list[PersonRef] = f("Co-advisors, as printed.", [], example=["Xin Jin"])
    gpa: str | None = f("GPA as written.", example="3.78/4.0")
    rank: str | None = f("Class rank as written.", example="top 7%")
    notes: list[str] = f("Other facts about this programme, as written.", [])
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Position:
    """A job, internship or assistantship."""

    organization: str = f(
        "The organization: key, name or alias from `data/organizations.yaml`.",
        required=True,
        example="ByteDance",
    )
    unit: str | None = f(
        "The team, lab or group inside the organization: key, name or alias of an "
        "organization whose parent is `organization`.",
        example="ByteDance AML",
    )
    role: str | None = f("Job title as written.", example="Research Intern")
    type: str | None = f(
        "Kind of position.",
        example="internship",
        choices=POSITION_TYPES,
    )
    location: str | None = f("Where, as written.", example="Beijing")
    start: PartialDate | None = f("Start date.", example="2023-08")
    end: PartialDate | Present | None = f("End date, or `present`.", example="2024-05")
    mentors: list[PersonRef] = f("Mentors, as printed.", [])
    supervisors: list[PersonRef] = f(
        "Advisors or supervisors named for this position, as printed.", []
    )
    description: str | None = f("What the person did, as written.")
    highlights: list[str] = f("Bullet points under the position, as written.", [])
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Publication:
    """A paper, article, preprint, report or thesis."""

    title: str = f("The title exactly as printed.", required=True)
    authors: list[PersonRef] = f(
        "Every author in printed order; a string or a mapping with markers.",
        required=True,
        example=["Diandian Gu", {"name": "Yihao Zhao", "equal_contribution": True}],
    )
    type: str | None = f(
        "Kind of publication; inferred from the venue when omitted.",
        example="conference-paper",
        choices=PUBLICATION_TYPES,
    )
    venue: str | None = f("The venue: key, name or alias from `data/venues.yaml`.", example="OSDI")
    venue_as_printed: str | None = f("The venue text exactly as printed.", example="OSDI '24")
    year: int | None = f("Year of the venue edition or of publication.", example=2024)
    status: str | None = f(
        "Publication status: `published`, `accepted` (to appear), `submitted` (under review; "
        "`in-submission` says the same), `preprint` or `report` (technical report). Omitted: "
        "`preprint` at a preprint server, `report` in a report series, else `published`.",
        None,
        example="submitted",
        choices=PUBLICATION_STATUSES,
    )
    notes: list[str] = f("Tags printed with the entry, e.g. CCF ranks.", [], example=["CCF-A"])
    equal_contribution_note: str | None = f(
        "The legend printed for the equal-contribution marker.",
        example="(*Equal contribution)",
    )
    arxiv: str | None = f("arXiv identifier.", example="2408.08586", fmt="arxiv")
    doi: str | None = f("DOI.", example="10.1145/3575693.3575721", fmt="doi")
    abstract: str | None = f("The abstract, as published.")
    pdf: str | None = f(
        "Address of the full text as PDF (Google Scholar's `citation_pdf_url`), or its file "
        "in the project's `static/` folder.",
        fmt="file",
        example="https://www.usenix.org/system/files/osdi24-zhong-yinmin.pdf",
    )
    code: str | None = f("Address of the source code or artifact.", fmt="url")
    slides: str | None = f(
        "Address of the slides, or their file in the project's `static/` folder.", fmt="file"
    )
    video: str | None = f("Address of the talk video.", fmt="url")
    pages: str | None = f("Pages as printed.", example="1-15")
    volume: str | None = f("Volume as printed.", example="17")
    issue: str | None = f("Issue (BibTeX's `number`) as printed.", example="4")
    publisher: str | None = f("Publisher as printed (a venue's is in the registry).", example="ACM")
    links: list[Link] = f("Links printed with the entry (Paper, Slides, Code…).", [])
    selected: bool = f("Listed under 'selected publications'.", False)
    id: str | None = f("Override the generated slug of this publication.", fmt="key")
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Project:
    """A project, system or piece of software."""

    name: str = f("The project name as written.", required=True, example="LoongServe")
    date: PartialDate | None = f("When, as written.", example="2024-05")
    category: str | None = f(
        "Heading the project is listed under.", example="Large Language Model Serving"
    )
    description: str | None = f("Description as written.")
    deployed_at: list[str] = f("Organizations (registry references) where it is deployed.", [])
    team: str | None = f(
        "The team or lab (registry reference) the project was built in.", example="alibaba-roll"
    )
    publication: str | None = f(
        "Title of the publication that describes it (one of the profile's publications)."
    )
    publications: list[str] = f(
        "Titles of further publications about it (each one of the profile's publications).", []
    )
    links: list[Link] = f("Links.", [])
    notes: list[str] = f("Other facts, as written.", [])
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Award:
    """An award, prize, scholarship or honour."""

    name: str = f("The award as written.", required=True, example="Presidential Scholarship")
    awarded_by: str | None = f("Awarding organization (registry reference).", example="PKU")
    date: PartialDate | None = f("When.", example="2023-06")
    note: str | None = f("Qualification printed with it.", example="Top 10% of research interns")
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Teaching:
    """A course the person taught or assisted."""

    course: str = f("Course name as written.", required=True, example="Operating Systems")
    role: str = f("Role as written.", "Teaching Assistant", example="Head TA")
    terms: list[str] = f(
        "Terms as written: `Fall 2022` or `2022 Fall` (Spring, Summer, Fall, Winter).",
        [],
        example=["Fall 2022"],
    )
    institution: str | None = f("Institution (registry reference).", example="PKU")
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Service:
    """A service role for a venue: reviewer, committee member, editor."""

    role: str = f("Role as written.", required=True, example="Artifacts Evaluation Committee")
    venues: list[str] = f(
        "Venues served (registry references).", required=True, example=["OSDI", "ATC"]
    )
    year: int | None = f("Year of the edition served.", example=2024)
    as_printed: str | None = f("The entry as printed.", example="OSDI/ATC 2024")
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class TalkEvent:
    """One occasion a talk was given."""

    event: str = f("The event, seminar or group as written.", required=True)
    host: str | None = f("Hosting organization (registry reference).")
    venue: str | None = f("Venue (registry reference) when the talk was at a conference.")
    date: PartialDate | None = f("When.")
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Talk:
    """An invited talk, given at one or more events."""

    title: str = f("Talk title as written.", required=True)
    events: list[TalkEvent] = f("Where and when it was given.", required=True)
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillGroup:
    """Skills under one heading."""

    category: str | None = f("The heading as written.", example="Programming Languages")
    items: list[str] = f("The skills.", required=True, example=["Python", "C++"])
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Profile:
    """One researcher: `data/profiles/<slug>.yaml`. The slug is the file name."""

    name: str = f("Preferred full name.", required=True, example="Yihao Zhao")
    given_name: str | None = f("Given name.", example="Yihao")
    family_name: str | None = f("Family name.", example="Zhao")
    alternate_names: list[str] = f(
        "Other spellings, e.g. the heading as written.", [], example=["Yihao ZHAO"]
    )
    native_names: list[LocalizedName] = f("The name in another script.", [])
    photo: str | None = f(
        "Address of a portrait (the page's `image` for search engines), or its file in the "
        "project's `static/` folder (copied into the site, with a thumbnail).",
        fmt="file",
        example="static/people/ann-bee.jpg",
    )
    headline: str | None = f(
        "Current position as the document states it.",
        example="Ph.D. Candidate, Peking University",
    )
    lab_role: str | None = f(
        "The person's place in the group, which groups the site's members: `pi` "
        "(principal investigator), `faculty`, `postdoc`, `phd`, `masters`, `undergrad`, "
        "`staff`, `visitor`, or `alumni` for former members.",
        example="phd",
        choices=LAB_ROLES,
    )
    now_at: str | None = f(
        "Where a former member is now, as written (shown under alumni).",
        example="Research Scientist, Example Labs",
    )
    emails: list[str] = f("Email addresses.", [], fmt="email")
    homepage: str | None = f("Homepage address.", fmt="url")
    orcid: str | None = f("ORCID iD (0000-0000-0000-0000).", fmt="orcid")
    accounts: list[Account] = f("Accounts on online services.", [])
    address: str | None = f("Postal or office address as written.")
    interests: list[str] = f("Research interests, one topic per item.", [])
    bio: str | None = f("About me / biography, as written.")
    links: list[Link] = f("Other links the document gives (CV, Google Scholar…).", [])
    education: list[Education] = f("Degrees.", [])
    positions: list[Position] = f("Jobs, internships, assistantships.", [])
    publications: list[Publication] = f("Publications.", [])
    projects: list[Project] = f("Projects.", [])
    awards: list[Award] = f("Awards and honours.", [])
    teaching: list[Teaching] = f("Teaching.", [])
    service: list[Service] = f("Professional service.", [])
    talks: list[Talk] = f("Invited talks.", [])
    skills: list[SkillGroup] = f("Skills.", [])
    other: list[str] = f("Any other statement the document makes, as written.", [])
    public: bool = f(
        "Publish this profile at all; `false` keeps it out of every export, page and query "
        "(its owner can still appear by name in other people's author lists).",
        True,
    )
    private: list[str] = f(
        "Fields of this profile to keep out of every export, page, snippet and query.",
        [],
        example=["emails", "address"],
        choices=PRIVATE_FIELDS,
    )
    slug: str = field(default="", metadata={"internal": True})
    source: Source | None = SOURCE


# --------------------------------------------------------------------------- registries


@dataclass(frozen=True, kw_only=True, slots=True)
class Organization:
    """An entry of `data/organizations.yaml` (the key is its slug)."""

    name: str = f("Canonical name.", required=True, example="Peking University")
    kind: str = f(
        "Kind of organization.",
        required=True,
        example="university",
        choices=ORGANIZATION_KINDS,
    )
    aliases: list[str] = f("Other names and abbreviations.", [], example=["PKU"])
    parent: str | None = f("Key of the parent organization (teams, labs, schools).")
    homepage: str | None = f("Homepage address.", fmt="url")
    location: str | None = f("City and country.", example="Beijing, China")
    ror: str | None = f(
        "ROR identifier (the part after https://ror.org/); published as `schema:sameAs`.",
        example="02v51f717",
        fmt="ror",
    )
    wikidata: str | None = f(
        "Wikidata item (Q number); published as `schema:sameAs`.", example="Q16955", fmt="wikidata"
    )
    key: str = field(default="", metadata={"internal": True})
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Edition:
    """One yearly edition of a conference series."""

    ordinal: int | None = f("The edition number, e.g. 18 for the 18th.", example=18)
    name: str | None = f("The edition's full name as printed.")
    location: str | None = f("Where it took place.")
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Venue:
    """An entry of `data/venues.yaml` (the key is its slug)."""

    name: str = f(
        "Full name.",
        required=True,
        example="USENIX Symposium on Operating Systems Design and Implementation",
    )
    short_name: str | None = f("Abbreviation.", example="OSDI")
    kind: str = f(
        "Kind of venue.",
        required=True,
        example="conference",
        choices=VENUE_KINDS,
    )
    publisher: str | None = f("Publisher (organization registry reference).", example="USENIX")
    aliases: list[str] = f(
        "Other names; an alias with a year (`OSDI '24`) also names that edition.", []
    )
    ranks: dict[str, str] = f("Rank lists, e.g. `{CCF: A}`.", {}, example={"CCF": "A"})
    editions: dict[int, Edition] = f("Editions by year.", {})
    proceedings: bool = f(
        "Whether a conference publishes proceedings (a book its papers are part of); `false` "
        "for one that only posts papers online, like ICLR on OpenReview.",
        True,
    )
    homepage: str | None = f("Homepage address.", fmt="url")
    dblp: str | None = f(
        "dblp venue key; published as `schema:sameAs` the dblp venue page.",
        example="conf/osdi",
        fmt="dblp",
    )
    wikidata: str | None = f(
        "Wikidata item (Q number); published as `schema:sameAs`.", example="Q118398", fmt="wikidata"
    )
    key: str = field(default="", metadata={"internal": True})
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class KnownPerson:
    """An entry of `data/people.yaml`: a person without a profile who needs a name."""

    name: str = f("Full name.", required=True, example="Wei Wang")
    aliases: list[str] = f("Other spellings.", [])
    disambiguation: str | None = f(
        "Distinguishes people who share a name, as dblp does (`0001`).", example="0001"
    )
    affiliation: str | None = f("Organization (registry reference).", example="HKUST")
    homepage: str | None = f("Homepage address.", fmt="url")
    note: str | None = f(
        "Who this is and the evidence for a decision, for a human reader: shown by "
        "`kg resolve --report`, never published as a fact about the person."
    )
    same_as: list[str] = f(
        "A decision that confirms a merge: the profiles (slugs) whose mentions of this name "
        "are this person, checked by a human. Those mentions resolve here without `person:`, "
        "even when several registered people share the name.",
        [],
        example=["yihao-zhao", "yinmin-zhong"],
    )
    distinct_from: list[str] = f(
        "A decision that splits: people (profile slugs or keys of people or minted persons) "
        "this person is not; the pair is no longer reported as a near miss.",
        [],
        example=["yihao-zhao"],
    )
    key: str = field(default="", metadata={"internal": True})
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class NewsItem:
    """One news item of the group (shown on the site's front page, newest first)."""

    date: PartialDate = f("When it happened.", required=True, example="2025-05-01")
    text: str = f("The news, one or two sentences.", required=True)
    link: str | None = f("An address to read more.", fmt="url")
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class News:
    """`data/news.yaml` (optional): the group's news."""

    news: list[NewsItem] = f("The items, in any order.", [])
    source: Source | None = SOURCE


@dataclass(frozen=True, kw_only=True, slots=True)
class Dataset:
    """Everything under `data/`, loaded."""

    profiles: tuple[Profile, ...]
    organizations: tuple[Organization, ...]
    venues: tuple[Venue, ...]
    people: tuple[KnownPerson, ...]
    news: tuple[NewsItem, ...] = ()


# --------------------------------------------------------------------------- pickling


def _quick_pickling(cls: type) -> None:
    """Replace the state functions `dataclass(frozen=True, slots=True)` adds with ones that
    look the fields up once per class, not once per object: the parse cache unpickles
    every record of a project (a million at 10k people), and `dataclasses.fields` per
    object doubled the time of a load from the cache."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    values = attrgetter(*names) if len(names) > 1 else lambda r: tuple(getattr(r, n) for n in names)
    put = object.__setattr__  # the record is frozen: its own __setattr__ refuses

    def __getstate__(self: Any) -> tuple:
        return values(self)

    def __setstate__(self: Any, state: tuple) -> None:
        any(map(put, repeat(self), names, state))  # put returns None: every field is set

    cls.__getstate__ = __getstate__  # type: ignore[method-assign,assignment]
    cls.__setstate__ = __setstate__  # type: ignore[attr-defined]


for _record in list(globals().values()):
    if isinstance(_record, type) and dataclasses.is_dataclass(_record):
        _quick_pickling(_record)
