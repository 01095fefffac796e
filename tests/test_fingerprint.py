"""kg.publish.fingerprint: what a process keeps across `forget` gives the keys made afresh."""

from __future__ import annotations

from conftest import seed_project

from kg.cache import SignedCache
from kg.config import load_config
from kg.pipeline import RENDER_CACHE_DIR, build_graph
from kg.publish import dirty, render
from kg.publish.export import person_nodes
from kg.publish.fingerprint import Fingerprints, Reads
from kg.workers import in_child


def _every_key(state: render._State, prints: Fingerprints, kept: bool) -> dict:
    """Every item's key and what it read, in the render's order. After each item the
    process forgets its memos; `kept=False`: also what it keeps across `forget`."""
    found = {}
    if not kept:
        _forget_all(prints)
    items = [("p", p) for p in state.resolution.dataset.profiles]
    for kind, item in [*items, *(("t", t) for t in state.things)]:
        reads = Reads()
        if kind == "p":
            person = render._person(state.config, item.slug)
            owned = person_nodes(state.graph, person, state.owned[person])
            works = state.site.publications_of(item.slug)
            key = prints.person(item, owned, works, reads)
        else:
            key = prints.thing(item, set(state.owned[item]), None, reads)
        found[(kind, str(item))] = key, reads.atoms, reads.links
        prints.forget()
        if not kept:
            _forget_all(prints)
    return found


def _forget_all(prints: Fingerprints) -> None:
    prints.forget()
    prints._lines = None
    prints._kept_pubs.clear()
    prints._kept_subtrees.clear()


def test_kept_lines_works_and_subtrees_give_the_keys_made_afresh(tmp_path) -> None:
    """Decision 0072: in a cold build the processes share the reached lines of numbered
    nodes (by number, in a map made before they fork), and each keeps its packed works
    and subtrees, across `forget`. The keys, atoms, links and views made from them are
    those of a process keeping nothing."""
    root = seed_project(tmp_path / "project")
    config = load_config(root)
    resolution, mapped = build_graph(config, cache=False)
    cache = SignedCache(config.root / RENDER_CACHE_DIR)
    state = render._make_state(config, resolution, mapped.triples, cache, None, None)
    prints = render._keys(state)
    numbers = dirty.DirtyState("t", "", frozenset(), "", prints.record_digests())
    dirty.number_all(numbers, state.chunks, state.graph)  # as a cold build's `_packing`
    prints.numbered(numbers.known, True, len(numbers.terms))
    child = in_child(lambda: len(_every_key(state, prints, kept=True)))  # makes the lines
    assert child and prints._kept_line(state.things[0])[1] is not None  # seen here
    assert not prints._kept_pubs  # the child's own
    kept = _every_key(state, prints, kept=True)
    assert prints._kept_pubs and prints._kept_subtrees
    views = prints.fresh.take()
    afresh = _every_key(state, prints, kept=False)
    assert kept == afresh
    # each view reported by the process that first made it (here: the lines the child made)
    assert views.numbered.items() <= prints.fresh.take().numbered.items()
