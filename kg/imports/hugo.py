"""Hugo Blox (Academic) publication front matter -> a record.

A Hugo Blox site keeps each publication as `content/publication/<slug>/index.md` whose
YAML front matter holds `title`, `authors` (`admin` is the site's owner), `date`, `doi`,
`publication_types`, `publication` / `publication_short` (Markdown), `abstract`,
`featured`, the `url_pdf`, `url_code`, `url_slides`, `url_video`, `url_poster`,
`url_dataset`, `url_project`, `url_source` addresses and `links: [{name, url}]`. The
front matter is composed with kg's safe YAML reader (no tags, anchors or aliases).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kg.errors import InputError
from kg.imports.record import (
    Author,
    Bad,
    BadValue,
    Origin,
    Parsed,
    Work,
    arxiv_id,
    clean_doi,
    file_error,
    looks_like_group,
    squash,
    strip_marks,
    title_text,
    year_of,
)
from kg.ingest.yamlsafe import node_from_bytes

OWNER = "admin"  # Hugo Blox's name for the site's owner among `authors`
# publication_types: CSL names, or the numbers older Hugo Academic sites use
TYPES = {
    "paper-conference": "conference-paper",
    "1": "conference-paper",
    "article-journal": "journal-article",
    "2": "journal-article",
    "article": "preprint",
    "3": "preprint",
    "report": "report",
    "4": "report",
    "thesis": "thesis",
    "7": "thesis",
}
LINKS = {
    "url_poster": "Poster",
    "url_dataset": "Dataset",
    "url_project": "Project",
    "url_source": "Source",
}
_MARKDOWN = re.compile(r"[*_`]")


def parse_hugo(text: str, file: str) -> Parsed:
    """The publication of one Hugo Blox `index.md` (YAML front matter between `---`)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        if lines and lines[0].strip() == "+++":
            raise file_error(file, 1, "TOML front matter; expected YAML front matter (---)")
        raise file_error(file, 1, "expected Hugo front matter starting with a `---` line")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise file_error(file, 1, "the front matter has no closing `---` line")
    body = "".join(lines[1:end]).encode("utf-8")
    try:
        root = node_from_bytes(body, file)
    except InputError as exc:  # lines counted from the front matter's first line
        raise file_error(file, exc.problems[0].source.line + 1, exc.problems[0].message) from None
    values = _python(root)
    if not isinstance(values, dict):
        raise file_error(file, 2, "the front matter is not a mapping; expected `title: …`")
    origin = Origin(file, 2, str(values.get("title", ""))[:40])
    try:
        return Parsed(works=(_work(values, origin),))
    except BadValue as exc:
        return Parsed(bad=(Bad(origin, str(exc)),))


def _python(node: Node) -> Any:
    """Nodes as plain values: every scalar text (kg's reader resolves no types)."""
    if isinstance(node, MappingNode):
        return {_python(k): _python(v) for k, v in node.value}
    if isinstance(node, SequenceNode):
        return [_python(v) for v in node.value]
    assert isinstance(node, ScalarNode)
    return node.value


def _text(value: Any) -> str:
    return squash(value) if isinstance(value, str) else ""


def _work(values: dict, origin: Origin) -> Work:
    title = title_text(_text(values.get("title")))
    if not title:
        raise BadValue("no title; expected `title:`")
    authors = values.get("authors")
    if not isinstance(authors, list) or not authors:
        raise BadValue("no authors; expected `authors: [admin, …]`")
    kinds = values.get("publication_types") or []
    kind = TYPES.get(_text(kinds[0]) if isinstance(kinds, list) and kinds else "")
    venue = _MARKDOWN.sub("", _text(values.get("publication"))).removeprefix("In ").strip()
    short = _MARKDOWN.sub("", _text(values.get("publication_short"))).removeprefix("In ").strip()
    doi = clean_doi(_text(values.get("doi")))
    arxiv = arxiv_id(_text(values.get("arxiv"))) or (
        arxiv_id(venue) if "arxiv" in venue.lower() else None
    )
    return Work(
        title=title,
        authors=tuple(_author(a) for a in authors),
        origin=origin,
        type=kind,
        status="preprint" if kind == "preprint" else "published",
        venue=venue or None,
        series=short or None,
        year=year_of(_text(values.get("date"))[:4]),
        doi=doi,
        arxiv=arxiv,
        selected=_text(values.get("featured")).lower() == "true",
        abstract=_text(values.get("abstract")) or None,
        links=_links(values),
        pdf=_text(values.get("url_pdf")) or None,
        code=_text(values.get("url_code")) or None,
        slides=_text(values.get("url_slides")) or None,
        video=_text(values.get("url_video")) or None,
        # kg's own keys (kg export hugo), which Hugo Blox's templates ignore
        pages=_text(values.get("pages")) or None,
        volume=_text(values.get("volume")) or None,
        issue=_text(values.get("issue")) or None,
        publisher=_text(values.get("publisher")) or None,
    )


def _author(value: Any) -> Author:
    if not isinstance(value, str) or not value.strip():
        raise BadValue("an author that is not a name; expected `authors: [Name, …]`")
    name, equal, corresponding = strip_marks(value)
    return Author(name, equal, corresponding, group=looks_like_group(name))


def _links(values: dict) -> tuple[tuple[str, str], ...]:
    links = [(label, _text(values.get(key))) for key, label in LINKS.items() if values.get(key)]
    for link in values.get("links") or []:
        if isinstance(link, dict) and _text(link.get("url")):
            links.append((_text(link.get("name")) or "Link", _text(link.get("url"))))
    return tuple(links)


def with_owner(parsed: Parsed, name: str) -> Parsed:
    """`admin` among the authors is the profile's owner."""

    def owner(a: Author) -> Author:
        return dataclasses.replace(a, name=name) if a.name == OWNER else a

    works = tuple(
        dataclasses.replace(w, authors=tuple(owner(a) for a in w.authors)) for w in parsed.works
    )
    return dataclasses.replace(parsed, works=works)
