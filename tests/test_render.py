"""Where the render's tasks run (decision 0069): after an edit that reaches few items,
in the build's process alone; with forked workers, the heaviest tasks each in a
short-lived child before the workers fork; an item's files written as each is made
(decision 0075). The files are the same either way
(tests/test_partition.py: two jobs against one, the workers writing their files;
tests/test_incremental.py: a build after an edit against a cold build)."""

from __future__ import annotations

from kg.publish.dirty import Reached
from kg.publish.export import Written
from kg.publish.render import (
    ALONE_UP_TO,
    FORGET_RANGES,
    _alone,
    _heavy,
    _make_state,
    _pool,
    _tasks,
    _write_as_made,
    block_task,
)
from kg.workers import ForkPool


def test_after_an_edit_that_reaches_few_items_the_render_forks_no_worker():
    few = Reached({"pperson-000001"}, {f"tthing-{i}" for i in range(5000)})
    assert isinstance(_pool(few, 2), ForkPool) and _pool(few, 2).jobs == 1
    many = Reached({f"pperson-{i}" for i in range(ALONE_UP_TO + 1)}, set())
    assert _pool(many, 2).jobs == 2
    assert _pool(None, 2).jobs == 2  # a cold build, or a reach not known: every item
    assert _pool(None, 1).jobs == 1


def test_the_heaviest_tasks_run_in_children_only_beside_forked_workers(seed_build, repo_config):
    resolution, mapped = seed_build
    state = _make_state(repo_config, resolution, mapped.triples, None, None)
    tasks = list(_tasks(resolution, len(state.things)))
    heavy = _heavy(tasks, state)
    alone = _alone(ForkPool(2), tasks, heavy)
    profiles = resolution.dataset.profiles
    most = max(range(len(profiles)), key=lambda i: len(profiles[i].publications))
    assert any(tasks[i][0] == "people" and tasks[i][1] <= most < tasks[i][2] for i in alone)
    assert any(tasks[i][0] == "site" for i in alone)  # the site pages too (decision 0075)
    assert set(alone) == heavy  # none is left for this process to run beside the workers
    assert _alone(ForkPool(1), tasks, heavy) == []  # one process: a child would count it twice


def test_an_items_files_are_written_as_each_text_is_made(seed_build, repo_config, tmp_path):
    """With a staging folder, each text is on disk (its other paths hard links) before
    the next is made, and only the stamps are kept (decision 0075)."""
    resolution, mapped = seed_build
    state = _make_state(repo_config, resolution, mapped.triples, None, None, tmp_path)
    on_disk: list[bool] = []

    def made():
        yield ("site/a.ttl", "people/a.ttl"), "one\n"
        on_disk.append((tmp_path / "site/a.ttl").read_text() == "one\n")
        yield ("site/a.html",), "two\n"

    try:
        files = _write_as_made(state, made())
    finally:
        state.writer.close()
    assert on_disk == [True]
    assert list(files) == ["site/a.ttl", "people/a.ttl", "site/a.html"]
    assert all(isinstance(f, Written) for f in files.values())
    first, link = (tmp_path / "site/a.ttl").stat(), (tmp_path / "people/a.ttl").stat()
    assert first.st_ino == link.st_ino  # one text, one file
    assert (tmp_path / "site/a.html").read_text() == "two\n"


def test_the_block_tables_process_empties_its_term_texts_every_few_ranges(seed_build, repo_config):
    """Its term texts would grow to the whole graph's by the table's end (decision 0075)."""
    resolution, mapped = seed_build
    state = _make_state(repo_config, resolution, mapped.triples, None, None)
    subjects = state.subjects or []
    assert len(subjects) > FORGET_RANGES
    for i in range(FORGET_RANGES - 1):
        block_task(state, (i, i, i + 1))
    assert state.blocks.turtle_terms.memo  # filled by the ranges made so far
    block_task(state, (FORGET_RANGES, FORGET_RANGES, FORGET_RANGES + 1))
    assert not state.blocks.turtle_terms.memo
