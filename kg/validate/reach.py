"""What a SPARQL query's rows for one focus node can read (decision 0058).

A compiled query runs once with `$this` free (kg/validate/sparql.py). Its rows for a
focus node f depend only on the triples its patterns can match in a solution with
`$this` = f. When every triple pattern is joined to `$this` through the variables and
terms of the required patterns (and, inside a FILTER (NOT) EXISTS, through the outer
ones, which are bound there), each matched triple has its subject or object at a node
reached from f by a chain of matched triples: `Reach` bounds that chain. Whatever else
the query does (filters, BIND, aggregates grouped by `$this`, DISTINCT, ORDER BY) is a
function of those solutions.

Invariant: `query_reach` returns a `Reach` only when the rows for f are a function of
the triples within it (superset); anything it does not understand is None (OPTIONAL,
MINUS, UNION, LIMIT/OFFSET, VALUES, GRAPH, sub-selects, unbounded or negated paths,
variable predicates, a pattern not joined to `$this` through patterns, not through a
BIND): the caller then treats the query as reading the whole graph.
"""

from __future__ import annotations

import heapq
from itertools import count
from typing import NamedTuple


class Reach(NamedTuple):
    """The triples a query's rows for one `$this` can read: those of a node at most
    `depth` steps from `$this` (its own, and its incoming ones under an `inverse`
    predicate), each step a (predicate, inverse?) of `walk` (False: to an object of the
    node's triple, True: to a subject of a triple pointing at it)."""

    depth: int
    inverse: frozenset[str]
    walk: frozenset[tuple[str, bool]]


_WRAPPERS = {
    *("Project", "Distinct", "Reduced", "OrderBy", "Filter", "Extend", "Group", "AggregateJoin"),
}
_EXISTS = {"Builtin_EXISTS", "Builtin_NOTEXISTS"}

Edge = tuple[object, str, object]  # (subject node, predicate IRI, object node) of a pattern


class _Group(NamedTuple):
    edges: list[Edge]
    inner: list[_Group]  # FILTER (NOT) EXISTS patterns, evaluated with this group bound


def query_reach(top: object) -> Reach | None:
    """The `Reach` of a query's algebra (below its SelectQuery), or None."""
    from rdflib import Variable

    group = _Group([], [])
    if not _collect(top, group):
        return None
    placed: list[_Placed] = []
    if not _place(group, {Variable("this"): 0}, placed):
        return None
    anchors = {x.anchor for x in placed}
    return Reach(
        max((x.distance for x in placed), default=0),
        frozenset(x.predicate for x in placed if x.inverse),
        frozenset((x.predicate, x.inverse) for x in placed if x.far in anchors and x.further),
    )


class _Placed(NamedTuple):
    """A pattern read at its `anchor` (`distance` steps from `$this`): its triple's
    subject (not `inverse`) or object; `further`: its other end is one step further."""

    anchor: object
    far: object
    predicate: str
    inverse: bool
    distance: int
    further: bool


def _place(group: _Group, anchors: dict[object, int], placed: list[_Placed]) -> bool:
    """Read each pattern of `group` from its end nearer `$this` (False: one is not joined
    to `$this`); then its EXISTS groups, with its nodes bound. A node on a shortest walk
    to an anchor is an anchor itself (it reads the walk's next pattern), so the steps to
    a further anchor are all the walks a row's triples need."""
    dist = _distances(group.edges, anchors)
    for s, p, o in group.edges:
        ds, do = dist.get(s), dist.get(o)
        if ds is not None and (do is None or ds <= do):
            placed.append(_Placed(s, o, p, False, ds, do == ds + 1))
        elif do is not None:
            placed.append(_Placed(o, s, p, True, do, ds == do + 1))
        else:
            return False
    return all(_place(inner, dist, placed) for inner in group.inner)


def _distances(edges: list[Edge], anchors: dict[object, int]) -> dict[object, int]:
    """The fewest pattern steps from `$this` to each node (anchors: known distances)."""
    near: dict[object, list[object]] = {}
    for s, _, o in edges:
        near.setdefault(s, []).append(o)
        near.setdefault(o, []).append(s)
    dist = dict(anchors)
    order = count()
    todo = [(d, next(order), n) for n, d in anchors.items()]
    heapq.heapify(todo)
    while todo:
        d, _, node = heapq.heappop(todo)
        if d > dist[node]:
            continue
        for other in near.get(node, ()):
            if other not in dist or dist[other] > d + 1:
                dist[other] = d + 1
                heapq.heappush(todo, (d + 1, next(order), other))
    return dist


def _collect(node: object, group: _Group) -> bool:
    """Add the patterns under `node` to `group` (False: something not understood)."""
    name = getattr(node, "name", None)
    if name == "BGP":
        return all(_edges(s, p, o, group.edges) for s, p, o in node.triples)  # type: ignore[attr-defined]
    if name == "Join":
        return _collect(node.p1, group) and _collect(node.p2, group)  # type: ignore[attr-defined]
    if name not in _WRAPPERS:
        return False
    for key, value in node.items():  # type: ignore[attr-defined]
        if key != "p" and not _exists_in(value, group):
            return False
    return _collect(node.p, group)  # type: ignore[attr-defined]


def _exists_in(value: object, group: _Group) -> bool:
    """Add the (NOT) EXISTS patterns of an expression to `group.inner`."""
    from rdflib.plugins.sparql.algebra import translateGroupGraphPattern
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(value, CompValue):
        if value.name in _EXISTS:
            inner = _Group([], [])
            group.inner.append(inner)
            return _collect(translateGroupGraphPattern(value.graph), inner)
        return all(_exists_in(v, group) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_exists_in(v, group) for v in value)
    return True


def _edges(s: object, p: object, o: object, out: list[Edge]) -> bool:
    """The pattern `s p o` as plain edges (a sequence path through fresh nodes)."""
    from rdflib import URIRef
    from rdflib.paths import AlternativePath, InvPath, SequencePath

    if isinstance(p, URIRef):
        out.append((s, str(p), o))
        return True
    if isinstance(p, InvPath):
        return _edges(o, p.arg, s, out)
    if isinstance(p, AlternativePath):
        return all(_edges(s, a, o, out) for a in p.args)
    if isinstance(p, SequencePath):
        nodes = [s, *(object() for _ in p.args[1:]), o]  # each a node of its own
        return all(_edges(a, step, b, out) for a, step, b in zip(nodes, p.args, nodes[1:]))  # noqa: B905
    return False  # a variable predicate, an unbounded (*, +) or a negated path
