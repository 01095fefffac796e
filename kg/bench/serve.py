"""`kg bench serve`: `kg serve` on a synthetic corpus under load from `wrk` (Debian
package) on 127.0.0.1, in three timed phases with 16 connections in all:

1. pages: HTML pages of people, publications, organizations, venues, topics;
2. `.ttl`: the same things' Turtle descriptions;
3. stored queries under load: 4 connections on `/queries/<name>?person=...` while 12
   keep loading pages.

Each phase reports requests/s, p50/p99 latency and errors (connection, read, timeout,
non-2xx/3xx); the server's resident memory is read from /proc after each phase.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from kg import scheme
from kg.errors import UsageError
from kg.formats import TURTLE
from kg.workers import python_command

Log = Callable[[str], None]

QUERIES = ("coauthors", "publications-of-person", "timeline")
SAMPLE = 2000  # paths per phase, cycled through by every connection

_LUA = r"""
local paths = {PATHS}
local accept = "{ACCEPT}"
local counter = 0
local id = 0
setup = function(thread) thread:set("id", id); id = id + 1 end
init = function(args) counter = id * 7919 end
request = function()
  counter = counter + 1
  local path = paths[(counter % #paths) + 1]
  if accept ~= "" then
    return wrk.format("GET", path, {["Accept"] = accept})
  end
  return wrk.format("GET", path)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'KGJSON {"requests": %d, "seconds": %.3f, "p50_ms": %.3f, "p99_ms": %.3f, ' ..
    '"mean_ms": %.3f, "errors": %d, "status_errors": %d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1e3,
    latency:percentile(99) / 1e3, latency.mean / 1e3,
    e.connect + e.read + e.write + e.timeout, e.status))
end
"""


def run(people: int, seconds: int, clients: int, log: Log, seed: int = 1, port: int = 0) -> dict:
    """Generate, build, serve and load-test; the figures as a dictionary."""
    wrk = shutil.which("wrk")
    if wrk is None:
        raise UsageError("kg bench serve needs wrk (Debian: apt-get install wrk)")
    if clients < 8:
        raise UsageError("--clients must be at least 8 (4 of them query while the rest load)")
    from kg.bench.synth import generate

    with tempfile.TemporaryDirectory(prefix="kg-bench-serve-") as tmp:
        root = Path(tmp)
        log(f"generating {people} people")
        generate(root, people, seed)
        started = time.perf_counter()
        _kg(root, "build", log)
        build_seconds = time.perf_counter() - started
        port = port or _free_port()
        command, env = python_command("-m", "kg", "--project", str(root), "serve")
        server = subprocess.Popen(
            [*command, "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            _wait(base, server)
            result = _phases(wrk, base, root, seconds, clients, server.pid, log)
        finally:
            server.terminate()
            server.wait(10)
    result.update(people=people, build_seconds=build_seconds, clients=clients)
    return result


def _phases(wrk: str, base: str, root: Path, seconds: int, clients: int, pid: int, log: Log):
    things = _things(root)
    pages = [f"/{t}" for t in things]
    turtle = [f"/{scheme.file_path(t, TURTLE.ext)}" for t in things]
    people = [t for t in things if scheme.kind_of(t) == scheme.PERSON][: SAMPLE // len(QUERIES)]
    base_iri = _base_iri(root)
    queries = [
        f"/queries/{name}?person={urllib.parse.quote(scheme.mint(base_iri, p), safe='')}"
        for p in people
        for name in QUERIES
    ]
    result: dict = {"things": len(things)}
    rss_before = _rss(pid)
    log(f"pages: {clients} connections for {seconds} s")
    result["pages"] = _wrk(wrk, base, pages, "text/html", clients, seconds)
    result["rss_after_pages_mib"] = _rss(pid)
    short = max(seconds // 3, 10)
    log(f".ttl: {clients} connections for {short} s")
    result["ttl"] = _wrk(wrk, base, turtle, "", clients, short)
    log(f"stored queries: 4 connections, while {clients - 4} load pages, for {short} s")
    load = subprocess.Popen(
        _wrk_command(wrk, base, _script(pages, "text/html"), clients - 4, short),
        stdout=subprocess.PIPE,
        text=True,
    )
    result["queries"] = _wrk(wrk, base, queries, "application/json", 4, short)
    result["pages_during_queries"] = _parse(load.communicate(timeout=short + 60)[0])
    result["rss_start_mib"] = rss_before
    result["rss_end_mib"] = _rss(pid)
    result["peak_rss_mib"] = _rss(pid, "VmHWM")
    return result


def _things(root: Path) -> list[str]:
    """Paths of things with pages (not the profile copies), sampled evenly."""
    site = root / "dist" / "site"
    found = sorted(
        p.relative_to(site).with_suffix("").as_posix()
        for p in site.rglob("*.html")
        if p.parent != site and p.parent.name != "profile"
    )
    step = max(len(found) // SAMPLE, 1)
    return found[::step][:SAMPLE]


def _base_iri(root: Path) -> str:
    from kg.config import load_config

    return load_config(root).base_iri


def _script(paths: list[str], accept: str) -> str:
    listed = "{" + ", ".join(json.dumps(p) for p in paths) + "}"
    return _LUA.replace("{PATHS}", listed).replace("{ACCEPT}", accept)


def _wrk_command(wrk: str, base: str, script: str, connections: int, seconds: int) -> list[str]:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False, encoding="utf-8") as handle:
        handle.write(script)
    threads = str(min(2, connections))
    return [wrk, "-t", threads, "-c", str(connections), "-d", f"{seconds}s", "-s", handle.name,
            "--timeout", "10s", base]  # fmt: skip


def _wrk(wrk: str, base: str, paths: list[str], accept: str, connections: int, seconds: int):
    command = _wrk_command(wrk, base, _script(paths, accept), connections, seconds)
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    finally:
        os.unlink(command[command.index("-s") + 1])
    return _parse(out.stdout)


def _parse(text: str) -> dict:
    for line in text.splitlines():
        if line.startswith("KGJSON "):
            figures = json.loads(line[len("KGJSON ") :])
            figures["per_second"] = figures["requests"] / max(figures["seconds"], 1e-9)
            return figures
    raise RuntimeError(f"wrk printed no summary:\n{text[-2000:]}")


def _kg(root: Path, command: str, log: Log) -> None:
    log(f"kg {command}")
    argv, env = python_command("-m", "kg", "--project", str(root), command)
    run = subprocess.run(
        argv,
        env=env,
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        raise RuntimeError(f"kg {command} failed:\n{run.stderr[-2000:]}")


def _wait(base: str, server: subprocess.Popen, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"kg serve stopped: {server.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            urllib.request.urlopen(f"{base}/_kg/build", timeout=2).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("kg serve did not start")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def table(result: dict) -> str:
    """The figures as a Markdown table."""
    rows = [
        "| phase | connections | requests | req/s | p50 ms | p99 ms | errors |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    phases = (
        ("pages (HTML)", "pages", result["clients"]),
        ("`.ttl` descriptions", "ttl", result["clients"]),
        ("stored queries under load", "queries", 4),
        ("pages during the queries", "pages_during_queries", result["clients"] - 4),
    )
    for label, key, connections in phases:
        f = result[key]
        rows.append(
            f"| {label} | {connections} | {f['requests']} | {f['per_second']:.0f} "
            f"| {f['p50_ms']:.1f} | {f['p99_ms']:.1f} | {f['errors'] + f['status_errors']} |"
        )
    rows.append(
        f"\n{result['people']} people, {result['things']} things sampled; build "
        f"{result['build_seconds']:.0f} s; server memory {result['rss_start_mib']:.0f} MiB "
        f"at start, {result['rss_end_mib']:.0f} MiB at the end, peak "
        f"{result['peak_rss_mib']:.0f} MiB."
    )
    return "\n".join(rows)
