"""The persistent query store: pyoxigraph on disk, written by `kg build`, opened (not
rebuilt) by `kg query`, `kg serve` and the benchmarks.

Invariant: a store is opened only when it is exactly what this user's kg wrote for the
graph that `<out>/build.json` names, and only while the project's input files are as they
were at that build. The store lives in `.kg-cache/store/<sha256 of graph.nt>/`; beside it,
`<sha256>.json` is a manifest signed (HMAC-SHA256) with the user's cache secret
(kg.cache) that lists every file of the store with its size, mtime and inode, and the
stat fingerprint of the inputs. Anything else (a `.kg-cache` that came with a clone, a
changed or added file, a link where kg makes folders, an edit to data/ since the build)
is ignored and the caller loads the graph as before: a store is never trusted, and never
a crash.

Layout: every triple is in the named graph of its subject's page owner (the subject's
top-most ancestor IRI that is itself a subject, see kg.publish.layout: `person/x` holds
`person/x/award/1`); subjects outside the base IRI are in the default graph. Queries see
the union of all graphs (`use_default_graph_as_union`), which is exactly graph.nt.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox

from kg.cache import package_digest, user_secret
from kg.config import Config
from kg.query.store import QueryStore

STORE_DIR = ".kg-cache/store"
_HEX = frozenset("0123456789abcdef")
_CHUNK = 20_000  # quads made at a time for pyoxigraph's bulk loader (bounded memory)


def open_built_store(config: Config, out_dir: Path | None = None) -> QueryStore | None:
    """The store of the build in `out_dir` (default: the configured output), read-only,
    when it may be trusted (see the module's invariant); else None."""
    sha = _built_graph_sha(out_dir or config.out_dir)
    secret = user_secret()
    folder = _store_root(config)
    if sha is None or secret is None or folder is None:
        return None
    manifest = _read_manifest(folder / f"{sha}.json", secret)
    if manifest is None or manifest.get("inputs") != inputs_fingerprint(config):
        return None
    path = folder / sha
    if manifest.get("files") != _file_stamps(path):
        return None
    try:
        return QueryStore(ox.Store.read_only(str(path)), union=True)
    except OSError:
        return None


def save_built_store(config: Config, out_dir: Path) -> Path | None:
    """Write (or keep) the store of the build in `out_dir`; remove the stores of older
    builds. Returns the store's folder, or None where no store can be kept (no secret,
    a link in the way, an unreadable graph)."""
    sha = _built_graph_sha(out_dir)
    secret = user_secret()
    folder = _store_root(config, create=True)
    if sha is None or secret is None or folder is None:
        return None
    path = folder / sha
    manifest = _read_manifest(folder / f"{sha}.json", secret)
    if manifest is None or manifest.get("files") != _file_stamps(path):
        _remove(path)
        if not write_store(out_dir / "graph.nt", path, config.base_iri):
            return None
    _write_manifest(folder / f"{sha}.json", secret, config, path)
    _remove_others(folder, sha)
    return path


def inputs_fingerprint(config: Config) -> list[list[object]]:
    """(path, size, mtime) of kg.toml and every file under data/, and kg's own digest:
    what a build's graph is a function of (checked by a stat of each file, no reads)."""
    found: list[list[object]] = [["kg", package_digest()]]
    for path in [config.root / "kg.toml", *_files_under(config.data_dir)]:
        try:
            info = path.stat()
        except OSError:
            continue
        found.append([str(path), info.st_size, info.st_mtime_ns])
    return found


def _files_under(folder: Path) -> Iterator[Path]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield from _files_under(Path(entry.path))
        else:
            yield Path(entry.path)


def _built_graph_sha(out_dir: Path) -> str | None:
    from kg.query.graph_store import BUILD_RECORD

    try:
        record = json.loads((out_dir / BUILD_RECORD).read_text(encoding="utf-8"))
        sha = record["graph"]["sha256"]
        path = record["graph"]["path"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ok = isinstance(sha, str) and len(sha) == 64 and set(sha) <= _HEX and path == "graph.nt"
    return sha if ok else None


def _store_root(config: Config, create: bool = False) -> Path | None:
    """`.kg-cache/store`, only when every folder on the way is a real folder (never a
    link a project shipped); made with `create`."""
    path = config.root
    for part in Path(STORE_DIR).parts:
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            if not create:
                return None
            try:
                os.mkdir(path, 0o700)
            except OSError:
                return None
            continue
        except OSError:
            return None
        if not stat.S_ISDIR(mode):
            return None
    return path


def _file_stamps(path: Path) -> list[list[object]] | None:
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
        return [
            [e.name, s.st_size, s.st_mtime_ns, s.st_ino]
            for e in entries
            if (s := e.stat(follow_symlinks=False)) and stat.S_ISREG(s.st_mode)
        ] + [[e.name, "not a file"] for e in entries if not e.is_file(follow_symlinks=False)]
    except OSError:
        return None


def _sign(secret: bytes, payload: bytes) -> str:
    return hmac.new(secret, b"kg-store\0" + payload, hashlib.sha256).hexdigest()


def _read_manifest(path: Path, secret: bytes) -> dict | None:
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        data = path.read_bytes()
    except OSError:
        return None
    mac, _, payload = data.partition(b"\n")
    if not hmac.compare_digest(mac, _sign(secret, payload).encode()):
        return None
    try:
        manifest = json.loads(payload)
    except ValueError:
        return None
    return manifest if isinstance(manifest, dict) else None


def _write_manifest(path: Path, secret: bytes, config: Config, store: Path) -> None:
    manifest = {"inputs": inputs_fingerprint(config), "files": _file_stamps(store)}
    payload = json.dumps(manifest, separators=(",", ":")).encode()
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(_sign(secret, payload).encode() + b"\n" + payload)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)


def write_store(graph_nt: Path, path: Path, base: str) -> bool:
    """Bulk-load graph.nt into a new on-disk store, one named graph per page owner."""
    try:
        owners = _owners(graph_nt, base)
        store = ox.Store(str(path))
        quads = io.BufferedReader(_ChunkReader(_quad_chunks(graph_nt, owners)), 1 << 20)
        # lenient: the lines are kg's own graph.nt, written and checked by this build
        store.bulk_load(quads, format=ox.RdfFormat.N_QUADS, lenient=True)
        store.flush()
        del store
    except (OSError, SyntaxError, ValueError):
        _remove(path)
        return False
    return True


def _subject(line: bytes) -> bytes | None:
    """The subject IRI of an N-Triples line (kg writes no blank nodes), else None."""
    if not line.startswith(b"<"):
        return None
    end = line.find(b"> ")
    return line[1:end] if end > 0 else None


def _owners(graph_nt: Path, base: str) -> dict[bytes, bytes]:
    """Subject IRI under `base` -> the IRI of its page owner (itself for a page)."""
    prefix = base.encode()
    subjects: set[bytes] = set()
    with graph_nt.open("rb") as lines:
        for line in lines:
            s = _subject(line)
            if s is not None and s.startswith(prefix) and len(s) > len(prefix):
                subjects.add(s)
    owners = {}
    for s in subjects:
        cut = s.find(b"/", len(prefix))
        while cut != -1 and s[:cut] not in subjects:
            cut = s.find(b"/", cut + 1)
        owners[s] = s[:cut] if cut != -1 else s
    return owners


def _quad_chunks(graph_nt: Path, owners: dict[bytes, bytes]) -> Iterator[bytes]:
    chunk: list[bytes] = []
    with graph_nt.open("rb") as lines:
        for line in lines:
            owner = owners.get(_subject(line) or b"")
            body = line.rstrip(b"\r\n")
            if owner is not None and body.endswith(b" ."):
                body = body[:-1] + b"<" + owner + b"> ."
            chunk.append(body)
            if len(chunk) >= _CHUNK:
                yield b"\n".join(chunk) + b"\n"
                chunk = []
    if chunk:
        yield b"\n".join(chunk) + b"\n"


class _ChunkReader(io.RawIOBase):
    """A binary stream over an iterator of byte chunks (the quads, made as they are read:
    one chunk in memory at a time)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._rest:
            self._rest = next(self._chunks, b"")
            if not self._rest:
                return 0
        size = min(len(buffer), len(self._rest))
        buffer[:size] = self._rest[:size]
        self._rest = self._rest[size:]
        return size


def _remove(path: Path) -> None:
    """Remove a folder kg made (never follows a link: rmtree refuses one at the top and
    unlinks links inside without following them)."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path)
        else:
            path.unlink()
    except OSError:
        return


def _remove_others(folder: Path, keep: str) -> None:
    """The stores and manifests of older builds (names kg gives them, nothing else)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        name = entry.name.removesuffix(".json")
        if len(name) == 64 and set(name) <= _HEX and name != keep:
            _remove(Path(entry.path))
