"""kg.publish.export and kg build: formats agree, per-person subsets, determinism, atomic output."""

from __future__ import annotations

import json

import pytest
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.compare import graph_diff, isomorphic, to_isomorphic

from kg.cache import digest
from kg.config import load_config
from kg.errors import ProjectError
from kg.graph.namespaces import FOAF, KG, RDF, SCHEMA, VOID, XSD
from kg.graph.triples import Triples
from kg.pipeline import build
from kg.publish.export import (
    SERIALIZERS,
    NodeBlocks,
    _json_values,
    _JsonTerms,
    _node_json,
    _node_object,
    _turtle_block,
    _TurtleTerms,
    graph_prefixes,
    owned_nodes,
    person_subset,
    previous_tree,
    to_jsonld,
    to_jsonld_document,
    to_turtle,
    write_outputs,
)
from kg.publish.jsontext import dumps

FORMATS = {"ttl": "turtle", "jsonld": "json-ld", "nt": "nt"}


def parse(text: str, fmt: str) -> Graph:
    return Graph().parse(data=text, format=FORMATS[fmt])


def assert_same_graph(expected: Graph, actual: Graph) -> None:
    if isomorphic(expected, actual):
        return
    _, only_expected, only_actual = graph_diff(to_isomorphic(expected), to_isomorphic(actual))
    missing = sorted(only_expected.serialize(format="nt").splitlines())[:20]
    extra = sorted(only_actual.serialize(format="nt").splitlines())[:20]
    pytest.fail("graphs differ\nmissing:\n" + "\n".join(missing) + "\nextra:\n" + "\n".join(extra))


@pytest.mark.parametrize("fmt", sorted(SERIALIZERS))
@pytest.mark.parametrize("which", ["mini_build", "seed_build"])
def test_every_format_parses_back_to_the_same_graph(request, which, fmt):
    graph = request.getfixturevalue(which)[1].graph
    text = SERIALIZERS[fmt][1](graph)
    assert_same_graph(graph, parse(text, fmt))


def test_jsonld_uses_schema_vocab_and_never_fetches(mini_build):
    doc = json.loads(to_jsonld(mini_build[1].graph))
    assert doc["@context"]["@vocab"] == "http://schema.org/"
    person = next(n for n in doc["@graph"] if n["@id"].endswith("/person/a-b"))
    assert person["@type"] == ["Person", "foaf:Person"]
    assert person["name"] == "Ann Bee"


@pytest.mark.parametrize("which", ["mini_build", "seed_build"])
def test_jsonld_text_is_the_document_as_indented_json(request, which):
    graph = request.getfixturevalue(which)[1].triples
    expected = json.dumps(to_jsonld_document(graph), ensure_ascii=False, indent=2) + "\n"
    assert to_jsonld(graph) == expected
    assert to_jsonld(graph.to_graph()) == expected


def test_whole_nodes_from_the_block_table_give_the_same_files(seed_build):
    """The people's and the things' files take the nodes they hold whole from the block
    table and format the rest with one table of each format's term texts: the same files
    as without either."""
    from kg.formats import RDF_FORMATS
    from kg.publish.blocks import table_of
    from kg.publish.export import described, serialize

    resolution, mapped = seed_build
    graph = mapped.triples
    base = "https://kg.example.org/"
    people = [URIRef(f"{base}person/{p.slug}") for p in resolution.dataset.profiles]
    owned = owned_nodes(graph, people)
    blocks = NodeBlocks(graph, table_of(graph, size=50))
    blocks.collision_free, blocks.nt_terms = True, {}
    papers = sorted(s for s in graph.subjects() if "/publication/" in str(s))[:20]
    subsets = [person_subset(graph, p, owned[p]) for p in people]
    subsets += [described(graph, {paper}) for paper in papers]
    for subset in subsets:
        for fmt in RDF_FORMATS:
            assert serialize(fmt.ext, subset, blocks) == serialize(fmt.ext, subset), fmt.ext
    paper = URIRef(f"{base}publication/elasticflow-an-elastic-serverless-training-platform-for")
    assert blocks.nt_terms[paper] == f"<{paper}>"  # N-Triples texts of terms, kept
    assert papers[0] in blocks.turtle_terms.memo


def test_a_person_file_links_the_works_by_iri(seed_build):
    """data/profiles/yihao-zhao.yaml lists "ElasticFlow: ..." (ASPLOS 2023) with Yihao Zhao
    second of ten authors, Yinmin Zhong third: Yihao's file names the paper and says
    who made it, and leaves the paper's date and the other authorships to its own files."""
    from rdflib import Literal

    from kg.graph.namespaces import FOAF, KG, SCHEMA

    graph = seed_build[1].triples
    base = "https://kg.example.org/"
    yihao, yinmin = URIRef(f"{base}person/yihao-zhao"), URIRef(f"{base}person/yinmin-zhong")
    paper = URIRef(f"{base}publication/elasticflow-an-elastic-serverless-training-platform-for")
    title = "ElasticFlow: An Elastic Serverless Training Platform for Distributed Deep Learning"
    own = owned_nodes(graph, [yihao])[yihao]
    subset = set(person_subset(graph, yihao, own))
    assert (yihao, FOAF.made, paper) in subset
    assert (paper, SCHEMA.name, Literal(title)) in subset
    assert (paper, SCHEMA.author, yihao) in subset
    assert (URIRef(f"{paper}/author/2"), KG.author, yihao) in subset
    assert not any(s == paper and p == SCHEMA.datePublished for s, p, _ in subset)
    assert (URIRef(f"{paper}/author/3"), KG.author, yinmin) not in subset
    assert (paper, SCHEMA.author, yinmin) not in subset


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("build") / "dist"
    config = load_config(REPO)
    result = build(config, out=out)
    return config, result, out


def test_build_writes_every_export(built):
    _, result, out = built
    for name in ("graph.ttl", "graph.jsonld", "graph.nt", "void.ttl", "context.jsonld"):
        assert (out / name).is_file(), name
    people = sorted(p.name for p in (out / "people").iterdir())
    assert len(people) == 3 * len(result.resolution.dataset.profiles)  # .ttl .jsonld .bib


def test_per_person_files_are_subsets_of_the_whole(built):
    config, result, out = built
    whole = Graph().parse(out / "graph.nt", format="nt")
    for profile in result.resolution.dataset.profiles:
        for fmt in ("ttl", "jsonld"):
            path = out / "people" / f"{profile.slug}.{fmt}"
            part = parse(path.read_text(encoding="utf-8"), fmt)
            assert len(part) > 20
            assert not set(part) - set(whole), path
            person = URIRef(f"{config.base_iri}person/{profile.slug}")
            assert (person, None, None) in part


def test_site_downloads_are_hard_links_to_the_per_person_files(built):
    _, result, out = built
    for profile in result.resolution.dataset.profiles:
        for fmt, folder in (("ttl", "person"), ("jsonld", "person"), ("bib", "bib")):
            person_file = out / "people" / f"{profile.slug}.{fmt}"
            download = out / "site" / folder / f"{profile.slug}.{fmt}"
            assert download.read_bytes() == person_file.read_bytes()
            assert download.stat().st_ino == person_file.stat().st_ino, download
        page = out / "site" / "person" / f"{profile.slug}.html"
        assert page.stat().st_ino == (out / "site" / "profile" / page.name).stat().st_ino
    for fmt in ("ttl", "jsonld", "nt"):
        dump = out / "site" / f"graph.{fmt}"
        assert dump.stat().st_ino == (out / f"graph.{fmt}").stat().st_ino
    assert (out / "site" / "void.ttl").read_bytes() == (out / "void.ttl").read_bytes()


def test_equal_texts_from_different_strings_are_separate_files(tmp_path):
    out = tmp_path / "dist"
    text = "same\n"
    write_outputs(out, {"a.ttl": text, "b.ttl": "".join(["sa", "me\n"]), "c.ttl": text})
    assert (out / "a.ttl").stat().st_ino == (out / "c.ttl").stat().st_ino
    assert (out / "b.ttl").stat().st_ino != (out / "a.ttl").stat().st_ino
    assert {p.read_text() for p in out.glob("*.ttl")} == {"same\n"}


def test_the_previous_tree_the_caller_read_is_not_read_again_while_it_is_shown(tmp_path):
    out, manifest = tmp_path / "dist", tmp_path / "outputs" / digest("dist")
    write_outputs(out, {"a.ttl": "a\n", "b.ttl": "b\n"}, manifest)
    known = previous_tree(out, manifest)
    assert known is not None and known[0] == out.resolve()
    kept = (out / "a.ttl").stat().st_ino
    for entry in manifest.parent.rglob("*"):  # only `known` says what the tree holds now
        if entry.is_file():
            entry.unlink()
    write_outputs(out, {"a.ttl": "a\n", "b.ttl": "B\n"}, manifest, known=known)
    assert (out / "a.ttl").stat().st_ino == kept  # linked by `known`'s stamps
    assert (out / "b.ttl").read_text() == "B\n"
    shown = previous_tree(out, manifest)
    assert shown is not None and shown[0] != known[0]
    write_outputs(out, {"a.ttl": "a\n", "b.ttl": "B\n"}, manifest, known=known)  # stale
    assert {p.name: p.read_text() for p in out.glob("*.ttl")} == {"a.ttl": "a\n", "b.ttl": "B\n"}


def test_void_description_counts_the_graph(built):
    config, result, out = built
    void = Graph().parse(out / "void.ttl")
    dataset = URIRef(config.base_iri + "dataset")
    assert int(void.value(dataset, VOID.triples)) == result.triples
    assert len(list(void.objects(dataset, VOID.dataDump))) == 3
    assert len(list(void.objects(dataset, VOID.classPartition))) > 10


def test_rebuild_is_byte_identical(built, tmp_path):
    config, _, first = built
    second = tmp_path / "again"
    build(config, out=second)
    names = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_failed_write_leaves_previous_output_intact(tmp_path):
    out = tmp_path / "dist"
    write_outputs(out, {"graph.ttl": "old\n"})
    with pytest.raises(ProjectError):
        write_outputs(out, {"graph.ttl": "new\n", "../escape.ttl": "x"})
    assert (out / "graph.ttl").read_text() == "old\n"
    assert not (tmp_path / "escape.ttl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dist.versions", "dist"]
    assert len(list((tmp_path / ".dist.versions").glob("v-*"))) == 1  # no half-written version


def test_refuses_to_replace_a_directory_it_did_not_write(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    with pytest.raises(ProjectError, match="refusing to replace"):
        write_outputs(out, {"graph.ttl": "x"})
    assert (out / "thesis.tex").read_text() == "precious"


def test_an_iri_spelled_like_a_prefix_keeps_json_ld_files_exact_with_shared_blocks():
    """An IRI `kg:x` in the data: the per-file writer, told by the renderer whether the
    whole graph has such an IRI (`colliding_prefixes` over its terms), drops the prefix
    from the files that hold it and reads back as the same graph."""
    from rdflib import Literal

    from kg.graph.namespaces import SCHEMA
    from kg.graph.triples import Triples
    from kg.publish.export import colliding_prefixes, described

    person = URIRef("https://example.org/person/a")
    other = URIRef("https://example.org/person/b")
    whole = Triples(
        [
            (person, SCHEMA.name, Literal("A")),
            (person, SCHEMA.sameAs, URIRef("kg:not-a-compact-iri")),
            (other, SCHEMA.name, Literal("B")),
            (other, SCHEMA.knows, person),
        ]
    )
    assert colliding_prefixes(t for triple in whole for t in triple) == {"kg"}
    from kg.publish.blocks import table_of

    blocks = NodeBlocks(whole, table_of(whole))
    blocks.collision_free = not colliding_prefixes(t for triple in whole for t in triple)
    for node in (person, other):
        subset = described(whole, {node})
        text = to_jsonld(subset, blocks)
        assert text == to_jsonld(subset)  # the table's blocks are in another context
        assert_same_graph(parse(to_turtle(subset), "ttl"), parse(text, "jsonld"))
    assert '"kg"' not in to_jsonld(described(whole, {person}), blocks)


@pytest.mark.parametrize("which", ["mini_build", "seed_build"])
def test_dumps_joined_from_the_block_table_are_the_writers_texts(request, which):
    """The dumps a build joins from the block table's ranges (a header, the ranges'
    bytes) are the texts `to_turtle` and `to_jsonld` make at once."""
    from kg.publish.blocks import dump_text, table_of
    from kg.publish.export import colliding_prefixes

    graph = request.getfixturevalue(which)[1].triples
    unusable = colliding_prefixes(t for triple in graph for t in triple)
    for size in (7, 100_000):  # many ranges, one
        table = table_of(graph, size=size)
        for fmt in ("ttl", "jsonld"):
            assert dump_text(table, fmt, graph, unusable) == SERIALIZERS[fmt][1](graph)


def test_turtle_dump_names_rdf_only_when_rdf_type_is_a_node():
    from rdflib import Literal

    from kg.graph.namespaces import RDF, SCHEMA
    from kg.graph.triples import Triples
    from kg.publish.blocks import dump_text, table_of

    s = URIRef("https://example.org/a")
    plain = Triples([(s, RDF.type, SCHEMA.Thing), (s, SCHEMA.name, Literal("A"))])
    pointing = Triples([*plain, (s, SCHEMA.about, RDF.type)])
    for graph, named in ((plain, False), (pointing, True)):
        text = dump_text(table_of(graph), "ttl", graph, ())
        assert text == to_turtle(graph)
        assert ("@prefix rdf:" in text) is named
    empty = Triples()
    for fmt in ("ttl", "jsonld"):
        assert dump_text(table_of(empty), fmt, empty, ()) == SERIALIZERS[fmt][1](empty)


# --------------------------------------------------------------------------- node texts (0073)

_NODES = [URIRef("https://e.org/a"), URIRef("https://e.org/a/1"), BNode("n1")]
_OBJECTS = [
    *_NODES,
    URIRef("kg:looks-compact"),
    SCHEMA.Person,
    FOAF.Person,
    SCHEMA.Organization,
    Literal("A"),
    Literal('ä "q"\nline'),
    Literal("B", lang="en"),
    Literal("7", datatype=XSD.integer),
    Literal("true", datatype=XSD.boolean),
    Literal("x", datatype=XSD.string),
    Literal("right\u202eto left"),
]
_PREDICATES = [RDF.type, SCHEMA.name, SCHEMA.url, FOAF.made, KG.author, URIRef("name")]
_DESCRIBED = st.dictionaries(
    st.sampled_from(_PREDICATES), st.sets(st.sampled_from(_OBJECTS), min_size=1, max_size=3)
)
_SHARED = _JsonTerms()  # kept across examples, as a render worker keeps its memos


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(_NODES), _DESCRIBED, st.booleans())
def test_node_texts_are_the_plain_writers(s, described, shared):
    """A node's JSON-LD text made of kept pieces (a predicate's key and member head, a
    set of classes' member, an IRI's text) is the node object written out by `dumps`,
    with fresh memos or memos kept across nodes; its Turtle block is the plain one
    (every line formatted, predicates by their text): classes given in any order, a
    literal "type", a relative IRI `name` whose key is the one `schema:name` has."""
    predicates = {p: list(objects) for p, objects in described.items()}
    terms = _SHARED if shared else _JsonTerms()
    expected = dumps(_node_object(s, _json_values(predicates, _JsonTerms())), depth=2)
    assert _node_json(s, predicates, terms) == expected
    for order in (predicates, {p: objects[::-1] for p, objects in predicates.items()}):
        term = _TurtleTerms(graph_prefixes(Triples()))
        assert _turtle_block(s, order, term) == _plain_turtle(s, predicates)


def _plain_turtle(s, predicates) -> str:
    """`_turtle_block` as first written: each line formatted, the classes first."""
    term = _TurtleTerms(graph_prefixes(Triples()))
    lines = []
    types = predicates.get(RDF.type)
    if types:
        lines.append("a " + ", ".join(term(o) for o in sorted(types)))
    for p in sorted(predicates, key=str):
        if p != RDF.type:
            lines.append(term(p) + " " + ", ".join(term(o) for o in sorted(predicates[p])))
    return f"{term(s)} " + " ;\n    ".join(lines) + " .\n"


def test_kept_classes_are_bounded(monkeypatch):
    """The sets of classes a process keeps the texts of are at most `TYPES_KEPT`; the
    texts made after the memo starts again are the same."""
    from kg.publish import export

    monkeypatch.setattr(export, "TYPES_KEPT", 4)
    terms, term = _JsonTerms(), _TurtleTerms(graph_prefixes(Triples()))
    s = URIRef("https://e.org/a")
    for round_ in range(2):
        for i in range(10):
            classes = {RDF.type: [SCHEMA.Person, URIRef(f"https://e.org/C{i}")]}
            expected = dumps(_node_object(s, _json_values(classes, _JsonTerms())), depth=2)
            assert _node_json(s, classes, terms) == expected
            assert _turtle_block(s, classes, term) == _plain_turtle(s, classes)
            assert len(terms.types) <= 4 and len(term.types) <= 4, round_
