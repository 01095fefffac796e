"""Every kind of node the mapping writes is the focus of some shape (issue 27, item 5).

The types are collected from what the mapping writes, on the seed documents and on a
small synthetic corpus (kg.bench.synth), never from a list kept by hand: a new kind of
node without a shape makes this test fail.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from conftest import REPO
from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF, RDFS, SH

from kg.bench.synth import generate
from kg.config import load_config
from kg.pipeline import build_graph
from kg.validate.shacl import shapes_graph


def _subclasses(shapes: Graph, cls: URIRef) -> set[URIRef]:
    """`cls` and every class below it (a SHACL class target reaches instances of both)."""
    return set(shapes.transitive_subjects(RDFS.subClassOf, cls))


def focus_nodes(shapes: Graph, data: Graph) -> set:
    """Every node some shape targets: class (explicit or implicit), node, subjects-of and
    objects-of targets, as SHACL Core defines them."""
    focus: set = set()
    for shape in set(shapes.subjects(RDF.type, SH.NodeShape)) | set(
        shapes.subjects(RDF.type, SH.PropertyShape)
    ):
        classes = set(shapes.objects(shape, SH.targetClass))
        if (shape, RDF.type, RDFS.Class) in shapes or (shape, RDF.type, OWL.Class) in shapes:
            classes.add(shape)
        for cls in classes:
            for sub in _subclasses(shapes, cls):
                focus.update(data.subjects(RDF.type, sub))
        focus.update(shapes.objects(shape, SH.targetNode))
        for p in shapes.objects(shape, SH.targetSubjectsOf):
            focus.update(data.subjects(p, None))
        for p in shapes.objects(shape, SH.targetObjectsOf):
            focus.update(data.objects(None, p))
    return focus


def unshaped(graph: Graph, shapes: Graph) -> dict[str, list[str]]:
    """Type -> the nodes of that type that no shape targets."""
    focus = focus_nodes(shapes, graph)
    missing: dict[str, list[str]] = defaultdict(list)
    for node, kind in graph.subject_objects(RDF.type):
        if node not in focus:
            missing[str(kind)].append(str(node))
    return dict(missing)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth")
    generate(root, people=20, seed=5)
    return build_graph(load_config(root))[1].graph


@pytest.fixture(scope="module")
def shapes(repo_config):
    return shapes_graph(repo_config.shapes_dir, repo_config.ontology_dir)


def test_every_node_of_the_seeds_is_the_focus_of_a_shape(seed_build, shapes):
    graph = seed_build[1].graph
    kinds = set(graph.objects(None, RDF.type))
    assert len(kinds) > 20  # the collection itself works: the seeds write many kinds
    assert unshaped(graph, shapes) == {}


def test_every_node_of_a_synthetic_corpus_is_the_focus_of_a_shape(synthetic, shapes):
    assert unshaped(synthetic, shapes) == {}


def test_a_new_kind_of_node_without_a_shape_is_caught(seed_build, shapes):
    graph = Graph()
    for triple in seed_build[1].graph:
        graph.add(triple)
    stray = URIRef("https://kg.example.org/thing/1")
    graph.add((stray, RDF.type, URIRef("http://schema.org/Dataset")))
    assert unshaped(graph, shapes) == {"http://schema.org/Dataset": [str(stray)]}


def test_the_repository_shapes_are_the_ones_checked(repo_config):
    assert repo_config.shapes_dir == REPO / "shapes"
