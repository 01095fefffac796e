"""Security and privacy: nothing private leaks, nothing reaches the network, nothing escapes."""

from __future__ import annotations

import json
import socket
import subprocess

import pytest
from conftest import MINI, REPO, mini_copy, write
from rdflib import Graph

from kg.cli import main
from kg.config import load_config
from kg.errors import InputError
from kg.ingest.load import load_file
from kg.model import Profile
from kg.pipeline import build, build_graph, embed_markup
from kg.query.stored import load_queries, run_embedded

SECRET_EMAIL = "secret.person@private.example"
SECRET_ADDRESS = "42 Hidden Lane, Nowhere"
HIDDEN_NAME = "Zed Hidden-Person"


@pytest.fixture(scope="module")
def private_project(tmp_path_factory):
    root = tmp_path_factory.mktemp("privacy") / "project"
    import shutil

    shutil.copytree(MINI, root)
    path = root / "data" / "profiles" / "a-b.yaml"
    text = path.read_text(encoding="utf-8").replace(
        "emails: [ann@example.org]",
        f"emails: [ann@example.org, {SECRET_EMAIL}]\naddress: {SECRET_ADDRESS}\n"
        "private: [emails, address]",
    )
    write(path, text)
    write(
        root / "data" / "profiles" / "zed-hidden.yaml",
        f"name: {HIDDEN_NAME}\npublic: false\nemails: [zed@hidden.example]\n"
        "address: Secret Street 1\n",
    )
    out = root / "dist"
    build(load_config(root), out=out)
    return root, out


def _all_text(out):
    return {p: p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    "secret",
    [
        SECRET_EMAIL,
        SECRET_ADDRESS,
        "ann@example.org",
        "zed@hidden.example",
        "Secret Street 1",
        "zed-hidden",
    ],
)
def test_private_values_are_in_no_export_or_page(private_project, secret):
    _, out = private_project
    files = _all_text(out)
    assert len(files) > 10
    assert [p.name for p, text in files.items() if secret in text] == []


def test_private_values_are_in_no_snippet_or_query_result(private_project, capsys):
    root, _ = private_project
    config = load_config(root)
    snippet = json.dumps(embed_markup(config, "a-b"), ensure_ascii=False)
    assert SECRET_EMAIL not in snippet and SECRET_ADDRESS not in snippet
    assert main(["--project", str(root), "embed", "zed-hidden"]) == 2
    capsys.readouterr()
    graph = build_graph(config)[1].graph
    dump = graph.serialize(format="nt")
    for secret in (SECRET_EMAIL, SECRET_ADDRESS, "zed@hidden.example", HIDDEN_NAME):
        assert secret not in dump
    for query in load_queries(config.queries_dir).values():
        answer = run_embedded(graph, query)
        text = repr(answer.rows) + (answer.graph.serialize(format="nt") if answer.graph else "")
        assert SECRET_EMAIL not in text and "zed@hidden.example" not in text


def test_private_lists_only_known_fields(tmp_path):
    path = write(tmp_path / "p.yaml", "name: A\nprivate: [salary]\n")
    with pytest.raises(InputError, match="expected one of emails"):
        load_file(path, Profile, "p.yaml")


# ------------------------------------------------------------------ no network


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_every_jsonld_we_emit_parses_without_network(no_network, private_project):
    _, out = private_project
    parsed = 0
    for path in out.rglob("*.jsonld"):
        assert len(Graph().parse(path, format="json-ld")) > 0 or path.name == "context.jsonld"
        parsed += 1
    assert parsed >= 5


def test_building_and_validating_never_touches_the_network(no_network, tmp_path):
    build(load_config(mini_copy(tmp_path)), out=tmp_path / "dist")
    assert (tmp_path / "dist" / "graph.jsonld").is_file()


# ------------------------------------------------------------------ YAML never builds objects


@pytest.mark.parametrize(
    "payload",
    [
        "!!python/object/apply:os.system ['touch /tmp/kg-pwned']",
        "!!python/name:os.system",
        "!!binary aGVsbG8=",
        "!!set {a, b}",
        "!!timestamp 2024-01-01",
    ],
)
def test_yaml_tags_never_construct_objects(tmp_path, payload):
    path = write(tmp_path / "p.yaml", f"name: A\nbio: {payload}\n")
    with pytest.raises(InputError, match="is not allowed"):
        load_file(path, Profile, "p.yaml")


# ------------------------------------------------------------------ paths


@pytest.mark.parametrize("bad_id", ["../../escape", "/etc/passwd", "a/b", "..", "A B"])
def test_publication_ids_cannot_leave_the_output_directory(tmp_path, bad_id):
    path = write(
        tmp_path / "p.yaml",
        f"name: A\npublications:\n  - title: T\n    authors: [A]\n    id: {json.dumps(bad_id)}\n",
    )
    with pytest.raises(InputError, match="expected a key of lower-case letters"):
        load_file(path, Profile, "p.yaml")


def test_profile_slugs_come_from_safe_file_names(project):
    write(project / "data" / "profiles" / "..hidden.yaml", "name: X\n")
    with pytest.raises(InputError, match="is not a slug"):
        build(load_config(project), out=project / "dist")
    assert not (project / "dist").exists()


def assert_serdi_accepts(path) -> None:
    syntax = "ntriples" if path.suffix == ".nt" else "turtle"
    run = subprocess.run(
        ["serdi", "-i", syntax, "-o", "ntriples", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, (path, run.stderr[:500])
    assert run.stderr == "", (path, run.stderr[:500])


def test_strict_parser_accepts_every_rdf_output(private_project):
    """Debian's serdi (a strict, independent Turtle/N-Triples parser) reads our outputs."""
    _, out = private_project
    for path in [*out.rglob("*.ttl"), *out.rglob("*.nt")]:
        assert_serdi_accepts(path)


def test_repo_seed_outputs_parse_with_serdi(tmp_path):
    out = tmp_path / "dist"
    build(load_config(REPO), out=out)
    for path in [*out.rglob("*.ttl"), *out.rglob("*.nt")]:
        assert_serdi_accepts(path)
