"""`Triples`: the pipeline's in-memory graph, a set of RDF triples indexed by subject.

rdflib's Memory store keeps three context-aware indexes and costs about 10 µs and a
couple of kilobytes per triple; the pipeline only needs to add triples, walk them by
subject and, for page markup and per-person files, find who points at a node. This
class does that with plain dictionaries (about 3x faster to fill, a third of the memory)
and turns into an rdflib `Graph` on demand for SPARQL, publishing and tests.
The terms are rdflib's, so writers and tests see the same values either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rdflib import Graph, URIRef
from rdflib.term import Node

from kg.graph.namespaces import PREFIXES

Triple = tuple[Node, Node, Node]
Objects = tuple[Node] | dict[Node, None]  # see Triples


class Triples:
    """A set of triples: subject -> predicate -> objects, plus a lazy reverse index.

    A predicate's objects are, in the order they were added, a 1-tuple when there is one
    (nine in ten: a dict costs four times the memory), else the keys of a dict (an
    insertion-ordered set: membership is a hash lookup, where a list made adding to a
    node with many objects quadratic). Either is a read-only collection to callers.
    """

    def __init__(self, triples: Iterable[Triple] = ()) -> None:
        self._spo: dict[Node, dict[Node, Objects]] = {}
        # IRI object -> its subjects and predicates, interleaved (s1, p1, s2, p2, ...):
        # a list of pairs would cost a tuple per triple
        self._reverse: dict[Node, list[Node]] | None = None
        self._size = 0
        for triple in triples:
            self.add(triple)

    def add(self, triple: Triple) -> bool:
        """Add `triple`; whether it was not there yet."""
        s, p, o = triple
        predicates = self._spo.get(s)
        if predicates is None:
            predicates = self._spo[s] = {}
        objects = predicates.get(p)
        if objects is None:  # most predicates of a node have one object: a 1-tuple
            predicates[p] = (o,)
        elif o in objects:
            return False
        elif isinstance(objects, dict):
            objects[o] = None
        else:
            predicates[p] = {objects[0]: None, o: None}
        self._size += 1
        if self._reverse is not None and isinstance(o, URIRef):
            self._reverse.setdefault(o, []).extend((s, p))
        return True

    def discard(self, triple: Triple) -> None:
        """Remove `triple` if it is there (the reverse index is rebuilt on next use)."""
        s, p, o = triple
        predicates = self._spo.get(s)
        objects = predicates.get(p) if predicates is not None else None
        if objects is None or o not in objects:
            return
        if isinstance(objects, dict) and len(objects) > 1:
            del objects[o]
            if len(objects) == 1:
                predicates[p] = (next(iter(objects)),)  # type: ignore[index]
        else:
            del predicates[p]  # type: ignore[union-attr]
            if not predicates:
                del self._spo[s]
        self._size -= 1
        self._reverse = None

    def parts(self, size: int) -> list[dict[Node, dict[Node, Objects]]]:
        """The subjects with their predicates, in pieces of about `size` triples (to
        pickle a large graph in several entries; `from_parts` joins them)."""
        found: list[dict[Node, dict[Node, Objects]]] = [{}]
        count = 0
        for s, predicates in self._spo.items():
            if count >= size:
                found.append({})
                count = 0
            found[-1][s] = predicates
            count += len(predicates)
        return found

    @classmethod
    def from_parts(cls, parts: Iterable[dict[Node, dict[Node, Objects]]], size: int) -> Triples:
        """The graph of `size` triples whose `parts` these are (their dicts are taken,
        not copied)."""
        made = cls()
        for part in parts:
            made._spo.update(part)
        made._size = size
        return made

    def take(self, s: Node, predicates: dict[Node, Objects]) -> None:
        """Add every triple of `s` in `predicates` (another `Triples`' `describe(s)`),
        at once when this set has none of `s`: its 1-tuples are shared, its dicts copied."""
        if s in self._spo or self._reverse is not None or not predicates:
            for p, objects in predicates.items():
                for o in objects:
                    self.add((s, p, o))
            return
        self._spo[s] = {p: o if isinstance(o, tuple) else dict(o) for p, o in predicates.items()}
        self._size += sum(map(len, predicates.values()))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Triple]:
        for s, predicates in self._spo.items():
            for p, objects in predicates.items():
                for o in objects:
                    yield s, p, o

    def __contains__(self, triple: Triple) -> bool:
        s, p, o = triple
        return o in self._spo.get(s, {}).get(p, ())

    # ------------------------------------------------------------ lookups (rdflib's names)

    def subjects(self, predicate: Node | None = None, obj: Node | None = None) -> Iterator[Node]:
        if predicate is None and obj is None:
            yield from self._spo
            return
        if obj is not None:
            seen = set()
            for s, p in self.subject_predicates(obj):
                if (predicate is None or p == predicate) and s not in seen:
                    seen.add(s)
                    yield s
            return
        for s, predicates in self._spo.items():
            if predicate in predicates:
                yield s

    def objects(self, subject: Node | None = None, predicate: Node | None = None) -> Iterator[Node]:
        if subject is None:
            for predicates in self._spo.values():
                if predicate is None:
                    for objects in predicates.values():
                        yield from objects
                else:
                    yield from predicates.get(predicate, ())
            return
        predicates = self._spo.get(subject, {})
        if predicate is not None:
            yield from predicates.get(predicate, ())
            return
        for objects in predicates.values():
            yield from objects

    def value(self, subject: Node, predicate: Node) -> Node | None:
        objects = self._spo.get(subject, {}).get(predicate)
        return next(iter(objects)) if objects else None

    def predicate_objects(self, subject: Node) -> Iterator[tuple[Node, Node]]:
        for p, objects in self._spo.get(subject, {}).items():
            for o in objects:
                yield p, o

    def subject_predicates(self, obj: Node) -> Iterator[tuple[Node, Node]]:
        """Who points at `obj` (IRIs only: literals are not indexed)."""
        pointers = iter(self.reverse().get(obj, ()))
        yield from zip(pointers, pointers, strict=True)

    def by_subject(self) -> Iterator[tuple[Node, dict[Node, Objects]]]:
        """Each subject with its predicates and objects (read-only views)."""
        return iter(self._spo.items())

    def remove_subjects(self, subjects: set[Node]) -> None:
        """Forget every triple whose subject is one of `subjects`."""
        for s in subjects & self._spo.keys():
            self._size -= sum(map(len, self._spo.pop(s).values()))
        self._reverse = None  # rebuilt on next use

    def describe(self, subject: Node) -> dict[Node, Objects]:
        """One subject's predicates and objects (a read-only view; see the class)."""
        return self._spo.get(subject, {})

    def reverse(self) -> dict[Node, list[Node]]:
        """IRI object -> its subjects and predicates, interleaved; built on first use
        (`subject_predicates` reads it as pairs)."""
        if self._reverse is None:
            reverse: dict[Node, list[Node]] = {}
            for s, p, o in self:
                if isinstance(o, URIRef):
                    reverse.setdefault(o, []).extend((s, p))
            self._reverse = reverse
        return self._reverse

    def namespaces(self) -> Iterator[tuple[str, URIRef]]:
        for prefix, ns in PREFIXES.items():
            yield prefix, URIRef(str(ns))

    def to_graph(self) -> Graph:
        """The same triples as an rdflib Graph with the project prefixes bound."""
        graph = Graph(bind_namespaces="none")
        for prefix, ns in PREFIXES.items():
            graph.bind(prefix, ns)
        graph.addN((s, p, o, graph) for s, p, o in self)
        return graph


GraphLike = Graph | Triples
"""What the read-only consumers (writers, page markup, the site) accept."""
