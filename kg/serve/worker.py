"""Query worker processes (`python -m kg.serve.worker OUT_DIR MEMORY_BYTES FD [PROJECT]`).

The process started by the server is a *zygote*: it opens the query store once (the
build's persistent store when PROJECT built OUT_DIR and it is current), then for
every query forks a child that shares the store copy-on-write. The server hands it, over
the Unix socket FD, one end of a fresh socket pair per query; the child answers that one
query on it and ends; the zygote replies with the child's pid (so the server can kill it).

Invariant: whatever a query does (exhaust memory, overflow a stack, spin), only its child
dies: each child caps its own address space (RLIMIT_AS: the zygote's size plus
MEMORY_BYTES) and CPU time (RLIMIT_CPU), writes no file (RLIMIT_FSIZE 0), dumps no core,
and has no SERVICE or LOAD left to run (kg.serve.guard), so it opens no connection.

Messages: a 4-byte big-endian length, then that many bytes. A request is one JSON
object; an answer is a JSON head, then the body bytes.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import socket
import struct
import sys
from pathlib import Path
from typing import BinaryIO

from kg.formats import JSONLD
from kg.serve import sparql  # imported once, in the zygote, before any fork

LENGTH = struct.Struct(">I")
MOST_REQUEST = 16 * 1024 * 1024


NAMED_GRAPHS = "graphs.nq"  # named graphs an operator may add next to graph.nt


class ServedStore:
    """The graph kg serve queries, as clients see it: `query` (what /sparql runs), its
    size and the named graphs a query may name, and `stored` (what stored queries run on:
    with the build's page-owner index and precomputed answers where it has them).

    Invariant: on the build's persistent store (kg.query.persist), a query sees the
    default graph and no named graph, whatever its text or the protocol ask for: the
    page-owner index `urn:kg:page-owners` is kg's own (the guard also refuses any graph
    not in `graphs`, which is empty there)."""

    def __init__(self, store, stored, triples: int, graphs: frozenset[str], persistent: bool):
        self.store = store
        self.stored = stored
        self.triples = triples
        self.graphs = graphs
        self.persistent = persistent

    def query(self, text: str, **options):
        if self.persistent:
            import pyoxigraph as ox

            options["default_graph"] = options.get("default_graph") or [ox.DefaultGraph()]
            options["named_graphs"] = options.get("named_graphs") or []
        return self.store.query(text, **options)


def open_query_store(out_dir: Path, project: Path | None = None) -> ServedStore:
    """The store kg serve queries: the one place that decides how it is opened. The
    build's persistent store (read-only, opened in milliseconds) when `project` is the
    project that built `out_dir` and that store is current (kg.query.persist) and no
    `graphs.nq` is there; else `out_dir`'s graph.nt loaded into memory as the default
    graph, plus the named graphs of `graphs.nq` if the output directory has one (kg
    build writes none). Raises OSError or SyntaxError for a missing or broken file."""
    import pyoxigraph as ox

    from kg.query.store import QueryStore

    if project is not None and not (out_dir / NAMED_GRAPHS).exists():
        served = _persistent(out_dir, project)
        if served is not None:
            return served
    store = ox.Store()
    store.bulk_load(path=str(out_dir / "graph.nt"), format=ox.RdfFormat.N_TRIPLES)
    if (out_dir / NAMED_GRAPHS).is_file():
        store.bulk_load(path=str(out_dir / NAMED_GRAPHS), format=ox.RdfFormat.N_QUADS)
    graphs = frozenset(g.value for g in store.named_graphs() if isinstance(g, ox.NamedNode))
    return ServedStore(store, QueryStore(store), len(store), graphs, persistent=False)


def _persistent(out_dir: Path, project: Path) -> ServedStore | None:
    from kg.config import load_config
    from kg.errors import KgError
    from kg.query.persist import built_triples, open_built_store

    try:
        config = load_config(project)
    except KgError:
        return None
    triples = built_triples(config, out_dir)
    stored = open_built_store(config, out_dir) if triples is not None else None
    if stored is None or triples is None:
        return None
    return ServedStore(stored.oxigraph, stored, triples, frozenset(), persistent=True)


def send(stream: BinaryIO, data: bytes) -> None:
    stream.write(LENGTH.pack(len(data)) + data)
    stream.flush()


def receive(stream: BinaryIO, most: int) -> bytes | None:
    """One message, or None at end of stream (or for a message longer than `most`)."""
    head = stream.read(LENGTH.size)
    if len(head) < LENGTH.size:
        return None
    (size,) = LENGTH.unpack(head)
    if size > most:
        return None
    data = stream.read(size)
    return data if len(data) == size else None


def _address_space() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _cap(memory: int, seconds: float) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    limit = _address_space() + memory
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime + seconds) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def answer(store, request: dict) -> tuple[dict, bytes]:
    """Run one request (a protocol query, or a stored query by name); (head, body)."""
    if "stored" in request:
        return stored_answer(store, request)
    limits = sparql.Limits(timeout=request["timeout"], max_results=request["max_results"])
    try:
        result = sparql.execute(
            store,
            request["query"],
            request["accept"],
            limits,
            request["default"],
            request["named"],
            request["base"],
        )
    except SyntaxError as exc:
        return {"outcome": "syntax", "message": str(exc)}, b""
    except sparql.QueryTimeout:
        return {"outcome": "timeout"}, b""
    except sparql.NotAcceptable as exc:
        return {"outcome": "not-acceptable", "offered": list(exc.offered)}, b""
    except MemoryError:
        return {"outcome": "memory"}, b""
    except Exception as exc:  # an evaluation error is the query's fault, never the server's
        return {"outcome": "failed", "message": f"{type(exc).__name__}: {exc}"}, b""
    head = {"outcome": "ok", "media": result.media_type, "truncated": result.truncated}
    return head, result.body


QUERY_MEDIA = {
    "json": "application/sparql-results+json",
    "csv": "text/csv; charset=utf-8",
    "ttl": "text/turtle; charset=utf-8",
}


def stored_answer(store, request: dict) -> tuple[dict, bytes]:
    """A stored query of the project (`queries_dir`) with the client's parameter values
    bound as terms, in `fmt` (json, csv; json is JSON-LD and ttl Turtle for graphs)."""
    from kg.errors import KgError, UsageError
    from kg.query.results import render
    from kg.query.stored import load_queries, run_embedded, with_kg_prefixes

    # kg's prefixes declared as `kg query` declares them (one text, one precomputed answer)
    query = with_kg_prefixes(load_queries(Path(request["queries_dir"]))[request["stored"]])
    fmt = request["fmt"]
    try:
        result = run_embedded(store.stored, query, request["values"])
    except UsageError as exc:
        return {"outcome": "usage", "message": str(exc)}, b""
    except KgError as exc:
        return {"outcome": "error", "message": str(exc)}, b""
    # the form, not `result.graph`: a precomputed answer would run the query to make one
    if result.form in ("CONSTRUCT", "DESCRIBE"):
        media = JSONLD.media if fmt == "json" else QUERY_MEDIA["ttl"]
        return {"outcome": "ok", "media": media, "truncated": False}, render(result, fmt).encode()
    body = render(result, "csv" if fmt == "csv" else "json").encode()  # SPARQL JSON results
    return {"outcome": "ok", "media": QUERY_MEDIA[fmt], "truncated": False}, body


def _child(store, channel: socket.socket, memory: int) -> None:
    """Answer the one query that arrives on `channel`."""
    with channel, channel.makefile("rb") as reader, channel.makefile("wb") as writer:
        message = receive(reader, MOST_REQUEST)
        if message is None:
            return
        request = json.loads(message)
        _cap(memory, request["timeout"])
        head, body = answer(store, request)
        send(writer, json.dumps(head).encode())
        send(writer, body)


def main(out_dir: str, memory: str, fd: str, project: str = "") -> None:
    """The zygote's loop, until the server hangs up: `f` with a socket forks a child for
    it and answers its pid; `r` with a pid reaps that child (the server has killed it:
    until then its pid cannot be reused, so the server never signals a stranger)."""
    store = open_query_store(Path(out_dir), Path(project) if project else None)
    for module in ("kg.query.results", "kg.query.store", "kg.query.stored", "kg.query.lookup"):
        importlib.import_module(module)  # for stored queries: once, before any fork

    control = socket.socket(fileno=int(fd))
    control.sendall(b"ready")
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, 5, 1)
        except OSError:
            return
        if not data:
            return  # the server closed its end
        if data[:1] == b"r":
            os.waitpid(struct.unpack(">i", data[1:5])[0], 0)
            control.sendall(b"ok")
            continue
        pid = os.fork()
        if pid == 0:
            control.close()
            _child(store, socket.socket(fileno=fds[0]), int(memory))
            return
        os.close(fds[0])
        control.sendall(struct.pack(">i", pid))


if __name__ == "__main__":
    main(*sys.argv[1:5])
