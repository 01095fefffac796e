"""Precomputed answers (kg.query.answers, decision 0031): `kg build` answers the stored
queries without parameters beside its persistent store; `kg query`, `kg serve` and the
benchmarks read them back, byte-identical to running the query, and never trust a file
the signed manifest does not vouch for."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, seed_project

from kg.config import load_config
from kg.pipeline import build
from kg.query.answers import PrecomputedAnswer, answer_key, precomputable
from kg.query.lookup import load_all_queries
from kg.query.persist import STORE_DIR, open_built_store
from kg.query.results import FORMATS, render
from kg.query.stored import run_embedded, with_kg_prefixes

QUERIES = {
    name: with_kg_prefixes(q) for name, q in load_all_queries(REPO / "queries", None).items()
}
# read from the query files, not from kg: the queries whose answer depends only on the graph
WITHOUT_PARAMETERS = sorted(n for n, q in QUERIES.items() if "?_" not in q.text)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = seed_project(tmp_path_factory.mktemp("answers") / "project")
    assert build(load_config(root)).published
    return root


def _kg(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kg", "--project", str(root), *args],
        capture_output=True,
        check=False,
    )


def test_the_parameterless_queries_are_the_ones_precomputed(built):
    """And those whose header names values to answer ahead (decision 0033)."""
    assert len(WITHOUT_PARAMETERS) >= 8  # people, coauthor-network, top-venues, ...
    ahead = sorted(n for n, q in QUERIES.items() if "\n#+ precompute:" in q.text)
    assert ahead == ["ranked-venue-papers"]
    chosen = sorted(q.name for q in precomputable(load_config(built)))
    assert chosen == sorted(WITHOUT_PARAMETERS + ahead)


def test_ranked_venue_papers_is_answered_ahead_by_kg_build(built):
    """Its default values and every other rank of the seeds (CCF A and B); a rank no
    venue has (C, Z) runs."""
    store = open_built_store(load_config(built))
    assert store is not None
    for values in ({}, {"rank": "B"}, {"list": "CCF", "rank": "A"}):
        found = run_embedded(store, QUERIES["ranked-venue-papers"], values)
        assert isinstance(found, PrecomputedAnswer), values
        live = run_embedded(store, QUERIES["ranked-venue-papers"], values, precomputed=False)
        assert found.text("csv", None) == render(live, "csv") and live.rows
    for rank in ("C", "Z"):
        found = run_embedded(store, QUERIES["ranked-venue-papers"], {"rank": rank})
        assert not isinstance(found, PrecomputedAnswer) and not found.rows
    done = _kg(built, "query", "ranked-venue-papers", "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == render(
        run_embedded(store, QUERIES["ranked-venue-papers"]), "csv"
    )


@pytest.mark.parametrize("name", WITHOUT_PARAMETERS)
def test_precomputed_answer_is_byte_identical_to_running_the_query(built, name):
    config = load_config(built)
    store = open_built_store(config)
    assert store is not None
    found = run_embedded(store, QUERIES[name])
    assert isinstance(found, PrecomputedAnswer), f"{name} was not precomputed"
    live = run_embedded(store, QUERIES[name], precomputed=False)
    assert not isinstance(live, PrecomputedAnswer)
    assert found.size == live.size and found.form == live.form
    for fmt in FORMATS:
        text = found.text(fmt, config.base_iri)
        assert text is not None, (name, fmt)
        assert text == render(live, fmt, config.base_iri), (name, fmt)


def test_kg_query_prints_the_precomputed_answer(built):
    config = load_config(built)
    store = open_built_store(config)
    assert store is not None
    answer = run_embedded(store, QUERIES["top-venues"])
    live = run_embedded(store, QUERIES["top-venues"], precomputed=False)
    for fmt in ("table", "csv", "json"):
        done = _kg(built, "query", "top-venues", "--format", fmt)
        assert done.returncode == 0, done.stderr
        assert (
            done.stdout.decode()
            == answer.text(fmt, config.base_iri)
            == render(live, fmt, config.base_iri)
        )


def _answers_folder(root: Path) -> Path:
    (folder,) = [p for p in (root / STORE_DIR).iterdir() if p.name.endswith(".answers")]
    return folder


def test_a_tampered_answer_file_is_a_miss_and_the_query_runs(built, tmp_path):
    config = load_config(built)
    store = open_built_store(config)
    assert store is not None
    answer = run_embedded(store, QUERIES["people"])
    assert isinstance(answer, PrecomputedAnswer)
    sha = answer._files["csv"]
    path = _answers_folder(built) / sha
    good = path.read_bytes()
    assert b"Hanyu Zhao" in good  # data/profiles/hanyu-zhao.yaml
    try:
        path.write_bytes(good.replace(b"Hanyu Zhao", b"Mallory"))
        assert answer.text("csv", config.base_iri) is None
        done = _kg(built, "query", "people", "--format", "csv")
        assert done.returncode == 0, done.stderr
        assert done.stdout == good
        path.unlink()
        (tmp_path / sha).write_bytes(good)
        path.symlink_to(tmp_path / sha)  # a link, even to the right bytes
        assert answer.text("csv", config.base_iri) is None
    finally:
        path.unlink()
        path.write_bytes(good)
    assert answer.text("csv", config.base_iri) == good.decode()


def test_a_changed_query_text_is_not_answered_from_the_build(built):
    """A project query of the same name with another text: its own answer, not the
    precomputed one of kg's query (the key is the text's digest)."""
    text = (REPO / "queries" / "people.rq").read_text(encoding="utf-8")
    (built / "queries").mkdir()
    try:
        (built / "queries" / "people.rq").write_text(text + "LIMIT 2\n", encoding="utf-8")
        done = _kg(built, "query", "people", "--format", "csv")
    finally:
        shutil.rmtree(built / "queries")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 3  # the header and two people


def test_answers_of_another_kg_are_not_used(built, monkeypatch):
    """The key holds kg's package digest: the same text from another kg is another key."""
    from kg import cache

    text = QUERIES["people"].text
    entries = json.loads(_manifest(built).partition(b"\n")[2])["answers"]
    assert answer_key(text) in entries
    monkeypatch.setattr(cache, "package_digest", lambda: "another kg")
    assert answer_key(text) not in entries


def _manifest(root: Path) -> bytes:
    (path,) = [p for p in (root / STORE_DIR).iterdir() if p.name.endswith(".json")]
    return path.read_bytes()


def test_a_rebuild_with_nothing_changed_keeps_the_answers(built):
    before = _manifest(built).partition(b"\n")[2]
    names = sorted(os.listdir(_answers_folder(built)))
    assert build(load_config(built)).published
    after = _manifest(built).partition(b"\n")[2]
    assert json.loads(after)["answers"] == json.loads(before)["answers"]
    assert sorted(os.listdir(_answers_folder(built))) == names


@pytest.mark.parametrize("name, fmt", [("people", "json"), ("coauthor-network", "ttl")])
def test_kg_serve_workers_send_the_answer_file_without_running_the_query(built, name, fmt):
    """The precomputed answers over an empty store: what the worker sends can only come
    from the answer files (running the query would find nothing)."""
    import pyoxigraph as ox

    from kg.query.store import QueryStore
    from kg.serve.worker import ServedStore, stored_answer

    config = load_config(built)
    store = open_built_store(config)
    assert store is not None
    empty = QueryStore(ox.Store(), answers=store.answers)
    served = ServedStore(empty.oxigraph, empty, 0, frozenset(), persistent=True)
    request = {"stored": name, "values": {}, "fmt": fmt, "queries_dir": str(REPO / "queries")}
    head, body = stored_answer(served, request)
    assert head["outcome"] == "ok"
    live = run_embedded(store, QUERIES[name], precomputed=False)
    assert body.decode() == render(live, fmt) and live.size > 0


def test_formats_said_to_write_the_same_text_do(built):
    """kg.query.results.same_text_as, which lets the build render a graph's Turtle once
    for four formats: for every kind of answer, both formats give the same bytes."""
    from kg.query.results import same_text_as
    from kg.query.stored import parse_query

    config = load_config(built)
    store = open_built_store(config)
    assert store is not None
    ask = with_kg_prefixes(parse_query("ASK { ?s a schema:Person }", "ask"))
    for query in (QUERIES["people"], QUERIES["coauthor-network"], ask):
        answer = run_embedded(store, query, precomputed=False)
        for fmt in FORMATS:
            same = same_text_as(answer, fmt)
            assert render(answer, fmt, config.base_iri) == render(answer, same, config.base_iri)
    assert render(run_embedded(store, ask), "csv") == "true\n"  # the seeds have people


def test_project_queries_are_precomputed_unless_they_use_service_or_parameters(tmp_path):
    root = tmp_path / "project"
    (root / "queries").mkdir(parents=True)
    shutil.copy(REPO / "kg.toml", root / "kg.toml")
    mine = "SELECT ?s WHERE { ?s a schema:Person } ORDER BY ?s\n"
    (root / "queries" / "mine.rq").write_text(mine, encoding="utf-8")
    remote = "SELECT * WHERE { SERVICE <https://example.org/sparql> { ?s ?p ?o } }\n"
    (root / "queries" / "remote.rq").write_text(remote, encoding="utf-8")
    (root / "queries" / "people.rq").write_text("SELECT ?x WHERE { ?x ?p ?_v }\n", "utf-8")
    chosen = {q.name: q.text for q in precomputable(load_config(root))}
    assert "mine" in chosen and chosen["mine"].endswith(mine)  # kg's prefixes declared
    assert "remote" not in chosen and "people" not in chosen  # SERVICE; a parameter
    assert "top-venues" in chosen


def test_a_query_that_never_ends_does_not_hold_up_the_build(tmp_path, monkeypatch):
    """A cloned project's query without parameters is hostile: a cross product of the
    graph with itself three times would run for days. The build stops precomputing at
    the deadline, keeps what it had (kg's own queries, answered first by name), and the
    project query is left to run when asked."""
    import time

    from kg.query import answers

    root = seed_project(tmp_path / "project")
    (root / "queries").mkdir()
    spin = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }\n"
    (root / "queries" / "zzz-spin.rq").write_text(spin, encoding="utf-8")
    # kg's own queries take about 1 s on the seeds: 6 s leaves room on a loaded machine
    monkeypatch.setattr(answers, "SECONDS", 6.0)
    started = time.monotonic()
    assert build(load_config(root)).published
    assert time.monotonic() - started < 30
    entries = json.loads(_manifest(root).partition(b"\n")[2])["answers"]
    by_name = {q.name: entries[answer_key(q.text)] for q in precomputable(load_config(root))}
    assert by_name["zzz-spin"] is None
    assert all(by_name[name] for name in WITHOUT_PARAMETERS)


def test_the_json_rendering_is_json_dumps_with_indent_2():
    """`results.indented` (decision 0059) gives json.dumps(indent=2)'s very text: the
    SPARQL JSON results of a rich answer (IRIs, language and typed literals, blank
    nodes, unbound values, quotes, controls, non-ASCII, bidi and line separators), an
    empty one, an ASK, and other values nested (numbers, booleans, null, integer keys)."""
    import json

    from rdflib import BNode, Literal, URIRef

    from kg.query.results import indented, to_sparql_json
    from kg.query.stored import Answer

    texts = ['a "q" \\ b', "tab\tnl\n\x00\x1f\x7f", "Zoë 張 \u202e\u2028\u2029", ""]
    rows = [
        (URIRef(f"http://ex.org/{i}"), Literal(t, lang="en") if i % 2 else Literal(t), None)
        for i, t in enumerate(texts)
    ]
    rows.append((BNode("b1"), Literal("3", datatype=URIRef("http://ex.org/int")), Literal(2)))
    answers = [
        Answer("SELECT", ("s", "label", "n"), tuple(rows)),
        Answer("SELECT", ("s",), ()),
        Answer("ASK", boolean=True),
    ]
    values = [to_sparql_json(a) for a in answers]
    values += [{"a": [1, 2.5, True, None, {}, [], {1: "x"}], "b": {"c": [[["d"]]]}}, [], "s"]
    for value in values:
        assert indented(value) == json.dumps(value, indent=2, ensure_ascii=False)
