"""kg's own `person.html.j2` (on kg's `base.html.j2`) written in Python.

Invariant: `person_page(env, values)` is the text Jinja renders from those two templates
of kg for the same values, byte for byte (as `kg.publish.pubpage` is for the
publication page: `page_text` for each `{{ value }}`, Jinja's `join`, the whitespace
after `trim_blocks` and `lstrip_blocks`, Jinja's truth). Used only when both templates
the environment loads are kg's files; a project that overrides either (or its entry
template, which the page calls through `entry`) keeps Jinja. Tested against Jinja on
the seeds and a generated corpus (tests/test_page_memos.py); decision 0065.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment

from kg.publish.pageenv import page_text as t
from kg.publish.pubpage import _join, base_page

_EDUCATION_STATUS = {
    "in-progress": "in progress",
    "expected": "in progress, end date expected",
    "incomplete": "incomplete",
}


def person_page(env: Environment, v: dict[str, Any]) -> str:
    """The page `person.html.j2` renders from the values `v` (env: the site's)."""
    p = v["p"]
    title = t(p.name)
    summary = t(p.headline or p.name)
    og = [
        '<meta property="og:type" content="profile">\n'
        f'<meta property="og:description" content="{summary}">\n'
    ]
    if p.given_name:
        og.append(f'<meta property="profile:first_name" content="{t(p.given_name)}">\n')
    if p.family_name:
        og.append(f'<meta property="profile:last_name" content="{t(p.family_name)}">\n')
    if p.photo:
        og.append(f'<meta property="og:image" content="{t(p.photo)}">\n')
    description = f'<meta name="description" content="{summary}">\n'
    head = f"{t(v['jsonld'])}\n"
    site, base = env.globals["site"], str(env.globals["base"])
    main = "".join(_main(env, v))
    return base_page(site, base, v, title, (description, "".join(og), head, main))


def _people(found: list[tuple[str, str | None]]) -> str:
    return ", ".join(
        f'<a href="{t(href)}"><bdi>{t(name)}</bdi></a>' if href else f"<bdi>{t(name)}</bdi>"
        for name, href in found
    )


def _main(env: Environment, v: dict[str, Any]) -> list[str]:
    p, org = v["p"], v["org"]
    out: list[str] = []
    if p.photo:
        src = t(env.globals["photo"](p.photo, v["root"]))  # type: ignore[operator]
        out.append(
            f'<img class="photo" src="{src}" alt="Portrait of {t(p.name)}" '
            'width="120" height="120">\n'
        )
    out.append(f"<h1><bdi>{t(p.name)}</bdi>")
    out += [
        f' <span class="native" lang="{t(n.lang)}" dir="auto">{t(n.name)}</span>'
        for n in p.native_names
    ]
    out.append("</h1>\n")
    if p.headline:
        out.append(f'<p class="headline">{t(p.headline)}</p>')
    out.append('<ul class="plain">\n')
    out += [f'  <li>Email: <a href="mailto:{t(e)}">{t(e)}</a></li>\n' for e in p.emails]
    out += [_account(p, a) for a in v["accounts"]]
    if p.address:
        out.append(f"  <li>Address: {t(p.address)}</li>\n")
    for link in p.links:
        if link.url:
            shown = f'<a href="{t(link.url)}">{t(link.label)}</a>'
        else:
            shown = f'<span class="nolink">{t(link.label)} (no address given)</span>'
        note = f" ({t(link.note)})" if link.note else ""
        out.append(f"  <li>{shown}{note}</li>\n")
    out.append(f'  <li>CV: <a href="../cv/{t(p.slug)}.html">printable CV</a></li>\n')
    data = [f'<a href="{t(h)}" type="{t(m)}">{t(label)}</a>' for label, m, h in v["data"]]
    out.append(f"  <li>Data: {', '.join(data)}</li>\n</ul>\n")
    if p.interests:
        items = "".join(f"<li>{t(i)}</li>" for i in p.interests)
        out.append(f"<h2>Research interests</h2>\n<ul>{items}</ul>\n")
    if p.bio:
        out.append("<h2>About</h2>\n")
        out += [f"<p>{t(para)}</p>\n" for para in p.bio.split("\n\n")]
    period = env.filters["period"]  # the template's `|period`
    if p.education:
        out.append('<h2>Education</h2>\n<ul class="entries">\n')
        out += [_education(e, org, v["refs"], period) for e in p.education]
        out.append("</ul>\n")
    if p.positions:
        out.append('<h2>Positions</h2>\n<ul class="entries">\n')
        out += [_position(x, org, v["refs"], period) for x in p.positions]
        out.append("</ul>\n")
    out += _publications(v)
    out += _later_sections(p, org, v["venues"])
    return out


def _account(p: Any, a: Any) -> str:
    if not a.href:
        return f'  <li class="account">{t(a.icon)}<span>{t(a.label)}: {t(a.username)}</span></li>\n'
    if a.service == "homepage":
        label = f"Homepage of {t(p.name)}"
    else:
        label = f"{t(p.name)} on {t(a.label)}: {t(a.username)}"
    return (
        f'  <li class="account"><a href="{t(a.href)}" rel="me" aria-label="{label}">'
        f"{t(a.icon)}<span>{t(a.label)}</span></a></li>\n"
    )


def _education(e: Any, org: Any, refs: Any, period: Any) -> str:
    out = [f"  <li><strong>{t(org(e.institution))}</strong>"]
    if e.degree:
        out.append(f", {t(e.degree)}")
    if e.field:
        out.append(f" in {t(e.field)}")
    if e.unit:
        out.append(f", {t(e.unit)}")
    if e.program:
        out.append(f" ({t(e.program)})")
    if e.status in ("in-progress", "expected", "incomplete"):
        out.append(f' <span class="tag">{t(_EDUCATION_STATUS[e.status])}</span>')
    out.append(f' <span class="when">{t(period(e.start, e.end))}</span>\n')
    if e.advisors:
        s = "s" if len(e.advisors) > 1 else ""
        out.append(f"<br>Advisor{s}: {_people(refs(e.advisors))}")
    if e.co_advisors:
        s = "s" if len(e.co_advisors) > 1 else ""
        out.append(f"<br>Co-advisor{s}: {_people(refs(e.co_advisors))}")
    if e.gpa or e.rank:
        rank = f" ({t(e.rank)})" if e.rank else ""
        out.append(f"<br>GPA: {t(e.gpa or '')}{rank}")
    out += [f"<br>{t(n)}" for n in e.notes]
    out.append("  </li>\n")
    return "".join(out)


def _position(x: Any, org: Any, refs: Any, period: Any) -> str:
    out = [f"  <li><strong>{t(org(x.organization))}</strong>"]
    if x.unit:
        out.append(f", {t(org(x.unit))}")
    if x.role:
        out.append(f": {t(x.role)}")
    if x.location:
        out.append(f", {t(x.location)}")
    out.append(f' <span class="when">{t(period(x.start, x.end))}</span>\n')
    if x.mentors:
        s = "s" if len(x.mentors) > 1 else ""
        out.append(f"<br>Mentor{s}: {_people(refs(x.mentors))}")
    if x.supervisors:
        out.append(f"<br>Advisor: {_people(refs(x.supervisors))}")
    if x.description:
        out.append(f"<br>{t(x.description)}")
    if x.highlights:
        out.append("<ul>" + "".join(f"<li>{t(h)}</li>" for h in x.highlights) + "</ul>")
    out.append("  </li>\n")
    return "".join(out)


def _publications(v: dict[str, Any]) -> list[str]:
    count = v["count"]
    out = [
        f"<h2>Publications</h2>\n<p>{t(count)} publication{'s' if count != 1 else ''}. "
        '<abbr title="equal contribution">*</abbr> marks equal contribution.</p>\n'
        f'<div class="figures">\n<figure>{t(v["network"])}<figcaption>Most frequent '
        "co-authors (papers together)</figcaption></figure>\n"
        f"<figure>{t(v['chart'])}<figcaption>Publications per year</figcaption></figure>\n"
        "</div>\n"
    ]
    if v["selected"]:
        out.append('<h3>Selected publications</h3>\n<ul class="entries selected">\n')
        for pub in v["selected"]:
            venue = f", <em>{t(pub.venue)}</em>" if pub.venue else ""
            out.append(
                f'  <li><a href="../publication/{t(pub.key)}.html"><bdi>{t(pub.title)}</bdi>'
                f"</a>{venue}</li>\n"
            )
        out.append("</ul>\n")
    entry = v["entry"]
    for year, pubs in v["years"]:
        out.append(f'<h3>{t(year)}</h3>\n<ol class="pubs">\n')
        out += [t(entry(pub)) for pub in pubs]
        out.append("</ol>\n")
    return out


def _later_sections(p: Any, org: Any, venues: Any) -> list[str]:
    """Projects, talks, awards, teaching, service, skills and the rest."""
    out: list[str] = []
    if p.projects:
        out.append('<h2>Projects</h2>\n<ul class="entries">\n')
        for x in p.projects:
            out.append(f"  <li><strong>{t(x.name)}</strong>")
            if x.date:
                out.append(f' <span class="when">{t(x.date)}</span>')
            if x.deployed_at:
                out.append(f" (deployed at {', '.join(t(org(o)) for o in x.deployed_at)})")
            if x.description:
                out.append(f"<br>{t(x.description)}")
            out += [f"<br>{t(n)}" for n in x.notes]
            out.append("  </li>\n")
        out.append("</ul>\n")
    if p.talks:
        out.append('<h2>Invited talks</h2>\n<ul class="entries">\n')
        for talk in p.talks:
            events = "".join(_event(e, org) for e in talk.events)
            out.append(f"  <li><strong>{t(talk.title)}</strong>\n    <ul>{events}</ul>\n  </li>\n")
        out.append("</ul>\n")
    if p.awards:
        out.append('<h2>Awards and honours</h2>\n<ul class="entries">\n')
        for a in p.awards:
            by = f", {t(org(a.awarded_by))}" if a.awarded_by else ""
            note = f" ({t(a.note)})" if a.note else ""
            date = f' <span class="when">{t(a.date)}</span>' if a.date else ""
            out.append(f"  <li>{t(a.name)}{by}{note}{date}</li>\n")
        out.append("</ul>\n")
    if p.teaching:
        out.append('<h2>Teaching</h2>\n<ul class="entries">\n')
        for c in p.teaching:
            at = f", {t(org(c.institution))}" if c.institution else ""
            terms = f' <span class="when">{t(_join(c.terms))}</span>' if c.terms else ""
            out.append(f"  <li>{t(c.role)}, {t(c.course)}{at}{terms}</li>\n")
        out.append("</ul>\n")
    if p.service:
        out.append('<h2>Service</h2>\n<ul class="entries">\n')
        for s in p.service:
            year = f" {t(s.year)}" if s.year and not s.as_printed else ""
            out.append(f"  <li>{t(s.role)}: {t(s.as_printed or venues(s.venues))}{year}</li>\n")
        out.append("</ul>\n")
    if p.skills:
        out.append('<h2>Skills</h2>\n<dl class="facts">\n')
        out += [
            f"  <dt>{t(g.category or 'Skills')}</dt><dd>{t(_join(g.items))}</dd>\n"
            for g in p.skills
        ]
        out.append("</dl>\n")
    if p.other:
        out.append("<h2>Other</h2>\n")
        out += [f"<p>{t(o)}</p>\n" for o in p.other]
    return out


def _event(e: Any, org: Any) -> str:
    host = f", {t(org(e.host))}" if e.host else ""
    date = f' <span class="when">{t(e.date)}</span>' if e.date else ""
    return f"<li>{t(e.event)}{host}{date}</li>"
