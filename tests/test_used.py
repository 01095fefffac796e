"""Which registry entries a rebuild may take as dropped without walking the graph
(kg.graph.used.drops_alike, decision 0076): only when the triples that differ do not
change which entries are linked to; the walk agrees where it says so."""

from __future__ import annotations

from rdflib import Literal, URIRef

from kg.graph.mapping import Mapped
from kg.graph.triples import Triples
from kg.graph.used import drop_known, drop_unused_subjects, drops_alike

BASE = "https://kg.example.org/"
PAPER = URIRef(f"{BASE}publication/homonyms")


def _walked(triples: Triples) -> tuple[frozenset[str], frozenset[URIRef], set]:
    copy = Triples(triples)
    graph, entries, subjects = drop_unused_subjects(Mapped(copy, {}), BASE)
    return entries, subjects, set(graph.triples)


def test_a_renamed_work_drops_what_the_walk_drops(mini_build):
    before = Triples(mini_build[1].triples)
    before.add((URIRef(f"{BASE}org/nobody"), URIRef(f"{BASE}v#name"), Literal("Nobody")))
    entries, subjects, _ = _walked(before)
    assert entries == {"org/nobody"}
    renamed = URIRef(f"{BASE}publication/homonyms-2")  # as a title edit renames a work
    moved = [(s, p, o) for s, p, o in before if s == PAPER]
    after = Triples(t for t in before if t[0] != PAPER)
    for _, p, o in moved:
        after.add((renamed, p, o))
    differ = {*moved, *((renamed, p, o) for _, p, o in moved)}
    assert any(str(o).startswith(f"{BASE}venue/") for _, _, o in moved)
    assert drops_alike(differ, after, BASE, entries)
    walked = _walked(after)
    assert walked[:2] == (entries, subjects)
    assert set(drop_known(Mapped(Triples(after), {}), subjects).triples) == walked[2]


def test_a_lost_link_or_an_entry_s_own_triple_means_a_walk(mini_build):
    before = Triples(mini_build[1].triples)
    entries = _walked(before)[0]
    course = URIRef(f"{BASE}course/pku/os")
    lost = next(t for t in before if t[0] == course and str(t[2]).startswith(f"{BASE}org/"))
    after = Triples(t for t in before if t != lost)
    assert not drops_alike({lost}, after, BASE, entries)  # pku may be unused now
    own = next(t for t in before if str(t[0]).startswith(f"{BASE}venue/"))
    assert not drops_alike({own}, Triples(t for t in before if t != own), BASE, entries)
    used = (PAPER, URIRef(f"{BASE}v#cites"), URIRef(f"{BASE}org/nobody"))
    assert not drops_alike({used}, Triples([*before, used]), BASE, frozenset({"org/nobody"}))
