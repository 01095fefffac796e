"""The SPARQL endpoint's isolated query runner: `limits.concurrent` slots, each a worker
process (kg.serve.worker) with its own copy of the store, capped in address space and
CPU time.

Invariant: a slot is busy exactly while its query runs. A query that runs out of time is
killed with its process (SIGKILL), so its slot is free the moment its 503 is sent; a
query that crashes or exhausts its worker's memory takes only that worker. Replacement
workers start in the background; a claim that finds no idle worker starts one itself.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from starlette.concurrency import run_in_threadpool

from kg.serve import sparql
from kg.serve.worker import receive, send

START_SECONDS = 120.0  # a worker must have opened the store by then


class Busy(Exception):
    """Every query slot is taken."""


class Crashed(Exception):
    """The query's worker died (memory cap, stack, signal) before it answered."""


class Failed(Exception):
    """Evaluation raised an error: the query's fault (400)."""


@dataclass
class Worker:
    process: subprocess.Popen

    @classmethod
    def start(cls, out_dir: Path, memory: int) -> Worker:
        command = [sys.executable, "-m", "kg.serve.worker", str(out_dir), str(memory)]
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        worker = cls(process)
        if receive(process.stdout, 16) != b"ready":  # type: ignore[arg-type]
            worker.kill()
            raise Crashed(f"a query worker could not open {out_dir}")
        return worker

    def call(self, request: dict) -> tuple[dict, bytes]:
        """Send one request, wait for its answer; Crashed when the process dies first."""
        try:
            send(self.process.stdin, json.dumps(request).encode())  # type: ignore[arg-type]
            head = receive(self.process.stdout, 1 << 20)  # type: ignore[arg-type]
            body = receive(self.process.stdout, 1 << 31)  # type: ignore[arg-type]
        except (OSError, ValueError):
            head = body = None
        if head is None or body is None:
            raise Crashed()
        return json.loads(head), body

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class Runner:
    """Runs protocol requests in worker processes, at most `limits.concurrent` at once."""

    def __init__(self, out_dir: Path, limits: sparql.Limits) -> None:
        self.out_dir = out_dir
        self.limits = limits
        self.idle: list[Worker] = []
        self.free = limits.concurrent
        self.lock = threading.Lock()
        self.closed = False

    def _claim(self) -> Worker | None:
        """Take a slot (and an idle worker if one is ready); Busy when none is free."""
        with self.lock:
            if self.free == 0:
                raise Busy()
            self.free -= 1
            return self.idle.pop() if self.idle else None

    def _release(self, worker: Worker | None) -> None:
        with self.lock:
            self.free += 1
            if worker is not None and not self.closed:
                self.idle.append(worker)
                return
        if worker is not None:
            worker.kill()

    def warm(self) -> None:
        """Start one worker in the background, so the first query finds it ready."""
        threading.Thread(target=self._spare, daemon=True).start()

    def _spare(self) -> None:
        try:
            worker = Worker.start(self.out_dir, self.limits.memory)
        except Crashed:
            return
        with self.lock:
            if not self.closed and len(self.idle) < self.free:
                self.idle.append(worker)
                return
        worker.kill()

    async def run(self, request: dict) -> tuple[dict, bytes]:
        """The worker's answer head and body; raises Busy, Crashed or TimeoutError."""
        worker = self._claim()
        request = {**request, "timeout": self.limits.timeout}
        request["max_results"] = self.limits.max_results
        try:
            if worker is None:
                worker = await run_in_threadpool(Worker.start, self.out_dir, self.limits.memory)
            job = run_in_threadpool(worker.call, request)
            head, body = await asyncio.wait_for(job, self.limits.timeout + 0.5)
        except BaseException:
            if worker is not None:
                await run_in_threadpool(worker.kill)  # its slot is free again below
            self._release(None)
            self.warm()
            raise
        self._release(worker)
        return head, body

    def close(self) -> None:
        with self.lock:
            self.closed = True
            idle, self.idle = self.idle, []
        for worker in idle:
            worker.kill()
