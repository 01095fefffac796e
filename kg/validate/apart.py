"""The compiled validator's full run in a new interpreter (decision 0051).

A forked child starts at its parent's resident size (the page tables are copied), so
validating a big graph in a fork counted the build's process twice (at 10k people the
build holds 0.8 GiB when it validates, the validator adds 1.2 GiB). Here the validator
is a new Python process that receives the graph as each subject's N-Triples block
(`ntriples.subject_block`, the text its subject digests are taken over), sent in
batches through a pipe while it reads them, and answers with its findings.

Invariant: the findings, and the state kept for the next run, are those of a full run in
this process (`incremental.full`): the same plain terms (N-Triples read back), the same
digests (taken over the same blocks).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from kg.graph.ntriples import memo_terms, subject_block
from kg.workers import in_new_interpreter

if TYPE_CHECKING:
    from rdflib.term import Node

    from kg.graph.triples import Triples
    from kg.validate.engine import Finding

BATCH_CHARS = 1_000_000  # a batch's texts are formatted, sent and let go


def full_apart(
    triples: Triples,
    shapes_dir: Path,
    ontology_dir: Path,
    cache_dir: Path | None = None,
    key: str = "",
    memo: dict[Node, str] | None = None,
    front: str | None = None,
) -> list[Finding]:
    """The findings of a full compiled run made in a new interpreter; with `cache_dir`,
    the state for the next run kept there under `key` (kg/validate/incremental.py;
    `front`: the front-end token of the graph, kg/change.py); `memo`: every term's
    text, when the build made them already (its digest table)."""
    return in_new_interpreter(
        _full_here, shapes_dir, ontology_dir, cache_dir, key, front, feed=blocks(triples, memo)
    )


def blocks(
    triples: Triples, memo: dict[Node, str] | None = None
) -> Iterator[list[tuple[str, str]]]:
    """Each subject's (N-Triples text, sorted N-Triples lines), in batches. Without a
    `memo` of the terms' texts (kept: the build's), the texts are memoized within a
    batch only, so this process does not grow by them."""
    batch: list[tuple[str, str]] = []
    fresh = memo is None
    texts: dict[Node, str] = {} if memo is None else memo
    term = memo_terms(texts)
    size = 0
    for s, predicates in triples.by_subject():
        head = term(s)
        block = subject_block(head, predicates, texts)
        batch.append((head, block))
        size += len(block)
        if size >= BATCH_CHARS:
            yield batch
            batch, size = [], 0
            if fresh:
                texts = {}
                term = memo_terms(texts)
    if batch:
        yield batch


def _full_here(
    shapes_dir: Path,
    ontology_dir: Path,
    cache_dir: Path | None,
    key: str,
    front: str | None,
    batches: Iterable[list[tuple[str, str]]],
) -> list[Finding]:
    """The new interpreter's side: compile the shapes, run, keep the state."""
    from kg.cache import SignedCache
    from kg.validate.engine import lines_data, load_program, ontology_triples, run
    from kg.validate.incremental import full_from_blocks

    program, ontology = load_program(shapes_dir), ontology_triples(ontology_dir)
    pairs = (pair for batch in batches for pair in batch)
    if cache_dir is None:  # nothing kept: the findings alone
        blocks = (block for _, block in pairs)
        return run(program, lines_data(blocks, program, list(ontology)))
    findings, kept = full_from_blocks(pairs, program, list(ontology))
    if kept is not None:
        SignedCache(cache_dir).put(key, kept._replace(front=front))
    return findings
