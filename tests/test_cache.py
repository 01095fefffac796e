"""kg/cache.py: the user's signing secret, made once, whole, by whichever process is first."""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import stat

from kg import cache


def _secret_after(barrier, folder: str, out) -> None:  # in a forked process
    os.environ["XDG_CACHE_HOME"] = folder
    os.environ.pop("KG_CACHE_SECRET", None)
    barrier.wait()
    out.put(cache.user_secret())


def test_processes_starting_together_all_get_the_one_whole_secret(tmp_path) -> None:
    """Before, the first process created the file and then wrote it: one starting at the
    same moment read it empty and ran without a cache (tests flaked on it)."""
    fork = multiprocessing.get_context("fork")
    many = 8
    for round_ in range(3):
        folder = tmp_path / f"home{round_}"
        barrier, out = fork.Barrier(many), fork.Queue()
        workers = [
            fork.Process(target=_secret_after, args=(barrier, str(folder), out))
            for _ in range(many)
        ]
        for w in workers:
            w.start()
        found = [out.get(timeout=30) for _ in workers]
        for w in workers:
            w.join(timeout=30)
        path = folder / "kg" / "secret"
        assert all(s is not None and len(s) >= cache.DIGEST for s in found), found
        assert set(found) == {path.read_bytes()}
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert sorted(p.name for p in path.parent.iterdir()) == ["secret"]  # no drafts left


def test_a_secret_made_earlier_is_read_not_replaced(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("KG_CACHE_SECRET", raising=False)
    first = cache.user_secret()
    assert first is not None
    assert cache.user_secret() == first == (tmp_path / "kg" / "secret").read_bytes()


def test_a_big_pickle_is_unpickled_with_the_collector_paused_then_moved_to_its_oldest_generation():
    value = [[str(i)] for i in range(120_000)]
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    assert len(payload) >= cache.BIG_PICKLE
    found = cache.unpickled(payload)
    assert found == value and gc.isenabled()
    young = {id(x) for generation in (0, 1) for x in gc.get_objects(generation)}
    assert id(found[-1]) not in young  # not walked again by the young collections
    gc.disable()
    try:
        assert cache.unpickled(payload) == value and not gc.isenabled()  # left as it was
    finally:
        gc.enable()
    small = pickle.dumps([["x"]])
    made = cache.unpickled(small)
    assert made == [["x"]] and id(made) in {id(x) for x in gc.get_objects(0)}


def test_a_big_unpickle_in_a_frozen_process_leaves_its_frozen_objects_frozen():
    payload = pickle.dumps([[str(i)] for i in range(120_000)], protocol=pickle.HIGHEST_PROTOCOL)
    gc.freeze()  # as a forked worker starts (kg.workers._start_frozen)
    try:
        frozen = gc.get_freeze_count()
        found = cache.unpickled(payload)
        assert gc.get_freeze_count() >= frozen + len(found)  # the inherited ones, and these
    finally:
        gc.unfreeze()
