"""The generated recipes on a real nginx (with njs) and a real Apache, with a real
`oxigraph serve` behind /sparql loaded by `kg publish`; the site lives under a path
prefix (/lab/). Every test runs against both servers."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from conftest import MINI
from conneg_cases import CONNEG_CASES, MEDIA
from deploy_servers import apache_server, nginx_server
from rdflib import Graph, URIRef
from sparql_server import oxigraph_server

from kg.cli import main
from kg.publish.deploy import FILE_TYPES, SECTIONS, base_path, deploy_files

BASE = "https://kg.example.org/lab/"
PAGE_SECTIONS = ("person", "publication")


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    project = tmp_path_factory.mktemp("deploy") / "project"
    shutil.copytree(MINI, project)
    toml = (project / "kg.toml").read_text(encoding="utf-8")
    (project / "kg.toml").write_text(toml.replace("https://kg.example.org/", BASE), "utf-8")
    (project / "static").mkdir()
    (project / "static" / "paper.pdf").write_bytes(b"%PDF-1.4\n")  # a local file (issue 28)
    assert main(["--project", str(project), "build"]) == 0
    out = project / "dist"
    assert (out / "site" / "person").is_dir()
    return out


@pytest.fixture(scope="module")
def store(dist):
    """oxigraph serve on 127.0.0.1, loaded by kg publish; yields its query endpoint."""
    with oxigraph_server() as base:
        project = dist.parent
        assert main(["--project", str(project), "publish", "--store", f"{base}/store"]) == 0
        yield f"{base}/query"


@pytest.fixture(scope="module", params=["nginx", "apache"])
def site(request, dist, store, tmp_path_factory):
    """nginx (dist/deploy/nginx.conf) or Apache (dist/site/.htaccess) on 127.0.0.1 with
    the store behind /lab/sparql."""
    workdir = tmp_path_factory.mktemp(request.param)
    if request.param == "nginx":
        server = nginx_server(dist, base_path(BASE), store, workdir)
    else:
        server = apache_server(dist / "site", base_path(BASE), store, workdir)
    with server as base:
        yield base


def get(url: str, accept: str | None = None, data: bytes | None = None):
    """(status, headers, body) without following redirects."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    request = urllib.request.Request(url, data=data)
    if accept is not None:
        request.add_header("Accept", accept)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def links(url: str, headers, rel: str = "describedby") -> set[tuple[str, str]]:
    """(absolute target, type) of each link of relation `rel` in the Link header."""
    found = re.findall(rf'<([^>]*)>; rel="{rel}"; type="([^"]*)"', headers.get("Link", ""))
    return {(urllib.parse.urljoin(url, target), kind) for target, kind in found}


@pytest.mark.parametrize(("accept", "expected"), CONNEG_CASES)
def test_content_negotiation_honours_q_values(site, dist, accept, expected):
    url = f"{site}/lab/person/a-b"
    status, headers, body = get(url, accept)
    assert "accept" in headers.get("Vary", "").lower()
    if expected == 406:
        assert status == 406
        return
    assert status == 200
    assert headers.get_content_type() == MEDIA[expected]
    location = urllib.parse.urljoin(url, headers["Content-Location"])
    assert location == f"{url}.{expected}"
    assert body == (dist / "site" / "person" / f"a-b.{expected}").read_bytes()
    assert links(url, headers) == {(f"{url}.{ext}", media) for ext, media in MEDIA.items()}
    assert links(url, headers, "alternate") == {(f"{url}.jsonld", "application/ld+json")}


def test_a_thing_without_a_page_serves_its_best_description(site, dist):
    url = f"{site}/lab/graph"  # graph.ttl, .jsonld, .nt and no graph.html
    assert not (dist / "site" / "graph.html").exists()
    status, headers, body = get(url)
    assert (status, headers.get_content_type()) == (200, "text/turtle")
    assert body == (dist / "site" / "graph.ttl").read_bytes()
    assert urllib.parse.urljoin(url, headers["Content-Location"]) == f"{url}.ttl"
    status, headers, _ = get(url, "application/n-triples;q=0.5, text/html")
    assert (status, headers.get_content_type()) == (200, "application/n-triples")
    assert get(url, "text/html")[0] == 406


def _graph_file(dist: Path) -> Path:
    return dist / json.loads((dist / "build.json").read_text("utf-8"))["graph"]["path"]


def _paged_iris(dist: Path) -> list[str]:
    graph = Graph().parse(_graph_file(dist), format="nt")
    paths = {str(s)[len(BASE) :] for s in graph.subjects() if str(s).startswith(BASE)}
    return sorted(p for p in paths if (dist / "site" / f"{p}.html").is_file())


def test_every_iri_with_a_page_dereferences(site, dist):
    paths = _paged_iris(dist)
    assert {p.split("/")[0] for p in paths} >= set(PAGE_SECTIONS)
    for path in paths:
        status, headers, body = get(f"{site}/lab/{path}")
        assert (status, headers.get_content_type()) == (200, "text/html"), path
        status, headers, body = get(f"{site}/lab/{path}", "text/turtle")
        assert (status, headers.get_content_type()) == (200, "text/turtle"), path
        graph = Graph().parse(data=body.decode("utf-8"), format="turtle")
        assert (URIRef(BASE + path), None, None) in graph, path


def test_iris_minted_under_a_parent_answer_303(site):
    for path, parent in (
        ("person/a-b/award/1", "person/a-b"),
        ("person/a-b/talk/1/1/speaker", "person/a-b"),
        ("publication/homonyms/author/2", "publication/homonyms"),
        ("course/pku/os/fall-2022", "course/pku/os"),
        ("dataset/class/1", "dataset"),
    ):
        status, headers, _ = get(f"{site}/lab/{path}", "text/turtle")
        assert status == 303, path
        assert urllib.parse.urlsplit(headers["Location"]).path == f"/lab/{parent}"


def test_extension_urls_root_and_missing_files(site, dist):
    status, headers, body = get(f"{site}/lab/person/a-b.ttl")
    assert (status, headers.get_content_type()) == (200, "text/turtle")
    assert headers.get_content_charset() == "utf-8"
    assert body == (dist / "site" / "person" / "a-b.ttl").read_bytes()
    assert (f"{site}/lab/person/a-b.nt", "application/n-triples") in links(
        f"{site}/lab/person/a-b.ttl", headers
    )
    status, headers, body = get(f"{site}/lab/publication/homonyms.html")
    assert (status, headers.get_content_type()) == (200, "text/html")
    page = f"{site}/lab/publication/homonyms.html"
    assert (page.replace(".html", ".jsonld"), "application/ld+json") in links(page, headers)
    status, headers, body = get(f"{site}/lab/void.ttl")
    assert (status, headers.get_content_type()) == (200, "text/turtle")
    status, headers, body = get(f"{site}/lab/")
    assert status == 200 and body == (dist / "site" / "index.html").read_bytes()
    status, headers, _ = get(f"{site}/lab")
    assert status == 301 and urllib.parse.urlsplit(headers["Location"]).path == "/lab/"
    status, _, body = get(f"{site}/lab/person/nobody.html")
    assert status == 404 and b"Nothing is published at this address" in body
    assert get(f"{site}/lab/.htaccess")[0] == 404
    assert get(f"{site}/lab/.nojekyll")[0] == 404
    status, _, body = get(f"{site}/lab/person/nobody", "text/turtle")
    assert status == 404 and b"Nothing is published at this address" in body
    assert get(f"{site}/lab/person/nobody.ttl")[0] == 404


def test_sparql_is_proxied_to_the_store(site, dist):
    triples = sum(1 for line in _graph_file(dist).read_text("utf-8").splitlines() if line)
    query = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    accept = "application/sparql-results+json"
    status, _, body = get(f"{site}/lab/sparql?{urllib.parse.urlencode({'query': query})}", accept)
    assert status == 200
    assert int(json.loads(body)["results"]["bindings"][0]["n"]["value"]) == triples
    form = urllib.parse.urlencode({"query": "ASK { ?s a <http://schema.org/Person> }"})
    status, _, body = get(f"{site}/lab/sparql", accept, form.encode())
    assert status == 200 and json.loads(body)["boolean"] is True


def test_kg_query_runs_through_the_proxy(site, capsys):
    args = ["--project", str(MINI), "query", "people", "--format", "tsv"]
    assert main([*args, "--endpoint", f"{site}/lab/sparql", "--timeout", "5"]) == 0
    assert "Ann Bee" in capsys.readouterr().out


def test_deploy_files_follow_the_base_path():
    assert base_path("https://example.org/") == "/"
    assert base_path("https://example.org/lab/") == "/lab/"
    assert base_path("https://example.org/kg#") == "/"
    files = deploy_files("https://example.org/a.b/")
    assert "location = /a.b/sparql" in files["deploy/nginx.conf"]
    assert r"^/a\.b/" in files["deploy/nginx.conf"]  # the prefix is escaped in regexes
    assert r"^/a\.b/" in files["site/.htaccess"]
    assert "ErrorDocument 404 /a.b/404.html" in files["site/.htaccess"]
    for section in SECTIONS:
        assert section in files["deploy/nginx.conf"] and section in files["site/.htaccess"]
    assert files == deploy_files("https://example.org/a.b/")  # deterministic


# ------------------------------------------------------------------ attacks and interop


def raw(base: str, path: str, headers: dict[str, str] | None = None):
    """(status, headers) for a path sent byte for byte (urllib would re-quote it)."""
    parts = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.putrequest("GET", path, skip_host=bool(headers and "Host" in headers))
    for name, value in (headers or {}).items():
        connection.putheader(name, value)
    connection.endheaders()
    response = connection.getresponse()
    response.read()
    connection.close()
    return response.status, response.headers


def test_no_header_injection_and_no_host_in_redirects(site):
    for path in (
        "/lab/person/a%0d%0aSet-Cookie:%20kg=1/award/1",
        "/lab/person/a-b%0d%0aSet-Cookie:%20kg=1/x",
        "/lab/course/pku/os%0aSet-Cookie:kg=1/x",
    ):
        status, headers = raw(site, path)
        assert headers.get("Set-Cookie") is None, path
        assert "\r" not in headers.get("Location", "") and "\n" not in headers.get("Location", "")
    for path in ("/lab/person/a-b/award/1", "/lab"):
        status, headers = raw(site, path, {"Host": "evil.example"})
        location = urllib.parse.urlsplit(headers["Location"])
        assert status in (301, 303) and location.hostname in (None, "127.0.0.1"), path
        assert location.path.startswith("/lab")


def test_sub_resources_answer_303_whatever_the_accept_header(site):
    for accept in ("image/png", "text/turtle;q=0", "application/ld+json"):
        status, headers, _ = get(f"{site}/lab/person/a-b/award/1", accept)
        assert status == 303 and headers["Location"].endswith("/lab/person/a-b"), accept


def test_every_file_type_of_the_site_is_served_with_its_media_type(site, dist):
    kinds = {ext: (media, text) for ext, media, text in FILE_TYPES}
    seen = set()
    for path in sorted((dist / "site").rglob("*.*")):
        ext = path.suffix[1:]
        if ext in seen or path.name.startswith(".") or ext not in kinds:
            continue
        seen.add(ext)
        rel = path.relative_to(dist / "site").as_posix()
        status, headers, _ = get(f"{site}/lab/{rel}")
        media, text = kinds[ext]
        assert (status, headers.get_content_type()) == (200, media), rel
        assert headers.get_content_charset() == ("utf-8" if text else None), rel
    assert {"html", "ttl", "jsonld", "nt", "txt", "xml", "bib"} <= seen


def test_pyld_and_rdflib_dereference_iris_with_their_stock_loaders(site, dist):
    from pyld import jsonld

    url = f"{site}/lab/person/a-b"
    for target in (url, f"{url}.html", f"{url}.jsonld"):
        expanded = jsonld.expand(target)
        ids = {node.get("@id") for node in expanded}
        assert f"{BASE}person/a-b" in ids, target
    graph = Graph().parse(url)  # rdflib's own Accept header and parser
    assert (URIRef(f"{BASE}person/a-b"), None, None) in graph


@pytest.fixture(scope="module", params=["nginx", "apache"])
def root_site(request, dist, store, tmp_path_factory):
    """The same site deployed at the root of its host (https://kg.example.org/), with a
    file where an ACME client (certbot --webroot) puts its HTTP-01 challenge."""
    copy = tmp_path_factory.mktemp(f"root-{request.param}") / "dist"
    shutil.copytree(dist, copy, ignore=shutil.ignore_patterns(".kg-cache"))
    for rel, text in deploy_files("https://kg.example.org/").items():
        (copy / rel).write_text(text, encoding="utf-8")
    challenge = copy / "site" / ".well-known" / "acme-challenge"
    challenge.mkdir(parents=True)
    (challenge / "token-k9").write_text("token-k9.thumbprint")
    workdir = tmp_path_factory.mktemp(f"root-{request.param}-run")
    if request.param == "nginx":
        server = nginx_server(copy, "/", store, workdir)
    else:
        server = apache_server(copy / "site", "/", store, workdir)
    with server as base:
        yield base


def test_acme_challenges_are_served_and_dotfiles_are_not(root_site):
    status, _, body = get(f"{root_site}/.well-known/acme-challenge/token-k9")
    assert (status, body) == (200, b"token-k9.thumbprint")
    assert get(f"{root_site}/.htaccess")[0] == 404
    assert get(f"{root_site}/person/.hidden")[0] == 404
    assert get(f"{root_site}/person/a-b", "text/turtle")[0] == 200


def test_static_files_are_served_with_their_media_type(site, dist):
    """A file of the project's static/ folder (content-hashed name) and kg's script."""
    (pdf,) = (dist / "site" / "static").glob("paper.*.pdf")
    status, headers, body = get(f"{site}/lab/static/{pdf.name}")
    assert (status, headers.get_content_type(), body) == (200, "application/pdf", b"%PDF-1.4\n")
    status, headers, _ = get(f"{site}/lab/search.js")
    assert (status, headers.get_content_type()) == (200, "text/javascript")
