"""What changed in the graph between two builds, subject by subject.

A subject's digest is blake2b-16 over its sorted N-Triples lines (the chunk
`kg.publish.fingerprint.SubjectChunks` digests; term texts from `kg.graph.ntriples`).
Digests are keyed by the subject's N-Triples text (`<iri>` or `_:label`).

One table per build (decision 0049): a build with caches makes it once, in the parent,
before validation (`table`), and validation, the N-Triples dump and the render's dirty
items all read it (the term texts it formatted included), instead of a walk each.

Invariant: two graphs have the same digest table exactly when (up to blake2b collisions)
they hold the same triples; `changed` names every subject whose triples differ, was
added or was removed. Tables are kept between builds by their users (the incremental
validator's state, kg/validate/incremental.py), in a `SignedCache`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import NamedTuple

from rdflib.term import Node

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


def changed(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> set[str]:
    """The subjects added, removed, or with other triples, between two tables."""
    found = {s for s, d in after.items() if before.get(s) != d}
    found.update(s for s in before if s not in after)
    return found
