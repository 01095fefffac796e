"""Running `kg serve`: open the build, make the app, and run uvicorn with the HTTP bounds
of kg.serve.bounds.HttpLimits (header size, header timeout, keep-alive, connections).

The library never prints: messages go to the `log` callback.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

import h11
from starlette.applications import Starlette
from uvicorn.protocols.http.h11_impl import H11Protocol

from kg.config import Config
from kg.errors import ProjectError, UsageError
from kg.query.stored import load_queries
from kg.serve.app import Live, create_app
from kg.serve.bounds import HttpLimits
from kg.serve.sparql import Limits
from kg.serve.watch import build_site, watcher

Log = Callable[[str], None]

__all__ = ["HttpLimits", "Limits", "Live", "app_for", "open_live", "serve", "uvicorn_config"]


def open_live(
    config: Config,
    log: Log,
    rebuild: bool,
    limits: Limits | None = None,
    http: HttpLimits | None = None,
) -> Live:
    """The build to serve: rebuilt first with `rebuild` (or when there is none yet)."""
    from kg.serve.site import Site

    site, error = None, None
    built = (config.out_dir / "site").is_dir() and (config.out_dir / "graph.nt").is_file()
    if rebuild or not built:
        site, error = build_site(config, log)
    if site is None:
        if not built:
            raise ProjectError(f"nothing to serve: the build failed:\n{error}")
        site = Site.open(config.out_dir, config.root)
    queries = load_queries(config.queries_dir)
    live = Live(site, queries, config.queries_dir, limits or Limits(), http=http or HttpLimits())
    live.error = error
    return live


def app_for(config: Config, live: Live, watch: bool, log: Log) -> Starlette:
    return create_app(live, lifespan=watcher(config, live, log) if watch else None)


class BoundedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline on each request's head and body: a
    client that has not sent a whole request `header_timeout` seconds after the
    connection opened (or after the previous response) is disconnected; a connection
    beyond `max_connections` is closed at once."""

    header_timeout = HttpLimits.header_timeout
    max_connections = HttpLimits.connections

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            transport.close()
            return
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def _arm(self) -> None:
        self.loop.call_later(self.header_timeout, self._expire)

    def _expire(self) -> None:
        started = self.cycle is not None and self.cycle.response_started
        pending = self.conn.their_state in (h11.IDLE, h11.SEND_BODY)
        if pending and not started and not self.transport.is_closing():
            self.transport.close()


def uvicorn_config(app: Starlette, host: str, port: int, http: HttpLimits):
    import uvicorn

    bounds = {"header_timeout": http.header_timeout, "max_connections": http.connections}
    protocol = type("KgH11", (BoundedH11,), bounds)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        http=protocol,
        ws="none",
        lifespan="on",
        timeout_keep_alive=http.keep_alive,
        h11_max_incomplete_event_size=http.max_header,
        server_header=False,
    )


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
    try:
        uvicorn.Server(uvicorn_config(app, host, port, live.http)).run()
    finally:
        if live.runner is not None:
            live.runner.close()


def _check_port(host: str, port: int) -> None:
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
