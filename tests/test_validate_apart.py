"""The compiled validator's full run in a new interpreter (kg/validate/apart.py,
decision 0051): the same findings, and the same kept state, as a full run here; the
next build's incremental run starts from that state."""

from __future__ import annotations

import pytest
from test_validate_incremental import _graph

from kg.bench.synth import generate
from kg.cache import SignedCache
from kg.config import load_config
from kg.errors import ProjectError
from kg.validate import incremental
from kg.validate.apart import batches, full_apart
from kg.validate.engine import plain_triples
from kg.validate.shacl import _program
from kg.validate.terms import Lit

SCHEMA = "http://schema.org/"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    root = tmp_path_factory.mktemp("apart")
    generate(root, 10, seed=5)
    from kg.pipeline import build_graph

    return build_graph(load_config(root), cache=False)[1].triples


def test_a_full_run_apart_finds_and_keeps_what_a_full_run_here_does(graph, repo_config, tmp_path):
    shapes, ontology_dir = repo_config.shapes_dir, repo_config.ontology_dir
    program, ontology = _program(shapes, ontology_dir)
    # a violation, so that the findings are not only warnings
    broken = list(plain_triples(graph))
    person = next(s for s, p, o in broken if p == SCHEMA + "givenName")
    broken.append((person, SCHEMA + "birthDate", Lit("not a date", SCHEMA + "Date")))
    broken_graph = _graph(broken)
    expected, state = incremental.full(broken_graph, program, list(ontology))
    assert expected and state is not None
    cache_dir = tmp_path / "state"
    from kg.graph.delta import table  # the build's: its texts and digests sent

    made = table(broken_graph)
    found = full_apart(
        broken_graph, shapes, ontology_dir, cache_dir, "ab" * 32, made, reads=program.reads
    )
    assert found == expected
    kept, head = incremental.kept(SignedCache(cache_dir), "ab" * 32)
    assert isinstance(kept, incremental.State) and head is not None and head.deltas == ()
    assert kept.digests == state.digests and kept.asked == state.asked
    assert kept.findings == state.findings and kept.pointers == state.pointers
    assert full_apart(broken_graph, shapes, ontology_dir) == expected  # nothing kept
    # the next run starts from the kept state: no full run, a full run's findings
    edited = [t for t in broken if t[1] != SCHEMA + "birthDate"]
    again = incremental.validate(
        _graph(edited), program, list(ontology), SignedCache(cache_dir), "ab" * 32, _no_full_run
    )
    assert again == incremental.full(_graph(edited), program, list(ontology))[0]


def _no_full_run(whole):
    raise AssertionError("the kept state was not used")


def test_the_batches_send_every_triple_once_and_the_tables_digests(graph, monkeypatch):
    """Each batch numbers its own terms; read back, the batches are the graph's
    N-Triples lines; with the build's table its digests go whole, after the graph."""
    from array import array

    from kg.graph.delta import table
    from kg.graph.ntriples import ntriples_lines

    monkeypatch.setattr("kg.validate.apart.BATCH", 1_000)  # several batches
    made = table(graph)
    *parts, digests = batches(graph, made)
    assert len(parts) > 2 and digests is made.digests
    lines = []
    for texts, numbers, widths, sizes, found in parts:
        assert not found  # the table's digests are sent, not taken again
        terms = [texts[n] for n in array("I", numbers)]
        w, z = array("I", widths), array("I", sizes)
        named, objects = iter(terms[len(w) : len(w) + len(z)]), iter(terms[len(w) + len(z) :])
        sizes_of = iter(z)
        for s, width in zip(terms[: len(w)], w, strict=False):
            for _ in range(width):
                p = next(named)
                lines += (f"{s} {p} {next(objects)} .\n" for _ in range(next(sizes_of)))
    assert sorted(lines) == ntriples_lines(graph)
    assert len(made.memo) == len(made.terms)  # nothing added to the build's memo


def test_a_project_error_apart_is_raised_here_with_its_type(graph, tmp_path):
    """Bad shapes fail in the new interpreter, before it reads the graph: the error comes
    back (the CLI's exit 2), and the feeding side never hangs on a closed pipe."""
    (tmp_path / "shapes").mkdir()
    (tmp_path / "shapes" / "bad.ttl").write_text("this is not turtle", encoding="utf-8")
    with pytest.raises(ProjectError, match=r"bad\.ttl: not valid Turtle"):
        full_apart(graph, tmp_path / "shapes", tmp_path)


def test_without_a_table_the_digests_are_the_tables(graph):
    """Without the build's table the digests are taken over the same blocks here."""
    from kg.graph.delta import table

    sent = {}
    for batch in batches(graph):
        sent.update(batch.digests)  # type: ignore[union-attr]
    assert sent == table(graph).digests
