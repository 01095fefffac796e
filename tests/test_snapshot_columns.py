"""The loader's snapshot in columns (kg/ingest/columns.py, decision 0063): read back, it
equals what was kept, type for type and with the same texts shared; anything else is
refused, never half-read."""

from __future__ import annotations

import marshal
from pathlib import Path
from typing import Any

import pytest
from conftest import seed_project

from kg.cache import SignedCache
from kg.ingest import columns, snapshot
from kg.ingest.load import load_dataset_keyed
from kg.ingest.snapshot import Snapshot
from kg.model import PRESENT, PartialDate, PersonRef, Source, Venue

SECRET = b"columns test secret, long enough" * 2


@pytest.fixture(scope="module")
def kept(tmp_path_factory) -> tuple[dict, dict]:
    """The seeds' snapshot as the loader keeps it (its entries and its shared texts)."""
    root = seed_project(tmp_path_factory.mktemp("columns") / "project")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(snapshot, "RACY_NS", 0)
        cache = SignedCache(root / ".kg-cache" / "parse", secret=SECRET)
        load_dataset_keyed(root / "data", cache, {})
        found = Snapshot(SignedCache(root / ".kg-cache" / "parse", secret=SECRET), root / "data")
    assert found.found and found.old
    return found.old, found.texts


def _same(a: Any, b: Any, path: str = "") -> None:
    """Equal, with the same type at every level (a tuple stays a tuple, a list a list)."""
    assert type(a) is type(b), path
    if isinstance(a, tuple | list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            _same(a[k], b[k], f"{path}[{k!r}]")
    elif hasattr(a, "__slots__") and not isinstance(a, str | bytes | int):
        for name in a.__slots__:
            _same(getattr(a, name), getattr(b, name), f"{path}.{name}")
    else:
        assert a == b, path


def test_the_seeds_snapshot_reads_back_equal_with_its_texts_shared(kept):

    back = columns.decode(columns.encode(kept) or b"")
    assert back is not None
    _same(back, kept)
    new_entries, new_texts = back
    assert all(k is v for k, v in new_texts.items())  # the table maps each text to itself
    profile = next(e[2] for d, e in new_entries.items() if d.startswith("data/profiles/"))
    assert profile.name is new_texts[profile.name]  # a record's text is the table's object
    kinds = {c[0] for name, _, _, cs in marshal.loads(columns.encode(kept) or b"")[1] for c in cs}
    assert kinds >= {"A", "R", "L"}  # plain columns, references, lists of records


def test_every_column_form_reads_back():
    where = Source("data/x.yaml", 3, 1)
    other = PersonRef(name="A. Person", source=where)  # a record shared by two holders
    venue = Venue(key="v", name="V", kind="conference", source=where)
    value = {
        "mixed": (other, venue, None, "text", 3, [other, 1.5, b"x"]),
        "records": {"k": other, "j": venue},
        "plain": {"a": (1, 2), "b": None},
        "dates": [PartialDate(2024), PartialDate(2024, 5, None), PRESENT],
        "nested": ((("deep",),), [[other]]),
    }
    back = columns.decode(columns.encode(value) or b"")
    _same(back, value)
    assert back is not None and back["records"]["k"] is back["mixed"][0]  # still one record


def test_what_columns_cannot_keep_is_refused_and_bad_bytes_are_not_read(kept):
    assert columns.encode({"x": object()}) is None
    assert columns.encode((Path("p"),)) is None
    deep: list = []
    for _ in range(5000):
        deep = [deep, 1]
    assert columns.encode(deep) is None  # nested deeper than a reader would follow
    good = columns.encode(kept)
    assert good is not None
    version, classes, top = marshal.loads(good)
    renamed = [(n, (*f[:-1], "renamed"), c, cs) for n, f, c, cs in classes]
    short = [(n, f, c + 1, cs) for n, f, c, cs in classes]
    for bad in (
        good[: len(good) // 2],  # truncated
        marshal.dumps(("another version", classes, top)),
        marshal.dumps((version, renamed, top)),
        marshal.dumps((version, short, top)),
        marshal.dumps((version, [("NotAModelClass", (), 0, [])], top)),
        marshal.dumps((version, classes, ("r", -1))),
        b"",
    ):
        assert columns.decode(bad) is None


def test_a_snapshot_that_columns_refuse_is_kept_pickled(tmp_path, monkeypatch):
    """The fallback: the snapshot kept as the tuple itself reads back as before."""
    monkeypatch.setattr(snapshot, "RACY_NS", 0)
    monkeypatch.setattr(columns, "encode", lambda value: None)
    root = seed_project(tmp_path / "project")
    cache = SignedCache(root / ".kg-cache" / "parse", secret=SECRET)
    first = load_dataset_keyed(root / "data", cache, {})[0]
    again = Snapshot(SignedCache(root / ".kg-cache" / "parse", secret=SECRET), root / "data")
    assert again.found
    assert load_dataset_keyed(root / "data", cache, {})[0] == first
