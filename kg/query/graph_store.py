"""Push the graph to a triple store with the SPARQL 1.1 Graph Store HTTP Protocol."""

from __future__ import annotations

import base64
import urllib.error
import urllib.parse
import urllib.request

from rdflib import Graph

from kg.errors import RemoteError
from kg.publish.export import to_ntriples


def graph_store_url(store: str, graph_iri: str | None) -> str:
    """`store?graph=IRI` for a named graph, `store?default` for the default graph."""
    separator = "&" if "?" in store else "?"
    if graph_iri is None:
        return f"{store}{separator}default"
    return f"{store}{separator}graph={urllib.parse.quote(graph_iri, safe='')}"


def publish(
    graph: Graph,
    store: str,
    graph_iri: str | None = None,
    user: str | None = None,
    password: str | None = None,
    timeout: float = 60.0,
) -> int:
    """Replace the named (or default) graph with `graph` in one PUT; return the HTTP status."""
    if not store.startswith(("http://", "https://")):
        raise RemoteError(f"{store}: the store URL must be http(s)")
    body = to_ntriples(graph).encode("utf-8")
    request = urllib.request.Request(graph_store_url(store, graph_iri), data=body, method="PUT")
    request.add_header("Content-Type", "application/n-triples")
    if user is not None:
        token = base64.b64encode(f"{user}:{password or ''}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise RemoteError(f"{store}: authentication failed (HTTP {exc.code})") from None
        detail = exc.read(500).decode("utf-8", "replace").strip()
        raise RemoteError(f"{store}: HTTP {exc.code} {exc.reason}: {detail}") from None
    except (TimeoutError, urllib.error.URLError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RemoteError(f"{store}: cannot reach the graph store ({reason})") from None
