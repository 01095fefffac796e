"""kg serve under attack, through a real uvicorn server on 127.0.0.1 configured as `kg
serve` configures it (small limits so each attack takes well under a second or two):
outbound requests, queries that used to kill the process, lock-out of the query slots,
unbounded requests, and headers. Every attack is followed by proof that the server is
up and answers a second client within a second."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import threading
import time
import urllib.parse

import pytest
from conftest import mini_copy
from test_serve import Client, running

from kg.config import load_config
from kg.serve.bounds import HttpLimits
from kg.serve.server import Limits, app_for, open_live

LIMITS = Limits(timeout=1.5, max_results=1000, concurrent=2, memory=96 * 1024 * 1024)
HTTP = HttpLimits(header_timeout=1.0, keep_alive=2, requests=16, connections=100)
CROSS = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l } ORDER BY ?c ?f ?i ?l"


def _blowup() -> str:
    """A string doubled 40 times (a TiB) by nested CONCATs in BINDs: nesting stays low."""
    binds = ['BIND("0123456789abcdef" AS ?s0)']
    binds += [f"BIND(CONCAT(?s{i}, ?s{i}) AS ?s{i + 1})" for i in range(40)]
    return "SELECT (STRLEN(?s40) AS ?n) WHERE { " + " ".join(binds) + " }"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    where = tmp_path_factory.mktemp("hostile")
    out = where / "dist"
    config = dataclasses.replace(load_config(mini_copy(where)), out=str(out))
    live = open_live(config, lambda _: None, rebuild=True, limits=LIMITS, http=HTTP)
    with running(app_for(config, live, False, lambda _: None)) as url:
        yield url, live


def quick(url: str) -> None:
    """A second client is answered within a second: a page, and the SPARQL endpoint
    when a slot is free."""
    started = time.monotonic()
    status, _, _ = Client(url).get("/", "text/html")
    assert status == 200 and time.monotonic() - started < 1.0


def query(url: str, text: str, how: str = "get", accept: str | None = None):
    client = Client(url)
    if how == "get":
        return client.get(f"/sparql?query={urllib.parse.quote(text)}", accept)
    if how == "form":
        body = urllib.parse.urlencode({"query": text})
        return client.get(
            "/sparql", accept, "POST", body, Content_Type="application/x-www-form-urlencoded"
        )
    return client.get("/sparql", accept, "POST", text, Content_Type="application/sparql-query")


# ------------------------------------------------------------------ outbound requests


@pytest.fixture
def listener():
    """A loopback port that records whether anything connected to it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.3)
    yield sock, f"http://127.0.0.1:{sock.getsockname()[1]}/sparql"
    sock.close()


def _connected(sock: socket.socket) -> bool:
    try:
        sock.accept()[0].close()
        return True
    except TimeoutError:
        return False


@pytest.mark.parametrize("how", ["get", "form", "direct"])
def test_service_is_refused_and_nothing_is_contacted(server, listener, how):
    url, _ = server
    sock, target = listener
    attacks = [
        f"SELECT * WHERE {{ SERVICE <{target}> {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ ?x ?y ?z OPTIONAL {{ SERVICE SILENT <{target}> {{ ?s ?p ?o }} }} }}",
        f"SELECT * WHERE {{ BIND(<{target}> AS ?u) SERVICE ?u {{ ?s ?p ?o }} }}",
        f"PREFIX e: <{target}#>\nSELECT * WHERE {{ service e: {{ ?s ?p ?o }} }}",
    ]
    for text in attacks:
        status, headers, body = query(url, text, how)
        assert status == 400 and b"SERVICE" in body, text
        assert headers["X-Content-Type-Options"] == "nosniff"
    assert not _connected(sock)
    quick(url)


def test_updates_load_and_unknown_graphs_are_refused_before_evaluation(server, listener):
    url, _ = server
    sock, target = listener
    for text in (
        f"LOAD <{target}>",
        f"LOAD SILENT <{target}> INTO GRAPH <http://x/g>",
        "CLEAR ALL",
        "DROP DEFAULT",
        "INSERT DATA { <http://x/s> <http://x/p> <http://x/o> }",
        "WITH <http://x/g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
    ):
        assert query(url, text, "direct")[0] == 403, text
    for text in (
        f"SELECT * FROM <{target}> WHERE {{ ?s ?p ?o }}",
        f"SELECT * FROM NAMED <{target}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ GRAPH <{target}> {{ ?s ?p ?o }} }}",
        f"PREFIX g: <{target}>\nSELECT * WHERE {{ GRAPH g:x {{ ?s ?p ?o }} }}",
    ):
        status, _, body = query(url, text)
        assert status == 400 and b"no graph" in body, text
    param = urllib.parse.urlencode({"query": "ASK {}", "default-graph-uri": target})
    assert Client(url).get(f"/sparql?{param}")[0] == 400
    # words inside strings, IRIs, comments and prefixed names are not keywords
    text = 'PREFIX load: <http://x/>\nASK { ?s ?p "SERVICE LOAD" } # DROP ALL'
    assert query(url, text)[0] == 200
    assert not _connected(sock)


# ------------------------------------------------------------------ queries that killed it


@pytest.mark.parametrize(
    "text",
    [
        "ASK { FILTER(" + "(" * 20_000 + "1" + ")" * 20_000 + ") }",
        "ASK " + "{ " * 20_000 + "}" * 20_000,
        "ASK { ?s ?p ?o " + "OPTIONAL { ?s ?p ?o " * 2_000 + "}" * 2_001,
        "SELECT * WHERE " + "{ SELECT * WHERE " * 2_000 + "{}" + "}" * 2_000,
    ],
    ids=["parentheses", "groups", "optionals", "subselects"],
)
def test_deep_nesting_is_refused_before_parsing(server, text):
    url, _live = server
    started = time.monotonic()
    status, _, body = query(url, text, "direct")
    assert status == 400 and b"deeper than 40 levels" in body
    assert time.monotonic() - started < 1.0
    quick(url)


def test_memory_bombs_end_in_503_and_the_server_stays_up(server):
    url, _live = server
    pid = os.getpid()  # the server runs in this process: its death would end the test
    answers: list = []

    def attack(text: str) -> None:
        answers.append(query(url, text, "direct"))

    threads = [threading.Thread(target=attack, args=(t,)) for t in (CROSS, _blowup())]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(0.2)
    quick(url)  # while they run
    for thread in threads:
        thread.join(10)
    assert time.monotonic() - started < LIMITS.timeout + 3
    assert sorted(status for status, _, _ in answers) == [503, 503], answers
    assert os.getpid() == pid
    status, _, body = query(url, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    assert status == 200 and int(json.loads(body)["results"]["bindings"][0]["n"]["value"]) > 0


def test_timed_out_queries_free_their_slots_at_once(server):
    url, live = server
    spin = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
    answers: list = []
    threads = [
        threading.Thread(target=lambda: answers.append(query(url, spin)))
        for _ in range(LIMITS.concurrent)
    ]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    assert query(url, "ASK {}")[0] == 503  # every slot is taken while they run
    assert Client(url).get("/queries/people")[0] == 503  # stored queries share the slots
    quick(url)
    for thread in threads:
        thread.join(10)
    assert [status for status, _, _ in answers] == [503] * LIMITS.concurrent
    assert live.runner.free == LIMITS.concurrent
    started = time.monotonic()
    status, _, body = query(url, "ASK { ?s ?p ?o }")
    assert status == 200 and b"true" in body
    assert time.monotonic() - started < 1.0
    status, _, body = Client(url).get("/queries/people.csv")
    assert status == 200 and b"Ann Bee" in body


def test_an_evaluation_error_is_a_400_not_a_500(server):
    url, _ = server
    status, _, body = query(url, "SELECT * WHERE { ?s ?p ?o } LIMIT 1 OFFSET 99999999999999999999")
    assert status == 400, body


# ------------------------------------------------------------------ unbounded requests


def _raw(url: str, data: bytes, wait: float = 3.0) -> bytes:
    """Send raw bytes on a new connection; what comes back before the server closes."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=wait) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(data)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except (TimeoutError, ConnectionResetError):
            pass
        return b"".join(chunks)


def test_request_size_bounds(server):
    url, _ = server
    head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (8 * 1024 * 1024) + b"\r\n\r\n"
    assert not _raw(url, head, wait=1.0).startswith(b"HTTP/1.1 200")
    post = b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\n"
    answer = _raw(url, post + b"Content-Length: 314572800\r\n\r\nASK {}")
    assert answer.startswith(b"HTTP/1.1 413")
    chunk = b"a" * 60_000
    chunked = post + b"Transfer-Encoding: chunked\r\n\r\n"
    chunked += b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(3)) + b"0\r\n\r\n"
    assert _raw(url, chunked).startswith(b"HTTP/1.1 413")
    client = Client(url)
    assert client.get("/" + "a" * 40_000)[0] == 414
    assert client.get("/a" * 20_000)[0] == 414
    assert client.get("/person/" + "x/" * 70)[0] == 414
    quick(url)


def test_misses_are_not_cached(server):
    url, live = server
    client = Client(url)
    client.get("/no-such-thing-0")
    before = len(live.site.files._cache)
    for i in range(200):
        assert client.get(f"/no-such-thing-{i}")[0] == 404
        assert client.get(f"/person/no-such-{i}.ttl")[0] == 404
    assert len(live.site.files._cache) == before


def test_slow_and_idle_connections_are_dropped(server):
    url, _ = server
    parts = urllib.parse.urlsplit(url)
    slow = []
    for _ in range(HTTP.requests * 4):  # four times as many half-sent requests as slots
        sock = socket.create_connection((parts.hostname, parts.port), timeout=5)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        slow.append(sock)
    started = time.monotonic()
    quick(url)  # while they hang
    time.sleep(HTTP.header_timeout + 0.5)
    for sock in slow:  # the server hung up on every one of them
        assert sock.recv(100) == b""
        sock.close()
    assert time.monotonic() - started < HTTP.header_timeout + 3
    quick(url)
    crowd = [socket.create_connection((parts.hostname, parts.port)) for _ in range(110)]
    crowd[-1].settimeout(0.5)
    assert crowd[-1].recv(10) == b""  # past the connection limit: closed at once
    for sock in crowd:
        sock.close()
    idle = socket.create_connection((parts.hostname, parts.port), timeout=5)
    idle.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(HTTP.keep_alive + 0.5)
    data = b""
    while chunk := idle.recv(65536):
        data += chunk
    assert data.startswith(b"HTTP/1.1 200")  # answered, then closed after keep-alive
    idle.close()


# ------------------------------------------------------------------ headers


def test_every_answer_says_nosniff_and_cors(server):
    url, _ = server
    client = Client(url)
    for path in ("/", "/no-such-thing", "/sparql?query=SELEKT", "/sparql", "/queries/nope"):
        status, headers, _ = client.get(path)
        assert headers["X-Content-Type-Options"] == "nosniff", path
        assert headers["Access-Control-Allow-Origin"] == "*", path
    status, headers, _ = query(url, "ASK {}", "form")
    assert status == 200 and headers["Access-Control-Allow-Origin"] == "*"
    status, headers, _ = client.get(
        "/sparql",
        method="OPTIONS",
        Origin="https://yasgui.example",
        Access_Control_Request_Method="POST",
        Access_Control_Request_Headers="content-type",
    )
    assert status == 204 and "POST" in headers["Access-Control-Allow-Methods"]
    assert "content-type" in headers["Access-Control-Allow-Headers"].lower()


def test_requests_in_flight_are_capped_and_slow_bodies_dropped(server):
    url, _ = server
    parts = urllib.parse.urlsplit(url)
    head = (
        b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\n"
        b"Content-Length: 100\r\n\r\nASK"
    )
    held = []
    for _ in range(HTTP.requests):  # each one waits in the app for the rest of its body
        sock = socket.create_connection((parts.hostname, parts.port), timeout=5)
        sock.sendall(head)
        held.append(sock)
    time.sleep(0.3)
    assert Client(url).get("/")[0] == 503  # no request slot left
    time.sleep(HTTP.header_timeout + 0.3)  # the slow bodies are cut off
    for sock in held:
        sock.close()
    quick(url)
