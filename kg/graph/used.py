"""Only the registry entries something refers to are published.

The bundled registries name dozens of organizations and venues a project never touches;
publishing them all (pages, directories, the sitemap, the dumps) would suggest ties the
lab does not have. Invariant: an organization or venue (`org/<key>`, `venue/<key>` and
every node minted under it) stays in the graph only when it is linked with a node of the
graph outside the registries (a paper refers to it; a reviewer role minted under it names
a person), directly or through other entries that stay (a team's parent, a venue's
publisher); nothing else is removed, so every IRI left still dereferences. What is
dropped depends only on the triples with a subject or an IRI object under an entry (and
of those from outside, only on which entries some triple links to), so a graph that
differs from another only in triples that do not change which entries are linked to
(`drops_alike`) drops the same subjects (`drop_known`, decision 0076: a rebuild after an
edit does not walk the graph).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeGuard

from rdflib import Literal, URIRef
from rdflib.term import Node

from kg import scheme
from kg.graph.mapping import Mapped
from kg.graph.triples import Triple, Triples

SECTIONS = ("org/", "venue/")


def drop_unused(mapped: Mapped, base: str) -> Mapped:
    """`mapped` without the registry entries nothing refers to (removed in place)."""
    return drop_unused_entries(mapped, base)[0]


def drop_unused_entries(mapped: Mapped, base: str) -> tuple[Mapped, frozenset[str]]:
    """`drop_unused`, and the entries it dropped (`org/<key>`, `venue/<key>`)."""
    graph, entries, _ = drop_unused_subjects(mapped, base)
    return graph, entries


def drop_unused_subjects(
    mapped: Mapped, base: str
) -> tuple[Mapped, frozenset[str], frozenset[URIRef]]:
    """`drop_unused_entries`, and the subjects it dropped."""
    prefixes = tuple(scheme.mint(base, section) for section in SECTIONS)
    starts: Callable[..., bool] = str.startswith  # rdflib's own is a slow Python wrapper

    def entry(node: str) -> str | None:
        if not starts(node, prefixes):
            return None
        section, _, rest = node[len(base) :].partition("/")
        return f"{section}/{rest.split('/', 1)[0]}"

    owners: dict[Node, str] = {}  # registry node -> its entry
    used: set[str] = set()
    edges: dict[str, set[str]] = {}
    for s, predicates in mapped.triples.by_subject():
        owner = entry(s) if _is_iri(s) else None
        if owner is None:  # a node outside the registries uses every entry it links to
            for objects in predicates.values():
                for o in objects:
                    if starts(o, prefixes) and _is_iri(o):
                        used.add(entry(o))  # type: ignore[arg-type]  # the prefix matched
            continue
        owners[s] = owner
        for objects in predicates.values():
            for o in objects:
                # an IRI outside the base links nothing (_link would do nothing with it)
                if starts(o, base) and _is_iri(o):
                    _link(owner, entry(o), True, used, edges)
    unused = frozenset(set(owners.values()) - _reachable(used, edges))
    if not unused:
        return mapped, unused, frozenset()
    dropped = {s for s, owner in owners.items() if owner in unused}
    mapped.triples.remove_subjects(dropped)
    sources = {s: where for s, where in mapped.sources.items() if s not in dropped}
    return Mapped(mapped.triples, sources), unused, frozenset(dropped)  # type: ignore[arg-type]


def drops_alike(
    differ: Iterable[Triple], triples: Triples, base: str, dropped: frozenset[str]
) -> bool:
    """Whether `triples` drop the entries `dropped` and the same subjects as a graph
    that differs from it only in `differ` (each present in one of the two) and that
    dropped `dropped`: no triple of `differ` has a subject under an entry (what links
    the entries with each other and with the graph is the same), every entry a triple
    of `differ` linked to and no longer does is linked to by one that does (a use moved,
    as a renamed work's venue), and none of those is among `dropped` (see the module)."""
    prefixes = tuple(scheme.mint(base, section) for section in SECTIONS)
    starts: Callable[..., bool] = str.startswith  # rdflib's own takes no tuple of prefixes
    now: set[str] = set()
    gone: set[str] = set()
    for t in differ:
        s, _, o = t
        if _is_iri(s) and starts(s, prefixes):
            return False
        if _is_iri(o) and starts(o, prefixes):
            section, _, rest = o[len(base) :].partition("/")
            (now if t in triples else gone).add(f"{section}/{rest.split('/', 1)[0]}")
    return gone <= now and not now & dropped


def drop_known(mapped: Mapped, subjects: frozenset[URIRef]) -> Mapped:
    """`mapped` without `subjects` (removed in place, its sources too): what
    `drop_unused_subjects` dropped from a graph that `drops_alike` this one."""
    mapped.triples.remove_subjects(set(subjects))
    for s in subjects:
        mapped.sources.pop(s, None)
    return mapped


def _is_iri(node: object) -> TypeGuard[URIRef]:
    """isinstance(node, URIRef), the common answers without the ABC machinery."""
    kind = type(node)
    return kind is URIRef or (kind is not Literal and isinstance(node, URIRef))


def _link(
    owner: str | None, target: str | None, local: bool, used: set[str], edges: dict[str, set[str]]
) -> None:
    """Record what a triple from `owner`'s node to `target`'s says about use."""
    if target == owner:
        return
    if owner is None:
        if target is not None:
            used.add(target)
    elif target is not None:
        edges.setdefault(owner, set()).add(target)
    elif local:
        used.add(owner)  # a role on a venue names a person of the graph


def _reachable(start: set[str], edges: dict[str, set[str]]) -> set[str]:
    seen, todo = set(start), list(start)
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen
