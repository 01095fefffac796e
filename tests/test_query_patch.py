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
