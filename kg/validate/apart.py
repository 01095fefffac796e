"""The compiled validator's full run in a new interpreter (decision 0051), fed the graph
as numbered terms (decision 0070).

A forked child starts at its parent's resident size (the page tables are copied), so
validating a big graph in a fork counted the build's process twice (at 10k people the
build holds 0.8 GiB when it validates, the validator adds 1.2 GiB). Here the validator
is a new Python process that receives the graph through a pipe in batches while it reads
them, and answers with its findings.

The feed (`batches`): each batch numbers the terms it uses (the N-Triples text of each
term once: the build's digest table has them already) and sends the triples as those
numbers, subject by subject (subject, then predicate, count, objects..., then `END`),
only under the predicates the program reads. The child reads each term's text back
once per batch (`terms.parse_term`) and fills the validator's index from the numbers,
without a line to parse or a block to hash. The subjects' digests are the build's own
(its table, taken over `ntriples.subject_block`), sent once; without a table they are
taken here over the same blocks.

Invariant: the findings, and the state kept for the next run, are those of a full run in
this process (`incremental.full`): the same plain terms (their N-Triples read back), in
the same order (the graph's), the same digests (taken over the same blocks).
"""

from __future__ import annotations

import hashlib
from array import array
from collections import deque
from collections.abc import Collection, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from kg.graph.ntriples import nt_object, subject_block
from kg.workers import in_new_interpreter

if TYPE_CHECKING:
    from rdflib.term import Node

    from kg.graph.delta import Digests, Table
    from kg.graph.triples import Triples
    from kg.validate.data import Data
    from kg.validate.engine import Finding
    from kg.validate.terms import PlainTriple, Term

BATCH = 500_000  # numbers in a batch: its terms are numbered, sent and let go
END = 0xFFFFFFFF  # a subject's last number (the numbers are unsigned 32-bit)
Batch = tuple[list[str], bytes, dict[str, bytes]]  # term texts, numbers, digests


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
    return in_new_interpreter(
        _full_here, shapes_dir, ontology_dir, cache_dir, key, front, feed=feed
    )


def batches(
    triples: Triples,
    table: Table | None = None,
    reads: Collection[str] | None = None,
    digests: bool = True,
) -> Iterator[Batch]:
    """The graph as numbered terms, in batches (see the module's docstring); `digests`:
    the subjects' digests are sent (the table's whole, after the last batch)."""
    memo = table.memo if table is not None else {}  # the table's: read, never added to
    wanted: dict[Node, bool] = {}
    own = digests and table is None  # taken here, over each subject's block
    texts: list[str] = []
    numbers: dict[int, int] = {}  # id(term) -> its number in this batch
    flat: list[int] = []
    found: dict[str, bytes] = {}
    for s, predicates in triples.by_subject():
        if own:
            head = memo.get(s) or nt_object(s)
            block = subject_block(head, predicates, memo)
            found[head] = hashlib.blake2b(block.encode(), digest_size=16).digest()
        kept = [(p, objects) for p, objects in predicates.items() if _read(p, wanted, reads)]
        if not kept:
            continue
        for t in (s, *(p for p, _ in kept)):  # the subject's and predicates' numbers first
            if id(t) not in numbers:
                numbers[id(t)] = len(texts)
                texts.append(memo.get(t) or nt_object(t))
        flat.append(numbers[id(s)])
        for p, objects in kept:
            flat += (numbers[id(p)], len(objects))
            for o in objects:
                n = numbers.get(id(o))
                if n is None:
                    n = numbers[id(o)] = len(texts)
                    texts.append(memo.get(o) or nt_object(o))
                flat.append(n)
        flat.append(END)
        if len(flat) >= BATCH:
            yield texts, array("I", flat).tobytes(), found
            texts, numbers, flat, found = [], {}, [], {}
            if table is None:
                memo = {}  # texts made for this batch's blocks: let go
    if flat or found:
        yield texts, array("I", flat).tobytes(), found
    if digests and table is not None:
        yield [], b"", table.digests


def _read(p: Node, wanted: dict[Node, bool], reads: Collection[str] | None) -> bool:
    found = wanted.get(p)
    if found is None:
        found = wanted[p] = reads is None or str(p) in reads
    return found


def received(
    fed: Iterable[Batch],
    reads: Collection[str] | None,
    ontology: Iterable[PlainTriple],
    digests: Digests,
) -> Data:
    """The validator's `Data` from the batches (the child's side), the ontology's triples
    after the graph's, only those of the predicates in `reads` (None: all); the
    subjects' digests sent are put in `digests`."""
    from kg.validate.data import Data
    from kg.validate.terms import parse_term

    spo: dict[str, dict[str, dict[Term, None]]] = {}
    shared: dict[Term, Term] = {}  # equal terms: one object
    for texts, numbers, found in fed:
        terms = []
        for text in texts:
            term = parse_term(text)
            terms.append(shared.setdefault(term, term))
        _index(spo, terms, array("I", numbers), reads)
        digests.update(found)
    if reads is not None:
        ontology = (t for t in ontology if t[1] in reads)
    return Data(ontology, spo)


def _index(
    spo: dict[str, dict[str, dict[Term, None]]],
    terms: list[Term],
    numbers: array,
    reads: Collection[str] | None,
) -> None:
    """One batch's triples into `spo` (subject -> predicate -> objects, in order)."""
    get = terms.__getitem__
    it = iter(numbers)
    for s in it:
        subject = get(s)
        predicates = spo.get(subject)
        if predicates is None:
            predicates = spo[subject] = {}
        for p in iter(it.__next__, END):
            predicate, n = get(p), next(it)
            if reads is not None and predicate not in reads:
                deque(islice(it, n), 0)
            elif predicate in predicates:
                predicates[predicate].update(dict.fromkeys(map(get, islice(it, n))))
            elif n == 1:
                predicates[predicate] = {get(next(it)): None}
            else:
                predicates[predicate] = dict.fromkeys(map(get, islice(it, n)))
        if not predicates:  # none of its predicates is read
            del spo[subject]


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
    from kg.validate.incremental import full_of

    program, ontology = load_program(shapes_dir), ontology_triples(ontology_dir)
    digests: Digests = {}
    data = received(fed, program.reads, ontology, digests)
    if cache_dir is None:  # nothing kept: the findings alone
        return run(program, data)
    findings, kept = full_of(data, program, digests)
    if kept is not None:
        SignedCache(cache_dir).put(key, kept._replace(front=front))
    return findings
