"""Push the built graph to a triple store with the SPARQL 1.1 Graph Store HTTP Protocol.

`kg publish` uploads the validated `graph.nt` of the last build (it does not rebuild):
`kg build` writes `build.json` with the validation verdict and the path and SHA-256 of
`graph.nt`, and `published_graph` refuses a graph that was built with violations, a
missing record, or a `graph.nt` changed since. The upload is one PUT (replace) through
`kg.query.net` (one deadline, Digest or Basic as the store asks, no credentials to another
origin), so it works on Oxigraph, Fuseki, GraphDB and a stock Virtuoso
(`/sparql-graph-crud-auth`, Digest).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from rdflib import Graph

from kg.errors import NotValidatedError, RemoteError, UsageError
from kg.query import net

BUILD_RECORD = "build.json"
GRAPH_FILES = ("graph.nt", "site/graph.nt")  # where a build may put the whole graph
PASSWORD_VARIABLE = "KG_STORE_PASSWORD"


@dataclass(frozen=True)
class BuiltGraph:
    path: Path
    file: BinaryIO  # open on the bytes that were checked: what `publish` sends
    triples: int


def build_record(
    conforms: bool, violations: int, warnings: int, graph_path: str, ntriples: str | Path
) -> str:
    """The text of `build.json`: the verdict, and which N-Triples file (relative to the
    output directory) it is about, with its hash; `ntriples` is the text or the file
    (read in blocks: a 10k graph is 400 MB)."""
    sha, lines = hashlib.sha256(), 0
    for block in _blocks(ntriples):
        sha.update(block)
        lines += block.count(b"\n")
    record = {
        "conforms": conforms,
        "violations": violations,
        "warnings": warnings,
        "graph": {"path": graph_path, "sha256": sha.hexdigest(), "triples": lines},
    }
    return json.dumps(record, indent=2, sort_keys=True) + "\n"


def _blocks(ntriples: str | Path | BinaryIO) -> Iterator[bytes]:
    """The text, or the file (a path, or open: read from where it stands), in blocks."""
    if isinstance(ntriples, str):
        yield ntriples.encode("utf-8")
        return
    if not isinstance(ntriples, Path):
        while block := ntriples.read(1 << 22):
            yield block
        return
    with open(ntriples, "rb") as f:
        yield from _blocks(f)


# (conforms, violations, triples) of an N-Triples file, judged from its bytes
Verdict = Callable[[Path, BinaryIO], tuple[bool, int, int]]


@contextlib.contextmanager
def published_graph(
    out_dir: Path, allow_violations: bool = False, verdict: Verdict | None = None
) -> Iterator[BuiltGraph]:
    """The N-Triples file of the build in `out_dir`, open, if that build validated it,
    else an error: no record, a file changed since, or violations. The file is hashed in
    blocks through the descriptor that is then sent (at 100k people it is about 4 GB:
    never read whole), so a tree a later build puts in its place is not what is sent.

    With `verdict`, the record is not trusted (a build on another machine, a cloned
    project's `dist/`: it could say anything): the file is judged, and its triples
    counted, by `verdict(path, file)` instead, and its hash in the record is not asked
    for."""
    record_path = out_dir / BUILD_RECORD
    if not record_path.is_file():
        raise UsageError(f"no built graph in {out_dir} (no {BUILD_RECORD}); run kg build")
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        graph = record["graph"]
        path = (out_dir / graph["path"]).resolve()
        if out_dir.resolve() not in path.parents:
            raise ValueError(f"graph path {graph['path']!r} is outside {out_dir}")
        digest, triples, conforms = graph["sha256"], int(graph["triples"]), record["conforms"]
        file = open(path, "rb")  # noqa: SIM115 (closed below, or by the caller's with)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{record_path}: unusable build record ({exc}); run kg build") from None
    with file:
        if verdict is None:
            _check_record(path, file, digest)
            violations = record.get("violations")
        else:
            conforms, violations, triples = verdict(path, file)
        if conforms is not True and not allow_violations:
            raise NotValidatedError(
                f"{path} was built with {violations} violation(s) "
                "(kg build --allow-violations); fix the data, or pass --allow-violations"
            )
        yield BuiltGraph(path, file, triples)


def _check_record(path: Path, file: BinaryIO, digest: str) -> None:
    sha = hashlib.sha256()
    try:
        for block in _blocks(file):
            sha.update(block)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if sha.hexdigest() != digest:
        raise UsageError(f"{path} changed since kg build validated it; run kg build again")


def read_password(password_file: Path | None, variable: str = PASSWORD_VARIABLE) -> str | None:
    """The password from `password_file` (its first line), else the environment variable."""
    if password_file is not None:
        try:
            text = password_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read the password file {password_file}: {exc}") from None
        lines = text.splitlines()
        return lines[0] if lines else ""
    return os.environ.get(variable)


def check_graph_iri(graph_iri: str) -> str:
    """An absolute IRI (a scheme, no spaces or <>"{}|^`\\), else UsageError."""
    parts = urllib.parse.urlsplit(graph_iri)
    scheme_ok = bool(parts.scheme) and parts.scheme[0].isalpha()
    bad = set(' <>"{}|^`\\') | {chr(c) for c in range(33)}
    if not scheme_ok or not (parts.netloc or parts.path) or bad & set(graph_iri):
        raise UsageError(f"--graph {graph_iri!r}: expected an absolute IRI such as https://…")
    return graph_iri


def graph_store_url(store: str, graph_iri: str | None) -> str:
    """`store?graph=IRI` for a named graph, `store?default` for the default graph."""
    separator = "&" if "?" in store else "?"
    if graph_iri is None:
        return f"{store}{separator}default"
    return f"{store}{separator}graph={urllib.parse.quote(graph_iri, safe='')}"


def publish(
    graph: Graph | bytes | BuiltGraph,
    store: str,
    graph_iri: str | None = None,
    user: str | None = None,
    password: str | None = None,
    timeout: float = 60.0,
) -> int:
    """Replace the named (or default) graph with `graph` (N-Triples bytes, an rdflib graph,
    or a `published_graph`, streamed from its file) in one PUT; return the HTTP status."""
    net.check_url(store, "store")
    if graph_iri is not None:
        check_graph_iri(graph_iri)
    if isinstance(graph, Graph):
        from kg.graph.ntriples import to_ntriples

        graph = to_ntriples(graph).encode("utf-8")
    credentials = net.Credentials(user, password or "") if user is not None else None
    url = graph_store_url(store, graph_iri)
    headers = {"Content-Type": "application/n-triples"}
    body = graph if isinstance(graph, bytes) else graph.file
    response = net.request("PUT", url, body, headers, credentials, timeout)
    _check(store, graph_iri, response, credentials is not None)
    return response.status


def _check(store: str, graph_iri: str | None, response: net.Response, user: bool) -> None:
    status, detail = response.status, net.one_line(response.body)
    if 200 <= status < 300:
        return
    where = f"{store}: HTTP {status}"
    if status == 401 and not user:
        schemes = " or ".join(s.title() for s in net.parse_challenges(response.headers))
        raise RemoteError(f"{where}: authentication required ({schemes or 'no scheme'}): --user")
    if status == 401:
        raise RemoteError(f"{where}: authentication failed; check --user and the password")
    if status == 403:
        raise RemoteError(
            f"{where}: the store refuses writes to this graph for this user "
            f"(on Virtuoso use /sparql-graph-crud-auth with --user): {detail}"
        )
    if status >= 500 and graph_iri is None:
        detail = f"{detail} (some stores, Virtuoso among them, need a named graph: --graph IRI)"
    raise RemoteError(f"{where} {response.reason}: {detail}".rstrip(": "))
