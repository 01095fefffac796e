"""kg.query.patch: a store patched from the previous build's holds exactly what a store
written from the new graph holds, or nothing is made."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from kg.publish.fingerprint import SubjectChunks
from kg.query.patch import patch_store
from kg.query.persist import write_store


def everything(path) -> set[str]:
    return {str(q) for q in ox.Store.read_only(str(path))}


@pytest.fixture(scope="module")
def before(seed_build, repo_config, tmp_path_factory):
    """The seeds' graph.nt as kg writes it, and its store."""
    folder = tmp_path_factory.mktemp("patch")
    graph_nt = folder / "before.nt"
    graph_nt.write_text(SubjectChunks(seed_build[1].triples).ntriples(), encoding="utf-8")
    assert write_store(graph_nt, folder / "before-store", repo_config.base_iri)
    return folder, graph_nt, folder / "before-store", repo_config.base_iri


def edited(graph_nt, tmp_path, old: bytes, new: bytes):
    text = graph_nt.read_bytes()
    assert old in text
    path = tmp_path / "after.nt"
    path.write_bytes(text.replace(old, new, 1))
    return path


def patched_equals_loaded(before, after, tmp_path) -> None:
    _, graph_nt, store, base = before
    kept = everything(store)
    assert patch_store(store, graph_nt, after, tmp_path / "patched", base)
    assert write_store(after, tmp_path / "loaded", base)
    assert everything(tmp_path / "patched") == everything(tmp_path / "loaded")
    assert everything(store) == kept  # the previous store is never written


def test_a_changed_title_patches_to_the_store_a_full_load_makes(before, tmp_path):
    after = edited(before[1], tmp_path, b'"ElasticFlow', b'"Edited ElasticFlow')
    patched_equals_loaded(before, after, tmp_path)


def test_new_subjects_get_their_page_owners(before, tmp_path):
    """A node minted under a person (owned by the person) and a new page of its own."""
    text = before[1].read_text(encoding="utf-8")
    person = f"<{before[3]}person/yihao-zhao>"
    assert f"\n{person} " in text
    name = "<http://schema.org/name>"
    new = [
        f'{person[:-1]}/award/99> {name} "A new award" .\n',
        f'{person[:-1].rsplit("/person/", 1)[0]}/topic/brand-new> {name} "New" .\n',
    ]
    after = tmp_path / "after.nt"
    after.write_text("".join(sorted([*text.splitlines(keepends=True), *new])), "utf-8")
    patched_equals_loaded(before, after, tmp_path)


def test_a_page_that_disappears_hands_its_nodes_to_no_owner(before, tmp_path):
    """Every triple of a person removed, the nodes minted under them kept: their owner
    entries change exactly as in a full load."""
    lines = before[1].read_text(encoding="utf-8").splitlines(keepends=True)
    person = f"<{before[3]}person/yihao-zhao>"
    assert any(x.startswith(person[:-1] + "/") for x in lines)  # it has nodes
    after = tmp_path / "after.nt"
    after.write_text("".join(x for x in lines if not x.startswith(person + " ")), "utf-8")
    patched_equals_loaded(before, after, tmp_path)


def test_a_file_out_of_order_is_not_patched(before, tmp_path):
    _, graph_nt, store, base = before
    lines = graph_nt.read_text(encoding="utf-8").splitlines(keepends=True)
    after = tmp_path / "after.nt"
    after.write_text("".join(reversed(lines)), encoding="utf-8")
    assert not patch_store(store, graph_nt, after, tmp_path / "patched", base)
    assert not (tmp_path / "patched").exists()


def test_the_merge_skips_shared_blocks_and_finds_exactly_the_changed_lines(tmp_path, monkeypatch):
    """Random edits to a sorted file (lines dropped, added, changed, at either end, one
    file without its last newline): the difference is the two sets' differences, read
    from bytes or from the files by offset (in steps of 7 bytes: lines cross them)."""
    import random

    from kg.query.patch import _difference, _Lines, _opened

    monkeypatch.setattr(_Lines, "_STEP", 7)

    rng = random.Random(7)
    lines = sorted({f"<https://x.org/s{rng.randrange(10**6)}> <p> {i} .\n" for i in range(4000)})
    for trial in range(40):
        old = list(lines)
        new = [x for x in old if rng.random() > 0.01 * (trial % 4)]
        extra = rng.randrange(0, 30)
        new += [f"<https://x.org/t{rng.randrange(10**6)}> <q> 1 .\n" for _ in range(extra)]
        if trial % 5 == 0:
            new.insert(0, "<a> <p> 1 .\n")
        if trial % 7 == 0:
            new.append("<zz> <p> 1 .\n")
        new = sorted(set(new))
        a, b = "".join(old).encode(), "".join(new).encode()
        if trial % 3 == 0:
            b = b[:-1]  # no newline after the last line
        diff = _difference(a, b)
        assert diff is not None
        if trial % 4 == 0:
            (tmp_path / "a").write_bytes(a)
            (tmp_path / "b").write_bytes(b)
            with _opened(tmp_path / "a") as by_offset, _opened(tmp_path / "b") as other:
                assert _difference(by_offset, other) == diff
        removed = set(old) - set(new)
        added = set(new) - set(old)
        if trial % 3 == 0:  # the new file's last line is another line: no newline
            last = new[-1]
            added = (added - {last}) | {last[:-1]}
            removed = removed | ({last} & set(old))
        assert {x.decode() for x in diff.removed} == removed
        assert {x.decode() for x in diff.added} == added
    with pytest.raises(ValueError):  # a line read out of order
        _difference(b"<a> <p> 1 .\n<b> <p> 1 .\n", b"<b> <p> 1 .\n<a> <p> 1 .\n")
