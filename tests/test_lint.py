"""The lint warnings kept between builds (kg.ingest.lint.kept, decision 0076): the same
warnings as a fresh look, in the same order; a changed, tampered or stale entry is
looked at again."""

from __future__ import annotations

import pickle

from kg.cache import DIGEST, SignedCache
from kg.ingest import lint
from kg.ingest.load import load_dataset_keyed

A_B = "data/profiles/a-b.yaml"


def replace_first(path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _kept(project, cache, inputs="i"):
    data, problems, keys = load_dataset_keyed(project / "data", cache)
    assert not problems
    return lint.kept(cache, project / "data", data, keys, inputs), lint.warnings(data)


def test_kept_warnings_are_those_looked_at_again_after_edits(project):
    cache = SignedCache(project / ".kg-cache" / "parse")
    replace_first(project / A_B, "Cee Dee]", "Cee Dee*]")
    first, fresh = _kept(project, cache)
    assert first == fresh and "equal_contribution: true" in str(first[0])
    replace_first(project / A_B, "Cee Dee*]", "Cee Dee]")  # the warning goes with its file
    assert _kept(project, cache) == ([], [])
    replace_first(project / A_B, "Cee Dee]", "Cee D\u0435e]")  # a Cyrillic e comes
    again, fresh = _kept(project, cache)
    assert again == fresh and "mixes scripts" in str(again[0])
    assert _kept(project, cache, inputs="other") == (fresh, fresh)  # registries changed


def test_a_tampered_table_is_looked_at_again(project):
    cache = SignedCache(project / ".kg-cache" / "parse")
    replace_first(project / A_B, "Cee Dee]", "Cee Dee*]")
    first, _ = _kept(project, cache)
    key = lint._key(project / "data")
    inputs, table = cache.get(key)
    path = cache.folder / key[:2] / key
    mac = path.read_bytes()[:DIGEST]  # the genuine signature over a table that says nothing
    path.write_bytes(mac + pickle.dumps((inputs, {k: () for k in table})))
    assert cache.get(key) is None and _kept(project, cache)[0] == first
