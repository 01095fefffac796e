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
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import cast

from rdflib import Literal, URIRef
from rdflib.term import Identifier, Node

from kg.display import BIDI_CONTROLS
from kg.graph.namespaces import KG, RDF, SCHEMA, XSD
from kg.graph.triples import GraphLike, Triples
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


_SCHEMA = str(SCHEMA)
_AFTER = len(_SCHEMA)
_XSD_STRING, _XSD_INTEGER, _XSD_BOOLEAN = str(XSD.string), str(XSD.integer), str(XSD.boolean)
_SKIPPED = frozenset(map(str, SKIPPED))
_REFERENCE_PROPS = (SCHEMA.name, SCHEMA.url)
# one subject's predicates and their objects (rdflib's terms: strings with an order)
Facts = Mapping[Identifier, Collection[Identifier]]


class Referenced:
    """What the markup of every page says alike about a node it refers to (its types,
    name and address), made once per process and graph: a venue, an organization or a
    co-author is looked up once, not again in every article that mentions it.

    The memo belongs to one graph that does not change while it is used (a build's
    `SiteBuilder`); its values are shared by the documents that contain them, and no
    caller changes a reference once made (the documents are only serialized)."""

    def __init__(self) -> None:
        self.refs: dict[Node, dict] = {}
        # each work's article as `profile_script` writes it (escaped, two levels deep):
        # a work is on the page of each of its authors
        self.articles: dict[Node, str] = {}


def _facts(graph: GraphLike) -> Callable[[Node], Facts]:
    """A subject's predicates -> objects: the index itself for `Triples`; rdflib's
    graphs are read through `predicate_objects`."""
    if isinstance(graph, Triples):
        return cast("Callable[[Node], Facts]", graph.describe)

    def facts(s: Node) -> Facts:
        found: dict[Identifier, list[Identifier]] = {}
        for p, o in cast("Iterator[tuple[Identifier, Identifier]]", graph.predicate_objects(s)):
            found.setdefault(p, []).append(o)
        return found

    return facts


class _Walker:
    """Walks the graph as `node` describes. Predicates are ordered by their IRI (the
    order rdflib gives two `URIRef`s, a string comparison), a predicate's objects by
    rdflib's term order; only a predicate with several objects needs that sort."""

    def __init__(
        self, graph: GraphLike, owner_prefix: str, referenced: Referenced | None = None
    ) -> None:
        self.graph = graph
        self.owner_prefix = owner_prefix
        self.facts = _facts(graph)
        self.refs = (referenced or Referenced()).refs

    def value(self, key: str, o: Node, depth: int) -> object:
        if isinstance(o, Literal):
            return self.literal(key, o)
        assert isinstance(o, URIRef)
        if key in IRI_COERCED:  # coerced to @id by the official context
            return str(o)
        if str.startswith(o, self.owner_prefix) and depth < 4:
            return self.node(o, depth + 1)
        return self.reference(o)

    def literal(self, key: str, o: Literal) -> object:
        language = o.language
        if language:
            return {"@value": str(o), "@language": language}
        datatype = o.datatype
        if datatype is None or str.__eq__(datatype, _XSD_STRING):
            return {"@value": str(o)} if key in COERCED else str(o)
        if str.__eq__(datatype, _XSD_INTEGER):
            return int(o)
        if str.__eq__(datatype, _XSD_BOOLEAN):
            return bool(o.toPython())
        return {"@value": str(o), "@type": str(datatype)}

    def types(self, facts: Facts) -> list[str]:
        return sorted(
            str(t)[_AFTER:] for t in facts.get(RDF.type, ()) if str.startswith(t, _SCHEMA)
        )

    def reference(self, s: URIRef) -> dict:
        ref = self.refs.get(s)
        if ref is None:
            ref = self.refs[s] = self._reference(s)
        return ref

    def _reference(self, s: URIRef) -> dict:
        facts = self.facts(s)
        ref: dict = {"@id": str(s)}
        types = self.types(facts)
        if types:
            ref["@type"] = types[0] if len(types) == 1 else types
        for prop in _REFERENCE_PROPS:
            values = facts.get(prop)
            if values:
                key = str(prop)[_AFTER:]
                first = next(iter(values)) if len(values) == 1 else sorted(values)[0]
                ref[key] = self.value(key, first, 99)
        return ref

    def node(self, s: URIRef, depth: int = 0, skip: frozenset = frozenset()) -> dict:
        facts = self.facts(s)
        out: dict = {"@id": str(s)}
        types = self.types(facts)
        if types:
            out["@type"] = types[0] if len(types) == 1 else types
        skipped = _SKIPPED | {str(p) for p in skip} if skip else _SKIPPED
        shown = sorted(
            (str(p), p) for p in facts if str.startswith(p, _SCHEMA) and str(p) not in skipped
        )
        for iri, p in shown:
            key = iri[_AFTER:]
            objects = facts[p]
            if len(objects) == 1:
                out[key] = self.value(key, next(iter(objects)), depth)
            else:
                out[key] = [self.value(key, o, depth) for o in sorted(objects)]
        return out


def ordered_authors(graph: GraphLike, work: URIRef) -> list[URIRef]:
    facts = _facts(graph)
    ranked: list[tuple[int, URIRef]] = []
    for a in facts(work).get(KG.authorship, ()):
        slot = facts(a)
        rank, agent = slot.get(KG.rank), slot.get(KG.author)
        if rank and agent:  # an xsd:integer literal and an IRI (the first of each)
            ranked.append((int(cast(Literal, next(iter(rank)))), cast(URIRef, next(iter(agent)))))
    return [agent for _, agent in sorted(ranked)]


def article(graph: GraphLike, work: URIRef, referenced: Referenced | None = None) -> dict:
    """A ScholarlyArticle with every author in printed order (each a Person with name, url)."""
    walker = _Walker(graph, str(work) + "/", referenced)
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
    graph: GraphLike,
    person: URIRef,
    page: URIRef,
    address: str | None = None,
    referenced: Referenced | None = None,
) -> dict:
    """One JSON-LD document: the ProfilePage, the full Person, and every publication.

    `address`: the page that will carry the markup when it is not kg's own page (a
    person's homepage, for `kg embed`): the ProfilePage is then that page.
    `referenced`: what a process has said of referenced nodes already (`Referenced`).
    """
    referenced = referenced or Referenced()
    profile = _profile_page(graph, person, page, address, referenced)
    items = [profile] + [article(graph, w, referenced) for w in works_of(graph, person)]
    return {"@context": "https://schema.org", "@graph": items}


def _profile_page(
    graph: GraphLike, person: URIRef, page: URIRef, address: str | None, referenced: Referenced
) -> dict:
    """The ProfilePage with its main entity, the full Person."""
    walker = _Walker(graph, str(person) + "/", referenced)
    profile = walker.node(page, skip=frozenset({SCHEMA.mainEntity}))
    if address is not None:
        profile["@id"] = profile["url"] = address
    profile["mainEntity"] = walker.node(person)
    return profile


ARTICLES_KEPT = 5_000  # the article texts one process keeps, at most (then it starts again)
_GRAPH_HEAD = '{\n  "@context": "https://schema.org",\n  "@graph": [\n    '


def profile_script(graph: GraphLike, person: URIRef, page: URIRef, referenced: Referenced) -> str:
    """`script_tag(profile_markup(graph, person, page, referenced=referenced))` made of
    its items' texts, each work's article made and written once per process
    (`Referenced.articles`): an indented JSON document is its items' texts, each
    written at its depth, joined; the escapes are of single characters."""
    profile = _profile_page(graph, person, page, None, referenced)
    texts = [_item_text(profile)]
    kept = referenced.articles
    for work in works_of(graph, person):
        text = kept.get(work)
        if text is None:
            if len(kept) >= ARTICLES_KEPT:
                kept.clear()
            text = kept[work] = _item_text(article(graph, work, referenced))
        texts.append(text)
    body = _GRAPH_HEAD + ",\n    ".join(texts) + "\n  ]\n}"
    return f'<script type="application/ld+json">\n{body}\n</script>'


def _item_text(item: dict) -> str:
    """An item of the document's `@graph`, as `script_tag` writes it."""
    return escape_json_for_html(dumps(item, depth=2))


def article_markup(graph: GraphLike, work: URIRef, referenced: Referenced | None = None) -> dict:
    return {"@context": "https://schema.org", **article(graph, work, referenced)}
