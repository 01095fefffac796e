"""What the render state derives from the graph's set of subjects, from their sorted
N-Triples texts (decision 0061).

The things with a page (`layout.page_things`), their paths, each one's own nodes
(`export.owned_nodes`) and the subjects in the writers' order (`blocks.canonical_subjects`)
depend only on which subjects the graph has. Made from the graph, each walked every
subject in the graph's order (a path cut, prefix lookups, a sort by a key: about
1.4 CPU-s at 10k people). `SubjectChunks` has the subjects sorted by their N-Triples
texts already (the dump's order), and in that order:
- a node minted under a thing `T` is one of the run of texts that begin with `<T/`
  (`SubjectChunks.under`): two bisections give a thing's own nodes, and a walk down
  the texts under the base meets each thing before its own nodes (`/` sorts before
  `>`) and skips them: it visits the things, not every subject (`_tops`);
- the blank nodes (`_:` sorts after `<`) are in the writers' order already, and the
  IRIs nearly so (`<a>` and `<a/b>` swap), which a sort by their string corrects at
  about one comparison each (timsort finds the runs).

Invariant: `subject_layout` gives the values the whole walks give (`made_whole`: the
tests compare them), the owned nodes as the same sets (their order is not read), and
`Layout.at` each canonical subject's place in the N-Triples order: where the dump holds
its chunk, which the block table reads for the files that hold it whole (decision 0071).
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import cast

from rdflib import URIRef
from rdflib.term import Node

from kg.graph.triples import Triples
from kg.publish.blocks import canonical_subjects
from kg.publish.export import owned_nodes
from kg.publish.layout import page_things, path_of


@dataclass
class Layout:
    """The products of the subject set the render state reads."""

    tops: list[URIRef]  # the things with a page, sorted by IRI (`page_things`)
    pages: frozenset[str]  # their paths (not the dataset's)
    owned: dict[URIRef, list[Node]]  # each one's own nodes, itself first (`owned_nodes`)
    canonical: list[Node]  # every subject in the writers' order (`canonical_subjects`)
    at: array | None = None  # each one's place in the N-Triples texts' order (0071)


def made_whole(graph: Triples, base: str) -> Layout:
    """The layout made by walking every subject of `graph` (what `subject_layout` saves)."""
    tops = page_things(graph.subjects(), base)
    pages = frozenset(path_of(str(t), base) or "" for t in tops)
    return Layout(tops, pages, owned_nodes(graph, tops), canonical_subjects(graph))


def subject_layout(
    order: list[Node],
    texts: list[str],
    base: str,
    under: Callable[[Node], tuple[int, int]],
) -> Layout:
    """The layout of the subjects `order`, sorted by their N-Triples `texts` (`under(t)`:
    the slice of `order` minted under `t`, `SubjectChunks.under`)."""
    tops, found = _tops(order, texts, base, under)
    tops.sort(key=str)
    owned = {t: found[t] for t in tops}  # in the order of the things, as the walk made it
    pages = frozenset(str(t)[len(base) :] for t in tops)
    at = _canonical(order, texts)
    return Layout(tops, pages, owned, [order[i] for i in at], at)


def _tops(
    order: list[Node], texts: list[str], base: str, under: Callable[[Node], tuple[int, int]]
) -> tuple[list[URIRef], dict[URIRef, list[Node]]]:
    """The things with a page (in descending text order) and each one's own nodes.

    Walked down from the last text under `<base`: a thing `<t>` sorts after every text
    that begins `<t/` (`/` sorts before `>`), so each subject under the base is met
    after its ancestors; one met outside the slice of an earlier one has no ancestor
    that is a subject (an ancestor is met first, and its slice holds its descendants):
    it is a thing, and its slice, its own nodes, is skipped. The slices met later lie
    above those pending (the stack's last is the highest)."""
    head = "<" + base
    low = bisect.bisect_left(texts, head)
    i = bisect.bisect_left(texts, head[:-1] + chr(ord(head[-1]) + 1)) - 1
    shortest = len(head) + 2  # `<base>` itself is not a thing
    tops: list[URIRef] = []
    owned: dict[URIRef, list[Node]] = {}
    pending: list[tuple[int, int]] = []
    while i >= low:
        if pending and i < pending[-1][1]:
            i = pending.pop()[0] - 1
            continue
        if len(texts[i]) >= shortest:
            top = cast(URIRef, order[i])
            start, stop = under(top)
            tops.append(top)
            owned[top] = [top, *order[start:stop]]
            if start < stop:
                pending.append((start, stop))
        i -= 1
    return tops, owned


def _canonical(order: list[Node], texts: list[str]) -> array:
    """The places in `order` (by N-Triples text) of the subjects in the writers' order:
    blank nodes, then IRIs, each by their text (`export.subject_key`). The IRIs' texts
    (`<…>`) sort before the blank nodes' (`_:…`)."""
    split = bisect.bisect_left(texts, "_")
    iris: Iterable[int] = range(split)
    blank: Iterable[int] = range(split, len(order))
    if set(map(type, order[:split])) - {URIRef} or URIRef in set(map(type, order[split:])):
        iris = [i for i, s in enumerate(order) if type(s) is URIRef]
        blank = [i for i, s in enumerate(order) if type(s) is not URIRef]

    def key(i: int) -> str:
        return str(order[i])

    at = array("I", sorted(blank, key=key))
    at.extend(sorted(iris, key=key))
    return at
