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


# Measured in the page: anything wider than the window, figure labels past their figure
# or on each other, labels under 11 px, figures without an accessible name.
MEASURE = """() => {
  const width = document.documentElement.clientWidth, problems = [];
  if (document.documentElement.scrollWidth > width)
    problems.push(`page is ${document.documentElement.scrollWidth}px wide in ${width}px`);
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("svg") && el.localName !== "svg") continue;
    const r = el.getBoundingClientRect();
    if (r.width && (r.right > width + 0.5 || r.left < -0.5))
      problems.push(`${el.localName}.${el.className} spans ${r.left}-${r.right}`);
  }
  let labels = 0, smallest = 99;
  for (const svg of document.querySelectorAll("svg.figure")) {
    const box = svg.getBoundingClientRect();
    const texts = Array.from(svg.querySelectorAll("text"));
    const rects = texts.map(t => t.getBoundingClientRect());
    rects.forEach((r, i) => {
      labels += 1;
      smallest = Math.min(smallest, r.height);
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 ||
          r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        problems.push(`label "${texts[i].textContent}" runs past its figure`);
      rects.slice(i + 1).forEach((q, j) => {
        if (r.left < q.right - 0.5 && q.left < r.right - 0.5 &&
            r.top < q.bottom - 0.5 && q.top < r.bottom - 0.5)
          problems.push(`"${texts[i].textContent}", "${texts[i + 1 + j].textContent}" overlap`);
      });
    });
    const title = document.getElementById(svg.getAttribute("aria-labelledby"));
    if (!title || title.localName !== "title" || !title.textContent.trim())
      problems.push(`figure without an accessible name`);
  }
  return {problems, labels, smallest};
}"""

# Text cut off by its box: an element that hides overflow and holds more than it shows.
CLIPPED = """() => Array.from(document.body.querySelectorAll("*")).filter(el => {
  if (el.closest("svg") || !el.textContent.trim() || el.classList.contains("visually-hidden"))
    return false;
  const style = getComputedStyle(el);
  const hides = ["hidden", "clip"].includes(style.overflowX) || style.textOverflow === "ellipsis";
  return hides && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1);
}).map(el => el.localName + "." + el.className + ": " + el.textContent.slice(0, 40))"""


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


@contextmanager
def visitor(instance, origin: str):
    """One browser tab for a run of visits (a new context per page costs ~0.4 s): yields
    `visit(url, screenshot=None)`, which opens `url` and reports its console errors, the
    requests leaving `origin` (aborted, never sent), the parsed JSON-LD, whether a planted
    script ran, and the page's plain scripts. Each visit is a fresh document."""
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

    def visit(url: str, screenshot: Path | None = None) -> dict:
        errors.clear()
        outside.clear()
        page.goto(url, wait_until="load")
        found = page.evaluate(READ)
        if screenshot is not None:
            page.screenshot(path=str(screenshot), full_page=True)
        return {"errors": list(errors), "outside": list(outside), **found}

    try:
        yield visit
    finally:
        context.close()


READ = """() => ({
  jsonld: Array.from(document.querySelectorAll('script[type="application/ld+json"]'))
    .map(s => JSON.parse(s.textContent)),
  pwned: window.__pwned === undefined ? null : window.__pwned,
  plain_scripts: Array.from(document.querySelectorAll('script:not([type])')).map(s => s.outerHTML),
})"""
