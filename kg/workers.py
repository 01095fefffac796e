"""Worker processes: how many, and a `fork` pool that shares the parent's memory.

Callers put what the workers read (the triple index, the shapes) in a module global
before calling `fork_map`, and pass only small arguments (indexes, task tuples), so
nothing big is pickled. Where `fork` is unavailable everything runs in this process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

AUTO_JOBS_FROM = 100

T = TypeVar("T")
R = TypeVar("R")


def tune_collector() -> None:
    """Collect cyclic garbage less often. A build allocates millions of small objects
    (terms, triples, records) that live until the end; with Python's default thresholds
    the collector walks them again and again: about 40% of the CPU time of loading,
    resolving and mapping 1000 profiles. The graph holds few cycles, so this costs
    little memory."""
    import gc

    gc.set_threshold(50_000, 20, 100)


def worker_count(jobs: int, profiles: int) -> int:
    """`jobs`, or with 0 (auto) one per usable CPU once the project is big enough to gain."""
    if jobs > 0:
        return jobs
    if profiles < AUTO_JOBS_FROM:
        return 1
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return len(cpus) if cpus else os.cpu_count() or 1


def fork_map(function: Callable[[T], R], items: Sequence[T], jobs: int) -> Iterator[R]:
    """`map(function, items)` in order, in `jobs` forked processes when that can help."""
    import multiprocessing  # here: `kg --version` need not load it

    if jobs <= 1 or len(items) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(function, items)
        return
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        yield from pool.imap(function, items)
