"""What the render state derives from the graph's set of subjects, from their sorted
N-Triples texts (decision 0061).

The things with a page (`layout.page_things`), their paths, each one's own nodes
(`export.owned_nodes`) and the subjects in the writers' order (`blocks.canonical_subjects`)
depend only on which subjects the graph has. Made from the graph, each walked every
subject in the graph's order (a path cut, prefix lookups, a sort by a key: about
1.4 CPU-s at 10k people). `SubjectChunks` has the subjects sorted by their N-Triples
texts already (the dump's order), and in that order:
- a node minted under a thing `T` is one of the run of texts that begin with `<T/`
  (`SubjectChunks.under`): two bisections give a thing's own nodes;
- the blank nodes (`_:` sorts after `<`) are in the writers' order already, and the
  IRIs nearly so (`<a>` and `<a/b>` swap: `/` sorts before `>`), which a sort by text
  corrects at about one comparison each (timsort finds the runs).

Invariant: `subject_layout` gives the values the whole walks give (`made_whole`: the
tests compare them), the owned nodes as the same sets (their order is not read).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


def made_whole(graph: Triples, base: str) -> Layout:
    """The layout made by walking every subject of `graph` (what `subject_layout` saves)."""
    tops = page_things(graph.subjects(), base)
    pages = frozenset(path_of(str(t), base) or "" for t in tops)
    return Layout(tops, pages, owned_nodes(graph, tops), canonical_subjects(graph))


def subject_layout(
    order: list[Node], base: str, under: Callable[[Node], tuple[int, int]]
) -> Layout:
    """The layout of the subjects `order` (sorted by their N-Triples texts; `under(t)`:
    the slice of `order` minted under `t`, `SubjectChunks.under`)."""
    paths = _paths(order, base)
    tops = sorted(_tops(paths), key=str)
    owned: dict[URIRef, list[Node]] = {}
    for top in tops:
        start, stop = under(top)
        owned[top] = [top, *order[start:stop]]
    pages = frozenset(str(t)[len(base) :] for t in tops)
    return Layout(tops, pages, owned, _canonical(order))


def _paths(order: list[Node], base: str) -> dict[str, URIRef]:
    """Path under `base` -> subject, for the subjects under it (not the base itself)."""
    found: dict[str, URIRef] = {}
    size = len(base)
    for s in order:
        if isinstance(s, URIRef) and s.startswith(base) and len(s) > size:
            found[s[size:]] = s
    return found


def _tops(paths: dict[str, URIRef]) -> list[URIRef]:
    """The subjects none of whose ancestors (the path cut at a `/`) is a subject."""
    tops = []
    for path, s in paths.items():
        cut = path.find("/")
        while cut != -1 and path[:cut] not in paths:
            cut = path.find("/", cut + 1)
        if cut == -1:
            tops.append(s)
    return tops


def _canonical(order: list[Node]) -> list[Node]:
    """`order` (by N-Triples text) in the writers' order: blank nodes, then IRIs, each
    by their text (`export.subject_key`)."""
    blank = [s for s in order if type(s) is not URIRef]
    iris = [s for s in order if type(s) is URIRef]
    return sorted(blank, key=str) + sorted(iris, key=str)
