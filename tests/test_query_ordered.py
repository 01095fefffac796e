"""kg.query.ordered (decision 0042): kg orders a precomputed SELECT's rows itself only
where it orders them exactly as pyoxigraph's ORDER BY does, and only for a query whose
ORDER BY it has recognised; anything else is left to pyoxigraph."""

from __future__ import annotations

import json
import random

import pyoxigraph as ox
import pytest

from kg.query.ordered import in_order, unordered

P = "https://e.org/p"
XSD = "http://www.w3.org/2001/XMLSchema#"


def _rows(store: ox.Store, text: str) -> tuple[list[str], list[dict]]:
    """The variables and rows of a SELECT as pyoxigraph writes SPARQL JSON results."""
    written = json.loads(store.query(text).serialize(format=ox.QueryResultsFormat.JSON))
    return written["head"]["vars"], written["results"]["bindings"]


def _store(values: list[ox.NamedNode | ox.Literal]) -> ox.Store:
    """Subjects s0.. with a `p` value each from `values` (and some with none) and a `q`
    value from a small set, so that rows tie on one key and not on both."""
    store = ox.Store()
    for i, value in enumerate(values):
        s = ox.NamedNode(f"https://e.org/s{i}")
        store.add(ox.Quad(s, ox.NamedNode(P), value))
        store.add(ox.Quad(s, ox.NamedNode(P + "q"), ox.Literal(str(i % 3))))
    for i in range(len(values), len(values) + 4):  # unbound ?v
        store.add(
            ox.Quad(ox.NamedNode(f"https://e.org/s{i}"), ox.NamedNode(P + "q"), ox.Literal("x"))
        )
    return store


TEXT = f"SELECT ?s ?v ?q WHERE {{ ?s <{P}q> ?q OPTIONAL {{ ?s <{P}> ?v }} }} ORDER BY {{keys}}"


@pytest.mark.parametrize("keys", ["?v ?q ?s", "DESC(?v) ?s ?q", "?q DESC(?v) ?s", "ASC(?q) ?v ?s"])
def test_kg_orders_like_pyoxigraph(keys):
    """Strings with letters from several planes, empty strings, IRIs beside strings,
    unbound values, ties broken by the next key."""
    rng = random.Random(keys)
    words = ["", "a", "B", "b", "é", "ß", "z", "Ω", "中", "😀", "a b", "a\tb", "10", "9"]
    values: list = [ox.Literal(rng.choice(words) + rng.choice(words)) for _ in range(120)]
    values += [ox.NamedNode(f"https://e.org/{rng.choice(words[1:10])}") for _ in range(20)]
    store = _store(values)
    text = TEXT.replace("{keys}", keys)
    found = unordered(text)
    assert found is not None
    plain, order = found
    variables, rows = _rows(store, plain)
    assert in_order(variables, rows, order) == _rows(store, text)[1]


def test_integers_are_ordered_by_value():
    store = _store(
        [ox.Literal(str(n), datatype=ox.NamedNode(XSD + "integer")) for n in (10, 9, -3, 0, 100)]
    )
    text = TEXT.replace("{keys}", "DESC(?v) ?s ?q")
    plain, order = unordered(text)  # type: ignore[misc]
    variables, rows = _rows(store, plain)
    assert in_order(variables, rows, order) == _rows(store, text)[1]


@pytest.mark.parametrize(
    "value",
    [
        ox.Literal("a", language="en"),  # language tags: left to pyoxigraph
        ox.Literal("2020", datatype=ox.NamedNode(XSD + "gYear")),
        ox.Literal("010", datatype=ox.NamedNode(XSD + "integer")),  # not canonical
        ox.Literal("7", datatype=ox.NamedNode(XSD + "integer")),  # beside strings
        ox.BlankNode("b"),
    ],
)
def test_what_kg_cannot_order_exactly_is_left_to_pyoxigraph(value):
    store = _store([ox.Literal("a"), ox.Literal("b"), value])
    plain, order = unordered(TEXT.replace("{keys}", "?v ?s ?q"))  # type: ignore[misc]
    assert in_order(*_rows(store, plain), order) is None


@pytest.mark.parametrize(
    "text",
    [
        "SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s LIMIT 3",  # LIMIT: not the same rows
        "SELECT ?s ?o WHERE { ?s ?p ?o } ORDER BY ?s",  # ?o not a key: ties could show
        "SELECT ?s WHERE { ?s ?p ?o } ORDER BY STR(?s)",  # an expression
        "SELECT ?s WHERE { ?s ?p ?o }\n# ORDER BY ?s",  # in a comment
        "SELECT ?s WHERE { { SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s } }",  # inner
        "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } ORDER BY ?s",
        "SELECT ?s WHERE { ?s ?p ?o",  # not SPARQL
    ],
)
def test_only_a_final_order_by_of_the_whole_projection_is_taken(text):
    assert unordered(text) is None


def test_the_text_without_its_order_by():
    text = "SELECT DISTINCT ?s ?n WHERE { ?s <urn:p> ?n }\nORDER BY DESC(?n) ?s\n"
    assert unordered(text) == (
        "SELECT DISTINCT ?s ?n WHERE { ?s <urn:p> ?n }\n",
        [("n", True), ("s", False)],
    )
