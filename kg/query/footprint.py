"""Which triples a stored query's answer can depend on, read from its SPARQL algebra, so
that an answer precomputed on one build's store is kept when the next build's graph
differs only in triples the query cannot match (decision 0034).

Invariant: a query's footprint is either EVERYTHING or a set of constant predicates, with,
for rdf:type, the constant classes; every triple the query can match has one of those
predicates (and, for rdf:type, one of those classes, or any class where a pattern leaves
it open). A query on the default graph reads nothing but the triples its patterns match,
so two graphs that agree on those triples give it the same answer. Anything this module
does not fully understand makes the footprint EVERYTHING: a variable predicate, a
negated path, a path of zero length (`p*`, `p?` match every node of the graph), GRAPH,
FROM, DESCRIBE, SERVICE, functions whose value changes from run to run (NOW, RAND,
UUID, STRUUID, BNODE), a query rdflib cannot parse, an algebra node not listed here.
GRAPH is understood only for kg's co-author index (kg.query.coauthors), whose changes a
store patch reports: a query reading it depends on the index, not on triples.

Finer (decision 0042): a changed triple the footprint admits still cannot change the
answer when no solution of any basic graph pattern of the query can use it. `matters`
asks the store holding the triple (the earlier build's for a removed one, the new one
for an added one) whether the pattern's group, with the pattern's variables bound to the
triple's terms, has a solution there; where none has, removing or adding the triple
leaves every group's solutions, and so the answer, as they were.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyoxigraph as ox

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
INDEX = "urn:kg:coauthors"  # kg.query.coauthors.COAUTHORS: the one named graph understood
ANY_CLASS = ""  # in `Footprint.classes`: an rdf:type pattern whose class is open

# Algebra nodes (rdflib's names) of queries whose answers depend on more than the
# triples their patterns match, or vary from run to run.
_UNSAFE = frozenset(
    {
        "Graph",
        "GraphGraphPattern",  # GRAPH in the syntax form rdflib keeps inside EXISTS
        "ServiceGraphPattern",
        "DescribeQuery",
        "Builtin_NOW",
        "Builtin_RAND",
        "Builtin_UUID",
        "Builtin_STRUUID",
        "Builtin_BNODE",
    }
)


@dataclass(frozen=True)
class Footprint:
    """The constant predicates a query matches and, of rdf:type, the classes (ANY_CLASS
    where a pattern leaves the class open); `everything`: any change may affect it."""

    everything: bool
    predicates: frozenset[str] = frozenset()
    classes: frozenset[str] = frozenset()
    graphs: frozenset[str] = frozenset()  # kg's index graphs the query reads (INDEX)

    def touched_by(self, changed: Change) -> bool:
        """Whether a graph change (the triples added and removed) can change the answer."""
        if self.everything or changed.everything or self.graphs & changed.graphs:
            return True
        if self.predicates & changed.predicates:
            return True
        if RDF_TYPE not in self.predicates or not changed.classes:
            return False
        return ANY_CLASS in self.classes or bool(self.classes & changed.classes)

    def as_json(self) -> dict:
        """The footprint as the store's manifest keeps it beside the answer."""
        return {
            "everything": self.everything,
            "predicates": sorted(self.predicates),
            "classes": sorted(self.classes),
            "graphs": sorted(self.graphs),
        }

    @classmethod
    def from_json(cls, data: object) -> Footprint | None:
        """`as_json`'s form read back (from a signed manifest); None where malformed."""
        if not isinstance(data, dict) or not isinstance(data.get("everything"), bool):
            return None
        predicates, classes = data.get("predicates"), data.get("classes")
        graphs = data.get("graphs", [])
        if not all(isinstance(x, list) for x in (predicates, classes, graphs)):
            return None
        if not all(isinstance(x, str) for x in [*predicates, *classes, *graphs]):  # type: ignore[misc]
            return None
        return cls(data["everything"], frozenset(predicates), frozenset(classes), frozenset(graphs))  # type: ignore[arg-type]


EVERYTHING = Footprint(everything=True)


@dataclass(frozen=True)
class Change:
    """What a graph change touched: the predicates of the triples added or removed other
    than rdf:type, and the classes of the rdf:type triples added or removed;
    `everything`: a change this module could not read."""

    predicates: frozenset[str] = frozenset()
    classes: frozenset[str] = frozenset()
    everything: bool = False
    graphs: frozenset[str] = frozenset()  # kg's index graphs the change altered (INDEX)


class _Unknown(Exception):
    """Something the footprint cannot be sure of: the footprint is EVERYTHING."""


def footprint(text: str) -> Footprint:
    """The footprint of a SPARQL query text (see the module's invariant)."""
    read = _read(text)
    return EVERYTHING if read is None else read[0]


_Pattern = tuple[object, object, object]
_Group = tuple[str | None, tuple[_Pattern, ...]]  # (named graph or None, one BGP)


def _read(text: str) -> tuple[Footprint, list[_Group]] | None:
    """The footprint and the basic graph patterns of a query; None for EVERYTHING."""
    from rdflib.plugins.sparql import algebra, parser

    try:
        query = algebra.translateQuery(parser.parseQuery(text))
    except Exception:  # rdflib's parser raises many kinds; not understood is EVERYTHING
        return None
    if getattr(query.algebra, "datasetClause", None):
        return None  # FROM / FROM NAMED: other graphs than the default one
    walk = _Walk()
    try:
        walk.node(query.algebra, top=True)
    except _Unknown:
        return None
    found = walk.found
    classes = frozenset(found.get(RDF_TYPE, ()))
    reads = Footprint(False, frozenset(found), classes, frozenset(walk.graphs))
    return reads, walk.groups


class _Walk:
    """Every triple pattern under an algebra node: `found` (predicate -> classes) for the
    default graph, `graphs` (kg's index graphs read), `groups` (each BGP). Triples are
    under a `triples` key: a BGP's are (s, p, o) tuples; the patterns inside FILTER (NOT)
    EXISTS stay in rdflib's syntax form, a TriplesBlock of flat s p o s p o lists."""

    def __init__(self) -> None:
        self.found: dict[str, set[str]] = {}
        self.graphs: set[str] = set()
        self.groups: list[_Group] = []

    def node(self, node: object, top: bool = False, graph: str | None = None) -> None:
        from rdflib import URIRef
        from rdflib.plugins.sparql.parserutils import CompValue

        if isinstance(node, CompValue):
            term = node.get("term")
            if node.name == "Graph" and isinstance(term, URIRef) and str(term) == INDEX:
                self.graphs.add(INDEX)
                self.node(node.get("p"), graph=INDEX)
                return
            if node.name in _UNSAFE:
                raise _Unknown(node.name)
            for key, value in node.items():
                if key == "triples":
                    patterns = _triples(value)
                    self.groups.append((graph, patterns))
                    for pattern in patterns if graph is None else ():
                        _pattern(pattern, self.found)
                elif key != "template" or not top:  # a CONSTRUCT's template is written
                    self.node(value, graph=graph)
        elif isinstance(node, dict):
            for value in node.values():
                self.node(value, graph=graph)
        elif isinstance(node, (list, tuple, set, frozenset)):
            for value in node:
                self.node(value, graph=graph)


def _triples(value: object) -> tuple[_Pattern, ...]:
    if not isinstance(value, (list, tuple)):
        raise _Unknown(repr(value))
    patterns = []
    for run in value:
        terms = list(run) if isinstance(run, (list, tuple)) else []
        if not terms or len(terms) % 3:
            raise _Unknown(repr(run))
        patterns += [(terms[at], terms[at + 1], terms[at + 2]) for at in range(0, len(terms), 3)]
    return tuple(patterns)


def _pattern(triple: _Pattern, found: dict[str, set[str]]) -> None:
    from rdflib import URIRef

    _, predicate, obj = triple
    if isinstance(predicate, URIRef):
        classes = found.setdefault(str(predicate), set())
        if str(predicate) == RDF_TYPE:
            classes.add(str(obj) if isinstance(obj, URIRef) else ANY_CLASS)
        return
    for step in _path_steps(predicate):
        classes = found.setdefault(step, set())
        if step == RDF_TYPE:
            classes.add(ANY_CLASS)  # inside a path the class is an inner node


def _path_steps(path: object) -> Iterable[str]:
    """The predicates a property path follows; _Unknown for a variable predicate, a
    negated set or a path that may have length zero."""
    from rdflib import URIRef
    from rdflib.paths import AlternativePath, InvPath, MulPath, SequencePath

    if isinstance(path, URIRef):
        yield str(path)
    elif isinstance(path, InvPath):
        yield from _path_steps(path.arg)
    elif isinstance(path, (SequencePath, AlternativePath)):
        for arg in path.args:
            yield from _path_steps(arg)
    elif isinstance(path, MulPath) and path.mod == "+":
        yield from _path_steps(path.path)
    else:
        raise _Unknown(repr(path))


def change_of(lines: Iterable[bytes]) -> Change:
    """The change made by N-Triples lines added or removed (kg's graph.nt writes
    `<s> <p> o .`); a line of another shape makes it a change of everything."""
    predicates: set[str] = set()
    classes: set[str] = set()
    type_iri = f"<{RDF_TYPE}>".encode()
    for line in lines:
        parts = line.rstrip(b"\r\n").split(b" ", 2)
        if len(parts) < 3 or not (parts[1].startswith(b"<") and parts[1].endswith(b">")):
            return Change(everything=True)
        if parts[1] != type_iri:
            predicates.add(parts[1][1:-1].decode("utf-8", "surrogateescape"))
            continue
        obj = parts[2].removesuffix(b" .")
        if not (obj.startswith(b"<") and obj.endswith(b">")):
            return Change(everything=True)
        classes.add(obj[1:-1].decode("utf-8", "surrogateescape"))
    return Change(frozenset(predicates), frozenset(classes))


@dataclass(frozen=True)
class Delta:
    """The triples a store patch removed and added, and the stores that hold them: the
    earlier build's (`old`, with every removed triple) and the new one (`new`)."""

    removed: Sequence[ox.Triple]
    added: Sequence[ox.Triple]
    old: ox.Store
    new: ox.Store


def matters(text: str, change: Change, delta: Delta) -> bool:
    """Whether the change can alter the answer of the query `text` (see the module's
    invariant): its footprint is touched and some changed triple can be used by a
    solution of one of its basic graph patterns in the store that holds the triple."""
    read = _read(text)
    if read is None:
        return True
    reads, groups = read
    if not reads.touched_by(change):
        return False
    if reads.everything or change.everything or reads.graphs & change.graphs:
        return True
    steps = _path_steps_of(groups)
    for store, triples in ((delta.old, delta.removed), (delta.new, delta.added)):
        for triple in triples:
            if triple.predicate.value in steps or _used(triple, groups, store):
                return True
    return False


def _path_steps_of(groups: list[_Group]) -> set[str]:
    """The predicates followed by the property paths of the default graph's patterns
    (a triple one of them can follow is taken to matter)."""
    from rdflib import URIRef

    steps: set[str] = set()
    for graph, patterns in groups:
        for _, predicate, _ in patterns if graph is None else ():
            if not isinstance(predicate, URIRef):
                steps.update(_path_steps(predicate))
    return steps


def _used(triple: ox.Triple, groups: list[_Group], store: ox.Store) -> bool:
    """Whether some default-graph BGP with a pattern of the triple's predicate has a
    solution in `store` with that pattern's variables bound to the triple's terms."""
    from rdflib import URIRef

    predicate = triple.predicate.value
    for graph, patterns in groups:
        for at, (_, p, _) in enumerate(patterns if graph is None else ()):
            if (
                isinstance(p, URIRef)
                and str(p) == predicate
                and _solvable(patterns, at, triple, store)
            ):
                return True
    return False


def _solvable(patterns: tuple[_Pattern, ...], at: int, triple: ox.Triple, store: ox.Store) -> bool:
    from rdflib import BNode, Variable

    s, _, o = patterns[at]
    bound: dict[object, str] = {}
    for term, value in ((s, triple.subject), (o, triple.object)):
        if isinstance(term, (Variable, BNode)):
            if bound.get(term, str(value)) != str(value):
                return False  # `?x p ?x` cannot match a triple whose ends differ
            bound[term] = str(value)  # N-Triples form: a SPARQL term as it is
    written = [_written(pattern, bound) for pattern in patterns]
    body = " . ".join(w for w in written if w is not None)  # paths left out: looser
    try:
        return bool(store.query(f"ASK {{ {body} }}"))
    except (SyntaxError, OSError, ValueError):
        return True  # not understood: it may matter


def _written(pattern: _Pattern, bound: dict[object, str]) -> str | None:
    """A pattern as SPARQL: bound variables as the triple's terms, blank nodes (variables
    of the pattern) as variables, IRIs and literals as N-Triples; None for a pattern with
    a property path (left out of the ASK: fewer patterns admit more solutions)."""
    from rdflib import BNode, Literal, URIRef, Variable

    terms = []
    for term in pattern:
        if term in bound:
            terms.append(bound[term])
        elif isinstance(term, Variable):
            terms.append(f"?{term}")
        elif isinstance(term, BNode):
            terms.append("?_b" + "".join(c for c in str(term) if c.isalnum()))
        elif isinstance(term, (URIRef, Literal)):
            terms.append(term.n3())
        else:
            return None
    return " ".join(terms)
