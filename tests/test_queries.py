"""Stored queries: exact answers on the seeds, the same embedded and on a real SPARQL server,
and parameters that cannot inject."""

from __future__ import annotations

import os
import re
from collections import Counter

import pytest
from conftest import REPO
from rdflib import Graph, Literal, URIRef
from rdflib.compare import isomorphic
from sparql_server import oxigraph_server

from kg.bench.synth import generate
from kg.cli import main
from kg.config import load_config
from kg.errors import RemoteError, UsageError
from kg.pipeline import build_graph
from kg.query.graph_store import publish
from kg.query.results import render
from kg.query.stored import load_queries, parse_query, run_embedded, run_rdflib, run_remote

GOLDEN = REPO / "tests" / "golden" / "queries"
QUERIES = load_queries(REPO / "queries")
B = "https://kg.example.org/"


@pytest.fixture(scope="module")
def graph(seed_build):
    return seed_build[1].graph


@pytest.fixture(scope="module")
def endpoint(graph):
    """A real oxigraph server on 127.0.0.1 holding the seed graph (published with GSP)."""
    with oxigraph_server() as base:
        assert publish(graph, f"{base}/store") in (200, 201, 204)
        yield f"{base}/query"


def test_library_has_documented_queries_with_defaults():
    assert len(QUERIES) >= 12
    for query in QUERIES.values():
        assert query.summary and query.description, query.name
        for p in query.parameters:
            assert p.default is not None, (query.name, p.name)


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_stored_query_answer_matches_golden_file(graph, name):
    answer = run_embedded(graph, QUERIES[name])
    if answer.graph is not None:
        path = GOLDEN / f"{name}.ttl"
        if os.environ.get("KG_UPDATE_GOLDEN"):
            path.write_text(render(answer, "ttl"), encoding="utf-8")
        assert len(answer.graph) > 0
        assert isomorphic(answer.graph, Graph().parse(path, format="turtle"))
        return
    path = GOLDEN / f"{name}.tsv"
    text = render(answer, "tsv")
    if os.environ.get("KG_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert answer.rows, name
    assert text == path.read_text(encoding="utf-8")


def _names(answer, column: str) -> list[str]:
    i = answer.variables.index(column)
    return [str(row[i]) for row in answer.rows]


def test_the_paper_shared_by_yinmin_zhong_and_yihao_zhao(graph):
    answer = run_embedded(graph, QUERIES["shared-papers"])
    assert _names(answer, "title") == [
        "ElasticFlow: An Elastic Serverless Training Platform for Distributed Deep Learning"
    ]


def test_the_people_advised_by_xin_jin(graph):
    answer = run_embedded(graph, QUERIES["advisees-of"])
    rows = {(str(r[1]), str(r[2])) for r in answer.rows}
    assert rows == {("Yihao Zhao", "co-advisor"), ("Yinmin Zhong", "advisor")}


def test_coauthor_counts_for_yihao_zhao(graph):
    answer = run_embedded(graph, QUERIES["coauthors"])
    top = {str(r[1]): int(r[2]) for r in answer.rows[:2]}
    assert top == {"Xin Jin": 7, "Xuanzhe Liu": 7}


def test_bytedance_interns_include_teams(graph):
    answer = run_embedded(graph, QUERIES["interns-at"])
    assert _names(answer, "name") == ["Liangyu Zhao", "Yihao Zhao", "Yinmin Zhong"]


def test_authors_come_back_in_printed_order(graph):
    answer = run_embedded(graph, QUERIES["authors-of-publication"])
    assert [int(r[0]) for r in answer.rows] == list(range(1, 11))
    assert _names(answer, "printed")[:3] == ["Diandian Gu", "Yihao Zhao", "Yinmin Zhong"]


def test_parameters_can_be_changed(graph):
    answer = run_embedded(
        graph,
        QUERIES["shared-papers"],
        {"a": B + "person/hanyu-zhao", "b": B + "person/zhenhua-han"},
    )
    assert len(answer.rows) == 3  # SiloD, HiveD, Gandiva


# ------------------------------------------------------------------ pyoxigraph == rdflib


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_embedded_engine_answers_like_rdflib_on_the_seeds(graph, name):
    _assert_same_answer(run_rdflib(graph, QUERIES[name]), run_embedded(graph, QUERIES[name]))


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """A 30-person synthetic project (homonyms, advisors, interns) and its graph."""
    root = tmp_path_factory.mktemp("synthetic")
    generate(root, 30, seed=3)
    config = load_config(root)
    return config.base_iri, build_graph(config)[1].graph


def _synthetic_values(base: str, graph, name: str) -> dict[str, str]:
    """Parameters that give a non-empty answer on the synthetic corpus."""
    cited = Counter(o for o in graph.objects() if isinstance(o, URIRef) and str(o).startswith(base))

    def most_cited(kind: str, n: int = 0) -> str:
        return str([o for o, _ in cited.most_common() if str(o).startswith(f"{base}{kind}/")][n])

    chosen = {
        "advisor": f"{base}person/person-000000",
        "org": f"{base}org/co-0" if name == "interns-at" else f"{base}org/uni-0",
        "person": most_cited("person"),
        "a": most_cited("person"),
        "b": most_cited("person", 1),
        "publication": most_cited("publication"),
    }
    return {p.name: chosen[p.name] for p in QUERIES[name].parameters if p.name in chosen}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_embedded_engine_answers_like_rdflib_on_a_synthetic_corpus(synthetic, name):
    base, graph = synthetic
    values = _synthetic_values(base, graph, name)
    reference = run_rdflib(graph, QUERIES[name], values)
    assert reference.rows or reference.graph, f"{name}: pick parameters with an answer"
    _assert_same_answer(reference, run_embedded(graph, QUERIES[name], values))


BEFORE_0019 = load_queries(REPO / "tests" / "fixtures" / "queries-before-0019")
BEFORE_0019 |= load_queries(REPO / "tests" / "fixtures" / "queries-before-0031")  # and 0031
BEFORE_0019 |= load_queries(REPO / "tests" / "fixtures" / "queries-before-0042")  # and 0042


@pytest.mark.parametrize("name", sorted(BEFORE_0019))
def test_rewritten_query_answers_like_its_text_before_the_rewrite(graph, synthetic, name):
    """docs/decisions/0019: the rewrites for speed keep every answer, on the seeds and
    on the synthetic corpus (parameters with a non-empty answer)."""
    base, corpus = synthetic
    for g, values in ((graph, {}), (corpus, _synthetic_values(base, corpus, name))):
        before = run_embedded(g, BEFORE_0019[name], values)
        assert before.rows or before.graph, name
        _assert_same_answer(before, run_embedded(g, QUERIES[name], values))


def _assert_same_answer(reference, answer) -> None:
    assert answer.form == reference.form
    if reference.graph is not None:
        assert isomorphic(answer.graph, reference.graph)
        return
    assert answer.variables == reference.variables
    assert answer.rows == reference.rows  # every stored ORDER BY is total


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_every_stored_select_orders_by_every_projected_variable(name):
    """Without a total order, two correct engines may list ties differently."""
    query = QUERIES[name]
    if query.form != "SELECT":
        return
    body = query.text.split("SELECT", 1)[1]
    head, _, rest = body.partition("WHERE")
    projected = set(re.findall(r"\?(\w+)\)?(?:\s|$)", re.sub(r"\(.* AS (\?\w+)\)", r"\1", head)))
    order = re.search(r"ORDER BY (.*)", rest)
    assert order, f"{name}: no ORDER BY"
    assert projected <= set(re.findall(r"\?(\w+)", order.group(1))), name


# ------------------------------------------------------------------ the same on a real server


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_every_query_gives_the_same_answer_remotely(graph, endpoint, name):
    local = run_embedded(graph, QUERIES[name])
    remote = run_remote(endpoint, QUERIES[name])
    if local.graph is not None:
        assert isomorphic(local.graph, remote.graph)
        return
    assert remote.variables == local.variables
    assert sorted(map(repr, remote.rows)) == sorted(map(repr, local.rows))
    assert remote.rows == local.rows  # ORDER BY makes every stored query deterministic


# ------------------------------------------------------------------ injection

HOSTILE_VALUES = [
    'CCF" } UNION { ?venue ?p ?o } #',
    "CCF' } UNION { ?s ?p ?o }",
    "CCF\n} UNION {\n?s ?p ?o",
    'A"^^<http://www.w3.org/2001/XMLSchema#string> } UNION { ?a ?b ?c',
    "{ } } } UNION",
]


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_literal_parameters_cannot_inject_embedded(graph, value):
    answer = run_embedded(graph, QUERIES["ranked-venue-papers"], {"list": value})
    assert answer.rows == ()


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_literal_parameters_cannot_inject_remote(endpoint, value):
    answer = run_remote(endpoint, QUERIES["ranked-venue-papers"], {"list": value})
    assert answer.rows == ()


@pytest.mark.parametrize(
    "value",
    [
        "https://kg.example.org/person/x> } UNION { ?s ?p ?o } #",
        "https://kg.example.org/person/x>\n",
        'https://kg.example.org/"person',
        "not an iri",
    ],
)
def test_iri_parameters_are_validated(value):
    with pytest.raises(UsageError, match="is not an absolute IRI"):
        QUERIES["coauthors"].bindings({"person": value})


def test_hostile_literal_is_matched_as_a_value(graph):
    """The value reaches the query as one literal: it matches only an equal literal."""
    query = parse_query("SELECT ?x WHERE { BIND (?_v AS ?x) }", "echo")
    value = 'a" } UNION { ?s ?p ?o'
    assert run_embedded(graph, query, {"v": value}).rows == ((Literal(value),),)


def test_both_engines_bind_parameters_inside_sub_selects(graph):
    """Both engines get the parameters substituted into the same text, here two
    sub-SELECTs with a parameter each: one paper has both authors."""
    query = parse_query(
        "PREFIX schema: <http://schema.org/>\nSELECT ?title WHERE {"
        " { SELECT ?paper WHERE { ?paper schema:author ?_a_iri } }"
        " { SELECT ?paper WHERE { ?paper schema:author ?_b_iri } }"
        " ?paper schema:name ?title } ORDER BY ?title",
        "sub",
    )
    values = {"a": B + "person/yinmin-zhong", "b": B + "person/yihao-zhao"}
    title = "ElasticFlow: An Elastic Serverless Training Platform for Distributed Deep Learning"
    assert run_rdflib(graph, query, values).rows == ((Literal(title),),)
    assert run_embedded(graph, query, values).rows == ((Literal(title),),)


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_literal_parameters_cannot_inject_the_reference_engine(graph, value):
    answer = run_rdflib(graph, QUERIES["ranked-venue-papers"], {"list": value})
    assert answer.rows == ()


# ------------------------------------------------------------------ CLI and errors


def test_cli_query_formats(capsys):
    assert main(["--project", str(REPO), "query", "shared-papers", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("paper,title\r\n")
    assert main(["--project", str(REPO), "query", "shared-papers", "--format", "json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["head"]["vars"] == ["paper", "title"]
    assert data["results"]["bindings"][0]["paper"]["type"] == "uri"
    assert main(["--project", str(REPO), "query", "person-graph", "--format", "json"]) == 0
    assert "@context" in json.loads(capsys.readouterr().out)
    assert main(["--project", str(REPO), "query", "--list"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in QUERIES)


@pytest.mark.parametrize("built", ["graph.nt", "graph.ttl", "graph.jsonld"])
def test_cli_queries_a_built_graph_file_like_the_data(capsys, tmp_path, built):
    args = ["--project", str(REPO), "query", "coauthors", "--format", "tsv"]
    assert main(["--project", str(REPO), "build", "--out", str(tmp_path / "dist")]) == 0
    capsys.readouterr()
    assert main(args) == 0
    from_data = capsys.readouterr().out
    assert main([*args, "--graph", str(tmp_path / "dist" / built)]) == 0
    assert capsys.readouterr().out == from_data
    assert from_data.count("\n") > 10


def test_cli_reports_an_unusable_graph_file(capsys, tmp_path):
    args = ["--project", str(REPO), "query", "people", "--graph"]
    (tmp_path / "bad.ttl").write_text("<http://a> <http://b> .\n", encoding="utf-8")
    (tmp_path / "graph.csv").write_text("a,b\n", encoding="utf-8")
    assert main([*args, str(tmp_path / "missing.nt")]) == 2
    assert main([*args, str(tmp_path / "bad.ttl")]) == 2
    assert main([*args, str(tmp_path / "graph.csv")]) == 2
    assert main([*args, str(tmp_path / "bad.ttl"), "--endpoint", "http://127.0.0.1:1/"]) == 2
    err = capsys.readouterr().err
    assert "missing.nt: cannot read the graph" in err
    assert "bad.ttl: not valid ttl: Parser error at line 1" in err
    assert "graph.csv: unknown graph format" in err
    assert "not both" in err
    assert "Traceback" not in err


def test_cli_usage_errors_exit_2(capsys):
    assert main(["--project", str(REPO), "query", "nope"]) == 2
    assert main(["--project", str(REPO), "query", "coauthors", "--param", "persn=x"]) == 2
    assert main(["--project", str(REPO), "query", "coauthors", "--param", "novalue"]) == 2
    err = capsys.readouterr().err
    assert "no stored query 'nope'" in err and "has no parameter persn" in err


def test_unreachable_endpoint_is_reported(graph):
    from sparql_server import free_port

    with pytest.raises(RemoteError, match="cannot connect"):
        run_remote(f"http://127.0.0.1:{free_port()}/query", QUERIES["people"], timeout=5)


def test_http_error_is_reported(endpoint):
    with pytest.raises(RemoteError, match="no SPARQL endpoint there"):
        run_remote(endpoint.replace("/query", "/nowhere"), QUERIES["people"], timeout=5)


def test_publish_replaces_a_named_graph(graph, endpoint):
    store = endpoint.replace("/query", "/store")
    named = "https://kg.example.org/graph/seeds"
    publish(graph, store, named)
    publish(graph, store, named)  # replacing, not adding: the count stays the same
    count = parse_query(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{named}> {{ ?s ?p ?o }} }}", "n")
    assert int(run_remote(endpoint, count).rows[0][0]) == len(graph)
    assert URIRef(named)


class _Refusing:
    """A local HTTP server that answers 401, or answers too slowly."""

    def __init__(self, delay: float = 0.0, status: int = 401) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                import time

                # read the body first: answering before it is read races the client's
                # upload (a reset instead of the 401 under load)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                time.sleep(outer.delay)
                self.send_response(outer.status)
                self.send_header("WWW-Authenticate", 'Basic realm="kg"')
                self.end_headers()

            do_PUT = do_POST

            def log_message(self, *args):
                return None

        self.delay, self.status = delay, status
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sparql"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_authentication_failure_is_reported():
    server = _Refusing(status=401)
    try:
        with pytest.raises(RemoteError, match="authentication failed"):
            run_remote(server.url, QUERIES["people"], timeout=5, user="u", password="wrong")
    finally:
        server.close()


def test_timeout_is_reported():
    server = _Refusing(delay=3.0, status=200)
    try:
        with pytest.raises(RemoteError, match="no answer within the timeout"):
            run_remote(server.url, QUERIES["people"], timeout=1)
    finally:
        server.close()


def test_publish_authentication_failure_is_reported(graph):
    server = _Refusing(status=401)
    try:
        with pytest.raises(RemoteError, match="authentication failed"):
            publish(graph, server.url, user="u", password="wrong", timeout=5)
    finally:
        server.close()
