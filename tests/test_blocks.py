"""kg.publish.blocks: files joined from the block table are the writers' texts, and a build
formats each whole node once."""

from __future__ import annotations

import contextlib
import os
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterator
from itertools import accumulate

import pytest
from conftest import MINI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import BNode, Literal, URIRef

from kg.config import load_config
from kg.graph.namespaces import FOAF, KG, RDF, SCHEMA, XSD
from kg.graph.ntriples import to_ntriples
from kg.graph.triples import Triples
from kg.publish import export
from kg.publish.blocks import BlockTable, dump_text, table_of
from kg.publish.export import (
    STUB_FACTS,
    NodeBlocks,
    colliding_prefixes,
    described,
    description_texts,
    to_jsonld,
    to_turtle,
)
from kg.publish.fingerprint import SubjectChunks
from kg.publish.subjectset import subject_layout

# IRIs minted under each other (a person's nodes), blank nodes, an IRI spelled like a
# compact IRI of a context prefix, literals of every kind the writers spell apart
NODES = [
    URIRef("https://e.org/a"),
    URIRef("https://e.org/a/1"),
    URIRef("https://e.org/a/1/x"),
    URIRef("https://e.org/b"),
    URIRef("https://e.org/b-c"),
    BNode("n1"),
    BNode("n2"),
]
OBJECTS = [
    *NODES,
    URIRef("kg:looks-compact"),
    SCHEMA.Person,
    FOAF.Person,
    Literal("A"),
    Literal('ä "q"\nline'),
    Literal("B", lang="en"),
    Literal("7", datatype=XSD.integer),
    Literal("007", datatype=XSD.integer),
    Literal("true", datatype=XSD.boolean),
    Literal("2020-01-02", datatype=XSD.date),
    Literal("x", datatype=XSD.string),
    Literal("null"),  # jsontext writes a text with `null` again, through the slow walk
    Literal("right\u202eto left"),  # a bidi control: escaped in JSON
    Literal("1.5", datatype=XSD.decimal),
]
PREDICATES = [
    RDF.type,
    SCHEMA.name,
    SCHEMA.url,
    SCHEMA.author,
    FOAF.made,
    KG.author,
    SCHEMA.about,
]
TRIPLE = st.tuples(st.sampled_from(NODES), st.sampled_from(PREDICATES), st.sampled_from(OBJECTS))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(TRIPLE, min_size=0, max_size=30),
    st.lists(st.sampled_from(NODES), max_size=3),
    st.sets(st.integers(0, 29)),
    st.integers(1, 4),
)
def test_files_joined_from_blocks_are_the_writers_texts(triples, owned, picked, size):
    """For any small graph, a subset (a thing's description, or any triples of it)
    written with the graph's block table is the text written without it, and the dumps
    joined from the table are the whole graph's texts."""
    graph = Triples(triples)
    unusable = colliding_prefixes(t for triple in graph for t in triple)
    blocks = NodeBlocks(graph, table_of(graph, size=size))
    blocks.collision_free = not unusable
    for fmt, writer in (("ttl", to_turtle), ("jsonld", to_jsonld)):
        assert dump_text(blocks.table, fmt, graph, unusable) == writer(graph)  # type: ignore[arg-type]
    chosen = Triples(t for i, t in enumerate(triples) if i in picked)
    for subset in (described(graph, set(owned)), chosen, graph):
        assert to_turtle(subset, blocks) == to_turtle(subset)
        assert to_jsonld(subset, blocks) == to_jsonld(subset)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(TRIPLE, min_size=0, max_size=30),
    st.lists(st.lists(st.sampled_from(NODES), max_size=3), min_size=1, max_size=4),
    st.integers(1, 4),
)
def test_descriptions_in_one_pass_are_the_writers_texts(triples, owners, size):
    """A description's three files made in one pass (`description_texts`: the table's
    whole nodes, the stubs kept by one process across files, the partial nodes of a
    description whose nodes hold the later ones') are the texts each writer gives
    without the table, for every description one process writes in turn."""
    graph = Triples(triples)
    table = table_of(graph, size=size)
    blocks = NodeBlocks(graph, table)
    blocks.collision_free = not colliding_prefixes(t for triple in graph for t in triple)
    seen: dict = {}  # the partial nodes of the first, which holds every later one's triples
    with _reading_the_dump(graph, table):
        for owned in [[n for found in owners for n in found], *owners]:
            subset = described(graph, set(owned))
            assert set(subset) == _plain_described(graph, set(owned)) and len(subset) == len(
                set(subset)
            )
            texts = description_texts(subset, blocks, seen)
            assert texts == {
                "ttl": to_turtle(subset),
                "jsonld": to_jsonld(subset),
                "nt": to_ntriples(subset),
            }


@contextlib.contextmanager
def _reading_the_dump(graph: Triples, table: BlockTable) -> Iterator[None]:
    """The table reading whole nodes' N-Triples from the graph's sorted dump, in a file
    (decision 0071); each subject's chunk read from it is its lines."""
    chunks = SubjectChunks(graph)
    layout = subject_layout(chunks.order, chunks.texts, "https://e.org/", chunks.under)
    assert layout.at is not None and list(table.index) == layout.canonical
    with tempfile.TemporaryFile() as dump:
        dump.write(chunks.ntriples().encode())
        dump.flush()
        table.read_ntriples(
            dump.fileno(), layout.at, array("Q", accumulate(chunks.sizes, initial=0))
        )
        for s in graph.subjects():
            row = table.row(s, sum(map(len, graph.describe(s).values())))
            assert row is not None and table.ntriples_at(row) == chunks.text[s]  # type: ignore[index]
        yield


def test_a_partial_node_seen_with_more_triples_is_formatted_again():
    """A work linking two people is in both people's description, and with one link
    less in the second's alone: taken from `seen` only when its triples are as many."""
    a, b, work = URIRef("https://e.org/a"), URIRef("https://e.org/b"), URIRef("https://e.org/w")
    graph = Triples(
        [
            (work, SCHEMA.author, a),
            (work, SCHEMA.author, b),
            (work, RDF.type, SCHEMA.Article),
            (work, SCHEMA.datePublished, Literal("2020")),  # not in a description: partial
        ]
    )
    blocks = NodeBlocks(graph, table_of(graph))
    blocks.collision_free = True
    seen: dict = {}
    for owned in ({a, b}, {a}):
        subset = described(graph, owned)
        texts = description_texts(subset, blocks, seen)
        assert texts == {
            "ttl": to_turtle(subset),
            "jsonld": to_jsonld(subset),
            "nt": to_ntriples(subset),
        }


def _plain_described(graph: Triples, owned: set) -> set:
    """`described` as first written: triple by triple (the oracle)."""
    found = {(s, p, o) for s in owned for p, o in graph.predicate_objects(s)}
    found |= {(s2, p, s) for s in owned for s2, p in graph.subject_predicates(s) if s2 not in owned}
    nodes = {o for _, _, o in found if isinstance(o, URIRef)} | {s for s, _, _ in found}
    stubs = (RDF.type, SCHEMA.name, SCHEMA.url)
    return found | {(n, p, o) for n in nodes for p, o in graph.predicate_objects(n) if p in stubs}


def test_a_description_shares_no_collection_with_the_graph():
    """What is added to a description is not added to the graph it was cut from."""
    a, b = URIRef("https://e.org/a"), URIRef("https://e.org/b")
    graph = Triples([(a, SCHEMA.author, b), (a, SCHEMA.author, a), (a, SCHEMA.name, Literal("A"))])
    subset = described(graph, {a})
    subset.add((a, SCHEMA.author, URIRef("https://e.org/c")))
    subset.add((a, SCHEMA.name, Literal("B")))
    assert len(graph) == 3 and len(subset) == 5
    assert set(graph.objects(a, SCHEMA.author)) == {a, b}


@pytest.fixture()
def formatted(monkeypatch):
    """Every Turtle block and JSON-LD node object formatted, as (subject, triples)."""
    calls: dict[str, Counter] = {"ttl": Counter(), "jsonld": Counter()}
    turtle_block, node_json = export._turtle_block, export._node_json

    def counted_turtle(s, predicates, term):
        calls["ttl"][s, sum(map(len, predicates.values()))] += 1
        return turtle_block(s, predicates, term)

    def counted_json(s, predicates, terms):
        calls["jsonld"][s, sum(map(len, predicates.values()))] += 1
        return node_json(s, predicates, terms)

    monkeypatch.setattr(export, "_turtle_block", counted_turtle)
    monkeypatch.setattr(export, "_node_json", counted_json)
    return calls


def test_a_build_formats_each_whole_node_once(mini_build, formatted):
    """Every subject's block is formatted once in a whole render (the dumps, the people's
    files, the things' files): the files take whole nodes from the table."""
    from kg.publish.render import render_outputs

    resolution, mapped = mini_build
    graph = mapped.triples
    files = render_outputs(load_config(MINI), resolution, graph)
    subjects = set(graph.subjects())
    assert any(k.startswith("site/person/") and k.endswith(".jsonld") for k in files)
    for fmt, calls in formatted.items():
        for s in subjects:
            size = sum(map(len, graph.describe(s).values()))
            assert calls[s, size] == 1, (fmt, s, calls[s, size])
    assert files["graph.ttl"] == to_turtle(graph) and files["graph.jsonld"] == to_jsonld(graph)


def test_a_render_formats_each_stub_once(mini_build, monkeypatch):
    """A node a file shows only the type, name and URL of (a co-author, a venue) is
    formatted once per process while it keeps its memos, however many files show it (a
    process empties them after its heaviest tasks and every few tasks, decision 0067:
    not done here)."""
    from kg.publish import render
    from kg.publish.render import render_outputs

    monkeypatch.setattr(render, "_forget_memos", lambda state: None)
    stubs: Counter = Counter()
    turtle_block = export._turtle_block

    def counted(s, predicates, term):
        if all(p in STUB_FACTS for p in predicates):
            stubs[s] += 1
        return turtle_block(s, predicates, term)

    monkeypatch.setattr(export, "_turtle_block", counted)
    resolution, mapped = mini_build
    files = render_outputs(load_config(MINI), resolution, mapped.triples)
    shown = [s for s in stubs if sum(str(s) in text for text in files.values()) > 2]
    assert shown and max(stubs.values()) == 1  # each formatted once, most shown often


def test_memos_emptied_after_every_task_give_the_same_files(mini_build, monkeypatch):
    """Decision 0067: a process's memos are pure: emptied after every task or never, the
    files are the same."""
    from kg.publish import render

    resolution, mapped = mini_build
    config = load_config(MINI)
    forgets = Counter()
    forget = render._forget_memos
    monkeypatch.setattr(render, "_forget_memos", lambda state: forgets.update([1]) or forget(state))
    monkeypatch.setattr(render, "FORGET_EVERY", 1)
    emptied = render.render_outputs(config, resolution, mapped.triples)
    assert forgets[1] > 3  # after every task
    monkeypatch.setattr(render, "_forget_memos", lambda state: None)
    assert render.render_outputs(config, resolution, mapped.triples) == emptied


def test_a_subject_added_changes_one_range_of_the_table():
    """Ranges end where a subject's text says (not at fixed positions): adding a subject
    leaves every range but the one it falls in with the same subjects, so their cached
    blocks are taken whole."""
    from kg.publish.blocks import cut

    subjects = [URIRef(f"https://e.org/p/{i:05d}") for i in range(5000)]
    added = [*subjects[:2500], URIRef("https://e.org/p/02499x"), *subjects[2500:]]

    def ranges(of):
        return {tuple(of[start:stop]) for start, stop in cut(of, 100)}

    before, after = ranges(subjects), ranges(added)
    assert 20 < len(before) < 100  # about 50 of about 100 subjects
    assert len(before - after) == 1 and 1 <= len(after - before) <= 2
    assert [s for r in sorted(after) for s in r] == added


def test_range_files_are_read_by_offset_with_few_files_open(tmp_path, monkeypatch):
    """A table whose ranges are files (as in a build's staging folder) gives the same
    texts as one that keeps them as bytes, and keeps at most OPEN_FILES files open."""
    from kg.publish import blocks as module

    monkeypatch.setattr(module, "OPEN_FILES", 3)
    graph = Triples(
        (URIRef(f"https://e.org/p/{i}"), SCHEMA.name, Literal(f"P{i}")) for i in range(40)
    )
    kept = table_of(graph, size=2)
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    on_disk = module.BlockTable(
        kept.index,
        [module.write_range(folder, str(i), r) for i, r in enumerate(kept.ranges)],
        kept.prefixes,
        kept.starts,
        folder,
    )
    assert len(list(tmp_path.iterdir())) == 2 * len(kept.ranges) > 6
    for s in graph.subjects():
        assert on_disk.turtle(s, 1) == kept.turtle(s, 1) is not None
        assert on_disk.jsonld(s, 1) == kept.jsonld(s, 1) is not None
        assert on_disk.jsonld(s, 2) is None  # a file holding more than the node: not it
        assert len(on_disk._fds) <= 3
    for fmt in ("ttl", "jsonld"):
        assert dump_text(on_disk, fmt, graph, ()) == dump_text(kept, fmt, graph, ())
    on_disk.close()
    os.close(folder)
