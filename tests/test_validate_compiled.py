"""The compiled SHACL engine (kg/validate/engine.py) gives pySHACL's results.

pySHACL is the oracle: the same graph goes through both, and the results must be equal
as multisets of (focus node, severity, path, value, message, source shape, constraint
component). Graphs: the seeds, the mini fixture with every invalid input of
test_validate.py at once, and a generated corpus with one injected violation of every
kind of constraint the shapes use (tests/violations.py). Every shapes file compiles on
its own; constructs the engine cannot run are refused when compiling.
"""

from __future__ import annotations

import ast
import json
import re
import shutil

import pytest
from conftest import MINI, REPO
from rdflib import Graph, URIRef
from rdflib.namespace import RDF, SH
from test_validate import CASES, PREFIXES, B
from violations import MUTATIONS, SHAPES, SPARQL_EDITS, inject

from kg.bench.synth import generate
from kg.cli import main
from kg.config import load_config
from kg.errors import InputError, ProjectError
from kg.graph.ntriples import nt_object, ntriples_lines
from kg.graph.triples import Triples
from kg.pipeline import build_graph
from kg.validate.compiler import compile_graph
from kg.validate.data import Data
from kg.validate.engine import (
    ontology_triples,
    plain_triples,
    read_triples,
    run,
    validate_ntriples,
    validate_triples,
)
from kg.validate.pyshacl_tuning import constraint_lookup_by_set, owner_shape, parsed_once
from kg.validate.shacl import shapes_graph
from kg.validate.terms import (
    RDF_LANGSTRING,
    RDF_TYPE,
    XSD_STRING,
    Lit,
    nt,
    parse_ntriples,
    parse_term,
    to_rdflib,
)

SCHEMA = "http://schema.org/"
KG = "https://w3id.org/kg-profiles/vocab#"

PARAMETERS = {  # constraint parameter -> the component pySHACL reports
    "class": "Class", "datatype": "Datatype", "nodeKind": "NodeKind", "minCount": "MinCount",
    "maxCount": "MaxCount", "minLength": "MinLength", "maxLength": "MaxLength",
    "pattern": "Pattern", "in": "In", "hasValue": "HasValue", "equals": "Equals",
    "disjoint": "Disjoint", "or": "Or", "and": "And", "not": "Not", "xone": "Xone",
    "node": "Node", "qualifiedMinCount": "QualifiedMinCount",
    "qualifiedMaxCount": "QualifiedMaxCount", "minInclusive": "MinInclusive",
    "maxInclusive": "MaxInclusive", "minExclusive": "MinExclusive",
    "maxExclusive": "MaxExclusive", "languageIn": "LanguageIn", "uniqueLang": "UniqueLang",
    "sparql": "SPARQL",
}  # fmt: skip


def oracle(graph: Graph, config) -> list[tuple]:
    """pySHACL's results on the whole graph (the ontology merged in, no inference)."""
    from pyshacl import validate

    shapes = shapes_graph(config.shapes_dir, config.ontology_dir)
    ontology = Graph()
    for path in sorted(config.ontology_dir.glob("*.ttl")):
        ontology.parse(path)
    with parsed_once(), constraint_lookup_by_set():
        _, report, _ = validate(
            graph, shacl_graph=shapes, ont_graph=ontology, inference="none", advanced=True
        )
    found = []
    for r in report.subjects(RDF.type, SH.ValidationResult):
        shape = report.value(r, SH.sourceShape)
        path, value = report.value(r, SH.resultPath), report.value(r, SH.value)
        found.append(
            (
                nt_object(report.value(r, SH.focusNode)),
                str(report.value(r, SH.resultSeverity)),
                str(path) if isinstance(path, URIRef) else "",
                nt_object(value) if value is not None else None,
                str(report.value(r, SH.resultMessage)),
                str(shape) if isinstance(shape, URIRef) else owner_shape(shapes, shape),
                str(report.value(r, SH.sourceConstraintComponent)),
            )
        )
    return sorted(found, key=str)


def compiled(findings) -> list[tuple]:
    rows = []
    for f in findings:
        value = nt(f.value) if f.value is not None else None
        rows.append((nt(f.focus), f.severity, f.path, value, f.message, f.shape, f.component))
    return sorted(rows, key=str)


@pytest.fixture(scope="module")
def program(repo_config):
    return compile_graph(shapes_graph(repo_config.shapes_dir, repo_config.ontology_dir))


@pytest.fixture(scope="module")
def ontology(repo_config):
    return ontology_triples(repo_config.ontology_dir)


def engine(triples, program, ontology) -> list[tuple]:
    return compiled(run(program, Data([*plain_triples(triples), *ontology])))


# ------------------------------------------------------------------ compiling


@pytest.mark.parametrize("path", sorted((REPO / "shapes").glob("*.ttl")), ids=lambda p: p.stem)
def test_every_shapes_file_compiles_on_its_own(path):
    program = compile_graph(Graph().parse(path))
    assert program.roots, "every file declares at least one shape with targets"
    for shape in program.roots:
        constraints = [shape, *shape.properties]
        assert any(s.checks or s.sparql for s in constraints), shape.node


HEAD = """@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <http://example.org/> .
ex:S a sh:NodeShape ; sh:targetClass ex:C ; """
REFUSED = {
    "closed": 'sh:closed true ; sh:message "m" .',
    "lessThan": 'sh:property [ sh:path ex:a ; sh:lessThan ex:b ; sh:message "m" ] .',
    "no message": "sh:property [ sh:path ex:a ; sh:minCount 1 ] .",
    "two messages": 'sh:property [ sh:path ex:a ; sh:minCount 1 ; sh:message "m", "n" ] .',
    "$this optional": 'sh:sparql [ sh:message "m" ; sh:select """SELECT $this WHERE {'
    ' OPTIONAL { $this ex:a ?x } }""" ] .',
    "ungrouped count": 'sh:sparql [ sh:message "m" ; sh:select """SELECT $this (COUNT(?x)'
    ' AS ?n) WHERE { $this ex:a ?x }""" ] .',
    "sub-select": 'sh:sparql [ sh:message "m" ; sh:select """SELECT $this WHERE { $this'
    ' ex:a ?x . { SELECT ?x WHERE { ?x ex:b ?y } } }""" ] .',
    "$PATH": 'sh:sparql [ sh:message "m" ; sh:select """SELECT $this WHERE { $this $PATH'
    ' ?x }""" ] .',
    "sparql on a property": 'sh:property [ sh:path ex:a ; sh:message "m" ; sh:sparql [ '
    'sh:select """SELECT $this WHERE { $this ex:a ?x }""" ] ] .',
    "custom target": "sh:target [ a ex:Mine ] .",
    "bad regex": 'sh:property [ sh:path ex:a ; sh:pattern "(" ; sh:message "m" ] .',
    "bad count": 'sh:property [ sh:path ex:a ; sh:minCount "one" ; sh:message "m" ] .',
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_constructs_the_engine_cannot_run_are_refused_when_compiling(name):
    with pytest.raises(ProjectError, match="shape "):
        compile_graph(Graph().parse(data=HEAD + REFUSED[name], format="turtle"))


# ------------------------------------------------------------------ equal to pySHACL


def test_seed_graph_gives_pyshacls_results(repo_config, seed_build, program, ontology):
    mapped = seed_build[1]
    expected = oracle(mapped.graph, repo_config)
    assert engine(mapped.triples, program, ontology) == expected
    assert expected  # the seeds have warnings and info


def _with_case(mapped, *names: str) -> Graph:
    graph = Graph()
    graph.addN((s, p, o, graph) for s, p, o in mapped.graph)
    for name in names:
        graph.update(PREFIXES + re.sub(r"\bb:([\w/-]+)", rf"<{B}\1>", CASES[name]))
    return graph


def test_every_invalid_mini_input_at_once_gives_pyshacls_results(mini_build, program, ontology):
    graph = _with_case(mini_build[1], *sorted(CASES))
    expected = oracle(graph, load_config(MINI))
    assert engine(graph, program, ontology) == expected
    fired = {s.rsplit("#", 1)[1] for *_, s, _ in expected}
    assert len(fired) > 60  # most cases still fire beside the others


@pytest.fixture(scope="module", params=[(24, 11, 3), (12, 2, 8)], ids=["24-people", "12-people"])
def corpus(request, tmp_path_factory, repo_config):
    """A generated project's graph with one injected violation of every kind."""
    people, seed, edits = request.param
    root = tmp_path_factory.mktemp("corpus")
    generate(root, people, seed=seed)
    config = load_config(root)
    triples = list(plain_triples(build_graph(config, cache=False)[1].triples))
    shapes = shapes_graph(repo_config.shapes_dir, repo_config.ontology_dir)
    broken, injector = inject(triples, shapes, seed=edits)
    return config, broken, injector


def test_generated_corpus_with_every_kind_of_violation_gives_pyshacls_results(
    corpus, program, ontology, repo_config
):
    config, broken, injector = corpus
    graph = Graph()
    graph.addN((to_rdflib(s), to_rdflib(p), to_rdflib(o), graph) for s, p, o in broken)
    expected = oracle(graph, config)
    assert compiled(run(program, Data([*broken, *ontology]))) == expected
    shapes_fired = {shape for *_, shape, _ in expected}
    assert set(injector.fired) <= shapes_fired  # each edit broke what it meant to
    shapes = shapes_graph(repo_config.shapes_dir, repo_config.ontology_dir)
    wanted = {m for m in MUTATIONS if (None, SH[m], None) in shapes}
    wanted |= {"inversePath", "alternativePath"}
    wanted |= {n for n in SPARQL_EDITS if (URIRef(SHAPES + n), SH.sparql, None) in shapes}
    assert set(injector.applied) == wanted  # the corpus had a place for every edit
    components = {c.rsplit("#", 1)[1] for *_, c in expected}
    used = {PARAMETERS[str(p).rsplit("#", 1)[1]] for p in _parameters(shapes)}
    assert {u + "ConstraintComponent" for u in used} <= components


def _parameters(shapes: Graph) -> set[URIRef]:
    return {
        p
        for p in set(shapes.predicates())
        if isinstance(p, URIRef) and str(p).rsplit("#", 1)[-1] in PARAMETERS
        and str(p).startswith(str(SH))
    }  # fmt: skip


def test_ntriples_lines_and_blocks_give_the_same_findings(corpus, program, ontology):
    _, broken, _ = corpus
    from_triples = compiled(run(program, Data([*broken, *ontology])))
    lines = ntriples_lines(
        Triples((to_rdflib(s), to_rdflib(p), to_rdflib(o)) for s, p, o in broken)
    )
    assert compiled(validate_ntriples(lines, program, ontology)) == from_triples
    blocks = ["".join(lines[i : i + 50]) for i in range(0, len(lines), 50)]
    assert compiled(validate_ntriples(blocks, program, ontology)) == from_triples


def test_only_the_predicates_the_shapes_read_are_indexed_with_the_same_findings(
    corpus, program, ontology
):
    _, broken, _ = corpus
    from_all = compiled(run(program, Data([*broken, *ontology])))
    triples = Triples((to_rdflib(s), to_rdflib(p), to_rdflib(o)) for s, p, o in broken)
    assert compiled(validate_triples(triples, program, ontology)) == from_all
    read = {p for _, p, _ in read_triples(triples, program.reads)}
    # read by paths, targets, sh:equals/disjoint, SPARQL, class tests; FOAF mirrors are not
    assert {SCHEMA + "roleName", SCHEMA + "worksFor", KG + "current", KG + "listing"} <= read
    assert {RDF_TYPE, SCHEMA + "endDate"} <= read
    present = {p for _, p, _ in broken}
    assert {"http://xmlns.com/foaf/0.1/made", "http://xmlns.com/foaf/0.1/maker"} <= present
    assert not read & {"http://xmlns.com/foaf/0.1/made", "http://xmlns.com/foaf/0.1/maker"}


TRICKY = [
    Lit('say "hi"\\ \n\t\r end', XSD_STRING),
    Lit("赵汉宇 \u0001 \U0001f600", RDF_LANGSTRING, "zh-hans"),
    Lit("2024", "http://www.w3.org/2001/XMLSchema#gYear"),
    Lit("", XSD_STRING),
    Lit('"', XSD_STRING),
    'http://example.org/a b?c="d"',
    "_:b0",
]


@pytest.mark.parametrize("term", TRICKY, ids=range(len(TRICKY)))
def test_ntriples_lines_read_back_the_terms_written(term):
    subject = "_:s" if isinstance(term, Lit) else "http://example.org/s"
    line = f"{nt(subject)} <http://example.org/p> {nt(term)} .\n"
    assert list(parse_ntriples([line])) == [(subject, "http://example.org/p", term)]
    spaced = line.replace(" ", "  ", 1).replace(" .", "\t.")
    assert list(parse_ntriples([spaced])) == [(subject, "http://example.org/p", term)]
    assert parse_term(nt(term)) == term  # one term's text, as the validator's feed sends it


def test_a_line_that_is_not_ntriples_is_an_input_error():
    with pytest.raises(InputError, match=r"graph\.nt:2:1: expected an N-Triples triple"):
        list(parse_ntriples(["<a:s> <a:p> <a:o> .\n<a:s> <a:p> .\n"], "graph.nt"))


# ------------------------------------------------------------------ the CLI and the code


def test_both_engines_print_the_same_json_report(project, capsys):
    profile = project / "data" / "profiles" / "a-b.yaml"
    text = profile.read_text(encoding="utf-8")
    profile.write_text(
        text.replace("    end: 2024-05\n", "    end: 2022-01\n", 1), encoding="utf-8"
    )
    outputs = []
    for engine_name in ("compiled", "pyshacl"):
        args = ["--project", str(project), "validate", "--format", "json", "--no-cache"]
        assert main([*args, "--engine", engine_name]) == 1
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] == outputs[1]
    assert [r["shape"].rsplit("#", 1)[1] for r in outputs[0]["results"]] == ["Role-startBeforeEnd"]
    assert outputs[0]["results"][0]["line"] == 20


def test_kg_build_with_either_engine_writes_the_same_build_record(project, tmp_path):
    records = []
    for engine_name in ("compiled", "pyshacl"):
        out = tmp_path / engine_name
        args = ["--project", str(project), "build", "--out", str(out), "--no-cache"]
        assert main([*args, "--engine", engine_name]) == 0
        records.append((out / "build.json").read_bytes())
    assert records[0] == records[1]
    assert json.loads(records[0])["conforms"] is True


def test_a_shape_the_engine_cannot_run_stops_kg_validate_with_exit_2(project, capsys):
    shutil.copytree(REPO / "shapes", project / "shapes")
    (project / "shapes" / "extra.ttl").write_text(HEAD + REFUSED["lessThan"], encoding="utf-8")
    assert main(["--project", str(project), "validate"]) == 2
    err = capsys.readouterr().err
    assert "sh:lessThan" in err and "not supported by the compiled engine" in err


def test_the_validate_stage_has_no_import_cycle():
    folder = REPO / "kg" / "validate"
    edges: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kg.validate"):
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                found |= {n.rsplit(".", 1)[1] for n in names if n.count(".") == 2}
        edges[path.stem] = found - {"__init__", path.stem}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(
            n == goal or (n not in seen and reaches(n, goal, seen | {n}))
            for n in edges.get(start, ())
        )

    assert [m for m in edges if reaches(m, m, set())] == []


def test_a_build_on_two_jobs_validates_in_a_child_and_reports_the_same(project, capsys):
    """With two jobs the compiled validation runs in a forked child (kg.workers.in_child):
    the same violations at the same lines, the same exit code, nothing written."""
    profile = project / "data" / "profiles" / "a-b.yaml"
    text = profile.read_text(encoding="utf-8")
    profile.write_text(text.replace("    end: 2024-05\n", "    end: 2022-01\n", 1), "utf-8")
    try:
        outputs = []
        for jobs in ("1", "2"):
            out = project / f"out-{jobs}"
            args = ["--project", str(project), "build", "--jobs", jobs, "--out", str(out)]
            assert main([*args, "--no-cache"]) == 1
            printed = capsys.readouterr()
            outputs.append(printed.out + printed.err)
            assert not out.exists()
        assert outputs[0] == outputs[1]
        assert "20:5: Violation: The end date 2022-01 is before" in outputs[0]
    finally:
        profile.write_text(text, encoding="utf-8")


def test_a_sparql_constraints_analysis_is_kept_signed_in_the_users_cache(tmp_path, monkeypatch):
    """The second analysis of a text is read from the user's cache (no SPARQL parse); an
    entry another user's kg signed is a miss, and a text that fails is never kept."""
    import rdflib.plugins.sparql.parser as parser

    from kg.validate.sparql import analyse

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("KG_CACHE_SECRET", "a" * 40)
    text = "SELECT $this WHERE { $this <http://schema.org/name> ?n . FILTER (?n = '') }"
    parses = []
    real = parser.parseQuery
    monkeypatch.setattr(parser, "parseQuery", lambda q: parses.append(q) or real(q))
    first = analyse(text, "shape x")
    assert analyse(text, "shape x") == first and len(parses) == 1
    assert first.predicates == frozenset({("http://schema.org/name", None)})
    monkeypatch.setenv("KG_CACHE_SECRET", "b" * 40)  # another user's entry: parsed again
    assert analyse(text, "shape x") == first and len(parses) == 2
    with pytest.raises(ProjectError):
        analyse("SELECT ?x WHERE { ?x ?p ?o }", "shape y")
    with pytest.raises(ProjectError):
        analyse("SELECT ?x WHERE { ?x ?p ?o }", "shape y")
    assert len(parses) == 4
