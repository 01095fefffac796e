"""Violation injection for the engine tests: mutate plain triples (kg/validate/terms.py) so
that each kind of constraint the shapes use is broken somewhere.

Core constraints are broken generically, read from the shapes graph: for each constraint
parameter, a property shape that uses it and a focus node of that shape with a value, then
the value is removed, doubled or replaced so that the parameter fails. SPARQL-based shapes
are broken by one hand-written edit each. Which results follow is not decided here: the
tests take pySHACL's answer as the oracle and only check that each edit made its shape fire.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from rdflib import Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import SH
from rdflib.term import Node

from kg.validate.data import Data
from kg.validate.terms import RDF_TYPE, XSD, XSD_STRING, Lit, PlainTriple, Term

SCHEMA = "http://schema.org/"
KG = "https://w3id.org/kg-profiles/vocab#"
NOWHERE = "https://kg.example.org/nowhere/"

Edit = tuple[list[PlainTriple], list[PlainTriple]]  # (remove, add)


class Injector:
    def __init__(self, triples: list[PlainTriple], shapes: Graph, seed: int) -> None:
        self.data = Data(triples)
        self.triples = dict.fromkeys(triples)
        self.shapes = shapes
        self.rng = random.Random(seed)
        self.touched: set[Term] = set()  # one edit per focus node: edits stay apart
        self.fired: list[str] = []  # the shapes each applied edit should make fire
        self.applied: list[str] = []  # the kinds of edit applied

    def apply(self, edit: Edit) -> None:
        remove, add = edit
        for t in remove:
            self.triples.pop(t, None)
        for t in add:
            self.triples[t] = None

    def result(self) -> list[PlainTriple]:
        return list(self.triples)

    # ------------------------------------------------------------------ focus nodes

    def focus_nodes(self, prop: Node) -> list[Term]:
        owners = [*self.shapes.subjects(SH.property, prop), prop]
        found: dict[Term, None] = {}
        for owner in owners:
            for cls in self.shapes.objects(owner, SH.targetClass):
                found.update(dict.fromkeys(self.data.instances(str(cls))))
            for p in self.shapes.objects(owner, SH.targetSubjectsOf):
                found.update(dict.fromkeys(self.data.subjects_of(str(p))))
            for p in self.shapes.objects(owner, SH.targetObjectsOf):
                found.update(dict.fromkeys(self.data.objects_of(str(p))))
        nodes = [n for n in found if n not in self.touched]
        self.rng.shuffle(nodes)
        return nodes

    def shape_name(self, prop: Node) -> str:
        if isinstance(prop, URIRef):
            return str(prop)
        return str(self.shapes.value(None, SH.property, prop))

    # ------------------------------------------------------------------ core constraints

    def break_parameter(self, param: str) -> bool:
        """Break `sh:<param>` on one focus node of one property shape with a simple path."""
        props = sorted(
            (s for s in self.shapes.subjects(SH[param], None) if self._simple_path(s)), key=str
        )
        self.rng.shuffle(props)
        for prop in props:
            path = str(self.shapes.value(prop, SH.path))
            bound = self.shapes.value(prop, SH[param])
            for focus in self.focus_nodes(prop):
                values = list(self.data.objects(focus, path))
                edit = MUTATIONS[param](self, focus, path, values, bound) if values else None
                if edit is not None:
                    self.apply(edit)
                    self.touched.add(focus)
                    self.fired.append(self.shape_name(prop))
                    return True
        return False

    def _simple_path(self, shape: Node) -> bool:
        return isinstance(self.shapes.value(shape, SH.path), URIRef)

    def other_value(self, path: str, not_this: Term) -> Term | None:
        """Another value the same predicate has somewhere (a plausible second value)."""
        for objects in self.data.inverse(path):
            if objects != not_this:
                return objects
        return None

    # ------------------------------------------------------------------ complex paths

    def break_complex_path(self, kind: Node) -> bool:
        """Empty an inverse or alternative path with sh:minCount on one focus node."""
        for prop in sorted(self.shapes.subjects(SH.minCount, None), key=str):
            path = self.shapes.value(prop, SH.path)
            if path is None or self.shapes.value(path, kind) is None:
                continue
            arg = self.shapes.value(path, kind)
            for focus in self.focus_nodes(prop):
                remove = self._path_edges(focus, kind, arg)
                if remove:
                    self.apply((remove, []))
                    self.touched.add(focus)
                    self.fired.append(self.shape_name(prop))
                    return True
        return False

    def _path_edges(self, focus: Term, kind: Node, arg: Node) -> list[PlainTriple]:
        if kind == SH.inversePath:
            p = str(arg)
            return [(s, p, focus) for s in self.data.subjects(p, focus)]
        found = []
        for p in (str(x) for x in Collection(self.shapes, arg)):
            found += [(focus, p, o) for o in self.data.objects(focus, p)]  # type: ignore[misc]
        return found


def _replace(focus: Term, path: str, old: Term, new: Term) -> Edit:
    return [(focus, path, old)], [(focus, path, new)]  # type: ignore[list-item]


def _min_count(inj: Injector, f: Term, p: str, values: list[Term], bound: Node) -> Edit:
    return [(f, p, v) for v in values], []  # type: ignore[misc]


def _max_count(inj: Injector, f: Term, p: str, values: list[Term], bound: Node) -> Edit | None:
    other = inj.other_value(p, values[0])
    if other is None or other in values or int(str(bound)) != len(values):
        return None
    return [], [(f, p, other)]  # type: ignore[list-item]


def _datatype(inj: Injector, f: Term, p: str, values: list[Term], bound: Node) -> Edit:
    wrong = Lit("1", XSD + "integer") if str(bound) == XSD_STRING else Lit("not one", XSD_STRING)
    return _replace(f, p, values[0], wrong)


def _class(inj: Injector, f: Term, p: str, values: list[Term], bound: Node) -> Edit:
    return _replace(f, p, values[0], NOWHERE + "thing")


def _node_kind(inj: Injector, f: Term, p: str, values: list[Term], bound: Node) -> Edit:
    v = values[0]
    new: Term = Lit(v, XSD_STRING) if isinstance(v, str) else NOWHERE + "iri"
    return _replace(f, p, v, new)


def _min_length(inj: Injector, f: Term, p: str, values: list[Term], bound: Node) -> Edit | None:
    v = values[0]
    return _replace(f, p, v, Lit("", v.dt)) if isinstance(v, Lit) else None


def _pattern(inj: Injector, f: Term, p: str, values: list[Term], bound: Node) -> Edit:
    v = values[0]
    return _replace(f, p, v, "ftp://nope.example/" if isinstance(v, str) else Lit("no", v.dt))


def _in(inj: Injector, f: Term, p: str, values: list[Term], bound: Node) -> Edit:
    return _replace(f, p, values[0], Lit("not-in-the-list", XSD_STRING))


def _equals(inj: Injector, f: Term, p: str, values: list[Term], bound: Node) -> Edit:
    return _replace(f, p, values[0], Lit("something else", XSD_STRING))


def _or(inj: Injector, f: Term, p: str, values: list[Term], bound: Node) -> Edit:
    return _replace(f, p, values[0], Lit("neither", XSD + "anyURI"))


def _min_inclusive(inj: Injector, f: Term, p: str, values: list[Term], bound: Node) -> Edit | None:
    if not isinstance(bound, Literal) or not isinstance(bound.value, int):
        return None
    return _replace(f, p, values[0], Lit(str(bound.value - 1), str(bound.datatype)))


MUTATIONS: dict[str, Callable[..., Edit | None]] = {
    "minCount": _min_count,
    "maxCount": _max_count,
    "datatype": _datatype,
    "class": _class,
    "nodeKind": _node_kind,
    "minLength": _min_length,
    "pattern": _pattern,
    "in": _in,
    "equals": _equals,
    "or": _or,
    "qualifiedValueShape": _min_count,  # no value left: fewer than qualifiedMinCount conform
    "minInclusive": _min_inclusive,
}


# ------------------------------------------------------------------ SPARQL-based shapes


def _pick(inj: Injector, nodes: list[Term]) -> Term | None:
    nodes = [n for n in nodes if n not in inj.touched]
    return inj.rng.choice(nodes) if nodes else None


def _authorships(inj: Injector, least: int) -> tuple[Term, list[Term]] | None:
    pubs = [s for s in inj.data.subjects_of(KG + "authorship")]
    pubs = [p for p in pubs if len(inj.data.objects(p, KG + "authorship")) >= least]
    pub = _pick(inj, pubs)
    if pub is None:
        return None
    inj.touched.add(pub)
    return pub, sorted(inj.data.objects(pub, KG + "authorship"), key=str)


def ranks(inj: Injector) -> Edit | None:
    found = _authorships(inj, 2)
    if found is None:
        return None
    a = found[1][-1]
    return [(a, KG + "rank", r) for r in inj.data.objects(a, KG + "rank")], [  # type: ignore[misc]
        (a, KG + "rank", Lit("99", XSD + "integer"))  # type: ignore[list-item]
    ]


def repeated_author(inj: Injector) -> Edit | None:
    found = _authorships(inj, 2)
    if found is None:
        return None
    first, second = found[1][0], found[1][1]
    author = next(iter(inj.data.objects(first, KG + "author")))
    old = [(second, KG + "author", o) for o in inj.data.objects(second, KG + "author")]
    return old, [(second, KG + "author", author)]  # type: ignore[return-value]


def published_place(inj: Injector) -> Edit | None:
    published = Lit("published", XSD_STRING)
    pub = _pick(inj, inj.data.subjects(SCHEMA + "creativeWorkStatus", published))
    if pub is None:
        return None
    inj.touched.add(pub)
    dates = [
        (pub, SCHEMA + "datePublished", d) for d in inj.data.objects(pub, SCHEMA + "datePublished")
    ]
    return dates, []  # type: ignore[return-value]


def org_cycle(inj: Injector) -> Edit | None:
    orgs = sorted(inj.data.instances(SCHEMA + "Organization"))
    orgs = [o for o in orgs if o not in inj.touched]
    if len(orgs) < 2:
        return None
    a, b = inj.rng.sample(orgs, 2)
    inj.touched |= {a, b}
    p = SCHEMA + "parentOrganization"
    return [], [(a, p, b), (b, p, a)]


def start_before_end(inj: Injector) -> Edit | None:
    roles = [
        r for r in inj.data.instances(SCHEMA + "EmployeeRole")
        if inj.data.objects(r, SCHEMA + "startDate") and inj.data.objects(r, SCHEMA + "endDate")
    ]  # fmt: skip
    role = _pick(inj, roles)
    if role is None:
        return None
    inj.touched.add(role)
    end = next(iter(inj.data.objects(role, SCHEMA + "endDate")))
    return _replace(role, SCHEMA + "endDate", end, Lit("1900", XSD + "gYear"))


def ended_not_current(inj: Injector) -> Edit | None:
    current = Lit("true", XSD + "boolean")
    roles = [r for r in inj.data.subjects(KG + "current", current)]
    role = _pick(inj, [r for r in roles if not inj.data.objects(r, SCHEMA + "endDate")])
    if role is None:
        return None
    inj.touched.add(role)
    return [], [(role, SCHEMA + "endDate", Lit("2099", XSD + "gYear"))]  # type: ignore[list-item]


def self_advised(inj: Injector) -> Edit | None:
    holders = inj.data.inverse(SCHEMA + "alumniOf")
    roles = [
        r
        for r in holders
        if isinstance(r, str) and (r, RDF_TYPE, SCHEMA + "OrganizationRole") in inj.triples
    ]
    role = _pick(inj, roles)
    if role is None:
        return None
    inj.touched.add(role)
    return [], [(role, KG + "mentor", holders[role][0])]


SPARQL_EDITS: dict[str, Callable[[Injector], Edit | None]] = {
    "Publication-ranks": ranks,
    "RepeatedAuthor": repeated_author,
    "PublishedPlace": published_place,
    "Organization-noCycle": org_cycle,
    "Role-startBeforeEnd": start_before_end,
    "Role-endedNotCurrent": ended_not_current,
    "SelfAdvised": self_advised,
}
SHAPES = "https://w3id.org/kg-profiles/shapes#"


def inject(
    triples: list[PlainTriple], shapes: Graph, seed: int
) -> tuple[list[PlainTriple], Injector]:
    """The triples with one violation of each kind the shapes use (where the data allows)."""
    inj = Injector(triples, shapes, seed)
    for param in MUTATIONS:
        if (None, SH[param], None) in shapes and inj.break_parameter(param):
            inj.applied.append(param)
    for kind in (SH.inversePath, SH.alternativePath):
        if inj.break_complex_path(kind):
            inj.applied.append(str(kind).rsplit("#", 1)[1])
    for name, edit_of in SPARQL_EDITS.items():
        if (URIRef(SHAPES + name), SH.sparql, None) in shapes:
            edit = edit_of(inj)
            if edit is not None:
                inj.apply(edit)
                inj.fired.append(SHAPES + name)
                inj.applied.append(name)
    return inj.result(), inj
