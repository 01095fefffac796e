"""The loader's snapshot (decision 0046): after a build, a load reads and parses only the
files that changed, gives the very dataset and problems of a load without caches, and
trusts nothing it did not write itself."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import replace_first, seed_project

from kg.cache import SignedCache
from kg.ingest import load, snapshot
from kg.ingest.load import load_dataset_partially
from kg.ingest.snapshot import Snapshot

SECRET = b"front snapshot test secret " * 2


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """The seeds, and a loader that counts the files it reads and parses (the real
    functions do the work). Statuses are trusted at once (no 2-second racy window:
    the test writes its files right before loading)."""
    monkeypatch.setattr(snapshot, "RACY_NS", 0)
    return seed_project(tmp_path / "project")


class _Counts:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read: list[str] = []
        self.parsed: list[str] = []
        real_read, real_parse = load.read_yaml_bytes, load.node_from_bytes

        def read(path: Path, display: str) -> bytes:
            self.read.append(display)
            return real_read(path, display)

        def parse(data: bytes, display: str):  # type: ignore[no-untyped-def]
            self.parsed.append(display)
            return real_parse(data, display)

        monkeypatch.setattr(load, "read_yaml_bytes", read)
        monkeypatch.setattr(load, "node_from_bytes", parse)

    def reset(self) -> None:
        self.read.clear()
        self.parsed.clear()


def _load(root: Path):  # type: ignore[no-untyped-def]
    cache = SignedCache(root / ".kg-cache" / "parse", secret=SECRET)
    found = load_dataset_partially(root / "data", cache)
    cache.prune()
    return found


def _profiles(root: Path) -> list[Path]:
    return sorted((root / "data" / "profiles").glob("*.yaml"))


def test_a_load_reads_and_parses_only_what_changed(project, monkeypatch):
    counts = _Counts(monkeypatch)
    first = _load(project)
    files = len(counts.read)
    assert files == len(_profiles(project)) + 3  # organizations, venues, people: no news
    assert counts.parsed == counts.read
    counts.reset()
    assert _load(project) == first  # nothing changed: nothing read
    assert counts.read == [] and counts.parsed == []
    edited = _profiles(project)[1]
    replace_first(edited, r'^(\s*- title: "?)', r"\1Revised: ")
    counts.reset()
    after_edit = _load(project)
    display = f"data/profiles/{edited.name}"
    assert counts.read == [display] and counts.parsed == [display]
    assert after_edit == load_dataset_partially(project / "data")  # a load without caches
    assert after_edit != first
    touched = _profiles(project)[0]
    os.utime(touched, ns=(10**18, 10**18))  # new status, same bytes: read, not parsed
    counts.reset()
    assert _load(project) == after_edit
    # the edited file is read (not parsed) until the snapshot is next written anew
    assert sorted(counts.read) == sorted([f"data/profiles/{touched.name}", display])
    assert counts.parsed == []


def test_problems_are_those_of_a_load_without_caches_every_time(project):
    _load(project)
    path = _profiles(project)[2]
    replace_first(path, r"^name: ", "nmae: ")
    (project / "data" / "venues.yaml").write_text("not: [a, mapping", encoding="utf-8")
    want = load_dataset_partially(project / "data")
    assert want[1], "the edits must be mistakes"
    for _ in range(2):
        got = _load(project)
        assert [str(p) for p in got[1]] == [str(p) for p in want[1]]
        assert got == want


def test_a_link_out_of_data_replacing_a_kept_file_is_reported_not_read(project, tmp_path):
    _load(project)
    secret = tmp_path / "secret.yaml"
    secret.write_bytes((_profiles(project)[0]).read_bytes())
    victim = _profiles(project)[0]
    victim.unlink()
    victim.symlink_to(secret)
    data, problems = _load(project)
    assert [str(p) for p in problems] == [
        f"data/profiles/{victim.name}: is a link to a file outside data/; expected a file "
        "inside data/"
    ]
    assert victim.stem not in {p.slug for p in data.profiles}


def test_a_snapshot_not_signed_by_this_user_is_never_unpickled(project, tmp_path):
    """A project may ship a .kg-cache/: its snapshot is a miss, its pickle never runs."""
    planted = tmp_path / "planted"

    class Payload:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (os.mkdir, (str(planted),))

    folder = project / ".kg-cache" / "parse"
    key = Snapshot(SignedCache(folder, secret=SECRET), project / "data").key
    SignedCache(folder, secret=b"somebody else's secret" * 2).put(key, Payload())
    assert _load(project) == load_dataset_partially(project / "data")
    assert not planted.exists()
    assert SignedCache(folder, secret=SECRET).get(key) is not None  # replaced by ours


class _Clock:
    """`time` as kg.ingest.snapshot reads it: the real clock, `ahead` ns later after the
    first reading (the snapshot's start): a load that ran for that long."""

    def __init__(self, ahead: int) -> None:
        self.ahead, self.calls = ahead, 0

    def time_ns(self) -> int:
        self.calls += 1
        return time.time_ns() + (self.ahead if self.calls > 1 else 0)


@pytest.mark.parametrize("ran", [3.0, 0.5])
def test_a_long_load_settles_the_files_it_did_not_trust(tmp_path, monkeypatch, ran):
    """Files written just before a load are compared by their bytes next time, unless
    the load re-checked them when they were older than the racy window (decision 0063):
    then only a file changed after its read is read again, and the data are current."""
    root = seed_project(tmp_path / "project")
    monkeypatch.setattr(snapshot, "time", _Clock(int(ran * 1e9)))
    counts = _Counts(monkeypatch)
    profiles = _profiles(root)
    changed = profiles[1]
    real_read = load.read_yaml_bytes

    def read(path: Path, display: str) -> bytes:
        if path == profiles[-1] and len(counts.read) == len(profiles) + 2:  # first pass
            replace_first(changed, r'^(\s*- title: "?)', r"\1Changed while loading: ")
        return real_read(path, display)

    monkeypatch.setattr(load, "read_yaml_bytes", read)
    counts_again = _Counts(monkeypatch)  # counts the reads behind `read`'s hook
    _load(root)
    assert "Changed while loading" in changed.read_text(encoding="utf-8")
    files = len(profiles) + 3
    assert len(counts_again.read) == (2 * files if ran > 2 else files)  # re-checked, or not
    counts_again.reset()
    assert _load(root) == load_dataset_partially(root / "data")  # the change is seen
    if ran > 2:  # settled: only the file changed after its read is read again
        assert counts_again.read == [f"data/profiles/{changed.name}"]
    else:  # too early to re-check: every file is still compared by its bytes
        assert len(counts_again.read) == files
