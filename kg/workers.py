"""Where per-part work runs: forked processes on this machine, or a Dask cluster.

A stage hands a *pure* function `function(state, item) -> result` (the state shared by
every part, one part in, its files or results out), the state and the items to a
`Pool`, and gets the results back in the items' order, so the output is the same
wherever the parts ran.

- `ForkPool` (the default, `kg build --executor local`): the state and the items go in
  a module global before forking; the workers share the parent's memory (copy-on-write)
  and receive only indexes, so nothing big is pickled. Where `fork` is unavailable, or
  with one job, everything runs in this process.
- `DaskPool` (`kg build --executor dask`, the `kg[dask]` extra): a `distributed.Client`
  to a scheduler, or to a `LocalCluster` it starts. The state is pickled once and
  scattered to every worker; each task then carries one item. Dask is imported only here
  and only then.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any, Protocol, TypeVar

from kg.errors import UsageError

AUTO_JOBS_FROM = 100
EXECUTORS = ("local", "dask")
CONNECT_TIMEOUT = 10  # seconds to reach a dask scheduler
CONNECT_SLACK = 2  # seconds more before a connection that never answers is given up
TASKS_AHEAD = 4  # dask tasks in flight per worker: results wait on workers, not in bulk

S = TypeVar("S")
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


def fork_map(
    function: Callable[[T], R],
    items: Sequence[T],
    jobs: int,
    here: Collection[int] = (),
    apart: bool = False,
) -> Iterator[R]:
    """`map(function, items)` in order, on `jobs` processes when that can help: this one
    and `jobs - 1` forked helpers take the next item in turn; the items at the indexes
    `here` (those that need the most memory) are this process's alone, run first: only
    one process's peak counts them (decision 0051). With `apart`, this process runs
    none (but those `here`) and only collects: what the items leave in a process's
    memory (freed objects holding arenas) goes away with the helpers (decision 0067).

    This process works too instead of waiting: a forked helper's resident size starts at
    its parent's (the page tables are copied), so every process added costs the parent's
    whole size in memory summed over the run; with 2 jobs, 2 processes instead of 3.
    """
    import multiprocessing  # here: `kg --version` need not load it

    if jobs <= 1 or len(items) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(function, items)
        return
    context = multiprocessing.get_context("fork")
    taken = context.Value("q", 0)  # the next item to take, shared
    results = context.Queue()
    helpers = [
        context.Process(target=_helper, args=(function, items, taken, results, here), daemon=True)
        for _ in range(jobs - 1)
    ]
    _start_frozen(helpers)
    try:
        yield from _gather(function, items, taken, results, helpers, here, apart)
    finally:
        for helper in helpers:
            if helper.is_alive():
                helper.kill()
            helper.join()
        results.close()


def _start_frozen(helpers: Sequence[Any]) -> None:
    """Start forked processes with every object of this one in the collector's permanent
    generation (gc.freeze), then give them back to this process's collector: a helper's
    collections never walk (and so never write to, copying the page) the inherited
    objects (decision 0047)."""
    import gc

    release_free_memory()  # a child would count them too
    gc.freeze()
    try:
        for helper in helpers:
            helper.start()
    finally:
        gc.unfreeze()


def release_free_memory() -> None:
    """Give the C allocator's free pages back to the system (glibc's `malloc_trim`; a
    no-op elsewhere): texts that were made and let go (over 512 bytes each, so not in
    Python's own arenas) otherwise stay in this process's resident size."""
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim  # this process's C library
    except (OSError, AttributeError):
        return
    trim(0)


MMAP_FROM = 128 * 1024  # bytes: a block this large gets its own mapping (M_MMAP_THRESHOLD)
_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter


def return_large_blocks() -> None:
    """From now on, in this process and the ones it forks, every block of `MMAP_FROM`
    bytes or more (a page's, a person file's or a pickle's text) is mapped on its own and
    goes back to the system when freed (decision 0054). glibc's default raises that
    threshold to the largest block freed so far (up to 32 MiB): after the first large
    page, such texts are carved from the heap and, once freed, stay resident, in this
    process's peak and in every helper forked later. A no-op without glibc."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, MMAP_FROM)


def _take(taken: Any, total: int, skip: Collection[int] = ()) -> int | None:
    with taken.get_lock():
        index = taken.value
        while index < total and index in skip:
            index += 1
        if index >= total:
            return None
        taken.value = index + 1
        return index


def _helper(
    function: Callable[[T], R],
    items: Sequence[T],
    taken: Any,
    results: Any,
    here: Collection[int] = (),
) -> None:
    """A forked helper: take items (not those kept `here`) until none is left; send
    (index, ok, result or error)."""
    while (index := _take(taken, len(items), here)) is not None:
        ok, data = _outcome(partial(function, items[index]), index)
        results.put(data)  # pickled here, not in the queue's thread: a failure is reported
        if not ok:
            return


def _outcome(call: Callable[[], R], *head: object) -> tuple[bool, bytes]:
    """`(*head, True, call())` pickled, or `(*head, False, the error)`: an error that
    cannot be pickled goes as a RuntimeError naming it. The other process raises it."""
    import pickle

    try:
        return True, pickle.dumps((*head, True, call()), protocol=5)
    except BaseException as exc:
        try:
            return False, pickle.dumps((*head, False, exc), protocol=5)
        except Exception:
            error = RuntimeError(f"{type(exc).__name__}: {exc}")
            return False, pickle.dumps((*head, False, error), protocol=5)


def _gather(
    function: Callable[[T], R],
    items: Sequence[T],
    taken: Any,
    results: Any,
    helpers: list,
    here: Collection[int] = (),
    apart: bool = False,
) -> Iterator[R]:
    """Run items here while any is left (those kept `here` first; with `apart`, only
    those), collect the helpers' results, yield in order."""
    import pickle
    import queue

    done: dict[int, R] = {}
    following = 0
    own = sorted(i for i in here if 0 <= i < len(items))[::-1]
    while following < len(items):
        index = own.pop() if own else None if apart else _take(taken, len(items), here)
        if index is not None:
            done[index] = function(items[index])
            if index in here:  # the largest transients: their free pages go back now
                release_free_memory()
        while True:  # whatever the helpers finished meanwhile; wait only when idle
            try:
                found, ok, value = pickle.loads(results.get(block=index is None, timeout=1))
            except queue.Empty:
                if index is None and not any(h.is_alive() for h in helpers):
                    raise RuntimeError("a worker process ended without its result") from None
                break
            if not ok:
                raise value
            done[found] = value
            if index is None:
                break
        while following in done:
            yield done.pop(following)
            following += 1


def in_child(function: Callable[[], R]) -> R:
    """`function()` in a forked child, its result sent back: what it allocates on the way
    (and the allocator keeps after) never grows this process, which forked workers copy
    later. Errors are raised here with their type; a child that dies is a RuntimeError."""
    import multiprocessing
    import pickle

    if "fork" not in multiprocessing.get_all_start_methods():
        return function()
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_send_result, args=(function, sender), daemon=True)
    _start_frozen([child])
    sender.close()  # the child's end: EOF here when the child is gone
    try:
        ok, value = pickle.loads(receiver.recv_bytes())
    except EOFError:
        child.join()
        raise RuntimeError(f"a worker process died (exit code {child.exitcode})") from None
    finally:
        child.join()
        receiver.close()
    if not ok:
        raise value
    return value


def _send_result(function: Callable[[], R], sender: Any) -> None:
    sender.send_bytes(_outcome(function)[1])
    sender.close()


def python_command(*args: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment that run this Python with `args` (`-c CODE` or `-m
    MODULE`), importing this kg first and never a module of the current folder: `-P`
    keeps the folder (a project's, which may hold a planted `pickle.py`) off sys.path,
    and PYTHONPATH loses its empty entries, which would name it too."""
    import sys

    import kg

    entries = [
        str(Path(kg.__file__).parents[1]),
        *os.environ.get("PYTHONPATH", "").split(os.pathsep),
    ]
    path = os.pathsep.join(entry for entry in entries if entry)
    return [sys.executable, "-P", *args], {**os.environ, "PYTHONPATH": path}


def python_process(code: str) -> subprocess.Popen[bytes]:
    """`python -c code` started by `python_command`, talking through stdin and stdout
    (its stderr dropped: the caller reads what it sends, or that it died)."""
    command, env = python_command("-c", code)
    return subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )


def in_new_interpreter(
    function: Callable[..., R], *args: Any, feed: Iterable[Any] | None = None
) -> R:
    """`function(*args)` in a new Python interpreter, not a fork: the process starts at
    the interpreter's size instead of this one's (a forked child counts its parent's
    pages again, decision 0051), and what it allocates is gone when it ends. `function`
    is a module-level function (pickled by reference, as are `args` and the result).
    With `feed`, its items are sent one at a time as the process reads them, and
    `function` gets an iterator over them as its last argument: a large input is never
    whole in either process. Errors are raised here with their type; a process that
    dies is a RuntimeError."""
    import pickle

    child = python_process("from kg.workers import _run_job; _run_job()")
    stdout = child.stdout
    assert child.stdin is not None and stdout is not None
    answer: list[bytes] = []
    reader = threading.Thread(target=lambda: answer.append(stdout.read()), daemon=True)
    reader.start()  # read as it comes: a child that fails early is never blocked writing
    try:
        with child.stdin as sending:
            pickle.dump((function, args, feed is not None), sending, protocol=5)
            for sent, item in enumerate(feed or (), start=1):
                pickle.dump((True, item), sending, protocol=5)
                if sent % 16 == 0:  # what the feed made and let go
                    release_free_memory()
            pickle.dump((False, None), sending, protocol=5)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the process ended before reading everything: its answer says why
    finally:
        release_free_memory()  # what the feed made and let go
        reader.join()
        child.wait()
    try:
        ok, value = pickle.loads(answer[0])
    except Exception:
        raise RuntimeError(f"a worker process died (exit code {child.returncode})") from None
    if not ok:
        raise value
    return value


def _run_job() -> None:
    """The process of `in_new_interpreter`: (function, args, fed) on stdin, then the fed
    items; the outcome on stdout; all pickled."""
    import pickle
    import sys

    tune_collector()  # as the CLI does
    receiving = sys.stdin.buffer
    function, args, fed = pickle.load(receiving)

    def items() -> Iterator[Any]:
        while True:
            more, item = pickle.load(receiving)
            if not more:
                return
            yield item

    call = partial(function, *args, items()) if fed else partial(function, *args)
    sys.stdout.buffer.write(_outcome(call)[1])
    sys.stdout.buffer.flush()


class Pool(Protocol):
    def map(
        self,
        function: Callable[[S, T], R],
        state: S,
        items: Sequence[T],
        here: Collection[int] = (),
        apart: bool = False,
    ) -> Iterator[R]:
        """`function(state, item)` for every item, results in the items' order; `here`:
        the indexes of the items that need the most memory, which a pool that can runs
        in one process; `apart`: the calling process runs none of the others (hints:
        the results are the same)."""
        ...

    def describe(self) -> str:
        """For progress messages: `2 jobs`, `dask at tcp://10.0.0.5:8786, 4 workers`."""
        ...


_shared: tuple[Callable[[Any, Any], Any], Any, Sequence[Any]] | None = None  # before forking


class ForkPool:
    """Forked processes that read the state and the items from the parent's memory."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs

    def map(
        self,
        function: Callable[[S, T], R],
        state: S,
        items: Sequence[T],
        here: Collection[int] = (),
        apart: bool = False,
    ) -> Iterator[R]:
        global _shared
        _shared = (function, state, items)
        try:
            yield from fork_map(_apply_shared, range(len(items)), self.jobs, here, apart)
        finally:
            _shared = None

    def describe(self) -> str:
        return f"{self.jobs} job{'s' if self.jobs != 1 else ''}"


def _apply_shared(index: int) -> Any:
    assert _shared is not None
    function, state, items = _shared
    return function(state, items[index])


def as_pool(jobs: int | Pool) -> Pool:
    """A number of jobs as a `ForkPool`; a pool as it is."""
    return ForkPool(jobs) if isinstance(jobs, int) else jobs


@dataclass(frozen=True)
class Executor:
    """Where `kg build` runs its parts: `local` (forked processes) or `dask`, on the
    cluster whose scheduler is at `scheduler`, or on a `LocalCluster` when it is None."""

    kind: str = "local"
    scheduler: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in EXECUTORS:
            raise UsageError(f"unknown executor {self.kind!r}; expected one of {EXECUTORS}")
        if self.scheduler is not None and self.kind != "dask":
            raise UsageError("--scheduler needs --executor dask")


LOCAL = Executor()


class Session:
    """An open executor: `pool(profiles)` gives the pool for a project of that size."""

    def __init__(self, jobs: int, remote: Pool | None = None) -> None:
        self.jobs = jobs
        self.remote = remote

    def pool(self, profiles: int) -> Pool:
        return self.remote or ForkPool(worker_count(self.jobs, profiles))


@contextmanager
def session(executor: Executor, jobs: int) -> Iterator[Session]:
    """Open the executor before any work, so an unreachable scheduler fails first."""
    if executor.kind == "local":
        yield Session(jobs)
        return
    with _dask_client(executor.scheduler, worker_count(jobs, AUTO_JOBS_FROM)) as client:
        yield Session(jobs, DaskPool(client))


_one_at_a_time = threading.Lock()


def call_alone(function: Callable[[S, T], R], state: S, item: T) -> R:
    """`function(state, item)`, one call at a time in this process: validation patches
    pySHACL while it runs, so a dask worker with several threads runs parts in turn."""
    with _one_at_a_time:
        return function(state, item)


def in_order(
    submit: Callable[[T], Any], result: Callable[[Any], R], items: Sequence[T], ahead: int
) -> Iterator[R]:
    """Submit items keeping at most `ahead` in flight; yield their results in order."""
    queue = iter(items)
    pending = deque(submit(item) for item in islice(queue, ahead))
    while pending:
        done = result(pending.popleft())
        pending.extend(submit(item) for item in islice(queue, 1))
        yield done


class DaskPool:
    """Tasks on a dask cluster: the state scattered once to every worker, one item a task."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def map(
        self,
        function: Callable[[S, T], R],
        state: S,
        items: Sequence[T],
        here: Collection[int] = (),
        apart: bool = False,
    ) -> Iterator[R]:
        from distributed.client import FutureCancelledError
        from distributed.comm.core import CommClosedError
        from distributed.scheduler import KilledWorker

        try:
            yield from self._map(function, state, items)
        except (CommClosedError, KilledWorker, FutureCancelledError) as exc:  # not kg's bugs
            where = self.client.scheduler.address
            reason = _one_line(f"{type(exc).__name__}: {exc}")
            raise UsageError(f"the dask cluster at {where} failed: {reason}") from None

    def _map(self, function: Callable[[S, T], R], state: S, items: Sequence[T]) -> Iterator[R]:
        if not items:
            return
        # in a list: scatter would take a dict (or a list) for many values
        [shared] = self.client.scatter([state], broadcast=True, hash=False)
        workers = max(len(self.client.nthreads()), 1)

        def submit(item: T) -> Any:
            return self.client.submit(call_alone, function, shared, item, pure=False)

        def result(future: Any) -> R:
            value = future.result()
            future.release()
            return value

        try:
            yield from in_order(submit, result, items, TASKS_AHEAD * workers)
        finally:
            shared.release()

    def describe(self) -> str:
        workers = len(self.client.nthreads())
        return f"dask at {self.client.scheduler.address}, {workers} workers"


@contextmanager
def _dask_client(scheduler: str | None, workers: int) -> Iterator[Any]:
    """A client to `scheduler`, or to a `LocalCluster` of `workers` single-threaded
    processes; closed (and the cluster stopped) on the way out."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError(
            "--executor dask needs dask and distributed: install kg[dask] (pip install 'kg[dask]')"
        ) from None
    if scheduler is None:
        with (
            LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address="127.0.0.1:0",
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client
        return
    client = _connect(Client, scheduler)
    with client:
        try:
            client.wait_for_workers(1, timeout=_connect_timeout())
        except (OSError, TimeoutError) as exc:  # parts would wait for ever
            raise UsageError(f"the dask scheduler at {scheduler!r} has no workers: {exc}") from None
        yield client


def _connect_timeout() -> float:
    """CONNECT_TIMEOUT, or less when dask's own `distributed.comm.timeouts.connect` says so
    (e.g. DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=2s)."""
    import dask.config
    from dask.utils import parse_timedelta

    configured = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect", None))
    return min(CONNECT_TIMEOUT, configured or CONNECT_TIMEOUT)


def _connect(client_class: Any, scheduler: str) -> Any:
    """A client to `scheduler`, made in a thread watched by a deadline: a server that
    accepts the connection and never answers (or answers garbage) is a UsageError within
    the connect timeout (plus a little), never a hang and never an internal error."""
    timeout = _connect_timeout()
    outcome: dict[str, Any] = {}

    def attempt() -> None:
        try:
            outcome["client"] = client_class(scheduler, timeout=timeout)
        except BaseException as exc:  # whatever the far end made us raise
            outcome["error"] = exc

    thread = threading.Thread(target=attempt, name="kg-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + CONNECT_SLACK)
    if thread.is_alive():
        raise UsageError(
            f"the dask scheduler at {scheduler!r} did not answer within {timeout:g} s "
            "(is it a dask scheduler?)"
        )
    if "error" in outcome:
        error = outcome["error"]
        reason = _one_line(f"{type(error).__name__}: {error}")
        raise UsageError(f"cannot reach the dask scheduler at {scheduler!r}: {reason}")
    return outcome["client"]


def _one_line(text: str) -> str:
    """A far end's words as one short printable line."""
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return text[:300]
