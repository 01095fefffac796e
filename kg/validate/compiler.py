"""shapes/*.ttl compiled once into plain-Python shapes (`Program`) the engine runs.

The shapes graph is read with rdflib here, once; what comes out holds no rdflib terms:
targets, a path function, the checks of kg/validate/checks.py, nested shapes and the
analysed SPARQL queries of kg/validate/sparql.py.

Invariant: every `sh:` term a shape uses is either compiled or refused with a
ProjectError naming the shape; nothing is silently ignored, so a shape the engine
cannot run fails `kg validate` instead of passing unchecked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rdflib import Graph, Literal, URIRef
from rdflib.collection import Collection as RdfList
from rdflib.namespace import RDF, RDFS, SH
from rdflib.term import Node

from kg.errors import ProjectError
from kg.validate import checks as c
from kg.validate.data import Data
from kg.validate.sparql import Query, Wanted, analyse
from kg.validate.terms import Lit, Term, from_rdflib

PathFn = Callable[[Data, Term], Collection[Term]]  # distinct values, in a stable order
Target = tuple[str, object]  # ("class" | "node" | "subjects" | "objects" | "sparql", arg)

IGNORED = {  # shape attributes that are not constraints (or are read with another one)
    RDF.type, RDFS.label, RDFS.comment, SH.path, SH.property, SH.severity, SH.message,
    SH.name, SH.description, SH.order, SH.group, SH.deactivated, SH.defaultValue,
    SH.targetClass, SH.targetNode, SH.targetSubjectsOf, SH.targetObjectsOf, SH.target,
    SH.flags, SH.qualifiedMinCount, SH.qualifiedMaxCount, SH.qualifiedValueShapesDisjoint,
    SH.sparql,
}  # fmt: skip


@dataclass(eq=False)
class Shape:
    node: str
    name: str = ""  # the shape results are reported under
    path: PathFn | None = None
    path_iri: str = ""  # the result path: the predicate of a one-step path, else ""
    severity: str = str(SH.Violation)
    message: str | None = None
    checks: list[c.Check] = field(default_factory=list)
    properties: list[Shape] = field(default_factory=list)
    sparql: list[Query] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    deactivated: bool = False
    hops: int | None = 0  # the longest walk of the path (None: unbounded)
    nested: list[Shape] = field(default_factory=list)  # shapes its checks run on values
    components: list[str] = field(default_factory=list)  # its constraints' names ("class")


@dataclass(frozen=True)
class Program:
    roots: tuple[Shape, ...]  # the shapes with targets
    predicates: Wanted | None  # what the SPARQL queries read (None: anything)
    reads: frozenset[str] | None = None  # every predicate the program reads (None: any)
    steps: frozenset[tuple[str, bool]] = frozenset()  # (predicate, inverse) of every path


def compile_dir(shapes_dir: Path) -> Program:
    graph = Graph()
    for path in sorted(shapes_dir.glob("*.ttl")):
        try:
            graph.parse(path, format="turtle")
        except Exception as e:  # rdflib raises assorted errors on bad Turtle
            raise ProjectError(f"{path}: not valid Turtle: {e}") from e
    return compile_graph(graph)


def compile_graph(g: Graph) -> Program:
    compiler = _Compiler(g)
    declared = set(g.subjects(RDF.type, SH.NodeShape)) | set(g.subjects(RDF.type, SH.PropertyShape))
    for p in (SH.targetClass, SH.targetNode, SH.targetSubjectsOf, SH.targetObjectsOf, SH.target):
        declared |= set(g.subjects(p, None))
    for node in sorted(declared, key=str):
        compiler.shape(node)
    roots = [s for s in compiler.compiled.values() if s.targets]
    for root in roots:
        _require_messages(root, set())
    queries = [q for s in compiler.compiled.values() for q in s.sparql]
    queries += [t[1] for s in roots for t in s.targets if isinstance(t[1], Query)]
    wanted: set[tuple[str, str | None]] = set()
    for q in queries:
        if q.predicates is None:
            return Program(tuple(roots), None)
        wanted |= q.predicates
    reads = compiler.reads | {p for p, _ in wanted} | {str(RDF.type), str(RDFS.subClassOf)}
    steps = frozenset(compiler.steps)
    return Program(tuple(roots), frozenset(wanted), frozenset(reads), steps)


def _require_messages(shape: Shape, seen: set[int]) -> None:
    """A shape whose results are reported needs its sh:message (pySHACL would make up a
    text of its own, which this engine does not imitate)."""
    if id(shape) in seen:
        return
    seen.add(id(shape))
    if (shape.checks or shape.sparql) and shape.message is None:
        raise ProjectError(f"shape {shape.name or shape.node}: give it exactly one sh:message")
    for prop in shape.properties:
        _require_messages(prop, seen)


class _Compiler:
    def __init__(self, g: Graph) -> None:
        self.g = g
        self.compiled: dict[Node, Shape] = {}
        self.reads: set[str] = set()  # the predicates of paths, targets, equals, disjoint
        self.steps: set[tuple[str, bool]] = set()  # (predicate, inverse) of every path step
        self._nested: list[Shape] = []  # the shapes the constraints being compiled name

    def fail(self, node: Node, what: str) -> ProjectError:
        what = what.replace(f"<{SH}", "sh:").replace(">", "")
        return ProjectError(
            f"shape {self.label(node)}: {what} is not supported by the compiled engine "
            "(kg validate --engine pyshacl runs it)"
        )

    def label(self, node: Node) -> str:
        if isinstance(node, URIRef):
            return f"<{node}>"
        owner = self.g.value(None, SH.property, node)
        return f"[a blank node of {self.label(owner)}]" if owner is not None else "[a blank node]"

    def one(self, node: Node, p: URIRef) -> Node | None:
        values = list(self.g.objects(node, p))
        if len(values) > 1:
            raise self.fail(node, f"more than one {p.n3()}")
        return values[0] if values else None

    def shape(self, node: Node) -> Shape:
        found = self.compiled.get(node)
        if found is None:
            found = self.compiled[node] = Shape(str(node))
            self._fill(found, node)
        return found

    def _fill(self, shape: Shape, node: Node) -> None:
        g = self.g
        shape.name = str(node) if isinstance(node, URIRef) else self._owner(node)
        shape.severity = str(self.one(node, SH.severity) or SH.Violation)
        shape.deactivated = self.one(node, SH.deactivated) == Literal(True)
        path = self.one(node, SH.path)
        if path is not None:
            shape.path = self.path(node, path)
            shape.path_iri = str(path) if isinstance(path, URIRef) else ""
            shape.hops = self.hops(path)
        shape.targets = self.targets(node)
        shape.properties = [self.shape(p) for p in sorted(g.objects(node, SH.property), key=str)]
        messages = [str(m) for m in g.objects(node, SH.message)]
        for constraint in g.objects(node, SH.sparql):
            shape.sparql.append(self.sparql(node, constraint, path is not None))
            extra = [str(m) for m in g.objects(constraint, SH.message) if str(m) not in messages]
            messages += extra
        if len(messages) > 1:
            raise self.fail(node, "more than one sh:message")
        shape.message = messages[0] if messages else None
        outer, self._nested = self._nested, shape.nested
        try:
            for p in sorted(set(g.predicates(node)), key=str):
                if p not in IGNORED:
                    shape.checks.append(self.constraint(node, p))
                    shape.components.append(str(p).removeprefix(str(SH)))
        finally:
            self._nested = outer

    def _owner(self, node: Node) -> str:
        owner = self.g.value(None, SH.property, node)
        return str(owner) if owner is not None else ""

    # ------------------------------------------------------------------ targets

    def targets(self, node: Node) -> list[Target]:
        g = self.g
        found: list[Target] = [("class", str(t)) for t in g.objects(node, SH.targetClass)]
        if (node, RDF.type, RDFS.Class) in g:
            found.append(("class", str(node)))  # an implicit class target
        found += [("node", from_rdflib(t)) for t in g.objects(node, SH.targetNode)]
        found += [("subjects", str(p)) for p in g.objects(node, SH.targetSubjectsOf)]
        found += [("objects", str(p)) for p in g.objects(node, SH.targetObjectsOf)]
        self.reads |= {str(arg) for kind, arg in found if kind in ("subjects", "objects")}
        for target in g.objects(node, SH.target):
            select = self.one(target, SH.select)
            if (target, RDF.type, SH.SPARQLTarget) not in g or select is None:
                raise self.fail(node, "a sh:target other than a sh:SPARQLTarget with sh:select")
            if self.one(target, SH.prefixes) is not None:
                raise self.fail(node, "sh:prefixes")
            found.append(("sparql", analyse(str(select), f"shape {node} (target)")))
        return found

    def sparql(self, node: Node, constraint: Node, is_property: bool) -> Query:
        if is_property:
            raise self.fail(node, "sh:sparql on a property shape")
        for p in set(self.g.predicates(constraint)):
            if p not in (SH.select, SH.message, RDF.type):
                raise self.fail(node, f"{p.n3()} on a SPARQL constraint")
        select = self.one(constraint, SH.select)
        if select is None:
            raise self.fail(node, "a SPARQL constraint without sh:select")
        return analyse(str(select), f"shape {node}")

    # ------------------------------------------------------------------ constraints

    def constraint(self, node: Node, p: Node) -> c.Check:
        try:
            return self._constraint(node, p)
        except (ValueError, re.error) as e:  # a count that is no integer, a bad regex
            raise ProjectError(f"shape {self.label(node)}: {p.n3()}: {e}") from e

    def _constraint(self, node: Node, p: Node) -> c.Check:
        value = self.one(node, p)  # type: ignore[arg-type]
        name = str(p).removeprefix(str(SH))
        simple = _SIMPLE.get(name)
        if simple is not None and value is not None:
            if name in ("equals", "disjoint"):
                self.reads.add(str(value))
            return simple(value)
        if name in ("or", "and", "xone"):
            shapes = [self.shape(s) for s in self.items(node, value)]
            self._nested += shapes
            return c.logical(name.capitalize(), shapes)
        if name in ("not", "node") and value is not None:
            self._nested.append(self.shape(value))
            return c.logical(name.capitalize(), [self._nested[-1]])
        if name in ("in", "languageIn"):
            items = self.items(node, value)
            if name == "in":
                return c.in_(from_rdflib(i) for i in items)
            return c.language_in([str(i) for i in items])
        if name == "pattern":
            return c.pattern(str(value), str(self.one(node, SH.flags) or ""))
        if name == "qualifiedValueShape" and value is not None:
            return self.qualified(node, value)
        raise self.fail(node, f"the constraint {p.n3()}" if str(p).startswith(str(SH)) else p.n3())

    def items(self, node: Node, head: Node | None) -> list[Node]:
        if head is None:
            raise self.fail(node, "an empty list")
        return list(RdfList(self.g, head))

    def qualified(self, node: Node, value: Node) -> c.Check:
        if self.one(node, SH.qualifiedValueShapesDisjoint) == Literal(True):
            raise self.fail(node, "sh:qualifiedValueShapesDisjoint true")
        self._nested.append(self.shape(value))
        least = self.one(node, SH.qualifiedMinCount)
        most = self.one(node, SH.qualifiedMaxCount)
        return c.qualified(
            self.shape(value),
            int(str(least)) if least is not None else None,
            int(str(most)) if most is not None else None,
        )

    # ------------------------------------------------------------------ paths

    def path(self, node: Node, path: Node, inverse: bool = False) -> PathFn:
        g = self.g
        if isinstance(path, URIRef):
            self.reads.add(str(path))
            self.steps.add((str(path), inverse))
            return _inverse_step(str(path)) if inverse else _step(str(path))
        if (path, RDF.first, None) in g:  # a sequence
            steps = [self.path(node, p, inverse) for p in RdfList(g, path)]
            return _sequence(steps[::-1] if inverse else steps)
        kinds = {p: o for p, o in g.predicate_objects(path)}
        if len(kinds) != 1:
            raise self.fail(node, "this property path")
        (kind, arg), = kinds.items()  # fmt: skip
        if kind == SH.inversePath:
            return self.path(node, arg, not inverse)
        if kind == SH.alternativePath:
            return _alternative([self.path(node, p, inverse) for p in RdfList(g, arg)])
        repeat = {SH.zeroOrMorePath: (0, True), SH.oneOrMorePath: (1, True)}
        repeat[SH.zeroOrOnePath] = (0, False)
        if kind in repeat:
            return _repeat(self.path(node, arg, inverse), *repeat[kind])  # type: ignore[index]
        raise self.fail(node, f"the path {kind.n3()}")

    def hops(self, path: Node) -> int | None:
        """The most steps a walk of `path` takes (None: unbounded); `path` compiled."""
        g = self.g
        if isinstance(path, URIRef):
            return 1
        if (path, RDF.first, None) in g:
            found = [self.hops(p) for p in RdfList(g, path)]
            return None if None in found else sum(found)  # type: ignore[arg-type]
        ((kind, arg),) = g.predicate_objects(path)
        if kind == SH.inversePath:
            return self.hops(arg)
        if kind == SH.alternativePath:
            found = [self.hops(p) for p in RdfList(g, arg)]
            return None if None in found else max(found, default=0)  # type: ignore[type-var]
        return self.hops(arg) if kind == SH.zeroOrOnePath else None


def _lit(value: Node) -> Lit:
    term = from_rdflib(value)
    if not isinstance(term, Lit):
        raise ProjectError(f"expected a literal, found {value.n3()}")
    return term


def _int(value: Node) -> int:
    return int(str(value))


def _range(name: str, accept: Callable[[int], bool]) -> Callable[[Node], c.Check]:
    return lambda v: c.value_range(name, _lit(v), accept)


_SIMPLE: dict[str, Callable[[Node], c.Check]] = {
    "minCount": lambda v: c.min_count(_int(v)),
    "maxCount": lambda v: c.max_count(_int(v)),
    "minLength": lambda v: c.min_length(_int(v)),
    "maxLength": lambda v: c.max_length(_int(v)),
    "class": lambda v: c.class_(str(v)),
    "datatype": lambda v: c.datatype(str(v)),
    "nodeKind": lambda v: c.node_kind(str(v)),
    "hasValue": lambda v: c.has_value(from_rdflib(v)),
    "equals": lambda v: c.equals(str(v)),
    "disjoint": lambda v: c.disjoint(str(v)),
    "uniqueLang": lambda v: c.unique_lang(v == Literal(True)),
    "minInclusive": _range("MinInclusive", lambda o: o >= 0),
    "maxInclusive": _range("MaxInclusive", lambda o: o <= 0),
    "minExclusive": _range("MinExclusive", lambda o: o > 0),
    "maxExclusive": _range("MaxExclusive", lambda o: o < 0),
}


# ------------------------------------------------------------------ path functions


def _step(p: str) -> PathFn:
    def values(data: Data, focus: Term) -> Collection[Term]:
        return data.objects(focus, p)  # the index's own set: read, never changed

    return values


def _inverse_step(p: str) -> PathFn:
    def values(data: Data, focus: Term) -> list[Term]:
        return list(data.subjects(p, focus))

    return values


def _sequence(steps: Sequence[PathFn]) -> PathFn:
    def values(data: Data, focus: Term) -> list[Term]:
        nodes: dict[Term, None] = {focus: None}
        for step in steps:
            nodes = {v: None for n in nodes for v in step(data, n)}
        return list(nodes)

    return values


def _alternative(options: Sequence[PathFn]) -> PathFn:
    def values(data: Data, focus: Term) -> list[Term]:
        return list({v: None for option in options for v in option(data, focus)})

    return values


def _repeat(step: PathFn, least: int, many: bool) -> PathFn:
    def values(data: Data, focus: Term) -> list[Term]:
        found: dict[Term, None] = {focus: None} if least == 0 else {}
        todo = [focus]
        while todo:
            node = todo.pop()
            for v in step(data, node):
                if v not in found:
                    found[v] = None
                    if many:
                        todo.append(v)
            if not many:
                break
        return list(found)

    return values
