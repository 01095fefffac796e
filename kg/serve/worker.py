"""A query worker process (`python -m kg.serve.worker OUT_DIR MEMORY_BYTES`): opens the
query store once, caps its own address space, then answers one query at a time read from
stdin, each under a CPU-time limit.

Invariant: whatever a query does (exhaust memory, overflow a stack, spin), only this
process dies; the server (kg.serve.runner) sees the pipe close and answers for it. The
worker reads only the store and its pipes: it writes no file (RLIMIT_FSIZE 0) and opens
no connection (the evaluator has no SERVICE or LOAD left to run: kg.serve.guard).

Messages both ways: a 4-byte big-endian length, then that many bytes. A request is one
JSON object; an answer is a JSON head followed by the body bytes.
"""

from __future__ import annotations

import json
import os
import resource
import struct
import sys
import time
from pathlib import Path
from typing import BinaryIO

LENGTH = struct.Struct(">I")


def open_query_store(out_dir: Path):
    """The store a query worker evaluates against: the one place that decides how it is
    opened (today the build's graph.nt loaded into memory)."""
    import pyoxigraph as ox

    store = ox.Store()
    store.bulk_load(path=str(out_dir / "graph.nt"), format=ox.RdfFormat.N_TRIPLES)
    return store


def send(stream: BinaryIO, data: bytes) -> None:
    stream.write(LENGTH.pack(len(data)) + data)
    stream.flush()


def receive(stream: BinaryIO, most: int) -> bytes | None:
    """One message, or None at end of stream (or a message longer than `most`)."""
    head = stream.read(LENGTH.size)
    if len(head) < LENGTH.size:
        return None
    (size,) = LENGTH.unpack(head)
    if size > most:
        return None
    data = stream.read(size)
    return data if len(data) == size else None


def _address_space() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _cap(memory: int) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    limit = _address_space() + memory
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _cpu_deadline(seconds: float) -> None:
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = used.ru_utime + used.ru_stime
    soft = int(spent + seconds) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))


def answer(store, request: dict) -> tuple[dict, bytes]:
    """Run one request; (head, body)."""
    from kg.serve import sparql

    limits = sparql.Limits(timeout=request["timeout"], max_results=request["max_results"])
    try:
        result = sparql.execute(
            store,
            request["query"],
            request["accept"],
            limits,
            request["default"],
            request["named"],
            request["base"],
        )
    except SyntaxError as exc:
        return {"outcome": "syntax", "message": str(exc)}, b""
    except sparql.QueryTimeout:
        return {"outcome": "timeout"}, b""
    except sparql.NotAcceptable as exc:
        return {"outcome": "not-acceptable", "offered": list(exc.offered)}, b""
    except MemoryError:
        return {"outcome": "memory"}, b""
    except Exception as exc:  # an evaluation error is the query's fault, never the server's
        return {"outcome": "failed", "message": f"{type(exc).__name__}: {exc}"}, b""
    head = {"outcome": "ok", "media": result.media_type, "truncated": result.truncated}
    return head, result.body


def main(out_dir: str, memory: str) -> None:
    store = open_query_store(Path(out_dir))
    _cap(int(memory))
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    send(stdout, b"ready")
    while (message := receive(stdin, 64 * 1024 * 1024)) is not None:
        started = time.monotonic()
        request = json.loads(message)
        _cpu_deadline(request["timeout"])
        head, body = answer(store, request)
        head["seconds"] = round(time.monotonic() - started, 3)
        send(stdout, json.dumps(head).encode())
        send(stdout, body)


if __name__ == "__main__":
    main(*sys.argv[1:3])
