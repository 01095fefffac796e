"""The persistent query store: pyoxigraph on disk, written by `kg build`, opened (not
rebuilt) by `kg query`, `kg serve` and the benchmarks.

Invariant: a store is opened only when it is exactly what this user's kg wrote for the
graph that `<out>/build.json` names, and only while the project's input files are as they
were at that build. The store lives in `.kg-cache/store/<sha256 of graph.nt>/`; beside it,
`<sha256>.json` is a manifest signed (HMAC-SHA256) with the user's cache secret
(kg.cache) that lists every file of the store with its size, mtime and inode, the
stat of `<out>/graph.nt`, the stat fingerprint of the inputs, the graph's triple count,
and the precomputed answers of the stored queries without parameters (kg.query.answers:
files in `<sha256>.answers/`, each named by the SHA-256 of its bytes). Anything else
(a `.kg-cache` that came with a clone, a changed or added file, a link where kg makes
folders, an edit to data/ or graph.nt since the build) is ignored and the caller
loads the graph as before: a store is never trusted, and never a crash.

Layout: graph.nt is the default graph, which every query sees. The named graph
`urn:kg:page-owners` (invisible to queries, which see the default graph only) says which
page owner describes each subject that has no page of its own (`<person/x/award/1>
<urn:kg:page-owner> <person/x>`, the IRI scheme of kg.publish.layout), so one owner's
triples are read by index (`QueryStore.owner_graph`) instead of a scan over every IRI.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import hmac
import json
import os
import re
import shutil
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from kg.cache import package_digest, user_secret
from kg.config import Config
from kg.query.answers import (
    Answers,
    Earlier,
    answer_key,
    link_files,
    precomputable,
    run_text,
    write_answers_bounded,
)
from kg.query.coauthors import COAUTHORS, Collector
from kg.query.footprint import Change, Delta, Footprint, change_of, footprint, matters
from kg.query.maintained import MOST_CHANGED
from kg.query.patch import Patch, page_owner, patch_store
from kg.query.store import OWNER, OWNERS, QueryStore
from kg.workers import in_new_interpreter

STORE_DIR = ".kg-cache/store"
SOURCE = "source.nt"  # in a store's folder: the graph file it was made from
_HEX = frozenset("0123456789abcdef")
_OWNERS, _OWNER = OWNERS.encode(), OWNER.encode()
_CHUNK = 50_000  # quads per call of pyoxigraph's bulk loader: its buffers grow with it (0051)
_BLOCK = 8 << 20  # bytes of graph.nt per call (about 50,000 lines at 10k people)
# The subject IRI of a run of lines of graph.nt with that subject (kg writes no blank
# nodes; an IRI holds no `>`), over a block with a newline put before it: one match a
# subject, not one a line (graph.nt is sorted: 0.7 CPU-s at 10k people, against 3.5
# for a match per line)
_SUBJECTS = re.compile(rb"\n<([^>\n]*)> [^\n]*(?:\n<\1> [^\n]*)*")


def open_built_store(config: Config, out_dir: Path | None = None) -> QueryStore | None:
    """The store of the build in `out_dir` (default: the configured output), read-only,
    with its precomputed answers (kg.query.answers), when it may be trusted (see the
    module's invariant); else None."""
    found = _trusted_manifest(config, out_dir or config.out_dir)
    if found is None:
        return None
    path, manifest = found
    answers = manifest.get("answers")
    try:
        store = ox.Store.read_only(str(path))
    except OSError:
        return None
    known = Answers(_answers_folder(path), answers) if isinstance(answers, dict) else None
    return QueryStore(store, owner_index=True, answers=known)


def built_triples(config: Config, out_dir: Path) -> int | None:
    """The number of triples of the build's graph, as its signed manifest says (None
    where the store may not be trusted)."""
    found = _trusted_manifest(config, out_dir)
    triples = found[1].get("triples") if found else None
    return triples if isinstance(triples, int) else None


def _trusted_manifest(config: Config, out_dir: Path) -> tuple[Path, dict] | None:
    """The store's folder and manifest, when signature, inputs, the graph file's stamp
    and every file of the store are as the build left them."""
    sha = _built_graph_sha(out_dir)
    secret = user_secret()
    folder = _store_root(config)
    if sha is None or secret is None or folder is None:
        return None
    manifest = _read_manifest(folder / f"{sha}.json", secret)
    if manifest is None or manifest.get("inputs") != inputs_fingerprint(config):
        return None
    path = folder / sha
    if manifest.get("graph") != _stamp(out_dir / "graph.nt"):
        return None
    if manifest.get("files") != _file_stamps(path):
        return None
    return path, manifest


def save_built_store(config: Config, out_dir: Path) -> Path | None:
    """Write (or keep) the store of the build in `out_dir` and the precomputed answers of
    the stored queries without parameters (kg.query.answers); remove the stores of older
    builds. Returns the store's folder, or None where no store can be kept (no secret,
    a link in the way, an unreadable graph)."""
    sha = _built_graph_sha(out_dir)
    secret = user_secret()
    folder = _store_root(config, create=True)
    if sha is None or secret is None or folder is None:
        return None
    with _locked(folder) as locked:
        return _save(config, out_dir, folder, sha, secret) if locked else None


@contextmanager
def _locked(folder: Path) -> Iterator[bool]:
    """One build at a time writes into `folder` (two builds of one project, or of two
    outputs of it, would remove each other's half-written stores); False where no lock
    file can be made (a link in its place)."""
    try:
        fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        yield False
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield True
    finally:
        os.close(fd)  # releases the lock


def _save(config: Config, out_dir: Path, folder: Path, sha: str, secret: bytes) -> Path | None:
    path = folder / sha
    manifest = _read_manifest(folder / f"{sha}.json", secret)
    kept = manifest is not None and manifest.get("files") == _file_stamps(path)
    reuse = None
    if not kept:
        _remove(path)
        graph_nt = out_dir / "graph.nt"
        patched = _patched(folder, sha, secret, graph_nt, path, config.base_iri)
        if not patched and not write_store_apart(graph_nt, path, config.base_iri):
            return None
        _keep_source(graph_nt, path)
        reuse = _reusable(patched)
    earlier = manifest.get("answers") if kept and manifest else None
    answers = _precompute(config, path, earlier, reuse)
    extra = {"answers": answers, "triples": _built_triples(out_dir)}
    _write_manifest(folder / f"{sha}.json", secret, config, path, out_dir, extra)
    _remove_others(folder, sha)
    return path


def _patched(
    folder: Path, sha: str, secret: bytes, graph_nt: Path, target: Path, base: str
) -> tuple[Patch, Path, dict] | None:
    """The patch, the store and the manifest of the earlier build whose trusted store (signed
    manifest, every file as written, its graph file kept) `target` was made from by
    patching it (kg.query.patch); None where none was."""
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        name = entry.name
        if len(name) != 64 or not set(name) <= _HEX or name == sha:
            continue
        previous = folder / name
        manifest = _read_manifest(folder / f"{name}.json", secret)
        files = manifest.get("files") if manifest is not None else None
        if not isinstance(files, list) or files != _file_stamps(previous):
            continue
        if any(row[0] == SOURCE and len(row) == 4 for row in files):  # a regular file
            patch = patch_store(previous, previous / SOURCE, graph_nt, target, base)
            return (patch, previous, manifest) if patch is not None and manifest else None
    return None


def _keep_source(graph_nt: Path, store: Path) -> None:
    """The build's graph file beside its store (a hard link: no copy), for the next build
    to patch the store from; listed in the signed manifest like the store's files."""
    with contextlib.suppress(OSError):
        os.link(graph_nt, store / SOURCE, follow_symlinks=False)


def _answers_folder(store: Path) -> Path:
    return store.with_name(f"{store.name}.answers")


def _reusable(patched: tuple[Patch, Path, dict] | None) -> _Reuse | None:
    """The answers of the store a patched one was made from, with the graph change."""
    if patched is None:
        return None
    patch, previous, manifest = patched
    answers, folder = manifest.get("answers"), _answers_folder(previous)
    try:
        real = stat.S_ISDIR(os.lstat(folder).st_mode)  # kg's folder, not a link
    except OSError:
        return None
    if not isinstance(answers, dict) or not real:
        return None
    change = change_of([*patch.removed, *patch.added])
    if patch.index_changed:
        change = dataclasses.replace(change, graphs=frozenset({COAUTHORS}))
    return _Reuse(folder, answers, change, patch, previous)


@dataclass(frozen=True)
class _Reuse:
    """The precomputed answers of an earlier build's store (their folder and manifest
    entries), how this build's graph differs from that store's, the patch (its lines)
    and the earlier store's folder."""

    folder: Path
    entries: dict
    change: Change
    patch: Patch
    previous: Path


MOST_CHECKED = 5_000  # changed triples checked one by one (footprint.matters); more: touched


def _delta(reuse: _Reuse, path: Path) -> Delta | None:
    """The patch's triples and both stores, read-only, for `footprint.matters`; None
    where the change is too large to check triple by triple or cannot be read."""
    lines = (reuse.patch.removed, reuse.patch.added)
    if len(lines[0]) + len(lines[1]) > MOST_CHECKED:
        return None
    try:
        removed, added = (
            [q.triple for q in ox.parse(b"".join(ls), format=ox.RdfFormat.N_TRIPLES)]
            for ls in lines
        )
        return Delta(
            removed, added, ox.Store.read_only(str(reuse.previous)), ox.Store.read_only(str(path))
        )
    except (OSError, SyntaxError, ValueError):
        return None


def _precompute(
    config: Config, path: Path, earlier: object, reuse: _Reuse | None = None
) -> dict[str, dict | None]:
    """The manifest's answers: those of an earlier manifest of the same store when it has
    every query's key; else, where the store was patched, the earlier build's answer to
    each query the change cannot touch (kg.query.footprint, decision 0034), linked into
    this store's folder, and every other query answered again (a query that could not
    be precomputed has None)."""
    queries = precomputable(config)
    keys = [answer_key(q.text) for q in queries]
    if isinstance(earlier, dict) and all(k in earlier for k in keys):
        return {k: earlier[k] for k in keys}
    folder = _answers_folder(path)
    _remove(folder)
    try:
        os.mkdir(folder, 0o700)
    except OSError:
        return dict.fromkeys(keys)
    kept: dict[str, dict] = {}
    if reuse is not None:
        delta = _delta(reuse, path)
        store = QueryStore(delta.new, owner_index=True) if delta is not None else None
        for query, key in zip(queries, keys, strict=True):
            entry = reuse.entries.get(key)
            base = config.base_iri
            text = run_text(store, query)
            if isinstance(entry, dict) and _still_true(text, entry, reuse, delta, base, folder):
                kept[key] = entry
        del store, delta  # the stores are closed before the answering process opens one
    todo = [q for q, k in zip(queries, keys, strict=True) if k not in kept]
    before = None
    if reuse is not None:
        small = len(reuse.patch.removed) + len(reuse.patch.added) <= MOST_CHANGED
        changed = (b"".join(reuse.patch.removed), b"".join(reuse.patch.added))
        before = Earlier(reuse.folder, reuse.entries, changed if small else None)
    entries = write_answers_bounded(path, todo, folder, config.base_iri, before) if todo else {}
    return {k: kept.get(k) or entries.get(k) for k in keys}


def _still_true(
    text: str, entry: dict, reuse: _Reuse, delta: Delta | None, base: str, folder: Path
) -> bool:
    """Whether an earlier answer holds for this build's graph (the change cannot touch
    what its query reads, as its signed entry says, or, finer, no changed triple can be
    used by a solution of the query `text`: footprint.matters; it was rendered with the
    same base IRI) and its files are now in `folder` (hard links, checked)."""
    reads = Footprint.from_json(entry.get("footprint")) or footprint(text)
    if entry.get("base") != base:
        return False
    if reads.touched_by(reuse.change) and (delta is None or matters(text, reuse.change, delta)):
        return False
    return link_files(entry, reuse.folder, folder)


def _built_triples(out_dir: Path) -> int | None:
    from kg.query.graph_store import BUILD_RECORD

    try:
        record = json.loads((out_dir / BUILD_RECORD).read_text(encoding="utf-8"))
        triples = record["graph"]["triples"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return triples if isinstance(triples, int) else None


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


def _stamp(path: Path) -> list[int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ino] if stat.S_ISREG(info.st_mode) else None


def _write_manifest(
    path: Path, secret: bytes, config: Config, store: Path, out_dir: Path, extra: dict
) -> None:
    manifest = {
        "inputs": inputs_fingerprint(config),
        "files": _file_stamps(store),
        "graph": _stamp(out_dir / "graph.nt"),
        **extra,
    }
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
    """Bulk-load graph.nt into a new on-disk store (the default graph), then the
    page-owner index and the co-author index (kg.query.coauthors), in one read of the
    file: its lines go to pyoxigraph as they are, in blocks of whole lines, and the
    subjects and authors are found in each block by regular expressions (not line by
    line in Python: 5.8 of the 27 CPU-s of writing the store at 10k people)."""
    try:
        store = ox.Store(str(path))
        subjects: set[bytes] = set()
        coauthors = Collector()
        for block in _blocks(graph_nt):
            _load(store, block)
            subjects.update(_SUBJECTS.findall(b"\n" + block))
            coauthors.see_block(block)
        for chunk in _joined(_owner_quads(subjects, base.encode())):
            _load(store, chunk)
        del subjects
        for chunk in _joined(coauthors.quads()):
            _load(store, chunk)
        store.flush()
        del store
    except (OSError, SyntaxError, ValueError):
        _remove(path)
        return False
    return True


def _load(store: ox.Store, data: bytes) -> None:
    # lenient: the lines are kg's own graph.nt, written and checked by this build; one
    # call per block: a single call over a stream buffers far more (1.7 GiB at 10k
    # against 0.45 GiB)
    store.bulk_load(data, format=ox.RdfFormat.N_QUADS, lenient=True)


def write_store_apart(graph_nt: Path, path: Path, base: str) -> bool:
    """`write_store` in a new interpreter (decision 0051): the bulk loader's buffers,
    the page-owner table and the co-author index (about 0.5 GiB at 10k people) never
    grow the build's process, which keeps the graph and the render state until it ends
    (its peak, counted as long as it lives, would rise by as much)."""
    try:
        return in_new_interpreter(write_store, graph_nt, path, base)
    except (OSError, RuntimeError):  # the process could not start, or died
        _remove(path)
        return False


def _blocks(graph_nt: Path) -> Iterator[bytes]:
    """graph.nt in blocks of about _BLOCK bytes, each of whole lines."""
    rest = b""
    with graph_nt.open("rb") as lines:
        while read := lines.read(_BLOCK):
            block = rest + read
            cut = block.rfind(b"\n") + 1
            if cut:
                yield block[:cut]
            rest = block[cut:]
    if rest:
        yield rest + b"\n"


def _owner_quads(subjects: set[bytes], prefix: bytes) -> Iterator[bytes]:
    """For each subject IRI under `prefix` that is not a page, `<subject> OWNER <owner>`
    in the graph OWNERS (its page owner: its top-most ancestor that is a subject;
    kg.publish.layout), by subject."""
    under = {s for s in subjects if s.startswith(prefix) and len(s) > len(prefix)}
    for s in sorted(under):
        owner = page_owner(s, under, prefix)
        if owner is not None:
            yield b"<%s> <%s> <%s> <%s> .\n" % (s, _OWNER, owner, _OWNERS)


def _joined(lines: Iterable[bytes]) -> Iterator[bytes]:
    """N-Quads lines joined into chunks of at most _CHUNK lines."""
    chunk: list[bytes] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) >= _CHUNK:
            yield b"".join(chunk)
            chunk = []
    if chunk:
        yield b"".join(chunk)


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
        name = entry.name.removesuffix(".json").removesuffix(".answers")
        if len(name) == 64 and set(name) <= _HEX and name != keep:
            _remove(Path(entry.path))
