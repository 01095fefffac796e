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

EXTENSIONS = ("ttl", "jsonld", "nt")
MEDIA_TYPES = {
    "html": "text/html",
    "ttl": "text/turtle",
    "jsonld": "application/ld+json",
    "nt": "application/n-triples",
}
DUMP = "graph"  # site/graph.ttl ... and dist/graph.ttl ...
DATASET = "dataset"  # the VoID dataset: {base}dataset, site/dataset.* and site/void.ttl
SPARQL = "sparql"  # the SPARQL endpoint: {base}sparql


def path_of(iri: str, base: str) -> str | None:
    """`person/x` for `{base}person/x`; None for an IRI outside the base."""
    if not iri.startswith(base) or len(iri) == len(base):
        return None
    return iri[len(base) :]


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
            tops.append(URIRef(base + path))
    return sorted(tops)


def relative_root(path: str) -> str:
    """`../` for each folder between a page at `<path>.html` and the web root."""
    return "../" * path.count("/")


def alternates(path: str) -> list[tuple[str, str]]:
    """(media type, href relative to the page) of a page's description files."""
    name = path.rsplit("/", 1)[-1]
    return [(MEDIA_TYPES[ext], f"{name}.{ext}") for ext in EXTENSIONS]
