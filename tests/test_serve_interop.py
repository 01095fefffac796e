"""kg serve against independent clients and the shared conneg table: the same cases as
the nginx and Apache recipes (tests/conneg_cases.py), pyld's and rdflib's stock loaders,
conditional requests, gzip, HEAD and CORS on /sparql."""

from __future__ import annotations

import dataclasses
import gzip
import re
import urllib.parse

import pytest
from conftest import mini_copy
from conneg_cases import CONNEG_CASES, MEDIA
from rdflib import Graph, URIRef
from test_serve import Client, running

from kg.config import load_config
from kg.serve.server import app_for, open_live

BASE = "https://kg.example.org/"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    where = tmp_path_factory.mktemp("interop")
    out = where / "dist"
    config = dataclasses.replace(load_config(mini_copy(where)), out=str(out))
    live = open_live(config, lambda _: None, rebuild=True)
    with running(app_for(config, live, False, lambda _: None)) as url:
        yield url, out


def _links(headers, rel: str) -> set[tuple[str, str]]:
    found = re.findall(rf'<([^>]*)>; rel="{rel}"; type="([^"]*)"', headers.get("Link", ""))
    return set(found)


@pytest.mark.parametrize(("accept", "expected"), CONNEG_CASES)
def test_content_negotiation_table(served, accept, expected):
    url, out = served
    status, headers, body = Client(url).get("/person/a-b", accept)
    assert "Accept" in headers["Vary"]
    if expected == 406:
        assert status == 406
        return
    assert status == 200
    assert headers["Content-Type"].split(";")[0] == MEDIA[expected]
    assert headers["Content-Location"] == f"/person/a-b.{expected}"
    assert body == (out / "site" / "person" / f"a-b.{expected}").read_bytes()
    assert _links(headers, "describedby") == {
        (f"/person/a-b.{ext}", media) for ext, media in MEDIA.items()
    }
    assert _links(headers, "alternate") == {("/person/a-b.jsonld", "application/ld+json")}


def test_sub_resources_answer_303_whatever_the_accept_header(served):
    url, _ = served
    for accept in ("image/png", "text/turtle;q=0", None):
        status, headers, _ = Client(url).get("/person/a-b/award/1", accept)
        assert (status, headers["Location"]) == (303, "/person/a-b"), accept


def test_pyld_and_rdflib_dereference_iris(served):
    from pyld import jsonld

    url, _ = served
    for target in (f"{url}/person/a-b", f"{url}/person/a-b.html", f"{url}/person/a-b.jsonld"):
        assert f"{BASE}person/a-b" in {n.get("@id") for n in jsonld.expand(target)}, target
    graph = Graph().parse(f"{url}/person/a-b")  # rdflib's own Accept header and parser
    assert (URIRef(f"{BASE}person/a-b"), None, None) in graph


def test_conditional_requests_and_gzip(served):
    url, out = served
    client = Client(url)
    status, headers, body = client.get("/person/a-b", "text/turtle")
    assert status == 200 and headers["ETag"].startswith('W/"')
    status, again, body = client.get("/person/a-b", "text/turtle", If_None_Match=headers["ETag"])
    assert (status, body, again["ETag"]) == (304, b"", headers["ETag"])
    status, other, _ = client.get("/person/a-b", "text/html", If_None_Match=headers["ETag"])
    assert status == 200 and other["ETag"] != headers["ETag"]  # each variant its own tag
    status, zipped, body = client.get("/person/a-b.ttl", Accept_Encoding="gzip")
    assert status == 200 and zipped["Content-Encoding"] == "gzip"
    assert gzip.decompress(body) == (out / "site" / "person" / "a-b.ttl").read_bytes()


def test_sparql_head_cors_and_a_second_query_parameter(served):
    url, _ = served
    client = Client(url)
    assert client.get("/sparql", method="HEAD")[0] == 200
    assert client.get("/sparql")[0] == 200
    two = "/sparql?" + urllib.parse.urlencode([("query", "ASK {}"), ("query", "ASK {}")])
    assert client.get(two)[0] == 400
    form = urllib.parse.urlencode({"query": "ASK {}"})
    status, headers, _ = client.get(
        "/sparql", None, "POST", form, Content_Type="application/x-www-form-urlencoded"
    )
    assert status == 200 and headers["Access-Control-Allow-Origin"] == "*"
