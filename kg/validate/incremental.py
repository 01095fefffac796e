"""Compiled validation in proportion to the change (decisions 0043, 0058).

A full run keeps its findings by (root shape, focus node) with the graph's subject
digests (kg/graph/delta.py). The next run re-evaluates only the focus nodes whose
findings could change: within `depth` reverse steps (over the predicates the shapes'
paths walk) of a node whose incoming edges under an inverse-path or targetObjectsOf
predicate changed, or of a changed subject whose triples other nodes read (`Plan.deep`)
changed; and every changed subject itself. A SPARQL query with a `Reach`
(kg/validate/reach.py) is asked again only for the foci within it of the change, on a
store of their neighbourhood; one without is asked whole when what it reads changed.

Invariant: the findings equal a full compiled run's (so pySHACL's), as a multiset. Where
that cannot be bounded (shapes with unbounded or recursive paths, SPARQL in a nested
shape, a changed rdfs:subClassOf triple, no usable state) the run is a full one.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from kg.graph.delta import Digests, Table, changed, subject_digests
from kg.validate.compiler import Program, Shape
from kg.validate.data import Data, split_wanted
from kg.validate.engine import Finding, _key, _Run, triples_data
from kg.validate.reach import Reach
from kg.validate.sparql import Query, Row, Wanted, rows
from kg.validate.terms import RDF_TYPE, RDFS_SUBCLASSOF, PlainTriple, Term, nt
from kg.validate.view import GraphView

if TYPE_CHECKING:
    from kg.cache import SignedCache
    from kg.change import Change
    from kg.graph.triples import Triples

ByFocus = dict[tuple[int, Term], list[Finding]]
RowsByQuery = dict[str, dict[Term, list[Row]]]  # query text -> its rows by $this
V = TypeVar("V")
MAX_AFFECTED = 20_000  # beyond this many focus nodes a full run costs less


class State(NamedTuple):
    digests: Digests
    findings: ByFocus  # (index of the root in program.roots, focus) -> its findings
    pointers: dict[str, tuple]  # subject (N-Triples, `digests`' key) -> p1, o1, p2, o2...
    # (its objects under `Plan.pointed`, flat: fewer objects to pickle)
    below: dict[str, list[str]]  # class -> its direct subclasses (data and ontology)
    asked: dict[Term, bytes]  # subject -> digest of its triples queries of no Reach read
    rows: RowsByQuery
    deep: dict[str, bytes]  # subject (N-Triples, `digests`' key) -> digest of its triples
    # under `Plan.deep` (the same digest objects shared, so pickled once each)
    front: str | None = None  # the front-end state the graph was made from (kg/change.py)


class Plan(NamedTuple):
    """What the program reads, as the dependency rule needs it (None: cannot bound)."""

    depth: int  # the shapes' (their SPARQL queries each have a `Reach` of their own)
    steps: frozenset[tuple[str, bool]]  # (predicate, inverse?) of every path step
    inverse: frozenset[str]
    seeding: frozenset[str]  # predicates whose objects' incoming edges the shapes read
    pointed: frozenset[str]  # ... or a bounded query reads: kept in the state's pointers
    sparql: frozenset[int]  # roots that ask a query of no `Reach` (re-asked whole)
    whole: Wanted  # what the queries of no `Reach` read (the `asked` digests' choice)
    deep: Wanted | None  # what the shapes read at a node not their focus (None: not known)


def plan(program: Program) -> Plan | None:
    if program.reads is None:
        return None
    depth, sparql = 0, set()
    whole: set[tuple[str, str | None]] = set()
    near: set[str] = set()  # the bounded queries' inverse predicates
    for i, root in enumerate(program.roots):
        d = _depth(root, set())
        if d is None or _nested_sparql(root):
            return None
        depth = max(depth, d)
        for query in _queries(root):
            if query.reach is None:
                sparql.add(i)
                whole |= query.predicates or frozenset()
            else:
                near |= query.reach.inverse
    inverse = frozenset(p for p, inv in program.steps if inv)
    objects = {str(a) for r in program.roots for kind, a in r.targets if kind == "objects"}
    seeding = inverse | objects | {RDFS_SUBCLASSOF}
    return Plan(
        depth,
        program.steps,
        inverse,
        seeding,
        seeding | near,
        frozenset(sparql),
        frozenset(whole),
        _deep(program),
    )


_VALUES_ONLY = {  # constraints that read the value nodes' terms, not their triples
    *("minCount", "maxCount", "minLength", "maxLength", "datatype", "nodeKind", "hasValue"),
    *("in", "languageIn", "pattern", "uniqueLang", "minInclusive", "maxInclusive"),
    *("minExclusive", "maxExclusive"),
}
_AT_FOCUS = {"equals", "disjoint", "lessThan", "lessThanOrEquals"}  # the focus's own triples
_NESTED = {"node", "or", "and", "xone", "not", "qualifiedValueShape"}  # via `Shape.nested`


def _deep(program: Program) -> Wanted | None:
    """The predicates the shapes (not their SPARQL queries) read of a node that is not
    the focus node they evaluate (decision 0058): a changed subject whose triples under
    these are the same can change only its own findings, and the findings of nodes
    that read its incoming edges. None: not known (then every changed subject may
    change its neighbours'). The repo's shapes: rdf:type (a class test on a value)."""
    found: set[str] = set()
    if not all(_deep_at(root, found) for root in program.roots):
        return None
    return frozenset((p, None) for p in found)


def _deep_at(shape: Shape, found: set[str]) -> bool:
    """Add to `found` what `shape`, at a focus x, reads of nodes other than x."""
    if shape.path is not None:  # a property shape: its value nodes are other nodes
        if shape.hops != 1 or shape.properties:
            return False
        for name in shape.components:
            if name == "class":
                found.add(RDF_TYPE)
            elif name not in _VALUES_ONLY | _AT_FOCUS | _NESTED:
                return False
        return all(_reads(n, found) for n in shape.nested)
    if any(name not in _VALUES_ONLY | _AT_FOCUS | _NESTED | {"class"} for name in shape.components):
        return False
    return all(_deep_at(n, found) for n in (*shape.nested, *shape.properties))


def _reads(shape: Shape, found: set[str]) -> bool:
    """Add to `found` everything a node shape run on a value node reads (all of it at a
    node other than the outer focus)."""
    if shape.path is not None or shape.properties or shape.sparql:
        return False
    for name in shape.components:
        if name == "class":
            found.add(RDF_TYPE)
        elif name not in _VALUES_ONLY | _NESTED:
            return False
    return all(_reads(n, found) for n in shape.nested)


def _queries(root: Shape) -> list[Query]:
    """The root's SPARQL constraints and targets."""
    return [*root.sparql, *(q for kind, q in root.targets if kind == "sparql")]  # type: ignore[list-item]


def _depth(shape: Shape, stack: set[int]) -> int | None:
    """The most steps from a focus node to a node whose triples `shape` reads."""
    if id(shape) in stack or shape.hops is None:
        return None
    stack.add(id(shape))
    below = [_depth(s, stack) for s in (*shape.properties, *shape.nested)]
    stack.discard(id(shape))
    return None if None in below else shape.hops + max(below, default=0)  # type: ignore[type-var,operator]


def _nested_sparql(root: Shape) -> bool:
    seen: set[int] = set()
    todo = [*root.properties, *root.nested]
    while todo:
        shape = todo.pop()
        if id(shape) not in seen:
            seen.add(id(shape))
            if shape.sparql:
                return True
            todo += [*shape.properties, *shape.nested]
    return False


# ------------------------------------------------------------------ full runs


def full(
    triples: Triples,
    program: Program,
    ontology: list[PlainTriple],
    given: Table | None = None,
    front: str | None = None,
) -> tuple[list[Finding], State | None]:
    """A full run, and the state a later run starts from (None: nothing to keep);
    `front`: the front-end state's token the graph was made from (`Change.after`)."""
    data = triples_data(triples, program, ontology)
    if given is not None:  # the build's table (decision 0049)
        found = _full(data, program, lambda: given.digests)
    else:
        found = _full(data, program, lambda: subject_digests(triples))
    return found[0], None if found[1] is None else found[1]._replace(front=front)


def full_of(data: Data, program: Program, digests: Digests) -> tuple[list[Finding], State | None]:
    """`full` over the `Data` of a graph whose subject digests are `digests` (a new
    interpreter's, kg/validate/apart.py)."""
    return _full(data, program, lambda: digests)


def _full(
    data: Data, program: Program, digests: Callable[[], Digests]
) -> tuple[list[Finding], State | None]:
    run = _Run(program, data)
    by_focus = run.by_focus()
    for query in _active_queries(program):  # kept whole: an edit asks again near it
        run.rows(query)
    findings = sorted((f for out in by_focus.values() for f in out), key=_key)
    bounded = plan(program)
    if bounded is None:
        return findings, None
    below = {c: list(subs) for c, subs in data.inverse(RDFS_SUBCLASSOF).items() if type(c) is str}
    asked = _asked(data, bounded.whole, None)
    table = digests()
    pointers = _by_text(_pointers(data, bounded.pointed), table)
    deep = _by_text(_asked(data, bounded.deep, None) if bounded.deep is not None else {}, table)
    kept = State(table, by_focus, pointers, below, asked, run._rows, deep)
    return findings, kept


def _by_text(table: dict[Term, V], digests: Digests) -> dict[str, V]:
    """`table` keyed by each subject's N-Triples text, the very key object of `digests`
    where it has one (pickled once for both tables)."""
    known = {_plain(k): k for k in digests}
    return {known.get(s) or nt(s): v for s, v in table.items()}


def _shared(state: State) -> State:
    """`state` with `digests`' key objects in `deep` and `pointers`, and one object per
    distinct `deep` digest (pickled whole, it then writes each once)."""
    keys = {k: k for k in state.digests}
    seen: dict[bytes, bytes] = {}
    deep = {keys.get(k, k): seen.setdefault(v, v) for k, v in state.deep.items()}
    pointers = {keys.get(k, k): v for k, v in state.pointers.items()}
    return state._replace(deep=deep, pointers=pointers)


def _asked(data: Data, wanted: Wanted, subjects: Iterable[Term] | None) -> dict[Term, bytes]:
    """Each subject's digest of its triples `wanted` (`Data._lines`'s choice): while no
    subject's changes, the rows of the queries that read only those stay the same."""
    every, some = split_wanted(wanted)
    predicates = sorted(every | some.keys())
    if subjects is None:
        subjects = dict.fromkeys(s for p in predicates for s in data.subjects_of(p))
    found: dict[Term, bytes] = {}
    known: dict[tuple, bytes] = {}  # the same objects (say, types): one digest, one object
    for s in subjects:
        held = tuple(
            tuple(o for o in data.objects(s, p) if p in every or o in some[p]) for p in predicates
        )
        digest = known.get(held)
        if digest is None:
            pairs = zip(predicates, held, strict=True)
            lines = sorted(f"<{p}> {nt(o)}" for p, objects in pairs for o in objects)
            text = "\n".join(lines).encode()
            digest = known[held] = hashlib.blake2b(text, digest_size=16).digest() if lines else b""
        if digest:
            found[s] = digest
    return found


def _pointers(data: Data, pointed: Iterable[str]) -> dict[Term, tuple]:
    """Each subject's objects under the `pointed` predicates: p1, o1, p2, o2..."""
    found: dict[Term, list] = {}
    for p in sorted(pointed):
        for s in data.subjects_of(p):
            pairs = found.setdefault(s, [])
            for o in data.objects(s, p):
                pairs += (p, o)
    return {s: tuple(pairs) for s, pairs in found.items()}


def _pairs(flat: tuple) -> Iterator[tuple[str, Term]]:
    return zip(flat[::2], flat[1::2])  # noqa: B905 (an even length: written in pairs)


# ------------------------------------------------------------------ incremental runs


def update(
    triples: Triples,
    program: Program,
    ontology: list[PlainTriple],
    state: State,
    given: Table | None = None,
    edits: set[str] | None = None,
    change: Change | None = None,
) -> tuple[list[Finding], State] | None:
    """The findings after the change from `state`'s graph to `triples`, with the state
    to keep; None when only a full run can tell. `given`: the build's digest table
    (else made here); `edits`, when given, gets the changed subjects (N-Triples texts);
    `change`: what the front end says may differ (used when it starts from the state's
    own front-end token, else the digest tables are compared)."""
    bounded = plan(program)
    if bounded is None:
        return None
    if given is None:
        memo: dict = {}  # every term's N-Triples text: the digests' walk, then the store's
        given = Table(subject_digests(triples, memo), memo, ())
    digests, memo, _ = given
    texts = _changed(state, digests, change)
    if edits is not None:
        edits.update(texts)
    edited = {_plain(s) for s in texts}
    front = change.after if change is not None else None
    if not edited:  # the same graph: the same findings, the same state (and token)
        kept_as = state if state.front == front else state._replace(front=front)
        return sorted((f for out in state.findings.values() for f in out), key=_key), kept_as
    view = GraphView(triples, ontology, program.reads, state.below, memo)
    pointers, ends = _ends(view, bounded, state, texts)
    if any(p == RDFS_SUBCLASSOF for p, _ in ends):
        return None  # every instance test may change
    seeds, deep = _seeds(view, bounded, state, texts, ends)
    affected = _reach(view, Reach(bounded.depth, bounded.inverse, bounded.steps), seeds)
    near = _near(view, program, edited, ends)
    if affected is None or near is None:
        return None
    affected |= edited
    asked = dict(state.asked)
    fresh = _asked(view, bounded.whole, edited)
    unread = all(fresh.get(s) == state.asked.get(s) for s in edited)
    _put(asked, fresh, edited)
    run = _Run(program, view)
    _near_rows(run, state.rows, near, unread)
    if unread:  # the queries of no Reach would read the same triples: the same rows
        bounded = bounded._replace(sparql=frozenset())
    by_focus = _evaluate(run, bounded, state.findings, affected, near)
    findings = sorted((f for out in by_focus.values() for f in out), key=_key)
    return findings, State(digests, by_focus, pointers, state.below, asked, run._rows, deep, front)


def _ends(
    view: GraphView, bounded: Plan, state: State, texts: set[str]
) -> tuple[dict[str, tuple], set[tuple[str, Term]]]:
    """The state's `pointers` after the change, and the (p, o) of the changed subjects'
    old and new triples under `pointed` predicates."""
    pointers = dict(state.pointers)
    ends: set[tuple[str, Term]] = set()
    for t in texts:
        s = _plain(t)
        now = tuple(x for p in sorted(bounded.pointed) for o in view.objects(s, p) for x in (p, o))
        ends.update(_pairs(state.pointers.get(t, ())))
        ends.update(_pairs(now))
        if now:
            pointers[t] = now
        else:
            pointers.pop(t, None)
    return pointers, ends


def _seeds(
    view: GraphView, bounded: Plan, state: State, texts: set[str], ends: set[tuple[str, Term]]
) -> tuple[set[Term], dict[str, bytes]]:
    """The nodes the shapes' dependency walk starts from (objects whose incoming edges
    changed, changed subjects whose `deep` triples changed: a subject whose triples
    other nodes read are the same affects only itself), and the `deep` table after."""
    deep = dict(state.deep)
    seeds = {o for p, o in ends if p in bounded.seeding}
    if bounded.deep is None:
        return seeds | {_plain(t) for t in texts}, deep
    fresh = _asked(view, bounded.deep, {_plain(t) for t in texts})
    for t in texts:
        found = fresh.get(_plain(t))
        if found != state.deep.get(t):
            seeds.add(_plain(t))
        if found is None:
            deep.pop(t, None)
        else:
            deep[t] = found
    return seeds, deep


def _changed(state: State, digests: Digests, change: Change | None) -> set[str]:
    """The subjects (N-Triples texts) whose triples may differ from the state's graph:
    the front end's `Change.subjects` (a superset, kg/change.py) when it starts from the
    front-end state the kept state was made from, else the digest tables' difference."""
    known = change.subjects if change is not None and state.front is not None else None
    if change is not None and known is not None and change.before == state.front:
        return set(known)
    return set(changed(state.digests, digests))


def _put(table: dict[Term, bytes], fresh: dict[Term, bytes], subjects: set[Term]) -> None:
    """`table` with the `subjects`' entries as in `fresh` (absent there: removed)."""
    for s in subjects:
        if s in fresh:
            table[s] = fresh[s]
        else:
            table.pop(s, None)


def _near(
    view: GraphView, program: Program, edited: set[Term], ends: set[tuple[str, Term]]
) -> dict[str, set[Term]] | None:
    """For each bounded query (by text), the foci whose rows may differ: those within
    its `Reach` (walked back) of a changed subject or of a node whose incoming edges
    under one of its inverse predicates changed (None: too many)."""
    by_reach: dict[Reach, set[Term] | None] = {}
    found: dict[str, set[Term]] = {}
    for query in _active_queries(program):
        reach = query.reach
        if reach is None:
            continue
        if reach not in by_reach:
            seeds = edited | {o for p, o in ends if p in reach.inverse}
            by_reach[reach] = _reach(view, reach, seeds)
        foci = by_reach[reach]
        if foci is None:
            return None
        found[query.text] = foci
    return found


def _near_rows(run: _Run, before: RowsByQuery, near: dict[str, set[Term]], same: bool) -> None:
    """Every query's rows in `run`: a bounded query's kept rows but its `near` foci's,
    which it asks again on a store of their neighbourhood only (all it can read for
    them, its `Reach`); a query of no Reach keeps its rows while `same`, else is asked
    whole on a store of what it reads."""
    queries = {q.text: q for q in _active_queries(run.program)}
    parts = {(q.reach, id(near[t])): near[t] for t, q in queries.items() if t in near}
    store = _neighbourhood(run.data, parts, run.program.predicates)
    for text, query in sorted(queries.items()):
        if text not in before:  # (a full run keeps every active query's rows)
            continue  # asked whole when first needed
        if query.reach is None:
            if same:
                run._rows[text] = before[text]
            else:
                found: dict[Term, list[Row]] = {}
                for row in rows(run.data.store(query.predicates), query):
                    found.setdefault(row["this"], []).append(row)
                run._rows[text] = found
            continue
        foci = near[text]
        kept = {focus: found for focus, found in before[text].items() if focus not in foci}
        for row in rows(store, query) if foci else ():
            if row["this"] in foci:
                kept.setdefault(row["this"], []).append(row)
        run._rows[text] = kept


def _active_queries(program: Program) -> list[Query]:
    return [q for root in program.roots if not root.deactivated for q in _queries(root)]


def _neighbourhood(data: Data, parts: dict[tuple, set[Term]], wanted: Wanted | None):
    """A pyoxigraph store of the triples (of those `wanted`) each bounded query can read
    for its foci (`parts`: (its `Reach`, ...) -> foci): every triple of a node within its
    depth along its steps, and its incoming triples under its inverse predicates."""
    import pyoxigraph as ox

    every, some = split_wanted(wanted)
    lines: set[str] = set()
    for (reach, _), foci in sorted(parts.items(), key=lambda item: repr(item[0][0])):
        seen, frontier = set(foci), set(foci)
        for _ in range(reach.depth + 1):
            step: set[Term] = set()
            for node in frontier:
                head = nt(node)
                for p, objects in data.spo.get(node, {}).items() if type(node) is str else ():
                    if p in every or p in some:
                        for o in objects if p in every else (o for o in objects if o in some[p]):
                            lines.add(f"{head} <{p}> {nt(o)} .\n")
                            if (p, False) in reach.walk:
                                step.add(o)
                for p in sorted(reach.inverse):
                    for s in data.subjects(p, node):
                        lines.add(f"{nt(s)} <{p}> {head} .\n")
                        if (p, True) in reach.walk:
                            step.add(s)
            frontier = step - seen
            seen |= frontier
    store = ox.Store()
    store.bulk_load("".join(sorted(lines)).encode(), format=ox.RdfFormat.N_TRIPLES, lenient=True)
    return store


def _plain(text: str) -> Term:
    return text[1:-1] if text.startswith("<") else text


def _reach(view: GraphView, reach: Reach, seeds: set[Term]) -> set[Term] | None:
    """The nodes within `reach.depth` reverse steps of the seeds (None: too many)."""
    found, frontier = set(seeds), set(seeds)
    back = sorted(reach.walk)
    for _ in range(reach.depth):
        step: set[Term] = set()
        for node in frontier:
            for p, inverse in back:  # a step walked back
                step.update(view.objects(node, p) if inverse else view.subjects(p, node))
        frontier = step - found
        found |= frontier
        if len(found) > MAX_AFFECTED:
            return None
    return found


def _evaluate(
    run: _Run, bounded: Plan, before: ByFocus, affected: set[Term], near: dict[str, set[Term]]
) -> ByFocus:
    """The findings by focus: the kept ones but for the nodes each root's evaluation
    may now differ at (the affected nodes, its bounded queries' `near` foci, and for a
    root re-asked whole every node it named), which it evaluates again."""
    roots = run.program.roots
    again: dict[int, set[Term]] = {}
    for i, root in enumerate(roots):
        extra = [near[q.text] for q in _queries(root) if q.text in near]
        again[i] = affected.union(*extra) if extra else affected
    by_focus = {
        key: out
        for key, out in before.items()
        if key[1] not in again[key[0]] and key[0] not in bounded.sparql
    }
    targets = _Targets(run, [i for i, root in enumerate(roots) if not root.deactivated])
    nodes = dict.fromkeys(affected)
    for foci in near.values():
        nodes.update(dict.fromkeys(foci))
    for focus in nodes:
        for i in sorted(targets.of(focus)):
            if i not in bounded.sparql and focus in again[i]:
                _again(run, i, focus, by_focus)
    for i in sorted(bounded.sparql - {i for i, root in enumerate(roots) if root.deactivated}):
        old = [f for j, f in before if j == i]  # its queries re-asked whole: every node
        named = {**dict.fromkeys(again[i]), **dict.fromkeys(old)}  # they name
        for query in _queries(roots[i]):
            named.update(dict.fromkeys(run.rows(query)))
        for focus in named:
            if i in targets.of(focus):
                _again(run, i, focus, by_focus)
    return by_focus


def _again(run: _Run, i: int, focus: Term, by_focus: ByFocus) -> None:
    out: list[Finding] = []
    run.evaluate(run.program.roots[i], focus, out)
    if out:
        by_focus[i, focus] = out


class _Targets:
    """Which roots a node is a focus node of (what `_Run.focus_nodes` would list), found
    from the node's own types and predicates rather than by asking every root."""

    def __init__(self, run: _Run, roots: list[int]) -> None:
        data = self.data = run.data
        self.by_type: dict[str, list[int]] = {}  # a class -> the roots targeting it or above
        self.by_predicate: dict[str, list[int]] = {}  # sh:targetSubjectsOf
        self.others: list[tuple[int, Callable[[Term], bool]]] = []
        for i in roots:
            for kind, arg in run.program.roots[i].targets:
                if kind == "class":
                    for c in data.classes_under(arg):  # type: ignore[arg-type]
                        self.by_type.setdefault(c, []).append(i)
                elif kind == "subjects":
                    self.by_predicate.setdefault(arg, []).append(i)  # type: ignore[arg-type]
                elif kind == "node":
                    self.others.append((i, lambda n, a=arg: n == a))  # type: ignore[misc]
                elif kind == "objects":
                    self.others.append((i, lambda n, p=arg: bool(data.subjects(p, n))))  # type: ignore[misc]
                else:
                    self.others.append((i, lambda n, q=arg: n in run.rows(q)))  # type: ignore[misc]

    def of(self, node: Term) -> set[int]:
        found: set[int] = set()
        if type(node) is str:  # a literal has no properties
            predicates = self.data.spo.get(node, _NONE)
            for p in predicates:
                found.update(self.by_predicate.get(p, ()))
            for t in predicates.get(RDF_TYPE, ()):
                found.update(self.by_type.get(t, ()))
        for i, test in self.others:
            if i not in found and test(node):
                found.add(i)
        return found


_NONE: dict = {}  # never written to


# ------------------------------------------------------------------ the kept state


def validate(
    triples: Triples,
    program: Program,
    ontology: list[PlainTriple],
    cache: SignedCache,
    key: str,
    isolate: Callable[[Callable[[], list[Finding]]], list[Finding]],
    given: Table | None = None,
    change: Change | None = None,
) -> list[Finding]:
    """The findings, from the state kept under `key` when there is a usable one (in this
    process), else from a full run under `isolate` (a forked child for a big graph),
    which keeps the state for the next run. `given`: the build's digest table;
    `change`: what the front end says differs (kg/change.py)."""
    state, head = kept(cache, key)
    if state is not None:
        edits: set[str] = set()
        done = update(triples, program, ontology, state, given, edits, change)  # `state` kept
        if done is not None:
            if done[1] is not state:  # (an unchanged graph: the kept state stays as it is)
                keep(cache, key, done[1], state, head, edits)
            return done[0]

    def whole() -> list[Finding]:
        findings, kept = full(triples, program, ontology, given, change.after if change else None)
        if kept is not None:
            keep_base(cache, key, kept)
        return findings

    return isolate(whole)


# ------------------------------------------------------------------ kept as a base and changes


class Delta(NamedTuple):
    """What one incremental run changed in the state: per table, the entries set and
    the keys removed (`below` never changes: a changed subclass triple is a full run)."""

    tables: tuple[tuple[dict, tuple], ...]  # in `TABLES` order: (set, removed)
    front: str | None = None  # the state's front-end token after it


class Head(NamedTuple):
    """The state as kept after an incremental run (decision 0055): a whole state kept
    under `base` (with the `token` it was kept with) and the changes made since, so that
    a run after a small edit writes its changes, not the whole state again."""

    base: str
    token: bytes
    deltas: tuple[Delta, ...]


TABLES = ("digests", "findings", "pointers", "asked", "rows", "deep")
BY_SUBJECT = ("asked",)  # tables an update sets at the changed subjects (plain terms)
BY_TEXT = ("digests", "deep", "pointers")  # ... by their N-Triples texts
MOST_DELTAS = 16  # runs after a base before it is written whole again
MOST_CHANGED = 10  # ... or once the changes hold more entries than 1/10 of the digests


def kept(cache: SignedCache, key: str) -> tuple[State | None, Head | None]:
    """The state kept under `key` (a whole one, as a full run keeps it, or a head: its
    base with the changes applied) and the head; (None, None) when there is none usable
    (missing, tampered or foreign entries, a base that is not the head's, ill-typed)."""
    found = cache.get(key)
    if isinstance(found, State):
        return found, None
    if not isinstance(found, Head) or not isinstance(found.deltas, tuple):
        return None, None
    base = cache.get(found.base)
    if not (isinstance(base, tuple) and len(base) == 2 and base[0] == found.token):
        return None, None
    state = base[1]
    if not isinstance(state, State):
        return None, None
    for delta in found.deltas:
        state = _applied(state, delta)
        if state is None:
            return None, None
    return state, found


def _applied(state: State, delta: object) -> State | None:
    """`state` with `delta` applied (its tables changed in place), None if ill-typed."""
    if not isinstance(delta, Delta) or len(delta.tables) != len(TABLES):
        return None
    for name, change in zip(TABLES, delta.tables, strict=True):
        table = getattr(state, name)
        if not (isinstance(change, tuple) and len(change) == 2 and isinstance(table, dict)):
            return None
        fresh, removed = change
        if not isinstance(fresh, dict) or not isinstance(removed, tuple):
            return None
        for k in removed:
            table.pop(k, None)
        table.update(fresh)
    if not isinstance(delta.front, str | None):
        return None
    return state._replace(front=delta.front)


def keep(
    cache: SignedCache, key: str, new: State, old: State, head: Head | None, edits: set[str]
) -> None:
    """Keep `new`: as the head of its base with one more change (`old` -> `new`, whose
    changed subjects are `edits`) while the changes stay small, else as a new base (a
    new token) and an empty head."""
    if head is not None:
        delta = _delta(old, new, edits)
        deltas = (*head.deltas, delta)
        size = sum(len(t[0]) + len(t[1]) for d in deltas for t in d.tables)
        if len(deltas) <= MOST_DELTAS and size * MOST_CHANGED <= len(new.digests):
            cache.put(key, Head(head.base, head.token, deltas))
            return
    keep_base(cache, key, _shared(new))


def keep_base(cache: SignedCache, key: str, state: State) -> None:
    """Keep `state` whole, as a new base (a new token) and an empty head: a full run
    keeps its state so (decision 0077), and the run after an edit then writes its
    changes only, not the whole state again."""
    base, token = base_key(key), os.urandom(16)
    cache.put(base, (token, state))  # first the base, then the head that names its token
    cache.put(key, Head(base, token, ()))


def base_key(key: str) -> str:
    """The key of the base entry of the state kept under `key`."""
    return hashlib.sha256(b"kg validation state base\0" + key.encode()).hexdigest()


def _delta(old: State, new: State, edits: set[str]) -> Delta:
    """What changed from `old` to `new`. The digests, `asked`, `pointers`, `deep` differ only
    at the changed subjects (`update` sets no others), the findings and rows anywhere
    (small tables: compared whole)."""
    plain = {_plain(s) for s in edits}
    tables = []
    for name in TABLES:
        before, after = getattr(old, name), getattr(new, name)
        keys = edits if name in BY_TEXT else plain if name in BY_SUBJECT else None
        if keys is None:
            fresh = {k: v for k, v in after.items() if k not in before or before[k] != v}
            removed = tuple(k for k in before if k not in after)
        else:
            fresh = {k: after[k] for k in keys if k in after}
            removed = tuple(k for k in keys if k not in after and k in before)
        tables.append((fresh, removed))
    return Delta(tuple(tables), new.front)
