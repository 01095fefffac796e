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

Finer (decision 0049): a page shows a linked node's view only (`VIEW`: its type,
labels and URL), so a changed subject reaches the items reading its view only when the
view changed (the views are kept); a node linking into an owned node (`LINKER`), or a
changed subject now pointing at one (`OWNED`), makes its item a candidate, made only
when the lines linking into its nodes differ from the kept digest (`Item.links`).

The state is kept in signed entries of the render cache (tampered, foreign, or from
another tree: a full pass, as without it); it holds each item's key (so the cache
keeps its entry), its files' digests and its atoms, the index atom -> items, the
views' and records' digests to compare with the next build's, and the token of the
build's subject digest table (kg/graph/delta.py, decision 0057): the next build uses
the state only when its table was compared with that one, and reads what changed from
the table's `edits`. Atoms are small ints (a term's number and a kind), the index and
each item's atoms packed arrays, so the state pickles small and loads fast. The terms
known before the render's workers fork keep their numbers in every process
(`DirtyState.known`, decision 0064): a worker sends its atoms as numbers, and only the
others as text, which the parent numbers after every term known before; a cold build
first numbers every term an atom may name (the subjects by their place in the dump's
order, then the other IRIs and the records), so its workers send numbers only. It is kept
as a base and the deltas of the builds since (decision 0057: `save`), so a build after
a small change writes what it changed, not the whole state.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import os
import pickle
import struct
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, NamedTuple

from rdflib import URIRef
from rdflib.term import Node

from kg.cache import SignedCache, digest, unpickled
from kg.graph.delta import subject_node
from kg.graph.ntriples import nt_object
from kg.graph.triples import Triples
from kg.publish.fingerprint import (
    KINDS,
    LINKER,
    OWNED,
    READ,
    RECORD,
    SUBTREE,
    VIEW,
    Reads,
    SubjectChunks,
    Views,
)

__all__ = ["RECORD", "Deps", "DirtyState"]

STATE_KEY = digest("kg render: dirty items, version 6")  # its entry in the render cache


class Deps(NamedTuple):
    """What one item's files were made of, as a worker reports it: its key, its files'
    digests, its atoms (`kg.publish.fingerprint.Reads`): those the worker numbered
    (`DirtyState.known`: an array("I") of atom numbers) and the others as text, the
    digest of the lines linking into its owned nodes."""

    key: str
    files: dict[str, str]
    atoms: frozenset[str]
    links: bytes
    numbers: bytes = b""


def deps(key: str, files: dict[str, str], reads: Reads) -> Deps:
    """An item's `Deps` from what its key read: the numbered atoms packed."""
    atoms = reads.atoms
    numbers = array("I", [a for a in atoms if type(a) is int]).tobytes()
    return Deps(key, files, frozenset([a for a in atoms if type(a) is str]), reads.links, numbers)


def number_all(state: DirtyState, chunks: SubjectChunks, graph: Triples) -> None:
    """Number every term an atom of this build may name (`DirtyState.number_all`): the
    subjects (`chunks.texts`, in the dump's order), then the other IRIs linked to and
    the records, sorted."""
    term, subjects = chunks.term, chunks.digest
    others = [term(o) for o in graph.reverse() if o not in subjects]
    state.number_all(chunks.texts, sorted([*others, *(atom[1:] for atom in state.records)]))


class Item(NamedTuple):
    """One item as the state keeps it: `Deps` packed (atoms as numbers, digests as bytes)."""

    key: str
    paths: tuple[str, ...]
    digests: bytes  # 16 bytes per path
    links: bytes

    def files(self) -> dict[str, str]:
        d = self.digests
        return {path: d[16 * i : 16 * i + 16].hex() for i, path in enumerate(self.paths)}


class Index:
    """The index atom -> its readers (a packed array("I") of item numbers), kept packed
    (decision 0077): the atoms sorted in one array, their readers laid end to end in one
    bytes object, and the entries set since it was read in a dict beside them. Read
    back, it is three objects, not one int and one bytes per atom (1.6 million at 10k:
    0.3 CPU-s of unpickling); a build after an edit looks up the few atoms it reaches.
    Pickled, the entries set are merged in."""

    def __init__(self) -> None:
        self._atoms = array("I")  # sorted
        self._starts = array("Q", (0,))  # atom i's readers: _flat[_starts[i]:_starts[i + 1]]
        self._flat = b""
        self._fresh: dict[int, bytes] = {}  # set since it was packed (they win)
        self._added = 0  # of `_fresh`, the atoms not in `_atoms`

    def _at(self, atom: int) -> int:
        """The place of `atom` in `_atoms` (-1: not there)."""
        atoms = self._atoms
        at = bisect.bisect_left(atoms, atom)
        return at if at < len(atoms) and atoms[at] == atom else -1

    def get(self, atom: int, default: bytes | None = None) -> bytes | None:
        found = self._fresh.get(atom)
        if found is not None:
            return found
        atoms = self._atoms
        at = bisect.bisect_left(atoms, atom)
        if at == len(atoms) or atoms[at] != atom:
            return default
        return self._flat[self._starts[at] : self._starts[at + 1]]

    def __getitem__(self, atom: int) -> bytes:
        found = self.get(atom)
        if found is None:
            raise KeyError(atom)
        return found

    def __contains__(self, atom: object) -> bool:
        return atom in self._fresh or (type(atom) is int and self._at(atom) >= 0)

    def __setitem__(self, atom: int, readers: bytes) -> None:
        if atom not in self._fresh and self._at(atom) < 0:
            self._added += 1
        self._fresh[atom] = readers

    def fill(self, entries: Iterable[tuple[int, Numbers]]) -> None:
        """An empty index filled with `entries`, by atom (ascending, each once)."""
        assert not self, "filled already"
        atoms, sizes, flat = array("I"), array("Q"), []
        for atom, readers in entries:
            packed = readers.tobytes()
            atoms.append(atom)
            sizes.append(len(packed))
            flat.append(packed)
        self._atoms, self._flat = atoms, b"".join(flat)
        self._starts = array("Q", accumulate(sizes, initial=0))

    def put(self, atom: int, readers: bytes, held: bool) -> None:
        """`self[atom] = readers`, told whether the index holds `atom` (as `get` said):
        no second look-up."""
        if not held:
            self._added += 1
        self._fresh[atom] = readers

    def update(self, entries: Mapping[int, bytes] | Iterable[tuple[int, bytes]]) -> None:
        for atom, readers in entries.items() if isinstance(entries, Mapping) else entries:
            self[atom] = readers

    def __len__(self) -> int:
        return len(self._atoms) + self._added

    def items(self) -> Iterator[tuple[int, bytes]]:
        """Every entry, by atom."""
        fresh, atoms, starts, flat = self._fresh, self._atoms, self._starts, self._flat
        kept = ((a, flat[starts[i] : starts[i + 1]]) for i, a in enumerate(atoms) if a not in fresh)
        return heapq.merge(kept, sorted(fresh.items()))

    def __eq__(self, other: object) -> bool:  # the same entries (a dict's too; unhashable)
        if not isinstance(other, Index | dict):
            return NotImplemented
        return dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> tuple[array, array, bytes]:
        if not self._fresh:
            return self._atoms, self._starts, self._flat
        atoms, sizes, flat = array("I"), array("Q"), []
        for atom, readers in self.items():
            atoms.append(atom)
            sizes.append(len(readers))
            flat.append(readers)
        return atoms, array("Q", accumulate(sizes, initial=0)), b"".join(flat)

    def __setstate__(self, state: tuple[array, array, bytes]) -> None:
        self._atoms, self._starts, self._flat = state
        self._fresh, self._added = {}, 0
        if len(self._starts) != len(self._atoms) + 1 or self._starts[-1] != len(self._flat):
            raise TypeError("not an index")  # (`_unpacked`: not a state this module made)


@dataclass
class DirtyState:
    tree: str  # the output tree this state describes (the staging folder's name)
    globals: str  # digest of the settings (kg's code, the project's settings, registries)
    pages: frozenset[str]  # the path of every page
    table: str  # the token of the build's digest table (kg/graph/delta.py: `KeptTable`)
    records: dict[str, bytes]  # each record's digest, by its atom
    terms: list[str] = field(default_factory=list)  # an atom's text by its number // 8
    views: dict[int, bytes] = field(default_factory=dict)  # a node's number -> its view
    items: dict[str, Item] = field(default_factory=dict)
    index: Index = field(default_factory=lambda: Index())  # atom -> array("I") of items
    names: list[str] = field(default_factory=list)  # an item's name by its number
    ids: dict[str, int] = field(default_factory=dict, repr=False)  # not kept: made on load
    numbers: dict[str, int] = field(default_factory=dict, repr=False)  # not kept
    stale: int = 0  # items made again or gone since the index was made whole
    sizes: bytes = b""  # array("Q"): each subject's chunk size in the N-Triples dump
    dump: str = ""  # the dump's digest (its stamp's: `kg.publish.dumpfile`), for `olddump`
    saved: Saved | None = field(default=None, repr=False)  # as kept (`save`); not kept
    # not kept: `terms[:split]` and `terms[split:base]` are sorted and not in `ids` (a
    # cold build's: `number_all`)
    split: int = field(default=0, repr=False)
    base: int = field(default=0, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        skip = ("ids", "numbers", "saved", "split", "base")
        return {k: v for k, v in self.__dict__.items() if k not in skip}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.saved, self.split, self.base = None, 0, 0
        self.ids = {t: n for n, t in enumerate(self.terms)}
        self.numbers = {name: n for n, name in enumerate(self.names)}

    def number_all(self, subjects: list[str], others: list[str]) -> None:
        """Number these terms first, before any atom comes in (each list sorted, the
        two disjoint): a subject's number is its place in the dump's order. A cold
        build's workers then number their atoms themselves (`known`, decision 0064), by
        bisection: no table of the numbers is made, nor forked."""
        assert not self.terms, "numbered already"
        self.terms = [*subjects, *others]
        self.split, self.base = len(subjects), len(self.terms)

    def known(self, term: str) -> int | None:
        """A term's number, when it has one (None: the parent numbers it, `_number`)."""
        found = self.ids.get(term)
        if found is None and self.base:
            terms = self.terms
            for start, stop in ((0, self.split), (self.split, self.base)):
                at = bisect.bisect_left(terms, term, start, stop)
                if at < stop and terms[at] == term:
                    return at
        return found

    def atom(self, text: str) -> int | None:
        """An atom's number (None: no item read it)."""
        found = self.ids.get(text[1:])
        return None if found is None else found * 8 + KINDS[text[0]]

    def _number(self, text: str) -> int:
        found = self.known(text[1:])
        if found is None:
            found = self.ids[text[1:]] = len(self.terms)
            self.terms.append(text[1:])
        return found * 8 + KINDS[text[0]]

    def holders(self, atoms: Iterable[str]) -> set[str]:
        """The items that read any of `atoms`."""
        found: set[int] = set()
        index = self.index
        for text in atoms:
            n = self.atom(text)
            if n is not None and n in index:
                found.update(array("I", index[n]))
        names = self.names
        return {names[i] for i in found}

    def view(self, text: str) -> bytes | None:
        n = self.ids.get(text)
        return None if n is None else self.views.get(n)


@dataclass
class Made:
    """What the items a process made read (`Deps`), and the views they read that it
    did not report before (`kg.publish.fingerprint.Views`)."""

    items: dict[str, Deps] = field(default_factory=dict)
    views: Views = field(default_factory=Views)


def load(cache: SignedCache, tree: str | None, globals: str) -> DirtyState | None:
    """The previous build's state, when it describes `tree` and the same globals: its
    base with the deltas since applied (decision 0057)."""
    head = cache.get(STATE_KEY)
    if tree is None or not isinstance(head, Head) or (head.tree, head.globals) != (tree, globals):
        return None
    base = cache.get(head.base)
    if not (isinstance(base, tuple) and len(base) == 2 and base[0] == head.token):
        return None
    found = _unpacked(base[1])
    if not isinstance(found, DirtyState) or found.globals != globals:
        return None
    if not isinstance(head.deltas, tuple) or not all(_applied(found, d) for d in head.deltas):
        return None
    found.tree = tree
    found.table, found.stale, found.sizes, found.dump = head.tail
    found.saved = Saved(
        head.base,
        head.token,
        head.deltas,
        len(found.terms),
        len(found.names),
        found.records,
        found.pages,
    )
    if found.stale > len(found.items) // 4:  # the index holds too many atoms no longer read
        return None
    return found


class Reached(NamedTuple):
    """The items an edit reaches, and those it may reach: an item linked into by a
    changed subject is made only when its `Item.links` differ (`candidate`)."""

    items: set[str]
    candidates: set[str]


def dirty_items(
    old: DirtyState,
    new: DirtyState,
    graph: Triples,
    chunks: SubjectChunks,
    view: Callable[[Node], bytes],
    page_iri: Callable[[str], str],
    edits: Edits,
) -> Reached:
    """The items of `old` an edit reaches (the module's rule); the views of the changed
    subjects go to `old.views`. `edits`: the subjects whose digest changed since the
    table `old` was made with (`KeptTable.edits`), and that table's subjects, sorted."""
    records = new.records
    atoms = {a for a, d in records.items() if old.records.get(a) != d}
    atoms.update(a for a in old.records if a not in records)
    maybe = []
    for text in sorted(edits.subjects):
        s = _subject(text, chunks)
        maybe.append(LINKER + text)
        if s is None:  # gone
            atoms.update(kind + text for kind in (READ, VIEW))
            continue
        atoms.update(_reach(s, graph, chunks, not _holds(edits.order, text)))
        maybe += [OWNED + chunks.term(o) for o in _links(graph, s)]
        kept = old.view(text)
        if kept is not None and kept != (seen := view(s)):
            atoms.add(VIEW + text)
            old.views[old.ids[text]] = seen
            if old.saved is not None:
                old.saved.views.add(old.ids[text])
    moved = old.pages ^ new.pages
    if moved:
        atoms.update(_under(sorted(old.terms), [_iri(page_iri(path)) for path in moved]))
    found = old.holders(atoms)
    return Reached(found, old.holders(maybe) - found)


class Edits(NamedTuple):
    """The subjects (N-Triples texts) whose digest changed since the previous build's
    table, and that table's subjects, sorted (kg/graph/delta.py: `KeptTable`)."""

    subjects: frozenset[str]
    order: list[str]


def _subject(text: str, chunks: SubjectChunks) -> Node | None:
    """The subject of this build's graph with this text (None: not in it)."""
    node = subject_node(text)
    return node if node is not None and node in chunks.digest else None


def _holds(order: list[str], text: str) -> bool:
    at = bisect.bisect_left(order, text)
    return at < len(order) and order[at] == text


def _links(graph: Triples, s: Node) -> list[Node]:
    return [o for _, o in graph.predicate_objects(s) if isinstance(o, URIRef)]


def _iri(iri: str) -> str:
    """An IRI's N-Triples text, as the atoms hold it."""
    return nt_object(URIRef(iri))


def _under(terms: list[str], iris: list[str]) -> list[str]:
    """The `READ` and `VIEW` atoms of the nodes (`terms` sorted) at or under each IRI of
    `iris` (where a page links them may change when a page appears or goes)."""
    found = []
    for term in iris:
        under = [term]
        head = f"{term[:-1]}/"
        at = bisect.bisect_left(terms, head)
        while at < len(terms) and terms[at].startswith(head):
            under.append(terms[at])
            at += 1
        found += [kind + t for t in under for kind in (READ, VIEW)]
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


class Packing:
    """This build's state (`new`): the items made now and the others of `old`, the index
    updated for the items made or gone. The items made are packed as their parts come in
    (their atoms as text would keep a 10k build's parent ~1 GiB larger until the end);
    the index is updated once, at `finish` (per part, an atom read by every page would
    be merged hundreds of times).

    Invariant (decision 0054): what the parts add costs about four bytes per (atom,
    item) pair and no object per atom: each item made keeps its atoms' numbers as one
    packed array; `finish` counts each atom's readers, lays them out in one flat array
    (atom by atom, items in the order they came) and merges them into the index. An
    array per atom cost ~100 bytes each, millions at 10k.
    """

    def __init__(self, old: DirtyState | None, new: DirtyState) -> None:
        if old is not None:  # `old` itself stays as it is: the tasks still read it
            new.terms, new.ids, new.views = old.terms, old.ids, old.views
            new.items, new.index = dict(old.items), old.index
            new.names, new.numbers = old.names, old.numbers
            new.stale, new.saved = old.stale, old.saved
        self.state = new
        self._made: list[tuple[int, bytes]] = []  # each item made: its number, its atoms
        self._views: dict[int, bytes] = {}  # a node's number -> the view read now

    def add_made(self, fresh: dict[str, Deps]) -> None:
        new = self.state
        for name, deps in fresh.items():
            if new.items.pop(name, None) is not None:  # its old atoms stay: they only reach it
                new.stale += 1
            if new.saved is not None:
                new.saved.items.add(name)
            if name not in new.numbers:
                new.numbers[name] = len(new.names)
                new.names.append(name)
            atoms = deps.numbers
            if deps.atoms:  # those the worker could not number (each atom once)
                found = set(array("I", atoms))
                found.update(map(new._number, deps.atoms))
                atoms = array("I", sorted(found)).tobytes()
            self._made.append((new.numbers[name], atoms))
            paths = tuple(deps.files)
            digests = b"".join(bytes.fromhex(deps.files[p]) for p in paths)
            new.items[name] = Item(deps.key, paths, digests, deps.links)

    def add_views(self, views: dict[str, bytes] | Views) -> None:
        """The views the items of a part read (the last one read is kept): by the
        node's N-Triples text, or as a worker reports them (`Views`)."""
        number = self.state._number
        if isinstance(views, Views):
            self._add_views(views.numbered)
            views = views.texts
        self._add_views({number(READ + text) // 8: value for text, value in views.items()})

    def _add_views(self, views: dict[int, bytes]) -> None:
        self._views.update(views)
        if self.state.saved is None:  # a new base: no delta to keep the changed ones in
            return
        kept, touched = self.state.views, self.state.saved.views
        touched.update(n for n, value in views.items() if kept.get(n) != value)

    def _readers(self) -> Iterator[tuple[int, Numbers]]:
        """Each atom read now with the items that read it, in the order they came; by
        atom. After an edit (few pairs for many atoms) grouped by atom; else laid out in
        one flat array by each atom's count of readers."""
        made, self._made = self._made, []
        atoms = 8 * len(self.state.terms)  # the atoms' numbers are below
        if sum(len(a) for _, a in made) // 4 * 8 < atoms:
            return _grouped(made)
        return _laid_out(made, atoms)

    def finish(self, items: set[str]) -> DirtyState:
        """The state: without the items that are gone, with the views read."""
        new = self.state
        touched = new.saved.atoms if new.saved is not None else None
        _reindex(new.index, self._readers(), touched)
        for name in [i for i in new.items if i not in items]:
            del new.items[name]
            new.stale += 1
            if new.saved is not None:
                new.saved.items.add(name)
        new.views.update(self._views)
        self._views = {}
        return new


def _grouped(made: list[tuple[int, bytes]]) -> Iterator[tuple[int, array]]:
    """`Packing._readers` for a few pairs: a dict of the atoms read."""
    groups: dict[int, array] = {}
    for number, atoms in made:
        for atom in array("I", atoms):
            found = groups.get(atom)
            if found is None:
                groups[atom] = array("I", (number,))
            else:
                found.append(number)
    for atom in sorted(groups):
        yield atom, groups[atom]


def _laid_out(made: list[tuple[int, bytes]], atoms: int) -> Iterator[tuple[int, Numbers]]:
    """`Packing._readers` for many pairs: counted, then laid out in one flat array."""
    counts: Counter[int] = Counter()
    for _, read in made:  # each atom's count of readers (counted in C)
        counts.update(array("I", read))
    ends = array("I", bytes(4 * atoms))
    for atom, count in counts.items():
        ends[atom] = count
    starts = array("I", accumulate(ends, initial=0))  # where each atom's readers start
    readers = array("I", bytes(4 * starts[-1]))
    for number, read in made:  # ... and, once filled, where they end
        for atom in array("I", read):
            readers[starts[atom]] = number
            starts[atom] += 1
    start, view = 0, memoryview(readers)
    for atom in sorted(counts):  # the atoms read only (most numbers name none)
        end = start + counts[atom]
        yield atom, view[start:end]
        start = end


Numbers = array | memoryview  # an atom's readers: item numbers, format "I"


def _reindex(index: Index, add: Iterable[tuple[int, Numbers]], touched: set[int] | None) -> None:
    """Add each atom's new readers (`add`: each item once) to its packed array, those
    it holds already left out (a set: an organization's view has thousands of readers);
    the atoms whose array changed go to `touched` (None: into an empty index, none
    kept)."""
    if touched is None and not index:  # a new base (a cold build): every atom is new
        index.fill(add)
        return
    touched = set() if touched is None else touched
    for atom, numbers in add:
        old = index.get(atom)
        if old:
            missing = _missing(old, numbers)
            if missing:
                index.put(atom, old + array("I", missing).tobytes(), True)
                touched.add(atom)
        else:
            index.put(atom, numbers.tobytes(), old is not None)
            touched.add(atom)


def _missing(old: bytes, numbers: Numbers) -> list[int]:
    """The `numbers` not in the packed array `old`: after an edit, a few new readers of
    an atom that may have thousands (an organization's view) are looked for in its bytes
    (each a 4-byte word found at a multiple of 4), not in a set of all of them."""
    if len(numbers) * 64 > len(old):
        have = set(array("I", old))
        return [n for n in numbers if n not in have]
    return [n for n in numbers if not _word_in(old, n)]


def _word_in(packed: bytes, n: int) -> bool:
    """Whether the packed array("I") `packed` holds `n`."""
    word = _WORD.pack(n)
    at = packed.find(word)
    while at != -1:
        if at % 4 == 0:
            return True
        at = packed.find(word, at + 1)
    return False


_WORD = struct.Struct("=I")  # array("I")'s item, as `tobytes` writes it


@dataclass
class Saved:
    """How a loaded state is kept (decision 0057): its base entry and token, the deltas
    applied to it, and what the next delta is made from: the lengths of `terms` and
    `names`, the records and pages as loaded, and what changed since (the items made or
    gone, the index's atoms and the views set)."""

    base: str
    token: bytes
    deltas: tuple[Delta, ...]
    terms: int
    names: int
    records: dict[str, bytes]
    pages: frozenset[str]
    items: set[str] = field(default_factory=set)
    atoms: set[int] = field(default_factory=set)
    views: set[int] = field(default_factory=set)


class Delta(NamedTuple):
    """What one build changed in the state: each table's entries set and keys removed,
    the terms and names appended."""

    items: tuple[dict[str, Item], tuple[str, ...]]
    readers: dict[int, bytes]  # the index's entries set
    views: dict[int, bytes]
    terms: list[str]
    names: list[str]
    records: tuple[dict[str, bytes], tuple[str, ...]]
    pages: tuple[frozenset[str], frozenset[str]]  # added, removed

    def size(self) -> int:
        return len(self.items[0]) + len(self.readers) + len(self.views) + len(self.records[0])


class Head(NamedTuple):
    """The kept state's head: the tree and globals it describes, its base entry (with the
    token it was kept with), the deltas since, and the fields each build sets anew."""

    tree: str
    globals: str
    base: str
    token: bytes
    deltas: tuple[Delta, ...]
    tail: tuple[str, int, bytes, str]  # table, stale, sizes, dump


MOST_DELTAS = 16  # builds after a base before it is written whole again
MOST_CHANGED = 10  # ... or once the deltas hold more than 1/10 of the index's entries


def save(cache: SignedCache, state: DirtyState) -> list[str]:
    """Keep `state`: after a small change, as the deltas since its base (a head that
    names them); else a new base, pickled and compressed (its terms are IRIs: about
    four times smaller), and a head without deltas. The keys of the two entries, for
    the cache's prune."""
    saved = state.saved
    tail = (state.table, state.stale, state.sizes, state.dump)
    if saved is not None and len(saved.deltas) < MOST_DELTAS:
        deltas = (*saved.deltas, _delta(state, saved))
        if sum(d.size() for d in deltas) * MOST_CHANGED <= len(state.index):
            head = Head(state.tree, state.globals, saved.base, saved.token, deltas, tail)
            cache.put(STATE_KEY, head)
            return [STATE_KEY, saved.base]
    token = os.urandom(16)
    base = digest("kg render: dirty items' base", state.tree, state.globals, token.hex())
    cache.put(base, (token, _packed(state)))  # first the base, then the head naming it
    cache.put(STATE_KEY, Head(state.tree, state.globals, base, token, (), tail))
    return [STATE_KEY, base]


def _delta(state: DirtyState, saved: Saved) -> Delta:
    """What changed in `state` since it was loaded as `saved` says."""
    items = state.items
    records, pages = state.records, state.pages
    return Delta(
        ({n: items[n] for n in saved.items if n in items}, tuple(saved.items - items.keys())),
        {a: state.index[a] for a in saved.atoms},
        {n: state.views[n] for n in saved.views if n in state.views},
        state.terms[saved.terms :],
        state.names[saved.names :],
        (
            {a: d for a, d in records.items() if saved.records.get(a) != d},
            tuple(a for a in saved.records if a not in records),
        ),
        (pages - saved.pages, saved.pages - pages),
    )


def _applied(state: DirtyState, delta: object) -> bool:
    """Apply `delta` to `state` (False: not a delta this module made)."""
    if not isinstance(delta, Delta):
        return False
    items, gone = delta.items
    state.items.update(items)
    for name in gone:
        state.items.pop(name, None)
    state.index.update(delta.readers)
    state.views.update(delta.views)
    for text in delta.terms:
        state.ids[text] = len(state.terms)
        state.terms.append(text)
    for name in delta.names:
        state.numbers[name] = len(state.names)
        state.names.append(name)
    records, unrecorded = delta.records
    state.records.update(records)
    for atom in unrecorded:
        state.records.pop(atom, None)
    added, removed = delta.pages
    state.pages = (state.pages - removed) | added
    return True


def _packed(state: DirtyState) -> bytes:
    """`state` pickled and compressed as the pickler writes it, without its memo: the
    whole pickle and a table of every object in it (millions at 10k) are never held
    (decision 0054). The state holds no cycles; a shared object is written twice."""
    compressor = zlib.compressobj(1)
    out: list[bytes] = []

    class _Sink:
        def write(self, data: bytes) -> None:
            out.append(compressor.compress(data))

    pickler = pickle.Pickler(_Sink(), protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True  # no memo
    pickler.dump(state)
    out.append(compressor.flush())
    return b"".join(out)


def _unpacked(found: object) -> object:
    """The state `save` kept (the entry is signed: its pickle is this user's own)."""
    if not isinstance(found, bytes):
        return None
    try:
        return unpickled(zlib.decompress(found))  # the collector paused: a big state
    except (zlib.error, pickle.UnpicklingError, EOFError, AttributeError, TypeError):
        return None


def blake(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
