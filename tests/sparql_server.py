"""A real SPARQL server for tests: `oxigraph serve` on 127.0.0.1, in memory."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def oxigraph_server(timeout: float = 30.0):
    """Start `oxigraph serve` on a free loopback port; yield its base URL; stop it."""
    binary = shutil.which("oxigraph")
    assert binary, "the `oxigraph` package (PyPI) must be installed: pip install -e '.[test]'"
    port = free_port()
    process = subprocess.Popen(
        [binary, "serve", "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"{base}/query?query=ASK%7B%7D", timeout=2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "oxigraph serve did not start: "
                        + process.stderr.read().decode(errors="replace")
                    ) from None
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
