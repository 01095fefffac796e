"""The render's state in proportion to the change (decision 0057), driven by a `Change`
made by an oracle: a full diff of the two builds' subject tables and of their records'
digests, plus names that did not change (a superset is legal). After each edit the
build gives a cold build's bytes, and it took the proportional paths: the kept table
patched, the records kept, the dirty items and the dump from the table's edits. A
Change from another token is the whole work, with the same bytes. Without the oracle,
the front end's own Change (decision 0056) drives the same paths."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import seed_project
from test_dirty_items import (
    _affiliation,
    _coauthor_added,
    _name,
    _profile_added,
    _profile_removed,
    _title,
)
from test_incremental import _assert_same_tree

from kg import pipeline
from kg.change import Change
from kg.config import load_config
from kg.graph import delta
from kg.graph.delta import changed, table
from kg.publish import fingerprint, olddump, render
from kg.publish.fingerprint import record_digest
from kg.resolve.identity import Resolution


def _diff(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


class Oracle:
    """`build_graph` with a `Change` from the build before, made by full diffs; the
    first build's knows only its token (`after`), a build without caches has none.
    `wrong`: a wrong `before`."""

    def __init__(self, real, wrong: bool = False) -> None:
        self.real, self.wrong = real, wrong
        self.last: tuple[str, dict, dict, dict] | None = None
        self.changes: list[Change] = []

    def __call__(self, config, progress=None, cache=True):
        resolution, mapped = self.real(config, cache=cache)
        if not cache:
            return resolution, mapped
        now = (
            f"token-{len(self.changes)}",
            table(mapped.triples).digests,
            _pickles(resolution),
            _profile_pickles(resolution),
        )
        change = Change("", now[0])  # nothing known but the token
        if self.last is not None:
            token, digests, pubs, profiles = self.last
            subjects = changed(digests, now[1]) | {"<https://kg.example.org/dataset>", "_:x"}
            change = Change(
                "wrong" if self.wrong else token,
                now[0],
                publications=frozenset(_diff(pubs, now[2]) | set(list(pubs)[:3])),
                profiles=frozenset(_diff(profiles, now[3]) | {"no-such-slug"}),
                subjects=frozenset(subjects),
            )
        mapped.change = change
        self.changes.append(change)
        self.last = now
        return resolution, mapped


def _pickles(r: Resolution) -> dict[str, bytes]:
    return {k: record_digest(p) for k, p in r.publications.items()}


class Spies:
    """Which proportional paths the builds took."""

    def __init__(self, monkeypatch) -> None:
        self.patched: list[int] = []
        self.records: list[bool] = []
        self.reached: list[bool] = []
        self.dumps: list[bool] = []
        real_patch, real_kept = delta._patched, fingerprint._kept_pickles
        real_dirty, real_open = render._dirty, olddump.PreviousDump.open

        def patch(graph, digests, subjects, *rest):
            self.patched.append(len(subjects))
            return real_patch(graph, digests, subjects, *rest)

        def kept(r, k):
            found = real_kept(r, k)
            self.records.append(found is not None)
            return found

        def dirty(before, *args):
            found = real_dirty(before, *args)
            if found[1] is not None:  # a build with a render cache
                self.reached.append(found[0] is not None)
            return found

        def opened(*args):
            found = real_open(*args)
            self.dumps.append(found is not None)
            return found

        monkeypatch.setattr(delta, "_patched", patch)
        monkeypatch.setattr(fingerprint, "_kept_pickles", kept)
        monkeypatch.setattr(render, "_dirty", dirty)
        monkeypatch.setattr(olddump.PreviousDump, "open", opened)


@pytest.fixture(scope="module")
def warm(tmp_path_factory) -> Path:
    root = seed_project(tmp_path_factory.mktemp("warm") / "project")
    assert pipeline.build(load_config(root), root / "dist").published
    return root


EDITS = [_title, _coauthor_added, _name, _affiliation, _profile_removed, _profile_added]


def _builds_equal_cold_builds(root: Path, tmp_path: Path, edits) -> None:
    """Each edit in turn, built with caches, gives the bytes of a build without them."""
    for n, edit in enumerate(edits):
        edit(root, n)
        config = load_config(root)
        assert pipeline.build(config, root / "dist").published
        cold = tmp_path / f"cold{n}"
        assert pipeline.build(config, cold, cache=False).published
        _assert_same_tree(root / "dist", cold)


def test_the_front_ends_own_change_drives_the_proportional_paths(warm, tmp_path, monkeypatch):
    """No oracle: the Change `build_graph` itself makes (decision 0056) patches the
    kept table and keeps the records after a title and a name edit, with a cold
    build's bytes."""
    root = tmp_path / "project"
    shutil.copytree(warm, root, symlinks=True)
    spies = Spies(monkeypatch)
    assert pipeline.build(load_config(root), root / "dist").published
    _builds_equal_cold_builds(root, tmp_path, (_title, _name))
    subjects = len(table(pipeline.build_graph(load_config(root))[1].triples).digests)
    assert len(spies.patched) == 2, spies.patched  # digested again: the named ones only
    assert all(0 < n < subjects / 4 for n in spies.patched), (spies.patched, subjects)
    assert spies.records == [True, True] and spies.reached[1:] == [True, True]
    assert spies.dumps == [True, True]


def test_builds_after_edits_with_an_oracle_change_equal_cold_builds(warm, tmp_path, monkeypatch):
    root = tmp_path / "project"
    shutil.copytree(warm, root, symlinks=True)
    oracle = Oracle(pipeline.build_graph)
    monkeypatch.setattr(pipeline, "build_graph", oracle)
    spies = Spies(monkeypatch)
    assert pipeline.build(load_config(root), root / "dist").published  # no Change yet
    assert spies.patched == [] and spies.records == []
    _builds_equal_cold_builds(root, tmp_path, EDITS)
    assert all(c.subjects is not None for c in oracle.changes[1:])
    assert len(spies.patched) == len(EDITS)  # every table after an edit: a patch
    # the records kept, the dirty items and the dump from the edits; but an edit of
    # data/organizations.yaml changes the settings every key covers: no state is used
    proportional = [edit is not _affiliation for edit in EDITS]
    assert spies.records == [True] * (len(EDITS) - 1), spies.records
    assert spies.reached[1:] == proportional, spies.reached
    assert spies.dumps == [True] * (len(EDITS) - 1), spies.dumps


def test_a_change_from_another_state_is_the_whole_work_with_the_same_bytes(
    warm, tmp_path, monkeypatch
):
    root = tmp_path / "project"
    shutil.copytree(warm, root, symlinks=True)
    monkeypatch.setattr(pipeline, "build_graph", Oracle(pipeline.build_graph, wrong=True))
    spies = Spies(monkeypatch)
    assert pipeline.build(load_config(root), root / "dist").published
    _builds_equal_cold_builds(root, tmp_path, (_title, _name))
    assert spies.patched == [] and spies.records == []  # a whole walk, every record made
    # the table, made whole, is still compared with the kept one: the items stay dirty ones
    assert spies.reached[1:] == [True, True]


def test_kept_record_digests_equal_a_whole_run_after_each_edit(tmp_path) -> None:
    """`_record_digests` with the last build's digests and an oracle Change (plus names
    that did not change) gives exactly the digests a whole run gives."""
    root = seed_project(tmp_path / "project")
    resolution, _ = pipeline.build_graph(load_config(root), cache=False)
    for n, edit in enumerate(EDITS):
        before = fingerprint._record_digests(resolution)
        pubs, profiles = _pickles(resolution), _profile_pickles(resolution)
        edit(root, n)
        resolution, _ = pipeline.build_graph(load_config(root), cache=False)
        change = Change(
            "a",
            "b",
            publications=frozenset(_diff(pubs, _pickles(resolution)) | set(list(pubs)[-2:])),
            profiles=frozenset(_diff(profiles, _profile_pickles(resolution)) | {"nobody"}),
        )
        assert change.publications or change.profiles
        kept = fingerprint.KeptRecords(before, change)
        assert fingerprint._record_digests(resolution, kept) == fingerprint._record_digests(
            resolution
        ), edit.__name__
    unknown = fingerprint.KeptRecords(before, Change("a", "b", profiles=frozenset()))
    assert fingerprint._kept_pickles(resolution, unknown) is None  # publications not known


def _profile_pickles(r: Resolution) -> dict[str, bytes]:
    return {p.slug: record_digest(p) for p in r.dataset.profiles}
