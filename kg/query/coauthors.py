"""The co-author index of the persistent query store, and the stored query that reads it.

Invariant: in a store written by `kg.query.persist.write_store` or patched by
`kg.query.patch.patch_store`, the named graph COAUTHORS holds `<x> COAUTHOR <y>` exactly
when x and y are different IRIs and some subject of the default graph has both
`schema:author x` and `schema:author y`. It is kg's own graph, like the page-owner index:
`kg serve`'s /sparql never sees it (decision 0031), and `shared-coauthors` reads it
only when the query is kg's own text (`kg.query.stored.store_form`), so the index turns
"the co-authors of a person" into one index lookup instead of every author of every
paper of that person (12,833 papers for the 10k corpus's busiest author; decision 0033).

Literal authors are not indexed: a literal is never the subject of `schema:name`, so it is
never a row of the query. kg's graph has no blank nodes (kg.query.persist).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import pyoxigraph as ox

from kg.graph.namespaces import SCHEMA

COAUTHORS = "urn:kg:coauthors"
COAUTHOR = "urn:kg:coauthor"
_AUTHOR = f"<{SCHEMA.author}>".encode()
_AUTHOR_NODE = ox.NamedNode(str(SCHEMA.author))
# The end of a line's subject, its predicate schema:author and its object, an IRI: a
# literal to search for (a pattern from the line's start is tried at every byte).
_AUTHOR_OBJECT = re.compile(rb"> " + re.escape(_AUTHOR) + rb" (<[^>\n]*>)")

# The stored query that has a faster text on a store with the index, and that text: the
# same parameters, the same projection, grouping and order; only where the co-authors of
# each person come from differs. The answer must be the plain query's on every graph
# (tests/test_query_coauthors.py compares both).
QUERY = "shared-coauthors"
STORE_TEXT = """PREFIX schema: <http://schema.org/>
# kg's own form of shared-coauthors for its persistent store (kg.query.coauthors): the
# co-authors of each person read from the store's co-author index, starting from the
# person with fewer (pyoxigraph follows the written order: 12 ms against 50 ms at 10k).
SELECT ?coauthor ?name
WHERE {
  GRAPH <urn:kg:coauthors> {
    {first} <urn:kg:coauthor> ?coauthor .
    {second} <urn:kg:coauthor> ?coauthor .
  }
  ?coauthor schema:name ?name .
  FILTER (?coauthor != ?_a_iri && ?coauthor != ?_b_iri)
}
GROUP BY ?coauthor ?name
ORDER BY ?name ?coauthor
"""


# kg's `coauthor-network` reads its pairs from the index too: the pairs of the plain text's
# sub-SELECT (`?paper schema:author ?a , ?b . FILTER (?a != ?b)`, grouped) are exactly the
# index's pairs where both are IRIs; a literal author is never a `schema:Person` with a
# name, so the rest of the query drops it either way (decision 0042).
NETWORK = "coauthor-network"
NETWORK_TEXT = """PREFIX schema: <http://schema.org/>
# kg's own form of coauthor-network for its persistent store (kg.query.coauthors): the
# pairs read from the store's co-author index instead of grouped from every paper's
# authors (decision 0042).
CONSTRUCT {
  ?a schema:colleague ?b .
  ?a schema:name ?nameA .
  ?b schema:name ?nameB .
}
WHERE {
  GRAPH <urn:kg:coauthors> { ?a <urn:kg:coauthor> ?b }
  OPTIONAL { ?a a schema:Person ; schema:name ?nameA }
  OPTIONAL { ?b a schema:Person ; schema:name ?nameB }
  FILTER (BOUND(?nameA) && BOUND(?nameB))
}
"""


def store_text(a: str, b: str, store: ox.Store) -> str:
    """STORE_TEXT, reading first the co-authors of whichever of the IRIs `a` and `b` has
    fewer (the answer is the same either way: a join of the two)."""
    a_first = _fewer_coauthors(store, ox.NamedNode(a), ox.NamedNode(b))
    first, second = ("?_a_iri", "?_b_iri") if a_first else ("?_b_iri", "?_a_iri")
    return STORE_TEXT.replace("{first}", first).replace("{second}", second)


def _fewer_coauthors(store: ox.Store, x: ox.NamedNode, y: ox.NamedNode) -> bool:
    """Whether x has no more co-authors than y in the index (both read in step, so the
    cost is that of the smaller)."""
    graph, link = ox.NamedNode(COAUTHORS), ox.NamedNode(COAUTHOR)
    of_x = store.quads_for_pattern(x, link, None, graph)
    of_y = store.quads_for_pattern(y, link, None, graph)
    while True:
        if next(of_x, None) is None:
            return True
        if next(of_y, None) is None:
            return False


class Collector:
    """The authors of every subject, gathered block by block while a store is written."""

    def __init__(self) -> None:
        self.authors: dict[bytes, set[bytes]] = {}

    def see_block(self, block: bytes) -> None:
        """The authors that the lines of `block` (whole N-Triples lines) give their
        subjects (`<s> <schema:author> <o> .`, s and o IRIs): found by a search for the
        predicate, not a Python step per line."""
        for found in _AUTHOR_OBJECT.finditer(block):
            end = found.start() + 1
            subject = block[block.rfind(b"\n", 0, end) + 1 : end]
            if subject.startswith(b"<") and b" " not in subject:  # the line's subject
                self.authors.setdefault(subject, set()).add(found.group(1))

    def quads(self) -> Iterator[bytes]:
        """The index as N-Quads lines (each pair once per direction)."""
        pairs: set[tuple[bytes, bytes]] = set()
        for authors in self.authors.values():
            if len(authors) > 1:
                pairs.update((x, y) for x in authors for y in authors if x != y)
        for x, y in sorted(pairs):
            yield b"%s <%s> %s <%s> .\n" % (x, COAUTHOR.encode(), y, COAUTHORS.encode())


def patch_index(store: ox.Store, removed: Iterable[ox.Quad], added: Iterable[ox.Quad]) -> bool:
    """Bring the index of `store` (its default graph already patched) up to date after
    the triples `removed` and `added`: pairs of a subject whose authors gained someone
    are added; a pair that lost a shared subject is removed unless another subject still
    has both. Returns whether the index gained or lost a pair (decision 0042)."""
    lost_on, gained_on = _authors_by_subject(removed), _authors_by_subject(added)
    gained: set[tuple[ox.NamedNode, ox.NamedNode]] = set()
    for subject, new in gained_on.items():
        now = _authors(store, subject)
        gained.update(pair for x in new for y in now if x != y for pair in ((x, y), (y, x)))
    doubtful: set[tuple[ox.NamedNode, ox.NamedNode]] = set()
    for subject, old in lost_on.items():
        before = _authors(store, subject) | old
        doubtful.update((x, y) for x in old for y in before if x != y)
    graph, link = ox.NamedNode(COAUTHORS), ox.NamedNode(COAUTHOR)
    changed = False
    for x, y in gained:
        quad = ox.Quad(x, link, y, graph)
        changed = changed or quad not in store
        store.add(quad)
    for x, y in doubtful:
        if (x, y) not in gained and not _share_a_subject(store, x, y):
            changed = changed or ox.Quad(x, link, y, graph) in store
            store.remove(ox.Quad(x, link, y, graph))
            store.remove(ox.Quad(y, link, x, graph))
    return changed


def _authors_by_subject(quads: Iterable[ox.Quad]) -> dict[ox.NamedNode, set[ox.NamedNode]]:
    found: dict[ox.NamedNode, set[ox.NamedNode]] = {}
    for q in quads:
        s, o = q.subject, q.object
        named = isinstance(s, ox.NamedNode) and isinstance(o, ox.NamedNode)
        if named and q.predicate == _AUTHOR_NODE:
            found.setdefault(s, set()).add(o)  # type: ignore[arg-type]
    return found


def _authors(store: ox.Store, subject: ox.NamedNode) -> set[ox.NamedNode]:
    quads = store.quads_for_pattern(subject, _AUTHOR_NODE, None, ox.DefaultGraph())
    return {q.object for q in quads if isinstance(q.object, ox.NamedNode)}


def _share_a_subject(store: ox.Store, x: ox.NamedNode, y: ox.NamedNode) -> bool:
    default = ox.DefaultGraph()
    of_x = {
        q.subject
        for q in store.quads_for_pattern(None, _AUTHOR_NODE, x, default)
        if isinstance(q.subject, ox.NamedNode)  # as the index is written (see_block)
    }
    return any(q.subject in of_x for q in store.quads_for_pattern(None, _AUTHOR_NODE, y, default))
