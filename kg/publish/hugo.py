"""A person's publications as Hugo Blox publication pages (front matter only).

Invariant: `write_pages` creates the folder it is given (which must not exist) and in it
one `<citation key>/index.md` per publication, each created new (`O_EXCL`, no link
followed), so nothing is overwritten and nothing is written outside the folder. Values
are written as JSON strings, which YAML reads as double-quoted scalars, so no title can
break the front matter. `kg import hugo` reads the folder back (decision 0023).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kg.errors import UsageError
from kg.publish.citation import CSL_TYPES, Citable, Citations, _unpublished, venue_name
from kg.resolve.identity import Resolution

EXTRA = ("arxiv", "pages", "volume", "issue", "publisher")
OWNER = "admin"  # Hugo Blox's name for the site's owner
MEDIA = (("pdf", "url_pdf"), ("code", "url_code"), ("slides", "url_slides"), ("video", "url_video"))
LINK_FIELDS = {"Poster": "url_poster", "Dataset": "url_dataset", "Project": "url_project"}
LINK_FIELDS["Source"] = "url_source"


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def front_matter(c: Citable, owner: str) -> str:
    """One publication's `index.md`: Hugo Blox's fields, then an empty body."""
    authors = [OWNER if a.name == owner else a.name for a in c.authors]
    lines = ["---", f"title: {_q(c.title)}", "authors:"]
    lines += [f"  - {_q(a)}" for a in authors]
    if c.year and not _unpublished(c):
        lines.append(f"date: {_q(f'{c.year}-01-01T00:00:00Z')}")
    lines.append(f"publication_types: [{_q(CSL_TYPES.get(c.type, 'article'))}]")
    if venue_name(c):
        lines.append(f"publication: {_q('*' + (venue_name(c) or '') + '*')}")
    for name, value in (("doi", c.doi), ("abstract", c.abstract)):
        if value:
            lines.append(f"{name}: {_q(value)}")
    for name in EXTRA:  # not Hugo Blox's own keys (its templates ignore them): kg's facts
        if getattr(c, name):
            lines.append(f"{name}: {_q(getattr(c, name))}")
    if c.selected:
        lines.append("featured: true")
    lines += [f"{key}: {_q(getattr(c, name))}" for name, key in MEDIA if getattr(c, name)]
    others = []
    for label, url in c.links:
        if url and label in LINK_FIELDS:
            lines.append(f"{LINK_FIELDS[label]}: {_q(url)}")
        elif url:
            others.append(f"  - {{name: {_q(label)}, url: {_q(url)}}}")
    if others:
        lines += ["links:", *others]
    return "\n".join([*lines, "---", ""])


def write_pages(out: Path, pages: dict[str, str]) -> list[Path]:
    """Create `out` and `out/<key>/index.md` for each page; refuse an existing `out`."""
    try:
        os.mkdir(out)
    except FileExistsError:
        raise UsageError(f"{out} exists; expected a new folder for the pages") from None
    except OSError as exc:
        raise UsageError(f"cannot create {out}: {exc.strerror}") from None
    written = []
    for key, text in sorted(pages.items()):
        os.mkdir(out / key)
        path = out / key / "index.md"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        written.append(path)
    return written


def hugo_pages(r: Resolution, slug: str) -> dict[str, str]:
    """Citation key -> `index.md` text, for each of the person's publications."""
    if slug not in {p.slug for p in r.dataset.profiles}:
        raise UsageError(f"no profile {slug!r} in data/profiles/")
    owner = r.persons[slug].name if slug in r.persons else slug
    return {c.key: front_matter(c, owner) for c in Citations(r).of(slug)}
