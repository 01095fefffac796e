"""The Starlette application: the built site with content negotiation, the SPARQL
endpoint, the stored queries as an API, and the build status."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs

from markupsafe import escape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kg.errors import KgError, UsageError
from kg.layout import MEDIA_TYPES
from kg.query import StoredQuery, load_queries, run_embedded
from kg.results import render, to_sparql_json
from kg.serve import sparql
from kg.serve.negotiate import choose
from kg.serve.site import PAGE_AND_DATA, Site, media_type, safe_relative
from kg.store import QueryStore

Log = Callable[[str], None]
FORM = "application/x-www-form-urlencoded"
CORS = {"Access-Control-Allow-Origin": "*"}


@dataclass
class Live:
    """What is being served: the last good build, and the last build's error if it failed."""

    site: Site
    queries: dict[str, StoredQuery]
    queries_dir: Path
    limits: sparql.Limits = field(default_factory=sparql.Limits)
    error: str | None = None
    running: int = 0  # SPARQL queries in worker threads (a timed-out one until it stops)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def claim(self) -> bool:
        """Take a query slot; False when `limits.concurrent` queries are running."""
        with self.lock:
            if self.running >= self.limits.concurrent:
                return False
            self.running += 1
            return True

    def release(self) -> None:
        with self.lock:
            self.running -= 1

    def replace(self, site: Site) -> None:
        self.site = site
        self.queries = load_queries(self.queries_dir)
        self.error = None


def create_app(live: Live, lifespan=None) -> Starlette:
    routes = [
        Route("/sparql", sparql_endpoint, methods=["GET", "POST"]),
        Route("/queries", query_list, methods=["GET"]),
        Route("/queries/{name}", stored_query, methods=["GET"]),
        Route("/_kg/build", build_status, methods=["GET"]),
        Route("/{path:path}", resource, methods=["GET"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.live = live
    return app


def _live(request: Request) -> Live:
    return request.app.state.live


# ------------------------------------------------------------------ site


async def resource(request: Request) -> Response:
    """A file under the web root, or a thing's page or description by negotiation."""
    live = _live(request)
    rel = safe_relative(request.scope["path"])
    if rel is None:
        return _not_found(live)
    if rel == "":
        rel = "index.html"
    files = live.site.files
    if "." in rel.rsplit("/", 1)[-1]:
        data = files.read(rel)
        if data is None:
            return _not_found(live)
        stem, ext = rel.rsplit(".", 1)
        links = _links(stem, files.variants(stem)) if ext in PAGE_AND_DATA else {}
        return _file(live, data, media_type(rel), {**links, **CORS})
    return _negotiated(request, live, rel)


def _negotiated(request: Request, live: Live, rel: str) -> Response:
    files = live.site.files
    variants = files.variants(rel)
    if not variants:
        owner = files.owner(rel)
        if owner is None:
            return _not_found(live)
        return Response(status_code=303, headers={"Location": f"/{owner}", **CORS})
    offered = {MEDIA_TYPES[ext]: ext for ext in variants}
    media = choose(request.headers.get("accept"), list(offered))
    headers = {"Vary": "Accept", **_links(rel, variants), **CORS}
    if media is None:
        body = "Not acceptable; this resource is available as: " + ", ".join(offered) + "\n"
        return Response(body, 406, headers=headers, media_type="text/plain")
    ext = offered[media]
    data = files.read(f"{rel}.{ext}") or b""
    headers["Content-Location"] = f"/{rel}.{ext}"
    return _file(live, data, media_type(f"{rel}.{ext}"), headers)


def _links(stem: str, variants: list[str]) -> dict[str, str]:
    if not variants:
        return {}
    links = [f'</{stem}.{ext}>; rel="alternate"; type="{MEDIA_TYPES[ext]}"' for ext in variants]
    return {"Link": ", ".join(links)}


def _file(live: Live, data: bytes, media: str, headers: dict[str, str]) -> Response:
    if live.error is not None and media.startswith("text/html"):
        data = data.replace(b"<body>", b"<body>\n" + _banner(live.error).encode(), 1)
    return Response(data, headers=headers, media_type=media)


def _banner(error: str) -> str:
    return (
        '<div role="alert" style="background:#fde8e8;color:#7a1010;padding:1rem;'
        'border-bottom:3px solid #b3261e;font:14px/1.4 monospace">'
        "<strong>The last edit did not build; this is the last good build.</strong>"
        f'<pre style="white-space:pre-wrap">{escape(error)}</pre></div>'
    )


def _not_found(live: Live) -> Response:
    page = "<!DOCTYPE html>\n<html lang=en><title>Not found</title><body>\n<h1>Not found</h1>"
    page += '<p><a href="/">Home</a></p></body></html>\n'
    response = _file(live, page.encode(), "text/html; charset=utf-8", {})
    response.status_code = 404
    return response


async def build_status(request: Request) -> Response:
    """The build's state: 200 when the last build succeeded, else 500 with its error."""
    live = _live(request)
    if live.error is None:
        body = "<!DOCTYPE html>\n<html lang=en><title>Build ok</title><body><h1>Build ok</h1>"
        body += f"<p>{live.site.triples} triples served.</p></body></html>\n"
        return Response(body, media_type="text/html")
    body = "<!DOCTYPE html>\n<html lang=en><title>Build failed</title><body>"
    body += "<h1>Build failed</h1>"
    return Response(body + _banner(live.error) + "</body></html>\n", 500, media_type="text/html")


# ------------------------------------------------------------------ SPARQL


async def sparql_endpoint(request: Request) -> Response:
    """SPARQL 1.1 Protocol: query by GET, POST form or POST body; no updates."""
    live = _live(request)
    params = request.query_params
    if request.method == "GET" and "update" not in params and "query" not in params:
        return _service_description(request, live)
    found = await _read_query(request)
    if isinstance(found, Response):
        return found
    text, defaults, named = found
    return await _answer(request, live, text, defaults, named)


Read = tuple[str, list[str], list[str]]  # query, default graphs, named graphs


async def _read_query(request: Request) -> Read | Response:
    """The query and dataset of a protocol request, or the error response."""
    params = {k: request.query_params.getlist(k) for k in request.query_params}
    if request.method == "POST":
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        body = (await request.body()).decode("utf-8", "replace")
        if content_type == FORM:
            params = parse_qs(body)
        elif content_type == "application/sparql-query":
            params["query"] = [body]
        elif content_type == "application/sparql-update":
            return _refuse_update()
        else:
            return _problem(415, f"send a query as {FORM} or application/sparql-query")
    if "update" in params:
        return _refuse_update()
    text = params.get("query", [""])[0]
    if not text.strip():
        return _problem(400, "no query given")
    return text, params.get("default-graph-uri", []), params.get("named-graph-uri", [])


async def _answer(
    request: Request, live: Live, text: str, defaults: list[str], named: list[str]
) -> Response:
    accept = request.headers.get("accept")
    cors = CORS if request.method == "GET" else {}
    if not live.claim():
        return _problem(503, "too many queries are running; try again shortly", cors)
    job = run_in_threadpool(_execute, live, text, accept, defaults, named)
    try:
        answer = await asyncio.wait_for(job, live.limits.timeout + 1)
    except SyntaxError as exc:
        return _problem(400, f"not valid SPARQL 1.1 query syntax: {exc}", cors)
    except (TimeoutError, sparql.QueryTimeout):
        return _problem(503, f"the query took longer than {live.limits.timeout:g} s", cors)
    except sparql.NotAcceptable as exc:
        return _problem(406, f"this answer is available as: {', '.join(exc.offered)}", cors)
    except (OSError, ValueError) as exc:
        return _problem(400, f"the query failed: {exc}", cors)
    headers = {"Vary": "Accept", **cors}
    if answer.truncated:
        headers["KG-Result-Limit"] = str(live.limits.max_results)
    return Response(answer.body, headers=headers, media_type=answer.media_type)


def _execute(live: Live, text: str, accept: str | None, defaults, named) -> sparql.Answer:
    """`sparql.execute` in a worker thread; the slot is freed when the query stops, not
    when its client gave up waiting."""
    try:
        return sparql.execute(live.site.store, text, accept, live.limits, defaults, named)
    finally:
        live.release()


def _refuse_update() -> Response:
    return _problem(403, "this endpoint is read-only: SPARQL updates are not accepted")


def _problem(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(message + "\n", status, headers=headers, media_type="text/plain")


def _service_description(request: Request, live: Live) -> Response:
    endpoint = str(request.url.replace(query=""))
    body = sparql.service_description(endpoint, live.site.triples)
    return Response(body, headers={"Vary": "Accept", **CORS}, media_type="text/turtle")


# ------------------------------------------------------------------ stored queries


async def query_list(request: Request) -> Response:
    live = _live(request)
    items = [
        {
            "name": q.name,
            "summary": q.summary,
            "description": q.description,
            "form": q.form,
            "url": f"/queries/{q.name}",
            "parameters": [
                {"name": p.name, "kind": p.kind, "default": p.default} for p in q.parameters
            ],
        }
        for q in live.queries.values()
    ]
    return Response(_json(items), headers=CORS, media_type="application/json")


QUERY_TYPES = {
    "json": ("application/json", "application/sparql-results+json"),
    "csv": ("text/csv",),
    "ttl": ("text/turtle",),
}


async def stored_query(request: Request) -> Response:
    """`/queries/<name>?param=value`: JSON (SPARQL results, JSON-LD for graphs) or CSV
    by Accept, or by a `.json` / `.csv` suffix on the name."""
    live = _live(request)
    name, _, suffix = request.path_params["name"].partition(".")
    query = live.queries.get(name)
    if query is None:
        return _problem(404, f"no stored query {name!r}; GET /queries lists them", CORS)
    fmt = _query_format(query, suffix, request.headers.get("accept"))
    if fmt is None:
        return _problem(406, "stored query answers are JSON or CSV (Turtle for graphs)", CORS)
    values = dict(request.query_params)
    store = QueryStore(live.site.store)
    try:
        job = run_in_threadpool(run_embedded, store, query, values)
        answer = await asyncio.wait_for(job, live.limits.timeout)
    except UsageError as exc:
        return _problem(400, str(exc), CORS)
    except TimeoutError:
        return _problem(503, f"the query took longer than {live.limits.timeout:g} s", CORS)
    except KgError as exc:
        return _problem(500, str(exc), CORS)
    return _query_response(answer, fmt)


def _query_format(query: StoredQuery, suffix: str, accept: str | None) -> str | None:
    graph = query.form in ("CONSTRUCT", "DESCRIBE")
    allowed = ("json", "ttl") if graph else ("json", "csv")
    if suffix:
        return suffix if suffix in allowed else None
    offered = [media for fmt in allowed for media in QUERY_TYPES[fmt]]
    media = choose(accept, offered)
    return next((f for f in allowed if media in QUERY_TYPES[f]), None)


def _query_response(answer, fmt: str) -> Response:
    headers = {"Vary": "Accept", **CORS}
    if answer.graph is not None:
        media = "application/ld+json" if fmt == "json" else "text/turtle"
        return Response(render(answer, fmt), headers=headers, media_type=media)
    if fmt == "csv":
        return Response(render(answer, "csv"), headers=headers, media_type="text/csv")
    body = _json(to_sparql_json(answer))
    return Response(body, headers=headers, media_type="application/sparql-results+json")


def _json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=2).encode() + b"\n"
