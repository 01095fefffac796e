"""The two parameterised queries that were slow at 10k (decision 0033).

shared-coauthors reads the store's co-author index (kg.query.coauthors) on kg's store:
the index holds exactly the pairs of different IRIs that author a common subject, after a
full write and after a patch, and the answer equals the plain query's (and rdflib's) for
every pair of the seeds and of a synthetic corpus, including pairs with no answer.

ranked-venue-papers is answered ahead by `kg build` for every ranking list and rank of
the graph (`#+ precompute:`, kg.query.answers): byte-identical to running it; any other
value runs the query.
"""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
from conftest import REPO, write
from rdflib import Graph, URIRef

from kg.bench.synth import generate
from kg.config import load_config
from kg.pipeline import build_graph
from kg.publish.fingerprint import SubjectChunks
from kg.query.answers import PrecomputedAnswer, precomputable, write_answers
from kg.query.coauthors import COAUTHOR, COAUTHORS
from kg.query.lookup import load_all_queries
from kg.query.patch import patch_store
from kg.query.persist import write_store
from kg.query.results import FORMATS, render
from kg.query.store import QueryStore
from kg.query.stored import parse_query, run_embedded, run_rdflib, store_form, with_kg_prefixes

QUERIES = {
    name: with_kg_prefixes(q) for name, q in load_all_queries(REPO / "queries", None).items()
}
SHARED = QUERIES["shared-coauthors"]
RANKED = QUERIES["ranked-venue-papers"]
AUTHOR = URIRef("http://schema.org/author")  # kg writes schema.org as http
KG = "https://w3id.org/kg-profiles/vocab#"


def _store(mapped, folder: Path, base: str) -> tuple[Path, Path]:
    """kg's sorted graph.nt of a mapped graph and the store written from it."""
    folder.mkdir(parents=True, exist_ok=True)
    graph_nt = folder / "graph.nt"
    graph_nt.write_text(SubjectChunks(mapped.triples).ntriples(), encoding="utf-8")
    assert write_store(graph_nt, folder / "store", base)
    return graph_nt, folder / "store"


@pytest.fixture(scope="module")
def seeds(seed_build, repo_config, tmp_path_factory):
    graph_nt, store = _store(seed_build[1], tmp_path_factory.mktemp("seeds"), repo_config.base_iri)
    return seed_build[1].graph, graph_nt, store, repo_config.base_iri


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """A 30-person synthetic corpus (homonyms, hubs), its graph and store."""
    root = tmp_path_factory.mktemp("synthetic")
    generate(root, 30, seed=3)
    config = load_config(root)
    mapped = build_graph(config)[1]
    _, store = _store(mapped, root / "q", config.base_iri)
    return mapped.graph, store


def index_of(store: Path) -> set[tuple[str, str]]:
    found = ox.Store.read_only(str(store)).quads_for_pattern(
        None, None, None, ox.NamedNode(COAUTHORS)
    )
    pairs = set()
    for q in found:
        assert q.predicate == ox.NamedNode(COAUTHOR)
        pairs.add((q.subject.value, q.object.value))
    return pairs


def coauthor_pairs(graph: Graph) -> set[tuple[str, str]]:
    """The index by its definition, from the graph's triples."""
    authors: dict = {}
    for s, o in graph.subject_objects(AUTHOR):
        if isinstance(o, URIRef):
            authors.setdefault(s, set()).add(str(o))
    return {(x, y) for group in authors.values() for x in group for y in group if x != y}


def test_the_index_holds_exactly_the_pairs_that_share_a_subject(seeds, synthetic):
    for graph, store in ((seeds[0], seeds[2]), synthetic):
        expected = coauthor_pairs(graph)
        assert len(expected) > 20
        assert index_of(store) == expected


def _persons(graph: Graph) -> list[str]:
    return sorted({str(o) for o in graph.objects(None, AUTHOR) if isinstance(o, URIRef)})


def _pairs(graph: Graph) -> list[tuple[str, str]]:
    """Every author with each co-author, with itself, with a non-co-author, and with an
    IRI that is nobody (answers that are empty)."""
    persons = _persons(graph)
    pairs = []
    for a in persons[:: max(1, len(persons) // 12)]:
        coauthors = sorted(
            {str(o) for s in graph.subjects(AUTHOR, URIRef(a)) for o in graph.objects(s, AUTHOR)}
            - {a}
        )
        strangers = [p for p in persons if p != a and p not in coauthors]
        pairs += [(a, b) for b in coauthors[:3]] + [(a, a), (a, "https://nobody.example/x")]
        pairs += [(a, b) for b in strangers[:1]]
    return pairs


def test_shared_coauthors_on_the_index_answers_like_the_plain_query(seeds, synthetic):
    for graph, path in ((seeds[0], seeds[2]), synthetic):
        oxigraph = ox.Store.read_only(str(path))
        indexed, plain = QueryStore(oxigraph, owner_index=True), QueryStore(oxigraph)
        defaults = SHARED.bindings({})
        assert store_form(indexed, SHARED, defaults) and store_form(plain, SHARED, defaults) is None
        empty = full = 0
        texts = set()
        for a, b in _pairs(graph):
            for values in ({"a": a, "b": b}, {"a": b, "b": a}):  # either may have fewer
                answer = run_embedded(indexed, SHARED, values)
                assert answer.rows == run_embedded(plain, SHARED, values).rows, values
                empty, full = empty + (not answer.rows), full + bool(answer.rows)
                texts.add(store_form(indexed, SHARED, SHARED.bindings(values)))
        assert len(texts) == 2  # both orders of the two patterns were run
        assert empty >= 10 and full >= 10


def test_coauthor_network_on_the_index_answers_like_the_plain_query(seeds, synthetic):
    """Decision 0042: the same graph from the index as from grouping every paper's
    authors, on the seeds and the synthetic corpus; the plain text where no index is."""
    network = QUERIES["coauthor-network"]
    for path in (seeds[2], synthetic[1]):
        oxigraph = ox.Store.read_only(str(path))
        indexed, plain = QueryStore(oxigraph, owner_index=True), QueryStore(oxigraph)
        assert store_form(indexed, network, {}) is not None
        assert store_form(plain, network, {}) is None
        fast = run_embedded(indexed, network, precomputed=False)
        slow = run_embedded(plain, network, precomputed=False)
        assert fast.graph is not None and len(fast.graph) > 100
        assert render(fast, "ttl") == render(slow, "ttl")
        assert render(fast, "json") == render(slow, "json")


def test_shared_coauthors_on_the_index_answers_like_rdflib(seeds):
    graph, _, path, _ = seeds
    indexed = QueryStore(ox.Store.read_only(str(path)), owner_index=True)
    for a, b in _pairs(graph)[::4]:
        values = {"a": a, "b": b}
        reference = run_rdflib(graph, SHARED, values)
        assert set(run_embedded(indexed, SHARED, values).rows) == set(reference.rows), values


def test_a_project_text_of_the_same_name_runs_as_written(seeds):
    store = QueryStore(ox.Store.read_only(str(seeds[2])), owner_index=True)
    own = parse_query(
        SHARED.text.replace("ORDER BY ?name ?coauthor", "ORDER BY ?coauthor"), "shared-coauthors"
    )
    defaults = SHARED.bindings({})
    assert store_form(store, SHARED, defaults) is not None
    assert store_form(store, own, defaults) is None
    assert store_form(store, parse_query(SHARED.text, "people"), defaults) is None
    network = QUERIES["coauthor-network"]
    changed = parse_query(network.text.replace("?a != ?b", "?b != ?a"), "coauthor-network")
    assert store_form(store, network, {}) is not None
    assert store_form(store, changed, {}) is None


def _patch(before_nt: Path, after_text: str, folder: Path, base: str) -> set:
    """The index of the store of `before_nt` patched to `after_text`, which must equal
    the index of a store written from `after_text`."""
    folder.mkdir(parents=True, exist_ok=True)
    assert write_store(before_nt, folder / "before", base)
    after = folder / "after.nt"
    after.write_text(after_text, encoding="utf-8")
    assert patch_store(folder / "before", before_nt, after, folder / "patched", base)
    assert write_store(after, folder / "loaded", base)
    patched = index_of(folder / "patched")
    assert patched == index_of(folder / "loaded")
    return patched


def test_an_author_added_then_removed_patches_the_index(seeds, tmp_path):
    """A new co-author of one paper gains pairs with its authors; removed again, the
    pairs go (that paper was their only shared subject); a renamed paper (a new IRI, as
    after a title edit) keeps every pair."""
    _, graph_nt, store, base = seeds
    lines = graph_nt.read_text(encoding="utf-8").splitlines(keepends=True)
    author = f" <{AUTHOR}> <"
    subject = min(x.split(" ", 1)[0] for x in lines if author in x)
    authors = {x.split(" ")[2][1:-1] for x in lines if x.startswith(subject + author)}
    stranger = "https://kg.example.org/person/a-new-co-author"
    more = "".join(sorted([*lines, f"{subject}{author}{stranger}> .\n"]))
    gained = _patch(graph_nt, more, tmp_path / "gain", base)
    assert {(stranger, y) for y in authors} | {(y, stranger) for y in authors} <= gained
    (tmp_path / "more.nt").write_text(more, encoding="utf-8")
    lost = _patch(tmp_path / "more.nt", "".join(lines), tmp_path / "lose", base)
    assert lost == index_of(store) and not any(stranger in pair for pair in lost)
    new = subject[:-1] + "-renamed>"
    renamed = [new + x[len(subject) :] if x.startswith(subject + " ") else x for x in lines]
    assert _patch(graph_nt, "".join(sorted(renamed)), tmp_path / "rename", base) == lost


# ------------------------------------------------------------------ ranked-venue-papers


def _ranks(graph: Graph) -> list[tuple[str, str]]:
    kg = "https://w3id.org/kg-profiles/vocab#"
    return sorted(
        {
            (
                str(graph.value(r, URIRef(kg + "rankingList"))),
                str(graph.value(r, URIRef(kg + "rankValue"))),
            )
            for r in graph.subjects(URIRef(kg + "rankingList"), None)
        }
    )


@pytest.mark.parametrize("corpus", ["seeds", "synthetic"])
def test_ranked_venue_papers_is_answered_ahead_for_every_list_and_rank(
    corpus, seeds, synthetic, tmp_path
):
    from kg.query.answers import Answers

    graph, path = (seeds[0], seeds[2]) if corpus == "seeds" else synthetic
    base = seeds[3] if corpus == "seeds" else "https://bench.example.org/"
    ranks = _ranks(graph)
    assert ("CCF", "A") in ranks and len(ranks) >= 2
    store = QueryStore(ox.Store.read_only(str(path)), owner_index=True)
    entries = write_answers(store, [RANKED], tmp_path / "answers", base)
    known = Answers(tmp_path / "answers", entries)
    ahead = QueryStore(store.oxigraph, owner_index=True, answers=known)
    each = [{"list": x, "rank": r} for x, r in ranks]
    for values in [{}, *each, {"rank": "Z"}, {"list": "none"}]:
        found = run_embedded(ahead, RANKED, values)
        live = run_embedded(store, RANKED, values)
        assert not isinstance(live, PrecomputedAnswer)
        answered = values == {} or ("Z" not in values.values() and "none" not in values.values())
        assert isinstance(found, PrecomputedAnswer) == answered, values
        assert bool(live.rows) == answered, values
        for fmt in FORMATS:
            assert render(found, fmt, base) == render(live, fmt, base), (values, fmt)
    reference = run_rdflib(graph, RANKED, {"rank": ranks[-1][1]})
    assert run_embedded(ahead, RANKED, {"rank": ranks[-1][1]}).rows == reference.rows


def test_a_projects_precompute_is_bounded_and_must_be_a_select(tmp_path):
    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    write(root / "kg.toml", 'base_iri = "https://example.org/"\n')
    head = "#+ defaults:\n#+   - n: x\n"
    write(
        root / "queries" / "many.rq",
        head
        + "#+ precompute: SELECT ?n WHERE { VALUES ?n { "
        + " ".join(f'"{i}"' for i in range(40))
        + " } }\nSELECT ?x WHERE { BIND (?_n AS ?x) }\n",
    )
    write(
        root / "queries" / "ask.rq",
        head + "#+ precompute: ASK { }\nSELECT ?x WHERE { BIND (?_n AS ?x) }\n",
    )
    config = load_config(root)
    queries = {q.name: q for q in precomputable(config)}
    assert {"many", "ask"} <= set(queries)
    store = QueryStore(ox.Store(), owner_index=True)
    entries = write_answers(
        store, [queries["many"], queries["ask"]], tmp_path / "a", "https://example.org/"
    )
    sizes = sorted(len(e["bound"]) for e in entries.values())
    assert sizes == [0, 16]  # ASK gives no values; at most MOST_BOUND rows of values


def test_random_author_edits_patch_the_index_as_a_full_write_does(seeds, tmp_path):
    """Several author lines removed and added at once, between random subjects and
    people (seeded): the patched index equals a fully written one."""
    import random

    _, graph_nt, _, base = seeds
    lines = graph_nt.read_text(encoding="utf-8").splitlines(keepends=True)
    author = f" <{AUTHOR}> <"
    authored = [x for x in lines if author in x]
    rnd = random.Random(24)
    gone = set(rnd.sample(authored, 12))
    subjects = sorted({x.split(" ", 1)[0] for x in authored})
    people = sorted({x.split(" ")[2] for x in authored})
    new = {f"{rnd.choice(subjects)}{author}{rnd.choice(people)[1:]} .\n" for _ in range(12)}
    after = sorted({*lines, *new} - gone)
    patched = _patch(graph_nt, "".join(after), tmp_path, base)
    assert patched != index_of(seeds[2])
