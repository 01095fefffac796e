"""kg serve on a real uvicorn server on 127.0.0.1: every IRI dereferences, content
negotiation, the SPARQL 1.1 Protocol (SPARQLWrapper, rdflib's SPARQLStore), the stored
queries API, path traversal, and --watch with real edits."""

from __future__ import annotations

import dataclasses
import http.client
import json
import shutil
import threading
import time
import urllib.parse
from contextlib import contextmanager

import pytest
import uvicorn
from conftest import MINI, REPO
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF
from sparql_server import free_port

from kg.config import load_config
from kg.publish.layout import page_things, path_of
from kg.query.results import to_sparql_json
from kg.query.stored import load_queries, run_embedded
from kg.serve.server import Limits, app_for, open_live, uvicorn_config

SD = "http://www.w3.org/ns/sparql-service-description#"
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@contextmanager
def running(app):
    """uvicorn serving `app` on a free loopback port, in a thread, configured (bounds,
    timeouts) as `kg serve` configures it."""
    port = free_port()
    config = uvicorn_config(app, "127.0.0.1", port, app.state.live.http)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "kg serve did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


class Client:
    """One kept-alive HTTP/1.1 connection; paths are sent exactly as given."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)

    def get(self, path: str, accept: str | None = None, method: str = "GET", body=None, **h):
        headers = {"Accept": accept} if accept else {}
        headers.update({k.replace("_", "-"): v for k, v in h.items()})
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        return response.status, response.headers, response.read()

    def follow(self, path: str, accept: str | None = None):
        for _ in range(5):
            status, headers, body = self.get(path, accept)
            if status != 303:
                return status, headers, body, path
            path = headers["Location"]
        raise AssertionError(f"redirect loop at {path}")


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    """kg serve on the seed data, built into a temporary directory."""
    out = tmp_path_factory.mktemp("serve") / "dist"
    config = dataclasses.replace(load_config(REPO), out=str(out))
    live = open_live(config, lambda _: None, rebuild=True)
    with running(app_for(config, live, False, lambda _: None)) as url:
        yield url, config, live, Graph().parse(out / "graph.nt", format="nt")


def test_every_iri_with_a_page_answers_html_and_turtle_about_itself(seeds):
    url, config, _, graph = seeds
    client = Client(url)
    things = page_things(graph.subjects(), config.base_iri)
    assert len(things) > 300
    for thing in things:
        path = "/" + path_of(str(thing), config.base_iri)
        status, headers, body = client.get(path)
        assert status == 200, path
        assert headers["Content-Type"].startswith("text/html"), path
        assert b'<link rel="alternate" type="text/turtle"' in body, path
        status, headers, body = client.get(path, "text/turtle")
        assert status == 200 and headers["Content-Type"].startswith("text/turtle"), path
        assert headers["Content-Location"] == f"{path}.ttl"
        description = Graph().parse(data=body, format="turtle")
        assert set(description.triples((thing, None, None))) == set(
            graph.triples((thing, None, None))
        ), path


def test_every_iri_under_the_base_dereferences_to_triples_about_it(seeds):
    """IRIs minted under a thing (roles, authorships, yearly events) 303 to the thing,
    whose description holds their triples."""
    url, config, _, graph = seeds
    client = Client(url)
    iris = {t for t in graph.all_nodes() if isinstance(t, URIRef)}
    things = set(page_things(graph.subjects(), config.base_iri))
    minted = sorted(i for i in iris if str(i).startswith(config.base_iri) and i not in things)
    assert len(minted) > 400
    parsed: dict[str, Graph] = {}  # an owner's description, parsed once
    for iri in minted:
        path = "/" + path_of(str(iri), config.base_iri)
        status, _, body, final = client.follow(path, "text/turtle")
        assert status == 200 and final != path, path
        if final not in parsed:
            parsed[final] = Graph().parse(data=body, format="turtle")
        assert set(parsed[final].triples((iri, None, None))) == set(
            graph.triples((iri, None, None))
        ), path


def test_content_negotiation_edge_cases(seeds):
    url, _, _, _ = seeds
    client = Client(url)
    person = "/person/yihao-zhao"
    cases = {
        None: "text/html",
        BROWSER: "text/html",
        "text/turtle": "text/turtle",
        "application/ld+json": "application/ld+json",
        "application/n-triples": "application/n-triples",
        "application/ld+json;q=0.5, text/turtle;q=0.9": "text/turtle",
        "text/html;q=0.1, application/n-triples": "application/n-triples",
        "text/*;q=0.5, application/ld+json;q=0.4": "text/html",
        "*/*;q=0.1, text/turtle;q=0": "text/html",
        "TEXT/Turtle": "text/turtle",
        "text/turtle;q=nonsense, application/ld+json": "application/ld+json",
    }
    for accept, expected in cases.items():
        status, headers, body = client.get(person, accept)
        assert status == 200, accept
        assert headers["Content-Type"].split(";")[0] == expected, accept
        assert "Accept" in headers["Vary"].split(", ")
        ext = {"text/html": "html", "text/turtle": "ttl"}.get(expected)
        if ext:
            assert headers["Content-Location"] == f"{person}.{ext}"
        assert f'<{person}.nt>; rel="describedby"; type="application/n-triples"' in headers["Link"]
    for accept in ("image/png", "application/rdf+xml", "text/turtle;q=0, text/html;q=0"):
        status, headers, body = client.get(person, accept)
        assert status == 406, accept
        assert b"text/turtle" in body and headers["Vary"] == "Accept"
    status, headers, body = client.get(f"{person}.jsonld", "text/html")
    assert status == 200 and headers["Content-Type"].startswith("application/ld+json")
    assert json.loads(body)["@graph"]
    status, headers, _ = client.get("/person/yihao-zhao/award/1", "text/turtle")
    assert status == 303 and headers["Location"] == person
    assert client.get("/person/nobody")[0] == 404
    assert client.get("/person/nobody/award/1")[0] == 404
    status, headers, body = client.get("/")
    assert status == 200 and b"person/yihao-zhao.html" in body


def test_dataset_void_and_dumps_are_at_their_iris(seeds):
    url, config, _, _graph = seeds
    client = Client(url)
    status, _, body = client.get("/dataset", "text/turtle")
    assert status == 200
    void = Graph().parse(data=body, format="turtle")
    dataset = URIRef(config.base_iri + "dataset")
    endpoint = void.value(dataset, URIRef("http://rdfs.org/ns/void#sparqlEndpoint"))
    assert endpoint == URIRef(config.base_iri + "sparql")
    dumps = list(void.objects(dataset, URIRef("http://rdfs.org/ns/void#dataDump")))
    assert len(dumps) == 3
    for dump in dumps:
        status, _headers, body = client.get("/" + path_of(str(dump), config.base_iri))
        assert status == 200 and len(body) > 1000, dump
    assert client.get("/void.ttl")[0] == 200
    status, _, body = client.get("/dataset")
    assert status == 200 and b"sparql" in body


@pytest.mark.parametrize(
    "path",
    [
        "/../graph.nt",
        "/%2e%2e/graph.nt",
        "/%2E%2E/people/yihao-zhao.ttl",
        "/person/..%2f..%2fgraph.nt",
        "/person/%2e%2e/%2e%2e/.kg-output",
        "/..%5c..%5cgraph.nt",
        "//etc/passwd",
        "/person//yihao-zhao",
        "/.kg-output",
        "/person/yihao-zhao.ttl%00.html",
    ],
)
def test_nothing_outside_the_web_root_is_served(seeds, path):
    url, _, _, _ = seeds
    status, _, body = Client(url).get(path)
    assert status in (400, 404), (path, status)
    assert b"<http" not in body and b"written by kg" not in body


# ------------------------------------------------------------------ SPARQL


def test_sparqlwrapper_select_ask_construct_by_get_and_post(seeds):
    from SPARQLWrapper import CSV, JSON, POST, POSTDIRECTLY, TURTLE, XML, SPARQLWrapper

    url, config, _, graph = seeds
    person = URIRef(config.base_iri + "person/yihao-zhao")
    select = f"SELECT ?name WHERE {{ <{person}> <http://schema.org/name> ?name }}"
    for method, request_method in (("GET", None), (POST, None), (POST, POSTDIRECTLY)):
        client = SPARQLWrapper(f"{url}/sparql")
        client.setMethod(method)
        if request_method:
            client.setRequestMethod(request_method)
        client.setQuery(select)
        client.setReturnFormat(JSON)
        rows = client.queryAndConvert()["results"]["bindings"]
        assert [r["name"]["value"] for r in rows] == [str(graph.value(person, URIRef(
            "http://schema.org/name")))]  # fmt: skip
    client.setReturnFormat(XML)
    assert client.queryAndConvert().getElementsByTagName("literal")
    client.setReturnFormat(CSV)
    assert client.queryAndConvert().decode().startswith("name\r\n")
    client.setQuery(f"ASK {{ <{person}> a <http://schema.org/Person> }}")
    client.setReturnFormat(JSON)
    assert client.queryAndConvert()["boolean"] is True
    client.setQuery(f"CONSTRUCT {{ <{person}> ?p ?o }} WHERE {{ <{person}> ?p ?o }}")
    client.setReturnFormat(TURTLE)
    answer = Graph().parse(data=client.queryAndConvert(), format="turtle")
    assert set(answer) == set(graph.triples((person, None, None)))


def test_rdflib_sparqlstore_reads_the_endpoint(seeds):
    from rdflib.plugins.stores.sparqlstore import SPARQLStore

    url, config, _, graph = seeds
    remote = Graph(store=SPARQLStore(f"{url}/sparql", returnFormat="json"))
    person = URIRef(config.base_iri + "person/yihao-zhao")
    rows = list(remote.query("SELECT ?t WHERE { ?s a ?t } ORDER BY ?t LIMIT 3"))
    assert len(rows) == 3
    assert set(remote.triples((person, None, None))) == set(graph.triples((person, None, None)))
    assert (person, RDF.type, URIRef("http://schema.org/Person")) in remote


def test_sparql_protocol_formats_errors_and_service_description(seeds):
    url, _, _, graph = seeds
    client = Client(url)
    count = urllib.parse.quote("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    for accept, marker in (
        ("application/sparql-results+xml", b"<sparql"),
        ("text/csv", b"n\r\n"),
        ("text/tab-separated-values", b"?n\n"),
        (None, b'"head"'),
    ):
        status, headers, body = client.get(f"/sparql?query={count}", accept)
        assert status == 200 and marker in body, accept
        assert headers["Access-Control-Allow-Origin"] == "*"
        assert str(len(graph)).encode() in body
    construct = urllib.parse.quote("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 5")
    for accept, fmt in (("application/ld+json", "json-ld"), ("application/n-triples", "nt")):
        status, _, body = client.get(f"/sparql?query={construct}", accept)
        assert status == 200 and len(Graph().parse(data=body, format=fmt)) == 5
    assert client.get(f"/sparql?query={construct}", "text/csv")[0] == 406
    assert client.get("/sparql?query=SELEKT", None)[0] == 400
    update = "INSERT DATA { <http://x/s> <http://x/p> <http://x/o> }"
    assert client.get(f"/sparql?update={urllib.parse.quote(update)}")[0] == 403
    assert client.get(f"/sparql?query={urllib.parse.quote(update)}")[0] == 403
    status, _, _ = client.get(
        "/sparql", method="POST", body=update, Content_Type="application/sparql-update"
    )
    assert status == 403
    form = urllib.parse.urlencode({"update": update})
    status, _, _ = client.get(
        "/sparql", method="POST", body=form, Content_Type="application/x-www-form-urlencoded"
    )
    assert status == 403
    status, headers, body = client.get("/sparql")
    description = Graph().parse(data=body, format="turtle")
    assert (URIRef(f"{url}/sparql"), RDF.type, URIRef(SD + "Service")) in description
    assert headers["Access-Control-Allow-Origin"] == "*"


def test_sparql_result_limit_and_timeout(seeds):
    url, _, live, _ = seeds
    client = Client(url)
    everything = urllib.parse.quote("SELECT * WHERE { ?s ?p ?o }")
    cross = urllib.parse.quote("SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }")
    saved = live.limits
    try:
        live.use(Limits(timeout=10, max_results=7))
        status, headers, body = client.get(f"/sparql?query={everything}")
        assert status == 200 and headers["KG-Result-Limit"] == "7"
        assert len(json.loads(body)["results"]["bindings"]) == 7
        live.use(Limits(timeout=0.3, max_results=10**12))
        started = time.monotonic()
        status, _, body = client.get(f"/sparql?query={cross}")
        assert status == 503 and b"longer than" in body
        assert time.monotonic() - started < 5
        assert live.runner.free == live.limits.concurrent  # killed at its deadline
        live.use(Limits(timeout=10, max_results=7, concurrent=0))
        status, _, body = client.get(f"/sparql?query={everything}")
        assert status == 503 and b"too many queries" in body
    finally:
        live.use(saved)


# ------------------------------------------------------------------ stored queries


def test_stored_queries_api_binds_parameters_as_terms(seeds):
    url, config, _live, graph = seeds
    client = Client(url)
    status, _, body = client.get("/queries")
    listed = {q["name"]: q for q in json.loads(body)}
    assert status == 200 and "coauthors" in listed
    person = config.base_iri + "person/yihao-zhao"
    query = load_queries(config.queries_dir)["coauthors"]
    expected = to_sparql_json(run_embedded(graph, query, {"person": person}))
    path = f"/queries/coauthors?person={urllib.parse.quote(person, safe='')}"
    status, headers, body = client.get(path)
    assert status == 200 and json.loads(body) == expected
    assert expected["results"]["bindings"]
    status, headers, body = client.get(path, "text/csv")
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    assert body.decode().count("\r\n") == len(expected["results"]["bindings"]) + 1
    assert client.get(path.replace("coauthors?", "coauthors.csv?"))[2] == body
    hostile = urllib.parse.quote(person + "> } UNION { ?x ?y ?z", safe="")
    status, _, body = client.get(f"/queries/coauthors?person={hostile}")
    assert status == 400 and b"not an absolute IRI" in body
    assert client.get("/queries/coauthors?nobody=1")[0] == 400
    assert client.get("/queries/no-such-query")[0] == 404
    assert client.get(path, "image/png")[0] == 406


# ------------------------------------------------------------------ --watch


def wait_for(check, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("timed out waiting")


def test_watch_rebuilds_after_an_edit_and_keeps_the_last_good_build(tmp_path):
    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    config = load_config(root)
    messages: list[str] = []
    live = open_live(config, messages.append, rebuild=True)
    profile = root / "data" / "profiles" / "a-b.yaml"
    original = profile.read_text(encoding="utf-8")
    with running(app_for(config, live, True, messages.append)) as url:
        client = Client(url)
        assert b"Ann Bee" in client.get("/person/a-b")[2]
        time.sleep(0.5)  # the watcher is running
        profile.write_text(original.replace("name: Ann Bee", "name: Ann Beeline"), "utf-8")
        wait_for(lambda: b"Ann Beeline" in client.get("/person/a-b")[2])
        assert b"Ann Beeline" in client.get("/person/a-b", "text/turtle")[2]
        ask = urllib.parse.quote('ASK { ?p <http://schema.org/name> "Ann Beeline" }')
        assert json.loads(client.get(f"/sparql?query={ask}")[2])["boolean"] is True

        profile.write_text(original.replace("name: Ann Bee", "name: [Ann"), "utf-8")
        status, _, body = wait_for(lambda: (r := client.get("/_kg/build"))[0] == 500 and r)
        assert b"a-b.yaml" in body
        status, _, page = client.get("/person/a-b")
        assert status == 200 and b"Ann Beeline" in page and b"did not build" in page
        assert b"a-b.yaml" in page
        assert any("build failed" in m and "a-b.yaml" in m for m in messages)
        assert json.loads(client.get(f"/sparql?query={ask}")[2])["boolean"] is True

        profile.write_text(original, "utf-8")
        wait_for(lambda: client.get("/_kg/build")[0] == 200)
        assert b"did not build" not in client.get("/person/a-b")[2]
        assert Literal("Ann Bee") in set(
            Graph()
            .parse(data=client.get("/person/a-b", "text/turtle")[2], format="turtle")
            .objects()
        )


def test_watch_rebuilds_after_a_template_edit(tmp_path):
    from importlib.resources import files

    from kg.serve.watch import watched_paths

    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    (root / "static").mkdir()
    template = root / "templates" / "person.html.j2"
    template.parent.mkdir()
    original = (files("kg.publish") / "templates" / "person.html.j2").read_text("utf-8")
    template.write_text(original, "utf-8")
    config = load_config(root)
    assert {root / "templates", root / "static"} <= set(watched_paths(config))
    live = open_live(config, lambda _: None, rebuild=True)
    with running(app_for(config, live, True, lambda _: None)) as url:
        client = Client(url)
        assert b"Ann Bee" in client.get("/person/a-b")[2]
        time.sleep(0.5)  # the watcher is running
        template.write_text(original.replace("</h1>", " (watched)</h1>", 1), "utf-8")
        wait_for(lambda: b"(watched)</h1>" in client.get("/person/a-b")[2])


def test_serve_refuses_a_port_in_use_without_building(tmp_path, capsys):
    import socket

    from kg.cli import main

    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["--project", str(root), "serve", "--port", str(port)])
    assert code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
    assert not (root / "dist").exists()


def test_a_base_iri_with_a_path_publishes_relative_to_it(tmp_path):
    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    toml = root / "kg.toml"
    base = "https://example.org/lab/"
    toml.write_text(toml.read_text().replace("https://kg.example.org/", base), "utf-8")
    config = load_config(root)
    live = open_live(config, lambda _: None, rebuild=False)
    assert (root / "dist" / "site" / "person" / "a-b.html").is_file()
    with running(app_for(config, live, False, lambda _: None)) as url:
        client = Client(url)
        status, _, body = client.get("/person/a-b", "text/turtle")
        described = Graph().parse(data=body, format="turtle")
        assert status == 200 and (URIRef(base + "person/a-b"), None, None) in described
        void = Graph().parse(data=client.get("/void.ttl")[2], format="turtle")
        dumps = set(void.objects(None, URIRef("http://rdfs.org/ns/void#dataDump")))
        assert dumps == {URIRef(f"{base}graph.{ext}") for ext in ("ttl", "jsonld", "nt")}
        endpoint = URIRef("http://rdfs.org/ns/void#sparqlEndpoint")
        assert set(void.objects(None, endpoint)) == {URIRef(base + "sparql")}
