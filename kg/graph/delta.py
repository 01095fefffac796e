"""What changed in the graph between two builds, subject by subject.

A subject's digest is blake2b-16 over its sorted N-Triples lines (the chunk
`kg.publish.fingerprint.SubjectChunks` digests; term texts from `kg.graph.ntriples`).
Digests are keyed by the subject's N-Triples text (`<iri>` or `_:label`).

One table per build (decision 0049): a build with caches makes it once, in the parent,
before validation (`table`), and validation, the N-Triples dump and the render's dirty
items all read it (the term texts it formatted included), instead of a walk each.

Invariant: two graphs have the same digest table exactly when (up to blake2b collisions)
they hold the same triples; `changed` names every subject whose triples differ, was
added or was removed.

One kept table (decision 0057): `kept_table` keeps the build's table in a `SignedCache`
with the token of the front-end state it was made for (`kg.change.Change.after`), and
the next build, given a `Change` whose `before` is that token, digests only the
`Change.subjects` (the rest kept, removed ones dropped): the same digests a whole walk
gives, since the Change names (as a superset) every subject whose triples may differ.
Without such a Change the table is made whole and compared with the kept one. Either
way `KeptTable.edits` names exactly the subjects whose digest differs from the kept table's,
so its users (the render's dirty items and dump) need neither a copy of the digests of
their own nor a walk of the whole table. The term memo of a patched table holds the
texts of the re-digested subjects' terms only; `KeptTable.prefixes` stands for the walk of
every term that `colliding` needs.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from array import array
from collections.abc import Collection, Iterable, Mapping
from typing import NamedTuple

from rdflib import BNode, Literal, URIRef
from rdflib.term import Node

from kg.cache import SignedCache, digest
from kg.change import Change
from kg.graph.ntriples import memo_terms, subject_block
from kg.graph.triples import Triples

Digests = dict[str, bytes]  # subject's N-Triples text -> blake2b-16 of its sorted lines


def subject_digests(graph: Triples, memo: dict[Node, str] | None = None) -> Digests:
    """Each subject's digest: one walk of the graph, each distinct term formatted once
    (into `memo`, when given: a caller that writes lines next reuses the texts)."""
    memo = {} if memo is None else memo
    term = memo_terms(memo)
    blake2b = hashlib.blake2b
    found: Digests = {}
    for s, predicates in graph.by_subject():
        head = term(s)
        block = subject_block(head, predicates, memo)
        found[head] = blake2b(block.encode(), digest_size=16).digest()
    return found


class Chunks:
    """Each subject's sorted N-Triples lines (its chunk), in the order of the subjects'
    texts (the N-Triples dump's), kept in an unnamed temporary file as the digest walk
    formatted them (decision 0071): the dump copies them instead of formatting every
    subject again. `fd`: the file, closed by whoever takes it (`take`), else with this
    object."""

    def __init__(self, order: list[Node], texts: list[str]) -> None:
        self.order = order  # the subjects, sorted by their texts
        self.texts = texts
        self.sizes = array("Q")  # each chunk's size in bytes, in that order
        self._pending: list[bytes] = []
        self._size = 0
        self.fd: int | None = None
        try:
            file = tempfile.TemporaryFile()  # noqa: SIM115 (an unnamed file: nothing to follow)
        except OSError:  # no temporary folder to write in: the dump formats its chunks
            return
        self.fd = os.dup(file.fileno())
        file.close()

    def add(self, chunk: bytes) -> None:
        self.sizes.append(len(chunk))
        self._pending.append(chunk)
        self._size += len(chunk)
        if self._size >= CHUNKS_BUFFER:
            self.flush()

    def flush(self) -> None:
        """Write what was gathered; a file that cannot take it (no room) is given up:
        the dump formats the chunks again, as without it."""
        pending, self._pending, self._size = self._pending, [], 0
        if self.fd is None:
            return
        view = memoryview(b"".join(pending))
        try:
            while view:
                view = view[os.write(self.fd, view) :]
        except OSError:
            self.close()

    def take(self) -> int | None:
        """The file's descriptor, now the caller's to close (None: taken already)."""
        fd, self.fd = self.fd, None
        return fd

    def close(self) -> None:
        fd = self.take()
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:  # not taken (a build that renders nothing): gone with it
        self.close()


CHUNKS_BUFFER = 1 << 20  # formatted bytes gathered before one write


class Table(NamedTuple):
    """A graph's subject digests, every term's N-Triples text (`memo`: its users may
    add others) and the graph's own terms (the memo's keys after the walk)."""

    digests: Digests
    memo: dict[Node, str]
    terms: tuple[Node, ...]


def table(graph: Triples) -> Table:
    """The one digest walk of a build."""
    memo: dict[Node, str] = {}
    digests = subject_digests(graph, memo)
    return Table(digests, memo, tuple(memo))


def kept_chunks(graph: Triples, memo: dict[Node, str]) -> tuple[Digests, Chunks | None]:
    """`subject_digests`, walked in the order of the subjects' texts, each chunk
    written to a `Chunks` file as it is digested (None: the file could not take them)."""
    term = memo_terms(memo)
    subjects = list(graph.subjects())
    for s in subjects:
        term(s)
    order = sorted(subjects, key=memo.__getitem__)
    chunks = Chunks(order, list(map(memo.__getitem__, order)))
    blake2b = hashlib.blake2b
    found: Digests = {}
    try:
        for s, head in zip(order, chunks.texts, strict=True):
            block = subject_block(head, graph.describe(s), memo).encode()
            found[head] = blake2b(block, digest_size=16).digest()
            chunks.add(block)
        chunks.flush()
    except BaseException:
        chunks.close()
        raise
    return found, chunks if chunks.fd is not None else None


def changed(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> set[str]:
    """The subjects added, removed, or with other triples, between two tables."""
    found = {s for s, d in after.items() if before.get(s) != d}
    found.update(s for s in before if s not in after)
    return found


# ------------------------------------------------------------------ the kept table (0057)

TABLE_KEY = digest("kg subject digest table, version 1")  # the head: token and body's key


class KeptTable(NamedTuple):
    """A build's table and what it knows of the table kept before it (decision 0057).

    `token`: this table's (the front end's `Change.after`, else a new one); `before`:
    the kept table's token (None: there was none usable); `edits`: exactly the subjects
    added, removed or with another digest since the kept table (None with `before`);
    `order`: the kept table's subjects, sorted (the order of the dump it was made with);
    `prefixes`: the prefixes of `schemes` some IRI of the graph starts with (what
    `kg.publish.export.colliding_prefixes` finds over every term); `change`: the front
    end's, as given (for the table's users that keep state of their own); `chunks`: the
    subjects' N-Triples chunks, kept by a walk of the whole graph (decision 0071)."""

    table: Table
    token: str
    before: str | None
    edits: frozenset[str] | None
    order: list[str]
    prefixes: frozenset[str]
    change: Change | None = None
    chunks: Chunks | None = None


class _Body(NamedTuple):
    """A kept table: its subjects sorted (zlib of their texts joined by newlines), their
    digests in that order, and each subject's colliding prefixes (those that have any)."""

    texts: bytes
    digests: bytes
    colliding: dict[str, frozenset[str]]


def kept_table(
    graph: Triples,
    cache: SignedCache | None,
    change: Change | None = None,
    schemes: Collection[str] = (),
) -> KeptTable:
    """The build's table: with a `change` from the kept table's token, only its
    `subjects` digested again, else every subject; kept in `cache` for the next build.
    `schemes`: the prefixes (`foaf`…) whose `prefix:` IRIs `KeptTable.prefixes` reports."""
    head, order, digests, colliding = _read(cache)
    old = dict(zip(order, digests, strict=True)) if head is not None else None
    starts = tuple(f"{s}:" for s in schemes)
    edits: frozenset[str] | None
    chunks = None
    if old is not None and head is not None and _follows(change, head[0]):
        subjects = change.subjects if change is not None else None
        made, edits = _patched(graph, old, subjects or frozenset(), colliding, starts)
    else:
        memo: dict[Node, str] = {}
        walked, chunks = kept_chunks(graph, memo)  # the dump's, formatted once (0071)
        made = Table(walked, memo, tuple(memo))
        edits = frozenset(changed(old, made.digests)) if old is not None else None
        colliding = _colliding_whole(graph, made, starts)
    token = change.after if change is not None else os.urandom(16).hex()
    before = head[0] if head is not None else None
    prefixes = frozenset().union(*colliding.values())
    found = KeptTable(made, token, before, edits, order, prefixes, change, chunks)
    if cache is not None:
        _write(cache, found, colliding, head, edits)
    return found


def _follows(change: Change | None, token: str) -> bool:
    """Whether `change` says which subjects may differ since the table `token`."""
    return change is not None and change.subjects is not None and change.before == token


def _patched(
    graph: Triples,
    digests: Digests,
    subjects: frozenset[str],
    colliding: dict[str, frozenset[str]],
    starts: tuple[str, ...],
) -> tuple[Table, frozenset[str]]:
    """`digests` (the kept table's, a copy) with `subjects` digested again from `graph`."""
    memo: dict[Node, str] = {}
    term = memo_terms(memo)
    nodes = {subject_node(text): text for text in subjects}
    edits = set()
    for node, text in nodes.items():
        predicates = graph.describe(node) if node is not None else {}
        colliding.pop(text, None)
        if not predicates:
            if digests.pop(text, None) is not None:
                edits.add(text)
            continue
        head = term(node)  # type: ignore[arg-type]
        found = hashlib.blake2b(subject_block(head, predicates, memo).encode(), digest_size=16)
        if digests.get(text) != (made := found.digest()):
            edits.add(text)
            digests[text] = made
        hits = _prefixes(_terms(node, predicates), starts)  # type: ignore[arg-type]
        if hits:
            colliding[text] = hits
    return Table(digests, memo, tuple(memo)), frozenset(edits)


def subject_node(text: str) -> Node | None:
    """The subject an N-Triples text names (`<iri>` or `_:label`), as the graph keys it."""
    if text.startswith("<") and text.endswith(">"):
        return URIRef(text[1:-1])  # (`URIRef.n3` escapes nothing: it refuses such IRIs)
    if text.startswith("_:"):
        return BNode(text[2:])
    return None


def _terms(s: Node, predicates: Mapping[Node, Iterable[Node]]) -> Iterable[Node]:
    yield s
    for p, objects in predicates.items():
        yield p
        yield from objects


def _prefixes(terms: Iterable[Node], starts: tuple[str, ...]) -> frozenset[str]:
    """The prefixes of `starts` (`foaf:`…) some IRI or datatype of `terms` starts with."""
    found = set()
    for term in terms:
        t = term.datatype if isinstance(term, Literal) else term
        text = str(t) if isinstance(t, URIRef) else ""
        if text.startswith(starts):
            found.add(text[: text.find(":")])
    return frozenset(found)


def _colliding_whole(
    graph: Triples, made: Table, starts: tuple[str, ...]
) -> dict[str, frozenset[str]]:
    """Each subject's colliding prefixes: none when no term has any (one test of each
    distinct term), else from a walk of the subjects."""
    if not starts or not _prefixes(made.terms, starts):
        return {}
    found = {}
    for s, predicates in graph.by_subject():
        hits = _prefixes(_terms(s, predicates), starts)
        if hits:
            found[made.memo[s]] = hits
    return found


def _split(digests: bytes) -> list[bytes]:
    return [digests[i : i + 16] for i in range(0, len(digests), 16)]


def _order(body: _Body) -> list[str]:
    texts = zlib.decompress(body.texts).decode("utf-8", "surrogatepass")
    return texts.split("\n") if texts else []


def _read(
    cache: SignedCache | None,
) -> tuple[tuple[str, str] | None, list[str], list[bytes], dict[str, frozenset[str]]]:
    """The kept head (token, body's key) and body (sorted subjects, their digests, the
    colliding prefixes), when both are there and well formed (else no head)."""
    nothing: tuple[None, list[str], list[bytes], dict[str, frozenset[str]]] = (None, [], [], {})
    head = cache.get(TABLE_KEY) if cache is not None else None
    if not (isinstance(head, tuple) and len(head) == 2 and all(isinstance(h, str) for h in head)):
        return nothing
    body = cache.get(head[1]) if cache is not None else None
    if not (
        isinstance(body, _Body)
        and isinstance(body.texts, bytes)
        and isinstance(body.digests, bytes)
        and isinstance(body.colliding, dict)
    ):
        return nothing
    try:
        order = _order(body)
    except (zlib.error, UnicodeDecodeError):
        return nothing
    if len(order) * 16 != len(body.digests):
        return nothing
    return head, order, _split(body.digests), dict(body.colliding)


def _write(
    cache: SignedCache,
    kept: KeptTable,
    colliding: dict[str, frozenset[str]],
    head: tuple[str, str] | None,
    edits: frozenset[str] | None,
) -> None:
    """Keep `kept`: its body (when it differs from the kept one) first, then the head
    naming it with the table's token; the other entries removed."""
    key = head[1] if head is not None and edits is not None and not edits else ""
    if not key:
        key = digest("kg subject digest table body", kept.token)
        chunks = kept.chunks
        order = chunks.texts if chunks is not None else sorted(kept.table.digests)
        texts = zlib.compress("\n".join(order).encode("utf-8", "surrogatepass"), 1)
        digests = kept.table.digests
        cache.put(key, _Body(texts, b"".join([digests[t] for t in order]), colliding))
    cache.put(TABLE_KEY, (kept.token, key))
    cache.prune([TABLE_KEY, key])
