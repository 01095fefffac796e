"""Headless Chromium (Debian's `chromium`) driven by Playwright; pages served on 127.0.0.1."""

from __future__ import annotations

import functools
import shutil
import threading
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path, "Debian's chromium must be installed (the README's test command installs it)"
    return path


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        return None


@contextmanager
def serve(folder: Path):
    """Serve `folder` over HTTP on 127.0.0.1 (a free port); yield the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield instance
        finally:
            instance.close()


def visit(instance, url: str, origin: str, screenshot: Path | None = None) -> dict:
    """Open `url`; report console errors, requests leaving `origin`, and the parsed JSON-LD."""
    context = instance.new_context()
    page = context.new_page()
    errors: list[str] = []
    outside: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def route(r):
        if r.request.url.startswith(origin):
            return r.continue_()
        outside.append(r.request.url)
        return r.abort()

    page.route("**/*", route)
    page.goto(url, wait_until="load")
    blocks = page.evaluate(
        "() => Array.from(document.querySelectorAll('script[type=\"application/ld+json\"]'))"
        ".map(s => JSON.parse(s.textContent))"
    )
    pwned = page.evaluate("() => window.__pwned === undefined ? null : window.__pwned")
    scripts = page.evaluate(
        "() => Array.from(document.querySelectorAll('script:not([type])')).map(s => s.outerHTML)"
    )
    if screenshot is not None:
        page.screenshot(path=str(screenshot), full_page=True)
    context.close()
    return {
        "errors": errors,
        "outside": outside,
        "jsonld": blocks,
        "pwned": pwned,
        "plain_scripts": scripts,
    }
