"""BibTeX (and biblatex) -> records, on bibtexparser 2 with pylatexenc for LaTeX.

Handles what real exports contain: Google Scholar (`journal={arXiv preprint arXiv:…}`),
dblp (`DBLP:` keys, `eprinttype`, `biburl`, CoRR), ACM DL (`numpages`, `location`),
arXiv (`@misc` with `eprint`, `archivePrefix`, `primaryClass`), Zotero (`shorttitle`,
`urldate`, `annote`). Values may use `@string` macros, month macros and `#`
concatenation; LaTeX accents and braces are decoded; equal-contribution marks
(`*`, `†`, `\\textsuperscript{*}`, `$^*$`) become flags and never stay in the name;
biblatex `author+an` annotations (`1=equal; 2="Advisor"`) are read too.
"""

from __future__ import annotations

import logging
import re
from contextlib import contextmanager
from functools import lru_cache

import bibtexparser
from bibtexparser.model import DuplicateBlockKeyBlock, Entry, ParsingFailedBlock
from pylatexenc import latex2text
from pylatexenc.latex2text import LatexNodes2Text

from kg.imports.record import (
    LINK_FIELDS,
    Author,
    Bad,
    BadValue,
    NotAPaper,
    Origin,
    Parsed,
    Work,
    arxiv_id,
    clean_doi,
    is_arxiv_doi,
    looks_like_group,
    split_annotation,
    squash,
    status_in,
    strip_marks,
    title_text,
    year_of,
)

MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
        start=1,
    )
}
ENTRY_TYPES = {
    "inproceedings": "conference-paper",
    "conference": "conference-paper",
    "article": "journal-article",
    "misc": None,
    "online": None,
    "unpublished": None,
    "techreport": "report",
    "report": "report",
    "phdthesis": "thesis",
    "mastersthesis": "thesis",
    "thesis": "thesis",
}
VENUE_FIELDS = ("booktitle", "journal", "journaltitle", "howpublished", "institution", "school")


def _latex_context():
    """pylatexenc's macros, plus the text commands kg's export writes for `{`, `}`, `^`."""
    db = latex2text.get_default_latex_context_db()
    db.add_context_category(
        "kg-escapes",
        prepend=True,
        macros=[
            latex2text.MacroTextSpec("textbraceleft", "{"),
            latex2text.MacroTextSpec("textbraceright", "}"),
            latex2text.MacroTextSpec("textasciicircum", "^"),
            latex2text.MacroTextSpec("textasciitilde", "~"),
            latex2text.MacroTextSpec("textbackslash", "\\"),
        ],
    )
    return db


_LATEX = LatexNodes2Text(latex_context=_latex_context(), math_mode="text", strict_latex_spaces=True)
_AND = re.compile(r"\s+and\s+", re.I)
_ANNOTATION = re.compile(r"^\s*(\d+)\s*=\s*(.+?)\s*$")
# Bounds on what one entry may make kg do (docs/import.md, Limits): a `@string` macro
# bomb, 20,000 nested braces or a 20,001-author list ends as a malformed entry.
MAX_FIELD_CHARS = 100_000  # a field's value once macros are expanded (an abstract: ~2,000)
MAX_AUTHOR_CHARS = 1_000_000  # the author field: 5,000 long names
MAX_BRACE_DEPTH = 32
MAX_AUTHORS = 5_000  # the largest author lists (particle physics) have about 3,000


class BibtexValueError(BadValue):
    """A field value that cannot be evaluated (an undefined macro, an unclosed quote)."""


@contextmanager
def _quiet_parser():
    """bibtexparser logs parse failures itself; kg reports them (kg.cli prints)."""
    logger = logging.getLogger("bibtexparser.splitter")
    old, logger.disabled = logger.disabled, True
    try:
        yield
    finally:
        logger.disabled = old


def parse_bibtex(text: str, file: str) -> Parsed:
    """Every entry of a BibTeX file as a `Work`, and every malformed one as `Bad`."""
    with _quiet_parser():
        library = bibtexparser.parse_string(text, parse_stack=[])
    macros = {s.key.lower(): s.value for s in library.strings}
    works, bad, warnings = [], [], []
    for block in library.failed_blocks:
        bad.append(_failed(block, file))
    for entry in library.entries:
        origin = Origin(file, (entry.start_line or 0) + 1, entry.key)
        try:
            work, warning = _work(entry, macros, origin)
        except NotAPaper as exc:
            warnings.append(f"{origin}: {exc}; skipped")
            continue
        except BadValue as exc:
            bad.append(Bad(origin, str(exc)))
            continue
        works.append(work)
        warnings += warning
    return Parsed(
        works=tuple(works), bad=tuple(sorted(bad, key=lambda b: b.origin)), warnings=tuple(warnings)
    )


def _failed(block, file: str) -> Bad:
    key_match = re.match(r"\s*@\w+\s*[{(]\s*([^,\s]*)", block.raw)
    key = key_match[1] if key_match else ""
    origin = Origin(file, (block.start_line or 0) + 1, key)
    if isinstance(block, DuplicateBlockKeyBlock):
        return Bad(origin, f"citation key {key!r} is used twice; expected each key once")
    if isinstance(block, ParsingFailedBlock) and block.error is not None:
        error = block.error
        reason = getattr(error, "abort_reason", None) or getattr(error, "message", None)
        reason = squash(str(reason or error)).rstrip(". ") or "cannot be read"
        return Bad(origin, f"malformed entry: {reason}; expected `field = {{value}}` pairs")
    return Bad(origin, "malformed entry; expected `@type{key, field = {value}, …}`")


# --------------------------------------------------------------------------- values


def evaluate(raw: str, macros: dict[str, str], depth: int = 0, limit: int = MAX_FIELD_CHARS) -> str:
    """A raw field value: `{…}`, `"…"`, numbers, macros, joined with `#`; at most
    MAX_FIELD_CHARS long however the macros multiply (checked as it grows)."""
    if depth > 10:
        raise BibtexValueError("macros refer to each other in a loop")
    parts: list[str] = []
    size = 0
    for token in _concatenated(raw):
        if (token.startswith("{") and token.endswith("}")) or (
            token.startswith('"') and token.endswith('"') and len(token) > 1
        ):
            parts.append(token[1:-1])
        elif token.isdigit():
            parts.append(token)
        elif token.lower() in macros:
            parts.append(evaluate(macros[token.lower()], macros, depth + 1, limit))
        elif token.lower()[:3] in MONTHS and len(token) <= 9:
            parts.append(str(MONTHS[token.lower()[:3]]))
        else:
            raise BibtexValueError(f"undefined macro {token!r}; expected {{text}} or a @string")
        size += len(parts[-1])
        if size > limit:
            raise BibtexValueError(
                f"a value longer than {limit:,} characters once its macros are "
                "expanded; expected a field of ordinary length"
            )
    return "".join(parts)


def _concatenated(raw: str) -> list[str]:
    """Split on `#` outside braces and quotes."""
    tokens, depth, quoted, start = [], 0, False, 0
    for i, char in enumerate(raw):
        if char == "{":
            depth += 1
            if depth > MAX_BRACE_DEPTH:
                raise BibtexValueError(
                    f"braces nested more than {MAX_BRACE_DEPTH} deep; expected ordinary LaTeX"
                )
        elif char == "}":
            depth -= 1
        elif char == '"' and depth == 0:
            quoted = not quoted
        elif char == "#" and depth == 0 and not quoted:
            tokens.append(raw[start:i].strip())
            start = i + 1
    tokens.append(raw[start:].strip())
    if depth != 0 or quoted:
        raise BibtexValueError("unbalanced braces or quotes in a field value")
    return [t for t in tokens if t]


_LATEX_SIGNS = re.compile(r"[\\{}$~%]|--|``|''")


@lru_cache(maxsize=4096)
def latex_text(value: str) -> str:
    """LaTeX -> Unicode text on one line (accents, `\\&`, protective braces).

    pylatexenc takes milliseconds per field, so text without LaTeX skips it (most
    names and venues in real exports), and repeated values (authors, venues) are cached.
    """
    if not _LATEX_SIGNS.search(value):
        return squash(value)
    try:
        return squash(_LATEX.latex_to_text(value))
    except RecursionError:  # `\begin{x}` 3,000 deep: no braces to count beforehand
        raise BibtexValueError("LaTeX nested too deeply; expected ordinary LaTeX") from None


def _plain(value: str) -> str:
    """URLs, DOIs and eprints: braces and escapes removed, nothing else touched."""
    return re.sub(r"\\([_&%#$])", r"\1", value.replace("{", "").replace("}", "")).strip()


# --------------------------------------------------------------------------- entries


def _work(entry: Entry, macros: dict[str, str], origin: Origin) -> tuple[Work, list[str]]:
    fields = {
        f.key.lower(): evaluate(
            f.value,
            macros,
            limit=MAX_AUTHOR_CHARS if f.key.lower() == "author" else MAX_FIELD_CHARS,
        )
        for f in entry.fields
    }
    kind = entry.entry_type.lower()
    if kind not in ENTRY_TYPES:
        raise NotAPaper(
            f"@{kind} is not a kind of publication kg keeps (it keeps "
            + ", ".join(f"@{t}" for t in ENTRY_TYPES)
            + ")"
        )
    title = title_text(latex_text(fields.get("title", "")))
    if not title:
        raise BibtexValueError("no title; expected a `title` field")
    if not fields.get("author", "").strip():
        raise BibtexValueError("no authors; expected an `author` field")
    authors, truncated = parse_authors(fields["author"], fields.get("author+an"))
    year = _year(fields, origin)
    work = _describe(kind, fields, title, authors, year, origin, truncated)
    warnings = []
    if truncated:
        warnings.append(
            f"{origin}: the author list ends with 'and others'; "
            f"kept the {len(authors)} named authors"
        )
    return work, warnings


def _year(fields: dict[str, str], origin: Origin) -> int | None:
    text = fields.get("year") or fields.get("date", "")[:4] or fields.get("kg-year", "")
    if not text:
        return None
    year = year_of(latex_text(text))
    if year is None:
        raise BibtexValueError(f"year {text!r}; expected four digits like 2024")
    return year


def _describe(kind, fields, title, authors, year, origin, truncated) -> Work:
    venue_field = next(
        (fields[f] for f in VENUE_FIELDS if fields.get(f) and not _is_address(fields[f])), None
    )
    venue_field = venue_field or fields.get("kg-printed")  # kg's "Tech Report"
    venue = latex_text(venue_field) if venue_field else None
    note = latex_text(fields["note"]) if fields.get("note") else None
    doi = clean_doi(_plain(fields.get("doi", "")))
    arxiv = _eprint(fields) or arxiv_id(_plain(fields.get("arxiv", ""))) or None  # al-folio
    arxiv = arxiv or _arxiv_from(venue, fields, doi)
    status = status_in(fields.get("pubstate")) or status_in(note) or _status(kind, venue, arxiv)
    if status in ("submitted", "in-submission") and not venue and note:
        venue = note  # "Submitted to ATC'25" names the venue it went to
    notes = tuple(n for n in ([note] if note and not status_in(note) else []) if n)
    notes += tuple(latex_text(n) for n in fields.get("annote", "").split(";") if n.strip())
    url = _plain(fields.get("url", "")) or None
    return Work(
        title=title,
        authors=authors,
        origin=origin,
        type=_type(kind, venue, arxiv),
        status=status,
        venue=venue,
        series=latex_text(fields.get("series", "")) or None,
        year=year,
        doi=None if is_arxiv_doi(doi) else doi,
        arxiv=arxiv,
        url=url,
        notes=tuple(dict.fromkeys(notes)),
        links=_links(fields.get("kg-links", "")) or _folio_links(fields),
        truncated=truncated,
        selected=fields.get("selected", "").strip().lower() in ("true", "yes", "1"),
        equal_contribution_note=latex_text(fields.get("kg-equal-note", "")) or None,
        **_media(fields, venue),
    )


def _media(fields: dict[str, str], venue: str | None) -> dict[str, str | None]:
    """Abstract, al-folio's pdf/code/slides/video, pages, volume, number, publisher."""
    found: dict[str, str | None] = {
        name: _plain(fields.get(name, "")) or None for name in ("pdf", "code", "slides", "video")
    }
    for name, key in (("abstract", "abstract"), ("pages", "pages"), ("issue", "number")):
        found[name] = latex_text(fields.get(key, "")) or None
    found["publisher"] = latex_text(fields.get("publisher", "")) or None
    if not (venue and venue.lower() == "corr"):  # dblp's CoRR volume is the arXiv id
        found["volume"] = latex_text(fields.get("volume", "")) or None
    return found


def _eprint(fields: dict[str, str]) -> str | None:
    """arXiv's and biblatex's `eprint` with `archivePrefix` / `eprinttype` arXiv (or none)."""
    eprint = _plain(fields.get("eprint", ""))
    prefix = (fields.get("archiveprefix") or fields.get("eprinttype") or "").lower()
    return arxiv_id(eprint) if eprint and prefix in ("arxiv", "") else None


def _is_address(value: str) -> bool:
    return value.lstrip("{ ").startswith(("\\url", "http://", "https://"))


def _arxiv_from(venue: str | None, fields: dict[str, str], doi: str | None) -> str | None:
    """Google Scholar writes `journal={arXiv preprint arXiv:2408.08586}`; dblp writes
    `journal={CoRR}, volume={abs/2408.08586}`; arXiv's DOIs are 10.48550/arXiv.ID."""
    if venue and "arxiv" in venue.lower():
        return arxiv_id(venue)
    if venue and venue.lower() == "corr":
        return arxiv_id(fields.get("volume", ""))
    if is_arxiv_doi(doi):
        return arxiv_id(doi)
    return None


def _status(kind: str, venue: str | None, arxiv: str | None) -> str:
    if kind in ("techreport", "report"):
        return "report"
    if arxiv and (venue is None or "arxiv" in venue.lower() or venue.lower() == "corr"):
        return "preprint"
    if kind == "unpublished":
        return "in-submission"
    return "published"


def _type(kind: str, venue: str | None, arxiv: str | None) -> str | None:
    if arxiv and (venue is None or "arxiv" in venue.lower() or venue.lower() == "corr"):
        return "preprint"
    return ENTRY_TYPES.get(kind)


def _folio_links(fields: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """al-folio's `html`, `website`, `poster`, `supp`, `blog` fields as labelled links."""
    return tuple(
        (label, _plain(fields[name])) for name, label in LINK_FIELDS.items() if fields.get(name)
    )


def _links(text: str) -> tuple[tuple[str, str], ...]:
    """kg's own `kg-links = {Label <https://…>; Label}` (label-only links keep no URL)."""
    links: list[tuple[str, str]] = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        match = re.match(r"^(.*?)\s*<([^>]*)>$", part)
        links.append((latex_text(match[1]), match[2]) if match else (latex_text(part), ""))
    return tuple(links)


# --------------------------------------------------------------------------- names


def parse_authors(raw: str, annotations: str | None = None) -> tuple[tuple[Author, ...], bool]:
    """`Zhao, Yihao and M{\\"u}ller, J. and {ROLL Team} and others` -> authors."""
    names = _split_names(raw)
    if len(names) > MAX_AUTHORS:
        raise BibtexValueError(f"{len(names):,} authors; expected at most {MAX_AUTHORS:,}")
    truncated = bool(names) and names[-1].strip().lower() == "others"
    if truncated:
        names = names[:-1]
    marks = _annotations(annotations)
    authors = []
    for rank, name in enumerate(names, start=1):
        author = _author(name)
        extra = marks.get(rank, ())
        authors.append(
            Author(
                name=author.name,
                equal_contribution=author.equal_contribution or "equal" in extra,
                corresponding=author.corresponding or "corresponding" in extra,
                annotation=author.annotation
                or next((a for a in extra if a not in ("equal", "corresponding")), None),
                group=author.group,
            )
        )
    return tuple(authors), truncated


def _split_names(raw: str) -> list[str]:
    """Split on ` and ` outside braces."""
    names, depth, start = [], 0, 0
    for match in re.finditer(r"[{}]|\s+and\s+", raw, flags=re.I):
        token = match.group()
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
        elif depth == 0:
            names.append(raw[start : match.start()])
            start = match.end()
    names.append(raw[start:])
    return [n.strip() for n in names if n.strip()]


def _author(raw: str) -> Author:
    stripped = raw.strip()
    if stripped.startswith("{") and stripped.endswith("}") and _balanced(stripped[1:-1]):
        literal = latex_text(stripped[1:-1])
        literal, equal, corresponding = strip_marks(literal)
        return Author(literal, equal, corresponding, group=looks_like_group(literal))
    text = latex_text(_protect_commas(stripped))
    text, annotation = split_annotation(text)
    text, equal, corresponding = strip_marks(text)
    parts = [p.strip() for p in text.split("\ue000")]
    if len(parts) == 2:  # Last, First
        text = f"{parts[1]} {parts[0]}"
    elif len(parts) == 3:  # von Last, Jr, First
        text = f"{parts[2]} {parts[0]}, {parts[1]}"
    return Author(squash(text), equal, corresponding, annotation)


def _protect_commas(raw: str) -> str:
    """Commas at brace depth 0 separate name parts; mark them before LaTeX decoding."""
    out, depth = [], 0
    for char in raw:
        depth += char == "{"
        depth -= char == "}"
        out.append("\ue000" if char == "," and depth == 0 else char)
    return "".join(out)


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += char == "{"
        depth -= char == "}"
        if depth < 0:
            return False
    return depth == 0


def _annotations(text: str | None) -> dict[int, tuple[str, ...]]:
    """biblatex `author+an = {1=equal; 2="Advisor"}`."""
    found: dict[int, tuple[str, ...]] = {}
    for item in (text or "").split(";"):
        match = _ANNOTATION.match(item)
        if match:
            values = [latex_text(v.strip().strip('"')) for v in match[2].split(",")]
            found[int(match[1])] = tuple(v for v in values if v)
    return found
