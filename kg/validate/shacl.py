"""Stage 4: SHACL validation. Non-conformance is a result (a `Report`), not an exception.

Each result is traced back to the YAML file and line that produced its focus node
through the mapper's source map (falling back to the nearest enclosing node's IRI).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import cast

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.term import Node
from rdflib.util import from_n3

from kg.graph.namespaces import RDF, SH, curie
from kg.graph.triples import Triples
from kg.model import Source
from kg.workers import Pool

SEVERITIES: dict[Node | None, str] = {  # looked up with any term found, or None
    SH.Violation: "Violation",
    SH.Warning: "Warning",
    SH.Info: "Info",
}


@dataclass(frozen=True)
class Result:
    """One SHACL result, with the YAML place it came from."""

    source: Source | None
    severity: str
    focus: str
    path: str | None
    value: str | None
    message: str
    shape: str

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        path = f" {self.path}" if self.path else ""
        value = f" (value {self.value})" if self.value is not None else ""
        return f"{where}{self.severity}: {self.message} [{self.focus}{path}{value}]"


@dataclass(frozen=True)
class Report:
    results: tuple[Result, ...]
    graph: Graph

    @property
    def conforms(self) -> bool:
        """True when there is no Violation (warnings and info are allowed)."""
        return not any(r.severity == "Violation" for r in self.results)

    def count(self, severity: str) -> int:
        return sum(1 for r in self.results if r.severity == severity)


@cache
def _load_shapes(shapes_dir: Path, ontology_dir: Path) -> tuple[Graph, Graph]:
    shapes = Graph()
    for path in sorted(shapes_dir.glob("*.ttl")):
        shapes.parse(path, format="turtle")
    ontology = Graph()
    for path in sorted(ontology_dir.glob("*.ttl")):
        ontology.parse(path, format="turtle")
    return shapes, ontology


def shapes_graph(shapes_dir: Path, ontology_dir: Path) -> Graph:
    return _load_shapes(shapes_dir.resolve(), ontology_dir.resolve())[0]


def validate(
    graph: Graph, sources: dict[URIRef, Source], shapes_dir: Path, ontology_dir: Path
) -> Report:
    """Run the shapes over `graph` (no inference) and return a typed report."""
    from pyshacl import validate as shacl_validate

    shapes, ontology = _load_shapes(shapes_dir.resolve(), ontology_dir.resolve())
    with _parsed_once(), _constraint_lookup_by_set():
        _, results_graph, _ = shacl_validate(
            graph,
            shacl_graph=shapes,
            ont_graph=ontology,
            inference="none",
            advanced=True,
            allow_warnings=True,
        )
    results = sorted(
        (
            _result(results_graph, shapes, node, sources)
            for node in results_graph.subjects(RDF.type, SH.ValidationResult)
        ),
        key=_order,
    )
    return Report(tuple(results), results_graph)


def validate_in_parts(
    triples: Triples,
    sources: dict[URIRef, Source],
    shapes_dir: Path,
    ontology_dir: Path,
    base: str,
    jobs: int | Pool = 1,
    cache_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """The same report as `validate`, computed part by part (see kg/partition.py)."""
    from kg.validate.parts import CACHE_VERSION, run_parts, split

    parts = split(triples, base, _salt(shapes_dir, ontology_dir, CACHE_VERSION))
    shapes = partial(_load_shapes, shapes_dir.resolve(), ontology_dir.resolve())
    raw = run_parts(parts, shapes, jobs, cache_dir, progress)
    results = sorted((_from_raw(r, sources) for r in raw), key=_order)
    return Report(tuple(results), _report_graph(raw))


def _salt(shapes_dir: Path, ontology_dir: Path, version: str) -> str:
    from importlib.metadata import version as installed  # not pySHACL itself: slow to import

    digest = hashlib.sha256(f"{version} {installed('pyshacl')}".encode())
    for folder in (shapes_dir, ontology_dir):
        for path in sorted(folder.glob("*.ttl")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _from_raw(raw: tuple[str, ...], sources: dict[URIRef, Source]) -> Result:
    terms = (cast(Node, from_n3(t)) if t else None for t in raw)  # N-Triples terms
    focus, severity, path, value, message, shape = terms
    return Result(
        source=source_of(focus, sources),
        severity=SEVERITIES.get(severity, "Violation"),
        focus=str(focus),
        path=_short(path) if isinstance(path, URIRef) else None,
        value=str(value) if value is not None else None,
        message=str(message) if message is not None else "constraint not met",
        shape=str(shape) if shape is not None else "",
    )


def _report_graph(raw: list[tuple[str, ...]]) -> Graph:
    """A SHACL validation report graph for the raw results (for `--format turtle`)."""
    graph = Graph()
    graph.bind("sh", SH)
    report = BNode()
    graph.add((report, RDF.type, SH.ValidationReport))
    # SHACL: sh:conforms is true only when there are no results at all (of any severity);
    # whether warnings fail a build is kg's exit-code policy, not the report's
    graph.add((report, SH.conforms, Literal(not raw)))
    predicates = (SH.focusNode, SH.resultSeverity, SH.resultPath, SH.value, SH.resultMessage)
    for r in raw:
        node = BNode()
        graph.add((report, SH.result, node))
        graph.add((node, RDF.type, SH.ValidationResult))
        for p, text in zip((*predicates, SH.sourceShape), r, strict=True):
            if text:
                graph.add((node, p, cast(Node, from_n3(text))))  # an N-Triples term
    return graph


@contextmanager
def _parsed_once() -> Iterator[None]:
    """Parse each SPARQL text once while pySHACL runs.

    pySHACL evaluates a SPARQL constraint once per focus node and passes the query as
    text, so rdflib parses it again every time (about 6 ms each: three quarters of the
    validation time on the seeds). Reusing the translated query with new initial
    bindings is exactly what rdflib's prepared queries do.
    """
    from rdflib.plugins.sparql import processor

    original = processor.SPARQLProcessor.query
    translated: dict = {}

    def query(self, text, initBindings=None, initNs=None, base=None, DEBUG=False):
        if isinstance(text, str):
            key = (text, base, tuple(sorted((initNs or {}).items())))
            if key not in translated:
                parsed = processor.parseQuery(text)
                translated[key] = processor.translateQuery(parsed, base, initNs)
            text = translated[key]
        return original(self, text, initBindings, initNs, base, DEBUG)

    processor.SPARQLProcessor.query = query  # type: ignore[method-assign]  # deliberate patch
    try:
        yield
    finally:
        processor.SPARQLProcessor.query = original  # type: ignore[method-assign]


class _ListWithSet(list):
    """A list whose `in` is a set lookup (it stays one through `copy` and `append`)."""

    def __init__(self, items=()) -> None:
        super().__init__(items)
        self._members = set(self)

    def __contains__(self, item: object) -> bool:
        return item in self._members

    def copy(self) -> _ListWithSet:
        return _ListWithSet(self)

    def append(self, item) -> None:
        super().append(item)
        self._members.add(item)


@contextmanager
def _constraint_lookup_by_set() -> Iterator[None]:
    """Let pySHACL find a shape's constraint parameters with a set lookup.

    For every shape it evaluates (nested `sh:or` branches too, once per value node),
    pySHACL tests each predicate of the shape for membership in a list of about forty
    parameter IRIs; each test is a linear scan of rdflib's Python-level `__eq__` (a
    fifth of the validation time on a synthetic corpus). pySHACL reads the list from a
    module attribute it caches itself, so it is swapped for a list with a set inside.
    """
    from pyshacl import shape
    from pyshacl.constraints import ALL_CONSTRAINT_PARAMETERS, CONSTRAINT_PARAMETERS_MAP

    missing = object()
    original = getattr(shape.module, "CONSTRAINT_PARAMS", missing)
    fast = (_ListWithSet(ALL_CONSTRAINT_PARAMETERS), CONSTRAINT_PARAMETERS_MAP)
    shape.module.CONSTRAINT_PARAMS = fast  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if original is missing:
            del shape.module.CONSTRAINT_PARAMS
        else:
            shape.module.CONSTRAINT_PARAMS = original  # type: ignore[attr-defined]


def _order(r: Result) -> tuple:
    where = (r.source.file, r.source.line, r.source.column) if r.source else ("", 0, 0)
    return (*where, r.severity, r.focus, r.path or "", r.value or "", r.message, r.shape)


def _result(g: Graph, shapes: Graph, node: Node, sources: dict[URIRef, Source]) -> Result:
    focus = g.value(node, SH.focusNode)
    path = g.value(node, SH.resultPath)
    value = g.value(node, SH.value)
    message = g.value(node, SH.resultMessage)
    shape = g.value(node, SH.sourceShape)
    return Result(
        source=source_of(focus, sources),
        severity=SEVERITIES.get(g.value(node, SH.resultSeverity), "Violation"),
        focus=str(focus),
        path=_short(path) if isinstance(path, URIRef) else None,
        value=str(value) if isinstance(value, Literal | URIRef) else None,
        message=str(message) if message is not None else "constraint not met",
        shape=str(shape) if isinstance(shape, URIRef) else _owner_shape(shapes, shape),
    )


def _owner_shape(shapes: Graph, shape: Node | None) -> str:
    """Anonymous property shapes are reported under the node shape that holds them."""
    owner = shapes.value(None, SH.property, shape) if shape is not None else None
    return str(owner) if owner is not None else ""


def source_of(focus: Node | None, sources: dict[URIRef, Source]) -> Source | None:
    """The YAML place of a node, or of the nearest enclosing node by IRI path."""
    if not isinstance(focus, URIRef):
        return None
    iri = str(focus)
    while "/" in iri:
        found = sources.get(URIRef(iri))
        if found is not None:
            return found
        iri = iri.rsplit("/", 1)[0]
    return None


def _short(iri: Node) -> str:
    return curie(str(iri)) or str(iri)


def describe_shapes(shapes: Graph) -> list[dict[str, str]]:
    """One row per constraint: id, what it targets, path, severity, message (for the docs)."""
    rows = []
    for node in sorted(set(shapes.subjects(RDF.type, SH.NodeShape)), key=str):
        targets = _targets(shapes, node)
        for prop in sorted(shapes.objects(node, SH.property), key=str):
            rows.append(_row(shapes, prop if isinstance(prop, URIRef) else node, prop, targets))
        for sparql in shapes.objects(node, SH.sparql):
            rows.append(_row(shapes, node, sparql, targets, severity_of=node))
    return rows


def _targets(shapes: Graph, node: Node) -> str:
    parts = [_short(c) for c in shapes.objects(node, SH.targetClass)]
    parts += [f"subjects of {_short(p)}" for p in shapes.objects(node, SH.targetSubjectsOf)]
    parts += [f"objects of {_short(p)}" for p in shapes.objects(node, SH.targetObjectsOf)]
    parts += ["SPARQL target" for _ in shapes.objects(node, SH.target)]
    return ", ".join(sorted(parts))


def _row(
    shapes: Graph, ident: Node, constraint: Node, targets: str, severity_of: Node | None = None
) -> dict[str, str]:
    path = shapes.value(constraint, SH.path)
    severity = shapes.value(severity_of or constraint, SH.severity) or SH.Violation
    message = shapes.value(constraint, SH.message)
    return {
        "id": str(ident).rsplit("#", 1)[-1],
        "targets": targets,
        "path": _short(path) if isinstance(path, URIRef) else ("(several)" if path else "(SPARQL)"),
        "severity": SEVERITIES[severity],
        "message": str(message),
    }
