"""Writing the persistent store in one read of graph.nt (decision 0066).

`kg.query.persist.write_store` hands graph.nt to pyoxigraph in blocks of whole lines and
finds the subjects (for the page-owner index) and the authors (for the co-author index)
in each block by regular expressions. The store must hold exactly graph.nt's triples in
the default graph, the page owner of every subject that has no page of its own, and the
co-author pairs, wherever the blocks are cut (blocks of 97 bytes cut inside lines, inside
runs of one subject's lines, inside author lines), on the seeds' graph, with the expected
indexes derived from their definitions.
"""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
from rdflib import URIRef

from kg.publish.fingerprint import SubjectChunks
from kg.query import persist
from kg.query.coauthors import COAUTHOR, COAUTHORS, Collector
from kg.query.store import OWNER, OWNERS

AUTHOR = URIRef("http://schema.org/author")


@pytest.fixture(scope="module")
def graph_nt(seed_build, tmp_path_factory) -> Path:
    """kg's sorted graph.nt of the seeds, its last line without a newline."""
    path = tmp_path_factory.mktemp("store-write") / "graph.nt"
    text = SubjectChunks(seed_build[1].triples).ntriples()
    path.write_text(text.rstrip("\n"), encoding="utf-8")
    return path


def _by_definition(graph, base: str) -> tuple[set[str], set[tuple[str, str]]]:
    """The subject IRIs of the graph and its co-author pairs (different IRIs that author
    one subject)."""
    subjects = {str(s) for s in graph.subjects() if isinstance(s, URIRef)}
    authors: dict = {}
    for s, o in graph.subject_objects(AUTHOR):
        if isinstance(o, URIRef):
            authors.setdefault(s, set()).add(f"<{o}>")
    pairs = {(x, y) for group in authors.values() for x in group for y in group if x != y}
    return subjects, pairs


def _expected_owners(subjects: set[str], base: str) -> set[tuple[str, str]]:
    """Each subject IRI under the base with an ancestor (cut at a `/` after the base) that
    is a subject too: (subject, its top-most such ancestor)."""
    under = {s for s in subjects if s.startswith(base) and len(s) > len(base)}
    found = set()
    for s in under:
        cuts = [i for i in range(len(base), len(s)) if s[i] == "/"]
        ancestors = [s[:i] for i in cuts if s[:i] in under]
        if ancestors:
            found.add((s, ancestors[0]))
    return found


@pytest.mark.parametrize("size", [97, 4096])
def test_blocks_of_whole_lines_give_every_subject_and_author(
    seed_build, repo_config, graph_nt, monkeypatch, size
):
    """Cut inside lines, inside one subject's run of lines, inside author lines."""
    monkeypatch.setattr(persist, "_BLOCK", size)
    blocks = list(persist._blocks(graph_nt))
    assert len(blocks) > 100 and all(b.endswith(b"\n") for b in blocks)
    assert b"".join(blocks) == graph_nt.read_bytes() + b"\n"
    subjects, collector = set(), Collector()
    for block in blocks:
        subjects.update(persist._SUBJECTS.findall(b"\n" + block))
        collector.see_block(block)
    expected_subjects, expected_pairs = _by_definition(seed_build[1].graph, repo_config.base_iri)
    assert {s.decode() for s in subjects} == expected_subjects
    assert len(expected_pairs) > 20
    found = {(x, y) for group in collector.authors.values() for x in group for y in group if x != y}
    assert {(x.decode(), y.decode()) for x, y in found} == expected_pairs


def test_the_store_holds_the_graph_and_both_indexes(
    seed_build, repo_config, graph_nt, tmp_path, monkeypatch
):
    base = repo_config.base_iri
    monkeypatch.setattr(persist, "_BLOCK", 64 << 10)  # several blocks for the seeds
    assert persist.write_store(graph_nt, tmp_path / "store", base)
    store = ox.Store.read_only(str(tmp_path / "store"))
    default = {str(q.triple) for q in store.quads_for_pattern(None, None, None, ox.DefaultGraph())}
    lines = ox.parse(graph_nt.read_bytes(), format=ox.RdfFormat.N_TRIPLES)
    assert default == {str(t) for t in lines}

    subjects, pairs = _by_definition(seed_build[1].graph, base)
    owners = {
        (q.subject.value, q.object.value)
        for q in store.quads_for_pattern(None, None, None, ox.NamedNode(OWNERS))
        if q.predicate == ox.NamedNode(OWNER)
    }
    expected = _expected_owners(subjects, base)
    assert len(expected) > 50 and owners == expected
    link, index = ox.NamedNode(COAUTHOR), ox.NamedNode(COAUTHORS)
    found = store.quads_for_pattern(None, link, None, index)
    assert {(f"<{q.subject.value}>", f"<{q.object.value}>") for q in found} == pairs
    assert {g.value for g in store.named_graphs()} == {OWNERS, COAUTHORS}
