"""`kg serve` on the build's persistent store (kg.serve.worker.open_query_store, decision
0031): a real `kg serve` process on 127.0.0.1 whose query zygote has the store's files
open (it did not load graph.nt), answers stored queries with the build's precomputed
bytes, and shows /sparql the default graph only: the page-owner index is invisible."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
import urllib.parse

import pytest
from conftest import REPO, seed_project
from sparql_server import free_port

from kg.config import load_config
from kg.pipeline import build
from kg.query.lookup import load_all_queries
from kg.query.persist import STORE_DIR, open_built_store
from kg.query.results import render
from kg.query.stored import run_embedded, with_kg_prefixes

OWNERS = "urn:kg:page-owners"
JSON = "application/sparql-results+json"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`kg serve` on a built copy of the seeds: (base URL, project root, server pid)."""
    root = seed_project(tmp_path_factory.mktemp("served") / "project")
    assert build(load_config(root)).published
    port = free_port()
    command = [sys.executable, "-m", "kg", "--project", str(root), "serve", "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while _status(url, "/_kg/build") is None:
        assert process.poll() is None and time.monotonic() < deadline, "kg serve did not start"
        time.sleep(0.1)
    try:
        yield url, root, process.pid
    finally:
        process.terminate()
        process.wait(20)


def _status(url: str, path: str) -> int | None:
    try:
        return _get(url, path)[0]
    except OSError:
        return None


def _get(url: str, path: str, accept: str = JSON) -> tuple[int, bytes]:
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("GET", path, headers={"Accept": accept})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _sparql(url: str, query: str, **dataset: str) -> tuple[int, bytes]:
    return _get(url, "/sparql?" + urllib.parse.urlencode({"query": query, **dataset}))


def _descendants(pid: int) -> list[int]:
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as kids:
            for kid in map(int, kids.read().split()):
                found += [kid, *_descendants(kid)]
    return found


def test_the_query_zygote_holds_the_builds_store_open(served):
    url, root, pid = served
    assert _sparql(url, "ASK { ?s ?p ?o }")[0] == 200  # the zygote has started
    store = (root / STORE_DIR).resolve()
    held = set()
    for kid in _descendants(pid):
        for fd in os.listdir(f"/proc/{kid}/fd"):
            try:
                held.add(os.readlink(f"/proc/{kid}/fd/{fd}"))
            except OSError:
                continue
    assert any(p.startswith(f"{store}/") and p.endswith(".sst") for p in held), held


@pytest.mark.parametrize(
    "name, fmt", [("people", "json"), ("people", "csv"), ("coauthor-network", "ttl")]
)
def test_stored_queries_are_the_precomputed_bytes(served, name, fmt):
    url, root, _ = served
    store = open_built_store(load_config(root))
    assert store is not None
    query = with_kg_prefixes(load_all_queries(REPO / "queries", None)[name])
    answer = run_embedded(store, query)
    status, body = _get(url, f"/queries/{name}.{fmt}", "*/*")
    assert status == 200
    assert (
        body.decode()
        == answer.text(fmt, None)
        == render(run_embedded(store, query, precomputed=False), fmt)
    )


def test_stored_people_lists_the_profiles(served):
    url, _, _ = served
    status, body = _get(url, "/queries/people.json", "*/*")
    assert status == 200
    names = {b["name"]["value"] for b in json.loads(body)["results"]["bindings"]}
    # the five profiles of data/profiles/, by name
    assert {"Hanyu Zhao", "Liangyu Zhao", "Yihao Zhao", "Yinmin Zhong", "Yuheng Zhao"} <= names


def test_sparql_sees_the_default_graph_and_no_named_graph(served):
    url, root, _ = served
    lines = (root / "dist" / "graph.nt").read_bytes().count(b"\n")
    status, body = _sparql(url, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    assert status == 200
    assert int(json.loads(body)["results"]["bindings"][0]["n"]["value"]) == lines
    status, body = _sparql(url, "SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")
    assert status == 200 and json.loads(body)["results"]["bindings"] == []
    status, body = _sparql(url, "ASK { ?s <urn:kg:page-owner> ?o }")
    assert status == 200 and json.loads(body)["boolean"] is False


@pytest.mark.parametrize(
    "query, dataset",
    [
        (f"ASK {{ GRAPH <{OWNERS}> {{ ?s ?p ?o }} }}", {}),
        (f"SELECT * FROM <{OWNERS}> WHERE {{ ?s ?p ?o }}", {}),
        (f"SELECT * FROM NAMED <{OWNERS}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}", {}),
        ("PREFIX k: <urn:kg:> ASK { GRAPH k:page-owners { ?s ?p ?o } }", {}),
        ("SELECT * WHERE { ?s ?p ?o }", {"default-graph-uri": OWNERS}),
        ("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", {"named-graph-uri": OWNERS}),
    ],
)
def test_the_page_owner_index_cannot_be_named(served, query, dataset):
    url, _, _ = served
    status, body = _sparql(url, query, **dataset)
    assert status == 400, body
    assert b"no graph" in body


def test_named_graphs_an_operator_adds_are_served_from_memory(served):
    """`graphs.nq` next to graph.nt (kg build writes none) cannot go into the read-only
    store: the graph is loaded into memory with them, as before."""
    from kg.serve.worker import open_query_store

    _, root, _ = served
    out = root / "dist"
    assert open_query_store(out, root).persistent
    extra = "<https://example.org/s> <https://example.org/p> <https://example.org/o> "
    (out / "graphs.nq").write_text(extra + "<https://example.org/g> .\n", encoding="utf-8")
    try:
        store = open_query_store(out, root)
    finally:
        (out / "graphs.nq").unlink()
    assert not store.persistent
    assert store.graphs == {"https://example.org/g"}
    assert store.triples == (out / "graph.nt").read_bytes().count(b"\n") + 1
