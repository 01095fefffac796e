"""kg.workers.fork_map: this process and jobs-1 forked helpers, results in order,
errors raised here, a helper's death an error and never a hang."""

from __future__ import annotations

import gc
import os
import time
import weakref
from pathlib import Path

import pytest

from kg.workers import ForkPool, fork_map, in_child, in_new_interpreter, tune_collector

PARENT = os.getpid()


def _pid_after_a_nap(item: int) -> tuple[int, int]:
    time.sleep(0.02)
    return item, os.getpid()


def test_results_come_in_order_from_this_process_and_one_helper():
    found = list(fork_map(_pid_after_a_nap, range(40), 2))
    assert [item for item, _ in found] == list(range(40))
    pids = {pid for _, pid in found}
    assert PARENT in pids  # this process took items too
    assert len(pids) == 2  # 2 jobs: one forked helper, not two


def _fails_on_seven(item: int) -> int:
    time.sleep(0.01)
    if item == 7:
        raise ValueError(f"item {item} is bad")
    return item


def test_an_error_in_any_process_is_raised_here_with_its_type():
    with pytest.raises(ValueError, match="item 7 is bad"):
        list(fork_map(_fails_on_seven, range(30), 2))


def _helper_dies(item: int) -> int:
    if os.getpid() != PARENT:
        os._exit(3)  # killed, as by the OOM killer: no result, no error
    time.sleep(0.05)
    return item


def test_a_helper_that_dies_is_an_error_not_a_hang():
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="ended without its result"):
        list(fork_map(_helper_dies, range(20), 2))
    assert time.monotonic() - started < 10


def _with_state(state: dict, item: int) -> int:
    return state["offset"] + item


def test_fork_pool_passes_the_shared_state_without_pickling_it():
    state = {"offset": 100, "unpicklable": lambda: None}
    assert list(ForkPool(2).map(_with_state, state, list(range(10)))) == list(range(100, 110))


def _resident_mib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS"))


def _allocates_then_answers() -> tuple[int, int]:
    ballast = [bytes(1024) + str(i).encode() for i in range(300_000)]  # ~300 MiB
    return len(ballast), os.getpid()


def test_in_child_answers_and_what_it_allocated_stays_out_of_this_process():
    before = _resident_mib()
    count, pid = in_child(_allocates_then_answers)
    assert count == 300_000 and pid != PARENT
    assert _resident_mib() - before < 50


def _raises() -> None:
    raise KeyError("no such shape")


def _dies() -> None:
    os._exit(9)


def test_in_child_raises_the_childs_error_here_and_a_death_is_an_error():
    with pytest.raises(KeyError, match="no such shape"):
        in_child(_raises)
    with pytest.raises(RuntimeError, match="exit code 9"):
        in_child(_dies)


class _Node:
    pass


def test_the_tuned_collector_runs_young_passes_rarely_and_still_frees_cycles():
    before = gc.get_threshold()
    try:
        tune_collector()
        assert gc.isenabled()
        assert gc.get_threshold()[0] >= 50_000  # Python's default: 700
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # type: ignore[attr-defined]
        alive = weakref.ref(a)
        del a, b
        gc.collect(0)  # a young pass, as the raised threshold still triggers
        assert alive() is None
    finally:
        gc.set_threshold(*before)


def test_a_forked_child_starts_with_the_inherited_objects_frozen_and_the_parent_does_not():
    """Decision 0047: the child's collections never walk (and write to) what it inherited;
    the parent's own collector gets its objects back."""
    assert gc.get_freeze_count() == 0
    inherited = in_child(gc.get_freeze_count)
    assert inherited > 1000  # at least the interpreter's and the test's objects
    assert gc.get_freeze_count() == 0


def _peak_mib(status: str) -> int:
    return next(int(line.split()[1]) // 1024 for line in status.splitlines() if "VmHWM" in line)


def test_a_new_interpreter_does_not_start_at_this_process_size():
    """Decision 0051: a forked child counts its parent's pages; a new interpreter does not."""
    ballast = [bytes(1024) + str(i).encode() for i in range(200_000)]  # ~200 MiB here
    status = Path("/proc/self/status")
    forked = _peak_mib(in_child(status.read_text))
    fresh = _peak_mib(in_new_interpreter(Path.read_text, status))
    assert len(ballast) == 200_000
    assert forked - fresh > 150
    assert in_new_interpreter(os.getpid) != PARENT


def test_a_new_interpreter_raises_its_error_here_and_a_death_is_an_error():
    with pytest.raises(ValueError, match="invalid literal"):
        in_new_interpreter(int, "not a number")
    with pytest.raises(RuntimeError, match="exit code 3"):
        in_new_interpreter(os._exit, 3)


def test_the_items_kept_here_run_in_this_process_only_and_results_stay_in_order():
    """Decision 0051: the items that need the most memory go to one process."""
    kept = {3, 17, 25}
    found = list(fork_map(_pid_after_a_nap, range(30), 2, here=kept))
    assert [item for item, _ in found] == list(range(30))
    assert {item for item, pid in found if pid != PARENT}.isdisjoint(kept)
    assert len({pid for _, pid in found}) == 2  # the helper took the others' share


def test_apart_this_process_runs_only_the_items_kept_here_and_results_stay_in_order():
    """Decision 0067: with `apart`, this process collects; the helper runs the rest."""
    found = list(fork_map(_pid_after_a_nap, range(12), 2, here={5}, apart=True))
    assert [item for item, _ in found] == list(range(12))
    assert {item for item, pid in found if pid == PARENT} == {5}
    assert len({pid for _, pid in found}) == 2


def test_a_new_interpreter_never_imports_from_the_current_folder(tmp_path, monkeypatch):
    """A project folder is hostile until checked: a module planted there (here one that
    shadows the standard library's `pickle`) is not what the new interpreter imports."""
    (tmp_path / "pickle.py").write_text("raise SystemExit('planted module ran')\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", "")
    assert in_new_interpreter(os.getcwd) == str(tmp_path)


def test_a_build_and_a_server_started_from_a_folder_with_a_planted_module_never_import_it(
    tmp_path, monkeypatch
):
    """kg's own interpreters (the precomputed answers' and the SPARQL zygote's) start from
    the user's current folder: a `pickle.py` there must not run in them."""
    import shutil

    from conftest import MINI

    from kg.config import load_config
    from kg.pipeline import build
    from kg.serve.runner import Zygote

    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    ran = tmp_path / "planted-module-ran"
    (root / "pickle.py").write_text(f"open({str(ran)!r}, 'w').close()\n", "utf-8")
    monkeypatch.chdir(root)
    monkeypatch.setenv("PYTHONPATH", "")
    assert build(load_config(root)).published
    assert (root / ".kg-cache").is_dir()  # the store and its answers were made
    zygote = Zygote(root / "dist", 1 << 30, root)
    zygote.close()
    assert not ran.exists()


_FREED = """
import sys
from kg.workers import return_large_blocks
def rss():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) // 1024 for l in status if l.startswith("VmRSS"))
if sys.argv[1] == "tuned":
    return_large_blocks()
big = b"x" * (8 << 20)
del big  # glibc's default: from now on, blocks below 8 MiB come from the heap
start = rss()
texts, pins = [], []
for i in range(150):  # 1 MiB texts, each followed by a 64 KiB one that stays
    texts.append(b"x" * (1 << 20))
    pins.append(b"p" * (64 << 10))
del texts
print(rss() - start)
"""


def test_large_texts_freed_go_back_to_the_system_once_blocks_are_returned():
    """Decision 0054: without `return_large_blocks`, 150 MiB of texts freed stay resident
    (the heap cannot shrink past the blocks kept between them); with it, they leave (the
    kept blocks are ~10 MiB)."""
    import subprocess
    import sys

    def kept(mode: str) -> int:
        run = subprocess.run([sys.executable, "-c", _FREED, mode], capture_output=True, text=True)
        return int(run.stdout)

    # glibc's default keeps them in every run measured idle (158-159 MiB in 40 runs); one
    # run of the full suite saw less once (cause not found), so the default's case is
    # shown by any of three runs: the tuned case, the claim of 0054, must hold in each
    assert max(kept("default") for _ in range(3)) > 120
    assert kept("tuned") < 30
