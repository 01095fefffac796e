"""A person's CV as plain data, built from their own profile document only.

Invariant: every fact in a `CV` comes from the person's `Profile` (as loaded, after
redaction) plus the registries' names for the organizations and venues it references;
nothing from other people's listings of a shared paper, from the merged publication
entity or from comments in the data. Sections and entries keep the document's order,
except that publications are grouped the way CVs are (selected first, then by status).
Dates keep the precision they were written with (`Sep 2021`, `2021`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kg.model import (
    PartialDate,
    Present,
    Profile,
)

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
SECTIONS = (  # key -> heading, in the order a CV prints them
    ("interests", "Research interests"),
    ("education", "Education"),
    ("positions", "Positions and internships"),
    ("publications", "Publications"),
    ("talks", "Invited talks"),
    ("teaching", "Teaching"),
    ("service", "Service"),
    ("awards", "Awards and honors"),
    ("projects", "Projects"),
    ("skills", "Skills"),
    ("other", "Other"),
)
FORMATS = ("md", "html", "tex", "pdf", "jsonresume")
SECTION_KEYS = tuple(key for key, _ in SECTIONS)
STATUS_GROUPS = (  # status -> heading of its group
    ("published", "Publications"),
    ("accepted", "Accepted"),
    ("submitted", "Submitted"),
    ("preprint", "Preprints"),
    ("report", "Technical reports"),
)
DEFAULT_LEGEND = "* Equal contribution"

Bound = tuple[int, int]  # (year, month or 0): comparable ends of a period


def date_text(date: PartialDate | Present | None) -> str:
    """`Sep 2021`, `2021`, `3 Sep 2021` or `present`: as precise as written."""
    if date is None:
        return ""
    if isinstance(date, Present):
        return "present"
    if date.month is None:
        return str(date.year)
    text = f"{MONTHS[date.month - 1]} {date.year}"
    return f"{date.day} {text}" if date.day else text


def period_text(start: PartialDate | None, end: PartialDate | Present | None) -> str:
    if start is None:
        return date_text(end)
    if end is None:
        return date_text(start)
    return f"{date_text(start)} – {date_text(end)}"


@dataclass(frozen=True)
class Author:
    name: str
    me: bool  # the CV's owner: emphasised
    equal: bool
    annotation: str | None = None


@dataclass(frozen=True)
class Paper:
    number: int
    title: str
    authors: tuple[Author, ...]
    venue: str  # short name and year, or what the status says ("Submitted to ATC 2025")
    year: int | None
    status: str
    notes: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()  # (label, address)
    venue_name: str = ""  # the venue's full name (JSON Resume's publisher)


@dataclass(frozen=True)
class PaperGroup:
    heading: str
    papers: tuple[Paper, ...]


@dataclass(frozen=True)
class Item:
    """One entry of a section: a bold lead, the rest of its line, when, more lines."""

    lead: str
    detail: str = ""
    when: str = ""
    lines: tuple[str, ...] = ()
    start: Bound | None = None
    end: Bound | None = None  # (9999, 12) for `present`
    origin: Any = field(default=None, compare=False)  # the profile's record it shows


@dataclass(frozen=True)
class Section:
    key: str
    heading: str
    items: tuple[Item, ...] = ()
    groups: tuple[PaperGroup, ...] = ()


@dataclass(frozen=True)
class Contact:
    label: str
    text: str
    url: str | None = None


@dataclass(frozen=True)
class CV:
    slug: str
    name: str
    native_names: tuple[tuple[str, str], ...]  # (name, BCP 47 tag)
    headline: str | None
    contact: tuple[Contact, ...]
    bio: str | None
    sections: tuple[Section, ...]
    legend: str | None  # the equal-contribution legend, when a paper carries the mark
    profile: Profile  # what the JSON Resume renderer maps field by field

    def section(self, key: str) -> Section | None:
        return next((s for s in self.sections if s.key == key), None)

    @property
    def papers(self) -> tuple[Paper, ...]:
        found = self.section("publications")
        return tuple(p for g in found.groups for p in g.papers) if found else ()


@dataclass(frozen=True)
class Options:
    """What `kg cv` was asked for: a date range, sections, a publication limit."""

    start: PartialDate | None = None
    end: PartialDate | None = None
    sections: tuple[str, ...] = SECTION_KEYS
    max_publications: int | None = None


def bound(date: PartialDate | Present | None, last: bool) -> Bound | None:
    if date is None:
        return None
    if isinstance(date, Present):
        return (9999, 12)
    return (date.year, date.month or (12 if last else 1))


def in_range(item_start: Bound | None, item_end: Bound | None, options: Options) -> bool:
    """Whether a period overlaps the asked range; undated entries are always kept."""
    first, last = item_start or item_end, item_end or item_start
    if first is None or last is None:
        return True
    low, high = bound(options.start, False), bound(options.end, True)
    return (low is None or last >= low) and (high is None or first <= high)
