"""`kg import orcid ID` / `kg import dblp PID` fetch the record themselves: tested against
a server on 127.0.0.1 that answers with recorded responses (the fixtures), its address
given in KG_ORCID_API / KG_DBLP_API."""

from __future__ import annotations

import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import REPO

from kg.cli import main

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "import"
SLUG = "yihao-zhao"
IID = "0000-0002-1825-0097"
RECORDED = {
    f"/v3.0/{IID}/record": "orcid-record.json",
    f"/v3.0/{IID}/works/3333331": "orcid-works.json",  # the one summary without authors
    "/pid/00/0000.xml": "dblp-person.xml",
}


class _Recorded(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Accept", "")))
        name = RECORDED.get(self.path)
        body = (FIXTURES / name).read_bytes() if name else b"not found"
        self.send_response(200 if name else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorded)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def project(tmp_path, server, monkeypatch) -> Path:
    monkeypatch.setenv("KG_ORCID_API", f"{server}/v3.0")
    monkeypatch.setenv("KG_DBLP_API", server)
    monkeypatch.chdir(tmp_path)  # the iD is no file here
    root = tmp_path / "project"
    shutil.copytree(REPO / "data", root / "data")
    shutil.copy(REPO / "kg.toml", root / "kg.toml")
    _Recorded.seen.clear()
    return root


def test_orcid_id_fetches_the_record_and_the_full_works(project, capsys):
    args = ["--project", str(project), "import", "orcid", IID, "--person", SLUG, "--dry-run"]
    assert main(args) == 2  # the recorded works answer holds an error item, as ORCID's can
    assert "error answer" in capsys.readouterr().err
    _Recorded.seen.clear()
    assert main([*args, "--skip-bad"]) == 0
    out = capsys.readouterr().out
    assert _Recorded.seen == [
        (f"/v3.0/{IID}/record", "application/json"),
        (f"/v3.0/{IID}/works/3333331", "application/json"),
    ]
    assert "Quokka" in out or "Multi-resource" in out  # a work fetched in full
    assert "organization: pku" in out  # an employment from the record


def test_dblp_pid_fetches_the_person_xml(project, capsys):
    args = ["--project", str(project), "import", "dblp", "00/0000", "--person", SLUG, "--dry-run"]
    assert main(args) == 0
    assert _Recorded.seen == [("/pid/00/0000.xml", "application/xml")]
    assert "would change" in capsys.readouterr().out


def test_an_unknown_id_is_exit_2_naming_the_address(project, server, capsys):
    args = ["--project", str(project), "import", "orcid", "0000-0001-5109-3700", "--person", SLUG]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{server}/v3.0/0000-0001-5109-3700/record answered 404" in err
