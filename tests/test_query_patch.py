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


def test_a_changed_title_patches_to_the_store_a_full_load_makes(before, tmp_path):
    _, graph_nt, store, base = before
    kept = everything(store)
    after = edited(graph_nt, tmp_path, b'"ElasticFlow', b'"Edited ElasticFlow')
    assert patch_store(store, graph_nt, after, tmp_path / "patched")
    assert write_store(after, tmp_path / "loaded", base)
    assert everything(tmp_path / "patched") == everything(tmp_path / "loaded")
    assert everything(store) == kept  # the previous store is never written


def test_a_new_subject_is_not_patched_and_nothing_is_made(before, tmp_path):
    _, graph_nt, store, _ = before
    text = graph_nt.read_text(encoding="utf-8")
    line = text.splitlines(keepends=True)[-1]
    subject = line.split(" ", 1)[0]
    new = line.replace(subject, subject[:-1] + "/new-node>", 1)
    after = tmp_path / "after.nt"
    after.write_text("".join(sorted([*text.splitlines(keepends=True), new])), encoding="utf-8")
    assert not patch_store(store, graph_nt, after, tmp_path / "patched")
    assert not (tmp_path / "patched").exists()


def test_a_subject_that_loses_every_triple_is_not_patched(before, tmp_path):
    _, graph_nt, store, _ = before
    lines = graph_nt.read_text(encoding="utf-8").splitlines(keepends=True)
    last = lines[-1].split(" ", 1)[0]
    after = tmp_path / "after.nt"
    after.write_text("".join(x for x in lines if not x.startswith(last + " ")), "utf-8")
    assert not patch_store(store, graph_nt, after, tmp_path / "patched")
    assert not (tmp_path / "patched").exists()


def test_a_file_out_of_order_is_not_patched(before, tmp_path):
    _, graph_nt, store, _ = before
    lines = graph_nt.read_text(encoding="utf-8").splitlines(keepends=True)
    after = tmp_path / "after.nt"
    after.write_text("".join(reversed(lines)), encoding="utf-8")
    assert not patch_store(store, graph_nt, after, tmp_path / "patched")
    assert not (tmp_path / "patched").exists()
