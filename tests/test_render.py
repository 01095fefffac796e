"""Where the render's tasks run (decision 0069): after an edit that reaches few items,
in the build's process alone; with forked workers, the heaviest profiles' tasks each in
a short-lived child before the workers fork. The files are the same either way
(tests/test_partition.py: two jobs against one, the workers writing their files;
tests/test_incremental.py: a build after an edit against a cold build)."""

from __future__ import annotations

from kg.publish.dirty import Reached
from kg.publish.render import ALONE_UP_TO, _alone, _heavy, _make_state, _pool, _tasks
from kg.workers import ForkPool


def test_after_an_edit_that_reaches_few_items_the_render_forks_no_worker():
    few = Reached({"pperson-000001"}, {f"tthing-{i}" for i in range(5000)})
    assert isinstance(_pool(few, 2), ForkPool) and _pool(few, 2).jobs == 1
    many = Reached({f"pperson-{i}" for i in range(ALONE_UP_TO + 1)}, set())
    assert _pool(many, 2).jobs == 2
    assert _pool(None, 2).jobs == 2  # a cold build, or a reach not known: every item
    assert _pool(None, 1).jobs == 1


def test_the_heaviest_profiles_tasks_run_in_children_only_beside_forked_workers(
    seed_build, repo_config
):
    resolution, mapped = seed_build
    state = _make_state(repo_config, resolution, mapped.triples, None, None)
    tasks = list(_tasks(resolution, len(state.things)))
    heavy = _heavy(tasks, state)
    alone = _alone(ForkPool(2), tasks, heavy)
    profiles = resolution.dataset.profiles
    most = max(range(len(profiles)), key=lambda i: len(profiles[i].publications))
    assert alone and all(tasks[i][0] == "people" for i in alone)
    assert any(tasks[i][1] <= most < tasks[i][2] for i in alone)
    assert set(alone) < heavy  # the site pages and the things' tasks stay with the pool
    assert _alone(ForkPool(1), tasks, heavy) == []  # one process: a child would count it twice
