"""Queries a newcomer can use: parameters by slug or exact name, the default said aloud,
kg's prefixes predeclared for ad-hoc queries with a one-line error for a missing one, a
project's queries/ added to the built-in ones, and tables with short IRIs."""

from __future__ import annotations

from kg.cli import main

COAUTHORS = ["query", "coauthors", "--format", "csv", "--param"]
IRI = "https://kg.example.org/person/a-b"


def run(project, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--project", str(project), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_person_parameter_takes_a_slug_or_an_exact_name(project, capsys):
    code, by_iri, _ = run(project, capsys, *COAUTHORS, f"person={IRI}")
    assert code == 0 and "Xin Jin" in by_iri
    assert run(project, capsys, *COAUTHORS, "person=a-b")[1] == by_iri
    assert run(project, capsys, *COAUTHORS, "person=Ann Bee")[1] == by_iri


def test_unknown_and_ambiguous_people_are_explained(project, capsys):
    code, _, err = run(project, capsys, *COAUTHORS, "person=nobody")
    assert code == 2 and "nothing in the graph has the slug or the exact name 'nobody'" in err
    code, _, err = run(project, capsys, *COAUTHORS, "person=Wei Wang")
    assert code == 2 and "wei-wang-0001, wei-wang-0002" in err


def test_the_default_used_is_printed(project, capsys):
    code, _, err = run(project, capsys, "query", "coauthors")
    assert code == 0
    assert "note: no --param person; using the default person=https://kg.example.org/" in err


def test_adhoc_queries_get_kg_prefixes_and_a_one_line_error_for_a_missing_one(
    project, tmp_path, capsys
):
    mine = tmp_path / "my.rq"
    mine.write_text(
        "SELECT ?name WHERE { ?p a schema:Person ; foaf:name ?name } ORDER BY ?name LIMIT 1\n",
        encoding="utf-8",
    )
    assert run(project, capsys, "query", "--file", str(mine), "--format", "csv")[1] == (
        "name\r\nAnn Bee\r\n"
    )
    mine.write_text("SELECT ?t WHERE { ?p dc:title ?t }\n", encoding="utf-8")
    code, _, err = run(project, capsys, "query", "--file", str(mine))
    assert code == 2
    assert err.count("\n") == 1 and "undeclared prefix dc:" in err


def test_project_queries_add_to_the_built_in_ones_and_win_on_a_clash(project, capsys):
    folder = project / "queries"
    folder.mkdir()
    (folder / "mine.rq").write_text(
        "#+ summary: My query\nSELECT ?n WHERE { ?p foaf:name ?n } ORDER BY ?n LIMIT 1\n",
        encoding="utf-8",
    )
    (folder / "people.rq").write_text(
        "#+ summary: Overridden\nSELECT (COUNT(*) AS ?n) WHERE { ?p a foaf:Person }\n",
        encoding="utf-8",
    )
    code, listing, _ = run(project, capsys, "query", "--list")
    assert code == 0
    assert "mine (project): My query" in listing and "people (project): Overridden" in listing
    assert "coauthors: " in listing  # a built-in one is still there
    assert run(project, capsys, "query", "mine", "--format", "csv")[1] == "n\r\nAnn Bee\r\n"
    assert run(project, capsys, "query", "people", "--format", "csv")[1].startswith("n\r\n")


def test_tables_show_slugs_and_prefixed_names(project, capsys):
    code, table, _ = run(project, capsys, "query", "coauthors", "--param", "person=a-b")
    assert code == 0
    assert "person/xin-jin" in table and "https://" not in table
    _, csv, _ = run(project, capsys, *COAUTHORS, "person=a-b")
    assert "https://kg.example.org/person/xin-jin" in csv


def _section(text: str, heading: str) -> str:
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def test_the_guide_to_writing_a_query_runs(project, capsys):
    from conftest import REPO

    guide = _section((REPO / "docs" / "queries.md").read_text(encoding="utf-8"), "## Writing")
    example = guide.split("```sparql\n", 1)[1].split("```", 1)[0]
    (project / "queries").mkdir()
    (project / "queries" / "papers-at.rq").write_text(example, encoding="utf-8")
    code, out, err = run(project, capsys, "query", "papers-at", "--format", "csv")
    assert code == 0 and out == "title,year\r\nPaper: One,2024\r\n"
    assert "using the default person=a-b" in err


def test_every_cheat_sheet_pattern_matches_the_seed_graph(seed_build):
    import re

    from conftest import REPO

    from kg.query.lookup import check_prefixes
    from kg.query.stored import parse_query, run_embedded, with_kg_prefixes

    guide = _section((REPO / "docs" / "queries.md").read_text(encoding="utf-8"), "## Writing")
    rows = [line for line in guide.splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) >= 10
    for row in rows:
        pattern = re.search(r"`([^`]+)`", row.split("|")[2]).group(1)
        query = with_kg_prefixes(parse_query(f"ASK {{ {pattern} }}", "cheat sheet"))
        check_prefixes(query)
        assert run_embedded(seed_build[1].graph, query).boolean, pattern


def test_mapping_doc_lists_every_kg_term():
    import os

    from conftest import REPO
    from rdflib import Graph
    from rdflib.namespace import RDFS

    from kg.graph.namespaces import KG

    ontology = Graph().parse(REPO / "ontology" / "kg.ttl")
    lines = ["| term | label | meaning |", "|---|---|---|"]
    terms = sorted({s for s in ontology.subjects() if str(s).startswith(str(KG))})
    for term in terms:
        label = ontology.value(term, RDFS.label) or ""
        comment = " ".join(str(ontology.value(term, RDFS.comment) or "").split())
        lines.append(f"| `kg:{term[len(KG) :]}` | {label} | {comment.replace('|', '/')} |")
    path = REPO / "docs" / "mapping.md"
    text = path.read_text(encoding="utf-8")
    head, rest = text.split("<!-- BEGIN GENERATED -->", 1)
    _, tail = rest.split("<!-- END GENERATED -->", 1)
    expected = (
        f"{head}<!-- BEGIN GENERATED -->\n" + "\n".join(lines) + f"\n<!-- END GENERATED -->{tail}"
    )
    if os.environ.get("KG_UPDATE_DOCS"):
        path.write_text(expected, encoding="utf-8")
    assert text == expected, "docs/mapping.md is out of date: run with KG_UPDATE_DOCS=1"
    assert "`kg:venue`" in expected


def test_slugs_and_names_are_looked_up_on_the_endpoint_too(project, mini_build, capsys):
    from sparql_server import oxigraph_server

    from kg.query.graph_store import publish

    _, embedded, _ = run(project, capsys, *COAUTHORS, "person=a-b")
    with oxigraph_server() as base:
        assert publish(mini_build[1].graph, f"{base}/store") in (200, 201, 204)
        remote = ["query", "coauthors", "--endpoint", f"{base}/query", "--format", "csv"]
        assert run(project, capsys, *remote, "--param", "person=Ann Bee")[1] == embedded
        code, _, err = run(project, capsys, *remote, "--param", "person=nobody")
    assert code == 2 and "nothing in the graph" in err
