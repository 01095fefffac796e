"""The SPARQL endpoint's isolated query runner: at most `limits.concurrent` queries at once,
each in its own process forked from a zygote that holds the store (kg.serve.worker).

Invariant: a slot is busy exactly while its query runs. A query that runs out of time is
killed with its process (SIGKILL), so its slot is free the moment its 503 is sent; a
query that crashes or exhausts its memory cap takes only its own process. A dead zygote
is replaced at the next query.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import struct
import subprocess
import threading
from pathlib import Path

from starlette.concurrency import run_in_threadpool

from kg.serve import sparql
from kg.serve.worker import receive, send
from kg.workers import python_command

START_SECONDS = 300.0  # the zygote must have opened the store by then


class Busy(Exception):
    """Every query slot is taken."""


class Crashed(Exception):
    """The query's process died (memory cap, stack, signal) before it answered."""


class Zygote:
    """The process that holds the store and forks one child per query."""

    def __init__(self, out_dir: Path, memory: int, project: Path | None = None) -> None:
        ours, theirs = socket.socketpair()
        command, env = python_command("-m", "kg.serve.worker", str(out_dir), str(memory))
        self.process = subprocess.Popen(
            [*command, str(theirs.fileno()), str(project or "")],
            env=env,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        theirs.close()
        self.control = ours
        ours.settimeout(START_SECONDS)
        try:
            ready = ours.recv(5)
        except OSError:
            ready = b""
        if ready != b"ready":
            self.close()
            raise Crashed(f"the query store of {out_dir} could not be opened")
        ours.settimeout(10)

    def fork(self) -> tuple[int, socket.socket]:
        """A new child process and the socket to talk to it."""
        ours, theirs = socket.socketpair()
        try:
            socket.send_fds(self.control, [b"f"], [theirs.fileno()])
            pid = struct.unpack(">i", _exactly(self.control, 4))[0]
        except OSError as exc:
            ours.close()
            raise Crashed("the query zygote is gone") from exc
        finally:
            theirs.close()
        return pid, ours

    def end(self, pid: int) -> None:
        """Kill a child (it may have ended already: a zombie until reaped) and reap it."""
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        try:
            self.control.sendall(b"r" + struct.pack(">i", pid))
            _exactly(self.control, 2)
        except OSError:
            pass

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        self.control.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data


def _call(channel: socket.socket, request: dict) -> tuple[dict, bytes]:
    """Send one request to a child, wait for its answer; Crashed when it dies first."""
    with channel.makefile("rb") as reader, channel.makefile("wb") as writer:
        try:
            send(writer, json.dumps(request).encode())
            head = receive(reader, 1 << 20)
            body = receive(reader, 1 << 31)
        except (OSError, ValueError):
            head = body = None
    if head is None or body is None:
        raise Crashed()
    return json.loads(head), body


class Runner:
    """Runs protocol requests in forked processes, at most `limits.concurrent` at once."""

    def __init__(self, out_dir: Path, limits: sparql.Limits, project: Path | None = None) -> None:
        self.out_dir = out_dir
        self.project = project  # the project that built out_dir (its store is opened)
        self.limits = limits
        self.free = limits.concurrent
        self.lock = threading.Lock()  # `free`: taken on the event loop, never held long
        self.zlock = threading.Lock()  # the zygote: held while it starts and forks
        self.zygote: Zygote | None = None
        self.closed = False

    def warm(self) -> None:
        """Start the zygote in the background, so the first query finds the store open."""
        threading.Thread(target=self._fork_nothing, daemon=True).start()

    def _fork_nothing(self) -> None:
        with self.zlock, contextlib.suppress(Crashed):
            self._zygote()

    def _zygote(self) -> Zygote:
        """The running zygote, started if need be (call with `zlock` held)."""
        if self.zygote is None or not self.zygote.alive():
            if self.closed:
                raise Crashed("the server is stopping")
            self.zygote = Zygote(self.out_dir, self.limits.memory, self.project)
        return self.zygote

    def _fork(self) -> tuple[Zygote, int, socket.socket]:
        with self.zlock:
            zygote = self._zygote()
            return zygote, *zygote.fork()

    def _end(self, zygote: Zygote, pid: int) -> None:
        with self.zlock:
            zygote.end(pid)

    def _claim(self) -> None:
        with self.lock:
            if self.free == 0:
                raise Busy()
            self.free -= 1

    def _release(self) -> None:
        with self.lock:
            self.free += 1

    async def run(self, request: dict) -> tuple[dict, bytes]:
        """The child's answer head and body; raises Busy, Crashed or TimeoutError."""
        self._claim()
        request = {**request, "timeout": self.limits.timeout}
        request["max_results"] = self.limits.max_results
        child = None
        try:
            zygote, pid, channel = child = await run_in_threadpool(self._fork)
            job = run_in_threadpool(_call, channel, request)
            return await asyncio.wait_for(job, self.limits.timeout + 0.5)
        finally:
            if child is not None:  # done or not, the child ends here: its slot is free
                await run_in_threadpool(self._end, zygote, pid)
                channel.close()
            self._release()

    def close(self) -> None:
        with self.zlock:
            self.closed = True
            zygote, self.zygote = self.zygote, None
        if zygote is not None:
            zygote.close()
