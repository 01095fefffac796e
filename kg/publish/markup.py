"""JSON-LD for web pages (what search engines read), cut from the graph itself.

Every statement in the markup is a triple of the downloadable graph: the markup is
built by walking the graph, never from the YAML, so the page and the dumps cannot
disagree. Only schema.org terms are used, with `"@context": "https://schema.org"`;
typed literals keep their XSD datatype as value objects, because the official
context would otherwise coerce dates to `schema:Date` (a page date is the graph's own
`xsd:gYear` / `xsd:gYearMonth` / `xsd:date` literal, never a `schema:Date`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import cast

from rdflib import Literal, URIRef
from rdflib.term import Identifier, Node

from kg.display import BIDI_CONTROLS
from kg.graph.namespaces import KG, RDF, SCHEMA, XSD
from kg.graph.triples import GraphLike
from kg.publish.jsontext import dumps

_JSON_IN_HTML = re.compile(f"[<>&\u2028\u2029{BIDI_CONTROLS}]")

# properties the official schema.org context coerces to IRIs ("@type": "@id")
IRI_COERCED = frozenset(
    {"url", "sameAs", "image", "contentUrl", "codeRepository", "embedUrl", "thumbnailUrl"}
)
# ... and to schema:Date: a date is written as a value object with its XSD type, which
# the context's coercion does not touch, so the page says what the graph says
DATE_COERCED = frozenset({"startDate", "endDate", "datePublished", "dateModified", "dateCreated"})
# every coerced property: a plain string there would not be read as text
COERCED = IRI_COERCED | DATE_COERCED | {"isPartOf", "birthDate", "additionalType"}
SKIPPED = frozenset(
    {SCHEMA.mainEntityOfPage, SCHEMA.subEvent, SCHEMA.subOrganization, SCHEMA.workFeatured}
)


def escape_json_for_html(text: str) -> str:
    """JSON that is safe inside <script>: <, >, &, U+2028, U+2029 and the bidi controls
    (kg.display) as \\u escapes, so the page source cannot be reordered either."""
    return _JSON_IN_HTML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def script_tag(document: dict) -> str:
    body = escape_json_for_html(dumps(document))
    return f'<script type="application/ld+json">\n{body}\n</script>'


class _Walker:
    def __init__(self, graph: GraphLike, owner_prefix: str) -> None:
        self.graph = graph
        self.owner_prefix = owner_prefix

    def value(self, key: str, o: Node, depth: int) -> object:
        if isinstance(o, Literal):
            return self.literal(key, o)
        assert isinstance(o, URIRef)
        if key in IRI_COERCED:  # coerced to @id by the official context
            return str(o)
        if str(o).startswith(self.owner_prefix) and depth < 4:
            return self.node(o, depth + 1)
        return self.reference(o)

    def literal(self, key: str, o: Literal) -> object:
        if o.language:
            return {"@value": str(o), "@language": o.language}
        if o.datatype in (None, XSD.string):
            return {"@value": str(o)} if key in COERCED else str(o)
        if o.datatype == XSD.integer:
            return int(o)
        if o.datatype == XSD.boolean:
            return bool(o.toPython())
        return {"@value": str(o), "@type": str(o.datatype)}

    def types(self, s: URIRef) -> list[str]:
        return sorted(
            str(t)[len(str(SCHEMA)) :]
            for t in self.graph.objects(s, RDF.type)
            if str(t).startswith(str(SCHEMA))
        )

    def reference(self, s: URIRef) -> dict:
        ref: dict = {"@id": str(s)}
        types = self.types(s)
        if types:
            ref["@type"] = types[0] if len(types) == 1 else types
        for prop in (SCHEMA.name, SCHEMA.url):
            values = sorted(cast("Iterator[Identifier]", self.graph.objects(s, prop)))
            if values:
                key = str(prop)[len(str(SCHEMA)) :]
                ref[key] = self.value(key, values[0], 99)
        return ref

    def node(self, s: URIRef, depth: int = 0, skip: frozenset = frozenset()) -> dict:
        out: dict = {"@id": str(s)}
        types = self.types(s)
        if types:
            out["@type"] = types[0] if len(types) == 1 else types
        grouped: dict[str, list] = {}
        for p, o in sorted(self.graph.predicate_objects(s)):
            if p == RDF.type or p in SKIPPED or p in skip or not str(p).startswith(str(SCHEMA)):
                continue
            key = str(p)[len(str(SCHEMA)) :]
            grouped.setdefault(key, []).append(self.value(key, o, depth))
        for key, values in grouped.items():
            out[key] = values[0] if len(values) == 1 else values
        return out


def ordered_authors(graph: GraphLike, work: URIRef) -> list[URIRef]:
    ranked: list[tuple[int, URIRef]] = []
    for a in graph.objects(work, KG.authorship):
        rank, agent = graph.value(a, KG.rank), graph.value(a, KG.author)
        if rank is not None and agent is not None:  # an xsd:integer literal and an IRI
            ranked.append((int(cast(Literal, rank)), cast(URIRef, agent)))
    return [agent for _, agent in sorted(ranked)]


def article(graph: GraphLike, work: URIRef) -> dict:
    """A ScholarlyArticle with every author in printed order (each a Person with name, url)."""
    walker = _Walker(graph, str(work) + "/")
    out = walker.node(work, skip=frozenset({SCHEMA.author}))
    out["author"] = [walker.reference(a) for a in ordered_authors(graph, work)]
    return out


def works_of(graph: GraphLike, person: URIRef) -> list[URIRef]:
    """The person's works (as author, or as a member of a group author), newest first."""
    works = set(cast("Iterator[URIRef]", graph.subjects(SCHEMA.author, person)))
    # and works by a group the person is a member of, which they list as their own
    works |= {
        cast(URIRef, w)
        for w in graph.subjects(SCHEMA.contributor, person)
        if graph.value(w, KG.authorship)
    }

    def key(w: URIRef) -> tuple:
        date = graph.value(w, SCHEMA.datePublished)
        return (-(int(str(date)[:4]) if date else 0), str(graph.value(w, SCHEMA.name)))

    return sorted(works, key=key)


def profile_markup(
    graph: GraphLike, person: URIRef, page: URIRef, address: str | None = None
) -> dict:
    """One JSON-LD document: the ProfilePage, the full Person, and every publication.

    `address`: the page that will carry the markup when it is not kg's own page (a
    person's homepage, for `kg embed`): the ProfilePage is then that page.
    """
    walker = _Walker(graph, str(person) + "/")
    profile = walker.node(page, skip=frozenset({SCHEMA.mainEntity}))
    if address is not None:
        profile["@id"] = profile["url"] = address
    profile["mainEntity"] = walker.node(person)
    items = [profile] + [article(graph, w) for w in works_of(graph, person)]
    return {"@context": "https://schema.org", "@graph": items}


def article_markup(graph: GraphLike, work: URIRef) -> dict:
    return {"@context": "https://schema.org", **article(graph, work)}
