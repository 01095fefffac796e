"""The compiled validator's full run in a new interpreter (decision 0051), fed the graph
as numbered terms (decision 0070).

A forked child starts at its parent's resident size (the page tables are copied), so
validating a big graph in a fork counted the build's process twice (at 10k people the
build holds 0.8 GiB when it validates, the validator adds 1.2 GiB). Here the validator
is a new Python process that receives the graph through a pipe in batches while it reads
them, and answers with its findings.

The feed (`batches`): each `Batch` numbers the term objects it uses (the N-Triples text
of each once: the build's digest table has them already) and sends the subjects', the
predicates' and the objects' numbers, each subject's count of predicates and each
predicate's count of objects, only under the predicates the program reads. The child
reads each term's text back once per batch (`terms.parse_term`) and fills the
validator's index from the numbers in bulk (`map`, `islice`, `dict.fromkeys`), without
a line to parse, a block to hash, or a Python step per triple. The subjects' digests
are the build's own (its table, taken over `ntriples.subject_block`), sent once;
without a table they are taken here over the same blocks.

Invariant: the findings, and the state kept for the next run, are those of a full run in
this process (`incremental.full`): the same plain terms (their N-Triples read back), in
the same order (the graph's), the same digests (taken over the same blocks).
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Collection, Iterable, Iterator
from itertools import chain, count, islice, repeat
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from kg.graph.ntriples import nt_object, subject_block
from kg.workers import in_new_interpreter

if TYPE_CHECKING:
    from rdflib.term import Node

    from kg.graph.delta import Digests, Table
    from kg.graph.triples import Triples
    from kg.validate.data import Data
    from kg.validate.engine import Finding
    from kg.validate.terms import PlainTriple, Term

V = TypeVar("V")

BATCH = 200_000  # objects in a batch: its terms are numbered, sent and let go


class Batch(NamedTuple):
    """Some subjects' triples as numbers, each standing for the term `texts` has at it."""

    texts: list[str]  # each term's N-Triples text, once (numbered from 0)
    numbers: bytes  # array "I": the subjects', then the predicates', then the objects'
    widths: bytes  # array "I": each subject's count of predicates
    sizes: bytes  # array "I": each predicate's count of objects (subject by subject)
    digests: dict[str, bytes]  # taken here, when the build's table is not sent


def full_apart(
    triples: Triples,
    shapes_dir: Path,
    ontology_dir: Path,
    cache_dir: Path | None = None,
    key: str = "",
    table: Table | None = None,
    front: str | None = None,
    reads: Collection[str] | None = None,
) -> list[Finding]:
    """The findings of a full compiled run made in a new interpreter; with `cache_dir`,
    the state for the next run kept there under `key` (kg/validate/incremental.py;
    `front`: the front-end token of the graph, kg/change.py); `table`: the build's
    subject digests and terms' texts, when it made them; `reads`: the predicates the
    program reads (None: all are sent, the child keeps those)."""
    feed = batches(triples, table, reads, digests=cache_dir is not None)
    here = _full_here
    return in_new_interpreter(here, shapes_dir, ontology_dir, cache_dir, key, front, feed=feed)


def batches(
    triples: Triples,
    table: Table | None = None,
    reads: Collection[str] | None = None,
    digests: bool = True,
) -> Iterator[Batch | Digests]:
    """The graph as numbered terms, in batches (see the module's docstring), only the
    triples of the predicates in `reads` (None: all); with `digests`, the subjects'
    digests: the build's `table`'s, whole after the last batch, else taken here."""
    memo = table.memo if table is not None else {}  # the table's: read, never added to
    read: set[Node] = set()  # the graph's predicate objects (the mapper shares them) read,
    unread: set[Node] = set()  # and not read: a set's test is then one of identity
    own = digests and table is None
    subjects: list[Node] = []
    widths: list[int] = []
    predicates: list[Node] = []
    sizes: list[int] = []
    objects: list[Node] = []
    found: Digests = {}
    for s, described in triples.by_subject():
        if own:
            head = memo.get(s) or nt_object(s)
            block = subject_block(head, described, memo)
            found[head] = hashlib.blake2b(block.encode(), digest_size=16).digest()
        if reads is not None and not described.keys() <= read:
            for p in described.keys() - read - unread:
                (read if str(p) in reads else unread).add(p)
            described = {p: o for p, o in described.items() if p in read}
        if not described:
            continue
        subjects.append(s)
        widths.append(len(described))
        predicates += described
        sizes += map(len, described.values())
        objects += chain.from_iterable(described.values())
        if len(objects) >= BATCH:
            yield _batch(subjects + predicates + objects, widths, sizes, memo, found)
            subjects, widths, predicates, sizes, objects, found = [], [], [], [], [], {}
            if table is None:
                memo = {}  # the texts of this batch's blocks: let go
    if subjects or found:
        yield _batch(subjects + predicates + objects, widths, sizes, memo, found)
    if digests and table is not None:
        yield table.digests


def _batch(
    terms: list[Node], widths: list[int], sizes: list[int], memo: dict[Node, str], found: Digests
) -> Batch:
    """The batch of these terms (subjects, predicates, objects): each distinct term object
    numbered in the order first met, its text from `memo` (else made)."""
    ids = list(map(id, terms))
    by_id = dict(zip(ids, terms, strict=True))  # the distinct term objects, in order
    number = dict(zip(by_id, count()))
    distinct = list(by_id.values())
    texts = list(map(memo.get, distinct))
    if None in texts:  # not in the table's memo (or no table): made here
        texts = [text or nt_object(t) for text, t in zip(texts, distinct, strict=True)]
    numbers = array("I", map(number.__getitem__, ids)).tobytes()
    return Batch(texts, numbers, array("I", widths).tobytes(), array("I", sizes).tobytes(), found)  # type: ignore[arg-type]


def received(
    fed: Iterable[Batch | Digests],
    reads: Collection[str] | None,
    ontology: Iterable[PlainTriple],
    digests: Digests,
) -> Data:
    """The validator's `Data` from the batches (the child's side), the ontology's triples
    after the graph's, only those of the predicates in `reads` (None: all); the
    subjects' digests sent are put in `digests`."""
    from kg.validate.data import Data

    spo: dict[str, dict[str, dict[Term, None]]] = {}
    shared: dict[Term, Term] = {}  # equal terms: one object
    for item in fed:
        if isinstance(item, Batch):
            _index(spo, item, shared, reads)
            item = item.digests
        digests.update(item)
    if reads is not None:
        ontology = (t for t in ontology if t[1] in reads)
    return Data(ontology, spo)


def _index(
    spo: dict[str, dict[str, dict[Term, None]]],
    batch: Batch,
    shared: dict[Term, Term],
    reads: Collection[str] | None,
) -> None:
    """One batch's triples into `spo` (subject -> predicate -> objects, in the graph's
    order), without a Python step per triple."""
    from kg.validate.terms import parse_term

    parsed = list(map(parse_term, batch.texts))
    terms = list(map(shared.setdefault, parsed, parsed))
    every: list = list(map(terms.__getitem__, array("I", batch.numbers)))
    widths, sizes = array("I", batch.widths), array("I", batch.sizes)
    subjects, named = every[: len(widths)], every[len(widths) : len(widths) + len(sizes)]
    objects = map(dict.fromkeys, _slices(every[len(widths) + len(sizes) :], sizes))
    described: Iterator[dict] = map(
        dict, map(zip, _slices(named, widths), _slices(objects, widths))
    )
    unread = reads is not None and not set(named) <= set(reads)  # not chosen by the sender
    if unread:
        described = ({p: o for p, o in d.items() if p in reads} for d in described)  # type: ignore[operator]
    if spo.keys().isdisjoint(subjects) and len(set(subjects)) == len(subjects):
        spo.update(zip(subjects, described, strict=True))
    else:  # two subjects read back as one term: merged
        for s, d in zip(subjects, described, strict=True):
            for p, o in d.items():
                spo.setdefault(s, {}).setdefault(p, {}).update(o)
    if unread:
        for s in [s for s in subjects if not spo.get(s)]:  # none of its predicates is read
            spo.pop(s, None)


def _slices(items: Iterable[V], widths: Iterable[int]) -> Iterator[Iterator[V]]:
    """`items` in consecutive slices of these widths (each taken as it is read)."""
    return map(islice, repeat(iter(items)), widths)


def _full_here(
    shapes_dir: Path,
    ontology_dir: Path,
    cache_dir: Path | None,
    key: str,
    front: str | None,
    fed: Iterable[Batch],
) -> list[Finding]:
    """The new interpreter's side: compile the shapes, run, keep the state."""
    from kg.cache import SignedCache
    from kg.validate.engine import load_program, ontology_triples, run
    from kg.validate.incremental import full_of, keep_base

    program, ontology = load_program(shapes_dir), ontology_triples(ontology_dir)
    digests: Digests = {}
    data = received(fed, program.reads, ontology, digests)
    if cache_dir is None:  # nothing kept: the findings alone
        return run(program, data)
    findings, kept = full_of(data, program, digests)
    if kept is not None:
        keep_base(SignedCache(cache_dir), key, kept._replace(front=front))
    return findings
