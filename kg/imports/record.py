"""What every importer produces: source-neutral records of works and affiliations.

An importer reads one file (BibTeX, CSL-JSON, ORCID JSON, dblp XML) into a `Parsed`
value; `kg.imports.merge` then matches those records against a profile. Records keep
where they came from (file, line, citation key) so every message can point at them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from kg.errors import InputError, Problem
from kg.model import PartialDate, PrintedDetails, Source


@dataclass(frozen=True, order=True)
class Origin:
    """Where a record was read: file, 1-based line, and the entry's key (citation key,
    put-code or dblp key)."""

    file: str
    line: int
    key: str = ""

    def __str__(self) -> str:
        key = f" ({self.key})" if self.key else ""
        return f"{self.file}:{self.line}{key}"


@dataclass(frozen=True)
class Author:
    """One author as printed: the name without markers, and what the markers said."""

    name: str
    equal_contribution: bool = False
    corresponding: bool = False
    annotation: str | None = None
    group: bool = False
    disambiguation: str | None = None  # dblp's homonym number, `0001`


@dataclass(frozen=True)
class Work(PrintedDetails):
    """A publication as a source describes it."""

    title: str
    authors: tuple[Author, ...]
    origin: Origin
    type: str | None = None  # one of kg.model.PUBLICATION_TYPES, when the source says
    status: str = "published"
    venue: str | None = None  # venue text as printed (booktitle, journal, container)
    series: str | None = None  # a short form the source adds (ACM's `series = {ASPLOS 2023}`)
    year: int | None = None
    doi: str | None = None
    arxiv: str | None = None
    url: str | None = None
    notes: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()  # (label, url) pairs kg wrote itself
    selected: bool = False
    equal_contribution_note: str | None = None
    truncated: bool = False  # the author list ended with "and others"


# al-folio's BibTeX link fields that the model keeps as labelled links
LINK_FIELDS = {
    "html": "HTML",
    "website": "Website",
    "poster": "Poster",
    "supp": "Supplement",
    "blog": "Blog",
}


@dataclass(frozen=True)
class Affiliation:
    """An employment or an education (ORCID)."""

    kind: str  # "employment" or "education"
    organization: str
    origin: Origin
    department: str | None = None
    role: str | None = None
    start: PartialDate | None = None
    end: PartialDate | None = None
    location: str | None = None
    ror: str | None = None  # the organization's ROR id, as ORCID disambiguates it


@dataclass(frozen=True)
class Bad:
    """A malformed entry: where, and what was expected."""

    origin: Origin
    message: str

    def __str__(self) -> str:
        return f"{self.origin}: {self.message}"


class BadValue(ValueError):
    """A field whose value kg cannot take (the entry is reported as malformed)."""


class NotAPaper(ValueError):
    """A well-formed record of a kind kg does not model (a book, a patent, a dataset):
    skipped with a warning, never a failure."""


@dataclass(frozen=True)
class Parsed:
    """Everything one file gave."""

    works: tuple[Work, ...] = ()
    affiliations: tuple[Affiliation, ...] = ()
    bad: tuple[Bad, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    orcid: str | None = None  # the iD of the ORCID record read


# --------------------------------------------------------------------------- shared helpers

EQUAL_MARKS = "*†‡"
CORRESPONDING_MARKS = "✉"
_MARKS = re.compile(r"\^?\{?([*†‡✉]+)\}?")
_SPACES = re.compile(r"\s+")
# control characters (C0 but whitespace, DEL, C1): never text; a terminal runs them
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_DOI = re.compile(r"(10\.\d{4,9}/\S+)", re.I)
_ARXIV_NEW = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\d])")
_ARXIV_OLD = re.compile(r"\b([a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?\b")
_GROUP_WORDS = re.compile(
    r"\b(team|group|consortium|collaboration|committee|project|lab|laboratory|initiative|"
    r"association|institute|society|foundation|alliance)\b",
    re.I,
)


def squash(text: str) -> str:
    """One line, single spaces, NFC, no control characters."""
    text = unicodedata.normalize("NFC", _CONTROLS.sub("", text.replace("\xa0", " ")))
    return _SPACES.sub(" ", text).strip()


def strip_marks(name: str) -> tuple[str, bool, bool]:
    """The name without contribution markers; whether it had `*`/`†`/`‡`, and `✉`."""
    found = "".join(_MARKS.findall(name))
    if not found:
        return squash(name), False, False
    clean = squash(_MARKS.sub(" ", name)).strip(" ,")
    equal = any(c in EQUAL_MARKS for c in found)
    return clean, equal, any(c in CORRESPONDING_MARKS for c in found)


def split_annotation(name: str) -> tuple[str, str | None]:
    """`Xuanzhe Liu (Advisor)` -> (`Xuanzhe Liu`, `Advisor`)."""
    match = re.match(r"^(.*?)\s*\(([^()]+)\)\s*$", name)
    if match and match[1]:
        return match[1], match[2].strip()
    return name, None


def looks_like_group(name: str) -> bool:
    return bool(_GROUP_WORDS.search(name))


def clean_doi(text: str | None) -> str | None:
    """The bare DOI (`10.1145/…`) from a DOI, `doi:` or `https://doi.org/` form."""
    if not text:
        return None
    match = _DOI.search(text.strip())
    doi = match[1].rstrip(".,;") if match else None
    if doi and any(part in (".", "..") for part in doi.split("/")):
        # https://doi.org/10.1/../../x is https://doi.org/x: a link that leaves the DOI
        raise BadValue(
            f"DOI {doi!r} has a '.' or '..' segment; expected a DOI like 10.1145/3575693"
        )
    return doi


def arxiv_id(text: str | None) -> str | None:
    """The arXiv identifier (without version) in an eprint, URL, DOI or journal text."""
    if not text:
        return None
    match = _ARXIV_NEW.search(text) or _ARXIV_OLD.search(text)
    return match[1] if match else None


def is_arxiv_doi(doi: str | None) -> bool:
    return bool(doi and doi.lower().startswith("10.48550/"))


def title_text(title: str, dblp: bool = False) -> str:
    """A title as kg keeps it: one line; from dblp (which ends every title with a period)
    without its closing period, from other sources exactly as printed ("… Inc.")."""
    title = squash(title)
    if dblp and title.endswith(".") and not title.endswith(".."):
        title = title[:-1]
    return title


def year_of(text: str | int | None) -> int | None:
    """A four-digit year, or None when there is none."""
    if text is None:
        return None
    match = re.fullmatch(r"\s*(\d{4})\s*", str(text))
    return int(match[1]) if match else None


KG_STATUSES = ("published", "accepted", "submitted", "in-submission", "preprint", "report")
GENERIC_VENUE = re.compile(
    r"^(in )?(submission|submitted|in submission|preprint|tech(nical)? report|under review|"
    r"to appear|accepted|forthcoming)$",
    re.I,
)
STATUS_WORDS = (
    (
        re.compile(r"\b(in submission|under review|underreview|inpreparation)\b", re.I),
        "in-submission",
    ),
    (re.compile(r"\b(submitted|submission)\b", re.I), "submitted"),
    (re.compile(r"\b(to appear|accepted|forthcoming|inpress|in press)\b", re.I), "accepted"),
    (re.compile(r"\b(prepublished|preprint)\b", re.I), "preprint"),
)


def status_in(text: str | None) -> str | None:
    """The publication status a note or `pubstate` states, if any."""
    if not text:
        return None
    if text.strip() in KG_STATUSES:
        return text.strip()
    text = text.replace("-", " ")
    for pattern, status in STATUS_WORDS:
        if pattern.search(text):
            return status
    return None


def file_error(file: str, line: int, message: str, column: int = 1) -> InputError:
    """The whole file cannot be read (not JSON, not XML, not the expected shape)."""
    return InputError([Problem(Source(file, line, column), "", message)])
