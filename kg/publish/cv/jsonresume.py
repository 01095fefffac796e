"""A CV as a JSON Resume document (https://jsonresume.org/schema, version 1.x).

Invariant: the document holds what the `CV` holds and validates against the published
schema: dates as `YYYY`, `YYYY-MM` or `YYYY-MM-DD` exactly as precise as written, only
addresses that the profile gives. What JSON Resume has no section for (talks, teaching,
service) goes under `meta.kg` rather than into a section of another meaning.
"""

from __future__ import annotations

import json

from kg.model import PartialDate, Present, Profile
from kg.publish.cv.model import CV, Item, Paper

SCHEMA = "https://raw.githubusercontent.com/jsonresume/resume-schema/v1.0.0/schema.json"


def _date(date: PartialDate | Present | None) -> str | None:
    return str(date) if isinstance(date, PartialDate) else None


def _clean(record: dict) -> dict:
    return {k: v for k, v in record.items() if v not in (None, "", [], {})}


def _basics(cv: CV, p: Profile) -> dict:
    profiles = [
        _clean({"network": c.label, "username": c.text, "url": c.url})
        for c in cv.contact
        if c.label not in ("Email", "Homepage", "Address", "Link")
    ]
    return _clean(
        {
            "name": cv.name,
            "label": cv.headline,
            "email": p.emails[0] if p.emails else None,
            "url": p.homepage,
            "summary": cv.bio,
            "location": {"address": p.address} if p.address else None,
            "profiles": profiles,
        }
    )


def _work(item: Item) -> dict:
    x = item.origin
    return _clean(
        {
            "name": item.lead,
            "position": x.role,
            "location": x.location,
            "startDate": _date(x.start),
            "endDate": _date(x.end),
            "summary": x.description,
            "highlights": [line for line in item.lines if line != x.description],
        }
    )


def _education(item: Item) -> dict:
    e = item.origin
    return _clean(
        {
            "institution": item.lead,
            "area": e.field,
            "studyType": e.degree,
            "startDate": _date(e.start),
            "endDate": _date(e.end),
            "score": e.gpa,
            "courses": [*item.lines],
        }
    )


def _publication(paper: Paper) -> dict:
    links = dict(paper.links)
    authors = ", ".join(a.name + ("*" if a.equal else "") for a in paper.authors)
    return _clean(
        {
            "name": paper.title,
            "publisher": paper.venue_name or paper.venue,
            "releaseDate": str(paper.year) if paper.year and paper.status != "submitted" else None,
            "url": links.get("DOI") or links.get("arXiv") or links.get("PDF"),
            "summary": f"{authors}. {paper.venue}".strip(". "),
        }
    )


def _award(item: Item) -> dict:
    a = item.origin
    return _clean(
        {"title": item.lead, "date": _date(a.date), "awarder": item.detail, "summary": a.note}
    )


def _project(item: Item) -> dict:
    p = item.origin
    urls = [link.url for link in p.links if link.url]
    return _clean(
        {
            "name": item.lead,
            "description": p.description,
            "startDate": _date(p.date),
            "highlights": [*item.lines[1 if p.description else 0 :]],
            "url": urls[0] if urls else None,
            "roles": [],
            "type": p.category,
        }
    )


def _items(cv: CV, key: str) -> tuple[Item, ...]:
    section = cv.section(key)
    return section.items if section else ()


def _plain(item: Item) -> dict:
    return _clean(
        {"name": item.lead, "detail": item.detail, "when": item.when, "lines": [*item.lines]}
    )


def resume(cv: CV) -> dict:
    """The JSON Resume document of a CV (sections left out of the CV are left out here)."""
    document = {
        "$schema": SCHEMA,
        "basics": _basics(cv, cv.profile),
        "work": [_work(i) for i in _items(cv, "positions")],
        "education": [_education(i) for i in _items(cv, "education")],
        "awards": [_award(i) for i in _items(cv, "awards")],
        "publications": [_publication(p) for p in cv.papers],
        "skills": [
            _clean({"name": i.lead, "keywords": list(i.origin.items)}) for i in _items(cv, "skills")
        ],
        "interests": [{"name": i.lead} for i in _items(cv, "interests")],
        "projects": [_project(i) for i in _items(cv, "projects")],
        "meta": _clean(
            {
                "kg": _clean(
                    {
                        key: [_plain(i) for i in _items(cv, key)]
                        for key in ("talks", "teaching", "service", "other")
                    }
                )
            }
        ),
    }
    return _clean(document)


def resume_text(cv: CV) -> str:
    return json.dumps(resume(cv), indent=2, ensure_ascii=False) + "\n"
