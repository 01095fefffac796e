"""The fast paths give the same answers as the plain ones.

- validation in parts (kg/partition.py) == pySHACL on the whole graph, for every invalid
  input of test_validate.py and on a synthetic corpus, with one part per group (the
  strictest split) and with forked workers; the cache gives the same report and
  re-validates only the parts an edit touched;
- rendering with two forked workers == rendering in one process, byte for byte;
- the own writers give the same graph as rdflib's serializers (the naive baseline).
"""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import MINI
from rdflib import Graph
from test_validate import CASES, PREFIXES, B

from kg.bench.synth import generate
from kg.config import load_config
from kg.graph.triples import Triples
from kg.pipeline import build_graph
from kg.publish.render import render_outputs
from kg.validate import parts as partition
from kg.validate.shacl import validate, validate_in_parts


@pytest.fixture(scope="module")
def mini():
    config = load_config(MINI)
    return config, build_graph(config, cache=False)[1]  # the fixture folder is not written


@pytest.fixture
def one_group_per_part(monkeypatch):
    monkeypatch.setattr(partition, "NODES_PER_PART", 1)


@pytest.mark.parametrize("constraint", sorted(CASES))
def test_parts_report_what_the_whole_graph_reports(mini, one_group_per_part, constraint):
    config, mapped = mini
    graph = Graph()
    graph.addN((s, p, o, graph) for s, p, o in mapped.graph)
    graph.update(PREFIXES + re.sub(r"\bb:([\w/-]+)", rf"<{B}\1>", CASES[constraint]))
    whole = validate(graph, mapped.sources, config.shapes_dir, config.ontology_dir)
    parts = validate_in_parts(
        Triples(graph), mapped.sources, config.shapes_dir, config.ontology_dir, config.base_iri
    )
    assert whole.results, constraint
    assert parts.results == whole.results
    assert parts.conforms == whole.conforms
    assert len(set(parts.graph.subjects())) == len(parts.results) + 1


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    generate(root, 40, seed=5)
    return root


def test_parts_in_workers_match_the_whole_graph_and_the_cache_is_exact(
    corpus, tmp_path, one_group_per_part
):
    config = load_config(corpus)
    _, mapped = build_graph(config)
    whole = validate(mapped.graph, mapped.sources, config.shapes_dir, config.ontology_dir)
    assert whole.results  # the corpus has info results at least
    cache = tmp_path / "cache"
    runs = []

    def parts(triples, progress=None):
        return validate_in_parts(
            triples,
            mapped.sources,
            config.shapes_dir,
            config.ontology_dir,
            config.base_iri,
            jobs=2,
            cache_dir=cache,
            progress=progress,
        )

    first = parts(mapped.triples, lambda done, total: runs.append(total))
    assert first.results == whole.results
    total = runs[-1]
    assert total > 40
    runs.clear()
    assert parts(mapped.triples, lambda done, total: runs.append(total)).results == whole.results
    assert runs == []  # nothing validated again
    edited = Triples(t for t in mapped.triples if "person-000007/" not in str(t[0]))
    runs.clear()
    report = parts(edited, lambda done, total: runs.append(total))
    assert 0 < runs[-1] < total / 4
    assert (
        report.results
        == validate(
            edited.to_graph(), mapped.sources, config.shapes_dir, config.ontology_dir
        ).results
    )


def test_two_render_jobs_write_the_same_bytes_as_one(corpus):
    config = load_config(corpus)
    resolution, mapped = build_graph(config)
    one = render_outputs(config, resolution, mapped.triples, jobs=1)
    two = render_outputs(config, resolution, mapped.triples, jobs=2)
    assert list(sorted(one)) == list(sorted(two))
    assert one == two


def test_render_workers_write_their_files_and_return_only_stamps(corpus, tmp_path):
    """With a staging folder, two forked workers write every person's and thing's files
    themselves: the parent gets stamps (no text), and the files hold the bytes that
    rendering in one process gives."""
    from test_render_state import _hash_list

    from kg.publish.export import Written, content_digest
    from kg.publish.render import render_parts

    config = load_config(corpus)
    resolution, mapped = build_graph(config)
    expected = render_outputs(config, resolution, mapped.triples, jobs=1)
    parts = list(render_parts(config, resolution, mapped.triples, 2, staging=tmp_path))
    written = {rel: v for part in parts for rel, v in part.items() if isinstance(v, Written)}
    texts = {rel: v for part in parts for rel, v in part.items() if isinstance(v, str)}
    per_thing = ("people/", "site/person/", "site/publication/", "site/org/", "site/venue/")
    assert {rel for rel in expected if rel.startswith(per_thing)} <= set(written)
    assert sorted([*written, *texts]) == sorted(expected)
    assert not any(rel.startswith("people/") for rel in texts)
    for rel, stamp in written.items():
        data = (tmp_path / rel).read_bytes()
        assert data == expected[rel].encode(), rel
        # the N-Triples dump's digest is a hash list of its chunks' (decision 0061),
        # the Turtle and JSON-LD dumps' of their ranges' (decision 0079)
        if rel.endswith(("graph.ttl", "graph.jsonld")):
            assert stamp.stamp[0].startswith("ranges:"), rel
            continue
        want = _hash_list(data) if rel.endswith("graph.nt") else content_digest(data)
        assert stamp.stamp[0] == want, rel


@pytest.mark.parametrize("fmt", ["turtle", "nt", "json-ld"])
def test_own_writers_and_rdflib_serializers_give_the_same_graph(corpus, fmt):
    config = load_config(corpus)
    resolution, mapped = build_graph(config)
    files = render_outputs(config, resolution, mapped.triples, jobs=1)
    ours = files[{"turtle": "graph.ttl", "nt": "graph.nt", "json-ld": "graph.jsonld"}[fmt]]
    naive = mapped.graph.serialize(format=fmt)
    from rdflib.compare import isomorphic

    assert isomorphic(Graph().parse(data=ours, format=fmt), Graph().parse(data=naive, format=fmt))


def test_cache_directory_is_pruned_to_the_current_parts(corpus, tmp_path):
    project = tmp_path / "p"
    shutil.copytree(corpus, project)
    config = load_config(project)
    _, mapped = build_graph(config)
    cache = tmp_path / "c"
    args = (mapped.sources, config.shapes_dir, config.ontology_dir, config.base_iri)
    validate_in_parts(mapped.triples, *args, cache_dir=cache)
    before = {p.name for p in cache.rglob("*") if p.is_file()}
    smaller = Triples(t for t in mapped.triples if "person-000001/" not in str(t[0]))
    validate_in_parts(smaller, *args, cache_dir=cache)
    after = {p.name for p in cache.rglob("*") if p.is_file()}
    assert after != before and len(after) <= len(before)
