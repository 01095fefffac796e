"""The compiled validator: a `Program` (kg/validate/compiler.py) run over `Data`.

Entry points take the graph as N-Triples text (lines or per-subject blocks) or as the
pipeline's `Triples`. Each `Finding` is one SHACL validation result in plain terms.
Invariant: the findings are those pySHACL gives for the same shapes and data (with the
ontology merged into the data graph, no inference), as a multiset; the order is sorted.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kg.validate.checks import SH
from kg.validate.compiler import Program, Shape, compile_dir
from kg.validate.data import Data
from kg.validate.sparql import Query, Row, rows
from kg.validate.terms import PlainTriple, Term, from_rdflib, parse_ntriples, text_of

if TYPE_CHECKING:
    from kg.graph.triples import Triples

SPARQL_COMPONENT = SH + "SPARQLConstraintComponent"


class Finding(NamedTuple):
    focus: Term
    severity: str  # an IRI: sh:Violation, sh:Warning, sh:Info
    path: str  # the predicate of a one-step path, else ""
    value: Term | None
    message: str
    shape: str  # an IRI, or "" for an anonymous shape not held by a named one
    component: str


def validate_ntriples(
    lines: Iterable[str],
    program: Program,
    ontology: Iterable[PlainTriple] = (),
    origin: str = "N-Triples",
) -> list[Finding]:
    """Findings for N-Triples text given as lines or per-subject blocks (`origin` names
    the text in an error about a line)."""
    return run(program, Data(_chain(parse_ntriples(lines, origin), ontology)))


def validate_triples(
    triples: Triples, program: Program, ontology: Iterable[PlainTriple] = ()
) -> list[Finding]:
    """Findings for the pipeline's `Triples` (rdflib terms, converted once each). Only
    the triples of predicates the program reads are converted and indexed (a fifth of
    kg's graph is read by no shape: names given twice, FOAF mirrors, back links)."""
    return run(program, triples_data(triples, program, ontology))


def triples_data(triples: Triples, program: Program, ontology: Iterable[PlainTriple] = ()) -> Data:
    """The `Data` a program runs over: the graph's and the ontology's triples of the
    predicates the program reads."""
    reads = program.reads
    if reads is not None:
        ontology = [t for t in ontology if t[1] in reads]
    return Data(_chain(read_triples(triples, reads), ontology))


def lines_data(
    lines: Iterable[str], program: Program, ontology: Iterable[PlainTriple] = ()
) -> Data:
    """`triples_data` of a graph given as N-Triples lines or per-subject blocks (as a
    new interpreter receives it, kg/validate/apart.py): the same plain terms, only the
    predicates the program reads."""
    reads = program.reads
    triples = parse_ntriples(lines)
    if reads is not None:
        ontology = [t for t in ontology if t[1] in reads]
        triples = (t for t in triples if t[1] in reads)
    return Data(_chain(triples, ontology))


def plain_triples(triples: Iterable[tuple]) -> Iterator[PlainTriple]:
    """rdflib triples as plain ones; equal terms share one Python object."""
    from rdflib import URIRef

    shared: dict[Term, Term] = {}
    for s, p, o in triples:
        s = str(s) if type(s) is URIRef else from_rdflib(s)
        o = str(o) if type(o) is URIRef else from_rdflib(o)
        yield shared.setdefault(s, s), shared.setdefault(p, str(p)), shared.setdefault(o, o)  # type: ignore[misc]


def read_triples(triples: Triples, reads: Collection[str] | None) -> Iterator[PlainTriple]:
    """`plain_triples` of a `Triples`, only those of the predicates in `reads` (None:
    all), walked subject by subject: a predicate is tested once per subject."""
    from rdflib import URIRef

    shared: dict[Term, Term] = {}
    # each predicate decided once: kept as its plain text, or None (the mapper's
    # predicates are shared objects, so this lookup seldom needs rdflib's __eq__)
    decided: dict[object, Term | None] = {}
    for s in triples.subjects():
        subject: Term | None = None
        for p, objects in triples.describe(s).items():
            predicate = decided.get(p, "")
            if predicate == "":
                text = str(p)
                keep = reads is None or text in reads
                predicate = decided[p] = shared.setdefault(text, text) if keep else None
            if predicate is None:
                continue
            if subject is None:
                subject = str(s) if type(s) is URIRef else from_rdflib(s)
                subject = shared.setdefault(subject, subject)
            for node in objects:
                o = str(node) if type(node) is URIRef else from_rdflib(node)
                yield subject, predicate, shared.setdefault(o, o)  # type: ignore[misc]


def _chain(*parts: Iterable[PlainTriple]) -> Iterator[PlainTriple]:
    for part in parts:
        yield from part


def ontology_triples(ontology_dir: Path) -> list[PlainTriple]:
    from rdflib import Graph

    graph = Graph()
    for path in sorted(ontology_dir.glob("*.ttl")):
        graph.parse(path, format="turtle")
    return [(from_rdflib(s), from_rdflib(p), from_rdflib(o)) for s, p, o in graph]  # type: ignore[misc]


def load_program(shapes_dir: Path) -> Program:
    return compile_dir(shapes_dir)


def run(program: Program, data: Data) -> list[Finding]:
    return sorted(_Run(program, data).findings(), key=_key)


def _key(f: Finding) -> tuple:
    value = f.value if f.value is None or isinstance(f.value, str) else tuple(f.value)
    return (str(f.focus), f.severity, f.path, str(value), f.message, f.shape, f.component)


class _Run:
    def __init__(self, program: Program, data: Data) -> None:
        self.program = program
        self.data = data
        self._rows: dict[str, dict[Term, list[Row]]] = {}
        self._conforms: dict[tuple[int, Term], bool] = {}

    def findings(self) -> list[Finding]:
        return [f for out in self.by_focus().values() for f in out]

    def by_focus(self) -> dict[tuple[int, Term], list[Finding]]:
        """The findings of every focus node of every root shape, by (the root's index in
        `program.roots`, the focus node); nodes without findings are left out."""
        found: dict[tuple[int, Term], list[Finding]] = {}
        for i, shape in enumerate(self.program.roots):
            if shape.deactivated:
                continue
            for focus in self.focus_nodes(shape):
                out: list[Finding] = []
                self.evaluate(shape, focus, out)
                if out:
                    found[i, focus] = out
        return found

    def focus_nodes(self, shape: Shape) -> Iterable[Term]:
        data = self.data
        found: dict[Term, None] = {}
        for kind, arg in shape.targets:
            if kind == "class":
                nodes: Iterable[Term] = data.instances(arg)  # type: ignore[arg-type]
            elif kind == "node":
                nodes = [arg]  # type: ignore[list-item]
            elif kind == "subjects":
                nodes = data.subjects_of(arg)  # type: ignore[arg-type]
            elif kind == "objects":
                nodes = data.objects_of(arg)  # type: ignore[arg-type]
            else:
                nodes = self.rows(arg).keys()  # type: ignore[arg-type]
            found.update(dict.fromkeys(nodes))
        return found

    def conforms(self, shape: object, node: Term) -> bool:
        """Whether `node` conforms to `shape`; asked once per pair (the data never changes
        during a run, so the answer is a function of the two: literals such as dates
        recur across thousands of nodes)."""
        key = (id(shape), node)
        found = self._conforms.get(key)
        if found is None:
            out: list[Finding] = []
            self.evaluate(shape, node, out)  # type: ignore[arg-type]
            found = self._conforms[key] = not out
        return found

    def evaluate(self, shape: Shape, focus: Term, out: list[Finding]) -> None:
        """Append the findings of `shape` on `focus` to `out`."""
        if shape.deactivated:
            return
        values = shape.path(self.data, focus) if shape.path is not None else (focus,)
        for check in shape.checks:
            for value, component in check(self, focus, values):
                out.append(
                    Finding(
                        focus, shape.severity, shape.path_iri, value, shape.message or "",
                        shape.name, component,
                    )
                )  # fmt: skip
        for prop in shape.properties:
            for v in values:
                self.evaluate(prop, v, out)
        for query in shape.sparql:
            found = self.rows(query).get(focus)
            if found:  # most focus nodes have no row
                out.extend(self._sparql(shape, found, focus))

    def _sparql(self, shape: Shape, found: list[Row], focus: Term) -> Iterator[Finding]:
        seen = set()
        for row in found:
            value = row.get("value", focus)
            path = row.get("path")
            key = tuple(sorted(row.items()))
            if key in seen:
                continue
            seen.add(key)
            yield Finding(
                focus, shape.severity, path if isinstance(path, str) else "", value,
                _format(shape.message or "", {**row, "value": value}), shape.name,
                SPARQL_COMPONENT,
            )  # fmt: skip

    def rows(self, query: Query) -> dict[Term, list[Row]]:
        """The query's rows by the focus node they bind to $this, computed once."""
        found = self._rows.get(query.text)
        if found is None:
            found = self._rows[query.text] = {}
            for row in rows(self.data.store(self.program.predicates), query):
                found.setdefault(row["this"], []).append(row)
        return found


def _format(message: str, row: Row) -> str:
    """pySHACL's message templates: `{?name}` or `{$name}` becomes the bound value's text."""
    for name, value in row.items():
        message = message.replace("{?" + name + "}", text_of(value))
        message = message.replace("{$" + name + "}", text_of(value))
    return message
