"""`kg serve --watch`: rebuild after every edit; keep serving the last good build when an
edit breaks it, and say why (terminal and pages)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool

from kg import pipeline
from kg.config import Config, load_config
from kg.errors import KgError
from kg.serve.app import Live
from kg.serve.site import Site

Log = Callable[[str], None]
SHOWN_RESULTS = 20


def build_site(config: Config, log: Log, jobs: int = 0) -> tuple[Site | None, str | None]:
    """Build into the output directory and open it; (site, None), or (None, the error)."""
    try:
        config = dataclasses.replace(load_config(config.root), out=config.out)  # kg.toml edits
        result = pipeline.build(config, progress=log, jobs=jobs)
    except KgError as exc:
        return None, str(exc)
    if not result.published:
        return None, violations(result.report)
    return Site.open(config.out_dir, config.root), None


def violations(report) -> str:
    """The violations of a report, one line each, as `kg validate` words them."""
    bad = [r for r in report.results if r.severity == "Violation"]
    lines = [f"the graph violates the shapes ({len(bad)} violations); not published"]
    for r in bad[:SHOWN_RESULTS]:
        where = f"{r.source.file}:{r.source.line}:{r.source.column}" if r.source else "-"
        path = f" {r.path}" if r.path else ""
        lines.append(f"{where}: {r.message}{path}")
    if len(bad) > SHOWN_RESULTS:
        lines.append(f"... and {len(bad) - SHOWN_RESULTS} more (kg validate shows them all)")
    return "\n".join(lines)


def watched_paths(config: Config) -> list[Path]:
    """data/, kg.toml and the project's own queries/, shapes/, ontology/, templates/ and
    static/ (photos, PDFs, the logo), when they exist (not dist/ or .kg-cache/)."""
    root = config.root
    candidates = [config.data_dir, root / "kg.toml"] + [
        root / name for name in ("queries", "shapes", "ontology", "templates", "static")
    ]
    return [p for p in candidates if p.exists()]


async def rebuild_on_change(config: Config, live: Live, log: Log, stop: asyncio.Event) -> None:
    from watchfiles import awatch

    async for changes in awatch(*watched_paths(config), stop_event=stop, debounce=200, step=50):
        names = sorted({Path(path).name for _, path in changes})
        log(f"changed: {', '.join(names)}; rebuilding")
        site, error = await run_in_threadpool(build_site, config, log, 1)  # no fork in threads
        if site is None:
            live.error = error
            log(f"build failed; still serving the last good build:\n{error}")
        else:
            live.replace(site)
            log(f"rebuilt: serving {site.triples} triples")


def watcher(config: Config, live: Live, log: Log):
    """A Starlette lifespan that runs `rebuild_on_change` while the server runs."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        stop = asyncio.Event()
        task = asyncio.create_task(rebuild_on_change(config, live, log, stop))
        try:
            yield
        finally:
            stop.set()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, 5)

    return lifespan
