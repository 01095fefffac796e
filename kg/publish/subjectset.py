"""What the render state derives from the graph's set of subjects, kept between builds
(decision 0061).

The things with a page (`layout.page_things`), their paths, each one's own nodes
(`export.owned_nodes`) and the subjects in the writers' order (`blocks.canonical_subjects`)
depend only on which subjects the graph has (their IRIs) and the base IRI; an edit that
adds or removes no subject (a title edit) leaves them as they were. Made whole they walk
every subject (path, prefixes, a sort: about 1.4 CPU-s at 10k people); kept, they are
positions in the subjects' sorted N-Triples texts (`SubjectChunks.order`), a few arrays.

Invariant: a kept `Layout` is used only when the digest of this build's sorted subject
texts and the base IRI is the one it was kept under (its cache key), and its arrays fit
that many subjects; else everything is made whole. Either way the values are equal
to the whole work's (`made_whole`): the tests compare them.
"""

from __future__ import annotations

import hashlib
from array import array
from dataclasses import dataclass

from rdflib import URIRef
from rdflib.term import Node

from kg.cache import SignedCache, digest
from kg.graph.triples import Triples
from kg.publish.blocks import canonical_subjects
from kg.publish.export import owned_nodes
from kg.publish.layout import page_things, path_of

VERSION = "kg render: subject layout, version 1"


@dataclass
class Layout:
    """The products of the subject set the render state reads."""

    tops: list[URIRef]  # the things with a page, sorted by IRI (`page_things`)
    pages: frozenset[str]  # their paths (not the dataset's)
    owned: dict[URIRef, list[Node]]  # each one's own nodes, itself first (`owned_nodes`)
    canonical: list[Node]  # every subject in the writers' order (`canonical_subjects`)


@dataclass(frozen=True)
class _Kept:
    """A `Layout` as positions in the sorted subjects (`order`) it was made from."""

    subjects: int  # how many subjects
    tops: array  # positions of the tops, in their order
    pages: tuple[str, ...]
    counts: array  # per top: how many nodes it owns besides itself
    owned: array  # those nodes' positions, top after top
    canonical: array  # positions, in the writers' order


def layout_key(texts: list[str], base: str) -> str:
    """The cache key of the layout of the subjects whose sorted texts are `texts`."""
    text_digest = hashlib.blake2b("\n".join(texts).encode(), digest_size=16).hexdigest()
    return digest(VERSION, base, text_digest)


def made_whole(graph: Triples, base: str) -> Layout:
    """The layout made from every subject of `graph` (the work a kept layout saves)."""
    tops = page_things(graph.subjects(), base)
    pages = frozenset(path_of(str(t), base) or "" for t in tops)
    return Layout(tops, pages, owned_nodes(graph, tops), canonical_subjects(graph))


def subject_layout(
    graph: Triples, order: list[Node], texts: list[str], base: str, cache: SignedCache | None
) -> tuple[Layout, str | None]:
    """The layout of `graph`, whose subjects are `order` (sorted by their N-Triples
    `texts`): kept in `cache` when it holds the one of this subject set, else made whole
    and kept. Returns it and its cache key (None without a cache), for the prune."""
    if cache is None or not cache.enabled:
        return made_whole(graph, base), None
    key = layout_key(texts, base)
    kept = cache.get(key)
    found = _restored(kept, order) if isinstance(kept, _Kept) else None
    if found is None:
        found = made_whole(graph, base)
        cache.put(key, _kept(found, order))
    return found, key


def _kept(layout: Layout, order: list[Node]) -> _Kept:
    at = {s: i for i, s in enumerate(order)}
    counts, owned = array("I"), array("I")
    for top in layout.tops:
        nodes = layout.owned[top]
        counts.append(len(nodes) - 1)
        owned.extend(at[s] for s in nodes[1:])
    return _Kept(
        len(order),
        array("I", (at[t] for t in layout.tops)),
        tuple(sorted(layout.pages)),
        counts,
        owned,
        array("I", (at[s] for s in layout.canonical)),
    )


def _restored(kept: _Kept, order: list[Node]) -> Layout | None:
    """The layout `kept` describes, over this build's `order`; None when it cannot be
    one of it (another number of subjects, arrays that do not fit)."""
    n = len(order)
    if kept.subjects != n or len(kept.canonical) != n or len(kept.counts) != len(kept.tops):
        return None
    if sum(kept.counts) != len(kept.owned):
        return None
    if max((max(a, default=0) for a in (kept.tops, kept.owned, kept.canonical)), default=0) >= n:
        return None
    tops = [order[i] for i in kept.tops]
    owned: dict[URIRef, list[Node]] = {}
    at = 0
    for top, count in zip(tops, kept.counts, strict=True):
        owned[top] = [top, *[order[i] for i in kept.owned[at : at + count]]]
        at += count
    canonical = [order[i] for i in kept.canonical]
    return Layout(tops, frozenset(kept.pages), owned, canonical)
