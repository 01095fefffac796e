"""kg.graph.mapping: only defined terms, no blank nodes, the http schema.org namespace."""

from __future__ import annotations

import pytest
from conftest import REPO, VOCAB
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS

from kg.graph.namespaces import FOAF, KG, SCHEMA, XSD


@pytest.fixture(scope="module")
def vocabulary() -> Graph:
    g = Graph()
    g.parse(VOCAB / "schemaorg-current-http.ttl")
    g.parse(VOCAB / "foaf-0.99.ttl")
    return g


@pytest.fixture(scope="module")
def ontology() -> Graph:
    return Graph().parse(REPO / "ontology" / "kg.ttl")


def _terms(graph: Graph) -> set[URIRef]:
    terms = set(graph.predicates())
    terms |= {o for o in graph.objects(None, RDF.type) if isinstance(o, URIRef)}
    return terms


@pytest.mark.parametrize("which", ["mini_build", "seed_build"])
def test_every_schema_and_foaf_term_is_defined(request, vocabulary, which):
    graph = request.getfixturevalue(which)[1].graph
    used = {t for t in _terms(graph) if str(t).startswith((str(SCHEMA), str(FOAF)))}
    undefined = sorted(t for t in used if (t, None, None) not in vocabulary)
    assert undefined == []
    assert len(used) > 20


@pytest.mark.parametrize("which", ["mini_build", "seed_build"])
def test_every_project_term_is_defined_with_label_and_comment(request, ontology, which):
    graph = request.getfixturevalue(which)[1].graph
    used = {t for t in _terms(graph) if str(t).startswith(str(KG))}
    for term in sorted(used):
        assert (term, RDFS.label, None) in ontology, term
        assert (term, RDFS.comment, None) in ontology, term


def test_ontology_defines_nothing_unused_by_the_mapper(ontology):
    source = "".join(p.read_text() for p in (REPO / "kg").rglob("*.py"))
    declared = {s for s in ontology.subjects(RDF.type, None) if str(s).startswith(str(KG))}
    unused = sorted(str(t) for t in declared if f"KG.{str(t)[len(str(KG)) :]}" not in source)
    assert unused == []
    assert (URIRef(str(KG)[:-1]), RDF.type, OWL.Ontology) in ontology


def test_no_blank_nodes_and_schema_is_http(mini_build):
    graph = mini_build[1].graph
    for triple in graph:
        assert not any(isinstance(t, BNode) for t in triple)
        assert not any(str(t).startswith("https://schema.org/") for t in triple)


def test_person_is_dual_typed_with_foaf_twins(mini_build):
    g = mini_build[1].graph
    ann = URIRef("https://kg.example.org/person/a-b")
    assert {SCHEMA.Person, FOAF.Person} <= set(g.objects(ann, RDF.type))
    assert g.value(ann, FOAF.name) == g.value(ann, SCHEMA.name) == Literal("Ann Bee")
    assert (ann, FOAF.mbox, URIRef("mailto:ann@example.org")) in g
    assert (ann, SCHEMA.sameAs, URIRef("https://github.com/annb")) in g
    assert (ann, SCHEMA.alternateName, Literal("安", lang="zh")) in g


def test_authorship_keeps_rank_printed_name_and_flags(mini_build):
    g = mini_build[1].graph
    paper = URIRef("https://kg.example.org/publication/paper-one")
    ranks = {}
    for a in g.objects(paper, KG.authorship):
        ranks[int(g.value(a, KG.rank))] = (g.value(a, KG.author), g.value(a, KG.equalContribution))
    assert ranks[1] == (URIRef("https://kg.example.org/person/a-b"), Literal(True))
    assert ranks[2][0] == URIRef("https://kg.example.org/person/xin-jin")
    assert ranks[3][0] == URIRef("https://kg.example.org/org/roll-team")
    assert len(set(g.objects(paper, SCHEMA.author))) == 4


def test_dates_keep_their_precision_as_datatypes(mini_build):
    g = mini_build[1].graph
    role = URIRef("https://kg.example.org/person/a-b/education/1")
    assert g.value(role, SCHEMA.startDate) == Literal("2021-09", datatype=XSD.gYearMonth)
    assert g.value(role, SCHEMA.endDate) is None and g.value(role, KG.current) == Literal(True)


def test_published_paper_is_in_proceedings_of_the_edition(mini_build):
    g = mini_build[1].graph
    paper = URIRef("https://kg.example.org/publication/paper-one")
    proceedings = g.value(paper, SCHEMA.isPartOf)
    assert proceedings == URIRef("https://kg.example.org/venue/osdi/2024/proceedings")
    edition = URIRef("https://kg.example.org/venue/osdi/2024")
    assert (edition, SCHEMA.workFeatured, paper) in g
    assert g.value(edition, SCHEMA.superEvent) == URIRef("https://kg.example.org/venue/osdi")
    assert g.value(edition, KG.editionNumber) == Literal(18, datatype=XSD.integer)


def test_source_map_points_at_yaml_lines(mini_build):
    sources = mini_build[1].sources
    role = URIRef("https://kg.example.org/person/a-b/position/1")
    assert sources[role].file == "data/profiles/a-b.yaml"
    assert sources[role].line == 20


def test_a_degree_is_held_only_when_completed():
    from kg.graph.mapping import held
    from kg.model import PRESENT, Education, PartialDate

    def degree(**fields) -> Education:
        return Education(institution="PKU", degree="Ph.D.", **fields)

    assert held(degree(status="completed"))
    assert not held(degree(status="in-progress", end=PRESENT))
    assert not held(degree(status="expected", end=PartialDate(2027, 6)))
    assert not held(degree(status="incomplete", end=PartialDate(2021)))
    assert held(degree(end=PartialDate(2021)))  # ended, and nothing says it is unfinished
    assert not held(degree(end=PRESENT)) and not held(degree())


def test_mini_ongoing_phd_is_a_programme_not_a_credential(mini_build):
    g = mini_build[1].graph
    ann = URIRef("https://kg.example.org/person/a-b")
    role = URIRef("https://kg.example.org/person/a-b/education/1")
    assert g.value(role, KG.credential) == URIRef(f"{role}/credential")
    assert list(g.objects(ann, SCHEMA.hasCredential)) == []


def test_each_listing_is_a_node_with_its_claims(mini_build):
    g = mini_build[1].graph
    paper = URIRef("https://kg.example.org/publication/paper-one")
    listings = set(g.objects(paper, KG.listing))
    assert listings == {URIRef(f"{paper}/listing/a-b"), URIRef(f"{paper}/listing/c-d")}
    for node in listings:
        assert g.value(node, KG.listingOf) == paper
        slug = str(node).rsplit("/", 1)[1]
        assert g.value(node, KG.listedIn) == URIRef(f"https://kg.example.org/profile/{slug}")
        assert node in mini_build[1].sources
