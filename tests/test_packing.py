"""dirty.Packing (decision 0054): the items made as parts come in, packed as flat arrays,
give the index, items and views the state's readers expect; the state's body (pickled
into the compressor without a memo) loads back equal."""

from __future__ import annotations

from array import array

from kg.cache import SignedCache
from kg.publish import dirty
from kg.publish.dirty import Deps, DirtyState, Packing
from kg.publish.fingerprint import Views

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
    second = Packing(old, _state())
    second.add_made({"tb": _deps("kb2", "s" + A, "s" + B), "tc": _deps("kc", "s" + C)})
    state = second.finish({"tb", "tc"})  # "pa" is gone
    assert set(state.items) == {"tb", "tc"}
    assert state.items["tb"].key == "kb2"
    # tb's old atoms stay (they only reach it); it joins A's readers once
    assert _readers(state) == {"s" + A: ["pa", "tb"], "s" + B: ["tb"], "s" + C: ["tc"]}
    assert state.stale == 2  # tb made again, pa gone


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


FIELDS = ("pages", "table", "records", "terms", "views", "items", "index", "names", "stale")


def test_a_state_kept_as_a_base_and_deltas_loads_back_equal(tmp_path) -> None:
    """After an edit the state is kept as the deltas since its base (decision 0057): the
    base is not written again, and the base with the deltas loads back equal."""
    cache = SignedCache(tmp_path / "cache")
    many = [f"s<http://x/n{i}>" for i in range(800)]
    first = Packing(None, _state())
    first.add_made({f"p{i}": _deps(f"k{i}", *many[2 * i : 2 * i + 5]) for i in range(400)})
    first.add_views({A: b"view-a"})
    dirty.save(cache, first.finish({f"p{i}" for i in range(400)}))
    base = cache.get(dirty.STATE_KEY).base
    for n in range(3):
        old = dirty.load(cache, f"t{n + 1}", "g")
        assert old is not None and old.saved is not None
        new = _state(f"t{n + 2}")
        new.table, new.records = f"token-{n}", {"rp": b"2" * 16, f"rq{n}": b"3" * 16}
        new.pages = frozenset({"person/a", f"thing/{n}"})
        packing = Packing(old, new)
        packing.add_made(
            {f"p{n}": _deps(f"again{n}", "s" + C, many[n]), f"q{n}": _deps("q", "s" + B)}
        )
        packing.add_views({C: f"view-c{n}".encode()})
        state = packing.finish({f"p{i}" for i in range(1, 400)} | {f"q{n}"})  # p0 gone
        keys = dirty.save(cache, state)
        head = cache.get(dirty.STATE_KEY)
        assert keys == [dirty.STATE_KEY, base] and head.base == base and len(head.deltas) == n + 1
        loaded = dirty.load(cache, f"t{n + 2}", "g")
        assert loaded is not None
        for name in FIELDS:
            assert getattr(loaded, name) == getattr(state, name), (n, name)
        assert loaded.holders(["s" + C]) == {f"p{i}" for i in range(n + 1)}  # p0: stale
        assert loaded.view(C) == f"view-c{n}".encode()
    assert dirty.load(cache, "t1", "g") is None  # another tree


def test_a_delta_as_large_as_a_tenth_of_the_index_writes_a_new_base(tmp_path) -> None:
    cache = SignedCache(tmp_path / "cache")
    first = Packing(None, _state())
    first.add_made({"pa": _deps("ka", "s" + A), "tb": _deps("kb", "s" + B)})
    dirty.save(cache, first.finish({"pa", "tb"}))
    base = cache.get(dirty.STATE_KEY).base
    old = dirty.load(cache, "t1", "g")
    packing = Packing(old, _state("t2"))
    packing.add_made({"tc": _deps("kc", "s" + C)})
    state = packing.finish({"pa", "tb", "tc"})
    keys = dirty.save(cache, state)
    assert keys[1] != base and cache.get(dirty.STATE_KEY).deltas == ()
    loaded = dirty.load(cache, "t2", "g")
    assert loaded is not None and all(getattr(loaded, f) == getattr(state, f) for f in FIELDS)


def test_atoms_numbered_by_the_workers_index_as_the_parents_do() -> None:
    """Decision 0064: a cold build numbers every term first; what a worker numbers
    (`known`) and what the parent numbers as text give the state a text-only one has,
    and it loads back with the same readers and views."""
    by_text = Packing(None, _state())
    by_text.add_made({"pa": _deps("ka", "s" + A, "o" + A, "s" + B)})
    by_text.add_made({"tb": _deps("kb", "v" + C, "o" + C)})
    by_text.add_views({A: b"view-a", B: b"view-b"})
    expected = by_text.finish({"pa", "tb"})

    numbered = _state()
    numbered.number_all([A, C], ["p"])  # the subjects in the dump's order, then the others
    known = numbered.known
    assert (known(A), known(C), known("p"), known(B)) == (0, 1, 2, None)  # B: not a term yet
    packing = Packing(None, numbered)
    kinds = dirty.KINDS
    a, c = 8 * known(A), 8 * known(C)
    made = array("I", [a + kinds["s"], a + kinds["o"]]).tobytes()
    pa = Deps("ka", _deps("ka").files, frozenset({"s" + B}), b"L", made)
    tb_made = array("I", [c + kinds["v"]]).tobytes()  # and one of a known term as text:
    tb = Deps("kb", _deps("kb").files, frozenset({"o" + C}), b"L", tb_made)
    packing.add_made({"pa": pa})
    packing.add_made({"tb": tb})
    packing.add_views(Views({known(A): b"view-a"}, {B: b"view-b"}))
    state = packing.finish({"pa", "tb"})
    assert _readers(state) == _readers(expected)
    loaded = dirty._unpacked(dirty._packed(state))
    assert isinstance(loaded, DirtyState)
    assert _readers(loaded) == _readers(expected)
    assert loaded.holders(["s" + B]) == {"pa"} and loaded.holders(["v" + C, "o" + C]) == {"tb"}
    assert len(loaded.terms) == 4  # A, C, p and B: no term twice
    assert (loaded.view(A), loaded.view(B)) == (b"view-a", b"view-b")


def test_the_index_kept_packed_answers_as_a_dict_and_pickles_its_changes_in() -> None:
    """Decision 0077: the index is three packed objects and the entries set since;
    looked up, changed and pickled back, it holds what a dict given the same entries
    holds, in atom order."""
    import pickle

    packed = {a: array("I", [a, a + 1]).tobytes() for a in range(0, 400, 4)}
    index = dirty.Index()
    index.fill((a, memoryview(array("I", packed[a]))) for a in sorted(packed))
    expected = dict(packed)
    assert index == expected and len(index) == 100 and 8 in index and 9 not in index
    for a, readers in [(8, b"x" * 4), (9, b"y" * 4), (1000, b"z" * 8), (9, b"w" * 4)]:
        index[a] = readers
        expected[a] = readers
    index.update({3: b"v" * 4})
    expected[3] = b"v" * 4
    index.put(12, b"u" * 4, True)  # as `_reindex` sets it, told what `get` found
    index.put(13, b"t" * 4, False)
    expected[12], expected[13] = b"u" * 4, b"t" * 4
    assert len(index) == len(expected) == 104
    assert index.get(9) == b"w" * 4 and index.get(7) is None and index[8] == b"x" * 4
    assert list(index.items()) == sorted(expected.items())
    again = pickle.loads(pickle.dumps(index))
    assert again == expected and list(again.items()) == sorted(expected.items())
    assert again.get(1000) == b"z" * 8 and again._fresh == {}  # merged in


def test_a_kept_state_with_an_ill_formed_index_is_no_state(tmp_path) -> None:
    cache = SignedCache(tmp_path / "cache")
    packing = Packing(None, _state())
    packing.add_made({"pa": _deps("ka", "s" + A, "s" + B), "tb": _deps("kb", "s" + B)})
    state = packing.finish({"pa", "tb"})
    state.index._starts.append(99)  # ends past its readers
    dirty.save(cache, state)
    assert dirty.load(cache, "t1", "g") is None
