"""The HTTP bounds of `kg serve` that the ASGI layer enforces (uvicorn enforces the rest:
kg.serve.server), and the headers every response carries.

Invariant: no request whose path is longer than `max_path` bytes or has more than
`max_segments` segments reaches a route (414), no request body longer than `max_body`
bytes is read (413), at most `requests` requests are in flight (503), and every
response carries `X-Content-Type-Options: nosniff` and `Access-Control-Allow-Origin: *`
(the data is public; no credentials are ever honoured).
"""

from __future__ import annotations

from dataclasses import dataclass

ALWAYS = [
    (b"x-content-type-options", b"nosniff"),
    (b"access-control-allow-origin", b"*"),
]


@dataclass(frozen=True)
class HttpLimits:
    """Bounds on one connection and one request (docs/security.md#kg-serve)."""

    max_path: int = 2048  # bytes of the raw path and query string
    max_segments: int = 64  # `/`-separated segments of the path
    max_body: int = 64 * 1024  # bytes of a request body (only /sparql takes one)
    max_header: int = 16 * 1024  # bytes of the request line and headers together
    header_timeout: float = 10.0  # seconds to send a whole request head
    keep_alive: int = 5  # seconds an idle kept-alive connection stays open
    requests: int = 256  # requests in flight; more get 503 at once
    connections: int = 1000  # open connections (idle and half-sent ones too); more are closed


class Bounds:
    """ASGI middleware: refuse oversized paths and bodies, add the ALWAYS headers."""

    def __init__(self, app, limits: HttpLimits) -> None:
        self.app = app
        self.limits = limits
        self.in_flight = 0  # touched only on the event loop

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(n, v) for n, v in ALWAYS if n not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        problem = self._problem(scope)
        if problem is None and self.in_flight >= self.limits.requests:
            problem = 503, "too many requests at once; try again shortly"
        if problem is not None:
            await _plain(send_with_headers, *problem)
            return
        self.in_flight += 1
        try:
            await self.app(scope, _capped(receive, self.limits.max_body), send_with_headers)
        finally:
            self.in_flight -= 1

    def _problem(self, scope) -> tuple[int, str] | None:
        raw = scope.get("raw_path") or scope["path"].encode()
        if len(raw) + len(scope.get("query_string", b"")) > self.limits.max_path:
            return 414, f"the URL is longer than {self.limits.max_path} bytes"
        if raw.count(b"/") > self.limits.max_segments:
            return 414, f"the path has more than {self.limits.max_segments} segments"
        for name, value in scope["headers"]:
            if name == b"content-length" and (
                not value.isdigit() or int(value) > self.limits.max_body
            ):
                return 413, f"a request body may have at most {self.limits.max_body} bytes"
        return None


class BodyTooLarge(Exception):
    """The client sent more body than `max_body` (chunked, without Content-Length)."""


def _capped(receive, most: int):
    seen = 0

    async def capped():
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > most:
                raise BodyTooLarge()
        return message

    return capped


async def _plain(send, status: int, text: str) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
    body = (text + "\n").encode()
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
