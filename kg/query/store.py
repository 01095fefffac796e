"""The embedded SPARQL store: pyoxigraph in memory, answers as rdflib terms.

rdflib's SPARQL engine takes seconds per query on a few hundred thousand triples;
pyoxigraph answers the stored queries in milliseconds (docs/performance.md). The graph
is loaded once as N-Triples (kg's own writer, or a built `graph.nt` / `graph.ttl`),
and every answer is turned back into rdflib terms so the rest of kg (result formats,
tests, the site) sees one term model. Plain literals come back as rdflib does them:
no `xsd:string` datatype.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pyoxigraph as ox
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import XSD
from rdflib.term import Node

from kg.errors import QueryError
from kg.graph.namespaces import PREFIXES
from kg.graph.triples import GraphLike


class Precomputed(Protocol):
    """The precomputed answers of a build (kg.query.answers.Answers; a protocol here, so
    that the store imports neither the answers nor the stored queries)."""

    def find(self, query: Any, live: Callable[[], Any], values: dict[str, str]) -> Any:
        """The answer to `query` with parameter `values`, or None."""


FILE_FORMATS = {
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".ttl": ox.RdfFormat.TURTLE,
    ".nq": ox.RdfFormat.N_QUADS,
    ".trig": ox.RdfFormat.TRIG,
    ".jsonld": ox.RdfFormat.JSON_LD,
}
_XSD_STRING = str(XSD.string)
# kg.query.persist's index: the named graph saying which page owner describes each
# subject without a page of its own (`<person/x/award/1> OWNER <person/x>`)
OWNERS = "urn:kg:page-owners"
OWNER = "urn:kg:page-owner"


class QueryStore:
    """One graph in pyoxigraph's in-memory store, queried with SPARQL 1.1."""

    def __init__(
        self, store: ox.Store, owner_index: bool = False, answers: Precomputed | None = None
    ) -> None:
        """`owner_index`: the store has kg.query.persist's page-owner index; `answers`:
        the precomputed answers of its build (kg.query.answers)."""
        self._store = store
        self._owner_index = owner_index
        self.answers = answers

    @classmethod
    def from_graph(cls, graph: GraphLike) -> QueryStore:
        from kg.graph.ntriples import to_ntriples

        store = ox.Store()
        store.bulk_load(to_ntriples(graph).encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
        return cls(store)

    @classmethod
    def from_file(cls, path: Path) -> QueryStore:
        """A built graph file; the format comes from the suffix."""
        fmt = FILE_FORMATS.get(path.suffix)
        if fmt is None:
            known = ", ".join(sorted(FILE_FORMATS))
            raise QueryError(f"{path}: unknown graph format (expected one of {known})")
        store = ox.Store()
        try:
            store.bulk_load(path=str(path), format=fmt)
        except OSError as exc:
            raise QueryError(f"{path}: cannot read the graph ({exc.strerror or exc})") from None
        except SyntaxError as exc:
            raise QueryError(f"{path}: not valid {path.suffix[1:]}: {exc}") from None
        return cls(store)

    @property
    def oxigraph(self) -> ox.Store:
        """The pyoxigraph store itself."""
        return self._store

    def __len__(self) -> int:
        return len(self._store)

    def query(self, text: str, name: str) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        try:
            return self._store.query(text)
        except SyntaxError as exc:
            raise QueryError(f"query {name!r} is not valid SPARQL: {exc}") from None
        except (OSError, ValueError) as exc:
            raise QueryError(f"query {name!r} failed: {exc}") from None

    def has_graph(self, iri: str) -> bool:
        """Whether the store has the named graph `iri` (an index of kg.query.persist)."""
        return self._owner_index and self._store.contains_named_graph(ox.NamedNode(iri))

    def owner_graph(self, iri: str) -> Graph | None:
        """The triples of page owner `iri` and of every subject it describes (those minted
        under its IRI), read by index from a persistent store (kg.query.persist); None
        where the store has no owner index or `iri` is not a page owner."""
        owners = ox.NamedNode(OWNERS)
        node = ox.NamedNode(iri)
        if not self._owner_index or not self._store.contains_named_graph(owners):
            return None
        default = ox.DefaultGraph()
        if next(self._store.quads_for_pattern(node, None, None, owners), None) is not None:
            return None  # described by another page
        if next(self._store.quads_for_pattern(node, None, None, default), None) is None:
            return None  # not a subject: the query decides
        owned = [
            q.subject
            for q in self._store.quads_for_pattern(None, ox.NamedNode(OWNER), node, owners)
        ]
        quads = (
            q for s in [node, *owned] for q in self._store.quads_for_pattern(s, None, None, default)
        )
        return _graph_of(quads)


def _graph_of(triples: Iterable) -> Graph:
    convert = _Converter()
    graph = Graph(bind_namespaces="none")
    for prefix, ns in PREFIXES.items():
        graph.bind(prefix, ns)
    graph.addN(
        (convert.term(t.subject), convert.term(t.predicate), convert.term(t.object), graph)
        for t in triples
    )
    return graph


def solutions(result: ox.QuerySolutions) -> tuple[tuple[str, ...], list[tuple[Node | None, ...]]]:
    """Variable names and rows of rdflib terms (None where a variable is unbound)."""
    variables = tuple(v.value for v in result.variables)
    convert = _Converter()
    rows = [tuple(convert(row[i]) for i in range(len(variables))) for row in result]
    return variables, rows


def triples_graph(result: ox.QueryTriples) -> Graph:
    """The triples of a CONSTRUCT or DESCRIBE answer as an rdflib Graph (kg's prefixes)."""
    return _graph_of(result)


class AnswerTriples:
    """The triples of a CONSTRUCT or DESCRIBE answer, each once, as rdflib terms with kg's
    prefixes bound: what kg.publish.export's writers read of the rdflib Graph that
    `triples_graph` makes (iteration, `namespaces()`; `len`), without making one (its
    index was 3.4 of the 6 CPU-s of precomputing coauthor-network at 10k people)."""

    def __init__(self, triples: Iterable) -> None:
        convert = _Converter()
        self._triples = list(
            dict.fromkeys(
                (convert.term(t.subject), convert.term(t.predicate), convert.term(t.object))
                for t in triples
            )
        )
        self._namespaces = list(_graph_of(()).namespaces())

    def __iter__(self) -> Iterator[tuple[Node, Node, Node]]:
        return iter(self._triples)

    def __len__(self) -> int:
        return len(self._triples)

    def namespaces(self) -> Iterator[tuple[str, URIRef]]:
        """The prefixes an rdflib Graph of `triples_graph` has bound."""
        return iter(self._namespaces)


class _Converter:
    """pyoxigraph term -> rdflib term, remembering terms already converted."""

    def __init__(self) -> None:
        self._seen: dict[object, Node] = {}

    def __call__(self, term: object) -> Node | None:
        return None if term is None else self.term(term)

    def term(self, term: object) -> Node:
        found = self._seen.get(term)
        if found is None:
            found = self._seen[term] = _to_rdflib(term)
        return found


def _to_rdflib(term: object) -> Node:
    if isinstance(term, ox.NamedNode):
        return URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return BNode(term.value)
    if isinstance(term, ox.Literal):
        if term.language:
            return Literal(term.value, lang=term.language)
        datatype = term.datatype.value
        return Literal(term.value, datatype=None if datatype == _XSD_STRING else URIRef(datatype))
    raise QueryError(f"unsupported term in an answer: {term!r}")
