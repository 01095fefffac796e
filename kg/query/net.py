"""The one HTTP client `kg` uses to talk to SPARQL endpoints and graph stores.

Written on `http.client` so that each rule below holds in one place:

- only `http://` and `https://` URLs, at the start and after every redirect;
- one total deadline per request (connect, upload, headers and body together, redirects
  and the authentication round trip included): a watchdog shuts the socket down when it
  passes, so a server that sends one byte a second cannot hold the client;
- credentials are sent only to the origin they were given for: a redirect to another
  origin is followed without them;
- authentication answers the server's challenge: Digest (RFC 7616: MD5, SHA-256, with or
  without `qop=auth`; what Virtuoso asks for) or Basic; the password never goes out
  before the server asks for it;
- every failure is a `RemoteError` with one line: a closed connection, a reply that is
  not HTTP, a timeout, a refused connection, a TLS error, an answer over 1 GiB.

Proxy variables (`HTTP_PROXY`, `HTTPS_PROXY`) are not used: the client connects to the
host in the URL.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import http.client
import math
import os
import re
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from email.message import Message
from typing import BinaryIO

from kg.errors import RemoteError, UsageError

MAX_REDIRECTS = 5
MAX_BODY = 1 << 30  # bytes of one answer
BLOCK = 1 << 20  # bytes a file body is sent in
REDIRECTS = (301, 302, 303, 307, 308)
_CHALLENGE_PARAM = re.compile(r'([A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^,\s]*)')


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    headers: Message
    body: bytes
    url: str

    @property
    def content_type(self) -> str:
        return self.headers.get_content_type() if self.headers.get("Content-Type") else ""


def check_timeout(seconds: float) -> float:
    """A finite number of seconds above zero, else UsageError."""
    if not isinstance(seconds, int | float) or not math.isfinite(seconds) or seconds <= 0:
        raise UsageError(f"timeout {seconds!r}: expected a number of seconds above 0")
    return float(seconds)


def check_url(url: str, what: str = "URL") -> urllib.parse.SplitResult:
    """An absolute http(s) URL with a host, else UsageError (no file:, ftp:, data: …)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{what} {url!r}: expected an absolute http:// or https:// URL")
    if any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise UsageError(f"{what} {url!r}: spaces and control characters are not allowed")
    return parts


def origin(parts: urllib.parse.SplitResult) -> tuple[str, str, int]:
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80)


@dataclass
class _Auth:
    """Credentials bound to one origin, and the challenge that origin sent."""

    credentials: Credentials
    origin: tuple[str, str, int]
    challenge: tuple[str, dict[str, str]] | None = None
    count: int = field(default=0)

    def header(self, method: str, parts: urllib.parse.SplitResult) -> str | None:
        if self.challenge is None or origin(parts) != self.origin:
            return None
        scheme, params = self.challenge
        if scheme == "basic":
            pair = f"{self.credentials.user}:{self.credentials.password}".encode()
            return "Basic " + base64.b64encode(pair).decode("ascii")
        self.count += 1
        uri = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
        return digest_header(self.credentials, params, method, uri, self.count)


def digest_header(
    credentials: Credentials, params: dict[str, str], method: str, uri: str, count: int
) -> str:
    """The `Authorization: Digest …` value answering one challenge (RFC 7616 section 3.4)."""
    algorithm = params.get("algorithm", "MD5")
    name = algorithm.upper().removesuffix("-SESS")
    hasher = {"MD5": hashlib.md5, "SHA-256": hashlib.sha256}.get(name)
    if hasher is None:
        raise RemoteError(f"the server asks for Digest {algorithm}, which kg does not support")

    def h(text: str) -> str:
        return hasher(text.encode("utf-8")).hexdigest()

    realm, nonce = params.get("realm", ""), params.get("nonce", "")
    cnonce, nc = os.urandom(8).hex(), f"{count:08x}"
    ha1 = h(f"{credentials.user}:{realm}:{credentials.password}")
    if algorithm.upper().endswith("-SESS"):
        ha1 = h(f"{ha1}:{nonce}:{cnonce}")
    ha2 = h(f"{method}:{uri}")
    qops = [q.strip() for q in params.get("qop", "").split(",")]
    fields = {"username": credentials.user, "realm": realm, "nonce": nonce, "uri": uri}
    if "auth" in qops:
        fields["response"] = h(f"{ha1}:{nonce}:{nc}:{cnonce}:auth:{ha2}")
        fields.update(qop="auth", nc=nc, cnonce=cnonce)
    else:
        fields["response"] = h(f"{ha1}:{nonce}:{ha2}")
    if "opaque" in params:
        fields["opaque"] = params["opaque"]
    fields["algorithm"] = algorithm
    unquoted = ("qop", "nc", "algorithm")
    return "Digest " + ", ".join(
        f"{k}={v}" if k in unquoted else f'{k}="{_quote(v)}"' for k, v in fields.items()
    )


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def parse_challenges(headers: Message) -> dict[str, dict[str, str]]:
    """The schemes a 401 offers ("digest", "basic"), with their parameters."""
    found: dict[str, dict[str, str]] = {}
    for value in headers.get_all("WWW-Authenticate") or []:
        for chunk in re.split(r",\s*(?=(?:Digest|Basic)\b)", value, flags=re.I):
            scheme, _, rest = chunk.strip().partition(" ")
            params = {}
            for key, raw in _CHALLENGE_PARAM.findall(rest):
                if raw.startswith('"'):
                    raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
                params[key.lower()] = raw
            found.setdefault(scheme.lower(), params)
    return found


def request(
    method: str,
    url: str,
    body: bytes | BinaryIO | None = None,
    headers: dict[str, str] | None = None,
    credentials: Credentials | None = None,
    timeout: float = 30.0,
) -> Response:
    """One HTTP exchange with redirects and authentication, within `timeout` seconds in all.

    With credentials and a body, a HEAD without credentials asks for the server's
    challenge first, so a large body is sent once. A body that is an open file is sent
    from its start in blocks with its Content-Length (again after a redirect), never read
    into memory whole. Any status comes back as a Response; transport failures raise
    RemoteError.
    """
    deadline = time.monotonic() + check_timeout(timeout)
    parts = check_url(url)
    auth = _Auth(credentials, origin(parts)) if credentials else None
    if auth and body:
        probe = _exchange("HEAD", parts, None, {}, deadline, timeout)
        if probe.status == 401:
            auth.challenge = _pick(parse_challenges(probe.headers), url)
    for _ in range(MAX_REDIRECTS + 2):  # the redirects, plus one answer to a challenge
        sent = dict(headers or {})
        value = auth.header(method, parts) if auth else None
        if value:
            sent["Authorization"] = value
        response = _exchange(method, parts, body, sent, deadline, timeout)
        if response.status == 401 and auth and not value and origin(parts) == auth.origin:
            auth.challenge = _pick(parse_challenges(response.headers), url)
            continue
        location = response.headers.get("Location")
        if response.status not in REDIRECTS or not location:
            return response
        parts = check_url(urllib.parse.urljoin(response.url, location), "redirect to")
        if response.status == 303 or (response.status in (301, 302) and method == "POST"):
            method, body = "GET", None
            headers = {k: v for k, v in (headers or {}).items() if k.lower() != "content-type"}
    raise RemoteError(f"{url}: more than {MAX_REDIRECTS} redirects")


def _pick(challenges: dict[str, dict[str, str]], url: str) -> tuple[str, dict[str, str]]:
    for scheme in ("digest", "basic"):
        if scheme in challenges:
            return scheme, challenges[scheme]
    offered = ", ".join(challenges) or "none"
    raise RemoteError(
        f"{url}: authentication required, and kg speaks Basic and Digest (offered: {offered})"
    )


def _exchange(
    method: str,
    parts: urllib.parse.SplitResult,
    body: bytes | BinaryIO | None,
    headers: dict[str, str],
    deadline: float,
    timeout: float,
) -> Response:
    url = urllib.parse.urlunsplit(parts)
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise RemoteError(f"{url}: no answer within the timeout ({timeout:g} s)")
    conn = _connection(parts, remaining)
    fired = threading.Event()
    watchdog = threading.Timer(remaining, _shut, (conn, fired))
    watchdog.daemon = True
    watchdog.start()
    path = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    late = RemoteError(f"{url}: no answer within the timeout ({timeout:g} s)")
    try:
        if body is not None and not isinstance(body, bytes):
            body.seek(0)
            headers = {**headers, "Content-Length": str(os.fstat(body.fileno()).st_size)}
        conn.request(method, path, body=body, headers=headers)
        answer = conn.getresponse()
        data = answer.read(MAX_BODY + 1)
        if answer.length and len(data) <= MAX_BODY:  # Content-Length not reached
            raise http.client.IncompleteRead(data, answer.length)
    except (OSError, http.client.HTTPException) as exc:
        if fired.is_set() or isinstance(exc, TimeoutError):
            raise late from None
        raise RemoteError(f"{url}: {_describe(exc)}") from None
    finally:
        watchdog.cancel()
        conn.close()
    if fired.is_set():  # the watchdog cut the answer short: whatever arrived is not it
        raise late
    if len(data) > MAX_BODY:
        raise RemoteError(f"{url}: the answer is larger than {MAX_BODY >> 20} MiB")
    return Response(answer.status, answer.reason, answer.headers, data, url)


def _connection(parts: urllib.parse.SplitResult, timeout: float) -> http.client.HTTPConnection:
    host, port = parts.hostname or "", parts.port
    if parts.scheme.lower() == "https":
        context = ssl.create_default_context()
        return http.client.HTTPSConnection(
            host, port, timeout=timeout, context=context, blocksize=BLOCK
        )
    return http.client.HTTPConnection(host, port, timeout=timeout, blocksize=BLOCK)


def _shut(conn: http.client.HTTPConnection, fired: threading.Event) -> None:
    fired.set()
    sock = conn.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection without an answer"
    if isinstance(exc, http.client.IncompleteRead):
        return "the server closed the connection before the whole answer arrived"
    if isinstance(exc, http.client.LineTooLong | http.client.BadStatusLine):
        return "the server's reply is not HTTP"
    if isinstance(exc, http.client.HTTPException):
        return f"the server's reply is not valid HTTP ({type(exc).__name__})"
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed ({exc.reason or exc})"
    if isinstance(exc, ConnectionResetError | BrokenPipeError):
        return "the server closed the connection"
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"cannot connect ({reason or type(exc).__name__})"


def one_line(body: bytes, limit: int = 300) -> str:
    """An error body as one line of text: HTML tags, scripts and the head dropped, the
    status line servers repeat in their pages dropped, the rest joined, cut to `limit`."""
    text = body[:65536].decode("utf-8", "replace")
    text = re.sub(r"(?is)<(script|style|head)\b.*?</\1\s*>", " ", text)
    text = html.unescape(re.sub(r"<[^>]*>", "\n", text))
    lines = [" ".join(line.split()) for line in text.splitlines()]
    kept = [line for line in lines if line and not re.match(r"HTTP/\d", line)]
    joined = ": ".join(kept)
    return joined if len(joined) <= limit else joined[: limit - 1] + "…"
