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
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
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

    def touched_by(self, changed: Change) -> bool:
        """Whether a graph change (the triples added and removed) can change the answer."""
        if self.everything or changed.everything:
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
        }

    @classmethod
    def from_json(cls, data: object) -> Footprint | None:
        """`as_json`'s form read back (from a signed manifest); None where malformed."""
        if not isinstance(data, dict) or not isinstance(data.get("everything"), bool):
            return None
        predicates, classes = data.get("predicates"), data.get("classes")
        if not isinstance(predicates, list) or not isinstance(classes, list):
            return None
        if not all(isinstance(x, str) for x in [*predicates, *classes]):
            return None
        return cls(data["everything"], frozenset(predicates), frozenset(classes))


EVERYTHING = Footprint(everything=True)


@dataclass(frozen=True)
class Change:
    """What a graph change touched: the predicates of the triples added or removed other
    than rdf:type, and the classes of the rdf:type triples added or removed;
    `everything`: a change this module could not read."""

    predicates: frozenset[str] = frozenset()
    classes: frozenset[str] = frozenset()
    everything: bool = False


class _Unknown(Exception):
    """Something the footprint cannot be sure of: the footprint is EVERYTHING."""


def footprint(text: str) -> Footprint:
    """The footprint of a SPARQL query text (see the module's invariant)."""
    from rdflib.plugins.sparql import algebra, parser

    try:
        query = algebra.translateQuery(parser.parseQuery(text))
    except Exception:  # rdflib's parser raises many kinds; not understood is EVERYTHING
        return EVERYTHING
    if getattr(query.algebra, "datasetClause", None):
        return EVERYTHING  # FROM / FROM NAMED: other graphs than the default one
    found: dict[str, set[str]] = {}
    try:
        _walk(query.algebra, found, top=True)
    except _Unknown:
        return EVERYTHING
    return Footprint(False, frozenset(found), frozenset(found.get(RDF_TYPE, ())))


def _walk(node: object, found: dict[str, set[str]], top: bool = False) -> None:
    """Every triple pattern under an algebra node, into `found` (predicate -> classes).
    Triples are under a `triples` key: a BGP's are (s, p, o) tuples; the patterns inside
    FILTER (NOT) EXISTS stay in rdflib's syntax form, a TriplesBlock of flat s p o s p o
    lists."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, CompValue):
        if node.name in _UNSAFE:
            raise _Unknown(node.name)
        for key, value in node.items():
            if key == "triples":
                _triples(value, found)
            elif key != "template" or not top:  # a CONSTRUCT's template is written
                _walk(value, found)
    elif isinstance(node, dict):
        for value in node.values():
            _walk(value, found)
    elif isinstance(node, (list, tuple, set, frozenset)):
        for value in node:
            _walk(value, found)


def _triples(value: object, found: dict[str, set[str]]) -> None:
    if not isinstance(value, (list, tuple)):
        raise _Unknown(repr(value))
    for run in value:
        terms = list(run) if isinstance(run, (list, tuple)) else []
        if not terms or len(terms) % 3:
            raise _Unknown(repr(run))
        for at in range(0, len(terms), 3):
            _pattern(terms[at : at + 3], found)


def _pattern(triple: list[object], found: dict[str, set[str]]) -> None:
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
