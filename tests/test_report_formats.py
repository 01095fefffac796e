"""Answers and reports in standard formats: SPARQL 1.1 TSV, the SHACL validation report."""

from __future__ import annotations

from conftest import REPO
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import SH

from kg.cli import main
from kg.query import Answer
from kg.results import render


def test_tsv_rows_are_one_line_each_with_escaped_terms():
    answer = Answer(
        "SELECT",
        ("s", "text", "n"),
        (
            (URIRef("http://e.org/a"), Literal("line one\nline two\tand a tab"), Literal(3)),
            (BNode("b1"), Literal('say "hi"', lang="en"), None),
        ),
    )
    lines = render(answer, "tsv").split("\n")
    assert lines == [
        "?s\t?text\t?n",
        '<http://e.org/a>\t"line one\\nline two\\tand a tab"\t"3"^^<http://www.w3.org/2001/XMLSchema#integer>',
        '_:b1\t"say \\"hi\\""@en\t',
        "",
    ]


def test_a_seed_bio_with_paragraphs_stays_on_one_tsv_row(seed_build):
    # Hanyu Zhao's homepage text has paragraphs: the answer is one row, one line
    from kg.query import parse_query, run_embedded

    query = parse_query(
        "SELECT ?bio WHERE { <https://kg.example.org/person/hanyu-zhao> "
        "<http://schema.org/description> ?bio }",
        "bio",
    )
    answer = run_embedded(seed_build[1].graph, query)
    assert "\n" in str(answer.rows[0][0])
    lines = render(answer, "tsv").splitlines()
    assert len(lines) == 2 and lines[1].startswith('"Hello, this is Hanyu.\\n\\nI am Hanyu Zhao')


def test_shacl_report_does_not_conform_when_it_has_results(capsys):
    # the seeds have warnings (positions without a start date) and no violations: kg exits
    # 0, but the SHACL report lists results, so sh:conforms is false
    assert main(["--project", str(REPO), "validate", "--format", "ttl"]) == 0
    report = Graph().parse(data=capsys.readouterr().out, format="turtle")
    assert set(report.objects(None, SH.conforms)) == {Literal(False)}
    assert len(set(report.objects(None, SH.result))) > 0
