"""Incremental compiled validation (kg/validate/incremental.py, decision 0043) gives a
full run's findings, result by result, after random edits of every kind the data has:
titles, authors, affiliations, dates, removed and added subjects and triples, and the
injected violations of every constraint kind (tests/violations.py) split by subject.
The state is carried from edit to edit, as builds carry it. Plus kg/graph/delta.py."""

from __future__ import annotations

import random
import shutil
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_validate_compiled import compiled
from violations import inject

from kg.bench.synth import generate
from kg.cache import SignedCache
from kg.change import Change
from kg.config import load_config
from kg.graph import delta
from kg.graph.triples import Triples
from kg.pipeline import STATE_DIR, build
from kg.validate import engine, incremental
from kg.validate.compiler import compile_graph
from kg.validate.engine import ontology_triples, plain_triples
from kg.validate.shacl import shapes_graph
from kg.validate.terms import RDF_TYPE, Lit, nt, to_rdflib
from kg.validate.view import GraphView

SCHEMA = "http://schema.org/"
KG = "https://w3id.org/kg-profiles/vocab#"


@pytest.fixture(scope="module")
def world(tmp_path_factory, repo_config):
    root = tmp_path_factory.mktemp("incremental")
    generate(root, 10, seed=5)
    from kg.pipeline import build_graph

    base = list(plain_triples(build_graph(load_config(root), cache=False)[1].triples))
    shapes = shapes_graph(repo_config.shapes_dir, repo_config.ontology_dir)
    program = compile_graph(shapes)
    ontology = ontology_triples(repo_config.ontology_dir)
    broken, _ = inject(base, shapes, seed=4)
    QUERY_READS.update(program.predicates or ())
    return base, broken, program, ontology


def _graph(triples) -> Triples:
    return Triples((to_rdflib(s), to_rdflib(p), to_rdflib(o)) for s, p, o in triples)


def _injections(base, broken) -> list[tuple[list, list]]:
    """The injected violations, one edit per subject they touch."""
    old, new = set(base), set(broken)
    by_subject: dict = {}
    for t in old - new:
        by_subject.setdefault(t[0], ([], []))[0].append(t)
    for t in new - old:
        by_subject.setdefault(t[0], ([], []))[1].append(t)
    return [by_subject[s] for s in sorted(by_subject, key=str)]


def _edit(triples: list, kind: str, rng: random.Random, injections: list) -> list:
    """`triples` after one edit of `kind` (a new list)."""
    kept = dict.fromkeys(triples)
    subjects = sorted({t[0] for t in triples}, key=str)

    def pick(predicate: str) -> tuple | None:
        found = sorted((t for t in kept if t[1] == predicate), key=str)
        return rng.choice(found) if found else None

    def swap(predicate: str, make) -> None:
        t = pick(predicate)
        if t is not None:
            del kept[t]
            kept[(t[0], t[1], make(t))] = None

    iris = [o for o in {t[2] for t in triples} if isinstance(o, str)]
    iris.sort()
    if kind == "title":
        swap(SCHEMA + "name", lambda t: Lit(f"edited {rng.random()}", t[2].dt, t[2].lang))
    elif kind == "date":
        swap(SCHEMA + "datePublished", lambda t: Lit(str(rng.randint(1990, 2030)), t[2].dt))
    elif kind in ("author", "affiliation", "object"):
        predicate = {"author": SCHEMA + "author", "affiliation": SCHEMA + "worksFor"}.get(kind)
        t = pick(predicate) if predicate else rng.choice(sorted(kept, key=str))
        if t is not None:
            del kept[t]
            kept[(t[0], t[1], rng.choice(iris))] = None
    elif kind == "remove subject":
        gone = rng.choice(subjects)
        kept = {t: None for t in kept if t[0] != gone}
    elif kind == "add subject":  # a copy of another subject under a new IRI
        model = rng.choice(subjects)
        fresh = f"https://kg.example.org/added/{rng.randint(0, 10**9)}"
        kept.update(((fresh, p, o), None) for s, p, o in triples if s == model)
        if rng.random() < 0.5:  # and pointed at, like a new co-author
            kept[(rng.choice(subjects), KG + "advisor", fresh)] = None
    elif kind == "remove triple":
        del kept[rng.choice(sorted(kept, key=str))]
    elif kind == "query read":  # a triple a SPARQL query reads: dropped, moved or copied
        read = sorted({p for p, _ in QUERY_READS})
        t = pick(rng.choice(read))
        if t is not None:
            del kept[t]
            others = sorted({x for x in kept if x[1] == t[1]}, key=str) or [t]
            other = rng.choice(others)
            if rng.random() < 0.4:  # another subject's object
                kept[(t[0], t[1], other[2])] = None
            elif rng.random() < 0.7:  # said by another subject too
                kept[t] = None
                kept[(other[0], t[1], t[2])] = None
    elif kind == "retype":
        swap(RDF_TYPE, lambda t: rng.choice([SCHEMA + "Person", SCHEMA + "Organization"]))
    else:  # an injected violation
        remove, add = rng.choice(injections)
        for t in remove:
            kept.pop(t, None)
        kept.update(dict.fromkeys(add))
    return list(kept)


KINDS = [
    "title", "date", "author", "affiliation", "object", "remove subject", "add subject",
    "remove triple", "retype", "violation", "query read",
]  # fmt: skip
QUERY_READS: set[tuple[str, str | None]] = set()  # the predicates the shapes' queries read


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=st.lists(st.sampled_from(KINDS), min_size=1, max_size=4), seed=st.integers(0, 99))
def test_incremental_findings_equal_a_full_runs_after_random_edits(world, edits, seed):
    base, broken, program, ontology = world
    rng = random.Random(seed)
    injections = _injections(base, broken)
    triples = broken if rng.random() < 0.5 else base
    _, state = incremental.full(_graph(triples), program, ontology, front="t0")
    assert state is not None
    for step, kind in enumerate(edits, 1):
        old = triples
        triples = _edit(triples, kind, rng, injections)
        graph = _graph(triples)
        expected, _ = incremental.full(graph, program, ontology)
        change = _oracle(old, triples, rng, step) if rng.random() < 0.5 else None
        done = incremental.update(graph, program, ontology, state, change=change)
        if done is None:  # only a changed rdfs:subClassOf may ask for a full run here
            assert kind in ("object", "add subject")
            _, state = incremental.full(graph, program, ontology, front=f"t{step}")
            continue
        assert compiled(done[0]) == compiled(expected), kind
        state = done[1]._replace(front=f"t{step}")  # (as a build without a Change keeps it)


def _oracle(old: list, new: list, rng: random.Random, step: int) -> Change:
    """What the front end would say (kg/change.py): the subjects whose triples differ,
    from a full diff of the two graphs' digest tables, and some more (a superset)."""
    found = delta.changed(delta.subject_digests(_graph(old)), delta.subject_digests(_graph(new)))
    everyone = sorted({nt(t[0]) for t in new}, key=str)
    extra = rng.sample(everyone, min(3, len(everyone)))
    return Change(f"t{step - 1}", f"t{step}", subjects=frozenset({*found, *extra}))


def test_the_plan_bounds_the_repos_shapes(world):
    *_, program, _ = world
    plan = incremental.plan(program)
    assert plan is not None and plan.depth == 1  # a class test reads a value's types
    assert (SCHEMA + "agentInteractionStatistic") in plan.inverse
    assert {SCHEMA + "instructor", SCHEMA + "mainEntity"} <= plan.pointed
    # of a node not the focus the shapes read only its types (sh:class on values,
    # sh:or of classes for an authorship's author): decision 0058
    assert plan.deep == {(RDF_TYPE, None)}
    assert plan.sparql == {i for i, r in enumerate(program.roots) if r.name.endswith("noCycle")}


def test_delta_names_added_removed_and_changed_subjects():
    a, b, c = (f"https://x.example/{n}" for n in "abc")
    name = SCHEMA + "name"
    before = delta.subject_digests(_graph([(a, name, Lit("A", "x")), (b, name, Lit("B", "x"))]))
    after = delta.subject_digests(_graph([(a, name, Lit("A", "x")), (c, name, Lit("B", "x"))]))
    assert delta.changed(before, after) == {f"<{b}>", f"<{c}>"}
    same = delta.subject_digests(_graph([(b, name, Lit("B", "x")), (a, name, Lit("A", "x"))]))
    assert same == before and not delta.changed(before, same)


def test_a_tampered_or_foreign_state_is_a_miss(world, tmp_path):
    """The kept state is read only through the signed cache: a tampered entry, one
    signed with another secret, or a value that is not a state gives a full run."""
    base, _, program, ontology = world
    graph = _graph(base)
    expected, _ = incremental.full(graph, program, ontology)
    cache = SignedCache(tmp_path / "c", secret=b"k" * 32)
    key = "ab" * 32
    runs: list[str] = []

    def isolate(run):
        runs.append("full")
        return run()

    assert incremental.validate(graph, program, ontology, cache, key, isolate) == expected
    head = cache.get(key)  # a full run keeps a base and an empty head (decision 0077)
    assert isinstance(head, incremental.Head) and head.deltas == ()
    base = next((tmp_path / "c").rglob(incremental.base_key(key)))
    base.write_bytes(base.read_bytes()[:-3] + b"xyz")  # the base tampered with
    assert cache.get(head.base) is None and incremental.kept(cache, key) == (None, None)
    assert incremental.validate(graph, program, ontology, cache, key, isolate) == expected
    entry = next((tmp_path / "c").rglob("abab*"))
    entry.write_bytes(entry.read_bytes()[:-3] + b"xyz")
    assert cache.get(key) is None
    assert incremental.validate(graph, program, ontology, cache, key, isolate) == expected
    other = SignedCache(tmp_path / "c", secret=b"j" * 32)
    assert other.get(key) is None
    cache.put(key, ["not", "a", "state"])
    assert incremental.validate(graph, program, ontology, cache, key, isolate) == expected
    assert runs == ["full"] * 4
    # a usable state and an unchanged graph: no full run, the entry not rewritten
    written = entry.stat().st_mtime_ns, entry.stat().st_ino
    assert incremental.validate(graph, program, ontology, cache, key, isolate) == expected
    assert runs == ["full"] * 4
    assert (entry.stat().st_mtime_ns, entry.stat().st_ino) == written


def test_a_rebuild_after_an_edit_reports_what_a_cold_build_does(tmp_path):
    generate(tmp_path / "p", 12, seed=2)
    config = load_config(tmp_path / "p")
    build(config, out=tmp_path / "a", allow_violations=True, jobs=1)
    assert any((tmp_path / "p" / STATE_DIR).rglob("*"))  # the state is kept
    edited = 0
    for path in sorted((tmp_path / "p" / "data").rglob("*.yaml")):
        text = path.read_text()
        if "title:" in text and not edited:
            path.write_text(text.replace("title: ", "title: Edited ", 1))
            edited += 1
    assert edited
    again = build(config, out=tmp_path / "b", allow_violations=True, jobs=1)
    shutil.rmtree(tmp_path / "p" / STATE_DIR)
    cold = build(config, out=tmp_path / "c", allow_violations=True, jobs=1)
    assert again.report.results == cold.report.results


def _tables(state) -> tuple:
    return tuple(getattr(state, name) for name in incremental.TABLES)


def test_the_state_is_kept_as_a_base_and_its_changes(world, tmp_path):
    """Decisions 0055, 0077: after a full run (which keeps its state as a base), the runs
    that follow edits keep their changes (a head naming its base) instead of the whole
    state, the first one too; read back, the state is the
    one the run made, and every run's findings are a full run's. A head whose base was
    written again (another token), or with an ill-typed change, is a miss: a full run."""
    base, broken, program, ontology = world
    rng = random.Random(55)
    injections = _injections(base, broken)
    cache = SignedCache(tmp_path / "c", secret=b"k" * 32)
    key = "cd" * 32
    runs: list[str] = []

    def isolate(run):
        runs.append("full")
        return run()

    triples = broken
    incremental.validate(_graph(triples), program, ontology, cache, key, isolate)
    base_entry = tmp_path / "c" / incremental.base_key(key)[:2] / incremental.base_key(key)
    written = base_entry.stat().st_mtime_ns, base_entry.stat().st_ino
    for kind in ["title", "violation", "date", "author", "title", "remove triple"]:
        triples = _edit(triples, kind, rng, injections)
        graph = _graph(triples)
        expected, _ = incremental.full(graph, program, ontology)
        before, _ = incremental.kept(cache, key)
        assert before is not None
        made = incremental.update(graph, program, ontology, before)
        assert made is not None
        found = incremental.validate(graph, program, ontology, cache, key, isolate)
        assert compiled(found) == compiled(expected), kind
        state, head = incremental.kept(cache, key)
        assert state is not None and _tables(state) == _tables(made[1]), kind
    assert runs == ["full"]
    assert head is not None and len(head.deltas) >= 5  # changes, not whole states
    # the full run's state is the base the first edit's changes go on (decision 0077)
    assert (base_entry.stat().st_mtime_ns, base_entry.stat().st_ino) == written
    # the base written again with another token: the head's changes are not applied
    token, whole = cache.get(head.base)
    cache.put(head.base, (b"another token", whole))
    assert incremental.kept(cache, key) == (None, None)
    assert compiled(incremental.validate(graph, program, ontology, cache, key, isolate)) == (
        compiled(expected)
    )
    assert runs == ["full", "full"]
    cache.put(key, incremental.Head(head.base, token, ("not a change",)))
    cache.put(head.base, (token, whole))
    assert incremental.kept(cache, key) == (None, None)


def test_a_title_edit_asks_the_queries_near_it_without_a_whole_graph_store(world, monkeypatch):
    """Decision 0058: every repo query but the cycle one has a `Reach`, so a title edit
    (no parentOrganization read changes) asks them on a neighbourhood store only."""
    base, _, program, ontology = world
    _, state = incremental.full(_graph(base), program, ontology)
    assert state is not None
    edited = _edit(base, "title", random.Random(3), [])
    expected, _ = incremental.full(_graph(edited), program, ontology)

    def whole(*_):
        raise AssertionError("a store of the whole graph was made")

    monkeypatch.setattr(GraphView, "_lines", whole)
    done = incremental.update(_graph(edited), program, ontology, state)
    assert done is not None and compiled(done[0]) == compiled(expected)
    assert done[1].rows.keys() == state.rows.keys()


def test_the_fronts_change_is_used_only_from_the_states_own_front_end_state(world, monkeypatch):
    """A Change whose `before` is the token the state was kept with names the changed
    subjects (the digest tables are not compared); any other Change is not believed."""
    base, broken, program, ontology = world
    edited = _edit(broken, "title", random.Random(5), [])  # violations, and a title
    graph = _graph(edited)
    expected, _ = incremental.full(graph, program, ontology)
    _, state = incremental.full(_graph(base), program, ontology, front="before")
    assert state is not None and state.front == "before"
    nothing = frozenset[str]()
    lie = Change("x", "y", subjects=nothing)  # not from this state: not believed
    stale = incremental.update(graph, program, ontology, state, change=lie)
    assert stale is not None and compiled(stale[0]) == compiled(expected)  # diffed instead
    before = [f for out in state.findings.values() for f in out]
    assert compiled(stale[0]) != compiled(before)  # (the edit changes the findings)
    assert stale[1].front == "y"
    told = replace(_oracle(base, edited, random.Random(1), 1), before="before", after="after")

    def no_diff(*_):
        raise AssertionError("the digest tables were compared")

    monkeypatch.setattr(incremental, "changed", no_diff)
    done = incremental.update(graph, program, ontology, state, change=told)
    assert done is not None and compiled(done[0]) == compiled(expected)
    assert done[1].front == "after"


def test_the_roots_a_node_is_a_focus_of_are_the_ones_a_full_run_lists(world):
    """`_Targets` (a node's roots from its types and predicates) against
    `_Run.focus_nodes`, for every node of the corpus with every injected violation."""
    _, broken, program, ontology = world
    run = engine._Run(program, engine.triples_data(_graph(broken), program, ontology))
    active = [i for i, root in enumerate(program.roots) if not root.deactivated]
    targets = incremental._Targets(run, active)
    expected: dict = {}
    for i in active:
        for node in run.focus_nodes(program.roots[i]):
            expected.setdefault(node, set()).add(i)
    nodes = {t[0] for t in broken} | {t[2] for t in broken}
    assert len(expected) > 100
    for node in nodes:
        assert targets.of(node) == expected.get(node, set()), node
