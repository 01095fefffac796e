"""The data graph as the compiled validator reads it: plain terms (kg/validate/terms.py)
indexed subject -> predicate -> objects, with the other lookups built on first use.

Invariant: the index is filled once and never changes; every derived lookup (inverse
edges of one predicate, instances of a class, a pyoxigraph store of some predicates) is
a pure function of it and is memoized here.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from kg.validate.terms import RDF_TYPE, RDFS_SUBCLASSOF, PlainTriple, Term, nt

if TYPE_CHECKING:
    import pyoxigraph

    from kg.validate.sparql import Wanted

_EMPTY: dict = {}  # never written to
CHUNK = 50_000  # N-Triples lines loaded into pyoxigraph at a time


class Data:
    """subject -> predicate -> objects (an insertion-ordered set each)."""

    def __init__(
        self,
        triples: Iterable[PlainTriple],
        spo: dict[str, dict[str, dict[Term, None]]] | None = None,
    ) -> None:
        """The index of `triples`, added to `spo` when given (an index made elsewhere,
        kg/validate/apart.py: taken over, not copied)."""
        spo = {} if spo is None else spo
        for s, p, o in triples:
            predicates = spo.get(s)
            if predicates is None:
                predicates = spo[s] = {}
            objects = predicates.get(p)
            if objects is None:
                predicates[p] = {o: None}
            else:
                objects[o] = None
        self.spo = spo
        self._inverse: dict[str, dict[Term, list[str]]] = {}
        self._having: dict[str, list[str]] | None = None
        self._superclasses: dict[str, frozenset[str]] = {}
        self._stores: dict[Wanted | None, pyoxigraph.Store] = {}

    def objects(self, subject: Term, predicate: str) -> Collection[Term]:
        if type(subject) is not str:  # a literal has no properties
            return _EMPTY
        return self.spo.get(subject, _EMPTY).get(predicate, _EMPTY)

    def subjects(self, predicate: str, obj: Term) -> list[str]:
        return self.inverse(predicate).get(obj, [])

    def inverse(self, predicate: str) -> dict[Term, list[str]]:
        """object -> subjects, for one predicate (built on first use)."""
        found = self._inverse.get(predicate)
        if found is None:
            found = {}
            spo = self.spo
            for s in self.subjects_of(predicate):
                for o in spo[s][predicate]:
                    found.setdefault(o, []).append(s)
            self._inverse[predicate] = found
        return found

    def subjects_of(self, predicate: str) -> list[str]:
        """The subjects with `predicate`, in index order (one pass over the index finds
        them for every predicate at once: each target or inverse lookup then costs what it
        finds, not a scan of the graph)."""
        if self._having is None:
            having: dict[str, list[str]] = {}
            for s, predicates in self.spo.items():
                for p in predicates:
                    found = having.get(p)
                    if found is None:
                        having[p] = [s]
                    else:
                        found.append(s)
            self._having = having
        return self._having.get(predicate, [])

    def objects_of(self, predicate: str) -> list[Term]:
        return list(self.inverse(predicate))

    # ------------------------------------------------------------------ classes

    def classes_under(self, cls: str) -> frozenset[str]:
        """`cls` and every class below it by rdfs:subClassOf (SHACL's instance test)."""
        found = self._superclasses.get(cls)
        if found is None:
            below = self.inverse(RDFS_SUBCLASSOF)  # superclass -> subclasses
            seen, todo = {cls}, [cls]
            while todo:
                for sub in below.get(todo.pop(), ()):
                    if sub not in seen:
                        seen.add(sub)
                        todo.append(sub)
            found = self._superclasses[cls] = frozenset(seen)
        return found

    def is_instance(self, node: Term, cls: str) -> bool:
        types = self.objects(node, RDF_TYPE)
        if not types:
            return False
        under = self.classes_under(cls)
        return any(t in under for t in types)

    def instances(self, cls: str) -> list[str]:
        under = self.classes_under(cls)
        index = self.inverse(RDF_TYPE)
        seen: dict[str, None] = {}
        for c in sorted(under):
            for s in index.get(c, ()):
                seen[s] = None
        return list(seen)

    # ------------------------------------------------------------------ SPARQL

    def store(self, predicates: Wanted | None) -> pyoxigraph.Store:
        """An in-memory pyoxigraph store of the triples wanted (all: None)."""
        found = self._stores.get(predicates)
        if found is None:
            import pyoxigraph as ox

            found = self._stores[predicates] = ox.Store()
            chunk: list[str] = []
            for line in self._lines(predicates):  # in chunks: the text is never whole
                chunk.append(line)
                if len(chunk) == CHUNK:
                    _load(found, chunk)
                    chunk.clear()
            _load(found, chunk)
        return found

    def _lines(self, predicates: Wanted | None) -> Iterable[str]:
        every, some = split_wanted(predicates)
        written: dict[Term, str] = {}  # each distinct object formatted once
        for s, by_predicate in self.spo.items():
            subject = None
            for p, objects in by_predicate.items():
                if predicates is None or p in every or p in some:
                    subject = subject or nt(s)
                    wanted = some.get(p)
                    for o in objects if wanted is None else (x for x in objects if x in wanted):
                        text = written.get(o)
                        if text is None:
                            text = written[o] = nt(o)
                        yield f"{subject} <{p}> {text} .\n"


def split_wanted(predicates: Wanted | None) -> tuple[set[str], dict[str, set[Term]]]:
    """The predicates whose every object a query reads, and the others with the objects
    it reads of them (`Wanted`: (predicate, None or one object IRI) pairs)."""
    every = {p for p, only in predicates or () if only is None}
    some: dict[str, set[Term]] = {}
    for p, only in predicates or ():
        if only is not None and p not in every:
            some.setdefault(p, set()).add(only)
    return every, some


def _load(store: pyoxigraph.Store, lines: list[str]) -> None:
    """Lines kg wrote from terms it had read (`nt`) into the store. Leniently: pyoxigraph
    then does not check the IRIs and language tags a second time, and pySHACL, the
    reference, does not refuse what the mapping let through either."""
    import pyoxigraph as ox

    store.bulk_load("".join(lines).encode(), format=ox.RdfFormat.N_TRIPLES, lenient=True)
