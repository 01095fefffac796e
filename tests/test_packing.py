"""dirty.Packing (decision 0054): the items made as parts come in, packed as flat arrays,
give the index, items and views the state's readers expect; the state's body (pickled
into the compressor without a memo) loads back equal."""

from __future__ import annotations

from array import array

from kg.cache import SignedCache
from kg.publish import dirty
from kg.publish.dirty import Deps, DirtyState, Packing

A, B, C = "<http://x/a>", "<http://x/b>", "<http://x/c>"


def _state(tree: str = "t1") -> DirtyState:
    return DirtyState(tree, "g", frozenset({"person/a"}), "token-1", {"rp": b"2" * 16})


def _deps(key: str, *atoms: str) -> Deps:
    files = {f"site/{key}.html": "ab" * 16, f"site/{key}.ttl": "cd" * 16}
    return Deps(key, files, frozenset(atoms), b"L")


def _readers(state: DirtyState) -> dict[str, list[str]]:
    """The index as atom text -> the names of its readers, in the order kept."""
    kinds = {n: kind for kind, n in dirty.KINDS.items()}
    return {
        kinds[atom % 8] + state.terms[atom // 8]: [state.names[i] for i in array("I", packed)]
        for atom, packed in state.index.items()
    }


def test_cold_packing_indexes_each_atom_by_its_readers_in_order() -> None:
    packing = Packing(None, _state())
    packing.add_made({"pa": _deps("ka", "s" + A, "o" + A, "s" + B)})
    packing.add_views({A: b"view-a1"})
    packing.add_made({"tb": _deps("kb", "s" + B, "v" + C), "tc": _deps("kc", "s" + A)})
    packing.add_views({A: b"view-a2", C: b"view-c"})  # a later part's view wins
    state = packing.finish({"pa", "tb", "tc"})
    assert _readers(state) == {
        "s" + A: ["pa", "tc"],
        "o" + A: ["pa"],
        "s" + B: ["pa", "tb"],
        "v" + C: ["tb"],
    }
    assert state.holders(["s" + B]) == {"pa", "tb"}
    assert state.holders(["o" + B, "r" + A]) == set()
    assert state.view(A) == b"view-a2" and state.view(C) == b"view-c"
    assert state.items["tb"].files() == {"site/kb.html": "ab" * 16, "site/kb.ttl": "cd" * 16}
    assert (state.items["pa"].key, state.items["pa"].links) == ("ka", b"L")


def test_packing_after_an_edit_merges_new_readers_and_drops_gone_items() -> None:
    first = Packing(None, _state())
    first.add_made({"pa": _deps("ka", "s" + A), "tb": _deps("kb", "s" + B)})
    old = first.finish({"pa", "tb"})
    old.changed = False
    second = Packing(old, _state())
    second.add_made({"tb": _deps("kb2", "s" + A, "s" + B), "tc": _deps("kc", "s" + C)})
    state = second.finish({"tb", "tc"})  # "pa" is gone
    assert set(state.items) == {"tb", "tc"}
    assert state.items["tb"].key == "kb2"
    # tb's old atoms stay (they only reach it); it joins A's readers once
    assert _readers(state) == {"s" + A: ["pa", "tb"], "s" + B: ["tb"], "s" + C: ["tc"]}
    assert state.stale == 2  # tb made again, pa gone
    assert state.changed


def test_packing_a_few_items_among_many_atoms_gives_the_same_index() -> None:
    """After an edit few (atom, item) pairs come for many atoms (grouped, not laid out)."""
    many = [f"s<http://x/n{i}>" for i in range(40)]
    first = Packing(None, _state())
    first.add_made({"pa": _deps("ka", *many), "tb": _deps("kb", many[3], "s" + B)})
    old = first.finish({"pa", "tb"})
    assert _readers(old)[many[3]] == ["pa", "tb"]
    second = Packing(old, _state())
    second.add_made({"tc": _deps("kc", many[3], "s" + C)})
    state = second.finish({"pa", "tb", "tc"})
    found = _readers(state)
    assert found[many[3]] == ["pa", "tb", "tc"]
    assert found["s" + C] == ["tc"] and found["s" + B] == ["tb"]
    assert found[many[0]] == ["pa"] and len(found) == 42


def test_saved_state_loads_back_equal(tmp_path) -> None:
    cache = SignedCache(tmp_path / "cache")
    packing = Packing(None, _state())
    packing.add_made({"pa": _deps("ka", "s" + A, "s" + B), "tb": _deps("kb", "s" + B)})
    packing.add_views({B: b"view-b"})
    state = packing.finish({"pa", "tb"})
    dirty.save(cache, state)
    loaded = dirty.load(cache, "t1", "g")
    assert loaded is not None
    for name in ("pages", "table", "records", "terms", "views", "items", "index", "names"):
        assert getattr(loaded, name) == getattr(state, name), name
    assert loaded.holders(["s" + B]) == {"pa", "tb"}
