"""A validation report: typed results traced to YAML lines, and the SHACL report graph.

Every engine (compiled, pySHACL whole or in parts) ends here. Invariant: `Report.results`
is sorted by YAML place then by content, so two engines that find the same results give
equal reports; the `sh:ValidationReport` graph is built only when asked for (`--format
ttl`), from the same results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import cast

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.term import Node
from rdflib.util import from_n3

from kg.graph.namespaces import RDF, SH, curie
from kg.model import Source

SEVERITIES: dict[Node | None, str] = {  # looked up with any term found, or None
    SH.Violation: "Violation",
    SH.Warning: "Warning",
    SH.Info: "Info",
}
SEVERITY_NAMES = {str(k): v for k, v in SEVERITIES.items()}


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
    make_graph: Callable[[], Graph] = field(compare=False, repr=False, default=Graph)

    @cached_property
    def graph(self) -> Graph:
        """The standard `sh:ValidationReport` graph (built on first use)."""
        return self.make_graph()

    @property
    def conforms(self) -> bool:
        """True when there is no Violation (warnings and info are allowed)."""
        return not any(r.severity == "Violation" for r in self.results)

    def count(self, severity: str) -> int:
        return sum(1 for r in self.results if r.severity == severity)


def order(r: Result) -> tuple:
    where = (r.source.file, r.source.line, r.source.column) if r.source else ("", 0, 0)
    return (*where, r.severity, r.focus, r.path or "", r.value or "", r.message, r.shape)


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


def short(iri: Node | str) -> str:
    return curie(str(iri)) or str(iri)


# ------------------------------------------------------------------ raw results

Raw = tuple[str, ...]  # focus, severity, path, value, message, shape[, component]: N-Triples terms
RAW_PREDICATES = (
    SH.focusNode,
    SH.resultSeverity,
    SH.resultPath,
    SH.value,
    SH.resultMessage,
    SH.sourceShape,
    SH.sourceConstraintComponent,
)


def from_raw(raw: Raw, sources: dict[URIRef, Source]) -> Result:
    terms = (cast(Node, from_n3(t)) if t else None for t in raw[:6])  # N-Triples terms
    focus, severity, path, value, message, shape = terms
    return Result(
        source=source_of(focus, sources),
        severity=SEVERITIES.get(severity, "Violation"),
        focus=str(focus),
        path=short(path) if isinstance(path, URIRef) else None,
        value=str(value) if value is not None else None,
        message=str(message) if message is not None else "constraint not met",
        shape=str(shape) if shape is not None else "",
    )


def report_graph(raw: Iterable[Raw]) -> Graph:
    """A SHACL validation report graph for raw results (N-Triples terms)."""
    return report_graph_of_terms([cast(Node, from_n3(t)) if t else None for t in r] for r in raw)


def report_graph_of_terms(results: Iterable[list[Node | None]]) -> Graph:
    graph = Graph()
    graph.bind("sh", SH)
    report = BNode()
    graph.add((report, RDF.type, SH.ValidationReport))
    conforms = True
    for terms in results:
        conforms = False
        node = BNode()
        graph.add((report, SH.result, node))
        graph.add((node, RDF.type, SH.ValidationResult))
        for p, term in zip(RAW_PREDICATES, terms, strict=False):
            if term is not None:
                graph.add((node, p, term))
    # SHACL: sh:conforms is true only when there are no results at all (of any severity);
    # whether warnings fail a build is kg's exit-code policy, not the report's
    graph.add((report, SH.conforms, Literal(conforms)))
    return graph
