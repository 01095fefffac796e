"""Where every IRI the graph mints is published (docs/decisions/0011-dereferenceable-iris.md).

The web root is `dist/site/`. A thing with IRI `{base}<path>` is published at `<path>`
relative to the web root: `<path>.html` (its page) and `<path>.ttl`, `<path>.jsonld`,
`<path>.nt` (its description). The extensionless `<path>` serves the page by default and
a description by content negotiation (`kg serve`, or the web server's configuration).

A *thing with a page* is a subject IRI under the base none of whose ancestors (the IRI
cut at a `/`) is itself a subject: `person/<slug>`, `publication/<key>`, `org/<key>`,
`venue/<key>`, `topic/<slug>`, `topic-set/<slug>`, `course/<org>/<slug>`,
`profile/<slug>`, `dataset`. Every other IRI under the base is minted under one of them
(`person/<slug>/award/1`, `venue/<key>/2024`) and is described in its owner's files;
it answers 303 See Other to its owner.
"""

from __future__ import annotations

from collections.abc import Container, Iterable

from rdflib import URIRef
from rdflib.term import Node

from kg.formats import EXTENSIONS, MEDIA_TYPES, RDF_FORMATS, TURTLE
from kg.scheme import DATASET, DUMP, SPARQL, VOID, file_path, mint, path_of

__all__ = ["DATASET", "DUMP", "EXTENSIONS", "MEDIA_TYPES", "SPARQL", "path_of"]


def owner_path(path: str, pages: Container[str]) -> str | None:
    """The nearest ancestor of `path` (cut at a `/`) that has a page, else None."""
    cut = path.rfind("/")
    while cut > 0:
        if path[:cut] in pages:
            return path[:cut]
        cut = path.rfind("/", 0, cut)
    return None


def page_things(subjects: Iterable[Node], base: str) -> list[URIRef]:
    """The subjects under `base` that get a page: those with no subject among their
    ancestors. Sorted by IRI."""
    paths = {p for s in subjects if isinstance(s, URIRef) and (p := path_of(str(s), base))}
    tops = []
    for path in paths:
        cut = path.find("/")
        while cut != -1 and path[:cut] not in paths:
            cut = path.find("/", cut + 1)
        if cut == -1:
            tops.append(URIRef(mint(base, path)))
    return sorted(tops)


def relative_root(path: str) -> str:
    """`../` for each folder between a page at `<path>.html` and the web root."""
    return "../" * path.count("/")


def alternates(path: str) -> list[tuple[str, str]]:
    """(media type, href relative to the page) of a page's description files."""
    name = path.rsplit("/", 1)[-1]
    return [(MEDIA_TYPES[ext], file_path(name, ext)) for ext in EXTENSIONS]


def data_links(path: str, prefix: str = "") -> list[tuple[str, str, str]]:
    """(label, media type, href) of a thing's description files, for a page's "Data"
    line: `prefix` + `<path>.<ext>` for every RDF format."""
    return [(f.label, f.media, prefix + file_path(path, f.ext)) for f in RDF_FORMATS]


def void_link() -> tuple[str, str]:
    """(media type, href) of the VoID description (Turtle), for the index page."""
    return TURTLE.media, file_path(VOID, TURTLE.ext)


def dump_links() -> list[tuple[str, str]]:
    """(label, href) of the whole-graph dumps, for the index page."""
    return [(f.abbr, file_path(DUMP, f.ext)) for f in RDF_FORMATS]
