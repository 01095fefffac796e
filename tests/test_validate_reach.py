"""What a SPARQL query's rows for one focus can read (kg/validate/reach.py, decision
0058): the repo's queries, read by hand, and the constructs it must refuse."""

from __future__ import annotations

import pytest

from kg.validate.reach import Reach
from kg.validate.sparql import _analyse

S = "http://schema.org/"
K = "https://w3id.org/kg-profiles/vocab#"
TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def reach(text: str) -> Reach | None:
    return _analyse(text, "test").reach


def test_a_listings_equal_contribution_claim_reads_the_listed_works_authorships():
    # $this -claims-> ?value; NOT EXISTS: $this -listingOf-> _ -authorship-> ?value,
    # ?value -equalContribution-> true: ?value (reached by the claim) and _ are anchors
    # one step out
    found = reach(f"""SELECT $this ?value WHERE {{
        $this <{K}claimsEqualContribution> ?value .
        FILTER NOT EXISTS {{ $this <{K}listingOf>/<{K}authorship> ?value .
                             ?value <{K}equalContribution> true }} }}""")
    walk = {(K + "claimsEqualContribution", False), (K + "listingOf", False)}
    assert found == Reach(1, frozenset(), frozenset(walk))


def test_an_incoming_edge_is_read_at_the_focus_itself():
    found = reach(f"""SELECT $this ?value WHERE {{ $this <{K}listing> ?value .
        FILTER NOT EXISTS {{ ?value <{K}listingOf> $this }} }}""")
    assert found == Reach(0, frozenset({K + "listingOf"}), frozenset())
    found = reach(f"""SELECT ?this WHERE {{ ?venue <{S}contributor>|<{S}editor> ?this .
        ?this a <{S}Role> . }}""")
    assert found == Reach(0, frozenset({S + "contributor", S + "editor"}), frozenset())


def test_aggregates_grouped_by_this_read_one_step_out():
    found = reach(f"""SELECT $this ?value (COUNT(?a) AS ?times)
        WHERE {{ $this <{K}authorship> ?a . ?a <{K}author> ?value . }}
        GROUP BY $this ?value HAVING (COUNT(?a) > 1)""")
    assert found == Reach(1, frozenset(), frozenset({(K + "authorship", False)}))


def test_a_sequence_with_an_inverse_step_walks_every_step_to_the_last_anchor():
    found = reach(
        "SELECT $this WHERE { $this <http://a/p>/<http://a/q>/^<http://a/r> ?x . "
        "?x <http://a/s> ?w }"
    )
    walk = {("http://a/p", False), ("http://a/q", False), ("http://a/r", True)}
    assert found == Reach(3, frozenset({"http://a/r"}), frozenset(walk))


@pytest.mark.parametrize(
    "text",
    [
        "SELECT $this WHERE { $this <http://a/p>+ $this }",  # unbounded
        "SELECT $this WHERE { $this !<http://a/p> ?x }",  # negated
        "SELECT $this WHERE { $this ?p ?x }",  # any predicate
        "SELECT $this WHERE { $this <http://a/p> ?x . ?y <http://a/q> ?z }",  # not joined
        "SELECT $this WHERE { $this <http://a/p> ?x FILTER NOT EXISTS { ?y <http://a/q> ?z } }",
        "SELECT $this WHERE { $this <http://a/p> ?x . BIND(?x AS ?y) ?y <http://a/q> ?z }",
        "SELECT $this WHERE { $this <http://a/p> ?x OPTIONAL { ?x <http://a/q> ?y } }",
        "SELECT $this WHERE { $this <http://a/p> ?x MINUS { ?x <http://a/q> ?y } }",
        "SELECT $this WHERE { { $this <http://a/p> ?x } UNION { ?x <http://a/p> $this } }",
        "SELECT $this WHERE { $this <http://a/p> ?x } LIMIT 3",
        "SELECT $this WHERE { $this <http://a/p> ?x VALUES ?x { <http://a/v> } }",
    ],
)
def test_what_cannot_be_bounded_has_no_reach(text):
    assert reach(text) is None
