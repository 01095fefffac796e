"""Only the registry entries something refers to are published.

The bundled registries name dozens of organizations and venues a project never touches;
publishing them all (pages, directories, the sitemap, the dumps) would suggest ties the
lab does not have. Invariant: an organization or venue (`org/<key>`, `venue/<key>` and
every node minted under it) stays in the graph only when it is linked with a node of the
graph outside the registries (a paper refers to it; a reviewer role minted under it names
a person), directly or through other entries that stay (a team's parent, a venue's
publisher); nothing else is removed, so every IRI left still dereferences.
"""

from __future__ import annotations

from rdflib import URIRef

from kg import scheme
from kg.graph.mapping import Mapped
from kg.graph.triples import Triples

SECTIONS = ("org/", "venue/")


def drop_unused(mapped: Mapped, base: str) -> Mapped:
    """`mapped` without the registry entries nothing refers to."""
    prefixes = tuple(scheme.mint(base, section) for section in SECTIONS)

    def entry(node: object) -> str | None:
        text = str(node)
        if not isinstance(node, URIRef) or not text.startswith(prefixes):
            return None
        section, _, rest = text[len(base) :].partition("/")
        return f"{section}/{rest.split('/', 1)[0]}"

    entries: set[str] = set()
    used: set[str] = set()
    edges: dict[str, set[str]] = {}
    for s, _, o in mapped.triples:
        owner = entry(s)
        if owner is not None:
            entries.add(owner)
        target = entry(o)
        if target == owner:
            continue
        if owner is None:
            if target is not None:
                used.add(target)
        elif target is not None:
            edges.setdefault(owner, set()).add(target)
        elif isinstance(o, URIRef) and str(o).startswith(base):
            used.add(owner)  # a role on a venue names a person of the graph
    used = _reachable(used, edges)
    unused = entries - used
    if not unused:
        return mapped
    kept = Triples(t for t in mapped.triples if entry(t[0]) not in unused)
    sources = {s: where for s, where in mapped.sources.items() if entry(s) not in unused}
    return Mapped(kept, sources)


def _reachable(start: set[str], edges: dict[str, set[str]]) -> set[str]:
    seen, todo = set(start), list(start)
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen
