"""Which people and things an edit reaches: what their files read, kept between builds.

Invariant: an item (a profiled person, or a thing with a page) of the previous build
whose atoms did not change and that gains none has the key it had then, so its files
are the previous tree's: it is `Kept` without computing its key or reading the render
cache. The atoms of a key are what `kg.publish.fingerprint` reads to make it (see its
docstring): the N-Triples of the subjects it reads (`READ`), the nodes it owns
(`OWNED`: a subject that gains a link to one of them changes the item's description),
the nodes whose subtree it reads (`SUBTREE`: a new node minted under one of them joins
it), the resolved records behind it (`RECORD`). The rule, from the changes:

- a subject whose triples changed, or that was added or removed: every item that read
  it; when it is in the graph, every item owning a node it points at; when it is new,
  every item reading the subtree of one of its IRI's prefixes (`<a/b/c>`: `<a>`, `<a/b>`);
- a record whose digest changed (or that appeared or went): every item that read it;
- a page that appeared or went (the set of pages says where every link goes): every
  item that read a node at or under its IRI (whose link may now go elsewhere);
- kg's code, the project's settings and registries changed, or the state is not the
  previous tree's: every item (no state).

The state is a signed entry of the render cache (tampered, foreign, or from another
tree: a full pass, as without it); it holds each item's key (so the cache keeps its
entry), its files' digests and its atoms, the index atom -> items, and the subjects'
and records' digests to compare with the next build's.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from rdflib import URIRef
from rdflib.term import Node

from kg.cache import SignedCache, digest
from kg.graph.ntriples import nt_object
from kg.graph.triples import Triples
from kg.publish.fingerprint import LINKER, OWNED, READ, RECORD, SUBTREE, VIEW, SubjectChunks

__all__ = ["RECORD", "Deps", "DirtyState"]

STATE_KEY = digest("kg render: dirty items, version 2")  # its entry in the render cache


@dataclass
class Deps:
    """What one item's files were made of: its key, its files' digests, its atoms, the
    digest of the lines linking into its owned nodes (`Reads.links`)."""

    key: str
    files: dict[str, str]
    atoms: frozenset[str]
    links: bytes


@dataclass
class DirtyState:
    tree: str  # the output tree this state describes (the staging folder's name)
    globals: str  # digest of the settings (kg's code, the project's settings, registries)
    pages: frozenset[str]  # the path of every page
    subjects: dict[str, bytes]  # each subject's N-Triples digest, by its term's text
    records: dict[str, bytes]  # each record's digest, by its atom
    views: dict[str, bytes] = field(default_factory=dict)  # node's text -> its view's digest
    items: dict[str, Deps] = field(default_factory=dict)
    index: dict[str, set[str]] = field(default_factory=dict)  # atom -> items


@dataclass
class Made:
    """What the items a process made read (`Deps`), and the views they read."""

    items: dict[str, Deps] = field(default_factory=dict)
    views: dict[str, bytes] = field(default_factory=dict)

    def add(self, other: Made) -> None:
        self.items.update(other.items)
        self.views.update(other.views)


def subject_digests(chunks: SubjectChunks) -> dict[str, bytes]:
    memo = chunks.memo
    return {memo[s]: d for s, d in chunks.digest.items()}


def load(cache: SignedCache, tree: str | None, globals: str) -> DirtyState | None:
    """The previous build's state, when it describes `tree` and the same globals."""
    if tree is None:
        return None
    found = cache.get(STATE_KEY)
    if not isinstance(found, DirtyState) or found.tree != tree or found.globals != globals:
        return None
    return found


class Reached(NamedTuple):
    """The items an edit reaches, and those it may reach: an item linked into by a
    changed subject is made only when its `Deps.links` differ (`candidate`)."""

    items: set[str]
    candidates: set[str]


def dirty_items(
    old: DirtyState,
    new: DirtyState,
    graph: Triples,
    chunks: SubjectChunks,
    view: Callable[[Node], bytes],
    page_iri: Callable[[str], str],
) -> Reached:
    """The items of `old` an edit reaches (the module's rule); the views of the changed
    subjects go to `new.views`."""
    records = new.records
    atoms = {a for a, d in records.items() if old.records.get(a) != d}
    atoms.update(a for a in old.records if a not in records)
    before, index = old.subjects, old.index
    new.views = old.views
    gone = before.keys() - new.subjects.keys()
    atoms.update(kind + t for t in gone for kind in (READ, VIEW))
    maybe = [LINKER + t for t in gone]
    for s, d in chunks.digest.items():
        text = chunks.memo[s]
        if before.get(text) != d:
            atoms.update(_reach(s, graph, chunks, text not in before))
            maybe.append(LINKER + text)
            maybe += [OWNED + chunks.term(o) for o in _links(graph, s)]
            if VIEW + text in index and old.views.get(text) != (seen := view(s)):
                atoms.add(VIEW + text)
                new.views[text] = seen
    moved = old.pages ^ new.pages
    if moved:
        atoms.update(_under(sorted(index), [_iri(page_iri(path)) for path in moved]))
    found: set[str] = set()
    for atom in atoms:
        found.update(index.get(atom, ()))
    candidates = {item for atom in maybe for item in index.get(atom, ()) if item not in found}
    return Reached(found, candidates)


def _links(graph: Triples, s: Node) -> list[Node]:
    return [o for _, o in graph.predicate_objects(s) if isinstance(o, URIRef)]


def _iri(iri: str) -> str:
    """An IRI's N-Triples text, as the atoms hold it."""
    return nt_object(URIRef(iri))


def _under(atoms: list[str], terms: list[str]) -> list[str]:
    """The `READ` and `VIEW` atoms (`atoms` sorted) of the nodes at or under each IRI of
    `terms` (where a page links them may change when a page appears or goes)."""
    found = []
    for term in terms:
        for kind in (READ, VIEW):
            found.append(kind + term)
            head = f"{kind}{term[:-1]}/"
            at = bisect.bisect_left(atoms, head)
            while at < len(atoms) and atoms[at].startswith(head):
                found.append(atoms[at])
                at += 1
    return found


def _reach(s: Node, graph: Triples, chunks: SubjectChunks, new: bool) -> list[str]:
    """The atoms a changed subject touches for sure (its links out and in are
    candidates only: `dirty_items`)."""
    term = chunks.term
    found = [READ + term(s)]
    if new and isinstance(s, URIRef):
        iri = str(s)
        cut = iri.find("/")
        while cut != -1:
            found.append(SUBTREE + _iri(iri[:cut]))
            cut = iri.find("/", cut + 1)
    return found


def updated(
    old: DirtyState | None,
    new: DirtyState,
    fresh: dict[str, Deps],
    items: set[str],
    views: dict[str, bytes],
) -> DirtyState:
    """`new` with the items of this build: `fresh` (made now) and the others of `old`;
    the index updated for the items made or gone (the whole index without `old`)."""
    if old is None:
        kept: dict[str, Deps] = {}
        index: dict[str, set[str]] = {}
    else:
        kept, index = old.items, old.index
    for item in [i for i in kept if i in fresh or i not in items]:
        for atom in kept[item].atoms:
            holders = index.get(atom)
            if holders is not None:
                holders.discard(item)
                if not holders:
                    del index[atom]
        del kept[item]
    shared = {atom: atom for atom in index}  # one string per atom, so pickled once
    for item, deps in fresh.items():
        atoms = frozenset([shared.setdefault(atom, atom) for atom in deps.atoms])
        kept[item] = Deps(deps.key, deps.files, atoms, deps.links)
        for atom in atoms:
            index.setdefault(atom, set()).add(item)
    new.items, new.index = kept, index
    new.views.update(views)
    return new


def save(cache: SignedCache, state: DirtyState) -> None:
    cache.put(STATE_KEY, state)


def blake(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
