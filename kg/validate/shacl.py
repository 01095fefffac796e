"""Stage 4: SHACL validation. Non-conformance is a result (a `Report`), not an exception.

Two engines: `compiled` (the default: shapes/ compiled once into Python checks, SPARQL
constraints on pyoxigraph, kg/validate/engine.py) and `pyshacl` (the reference, run on
the whole graph or in cached parts, kg/validate/parts.py). Each result is traced back to
the YAML file and line that produced its focus node through the mapper's source map
(falling back to the nearest enclosing node's IRI), kg/validate/report.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

from rdflib import Graph, Literal, URIRef
from rdflib.term import Node

from kg.change import Change
from kg.graph.delta import Table
from kg.graph.namespaces import RDF, SH
from kg.graph.triples import Triples
from kg.model import Source
from kg.validate.pyshacl_tuning import constraint_lookup_by_set, owner_shape, parsed_once
from kg.validate.report import (
    SEVERITIES,
    SEVERITY_NAMES,
    Report,
    Result,
    from_raw,
    order,
    report_graph,
    report_graph_of_terms,
    short,
    source_of,
)
from kg.workers import Pool

ENGINES = ("compiled", "pyshacl")
__all__ = ["ENGINES", "SEVERITIES", "Report", "Result", "source_of", "validate"]


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


# ------------------------------------------------------------------ compiled (the default)


@cache
def _compiled(shapes_dir: Path, ontology_dir: Path, stamp: str):  # -> (Program, ontology)
    from kg.validate.engine import load_program, ontology_triples

    return load_program(shapes_dir), tuple(ontology_triples(ontology_dir))


def _program(shapes_dir: Path, ontology_dir: Path):
    """The compiled shapes, recompiled when a file of shapes/ or ontology/ changes."""
    stamp = _files_digest(shapes_dir, ontology_dir, hashlib.sha256())
    return _compiled(shapes_dir.resolve(), ontology_dir.resolve(), stamp)


def validate_compiled(
    triples: Triples, sources: dict[URIRef, Source], shapes_dir: Path, ontology_dir: Path
) -> Report:
    """The report for the pipeline's `Triples`, with the compiled engine."""
    from kg.validate.engine import validate_triples

    program, ontology = _program(shapes_dir, ontology_dir)
    return findings_report(validate_triples(triples, program, ontology), sources)


def validate_compiled_kept(
    triples: Triples,
    sources: dict[URIRef, Source],
    shapes_dir: Path,
    ontology_dir: Path,
    cache_dir: Path,
    apart: bool = False,
    table: Table | None = None,
    change: Change | None = None,
) -> Report:
    """`validate_compiled`, re-checking only what the change since the last run can
    affect (kg/validate/incremental.py), from a state kept in `cache_dir`; `apart`: a
    full run is made in a new interpreter (kg/validate/apart.py), else here; `table`: the
    build's subject digests (kg/graph/delta.py), else made here; `change`: what the
    front end says differs since the build before (kg/change.py)."""
    from kg.cache import SignedCache, digest, package_digest
    from kg.validate import incremental

    stamp = _files_digest(shapes_dir, ontology_dir, hashlib.sha256())
    program, ontology = _compiled(shapes_dir.resolve(), ontology_dir.resolve(), stamp)
    key = digest("validation state", stamp, package_digest())
    cache = SignedCache(cache_dir)

    def isolate(whole: Callable[[], list]) -> list:
        if not apart:
            return whole()
        from kg.validate.apart import full_apart  # the same run as `whole`, elsewhere

        front = change.after if change is not None else None  # the table: texts, digests
        return full_apart(
            triples, shapes_dir, ontology_dir, cache_dir, key, table, front, program.reads
        )

    found = incremental.validate(
        triples, program, list(ontology), cache, key, isolate, table, change
    )
    return findings_report(found, sources)


def validate_compiled_apart(
    triples: Triples, sources: dict[URIRef, Source], shapes_dir: Path, ontology_dir: Path
) -> Report:
    """`validate_compiled` made in a new interpreter (kg/validate/apart.py)."""
    from kg.validate.apart import full_apart

    return findings_report(full_apart(triples, shapes_dir, ontology_dir), sources)


def validate_ntriples(
    lines: Iterable[str],
    sources: dict[URIRef, Source],
    shapes_dir: Path,
    ontology_dir: Path,
    origin: str = "N-Triples",
) -> Report:
    """The report for a graph given as N-Triples lines or per-subject blocks."""
    from kg.validate import engine

    program, ontology = _program(shapes_dir, ontology_dir)
    findings = engine.validate_ntriples(lines, program, ontology, origin)
    return findings_report(findings, sources)


def findings_report(findings: list, sources: dict[URIRef, Source]) -> Report:
    """A report from the compiled engine's findings (kg/validate/engine.py)."""
    from kg.validate.terms import text_of

    def plain(term) -> str:
        text = text_of(term)
        return text[2:] if isinstance(term, str) and text.startswith("_:") else text

    results = [
        Result(
            source=source_of(URIRef(f.focus), sources) if isinstance(f.focus, str) else None,
            severity=SEVERITY_NAMES.get(f.severity, "Violation"),
            focus=plain(f.focus),
            path=short(f.path) if f.path else None,
            value=plain(f.value) if f.value is not None else None,
            message=f.message,
            shape=f.shape,
        )
        for f in findings
    ]

    return Report(tuple(sorted(results, key=order)), _FindingsGraph(findings))


@dataclass(frozen=True)
class _FindingsGraph:
    """The report graph of the findings, made when asked for (a class, not a closure:
    a report crosses from the validating child process to the build)."""

    findings: list

    def __call__(self) -> Graph:
        from kg.validate.terms import to_rdflib

        rows = []
        for f in self.findings:
            terms = (f.focus, f.severity, f.path or None, f.value, None, f.shape or None)
            row: list[Node | None] = [to_rdflib(t) if t is not None else None for t in terms]
            row[4] = Literal(f.message)
            row.append(URIRef(f.component))
            rows.append(row)
        return report_graph_of_terms(rows)


# ------------------------------------------------------------------ pySHACL (the reference)


def validate(
    graph: Graph, sources: dict[URIRef, Source], shapes_dir: Path, ontology_dir: Path
) -> Report:
    """Run the shapes over `graph` (no inference) and return a typed report."""
    from pyshacl import validate as shacl_validate

    shapes, ontology = _load_shapes(shapes_dir.resolve(), ontology_dir.resolve())
    with parsed_once(), constraint_lookup_by_set():
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
        key=order,
    )
    return Report(tuple(results), lambda: results_graph)


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
    results = sorted((from_raw(r, sources) for r in raw), key=order)
    return Report(tuple(results), partial(report_graph, raw))


def _salt(shapes_dir: Path, ontology_dir: Path, version: str) -> str:
    from importlib.metadata import version as installed  # not pySHACL itself: slow to import

    digest = hashlib.sha256(f"{version} {installed('pyshacl')}".encode())
    return _files_digest(shapes_dir, ontology_dir, digest)


def _files_digest(shapes_dir: Path, ontology_dir: Path, digest) -> str:
    for folder in (shapes_dir, ontology_dir):
        for path in sorted(folder.glob("*.ttl")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


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
        path=short(path) if isinstance(path, URIRef) else None,
        value=str(value) if isinstance(value, Literal | URIRef) else None,
        message=str(message) if message is not None else "constraint not met",
        shape=str(shape) if isinstance(shape, URIRef) else owner_shape(shapes, shape),
    )


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
    parts = [short(c) for c in shapes.objects(node, SH.targetClass)]
    parts += [f"subjects of {short(p)}" for p in shapes.objects(node, SH.targetSubjectsOf)]
    parts += [f"objects of {short(p)}" for p in shapes.objects(node, SH.targetObjectsOf)]
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
        "path": short(path) if isinstance(path, URIRef) else ("(several)" if path else "(SPARQL)"),
        "severity": SEVERITIES[severity],
        "message": str(message),
    }
