"""The output formats: one table that every writer, path, link and server rule reads.

Invariant: the RDF formats kg writes (whole-graph dumps, every thing's description files,
the person files), links to (pages, the index, Link headers), negotiates (`kg serve`, the
nginx and Apache recipes) and announces (the VoID description's distributions) are the
rows of `RDF_FORMATS`, in this order; the first is the default description. No other module
lists the extensions or their media types (tests/test_scheme.py checks this with ast).
Adding a row needs a writer of that `name` in `kg.publish.export.WRITERS` (a test checks
every row has one) and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    ext: str  # the file extension, without the dot
    media: str  # the media type served and announced
    label: str  # how a page names it in a link
    abbr: str  # how the index names the whole-graph dump
    name: str  # the writer (kg.publish.export.WRITERS) and rdflib's parser name


TURTLE = Format("ttl", "text/turtle", "Turtle", "TTL", "turtle")
JSONLD = Format("jsonld", "application/ld+json", "JSON-LD", "JSON-LD", "json-ld")
NTRIPLES = Format("nt", "application/n-triples", "N-Triples", "NT", "nt")
RDF_FORMATS: tuple[Format, ...] = (TURTLE, JSONLD, NTRIPLES)
HTML = Format("html", "text/html", "HTML", "HTML", "html")

EXTENSIONS: tuple[str, ...] = tuple(f.ext for f in RDF_FORMATS)
BY_EXTENSION: dict[str, Format] = {f.ext: f for f in (HTML, *RDF_FORMATS)}
MEDIA_TYPES: dict[str, str] = {f.ext: f.media for f in (HTML, *RDF_FORMATS)}


def by_media(media: str) -> Format | None:
    """The format served as `media`, or None."""
    return next((f for f in (HTML, *RDF_FORMATS) if f.media == media), None)
