"""ORCID public API 3.0 JSON (or its XML, read into the same shape) -> records.

Accepted files: a full record (`GET /v3.0/{iD}/record`: person, employments,
educations and work summaries), a works bulk answer (`GET /v3.0/{iD}/works/{put-codes}`,
`{"bulk": [{"work": …}]}`) or one work. Work *summaries* carry no contributors, so a
record's works are imported only where the file holds the full work (the bulk answer);
the others are reported with the put-codes to fetch.
"""

from __future__ import annotations

import json
from typing import Any

from kg.imports.orcidxml import orcid_xml
from kg.imports.record import (
    Affiliation,
    Author,
    Bad,
    NotAPaper,
    Origin,
    Parsed,
    Work,
    arxiv_id,
    clean_doi,
    file_error,
    is_arxiv_doi,
    split_annotation,
    squash,
    strip_marks,
    title_text,
    year_of,
)
from kg.model import PartialDate

TYPES = {
    "conference-paper": "conference-paper",
    "journal-article": "journal-article",
    "preprint": "preprint",
    "report": "report",
    "working-paper": "report",
    "dissertation-thesis": "thesis",
    "dissertation": "thesis",
    "other": None,
}


API = "https://pub.orcid.org/v3.0"


def parse_orcid(text: str, file: str) -> Parsed:
    """A record, works bulk answer or work; fields of the wrong JSON type are reported
    as a file that is not ORCID's JSON (never a crash)."""
    try:
        return _parse(text, file)
    except (TypeError, AttributeError, KeyError, ValueError) as exc:
        raise file_error(
            file, 1, f"a field has the wrong JSON type ({exc}); expected ORCID API 3.0 JSON"
        ) from None


def _parse(text: str, file: str) -> Parsed:
    if text.lstrip().startswith("<"):  # what ORCID answers unless asked for JSON
        data = orcid_xml(text, file)
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise file_error(file, exc.lineno, f"not JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise file_error(file, 1, "expected an ORCID record, works bulk answer or work object")
    lines = _LineFinder(text)
    if "bulk" in data:
        return _works([b.get("work") or b.get("error") for b in data["bulk"]], file, lines)
    if "put-code" in data and "title" in data:
        return _works([data], file, lines)
    if "activities-summary" in data or "orcid-identifier" in data:
        return _record(data, file, lines)
    raise file_error(file, 1, "expected an ORCID record, works bulk answer or work object")


class _LineFinder:
    """Lines of `"put-code": N` in the text, to report records where they are."""

    def __init__(self, text: str) -> None:
        self.text = text

    def of_put_code(self, code: Any) -> int:
        for needle in (f'"put-code": {code}', f'"put-code":{code}', f'put-code="{code}"'):
            index = self.text.find(needle)
            if index >= 0:
                return self.text.count("\n", 0, index) + 1
        return 1


def _value(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _works(items: list[Any], file: str, lines: _LineFinder) -> Parsed:
    works, bad, warnings = [], [], []
    for item in items:
        code = _value(item, "put-code")
        origin = Origin(file, lines.of_put_code(code), f"put-code {code}")
        if not isinstance(item, dict) or "title" not in item:
            bad.append(Bad(origin, "not a work (an error answer?); expected a work object"))
            continue
        try:
            works.append(_work(item, origin))
        except NotAPaper as exc:
            warnings.append(f"{origin}: {exc}; skipped")
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            bad.append(Bad(origin, str(exc)))
    return Parsed(works=tuple(works), bad=tuple(bad), warnings=tuple(warnings))


def _external_ids(item: dict) -> dict[str, str]:
    ids = {}
    for ext in _value(item, "external-ids", "external-id") or []:
        kind = str(ext.get("external-id-type", "")).lower()
        value = _value(ext, "external-id-normalized", "value") or ext.get("external-id-value")
        if kind and value and kind not in ids:
            ids[kind] = str(value)
    return ids


def _work(item: dict, origin: Origin) -> Work:
    if str(item.get("type", "other")) not in TYPES:
        raise NotAPaper(f"type {item.get('type')!r} is not a kind of publication kg keeps")
    title = title_text(str(_value(item, "title", "title", "value") or ""))
    if not title:
        raise ValueError("no title; expected title.title.value")
    contributors = _value(item, "contributors", "contributor")
    if not contributors:
        raise ValueError(
            "no contributors (a work summary?); fetch the full work "
            "(/v3.0/{iD}/works/PUT-CODES) and import that file"
        )
    ids = _external_ids(item)
    doi = clean_doi(ids.get("doi"))
    arxiv = arxiv_id(ids.get("arxiv")) or (arxiv_id(doi) if is_arxiv_doi(doi) else None)
    kind = str(item.get("type", "other"))
    venue = _value(item, "journal-title", "value")
    return Work(
        title=title,
        authors=_authors(contributors),
        origin=origin,
        type=TYPES.get(kind),
        status="preprint" if kind == "preprint" else "published",
        venue=squash(venue) if venue else None,
        year=year_of(_value(item, "publication-date", "year", "value")),
        doi=None if is_arxiv_doi(doi) else doi,
        arxiv=arxiv,
        url=_value(item, "url", "value"),
    )


def _authors(contributors: list[dict]) -> tuple[Author, ...]:
    ranked = sorted(
        enumerate(contributors),
        key=lambda ic: (
            _value(ic[1], "contributor-attributes", "contributor-sequence") != "first",
            ic[0],
        ),
    )
    authors = []
    for _, c in ranked:
        role = str(_value(c, "contributor-attributes", "contributor-role") or "author").lower()
        if role != "author" and not role.startswith("http://credit.niso.org/"):
            continue  # editors, chairs, translators, inventors
        name = squash(str(_value(c, "credit-name", "value") or ""))
        if not name:
            continue
        name, annotation = split_annotation(name)
        name, equal, corresponding = strip_marks(name)
        authors.append(Author(name, equal, corresponding, annotation))
    if not authors:
        raise ValueError("no author among the contributors; expected credit-name values")
    return tuple(authors)


# --------------------------------------------------------------------------- record


def _record(data: dict, file: str, lines: _LineFinder) -> Parsed:
    summary = data.get("activities-summary") or {}
    affiliations, bad = _affiliations(summary, file, lines)
    works: list[Work] = []
    missing: list[str] = []
    warnings: list[str] = []
    for group in _value(summary, "works", "group") or []:
        first = (group.get("work-summary") or [None])[0]  # ORCID lists the preferred first
        if not isinstance(first, dict):
            continue
        if not _value(first, "contributors", "contributor"):
            missing.append(str(first.get("put-code")))
            continue
        parsed = _works([first], file, lines)
        works += parsed.works
        bad += parsed.bad
        warnings += parsed.warnings
    orcid = _value(data, "orcid-identifier", "path")
    if missing:
        ident = orcid if isinstance(orcid, str) else "ORCID-ID"
        warnings.append(
            f"{file}: {len(missing)} work summaries carry no contributors; fetch them with "
            f"`curl -H 'Accept: application/json' {API}/{ident}/works/{','.join(missing)} "
            "> works.json` and import that file"
        )
    return Parsed(
        tuple(works),
        tuple(affiliations),
        tuple(bad),
        tuple(warnings),
        orcid=orcid if isinstance(orcid, str) else None,
    )


def _affiliations(summary: dict, file: str, lines: _LineFinder) -> tuple[list, list]:
    affiliations, bad = [], []
    for kind, section in (("employment", "employments"), ("education", "educations")):
        for group in _value(summary, section, "affiliation-group") or []:
            for entry in group.get("summaries") or []:
                s = entry.get(f"{kind}-summary") or {}
                code = s.get("put-code")
                origin = Origin(file, lines.of_put_code(code), f"put-code {code}")
                if not _value(s, "organization", "name"):
                    bad.append(Bad(origin, f"{kind} without organization.name"))
                    continue
                affiliations.append(_affiliation(kind, s, origin))
    return affiliations, bad


def _affiliation(kind: str, s: dict, origin: Origin) -> Affiliation:
    org = s.get("organization") or {}
    address = org.get("address") or {}
    place = ", ".join(str(p) for p in (address.get("city"), address.get("country")) if p)
    ror = _value(org, "disambiguated-organization", "disambiguated-organization-identifier")
    source = _value(org, "disambiguated-organization", "disambiguation-source")
    return Affiliation(
        ror=str(ror).rstrip("/").rsplit("/", 1)[-1] if ror and source == "ROR" else None,
        kind=kind,
        organization=squash(str(org["name"])),
        origin=origin,
        department=s.get("department-name"),
        role=s.get("role-title"),
        start=_date(s.get("start-date")),
        end=_date(s.get("end-date")),
        location=place or None,
    )


def _date(value: Any) -> PartialDate | None:
    year = year_of(_value(value, "year", "value"))
    if year is None:
        return None
    month = _value(value, "month", "value")
    day = _value(value, "day", "value")
    return PartialDate(year, int(month) if month else None, int(day) if month and day else None)
