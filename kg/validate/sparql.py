"""SPARQL-based constraints and targets (sh:sparql, sh:SPARQLTarget) on pyoxigraph.

pySHACL runs a constraint's query once per focus node with `$this` pre-bound. Here each
query runs once over the whole graph with `$this` free, and its rows are grouped by the
`$this` they bind. That gives the same rows only when `$this` is bound by a required
pattern of the query (not only inside OPTIONAL, MINUS, a sub-select or a filter) and every
aggregate is grouped by `$this`: `analyse` checks that when the shapes are compiled, with
rdflib's SPARQL algebra, and refuses anything else. It also lists the predicates the
query can read, so the store holds only those triples.

Invariant: a query's rows are a pure function of its text and the data; they are
computed at most once per validation run.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from kg.errors import ProjectError
from kg.validate.reach import Reach, query_reach
from kg.validate.terms import RDF_LANGSTRING, Lit, Term

UNSUPPORTED_VARIABLES = ("PATH", "currentShape", "shapesGraph")  # pre-bound by pySHACL


Wanted = frozenset[tuple[str, str | None]]  # (predicate, the one object IRI read, or None: any)


@dataclass(frozen=True)
class Query:
    text: str
    predicates: Wanted | None  # None: the query may read any triple
    reach: Reach | None = None  # None: a row may depend on triples anywhere


def analyse(text: str, where: str) -> Query:
    """Check that the query can run once for all focus nodes; list what it reads.

    The analysis of a text that passed is kept in the user's cache (signed; keyed by the
    text and kg's own digest): parsing with rdflib's SPARQL grammar takes about 25 ms a
    query, a quarter of a build of a small project that changed nothing."""
    from kg.cache import SignedCache, digest, package_digest, user_cache_dir

    cache = SignedCache(user_cache_dir() / "sparql", root=user_cache_dir())
    key = digest(package_digest(), "sparql-analysis", text)
    kept = cache.get(key) if cache.enabled else None
    reach = kept.get("reach", 0) if isinstance(kept, dict) else 0
    if isinstance(kept, dict) and "reads" in kept and isinstance(reach, Reach | None):
        reads = kept["reads"]
        wanted = None if reads is None else frozenset(tuple(r) for r in reads)
        return Query(text, wanted, reach)
    query = _analyse(text, where)
    if cache.enabled:
        reads = None if query.predicates is None else sorted(query.predicates, key=repr)
        with contextlib.suppress(OSError):
            user_cache_dir().mkdir(mode=0o700, parents=True, exist_ok=True)
            cache.put(key, {"reads": reads, "reach": query.reach})
    return query


def _analyse(text: str, where: str) -> Query:
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    for name in UNSUPPORTED_VARIABLES:
        if re.search(rf"[?$]{name}\b", text):
            raise ProjectError(f"{where}: ${name} in a SPARQL query is not supported")
    try:
        algebra = translateQuery(parseQuery(text)).algebra
    except Exception as e:  # pyparsing and rdflib raise assorted errors on bad text
        raise ProjectError(f"{where}: the SPARQL query does not parse: {e}") from e
    if algebra.name != "SelectQuery":
        raise ProjectError(f"{where}: only SELECT queries are supported")
    this = _variable("this")
    if this not in (algebra.get("PV") or ()) or not _binds(algebra.p, this):
        raise ProjectError(
            f"{where}: the query must select $this and bind it in a required pattern "
            "(the compiled engine runs it once for all focus nodes; use --engine pyshacl)"
        )
    if not _grouped_by(algebra.p, this):
        raise ProjectError(f"{where}: aggregates must be grouped by $this")
    return Query(text, _predicates(algebra.p), query_reach(algebra.p))


def _variable(name: str):
    from rdflib import Variable

    return Variable(name)


_PASS_THROUGH = {
    "Project",
    "Distinct",
    "Reduced",
    "Slice",
    "OrderBy",
    "Filter",
    "Extend",
    "ToMultiSet",
    "AggregateJoin",
    "Group",
}


def _binds(node, var) -> bool:
    name = getattr(node, "name", None)
    if name == "BGP":
        return any(var in (s, o) for s, _, o in node.triples)
    if name == "Join":
        return _binds(node.p1, var) or _binds(node.p2, var)
    if name in ("LeftJoin", "Minus"):
        return _binds(node.p1, var)
    if name == "Union":
        return _binds(node.p1, var) and _binds(node.p2, var)
    if name in _PASS_THROUGH:
        return _binds(node.p, var)
    return False


def _nodes(node) -> Iterator:
    """Every algebra node below `node` (CompValues inside lists and expressions too)."""
    from rdflib.plugins.sparql.algebra import translateGroupGraphPattern
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, CompValue) and node.name == "GroupGraphPatternSub":
        yield from _nodes(translateGroupGraphPattern(node))  # left as parsed in EXISTS
    elif isinstance(node, CompValue):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list | tuple):
        for item in node:
            yield from _nodes(item)


def _grouped_by(top, var) -> bool:
    selects = 0
    for node in _nodes(top):
        selects += node.name == "Project"
        if node.name == "Group" and var not in (node.get("expr") or ()):
            return False
    return selects == 1  # a sub-select has its own scope: not pre-bound the same way


def _predicates(top) -> Wanted | None:
    """The triples the query can match: by predicate, and by object where every pattern
    with that predicate names its object IRI (`?x a <Class>`)."""
    from rdflib import URIRef

    found: set[tuple[str, str | None]] = set()
    for node in _nodes(top):
        for _, p, o in node.triples if node.name == "BGP" else ():
            terms = _path_terms(p)
            if terms is None:
                return None
            if isinstance(p, URIRef):
                found.add((str(p), str(o) if isinstance(o, URIRef) else None))
            else:  # a property path: any object of its steps
                found |= {(str(t), None) for t in terms if isinstance(t, URIRef)}
    return frozenset(found)


def _path_terms(p) -> list | None:
    """The IRIs a predicate or property path can match, or None for 'any' (a variable,
    a negated path)."""
    from rdflib import URIRef
    from rdflib.paths import AlternativePath, InvPath, MulPath, NegatedPath, SequencePath

    if isinstance(p, URIRef):
        return [p]
    if isinstance(p, AlternativePath | SequencePath):
        parts = [_path_terms(a) for a in p.args]
        return None if any(x is None for x in parts) else [t for x in parts for t in x or ()]
    if isinstance(p, InvPath):
        return _path_terms(p.arg)
    if isinstance(p, MulPath):
        return _path_terms(p.path)
    if isinstance(p, NegatedPath):
        return None
    return None


# ------------------------------------------------------------------ running


Row = dict[str, Term]


def rows(store, query: Query) -> list[Row]:
    """The query's solutions as plain terms (unbound variables left out)."""
    found = []
    result = store.query(query.text)
    names = [v.value for v in result.variables]
    for solution in result:
        row = {}
        for name in names:
            value = solution[name]
            if value is not None:
                row[name] = plain(value)
        found.append(row)
    return found


def plain(term) -> Term:
    import pyoxigraph as ox

    if isinstance(term, ox.Literal):
        lang = term.language or ""
        return Lit(term.value, RDF_LANGSTRING if lang else term.datatype.value, lang)
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    return term.value
