"""kg's own `cv/cv.html.j2` written in Python: the HTML CV beside each person page.

Invariant: `cv_html(cv, back)` is the text Jinja renders from kg's template (in the
CV's HTML environment: autoescape, `finalize=isolate`, `trim_blocks`, `lstrip_blocks`)
for `cv=cv, back=back`, byte for byte: each `{{ value }}` through `page_text`, Jinja's
`join`, the template's whitespace, Jinja's truth. Its style sheet is read from the
template file. Used only when the environment's template is kg's file: a project's
`templates/cv/cv.html.j2` is rendered by Jinja. Tested against Jinja on the seeds and a
generated corpus (tests/test_page_memos.py); decision 0065.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from kg.publish.entries import KG_TEMPLATES
from kg.publish.pageenv import page_text as t
from kg.publish.pubpage import _join

TEMPLATE = "cv/cv.html.j2"


@cache
def _head() -> str:
    """The template's text from its style sheet to `<body>`, a constant."""
    source = (KG_TEMPLATES / TEMPLATE).read_text("utf-8")
    return source[source.index("<style>") : source.index("<body>\n") + len("<body>\n")]


def cv_html(cv: Any, back: Any = None) -> str:
    """The CV page `cv/cv.html.j2` renders for `cv` (`back`: the profile page's address)."""
    name = t(cv.name)
    out = [
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{name}: CV</title>\n"
        f'<meta name="description" content="Curriculum vitae of {name}">\n{_head()}'
    ]
    if back:
        out.append(f'<nav class="back"><a href="{t(back)}">← Profile page</a></nav>\n')
    out.append(f"<header>\n<h1><bdi>{name}</bdi>")
    out += [f' <span lang="{t(lang)}">{t(n)}</span>' for n, lang in cv.native_names]
    out.append("</h1>\n")
    if cv.headline:
        out.append(f"<p><em>{t(cv.headline)}</em></p>")
    out.append('<ul class="contact">\n')
    for c in cv.contact:
        text = f'<a href="{t(c.url)}">{t(c.text)}</a>' if c.url else t(c.text)
        out.append(f"  <li>{t(c.label)}: {text}</li>\n")
    out.append("</ul>\n</header>\n<main>\n")
    if cv.bio:
        out.append("<h2>About</h2>\n")
        out += [f"<p>{t(para)}</p>\n" for para in cv.bio.split("\n\n")]
    for s in cv.sections:
        out.append(f'<section id="{t(s.key)}">\n<h2>{t(s.heading)}</h2>\n')
        if s.key == "publications":
            out += _publications(cv, s)
        elif s.key == "interests":
            out.append(f"<p>{t(_join([i.lead for i in s.items]))}</p>\n")
        else:
            out.append('<ul class="entries">\n')
            out += [_item(s, i) for i in s.items]
            out.append("</ul>\n")
        out.append("</section>\n")
    out.append("</main>\n</body>\n</html>\n")
    return "".join(out)


def _publications(cv: Any, s: Any) -> list[str]:
    out: list[str] = []
    for g in s.groups:
        if len(s.groups) > 1 or g.heading != s.heading:
            out.append(f"<h3>{t(g.heading)}</h3>\n")
        out.append(f'<ol class="pubs" start="{t(g.papers[0].number)}">\n')
        out += [_paper(p) for p in g.papers]
        out.append("</ol>\n")
    if cv.legend:
        out.append(f"<p><small>{t(cv.legend)}</small></p>\n")
    return out


def _paper(p: Any) -> str:
    out = [f"  <li><strong>{t(p.title)}</strong><br>\n"]
    last = len(p.authors) - 1
    for i, a in enumerate(p.authors):
        me = ' class="me"' if a.me else ""
        out.append(f"<span{me}><bdi>{t(a.name)}</bdi></span>")
        if a.equal:
            out.append("*")
        if a.annotation:
            out.append(f" ({t(a.annotation)})")
        if i != last:
            out.append(", ")
    out.append("<br>\n")
    if p.venue:
        out.append(f'<span class="venue">{t(p.venue)}</span>')
    out += [f" [{t(n)}]" for n in p.notes]
    out += [f' <a href="{t(url)}">{t(label)}</a>' for label, url in p.links]
    out.append("</li>\n")
    return "".join(out)


def _item(s: Any, i: Any) -> str:
    when = f'<span class="when">{t(i.when)}</span>' if i.when else ""
    detail = f"{': ' if s.key == 'skills' else ', '}{t(i.detail)}" if i.detail else ""
    lines = "".join(f"<br>{t(line)}" for line in i.lines)
    return f"  <li>{when}<strong>{t(i.lead)}</strong>{detail}{lines}</li>\n"
