"""The Starlette application: the built site with content negotiation, the SPARQL
endpoint, the stored queries as an API, and the build status."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs

from markupsafe import escape
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from kg.publish.deploy import link_header
from kg.publish.layout import MEDIA_TYPES
from kg.query.stored import StoredQuery, load_queries
from kg.serve import guard, sparql
from kg.serve.bounds import BodyTooLarge, Bounds, HttpLimits
from kg.serve.negotiate import choose
from kg.serve.runner import Busy, Crashed, Runner
from kg.serve.site import PAGE_AND_DATA, Site, media_type, safe_relative

Log = Callable[[str], None]
FORM = "application/x-www-form-urlencoded"


@dataclass
class Live:
    """What is being served: the last good build, and the last build's error if it failed."""

    site: Site
    queries: dict[str, StoredQuery]
    queries_dir: Path
    limits: sparql.Limits = field(default_factory=sparql.Limits)
    error: str | None = None
    http: HttpLimits = field(default_factory=HttpLimits)
    runner: Runner | None = None  # the SPARQL workers on `site` (started by create_app)

    def use(self, limits: sparql.Limits) -> None:
        """Run queries under new limits (fresh workers; running queries finish first)."""
        self.limits = limits
        self.replace(self.site, reload=False)

    def replace(self, site: Site, reload: bool = True) -> None:
        old, self.site = self.runner, site
        self.runner = Runner(site.out_dir, self.limits, site.project)
        self.runner.warm()
        if old is not None:
            old.close()
        if reload:
            self.queries = load_queries(self.queries_dir)
            self.error = None


def create_app(live: Live, lifespan=None) -> Starlette:
    routes = [
        Route("/sparql", sparql_endpoint, methods=["GET", "POST"]),
        Route("/sparql", preflight, methods=["OPTIONS"]),
        Route("/queries", query_list, methods=["GET"]),
        Route("/queries/{name}", stored_query, methods=["GET"]),
        Route("/_kg/build", build_status, methods=["GET"]),
        Route("/{path:path}", resource, methods=["GET"]),
    ]
    if live.runner is None:
        live.runner = Runner(live.site.out_dir, live.limits, live.site.project)
        live.runner.warm()
    app = Starlette(
        routes=routes,
        lifespan=_closing(live, lifespan),
        middleware=[
            Middleware(Bounds, limits=live.http),
            Middleware(GZipMiddleware, minimum_size=1024),
        ],
    )
    app.state.live = live
    return app


def _closing(live: Live, inner):
    """A lifespan that runs `inner` (if any) and stops the query zygote at shutdown."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            if inner is None:
                yield
            else:
                async with inner(app):
                    yield
        finally:
            if live.runner is not None:
                live.runner.close()

    return lifespan


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
        return _file(live, data, media_type(rel), {**links})
    return _negotiated(request, live, rel)


def _negotiated(request: Request, live: Live, rel: str) -> Response:
    files = live.site.files
    variants = files.variants(rel)
    if not variants:
        owner = files.owner(rel)
        if owner is None:
            return _not_found(live)
        return Response(status_code=303, headers={"Location": f"/{owner}"})
    offered = {MEDIA_TYPES[ext]: ext for ext in variants}
    media = choose(request.headers.get("accept"), list(offered))
    headers = {"Vary": "Accept", **_links(rel, variants)}
    if media is None:
        body = "Not acceptable; this resource is available as: " + ", ".join(offered) + "\n"
        return Response(body, 406, headers=headers, media_type="text/plain")
    ext = offered[media]
    data = files.read(f"{rel}.{ext}") or b""
    headers["Content-Location"] = f"/{rel}.{ext}"
    return _file(live, data, media_type(f"{rel}.{ext}"), headers, request)


def _links(stem: str, variants: list[str]) -> dict[str, str]:
    """The Link header of a thing (kg.publish.deploy.link_header: the same on all servers)."""
    if not variants:
        return {}
    return {"Link": link_header(f"/{stem}", [(ext, MEDIA_TYPES[ext]) for ext in variants])}


def _file(
    live: Live, data: bytes, media: str, headers: dict[str, str], request: Request | None = None
) -> Response:
    """A file's bytes with a (weak: gzip may recode them) ETag; 304 when the client's
    If-None-Match names it."""
    if live.error is not None and media.startswith("text/html"):
        data = data.replace(b"<body>", b"<body>\n" + _banner(live.error).encode(), 1)
    etag = f'W/"{hashlib.blake2b(data, digest_size=12).hexdigest()}"'
    headers = {**headers, "ETag": etag}
    if request is not None and etag in _tags(request.headers.get("if-none-match", "")):
        return Response(status_code=304, headers=headers)
    return Response(data, headers=headers, media_type=media)


def _tags(header: str) -> set[str]:
    tags = {tag.strip() for tag in header.split(",")}
    return tags | {f"W/{tag}" for tag in tags if not tag.startswith("W/")}


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
    if request.method != "POST" and not {"update", "query"} & set(params.keys()):
        return _service_description(request, live)
    found = await _read_query(request, live.limits.max_query)
    if isinstance(found, Response):
        return found
    text, defaults, named = found
    try:
        guard.check(text, live.site.graphs, live.limits.max_depth, [*defaults, *named])
    except guard.Refused as exc:
        return _problem(exc.status, exc.message)
    return await _answer(request, live, text, defaults, named)


async def preflight(request: Request) -> Response:
    """The CORS preflight of a browser SPARQL client (YASGUI, Comunica)."""
    headers = {
        "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
        "Access-Control-Allow-Headers": "Accept, Content-Type",
        "Access-Control-Max-Age": "86400",
        "Allow": "GET, HEAD, POST, OPTIONS",
    }
    return Response(status_code=204, headers=headers)


Read = tuple[str, list[str], list[str]]  # query, default graphs, named graphs


async def _read_query(request: Request, most: int) -> Read | Response:
    """The query and dataset of a protocol request, or the error response."""
    params = {k: request.query_params.getlist(k) for k in request.query_params}
    if request.method == "POST":
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        try:
            raw = await request.body()
            body = raw.decode("utf-8")
        except BodyTooLarge:
            return _problem(413, f"a request body may have at most {most} bytes")
        except ClientDisconnect:  # cut off (slow body) or gone: nobody reads this answer
            return _problem(400, "the request body did not arrive")
        except UnicodeDecodeError:
            return _problem(400, "the request body is not UTF-8")
        if content_type == FORM:
            params = {**params, **parse_qs(body, max_num_fields=64)}
        elif content_type == "application/sparql-query":
            if "query" in params:
                return _problem(400, "give the query once: in the body or as query=, not both")
            params["query"] = [body]
        elif content_type == "application/sparql-update":
            return _refuse_update()
        else:
            return _problem(415, f"send a query as {FORM} or application/sparql-query")
    if "update" in params:
        return _refuse_update()
    if len(params.get("query", [])) != 1:
        return _problem(400, "give exactly one query parameter")
    text = params["query"][0]
    if not text.strip():
        return _problem(400, "no query given")
    if len(text.encode()) > most:
        return _problem(413, f"a query may have at most {most} bytes")
    return text, params.get("default-graph-uri", []), params.get("named-graph-uri", [])


async def _answer(
    request: Request, live: Live, text: str, defaults: list[str], named: list[str]
) -> Response:
    job = {"query": text, "accept": request.headers.get("accept"), "default": defaults}
    job.update(named=named, base=str(request.url.replace(query="")))
    ran = await _run(live, job)
    if isinstance(ran, Response):
        return ran
    return _worker_answer(*ran, live.limits)


async def _run(live: Live, job: dict) -> tuple[dict, bytes] | Response:
    """One query on the worker processes: its head and body, or the 503 that says why
    not (every slot busy, out of time, out of memory or crashed)."""
    limits, runner = live.limits, live.runner
    assert runner is not None
    try:
        head, body = await runner.run(job)
    except Busy:
        return _problem(503, "too many queries are running; try again shortly", RETRY)
    except TimeoutError:
        return _problem(503, f"the query took longer than {limits.timeout:g} s", RETRY)
    except Crashed:
        mib = limits.memory // (1024 * 1024)
        return _problem(503, f"the query needed more than {mib} MiB or crashed its worker")
    return head, body


RETRY = {"Retry-After": "5"}


def _worker_answer(head: dict, body: bytes, limits: sparql.Limits) -> Response:
    outcome = head["outcome"]
    if outcome == "ok":
        headers = {"Vary": "Accept"}
        if head["truncated"]:
            headers["KG-Result-Limit"] = str(limits.max_results)
        return Response(body, headers=headers, media_type=head["media"])
    if outcome == "syntax":
        return _problem(400, f"not valid SPARQL 1.1 query syntax: {head['message']}")
    if outcome == "timeout":
        return _problem(503, f"the query took longer than {limits.timeout:g} s", RETRY)
    if outcome == "not-acceptable":
        return _problem(406, f"this answer is available as: {', '.join(head['offered'])}")
    if outcome == "memory":
        mib = limits.memory // (1024 * 1024)
        return _problem(503, f"the query needed more than {mib} MiB")
    return _problem(400, f"the query failed: {head['message']}")


def _refuse_update() -> Response:
    return _problem(403, guard.UPDATE_MESSAGE)


def _problem(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(message + "\n", status, headers=headers, media_type="text/plain")


def _service_description(request: Request, live: Live) -> Response:
    endpoint = str(request.url.replace(query=""))
    body = sparql.service_description(endpoint, live.site.triples)
    return Response(body, headers={"Vary": "Accept"}, media_type="text/turtle")


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
    return Response(_json(items), media_type="application/json")


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
        return _problem(404, f"no stored query {name!r}; GET /queries lists them")
    fmt = _query_format(query, suffix, request.headers.get("accept"))
    if fmt is None:
        return _problem(406, "stored query answers are JSON or CSV (Turtle for graphs)")
    job = {"stored": name, "values": dict(request.query_params), "fmt": fmt}
    job["queries_dir"] = str(live.queries_dir)
    ran = await _run(live, job)
    if isinstance(ran, Response):
        return ran
    head, body = ran
    if head["outcome"] == "usage":
        return _problem(400, head["message"])
    if head["outcome"] == "error":
        return _problem(500, head["message"])
    return Response(body, headers={"Vary": "Accept"}, media_type=head["media"])


def _query_format(query: StoredQuery, suffix: str, accept: str | None) -> str | None:
    graph = query.form in ("CONSTRUCT", "DESCRIBE")
    allowed = ("json", "ttl") if graph else ("json", "csv")
    if suffix:
        return suffix if suffix in allowed else None
    offered = [media for fmt in allowed for media in QUERY_TYPES[fmt]]
    media = choose(accept, offered)
    return next((f for f in allowed if media in QUERY_TYPES[f]), None)


def _json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=2).encode() + b"\n"
