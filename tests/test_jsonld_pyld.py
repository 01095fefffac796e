"""kg's own JSON-LD writer against pyld (the JSON-LD reference implementation in Python)
as the oracle: on generated graphs, pyld must read back exactly the graph that was written.

The graphs mix what broke the writer before: blank nodes as subjects and objects, IRIs
whose scheme is one of the context's prefixes (`kg:x`), properties whose local name is a
prefix (`schema:kg`) or no term at all, integers of 10^21 and more, lexical forms JSON
cannot keep, and text with newlines and tabs. pyld never fetches anything: its document
loader refuses every URL.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyld import jsonld
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.compare import isomorphic

from kg.export import to_jsonld
from kg.namespaces import XSD


def _refuse(url, options=None):
    raise AssertionError(f"pyld tried to load {url}")


@pytest.fixture(autouse=True, scope="module")
def no_remote_contexts():
    previous = jsonld.get_document_loader()
    jsonld.set_document_loader(_refuse)
    yield
    jsonld.set_document_loader(previous)


def read_with_pyld(text: str) -> Graph:
    quads = jsonld.to_rdf(json.loads(text), {"format": "application/n-quads"})
    return Graph().parse(data=quads, format="nt")


IRIS = st.sampled_from(
    [
        "http://schema.org/Person",
        "https://kg.example.org/person/a",
        "https://kg.example.org/publication/p/author/1",
        "kg:thing",  # an IRI whose scheme is a context prefix
        "foaf:x",
        "urn:isbn:123",
        "https://w3id.org/kg-profiles/vocab#Authorship",
        "http://xmlns.com/foaf/0.1/Person",
    ]
).map(URIRef)
PREDICATES = st.sampled_from(
    [
        "http://schema.org/name",
        "http://schema.org/kg",  # local name = a prefix of the context
        "http://schema.org/xsd",
        "http://schema.org/",  # empty local name
        "http://schema.org/a/b",
        "http://schema.org/@id",
        "https://w3id.org/kg-profiles/vocab#rank",
        "http://xmlns.com/foaf/0.1///x",  # suffix that looks like an authority
        "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
        "http://example.org/p",
    ]
).map(URIRef)
BNODES = st.sampled_from(["b1", "b2", "b3"]).map(BNode)
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
LITERALS = st.one_of(
    TEXT.map(Literal),
    st.tuples(TEXT, st.sampled_from(["en", "zh", "de-ch"])).map(lambda t: Literal(t[0], lang=t[1])),
    st.integers(min_value=-(10**25), max_value=10**25).map(Literal),
    st.sampled_from([10**21, -(10**21), 10**21 - 1]).map(Literal),
    st.booleans().map(Literal),
    st.sampled_from(["2024", "1999"]).map(lambda y: Literal(y, datatype=XSD.gYear)),
    st.sampled_from(["1.50", "0.1"]).map(lambda d: Literal(d, datatype=XSD.decimal)),
    TEXT.map(lambda t: Literal(t, datatype=URIRef("kg:datatype"))),
)
TRIPLES = st.tuples(st.one_of(IRIS, BNODES), PREDICATES, st.one_of(IRIS, BNODES, LITERALS))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TRIPLES, min_size=1, max_size=12))
def test_pyld_reads_back_the_graph_kg_wrote(triples):
    graph = Graph()
    for triple in triples:
        graph.add(triple)
    assert isomorphic(read_with_pyld(to_jsonld(graph)), graph)


def test_the_seed_graph_reads_back_with_pyld(seed_build):
    graph = seed_build[1].graph
    assert isomorphic(read_with_pyld(to_jsonld(graph)), graph)


def test_blank_nodes_keep_their_shape():
    """A CONSTRUCT answer with blank nodes (kg query --format json) is written, not refused."""
    graph = Graph()
    a, b = BNode("a"), BNode("b")
    graph.add((a, URIRef("http://schema.org/knows"), b))
    graph.add((b, URIRef("http://schema.org/name"), Literal("B")))
    doc = json.loads(to_jsonld(graph))
    assert {node["@id"] for node in doc["@graph"]} == {"_:a", "_:b"}
    assert isomorphic(read_with_pyld(to_jsonld(graph)), graph)


def test_huge_integers_stay_integers():
    graph = Graph()
    graph.add((URIRef("http://e.org/s"), URIRef("http://schema.org/n"), Literal(10**21)))
    node = json.loads(to_jsonld(graph))["@graph"][0]
    assert node["n"] == {"@value": str(10**21), "@type": "xsd:integer"}
