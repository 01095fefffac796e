"""The render state's whole-graph products made in proportion (decision 0061): each equals
the one the whole walk makes, on the seed graph and on subjects chosen to break a
shortcut (IRIs that are prefixes of others, nested things, blank nodes, IRIs outside
the base, the base itself)."""

from __future__ import annotations

from rdflib import BNode, Literal, URIRef

from kg.graph.triples import Triples
from kg.publish.fingerprint import SubjectChunks
from kg.publish.subjectset import Layout, made_whole, subject_layout

BASE = "https://example.org/"
NAME = URIRef("http://schema.org/name")


def _layout(graph: Triples, base: str) -> Layout:
    chunks = SubjectChunks(graph)
    return subject_layout(chunks.order, base, chunks.under)


def _assert_same(found: Layout, whole: Layout) -> None:
    assert found.tops == whole.tops
    assert found.pages == whole.pages
    assert found.canonical == whole.canonical
    assert list(found.owned) == list(whole.owned)
    for top, nodes in whole.owned.items():  # each list: the thing first, then a set
        assert found.owned[top][0] == nodes[0] == top
        assert sorted(found.owned[top]) == sorted(nodes)


def test_layout_equals_the_whole_walk_on_the_seed_graph(seed_build, repo_config):
    graph = seed_build[1].triples
    found, whole = _layout(graph, repo_config.base_iri), made_whole(graph, repo_config.base_iri)
    _assert_same(found, whole)
    assert len(found.tops) > 20 and len(found.canonical) == len(set(graph.subjects()))


def test_layout_equals_the_whole_walk_where_text_and_iri_order_differ():
    paths = [
        "a",  # `<…a/b>` sorts before `<…a>` by text, after it by IRI
        "a/b",
        "a/b/c",
        "a-b",  # `-` and `.` sort before `/` and `>`
        "a.b/1",
        "a0",
        "x/y/z",  # `x` is no subject: `x/y` is the thing, `x/y/z` its own
        "x/y",
        "x/q/r",  # no ancestor a subject: a thing of its own
        "topic/t",
        "topic/t-2",
        "topic/t/2024",
        "",  # the base itself: not a thing
    ]
    subjects = [URIRef(BASE + p) for p in paths]
    subjects += [URIRef("https://other.example/a"), BNode("b1"), BNode("a0"), BNode("z")]
    graph = Triples((s, NAME, Literal(str(i))) for i, s in enumerate(reversed(subjects)))
    found = _layout(graph, BASE)
    _assert_same(found, made_whole(graph, BASE))
    # by hand: the things with a page, and what `a` and `x/y` own
    assert [str(t)[len(BASE) :] for t in found.tops] == [
        "a",
        "a-b",
        "a.b/1",
        "a0",
        "topic/t",
        "topic/t-2",
        "x/q/r",
        "x/y",
    ]
    assert sorted(map(str, found.owned[URIRef(BASE + "a")])) == [
        BASE + p for p in ("a", "a/b", "a/b/c")
    ]
    assert found.owned[URIRef(BASE + "x/y")] == [URIRef(BASE + "x/y"), URIRef(BASE + "x/y/z")]
    assert found.canonical[:3] == [BNode("a0"), BNode("b1"), BNode("z")]
