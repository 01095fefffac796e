"""The persistent query store (kg.query.persist): written by `kg build`, opened by
`kg query` with the same answers as the graph built in memory, and never trusted when it
is not exactly what this user's kg wrote for the current data."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, seed_project
from rdflib.compare import isomorphic

from kg.config import load_config
from kg.pipeline import build, build_graph
from kg.query.persist import STORE_DIR, open_built_store, save_built_store
from kg.query.store import QueryStore
from kg.query.stored import load_queries, run_embedded

QUERIES = load_queries(REPO / "queries")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = seed_project(tmp_path_factory.mktemp("store") / "project")
    assert build(load_config(root)).published
    return root


@pytest.fixture(scope="module")
def in_memory(built) -> QueryStore:
    return QueryStore.from_graph(build_graph(load_config(built), cache=False)[1].triples)


def _copy(built: Path, target: Path) -> Path:
    shutil.copytree(built, target, symlinks=True)
    return target


def _rows(answer) -> object:
    if answer.graph is not None:
        return answer.graph
    return answer.boolean if answer.form == "ASK" else sorted(map(repr, answer.rows))


def test_build_writes_one_store_named_by_the_graph(built):
    import json

    sha = json.loads((built / "dist" / "build.json").read_text())["graph"]["sha256"]
    names = sorted(p.name for p in (built / STORE_DIR).iterdir())
    assert names == [".lock", sha, f"{sha}.answers", f"{sha}.json"]  # decision 0031


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_every_stored_query_answers_the_same_on_the_persistent_store(built, in_memory, name):
    store = open_built_store(load_config(built))
    assert store is not None
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    assert [r[0] for r in store.query(count, "n")] == [r[0] for r in in_memory.query(count, "n")]
    got, want = run_embedded(store, QUERIES[name]), run_embedded(in_memory, QUERIES[name])
    if want.graph is not None:
        assert isomorphic(got.graph, want.graph)
    else:
        assert _rows(got) == _rows(want)


def test_person_graph_from_the_owner_index_equals_the_query_for_every_person(built, in_memory):
    """`#+ owner-graph: person`: on the persistent store the answer is read by index;
    it must be the portable query's answer (run where no named graphs exist) for every
    person IRI of the seeds, profiled or co-author."""
    store = open_built_store(load_config(built))
    people = [
        str(row[0]) for row in run_embedded(in_memory, QUERIES["people"]).rows if row[0] is not None
    ]
    people += ["https://kg.example.org/person/fan-yang", "https://kg.example.org/person/nobody"]
    query = QUERIES["person-graph"]
    for person in people:
        fast = run_embedded(store, query, {"person": person})
        portable = run_embedded(in_memory, query, {"person": person})
        assert isomorphic(fast.graph, portable.graph), person
    owned = store.owner_graph("https://kg.example.org/person/yihao-zhao")
    assert owned is not None and len(owned) > 50
    assert store.owner_graph("https://kg.example.org/person/yihao-zhao/award/1") is None


def test_kg_query_answers_an_edit_made_after_the_build(built, tmp_path):
    """The store is of the build; after an edit to data/, kg query answers the data."""
    root = _copy(built, tmp_path / "p")
    profile = root / "data" / "profiles" / "yihao-zhao.yaml"
    text = profile.read_text(encoding="utf-8")
    profile.write_text(text.replace("name: Yihao Zhao", "name: Yihao Zhao Edited", 1), "utf-8")
    assert open_built_store(load_config(root)) is None
    out = _kg(root, "query", "people", "--format", "csv")
    assert "Yihao Zhao Edited" in out


def _kg(root: Path, *args: str) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "kg", "--project", str(root), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def _tamper_manifest(root: Path) -> None:
    manifest = next((root / STORE_DIR).glob("*.json"))
    data = manifest.read_bytes()
    manifest.write_bytes(data.replace(b'"inputs"', b'"inputz"', 1))


def _add_file(root: Path) -> None:
    store = next(p for p in (root / STORE_DIR).iterdir() if len(p.name) == 64)
    (store / "000999.sst").write_bytes(b"not what kg wrote")


def _foreign_secret(root: Path) -> None:
    """A store and manifest that another user's kg wrote (another secret): a clone."""
    shutil.rmtree(root / STORE_DIR)
    os.environ["KG_CACHE_SECRET"] = "x" * 40
    try:
        save_built_store(load_config(root), root / "dist")
    finally:
        del os.environ["KG_CACHE_SECRET"]


def test_a_copied_store_is_not_trusted(built, tmp_path):
    """A copy (a clone, an archive) has other inodes and times than kg wrote."""
    root = _copy(built, tmp_path / "p")
    assert open_built_store(load_config(root)) is None
    assert "Yihao Zhao" in _kg(root, "query", "people", "--format", "csv")


@pytest.mark.parametrize("tamper", [_tamper_manifest, _add_file, _foreign_secret])
def test_a_store_that_is_not_exactly_what_kg_wrote_is_never_opened(built, tmp_path, tamper):
    root = _copy(built, tmp_path / "p")
    assert save_built_store(load_config(root), root / "dist") is not None
    assert open_built_store(load_config(root)) is not None
    tamper(root)
    assert open_built_store(load_config(root)) is None


def test_a_shipped_link_in_place_of_the_store_folder_is_never_written_through(built, tmp_path):
    root = _copy(built, tmp_path / "p")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine", encoding="utf-8")
    shutil.rmtree(root / STORE_DIR)
    (root / STORE_DIR).symlink_to(outside)
    assert save_built_store(load_config(root), root / "dist") is None
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert open_built_store(load_config(root)) is None


def test_a_rebuild_after_a_title_edit_patches_the_previous_store(built, tmp_path):
    """The store of a build whose subjects did not change is the previous store patched
    (kg.query.patch: its files are hard links to the previous store's), and it holds
    exactly what a store written from the new graph.nt holds."""
    import pyoxigraph as ox

    from kg.query.persist import SOURCE, write_store

    root = _copy(built, tmp_path / "p")
    config = load_config(root)
    assert build(config).published  # a copy's store is not trusted: written in full
    previous = next(p for p in (root / STORE_DIR).iterdir() if len(p.name) == 64)
    assert (previous / SOURCE).stat().st_ino == (root / "dist" / "graph.nt").stat().st_ino
    inodes = {p.stat().st_ino for p in previous.iterdir() if p.name != SOURCE}
    profile = root / "data" / "profiles" / "yihao-zhao.yaml"
    text = profile.read_text(encoding="utf-8")
    assert 'title: "ElasticFlow' in text
    profile.write_text(text.replace('title: "ElasticFlow', 'title: "Edited ElasticFlow', 1))
    assert build(config).published
    store = next(p for p in (root / STORE_DIR).iterdir() if len(p.name) == 64)
    assert store != previous and not previous.exists()
    assert inodes & {p.stat().st_ino for p in store.iterdir()}  # patched, not written
    assert write_store(root / "dist" / "graph.nt", tmp_path / "full", config.base_iri)
    patched = {str(q) for q in ox.Store.read_only(str(store))}
    assert patched == {str(q) for q in ox.Store.read_only(str(tmp_path / "full"))}
    assert "Edited ElasticFlow" in _kg(root, "query", "publications-of-person", "--format", "csv")
