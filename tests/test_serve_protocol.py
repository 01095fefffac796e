"""The W3C SPARQL 1.1 Protocol query tests (tests/vendor/w3c-sparql-protocol, from
github.com/w3c/rdf-tests; W3C test suite licence) run against a real `kg serve`: every
request of every query test is read from the manifest and sent as written; the answer's
status class, format and boolean are checked as the manifest states them.

The store holds the suite's graphs data1-data3 (its data1.nt, data2.nt, data3.nt) as
named graphs, and data0, which the suite names but ships no file for, with the one
triple its siblings have. The update tests are not run: the endpoint is read-only."""

from __future__ import annotations

import json
import urllib.parse
import xml.etree.ElementTree as ET

import pytest
from conftest import REPO
from rdflib import RDF, Graph, Namespace
from rdflib.collection import Collection
from test_serve import Client, running

from kg.serve.app import Live, create_app
from kg.serve.site import Site
from kg.serve.sparql import Limits

SUITE = REPO / "tests" / "vendor" / "w3c-sparql-protocol"
MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
HT = Namespace("http://www.w3.org/2011/http#")
CNT = Namespace("http://www.w3.org/2011/content#")
KASEI = "http://kasei.us/2009/09/sparql/data/"
BOOLEAN = ("application/sparql-results+json", "application/sparql-results+xml")
TABULAR = (*BOOLEAN, "text/csv", "text/tab-separated-values")
RDF_TYPES = ("text/turtle", "application/rdf+xml", "application/n-triples", "application/ld+json")

MANIFEST = Graph().parse(SUITE / "manifest.ttl", format="turtle")
ROOT = MANIFEST.value(predicate=RDF.type, object=MF.Manifest, any=True)
ENTRIES = Collection(MANIFEST, MANIFEST.value(ROOT, MF.entries))
QUERY_TESTS = [e for e in ENTRIES if "update" not in str(e).rsplit("#", 1)[-1]]


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("protocol")
    (out / "site").mkdir()
    (out / "site" / "index.html").write_text("<!DOCTYPE html><title>x</title>\n")
    (out / "graph.nt").write_text("")
    data0 = f"<{KASEI}data0.rdf>"
    quads = [f"{data0} <{RDF.type}> <http://xmlns.com/foaf/0.1/Document> {data0} .\n"]
    for n in (1, 2, 3):
        for line in (SUITE / f"data{n}.nt").read_text().splitlines():
            quads.append(line.rstrip(" .") + f" <{KASEI}data{n}.rdf> .\n")
    (out / "graphs.nq").write_text("".join(quads))
    live = Live(Site.open(out), {}, out / "queries", Limits(timeout=5))
    with running(create_app(live)) as url:
        yield url


def _requests(test):
    action = MANIFEST.value(test, MF.action)
    return list(Collection(MANIFEST, MANIFEST.value(action, HT.requests)))


def _send(url: str, request):
    path = str(MANIFEST.value(request, HT.absolutePath)).replace("/sparql/", "/sparql", 1)
    method = str(MANIFEST.value(request, HT.methodName))
    headers = {"Host": "www.example"}
    for header in Collection(MANIFEST, MANIFEST.value(request, HT.headers) or RDF.nil):
        headers[str(MANIFEST.value(header, HT.fieldName))] = str(
            MANIFEST.value(header, HT.fieldValue)
        )
    body = None
    content = MANIFEST.value(request, HT.body)
    if content is not None:
        encoding = str(MANIFEST.value(content, CNT.characterEncoding) or "UTF-8")
        body = str(MANIFEST.value(content, CNT.chars)).encode(encoding)
    client = Client(url)
    client.connection.request(method, path, body=body, headers=headers)
    response = client.connection.getresponse()
    return response.status, response.headers, response.read()


def _boolean(media: str, body: bytes) -> bool:
    if media.endswith("json"):
        return json.loads(body)["boolean"]
    found = ET.fromstring(body).find("{http://www.w3.org/2005/sparql-results#}boolean")
    assert found is not None
    return found.text == "true"


def test_the_suite_has_its_twenty_query_tests():
    assert len(QUERY_TESTS) == 20


@pytest.mark.parametrize("test", QUERY_TESTS, ids=lambda t: str(t).rsplit("#", 1)[-1])
def test_w3c_protocol_query_test(endpoint, test):
    for request in _requests(test):
        status, headers, body = _send(endpoint, request)
        expected = MANIFEST.value(request, HT.resp)
        classes = {
            str(c).rsplit("StatusCode", 1)[-1]
            for c in MANIFEST.objects(expected, MF.expectedStatus)
        }
        assert f"{status // 100}xx" in classes, (status, body)
        media = headers.get("Content-Type", "").split(";")[0].strip()
        fmt = MANIFEST.value(expected, MF.expectedFormat)
        if fmt is not None:
            allowed = {"boolean": BOOLEAN, "tabular": TABULAR, "RDF": RDF_TYPES}[str(fmt)]
            assert media in allowed, media
        boolean = MANIFEST.value(expected, MF.expectedBoolean)
        if boolean is not None:
            assert _boolean(media, body) == boolean.toPython()


def test_relative_iris_resolve_against_the_endpoint(endpoint):
    query = urllib.parse.quote("CONSTRUCT { <s> <p> <o> } WHERE {}")
    status, _, body = Client(endpoint).get(f"/sparql?query={query}", "application/n-triples")
    assert status == 200
    assert body.decode().split()[0] == f"<{endpoint}/s>"
