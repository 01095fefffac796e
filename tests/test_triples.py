"""`Triples` answers like an rdflib Graph; `jsontext.dumps` writes what json.dumps writes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from rdflib import Graph, Literal, URIRef
from rdflib.compare import isomorphic

from kg.graph.triples import Triples
from kg.publish.jsontext import dumps, string

iris = st.sampled_from([URIRef(f"https://e.org/{c}") for c in "abcde"])
objects = st.one_of(iris, st.text(max_size=8).map(Literal), st.integers().map(Literal))
triples = st.lists(st.tuples(iris, iris, objects), max_size=40)


@given(triples)
def test_triples_answer_like_an_rdflib_graph(items):
    ours, graph = Triples(), Graph()
    for t in items:
        ours.add(t)
        graph.add(t)
    assert len(ours) == len(graph)
    assert set(ours) == set(graph)
    assert isomorphic(ours.to_graph(), graph)
    for node in {s for s, _, _ in items} | {o for _, _, o in items}:
        assert set(ours.predicate_objects(node)) == set(graph.predicate_objects(node))
        assert set(ours.subject_predicates(node)) == set(
            (s, p) for s, p in graph.subject_predicates(node) if isinstance(node, URIRef)
        )
        for p in {p for _, p, _ in items}:
            assert set(ours.objects(node, p)) == set(graph.objects(node, p))
            assert set(ours.subjects(p, node)) == set(
                graph.subjects(p, node) if isinstance(node, URIRef) else ()
            )


@given(triples, st.sets(iris, max_size=3))
def test_removing_subjects_leaves_what_an_rdflib_graph_leaves(items, gone):
    ours, graph = Triples(items), Graph()
    for t in items:
        graph.add(t)
    ours.subject_predicates(URIRef("https://e.org/a"))  # the reverse index, built before
    ours.remove_subjects(gone)
    for s in gone:
        graph.remove((s, None, None))
    assert len(ours) == len(graph)
    assert set(ours) == set(graph)
    assert {s for s, _ in ours.by_subject()} == set(graph.subjects())
    for node in {o for _, _, o in items if isinstance(o, URIRef)}:
        assert set(ours.subject_predicates(node)) == set(graph.subject_predicates(node))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_dumps_is_json_dumps_with_indent_two(value):
    assert dumps(value) == _bidi_escaped(json.dumps(value, ensure_ascii=False, indent=2))


def _bidi_escaped(text: str) -> str:
    """json.dumps's text with bidi controls as \\u escapes, as `dumps` writes them."""
    from kg.display import BIDI_CONTROLS

    return "".join(f"\\u{ord(c):04x}" if c in BIDI_CONTROLS else c for c in text)


@given(st.text())
def test_a_string_alone_is_written_as_dumps_writes_it(text):
    assert string(text) == dumps(text) == _bidi_escaped(json.dumps(text, ensure_ascii=False))


def test_dumps_never_writes_a_bidi_control_raw():
    value = {"name": "Ann \u202eeeB", "t": ["\u2066x\u2069", "\u200f"]}
    text = dumps(value)
    assert not any(c in text for c in "\u202e\u2066\u2069\u200f")
    assert "Ann \\u202eeeB" in text and json.loads(text) == value


@given(json_values, st.integers(min_value=1, max_value=3))
def test_dumps_nested_is_json_dumps_indented_further(value, depth):
    expected = json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n" + "  " * depth)
    assert dumps(value, depth) == _bidi_escaped(expected)


def test_dumps_agrees_where_orjson_would_not():
    """NaN, lone surrogates, big integers, non-string keys: where orjson fails or differs."""
    for value in ({"x": float("nan")}, ["\ud800"], 2**70, {1: True}, {"k": [None, 0.5]}):
        assert dumps(value) == json.dumps(value, ensure_ascii=False, indent=2)


@given(st.recursive(st.floats(allow_nan=False, allow_infinity=False), st.lists, max_leaves=8))
def test_dumps_writes_the_same_floats(value):
    """Floats: the same numbers (orjson's shortest form may spell an exponent differently)."""
    assert json.loads(dumps(value)) == value
