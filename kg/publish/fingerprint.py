"""What each rendered item depends on, as one digest: the key of its cached files.

An incremental build renders a person's files, or a thing's, again only when something
its files can show changed. What the renderers read, and the key therefore covers:

- the item's description (`described`/`person_subset`: its own nodes, what points at
  them, the type, name and URL of every node they reach), as N-Triples;
- for every node of the description, the facts any page may show of a linked node
  (types, names, title, label, URL) and where it links to (its page or its owner's),
  and the same facts of that owner;
- every node the page markup walks in full: the works of a person and the nodes
  minted under them, the nodes minted under a thing;
- for people and publications, the resolved records behind the page and the BibTeX
  (the profile, the publications, their citation keys, the co-authors' records);
- kg's code and templates, the project's settings, templates and registries.

An edit elsewhere leaves the key unchanged. Everything global (the dumps, the indexes,
the dataset description) is rendered on every build. tests/test_incremental.py checks
that builds after edits of each kind are byte-identical to a cold build.
"""

from __future__ import annotations

import bisect
import hashlib
import mmap
import pickle
import sys
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import filterfalse
from typing import NamedTuple, Protocol

from rdflib import URIRef
from rdflib.term import Node

from kg import scheme
from kg.cache import digest, package_digest
from kg.change import Change
from kg.config import Config
from kg.graph.delta import Chunks, Table
from kg.graph.namespaces import RDF, SCHEMA
from kg.graph.ntriples import nt_object, subject_block
from kg.graph.triples import Triples
from kg.model import Profile
from kg.publish.markup import works_of
from kg.publish.site import LABELS
from kg.resolve.identity import PublicationEntity, Resolution

# What a page shows of a node it links to: its label (the site's LABELS), its types and
# URL (site kinds, markup references).
LINK_FACTS = (RDF.type, SCHEMA.url, *LABELS)


class ByteSink(Protocol):
    def write(self, data: bytes, /) -> int: ...


class OldDump(Protocol):
    """The previous build's N-Triples dump, where it can give subjects' chunks back."""

    sizes: array  # each old subject's chunk size, in the old order

    def runs(self, keys: list[str]) -> list[tuple[int, int, int]]: ...  # unchanged runs
    def write(self, start: int, stop: int, sink: ByteSink) -> None: ...  # old chunks' bytes


class SubjectChunks:
    """Each subject's N-Triples lines, sorted, and their digest. The sorted dump is
    these chunks in the order of the subjects' N-Triples text (IRIs end in `>`, which no
    IRI holds, so no subject's text is a prefix of another's).

    With a `sink` (a binary file), the chunks are written to it in that order as they
    are made and not kept: the dump is never a string in memory (at 10k people it is
    about 400 MB, in the parent and in every forked worker). With the build's digest
    `table` (kg/graph/delta.py: decisions 0049 and 0057), no digest is made again; with
    an `old` dump too, a subject whose digest is the same is copied from it, not
    formatted; with the digest walk's `kept` chunks, its order of the subjects is taken.
    `sizes`: each chunk's size in bytes, in order (where the next build finds it)."""

    def __init__(
        self,
        graph: Triples,
        sink: ByteSink | None = None,
        table: Table | None = None,
        old: OldDump | None = None,
        kept: Chunks | None = None,
    ) -> None:
        self.memo: dict[Node, str] = table.memo if table is not None else {}  # terms' texts
        self.text: dict[Node, str] | None = {} if sink is None else None
        self.digest: dict[Node, bytes] = {}
        self.order, self._keys = self._subject_texts(graph, table is not None, kept)
        self.sizes = array("Q")
        digests = table.digests if table is not None else {}
        at = 0
        if old is not None and sink is not None:  # unchanged runs copied (decision 0057)
            for start, stop, first in old.runs(self._keys):
                self._format(graph, at, start, digests, sink)
                self.sizes.extend(old.sizes[first : first + stop - start])
                found = map(digests.__getitem__, self._keys[start:stop])
                self.digest.update(zip(self.order[start:stop], found, strict=True))
                old.write(first, first + stop - start, sink)
                at = stop
        self._format(graph, at, len(self.order), digests, sink)
        # every distinct term of the graph (the memo grows later; with a patched table,
        # the re-digested subjects' terms only: kg/graph/delta.py's `KeptTable.prefixes`)
        self.terms = table.terms if table is not None else tuple(self.memo)

    def _format(
        self,
        graph: Triples,
        start: int,
        stop: int,
        digests: dict[str, bytes],
        sink: ByteSink | None,
    ) -> None:
        """Format the chunks of subjects `start` to `stop` (in `order`): kept as text, or
        written to `sink`."""
        memo, found, sizes, kept = self.memo, self.digest, self.sizes, self.text
        blake2b = hashlib.blake2b
        texts = zip(self._keys[start:stop], self.order[start:stop], strict=True)
        for head, s in texts:
            data = subject_block(head, graph.describe(s), memo).encode()
            found[s] = digests.get(head) or blake2b(data, digest_size=16).digest()
            sizes.append(len(data))
            if sink is not None:
                sink.write(data)
            else:
                kept[s] = data.decode()  # type: ignore[index]

    def _subject_texts(
        self, graph: Triples, checked: bool, kept: Chunks | None = None
    ) -> tuple[list[Node], list[str]]:
        """The subjects sorted by their N-Triples texts, and those texts (`kept`: as the
        digest walk sorted them). `checked`: each
        subject's IRI was formatted (so checked) by a walk or patch of the build's digest
        table, and `<iri>` is its text (decision 0057: rdflib's check costs more than the
        text). Sorted by the memo's texts (decision 0061: half the time of sorting pairs;
        the texts differ, so no two subjects are compared)."""
        memo = self.memo
        subjects = list(graph.subjects())
        if kept is not None and len(kept.order) == len(subjects):  # the walk's (0071)
            return kept.order, kept.texts
        for s in filterfalse(memo.__contains__, subjects):
            memo[s] = f"<{s}>" if checked and type(s) is URIRef else nt_object(s)
        order = sorted(subjects, key=memo.__getitem__)
        return order, list(map(memo.__getitem__, order))

    @property
    def texts(self) -> list[str]:
        """Each subject's N-Triples text, in `order` (sorted)."""
        return self._keys

    def term(self, t: Node) -> str:
        text = self.memo.get(t)
        if text is None:
            text = self.memo[t] = nt_object(t)
        return text

    def under(self, node: Node) -> tuple[int, int]:
        """The slice of `order` holding the nodes minted under `node` (`<node/…>`)."""
        if not isinstance(node, URIRef):
            return 0, 0
        head = f"<{node}/"
        return bisect.bisect_left(self._keys, head), bisect.bisect_left(self._keys, head[:-1] + "0")

    def ntriples(self) -> str:
        """The whole graph as sorted N-Triples (what `to_ntriples` gives, without a sort
        of every line); not when the chunks went to a sink."""
        assert self.text is not None, "the chunks were written to a file"
        return "".join(self.text[s] for s in self.order)


class Fingerprints:
    """Keys for the cached files of people and things (see the module's docstring).

    A key is a digest of a few parts, each the concatenation of fixed-size digests made
    once per process or once per build: each subject's triples (`SubjectChunks.digest`),
    each reached node's line, each resolved record (made here, in the parent, before
    the render's workers fork), so the key of an item costs about one hash of
    16 bytes per node it depends on. What a key read (`Reads`) is numbered as the
    build's state numbers it (`number`, decision 0064): a reached node's line is kept
    with its view atoms, a subtree with its atoms, once per process."""

    def __init__(
        self,
        config: Config,
        resolution: Resolution,
        graph: Triples,
        chunks: SubjectChunks,
        href: Callable[[str], str],
        citation_keys: dict[str, str],
        settings: str | None = None,
        kept: KeptRecords | None = None,
    ) -> None:
        self.config = config
        self.r = resolution
        self.graph = graph
        self.chunks = chunks
        self.href = href
        self._views: dict[Node, bytes] = {}  # `view`'s (read by the dirty items)
        self._views_seen: dict[Node, tuple[bytes, Atom]] = {}  # `_seen`'s
        # each reached node's line digest, then the `VIEW` atoms of it and of its owner
        # (`_reached_line`): 24 bytes, where a tuple would cost ~100 more per node
        self._reached: dict[Node, bytes] = {}
        self._unnumbered: dict[Node, tuple[Atom, Atom]] = {}  # ... those with a text atom
        # a term's number, when the build's state numbered it before the workers forked
        # (`kg.publish.dirty.DirtyState.known`); None: the parent numbers its atoms
        self.number: Callable[[str], int | None] = _unknown
        self.ordered = False  # a subject's number is its place in `chunks.order`
        self._terms = 0  # the terms numbered before the fork (`numbered`)
        self._lines: mmap.mmap | None = None  # reached lines by their node's number
        self.fresh = Views()  # the views this process read and has not reported yet
        self._pubs: dict[str, tuple[bytes, tuple[Atom, ...]]] = {}
        self._subtrees: dict[Node, tuple[bytes, list[Atom], Iterable[Atom]]] = {}
        # ... those whose atoms are all numbers, packed (kept across `forget`: 0072)
        self._kept_pubs: dict[str, bytes] = {}
        self._kept_subtrees: dict[Node, bytes] = {}
        self.citation_keys = citation_keys
        # once, before any fork: every worker would otherwise make its own
        self.settings = settings or settings_digest(config, resolution)
        self._records = _record_digests(resolution, kept)

    def _description(self, owned: set[Node], reads: Reads) -> tuple[bytes, bytes, bytes]:
        """What `described(graph, owned)` holds, and of each node in it what a page may
        show when linking it, without building the description: the owned nodes'
        whole-graph digests, the links into them, and the reached nodes' lines. What was
        read goes to `reads` (`kg.publish.dirty`): the owned nodes' triples, the nodes
        linking in (as candidates: their lines are in `reads.links`), the views of the
        reached nodes and of their owners (a page shows a linked node's view only; the
        views themselves go to `fresh`, once per node and process).

        Each part is a set of fixed-size digests, joined in the order of their bytes
        (decision 0072): a subject's digest covers its N-Triples text and a reached
        node's line its IRI, so the sorted digests name the same nodes as the nodes
        sorted by their texts did, without a term looked up per node."""
        graph, facts = self.graph, self.chunks.digest
        links, linkers = self.links_in(owned, owned)
        reached: set[Node] = set(owned) | linkers
        for s in owned:
            for objects in graph.describe(s).values():
                reached.update([o for o in objects if type(o) is URIRef])
        memo = self._reached
        lines = [memo.get(n) or self._reached_line(n) for n in reached]
        lines.sort()
        found = (
            b"".join(sorted([facts.get(s, _NONE) for s in owned])),
            links,
            b"".join([line[:16] for line in lines]),
        )
        reads.links = links
        atoms = reads.atoms
        views = array("I", b"".join([line[16:] for line in lines]))
        atoms.update(views)
        if NO_NUMBER in atoms:
            atoms.discard(NO_NUMBER)
            for n in reached & self._unnumbered.keys():
                atoms.update(self._unnumbered[n])
        self._same_node(owned, (OWNED, READ), atoms)  # each reached: its VIEW atom says how
        self._same_node(linkers, (LINKER,), atoms)
        return found

    def forget(self) -> None:
        """Empty this process's memos of views, reached lines (with their atoms), works
        and subtrees (pure memos: made again when read; decision 0067). The views read
        and not reported yet (`fresh`) stay, and so do the numbered reached lines
        (`_lines`: no object each, no arena kept half used; decision 0072)."""
        memos = (self._views, self._views_seen, self._reached, self._unnumbered, self._pubs)
        for memo in (*memos, self._subtrees):
            memo.clear()

    def _same_node(self, nodes: Iterable[Node], kinds: tuple[str, ...], atoms: set[Atom]) -> None:
        """The atoms of these kinds of `nodes` (reached nodes) go to `atoms`, numbered as
        their `VIEW` atoms are (`_reached_line`)."""
        shifts = [KINDS[kind] - KINDS[VIEW] for kind in kinds]
        reached, unnumbered = self._reached, self._unnumbered
        for node in nodes:
            view = int.from_bytes(reached[node][16:20], sys.byteorder)
            if view != NO_NUMBER:
                atoms.update([view + shift for shift in shifts])
                continue
            text = unnumbered[node][0]
            if isinstance(text, int):
                atoms.update([text + shift for shift in shifts])
            else:
                atoms.update([kind + text[1:] for kind in kinds])

    def numbered(self, number: Callable[[str], int | None], ordered: bool, terms: int = 0) -> None:
        """Number atoms with `number` from now on (`kg.publish.dirty.DirtyState.known`);
        `ordered`: it numbers each subject by its place in `chunks.order`, and `terms`
        terms in all (then each process keeps its reached lines by number: `_lines`)."""
        self.number, self.ordered = number, ordered
        self._terms = terms if ordered else 0
        # made before the render's workers fork, shared by them (decision 0072)
        self._lines = mmap.mmap(-1, SLOT * self._terms) if self._terms else None

    def __getstate__(self) -> dict[str, object]:
        """As pickled for a dask worker: without the `_lines` of this machine's processes."""
        return {**self.__dict__, "_lines": None}

    def _kept_line(self, node: Node) -> tuple[int | None, bytes | None]:
        """`node`'s number (None: it has none) and its reached line when a process of
        this build made it before (`_lines`: kept across `forget`; decision 0072)."""
        if not self._terms:
            return None, None
        n = self._term_number(self.chunks.memo.get(node) or self.chunks.term(node))
        if n is None or n >= self._terms:
            return None, None
        if self._lines is None:  # a dask worker's: its own
            self._lines = mmap.mmap(-1, SLOT * self._terms, flags=mmap.MAP_PRIVATE)
        slot = self._lines[SLOT * n : SLOT * n + SLOT]
        line = slot[:LINE]
        if line[16:20] == _UNMADE or _check(line) != slot[LINE:]:
            return n, None  # not made yet, or being written by another process
        return n, line

    def _term_number(self, text: str) -> int | None:
        """A term's number: a subject's place in the dump's order, else `number`'s."""
        if self.ordered:
            texts = self.chunks.texts
            at = bisect.bisect_left(texts, text)
            if at < len(texts) and texts[at] == text:
                return at
        return self.number(text)

    def _atoms(self, node: Node, *kinds: str) -> list[Atom]:
        """`node`'s atoms of these kinds: numbered (`number`) when its term has a number."""
        return self._atoms_of((node,), *kinds)

    def _atoms_of(self, nodes: Iterable[Node], *kinds: str) -> list[Atom]:
        found: set[Atom] = set()
        self._add_atoms(nodes, kinds, found)
        return list(found)

    def _add_atoms(self, nodes: Iterable[Node], kinds: tuple[str, ...], atoms: set[Atom]) -> None:
        """The atoms of these kinds of `nodes` go to `atoms` (see `_atoms`)."""
        term, number, texts = self.chunks.term, self.number, self.chunks.texts
        codes = [KINDS[kind] for kind in kinds]
        last = len(texts) - 1
        for node in nodes:
            text = term(node)
            n: int | None = None
            if self.ordered:  # a subject: found in the dump's order, else by `number`
                at = bisect.bisect_left(texts, text)
                n = at if at <= last and texts[at] == text else None
            if n is None:
                n = number(text)
            if n is None:
                atoms.update([kind + text for kind in kinds])
            else:
                atoms.update([8 * n + code for code in codes])

    def links_in(self, own: Iterable[Node], owned: set[Node]) -> tuple[bytes, set[Node]]:
        """The digest of the lines linking into the `owned` nodes (`own`: them, in any
        order: the lines are sorted) from outside, and the nodes they come from."""
        term, known, graph = self.chunks.term, self.chunks.memo.get, self.graph
        links = []
        linkers: set[Node] = set()
        for s in own:
            text = term(s)
            for s2, p in graph.subject_predicates(s):
                if s2 not in owned:
                    links.append(f"{known(s2) or term(s2)} {known(p) or term(p)} {text}")
                    linkers.add(s2)
        return _text_digest("\n".join(sorted(links))), linkers

    def _reached_line(self, node: Node) -> bytes:
        """What a description shows of a node it reaches: its view, where it links to
        (the node itself, or the page of its owner) and that owner's view; and the
        `VIEW` atoms of the two. Once per node and build in a cold build (`_lines`), else
        once per node and process (an organization or a venue
        is reached from thousands of pages); the views go to `fresh` then."""
        n, kept_line = self._kept_line(node)
        if kept_line is not None:
            self._reached[node] = kept_line
            return kept_line
        iri = str(node)
        link = self.href(iri)
        seen, atom = self._seen(node)
        if link == iri:
            kept, owned = seen, atom
        else:
            kept, owned = self._seen(URIRef(scheme.mint(self.config.base_iri, link)))
        line = seen + kept + f"{iri}\t{link}".encode("utf-8", "surrogatepass")
        if isinstance(atom, str) or isinstance(owned, str):
            self._unnumbered[node] = atom, owned
            numbers = array("I", (NO_NUMBER, NO_NUMBER))
        else:
            numbers = array("I", (atom, owned))
        digested = hashlib.blake2b(line, digest_size=16).digest()
        found = self._reached[node] = digested + numbers.tobytes()
        if n is not None and self._lines is not None and numbers[0] != NO_NUMBER:
            self._lines[SLOT * n : SLOT * n + SLOT] = found + _check(found)
        return found

    def _seen(self, node: Node) -> tuple[bytes, Atom]:
        """`node`'s view and `VIEW` atom, once per node and process (an owner's page is
        linked by every node minted under it); its view goes to `fresh` then."""
        found = self._views_seen.get(node)
        if found is None:
            view = self._views.get(node) or self._view(node)
            found = self._views_seen[node] = view, self._view_atom(node, view)
        return found

    def _view_atom(self, node: Node, view: bytes) -> Atom:
        """`node`'s `VIEW` atom; its view goes to `fresh`."""
        text = self.chunks.memo.get(node) or self.chunks.term(node)
        n = self._term_number(text)
        if n is None:
            self.fresh.texts[text] = view
            return VIEW + text
        self.fresh.numbered[n] = view
        return 8 * n + KINDS[VIEW]

    def view(self, node: Node) -> bytes:
        """The facts of `node` that a page linking to it may show."""
        found = self._views.get(node)
        if found is None:
            found = self._views[node] = self._view(node)
        return found

    def _view(self, node: Node) -> bytes:
        facts, memo, term = self.graph.describe(node), self.chunks.memo, self.chunks.term
        lines = []
        for p in LINK_FACTS:
            objects = facts.get(p)
            if objects:
                lines += [f"{p}\t{memo.get(o) or term(o)}" for o in objects]
        lines.sort()
        return _text_digest("\n".join(lines))

    def _subtree(self, node: Node, reads: Reads) -> bytes:
        """The whole-graph digests of `node` and of every node minted under it (once
        per node and process: a work's subtree is read by each of its authors). Packed
        when its atoms are numbers, and then kept across `forget` (decision 0072)."""
        packed = self._kept_subtrees.get(node)
        if packed is not None:
            head = array("I", packed[:16])  # node's two atoms, the range of those under it
            reads.atoms.update(head[:2])
            reads.atoms.update(range(head[2], head[3], 8))
            return packed[16:]
        found = self._subtrees.get(node)
        if found is None:
            found = self._made_subtree(node)
            own, under = found[1], found[2]
            if len(own) == 2 and isinstance(under, range) and _numbers(own):
                head = array("I", [*own, under.start, under.stop])  # type: ignore[list-item]
                self._kept_subtrees[node] = head.tobytes() + found[0]
            else:
                self._subtrees[node] = found
        for atoms in found[1:]:
            reads.atoms.update(atoms)
        return found[0]

    def _made_subtree(self, node: Node) -> tuple[bytes, list[Atom], Iterable[Atom]]:
        """`_subtree`'s digests, and its atoms: `node`'s, those of the nodes under it."""
        digests = self.chunks.digest
        first, last = self.chunks.under(node)
        under = self.chunks.order[first:last]
        read: Iterable[Atom]
        if self.ordered:  # their numbers are their places
            read = range(8 * first + KINDS[READ], 8 * last, 8)
        else:
            read = self._atoms_of(under, READ)
        found = b"".join([digests.get(node, _NONE), *(digests[s] for s in under)])
        return found, self._atoms(node, SUBTREE, READ), read

    def _publication(self, pub: PublicationEntity, reads: Reads) -> bytes:
        """The resolved record, its citation key and its authors' records: each one's
        name, and of a profiled one the names its citation prints (`author`), not the
        whole profile: an edit of a profile reaches its own files, not those of every
        co-author's work (decision 0078). Once per publication and process."""
        packed = self._kept_pubs.get(pub.key)
        if packed is not None:  # its digest, then its atoms
            reads.atoms.update(array("I", packed[16:]))
            return packed[:16]
        found = self._pubs.get(pub.key)
        if found is None:
            records = self._records
            people = [slot.person for slot in pub.authors if slot.person]
            authors = [
                part
                for person in people
                for part in (
                    records.get(record_atom("name", person), _NONE),
                    records.get(record_atom("author", person), _NONE),
                )
            ]
            record = records.get(record_atom("publication", pub.key)) or record_digest(pub)
            key = self.citation_keys.get(pub.key, "").encode()
            read = [record_atom("publication", pub.key), record_atom("cite", pub.key)]
            read += [record_atom(kind, p) for p in people for kind in ("name", "author")]
            made = _text_digest(digest(record, key, *authors))
            atoms = tuple(map(self.record, read))
            if _numbers(atoms):  # packed, and kept across `forget` (decision 0072)
                self._kept_pubs[pub.key] = made + array("I", atoms).tobytes()  # type: ignore[type-var]
                reads.atoms.update(atoms)
                return made
            found = self._pubs[pub.key] = (made, atoms)
        reads.atoms.update(found[1])
        return found[0]

    def work(self, pub: PublicationEntity) -> bytes:
        """The digest of what a work's citation and its entries on a person's page are
        made of, but the settings: its record, citation key and authors' records
        (`_publication`; once per publication and process). A hub's kept entries are
        found by it (decision 0078)."""
        return self._publication(pub, Reads())

    def record(self, atom: str) -> Atom:
        """A `RECORD` atom, numbered when its term has a number."""
        n = self.number(atom[1:])
        return atom if n is None else 8 * n + KINDS[RECORD]

    def thing(
        self,
        thing: URIRef,
        owned: set[Node],
        pub: PublicationEntity | None,
        reads: Reads | None = None,
    ) -> str:
        """A thing's key; what it was made of goes to `reads`."""
        reads = Reads() if reads is None else reads
        return digest(
            self.settings,
            "thing",
            str(thing),
            *self._description(owned, reads),
            self._subtree(thing, reads),
            self._publication(pub, reads) if pub is not None else b"",
        )

    def person(
        self,
        profile: Profile,
        owned: set[Node],
        works: list[PublicationEntity],
        reads: Reads | None = None,
    ) -> str:
        """A profiled person's key; what it was made of goes to `reads`."""
        reads = Reads() if reads is None else reads
        source = profile.source.file if profile.source else ""
        person = URIRef(scheme.person(self.config.base_iri, profile.slug))
        records = self._records
        read = ("profile", profile.slug), ("name", profile.slug), ("refs", source)
        reads.atoms.update([self.record(record_atom(*r)) for r in read])
        reads.atoms.update(self._atoms(person, SUBTREE))
        return digest(
            self.settings,
            "person",
            profile.slug,
            records.get(record_atom("profile", profile.slug), _NONE),
            records.get(record_atom("name", profile.slug), _NONE),
            records.get(record_atom("refs", source), _NONE),
            *self._description(owned, reads),
            b"".join([self._subtree(work, reads) for work in works_of(self.graph, person)]),
            b"".join([self._publication(pub, reads) for pub in works]),
        )

    def record_digests(self) -> dict[str, bytes]:
        """Every record's digest by its atom (`record_atom`), citation keys included."""
        found = dict(self._records)
        for key, cite in self.citation_keys.items():
            found[record_atom("cite", key)] = _text_digest(cite)
        return found


_NONE = bytes(16)  # in place of the digest of something absent


def settings_digest(c: Config, r: Resolution) -> str:
    """kg's code and templates, the project's settings, templates and registries."""
    templates = c.root / "templates"
    files = sorted(templates.rglob("*")) if templates.is_dir() else []
    d = r.dataset
    return digest(
        package_digest(),
        c.base_iri,
        repr((c.title, c.description, c.sparql_endpoint, c.license, c.site)),
        *_logo(c),
        *(part for f in files if f.is_file() for part in (str(f), f.read_bytes())),
        record_digest((d.organizations, d.venues, d.people)),
    )


# What a key reads, as atoms (`kg.publish.dirty` keeps them between builds): a subject's
# triples (by its N-Triples term), a node the item owns (its links in), a node whose
# subtree the item reads (nodes minted under it), a resolved record.
# Finer (decision 0049): the view of a node a page links (`view`), and a node linking
# into an owned node (a candidate only: its item is made when its `Reads.links` differ).
READ, OWNED, SUBTREE, RECORD, VIEW, LINKER = "s", "o", "u", "r", "v", "l"
KINDS = {kind: n for n, kind in enumerate((READ, OWNED, SUBTREE, RECORD, VIEW, LINKER))}
# An atom as a key reads it: its text (kind + term), or, when the term has a number
# (`Fingerprints.number`: decision 0064), that number * 8 + its kind's (`KINDS`).
Atom = int | str
NO_NUMBER = 0xFFFFFFFF  # in `Fingerprints._reached`: the atoms are in `_unnumbered`
LINE = 24  # a reached line: its digest, its node's and owner's `VIEW` atoms (2 x 4 bytes)
_UNMADE = bytes(4)  # a `VIEW` atom is 8 * n + 4: never 0
# In `Fingerprints._lines`, the processes' shared map, a line and its check: a slot read
# while another process writes it (the same bytes: a line is a function of the build's
# graph and numbers) fails its check and is made again.
SLOT = LINE + 8


def _check(line: bytes) -> bytes:
    return hashlib.blake2b(line, digest_size=8).digest()


@dataclass
class Reads:
    """What one key read (`kg.publish.dirty` keeps it): its atoms, and the digest of the
    lines linking into its owned nodes."""

    atoms: set[Atom] = field(default_factory=set)
    links: bytes = b""


@dataclass
class Views:
    """The view digests a process read and has not reported yet, by the node's term
    number, or by its N-Triples text when it has none."""

    numbered: dict[int, bytes] = field(default_factory=dict)
    texts: dict[str, bytes] = field(default_factory=dict)

    def take(self) -> Views:
        """These views; this one is emptied."""
        found = Views(self.numbered, self.texts)
        self.numbered, self.texts = {}, {}
        return found


def _numbers(atoms: Iterable[Atom]) -> bool:
    """Whether every atom is a number (packed as an `array("I")`)."""
    return all(type(a) is int for a in atoms)


def _unknown(text: str) -> int | None:
    return None


def record_atom(kind: str, key: str) -> str:
    return f"{RECORD}{kind}\t{key}"


class KeptRecords(NamedTuple):
    """The record digests of the build before (`Fingerprints.record_digests`) and a
    `Change` from its front-end state (decision 0057): only the publications and
    profiles it names are pickled again."""

    digests: dict[str, bytes]
    change: Change


PICKLED = ("publication", "profile")  # the records digested from their pickles


def _record_digests(r: Resolution, kept: KeptRecords | None = None) -> dict[str, bytes]:
    """A digest of each resolved record the pages and BibTeX show, by its atom: each
    publication, each profile, each resolved person's name (kg/publish reads `.name`
    only; where they were mentioned is in the graph), each profile's given and family
    name (`author`: all a work's citation reads of a profiled co-author, decision 0078),
    and per profile file the resolved person of every name listed in it (advisors,
    mentors…). With `kept`, the pickled
    records the change does not name keep their digests (the others are texts: made)."""
    found = _kept_pickles(r, kept) if kept is not None else None
    if found is None:
        found = {record_atom("publication", k): record_digest(p) for k, p in r.publications.items()}
        found.update((record_atom("profile", p.slug), record_digest(p)) for p in r.dataset.profiles)
    for key, person in r.persons.items():
        found[record_atom("name", key)] = _text_digest(person.name)
    for p in r.dataset.profiles:  # what a work's citation reads of a profiled author
        found[record_atom("author", p.slug)] = _text_digest(repr((p.given_name, p.family_name)))
    refs: dict[str, list[str]] = {}
    for source, key in r.person_of.items():
        refs.setdefault(source.file, []).append(f"{source}\t{key}")
    for file, lines in refs.items():
        found[record_atom("refs", file)] = _text_digest("\n".join(sorted(lines)))
    return found


def _kept_pickles(r: Resolution, kept: KeptRecords) -> dict[str, bytes] | None:
    """The publications' and profiles' digests: the kept ones, those the change names
    made again (or dropped: gone); None when the change does not name both kinds."""
    change = kept.change
    if change.publications is None or change.profiles is None:
        return None
    heads = tuple(record_atom(kind, "") for kind in PICKLED)
    found = {a: d for a, d in kept.digests.items() if a.startswith(heads)}
    for key in change.publications:
        pub = r.publications.get(key)
        found.pop(record_atom("publication", key), None)
        if pub is not None:
            found[record_atom("publication", key)] = record_digest(pub)
    by_slug = {p.slug: p for p in r.dataset.profiles} if change.profiles else {}
    for slug in change.profiles:
        found.pop(record_atom("profile", slug), None)
        if slug in by_slug:
            found[record_atom("profile", slug)] = record_digest(by_slug[slug])
    return found


def _text_digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def record_digest(value: object) -> bytes:
    """A digest of a record's pickle, written without the pickler's memo: equal records
    give equal digests however they were made. (With the memo, a string shared by two
    fields is written once and referred to after; a record resolved again from kept
    states holds equal strings that are not shared, and pickled to other bytes: a
    render for nothing, decided by the hash seed.) Records hold no cycles."""
    hasher = hashlib.blake2b(digest_size=16)
    pickler = pickle.Pickler(_Hashing(hasher), protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True  # no memo: a shared object is written each time it appears
    pickler.dump(value)
    return hasher.digest()


class _Hashing:
    """A file that hashes what is written to it."""

    def __init__(self, hasher: hashlib.blake2b) -> None:
        self.write = hasher.update


def _logo(config: Config) -> list[bytes]:
    """The logo's bytes: its content-hashed name is on every page."""
    if config.site.logo is None:
        return []
    try:
        return [(config.root / config.site.logo).read_bytes()]
    except OSError:
        return []  # the build reports the missing logo
