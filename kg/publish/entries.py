"""kg's own `person-entry.html.j2` written in Python: a person page's publication entry.

Invariant: `person_entry(view)` is the text `person-entry.html.j2` (kg's, in
kg/publish/templates) renders for `pub=view` in the site's environment, byte for byte:
the same pieces, each value through `page_text` (what the environment writes for
`{{ value }}`), the template's whitespace after `trim_blocks` and `lstrip_blocks`, and
Jinja's tests (a value's truth). It is used only when the environment's
`person-entry.html.j2` is kg's file (`is_kg_template`): a project's own template is
rendered by Jinja. A person page shows one entry per work (11,394 at 1k); a Jinja render
of each made a context and a loop object per entry (decision 0065). Tested against the
template on generated views (tests/test_pageenv.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Template

from kg.publish.pageenv import page_text

KG_TEMPLATES = Path(__file__).parent / "templates"


def is_kg_template(template: Template, name: str) -> bool:
    """Whether `template` is kg's own file `name` (not a project's of the same name)."""
    return template.filename is not None and Path(template.filename) == KG_TEMPLATES / name


def person_entry(pub: Any) -> str:
    """`person-entry.html.j2` for the view `pub` (a `PublicationView`)."""
    t = page_text
    out = ['  <li><a href="../publication/', t(pub.key), '.html"><bdi>', t(pub.title)]
    out.append("</bdi></a><br>\n")
    last = len(pub.authors) - 1
    for i, a in enumerate(pub.authors):
        if a.href and not a.is_self:
            out += ('<a href="', t(a.href), '"><bdi>', t(a.name), "</bdi></a>")
        elif a.is_self:
            out += ('<span class="self"><bdi>', t(a.name), "</bdi></span>")
        else:
            out += ("<bdi>", t(a.name), "</bdi>")
        if a.equal:
            out.append('<abbr title="equal contribution">*</abbr>')
        if a.annotation:
            out += (" (", t(a.annotation), ")")
        if i != last:
            out.append(", ")
    out += ("<br>\n    <em>", t(pub.venue), "</em>")
    if pub.status:
        out += (' <span class="tag">', t(pub.status), "</span>")
    for note in pub.notes:
        out += (' <span class="tag">', t(note), "</span>")
    if pub.links:
        out += ('<ul class="links" aria-label="Links for ', t(pub.title), '">')
        for link in pub.links:
            out += ('<li><a href="', t(link.href), '">', t(link.text), "</a></li>")
        out.append("</ul>")
    out.append("  </li>\n")
    return "".join(out)
