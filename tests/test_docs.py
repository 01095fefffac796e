"""The docs cannot drift: generated parts are compared with what the code produces.

Run `KG_UPDATE_DOCS=1 pytest tests/test_docs.py` to rewrite them after a change.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from conftest import REPO

from kg.cli import help_texts
from kg.schema import format_reference, profile_schema, registry_schema

BEGIN, END = "<!-- BEGIN GENERATED -->", "<!-- END GENERATED -->"


def _check_generated(path, generated: str) -> None:
    text = path.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    expected = f"{head}{BEGIN}\n{generated.strip()}\n{END}{tail}"
    if os.environ.get("KG_UPDATE_DOCS"):
        path.write_text(expected, encoding="utf-8")
    assert text == expected, f"{path} is out of date: run KG_UPDATE_DOCS=1 pytest {__file__}"


def test_profile_format_reference_is_current():
    _check_generated(REPO / "docs" / "profile-format.md", format_reference())


def test_cli_reference_matches_help():
    blocks = [
        f"## `{name}`\n\n```text\n{text.rstrip()}\n```\n" for name, text in help_texts().items()
    ]
    _check_generated(REPO / "docs" / "cli.md", "\n".join(blocks))


@pytest.mark.parametrize("name", ["profile", "organizations", "venues", "people"])
def test_shipped_json_schemas_are_current(name):
    schema = profile_schema() if name == "profile" else registry_schema(name)
    path = REPO / "docs" / "schema" / f"{name}.schema.json"
    text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("KG_UPDATE_DOCS"):
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text


def test_every_example_in_profile_format_doc_loads(tmp_path):
    from kg.load import load_file
    from kg.model import Profile

    text = (REPO / "docs" / "profile-format.md").read_text(encoding="utf-8")
    examples = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    assert examples
    for i, example in enumerate(examples):
        path = tmp_path / f"example-{i}.yaml"
        path.write_text(example, encoding="utf-8")
        if example.lstrip().startswith("# profile"):
            assert load_file(path, Profile, path.name).name


def test_validation_constraints_table_is_current():
    from kg.config import load_config
    from kg.validate import describe_shapes, shapes_graph

    config = load_config(REPO)
    rows = describe_shapes(shapes_graph(config.shapes_dir, config.ontology_dir))
    lines = ["| constraint | applies to | path | severity | message |", "|---|---|---|---|---|"]
    for r in rows:
        message = r["message"].replace("|", "\\\\|")
        lines.append(
            f"| `{r['id']}` | {r['targets']} | {r['path']} | {r['severity']} | {message} |"
        )
    _check_generated(REPO / "docs" / "validation.md", "\n".join(lines))


def test_queries_doc_shows_every_query_with_sample_output(seed_build):
    from kg.query import load_queries, run_embedded
    from kg.results import render

    parts = []
    for name, query in load_queries(REPO / "queries").items():
        answer = run_embedded(seed_build[1].graph, query)
        if answer.graph is not None:
            lines = render(answer, "ttl").splitlines()
            body = [line for line in lines if not line.startswith("@prefix")]
            sample = "\n".join(body[:12]).strip() + "\n..."
            lang = "turtle"
        else:
            table = render(answer, "table", "https://kg.example.org/").splitlines()
            sample = "\n".join(table[:7] + ([f"... {table[-1]}"] if len(table) > 8 else table[7:]))
            lang = "text"
        params = (
            "".join(f"\n- `{p.name}` ({p.kind}), default `{p.default}`" for p in query.parameters)
            or "\n- none"
        )
        tags = ", ".join(query.tags)
        parts.append(
            f"### `{name}`\n\n**{query.summary}.** {query.description}\n\n"
            f"Tags: {tags}. Parameters:{params}\n\n"
            f"```sparql\n{query.text.strip()}\n```\n\n"
            f"Sample output on the seeds:\n\n```{lang}\n{sample}\n```\n"
        )
    _check_generated(REPO / "docs" / "queries.md", "\n".join(parts))


@pytest.mark.parametrize("name", ["profile", "organizations", "venues", "people"])
def test_seed_files_validate_against_the_json_schema(name):
    """What an editor with the YAML language server checks (YAML 1.2 core types)."""
    import jsonschema
    import yaml

    schema = profile_schema() if name == "profile" else registry_schema(name)
    files = (
        sorted((REPO / "data" / "profiles").glob("*.yaml"))
        if name == "profile"
        else [REPO / "data" / f"{name}.yaml"]
    )
    for path in files:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        jsonschema.validate(document, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {"name": "A", "adviser": "x"} if name == "profile" else {"Bad Key": {}}, schema
        )
