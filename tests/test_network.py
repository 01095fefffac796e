"""Broken and hostile servers for `kg query --endpoint` and `kg publish --store` (issue 15,
item 2): real sockets on 127.0.0.1, each failure one line and exit 2, no traceback."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import MINI

from kg.cli import main
from kg.errors import RemoteError, UsageError
from kg.query import net
from kg.query.graph_store import build_record, publish, published_graph
from kg.query.stored import parse_query, run_remote

PEOPLE = parse_query("SELECT ?s WHERE { ?s ?p ?o }", "people")
OK_JSON = json.dumps(
    {"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "x:y"}}]}}
).encode()


def _read_request(conn: socket.socket) -> bytes:
    """The request's head and its Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


class RawServer:
    """Accepts connections on 127.0.0.1 and hands each socket to `handle`."""

    def __init__(self, handle: Callable[[socket.socket], None]) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.handle = handle
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/sparql"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(10)
            _read_request(conn)  # all of it: closing on unread bytes would send a reset
            self.handle(conn)
        except OSError:
            pass
        finally:
            conn.close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def _reply(status: str, body: bytes, content_type: str = "application/sparql-results+json"):
    head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return lambda conn: conn.sendall(head.encode() + body)


def _drip(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    for _ in range(100):  # one byte every 0.2 s: each read succeeds, the whole never ends
        conn.sendall(b"X")
        time.sleep(0.2)


def _cli_query(url: str, *extra: str) -> list[str]:
    return ["--project", str(MINI), "query", "people", "--endpoint", url, *extra]


BROKEN = {
    "closed": (lambda conn: None, "closed the connection without an answer"),
    "not-http": (lambda conn: conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n"), "reply is not HTTP"),
    "cut-body": (
        lambda conn: conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{"),
        "before the whole answer arrived",
    ),
    "html-200": (_reply("200 OK", b"<html><body>hello</body></html>", "text/html"), "not SPARQL"),
    "no-type": (
        _reply("200 OK", json.dumps({"head": {"vars": ["s"]}, "results": {"bindings": [
            {"s": {"value": "x"}}]}}).encode()),
        "binding of ?s has type None",
    ),
    "no-results": (_reply("200 OK", b'{"head": {}}'), "malformed SPARQL JSON results"),
    "html-500": (
        _reply("500 Oops", b"<html><head><title>t</title></head><body><h1>Boom</h1>\n"
               + b"<p>line two</p>" + b"x" * 5000 + b"</body></html>", "text/html"),
        "the endpoint failed (HTTP 500): Boom: line two",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_endpoint_gives_one_line_and_exit_2(case, capsys):
    handle, message = BROKEN[case]
    with RawServer(handle) as server:
        assert main(_cli_query(server.url, "--timeout", "5")) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert err.count("\n") == 1 and len(err) < 500 and "Traceback" not in err


def test_slow_drip_hits_the_total_deadline(capsys):
    with RawServer(_drip) as server:
        started = time.monotonic()
        assert main(_cli_query(server.url, "--timeout", "0.5")) == 2
        elapsed = time.monotonic() - started
    assert 0.4 < elapsed < 2.0, elapsed
    assert "no answer within the timeout (0.5 s)" in capsys.readouterr().err


def test_slow_drip_hits_the_deadline_on_publish():
    with RawServer(_drip) as server:
        started = time.monotonic()
        with pytest.raises(RemoteError, match="no answer within the timeout"):
            publish(b"<a:b> <a:c> <a:d> .\n", server.url, timeout=0.5)
        assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "-inf", "soon", ""])
def test_bad_timeouts_are_refused_with_exit_2(value, capsys):
    for command in (
        _cli_query("http://127.0.0.1:9/sparql", f"--timeout={value}"),
        ["--project", str(MINI), "publish", "--store", "http://127.0.0.1:9/", f"--timeout={value}"],
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(command)
        assert exit_info.value.code == 2
        assert "expected a number of seconds above 0" in capsys.readouterr().err
    number = float(value) if value not in ("soon", "") else value
    with pytest.raises(UsageError):
        net.request("GET", "http://127.0.0.1:9/", timeout=number)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "data:,x", "/etc/passwd", "http:///x"]
)
def test_only_http_urls_are_used(url, capsys, tmp_path):
    assert main(_cli_query(url)) == 2
    assert "expected an absolute http:// or https:// URL" in capsys.readouterr().err
    with pytest.raises(UsageError):
        publish(b"", url)


def _read_body(stream, length: int) -> str:
    sha = hashlib.sha256()
    while length > 0:
        block = stream.read(min(length, 65536))
        if not block:
            break
        sha.update(block)
        length -= len(block)
    return sha.hexdigest()


class Recorder:
    """An HTTP server on 127.0.0.1 that records each request's headers and answers with
    `answer(handler)` -> (status, headers, body)."""

    def __init__(self, answer) -> None:
        self.seen: list[dict[str, str]] = []
        self.bodies: list[str] = []  # each request body's SHA-256 (read in blocks)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self):
                outer.seen.append({"path": self.path, "method": self.command, **self.headers})
                outer.bodies.append(
                    _read_body(self.rfile, int(self.headers["Content-Length"] or 0))
                )
                status, headers, body = answer(self)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_HEAD = _any

            def log_message(self, *args):
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _basic_then(redirect_to: str):
    def answer(handler):
        if "Authorization" not in handler.headers:
            return 401, {"WWW-Authenticate": 'Basic realm="kg"'}, b""
        return 307, {"Location": redirect_to}, b""

    return answer


def _ok(handler):
    json_type = {"Content-Type": "application/sparql-results+json"}
    return (201 if handler.command == "PUT" else 200), json_type, OK_JSON


def test_credentials_do_not_follow_a_redirect_to_another_origin():
    with Recorder(_ok) as other:
        with Recorder(_basic_then(f"{other.base}/elsewhere")) as first:
            answer = run_remote(f"{first.base}/sparql", PEOPLE, timeout=5, user="u", password="pw")
            assert answer.rows
            assert publish(b"", f"{first.base}/store", "https://g.example/", "u", "pw", 5) == 201
        assert any("Authorization" in seen for seen in first.seen)
        assert other.seen and not any("Authorization" in seen for seen in other.seen)
        assert {seen["method"] for seen in other.seen} == {"POST", "PUT"}  # 307 keeps both


def test_credentials_follow_a_redirect_on_the_same_origin():
    def answer(handler):
        if handler.path.startswith("/moved"):
            return _ok(handler)
        return _basic_then("/moved")(handler)

    with Recorder(answer) as server:
        assert run_remote(f"{server.base}/sparql", PEOPLE, timeout=5, user="u", password="pw").rows
        moved = [seen for seen in server.seen if seen["path"].startswith("/moved")]
        assert moved and moved[0]["Authorization"].startswith("Basic ")


def test_a_redirect_to_a_file_url_is_refused():
    refused = pytest.raises(UsageError, match="redirect to 'file:///etc/passwd'")
    with Recorder(lambda h: (302, {"Location": "file:///etc/passwd"}, b"")) as server, refused:
        run_remote(f"{server.base}/sparql", PEOPLE, timeout=5)


def test_redirect_loops_end():
    looping = pytest.raises(RemoteError, match="more than 5 redirects")
    with Recorder(lambda h: (307, {"Location": h.path + "x"}, b"")) as server, looping:
        run_remote(f"{server.base}/sparql", PEOPLE, timeout=5)


def test_password_is_sent_only_after_a_challenge():
    with Recorder(_ok) as server:
        run_remote(f"{server.base}/sparql", PEOPLE, timeout=5, user="u", password="pw")
        assert not any("Authorization" in seen for seen in server.seen)


def test_digest_answer_matches_rfc_7616_example():
    # RFC 7616 section 3.9.1 (MD5): user Mufasa, password "Circle of Life"
    params = {
        "realm": "http-auth@example.org",
        "qop": "auth",
        "algorithm": "MD5",
        "nonce": "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
        "opaque": "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS",
    }
    value = net.digest_header(
        net.Credentials("Mufasa", "Circle of Life"), params, "GET", "/dir/index.html", 1
    )
    fields = dict(part.split("=", 1) for part in value.removeprefix("Digest ").split(", "))
    cnonce = fields["cnonce"].strip('"')
    import hashlib

    def md5(text: str) -> str:
        return hashlib.md5(text.encode()).hexdigest()

    ha1 = md5("Mufasa:http-auth@example.org:Circle of Life")
    ha2 = md5("GET:/dir/index.html")
    expected = md5(f"{ha1}:{params['nonce']}:00000001:{cnonce}:auth:{ha2}")
    assert fields["response"] == f'"{expected}"' and fields["qop"] == "auth"
    assert fields["opaque"] == f'"{params["opaque"]}"'
    # with the RFC's own cnonce the response is the RFC's
    rfc_cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"
    rfc = md5(f"{ha1}:{params['nonce']}:00000001:{rfc_cnonce}:auth:{ha2}")
    assert rfc == "8ca523f5e9506fed4657c9700eebdbec"


def test_a_built_graph_is_streamed_from_its_file(tmp_path):
    """`kg publish` sends graph.nt from the descriptor it hashed, in blocks with its
    Content-Length, again after a challenge and a redirect: never read whole (at 100k
    people the file is about 4 GB)."""
    line = b"<http://example.org/s> <http://example.org/p> " + b'"%d" .\n'
    data = b"".join(line % i for i in range(500_000))  # ~29 MB, many of net.BLOCK
    (tmp_path / "graph.nt").write_bytes(data)
    record = build_record(True, 0, 0, "graph.nt", tmp_path / "graph.nt")
    (tmp_path / "build.json").write_text(record, encoding="utf-8")

    def answer(handler):
        if handler.path.startswith("/moved"):
            return _ok(handler)
        return _basic_then("/moved")(handler)

    with Recorder(answer) as server:
        tracemalloc.start()
        with published_graph(tmp_path) as built:
            assert publish(built, f"{server.base}/store", None, "u", "pw", 20) == 201
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    puts = [(seen, body) for seen, body in zip(server.seen, server.bodies, strict=True)]
    moved = [(seen, body) for seen, body in puts if seen["path"].startswith("/moved")]
    assert moved and moved[0][1] == hashlib.sha256(data).hexdigest()
    assert moved[0][0]["Content-Length"] == str(len(data))
    assert all("Transfer-Encoding" not in seen for seen, _ in puts)
    assert peak < 12 << 20 < len(data) // 2, peak  # blocks of 4 MiB at most, two at once
