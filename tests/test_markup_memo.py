"""The page markup's fast walk and its per-process memo say what a plain walk says.

`kg.publish.markup` reads `Triples`' index directly, sorts only a predicate's several
objects, and remembers each referenced node's JSON (`Referenced`) for every page a
process renders. The oracle here is the plain walk the module did before (every
triple of a node through `predicate_objects`, sorted with rdflib's term order, every
reference looked up again), on an rdflib `Graph` of the same triples: each person's
and each publication's markup must be the same document, and its text the same bytes,
on the seed data and on a generated corpus, with one memo shared by every page.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.term import Identifier, Node

from kg import scheme
from kg.bench.synth import generate
from kg.config import load_config
from kg.graph.namespaces import RDF, SCHEMA, XSD
from kg.pipeline import build_graph
from kg.publish import markup
from kg.publish.jsontext import dumps
from kg.publish.markup import (
    COERCED,
    IRI_COERCED,
    SKIPPED,
    Referenced,
    article_markup,
    ordered_authors,
    profile_markup,
    profile_script,
    script_tag,
    works_of,
)


class _PlainWalker:
    """The walk as it was written first: the oracle."""

    def __init__(self, graph: Graph, owner_prefix: str) -> None:
        self.graph, self.owner_prefix = graph, owner_prefix

    def value(self, key: str, o: Node, depth: int) -> object:
        if isinstance(o, Literal):
            return self.literal(key, o)
        assert isinstance(o, URIRef)
        if key in IRI_COERCED:
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
        schema = str(SCHEMA)
        found = self.graph.objects(s, RDF.type)
        return sorted(str(t)[len(schema) :] for t in found if str(t).startswith(schema))

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


def _plain_article(graph: Graph, work: URIRef) -> dict:
    walker = _PlainWalker(graph, str(work) + "/")
    out = walker.node(work, skip=frozenset({SCHEMA.author}))
    out["author"] = [walker.reference(a) for a in ordered_authors(graph, work)]
    return out


def _plain_profile(graph: Graph, person: URIRef, page: URIRef) -> dict:
    walker = _PlainWalker(graph, str(person) + "/")
    profile = walker.node(page, skip=frozenset({SCHEMA.mainEntity}))
    profile["mainEntity"] = walker.node(person)
    items = [profile] + [_plain_article(graph, w) for w in works_of(graph, person)]
    return {"@context": "https://schema.org", "@graph": items}


def _same_markup_everywhere(resolution, triples, base: str) -> int:
    """Every person's and publication's markup, fast with one shared memo == plain."""
    graph = Graph()
    for triple in triples:
        graph.add(triple)
    shared = Referenced()
    checked = 0
    for profile in resolution.dataset.profiles:
        person = URIRef(scheme.person(base, profile.slug))
        page = URIRef(scheme.profile(base, profile.slug))
        fast = profile_markup(triples, person, page, referenced=shared)
        plain = _plain_profile(graph, person, page)
        assert fast == plain, profile.slug
        assert dumps(fast) == dumps(plain)
        # the page's script: each work's article written once per memo, the same bytes
        assert profile_script(triples, person, page, shared) == script_tag(plain), profile.slug
        assert profile_markup(graph, person, page) == plain  # rdflib's graphs: same walk
        checked += 1
    for key in sorted(resolution.publications):
        work = URIRef(scheme.publication(base, key))
        fast = article_markup(triples, work, shared)
        plain = {"@context": "https://schema.org", **_plain_article(graph, work)}
        assert dumps(fast) == dumps(plain), key
        checked += 1
    assert shared.refs  # the memo was used: venues, co-authors
    assert shared.articles  # and the articles' texts, for the co-authors' pages
    return checked


def test_seed_markup_is_the_plain_walks(seed_build, repo_config):
    resolution, mapped = seed_build
    checked = _same_markup_everywhere(resolution, mapped.triples, repo_config.base_iri)
    assert checked == len(resolution.dataset.profiles) + len(resolution.publications)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    generate(root, 30, seed=11)
    config = load_config(root)
    return config, build_graph(config)


def test_generated_corpus_markup_is_the_plain_walks(corpus):
    config, (resolution, mapped) = corpus
    assert len(resolution.publications) > 30
    _same_markup_everywhere(resolution, mapped.triples, config.base_iri)


def test_a_reference_is_made_once_per_memo(corpus):
    """The second page that names a venue or co-author reads it from the memo: the same
    object, not a new walk."""
    config, (resolution, mapped) = corpus
    shared = Referenced()
    first, second = sorted(resolution.publications)[:2]
    docs = [
        article_markup(mapped.triples, URIRef(scheme.publication(config.base_iri, k)), shared)
        for k in (first, second, first)
    ]
    assert docs[0] == docs[2]
    assert all(a is b for a, b in zip(docs[0]["author"], docs[2]["author"], strict=True))
    made = len(shared.refs)
    article_markup(mapped.triples, URIRef(scheme.publication(config.base_iri, first)), shared)
    assert len(shared.refs) == made
    assert markup.Referenced().refs == {}  # a fresh memo knows nothing


def test_a_pickled_site_starts_with_an_empty_memo(seed_build, repo_config):
    """A dask worker receives the site pickled: the memo does not travel (a cache of this
    process) and the pages it renders there are the same bytes."""
    import pickle

    from kg.publish.site import SiteBuilder

    resolution, mapped = seed_build
    site = SiteBuilder(resolution, mapped.triples, repo_config.base_iri)
    profile = resolution.dataset.profiles[0]
    page = site.person_page(profile)
    assert site.referenced.refs
    copy = pickle.loads(pickle.dumps(site))
    assert copy.referenced.refs == {}
    assert copy.person_page(profile) == page
