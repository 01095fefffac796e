"""`GraphView`: the compiled validator's `Data` read straight from the pipeline's
`Triples`, a subject at a time, for a run that visits a few focus nodes.

Invariant: every lookup answers what `Data` built from the same triples (the ontology's
merged in, only the predicates in `reads`) answers; the subclass table is given (kept
from the last full run, valid while no rdfs:subClassOf triple changed).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import TYPE_CHECKING

from rdflib import URIRef
from rdflib.term import Node

from kg.graph.ntriples import memo_terms
from kg.validate.data import _EMPTY, Data, split_wanted
from kg.validate.terms import PlainTriple, Term, from_rdflib, to_rdflib

if TYPE_CHECKING:
    from kg.graph.triples import Triples
    from kg.validate.sparql import Wanted


def plain(node: object) -> Term:
    return str(node) if type(node) is URIRef else from_rdflib(node)  # type: ignore[arg-type]


class _Subjects:
    """subject -> predicate -> objects, converted from `Triples` on first use."""

    def __init__(self, triples: Triples, ontology: Data, reads: Collection[str] | None) -> None:
        self.triples = triples
        self.ontology = ontology.spo
        self.reads = reads
        self.done: dict[Term, dict[str, dict[Term, None]]] = {}

    def get(self, subject: Term, default: dict = _EMPTY) -> dict[str, dict[Term, None]]:
        found = self.done.get(subject)
        if found is None:
            known = self.ontology.get(subject, {})  # type: ignore[arg-type]
            found = {p: dict(objects) for p, objects in known.items()}
            reads = self.reads
            for p, objects in self.triples.describe(to_rdflib(subject)).items():
                key = str(p)
                if reads is None or key in reads:
                    found.setdefault(key, {}).update((plain(o), None) for o in objects)
            self.done[subject] = found
        return found or default

    def __getitem__(self, subject: Term) -> dict[str, dict[Term, None]]:
        return self.get(subject)

    def items(self) -> Iterator[tuple[Term, dict[str, dict[Term, None]]]]:
        """Every subject (a whole walk: only for a lookup the view cannot answer locally)."""
        seen = set()
        for s in self.triples.subjects():
            node = plain(s)
            seen.add(node)
            yield node, self.get(node)
        for node in self.ontology:
            if node not in seen:
                yield node, self.get(node)


class GraphView(Data):
    def __init__(
        self,
        triples: Triples,
        ontology: Iterable[PlainTriple],
        reads: Collection[str] | None,
        below: dict[str, list[str]],
        memo: dict[Node, str] | None = None,
    ) -> None:
        super().__init__(())
        self.triples = triples
        self._ontology = Data(t for t in ontology if reads is None or t[1] in reads)
        self.spo = _Subjects(triples, self._ontology, reads)  # type: ignore[assignment]
        self.reads = reads
        self._below = below
        self._pointing: dict[Term, dict[str, dict[str, None]]] = {}  # obj -> p -> subjects
        self.memo = {} if memo is None else memo  # N-Triples texts (kg/graph/delta.py's)

    def subjects(self, predicate: str, obj: Term) -> list[str]:
        """Who points at `obj` with `predicate`: the graph's reverse index for an IRI
        (its incoming edges read once, for every predicate)."""
        if not isinstance(obj, str) or obj.startswith("_:"):
            return super().subjects(predicate, obj)  # not indexed: one walk, memoized
        found = self._pointing.get(obj)
        if found is None:
            found = self._pointing[obj] = {}
            for s, p in self.triples.subject_predicates(URIRef(obj)):
                found.setdefault(str(p), {})[plain(s)] = None  # type: ignore[index]
        known = found.get(predicate)
        ontology = self._ontology.subjects(predicate, obj)
        if not ontology:
            return list(known or ())
        return list(dict.fromkeys([*ontology, *(known or ())]))

    def classes_under(self, cls: str) -> frozenset[str]:
        found = self._superclasses.get(cls)
        if found is None:
            seen, todo = {cls}, [cls]
            while todo:
                for sub in self._below.get(todo.pop(), ()):
                    if sub not in seen:
                        seen.add(sub)
                        todo.append(sub)
            found = self._superclasses[cls] = frozenset(seen)
        return found

    def _lines(self, predicates: Wanted | None) -> Iterable[str]:
        """As `Data._lines`, written from the graph's own terms (`nt_object` writes what
        `nt` writes for the converted term), each formatted once."""
        yield from self._ontology._lines(predicates)
        term = memo_terms(self.memo)
        every, some = split_wanted(predicates)
        decided: dict[Node, tuple[str, set[Term] | None] | None] = {}
        for s, by_predicate in self.triples.by_subject():
            head = None
            for p, objects in by_predicate.items():
                if p not in decided:
                    text = str(p)
                    keep = predicates is None or text in every or text in some
                    decided[p] = (f"<{text}>", some.get(text)) if keep else None
                found = decided[p]
                if found is None:
                    continue
                head = head or term(s)
                predicate, wanted = found
                for o in objects:
                    if wanted is None or (type(o) is URIRef and str(o) in wanted):
                        yield f"{head} {predicate} {term(o)} .\n"
