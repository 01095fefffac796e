"""`kg publish`: the validated dist/graph.nt to a real stock Virtuoso (Digest at
/sparql-graph-crud-auth) and to Oxigraph; passwords from a file or the environment;
refusals (violations, a changed graph.nt, relative graph IRIs) before any upload."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import MINI
from deploy_servers import virtuoso_server, virtuoso_sql
from sparql_server import oxigraph_server

from kg.cli import main
from kg.query.stored import parse_query, run_remote

GRAPH = "https://kg.example.org/graph/mini"


@pytest.fixture(scope="session")
def virtuoso(tmp_path_factory):
    """A stock Virtuoso with a new database on free ports: user dba (password dba), and
    user kg (password kg-secret) with the SPARQL_UPDATE role, as docs/deploy.md advises."""
    with virtuoso_server(tmp_path_factory.mktemp("virtuoso")) as (base, sql):
        virtuoso_sql(sql, "DB.DBA.USER_CREATE('kg', 'kg-secret'); GRANT SPARQL_UPDATE TO \"kg\";")
        yield base


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    project = tmp_path_factory.mktemp("publish") / "project"
    shutil.copytree(MINI, project)
    assert main(["--project", str(project), "build"]) == 0
    return project


def _publish(project: Path, store: str, *extra: str) -> int:
    return main(["--project", str(project), "publish", "--store", store, *extra])


def _count(endpoint: str, graph: str) -> int:
    query = parse_query(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}", "n")
    return int(run_remote(endpoint, query, timeout=10).rows[0][0])


def _graph_file(project: Path) -> Path:
    """The N-Triples file the build's record names (graph.nt, wherever the layout puts it)."""
    record = json.loads((project / "dist" / "build.json").read_text("utf-8"))
    return project / "dist" / record["graph"]["path"]


def _triples(project: Path) -> int:
    return len(_graph_file(project).read_text("utf-8").splitlines())


def test_publish_to_stock_virtuoso_with_digest(virtuoso, built, monkeypatch, capsys, tmp_path):
    store = f"{virtuoso}/sparql-graph-crud-auth"
    monkeypatch.setenv("KG_STORE_PASSWORD", "kg-secret")
    assert _publish(built, store, "--graph", GRAPH, "--user", "kg") == 0
    assert f"published {_triples(built)} triples to {GRAPH}" in capsys.readouterr().out
    monkeypatch.delenv("KG_STORE_PASSWORD")
    (tmp_path / "pw").write_text("dba\n", encoding="utf-8")
    args = ["--graph", GRAPH, "--user", "dba", "--password-file", str(tmp_path / "pw")]
    assert _publish(built, store, *args) == 0  # replaced, not added to
    assert _count(f"{virtuoso}/sparql", GRAPH) == _triples(built)
    names = parse_query(
        f"SELECT ?n WHERE {{ GRAPH <{GRAPH}> {{ ?s <http://schema.org/alternateName> ?n }} }}", "n"
    )
    found = {(str(r[0]), r[0].language) for r in run_remote(f"{virtuoso}/sparql", names).rows}
    assert ("安", "zh") in found  # UTF-8 survives the upload
    # queries with Digest authentication too (Virtuoso's /sparql-auth)
    auth = run_remote(f"{virtuoso}/sparql-auth", names, timeout=10, user="dba", password="dba")
    assert {(str(r[0]), r[0].language) for r in auth.rows} == found


@pytest.mark.parametrize(
    ("path", "extra", "message"),
    [
        ("sparql-graph-crud", [], "HTTP 500 Request Failed: Error 22023: The request to SPARQL"),
        ("sparql-graph-crud", ["--graph", GRAPH], "HTTP 403: the store refuses writes"),
        ("sparql-graph-crud-auth", ["--graph", GRAPH], "authentication required"),
        (
            "sparql-graph-crud-auth",
            ["--graph", GRAPH, "--user", "dba", "--password", "wrong"],
            "HTTP 401: authentication failed",
        ),
    ],
)
def test_virtuoso_refusals_are_one_line(virtuoso, built, capsys, path, extra, message):
    assert _publish(built, f"{virtuoso}/{path}", *extra) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert err.count("\n") == 1 and "<" not in err and "Traceback" not in err


def test_publish_to_oxigraph_default_and_named_graph(built, capsys):
    with oxigraph_server() as base:
        assert _publish(built, f"{base}/store") == 0
        assert _publish(built, f"{base}/store", "--graph", GRAPH) == 0
        assert _count(f"{base}/query", GRAPH) == _triples(built)
    assert "to the default graph" in capsys.readouterr().out


@pytest.mark.parametrize("graph", ["graph/mini", "mini", "//kg.example.org/g", "a b:c", "<x:y>"])
def test_relative_graph_iris_are_refused(built, capsys, graph):
    assert _publish(built, "http://127.0.0.1:9/store", "--graph", graph) == 2
    assert "expected an absolute IRI" in capsys.readouterr().err


def test_publish_needs_a_validated_build(tmp_path, capsys):
    project = tmp_path / "project"
    shutil.copytree(MINI, project)
    store = "http://127.0.0.1:9/store"  # nothing listens: refusals come before any upload
    assert _publish(project, store) == 2
    assert "no built graph" in capsys.readouterr().err
    profile = project / "data" / "profiles" / "a-b.yaml"
    profile.write_text(profile.read_text("utf-8").replace("end: 2024-05", "end: 2022-05"), "utf-8")
    assert main(["--project", str(project), "build", "--allow-violations"]) == 0
    capsys.readouterr()
    assert _publish(project, store) == 1
    assert "built with 1 violation(s)" in capsys.readouterr().err
    assert _publish(project, store, "--allow-violations") == 2  # past the check: no server
    assert "cannot connect" in capsys.readouterr().err
    graph = _graph_file(project)
    graph.write_text(graph.read_text("utf-8") + "<x:a> <x:b> <x:c> .\n", "utf-8")
    assert _publish(project, store, "--allow-violations") == 2
    assert "changed since kg build validated it" in capsys.readouterr().err


def test_password_sources(built, capsys, tmp_path):
    store = "http://127.0.0.1:9/store"
    (tmp_path / "pw").write_text("x\n", encoding="utf-8")
    both = ["--user", "u", "--password", "p", "--password-file", str(tmp_path / "pw")]
    assert _publish(built, store, *both) == 2
    assert "not both" in capsys.readouterr().err
    assert _publish(built, store, "--user", "u", "--password-file", str(tmp_path / "no")) == 2
    assert "cannot read the password file" in capsys.readouterr().err


def _clone(project: Path, to: Path) -> Path:
    """The project as a clone that ships its dist/ (a folder, no .kg-cache: nothing this
    machine signed)."""
    ignore = shutil.ignore_patterns(".kg-cache", ".dist.versions")
    shutil.copytree(project, to, symlinks=False, ignore=ignore)
    return to


def _forge_record(project: Path) -> None:
    """build.json rewritten to say the graph conforms, with the graph's real hash."""
    record_path = project / "dist" / "build.json"
    record = json.loads(record_path.read_text("utf-8"))
    record.update(conforms=True, violations=0)
    record["graph"]["sha256"] = hashlib.sha256(_graph_file(project).read_bytes()).hexdigest()
    record_path.write_text(json.dumps(record), "utf-8")


def test_a_cloned_build_record_is_not_taken_at_its_word(tmp_path, capsys):
    """A cloned project's dist/ with a graph that breaks a shape and a build.json forged to
    say it conforms: kg publish validates the graph itself and refuses it (it uploaded it)."""
    project = tmp_path / "made"
    shutil.copytree(MINI, project)
    profile = project / "data" / "profiles" / "a-b.yaml"
    profile.write_text(profile.read_text("utf-8").replace("end: 2024-05", "end: 2022-05"), "utf-8")
    assert main(["--project", str(project), "build", "--allow-violations"]) == 0
    clone = _clone(project, tmp_path / "clone")
    _forge_record(clone)
    capsys.readouterr()
    assert _publish(clone, "http://127.0.0.1:9/store") == 1
    assert "built with 1 violation(s)" in capsys.readouterr().err
    graph = _graph_file(clone)
    graph.write_text(graph.read_text("utf-8") + "<x:a> <x:b> .\n", "utf-8")
    _forge_record(clone)
    assert _publish(clone, "http://127.0.0.1:9/store", "--allow-violations") == 2
    err = capsys.readouterr().err
    assert f"{graph.resolve()}:{_triples(clone)}" in err and "expected an N-Triples triple" in err


def test_a_cloned_conforming_graph_is_validated_and_published(built, tmp_path, capsys):
    clone = _clone(built, tmp_path / "clone")
    (clone / "dist" / "build.json").write_text(
        (clone / "dist" / "build.json").read_text("utf-8").replace('"triples": ', '"triples": 1'),
        "utf-8",
    )  # the record's count is not trusted either: the lines are counted
    with oxigraph_server() as base:
        assert _publish(clone, f"{base}/store", "--graph", GRAPH) == 0
        assert _count(f"{base}/query", GRAPH) == _triples(clone)
    assert f"published {_triples(clone)} triples" in capsys.readouterr().out
