"""`kg serve`: the built site and data with content negotiation, a SPARQL 1.1 endpoint on
the embedded store, the stored queries as an API, and `--watch` (docs/serve.md).

Starlette on uvicorn; the library never prints: messages go to the `log` callback.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

from starlette.applications import Starlette

from kg.config import Config
from kg.errors import ProjectError, UsageError
from kg.query import load_queries
from kg.serve.app import Live, create_app
from kg.serve.sparql import Limits
from kg.serve.watch import build_site, watcher

Log = Callable[[str], None]

__all__ = ["Limits", "Live", "app_for", "open_live", "serve"]


def open_live(config: Config, log: Log, rebuild: bool, limits: Limits | None = None) -> Live:
    """The build to serve: rebuilt first with `rebuild` (or when there is none yet)."""
    from kg.serve.site import Site

    site, error = None, None
    built = (config.out_dir / "site").is_dir() and (config.out_dir / "graph.nt").is_file()
    if rebuild or not built:
        site, error = build_site(config, log)
    if site is None:
        if not built:
            raise ProjectError(f"nothing to serve: the build failed:\n{error}")
        site = Site.open(config.out_dir)
    live = Live(site, load_queries(config.queries_dir), config.queries_dir, limits or Limits())
    live.error = error
    return live


def app_for(config: Config, live: Live, watch: bool, log: Log) -> Starlette:
    return create_app(live, lifespan=watcher(config, live, log) if watch else None)


def serve(
    config: Config,
    host: str,
    port: int,
    watch: bool,
    log: Log,
    limits: Limits | None = None,
) -> None:
    """Serve until interrupted."""
    import uvicorn

    _check_port(host, port)
    live = open_live(config, log, rebuild=watch, limits=limits)
    if live.error:
        log(f"build failed; serving the last good build:\n{live.error}")
    app = app_for(config, live, watch, log)
    log(
        f"serving {config.out_dir} on http://{host}:{port}/ "
        f"(SPARQL: /sparql, stored queries: /queries{', watching for edits' if watch else ''})"
    )
    server = uvicorn.Server(
        uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    )
    server.run()


def _check_port(host: str, port: int) -> None:
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
