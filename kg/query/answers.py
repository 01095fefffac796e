"""Precomputed answers: the stored queries without parameters, answered once by `kg build`
when it writes the persistent store (kg.query.persist), kept beside it, and read back
instead of running the query again (decision 0031).

Invariant: a precomputed answer is used only for the exact query text it was computed for,
by the same kg (the key is a digest of kg's package digest and the text), on the store of
the same build (the entry is part of that store's signed manifest), and only as bytes
whose SHA-256 is the one the manifest names; anything else is a miss and the query runs.
The bytes are what `kg.query.results.render` writes for each format, so a precomputed
answer is byte-identical to running the query and rendering its answer.

Layout: `<store>.answers/<sha256 of the bytes>`, one file per distinct rendering (a
graph's table, CSV, TSV and Turtle are the same Turtle: one file). The manifest's entry
for a query key: `{"form", "variables", "boolean", "size", "base", "files": {format:
sha256}}`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, cast

from kg.errors import KgError, QueryError
from kg.query.stored import Answer, StoredQuery

if TYPE_CHECKING:
    from rdflib import Graph
    from rdflib.term import Node

    from kg.config import Config
    from kg.query.store import QueryStore

MOST_BYTES = 256 * 1024 * 1024  # a query whose renderings are larger is not precomputed
MOST_BOUND = 16  # rows of values a query's `#+ precompute:` may name
SECONDS = 120.0  # wall time a build may spend precomputing answers
MEMORY = 2 * 1024 * 1024 * 1024  # address space the precomputing process may add
_HEX = frozenset("0123456789abcdef")


def answer_key(text: str) -> str:
    """The key of a query text's precomputed answer: kg's own digest and the text."""
    from kg.cache import package_digest

    payload = b"kg-answer\0" + package_digest().encode() + b"\0" + text.encode("utf-8")
    return hashlib.sha256(payload).hexdigest()


def precomputable(config: Config) -> list[StoredQuery]:
    """The stored queries (kg's and the project's, kg's prefixes declared as `kg query`
    declares them) whose answer depends only on the graph: no parameter, no SERVICE."""
    from kg.query.lookup import check_prefixes, load_all_queries
    from kg.query.stored import uses_service, with_kg_prefixes

    try:
        queries = load_all_queries(config.builtin_queries_dir, config.project_queries_dir)
    except KgError:
        return []
    chosen = []
    for query in queries.values():
        query = with_kg_prefixes(query)
        try:
            check_prefixes(query)
        except KgError:
            continue
        ahead = not query.parameters or query.precompute is not None  # values named ahead
        if ahead and not uses_service(query.text):
            chosen.append(query)
    return chosen


@dataclass(frozen=True)
class Earlier:
    """The answers of an earlier build's store: their folder and manifest entries."""

    folder: Path
    entries: dict
    changed: tuple[bytes, bytes] | None = None  # the patch's removed and added lines


def write_answers(
    store: QueryStore,
    queries: Iterable[StoredQuery],
    folder: Path,
    base: str,
    done: Callable[[tuple[str, dict]], None] | None = None,
    earlier: Earlier | None = None,
) -> dict[str, dict]:
    """Answer each query on `store`, write its renderings into `folder` (made here, or a
    folder, not a link, made by the caller) and return the manifest entries by key
    (each also given to `done` as it is written); a query that fails or is too large is
    left out. Where `earlier` has an answer whose query gave the same result bytes
    (`raw`: the SHA-256 of pyoxigraph's own serialization, rows or triples in order),
    its renderings are linked instead of made again."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:  # made by the caller, with answers kept from a build before
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return {}
    except OSError:
        return {}
    entries: dict[str, dict] = {}
    for query in queries:
        key = answer_key(query.text)
        try:
            if query.parameters:
                entry: dict | None = _write_bound(store, query, folder, base, earlier)
            else:
                entry = _answered(store, query, folder, base, earlier, key, _maintainable(query))
        except KgError:
            continue
        if entry is not None:
            entries[key] = entry
            if done is not None:
                done((key, entry))
    return entries


def _write_bound(
    store: QueryStore, query: StoredQuery, folder: Path, base: str, earlier: Earlier | None
) -> dict:
    """A query with parameters, answered for each row of values its `#+ precompute:` query
    gives (at most MOST_BOUND): `{"bound": {key of the text with those values bound:
    entry}}` (the text as `with_values` binds it, so the answer is the query's own);
    `earlier`: the earlier build's answers, whose bound entries are reused as
    `_answered` reuses an answer."""
    from kg.query.stored import with_values

    bound: dict[str, dict] = {}
    kind = _maintainable(query)
    if earlier is not None:
        entry = earlier.entries.get(answer_key(query.text))
        found = entry.get("bound") if isinstance(entry, dict) else None
        earlier = dataclasses.replace(earlier, entries=found if isinstance(found, dict) else {})
    for values in _precompute_values(store, query):
        try:
            text = with_values(query, query.bindings(values))
        except KgError:
            continue
        alone = dataclasses.replace(query, text=text, parameters=(), precompute=None)
        try:
            entry = _answered(store, alone, folder, base, earlier, answer_key(text), kind)
        except KgError:
            continue
        if entry is not None:
            bound[answer_key(text)] = entry
    return {"form": query.form, "bound": bound}


def _precompute_values(store: QueryStore, query: StoredQuery) -> list[dict[str, str]]:
    """The rows of the query's `#+ precompute:` SELECT, as values of its parameters (a
    variable named as a parameter; IRIs and literals by their text), at most MOST_BOUND."""
    from kg.query.stored import parse_query, run_embedded, uses_service, with_kg_prefixes

    names = {p.name for p in query.parameters}
    try:
        ahead = with_kg_prefixes(parse_query(query.precompute or "", f"{query.name} precompute"))
        if ahead.form != "SELECT" or ahead.parameters or uses_service(ahead.text):
            return []
        answer = run_embedded(store, ahead, {}, precomputed=False)
    except KgError:
        return []
    rows = []
    for row in answer.rows[:MOST_BOUND]:
        values = {v: str(t) for v, t in zip(answer.variables, row, strict=True) if t is not None}
        rows.append({k: v for k, v in values.items() if k in names})
    return rows


def _answered(
    store: QueryStore,
    query: StoredQuery,
    folder: Path,
    base: str,
    earlier: Earlier | None,
    key: str,
    kind: str | None = None,
) -> dict | None:
    """The manifest entry of one query's answer, its files in `folder`, with what the
    query reads (kg.query.footprint) and its result's digest. A query kg keeps up to date
    (`kind`, kg.query.maintained) is answered from the earlier answer and the change
    where it can be, and its result bytes are kept too (named by their digest, `raw`)."""
    from kg.query.stored import run_embedded

    previous = earlier.entries.get(key) if earlier is not None else None
    reads = _reads(run_text(store, query), previous)  # for the next build
    found = _maintained(store, query, earlier, key, kind) or _raw(store, query)
    if found is None:  # ASK, or a query read by the page-owner index: answered as asked
        answer = run_embedded(store, query, {}, precomputed=False)
        files = _write_renderings(answer, folder, base)
        return None if files is None else {**_entry(answer, base, files), **reads}
    raw, read_back = found
    sha = hashlib.sha256(raw).hexdigest()
    if kind is not None and not _write_new(folder / sha, raw):
        return None
    kept = {"rawfile": sha} if kind is not None else {}
    if (
        earlier is not None
        and isinstance(previous, dict)
        and previous.get("raw") == sha
        and previous.get("base") == base
        and previous.get("rawfile") == kept.get("rawfile")
        and link_files(previous, earlier.folder, folder)
    ):
        return previous
    answer = read_back()
    files = _write_renderings(answer, folder, base)
    if files is None:
        return None
    return {**_entry(answer, base, files), **reads, "raw": sha, **kept}


def _reads(text: str, previous: object) -> dict:
    """What the query `text` reads (kg.query.footprint) and how kg orders its rows
    (kg.query.ordered.unordered), with the text's digest: the `previous` entry's, when
    they were read from the same text (the entry is from this user's signed manifest;
    both are functions of the text alone), else read from the text (rdflib parses it:
    ~40 ms a query). The order is also given to `maintained.order_of`."""
    from kg.query.footprint import Footprint, footprint
    from kg.query.maintained import known_order, order_of

    of = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if isinstance(previous, dict) and previous.get("text_of") == of and "order" in previous:
        reads, order = Footprint.from_json(previous.get("footprint")), previous.get("order")
        known = _order_from_json(order)
        if reads is not None and (order is None or known is not None):
            known_order(text, known)
            return {"footprint": reads.as_json(), "order": order, "text_of": of}
    order = order_of(text)
    keys = None if order is None else [order[0], [[k, d] for k, d in order[1]]]
    return {"footprint": footprint(text).as_json(), "order": keys, "text_of": of}


def _order_from_json(found: object) -> tuple[str, list[tuple[str, bool]]] | None:
    """An order as `_reads` keeps it, or None where it is not of that form."""
    if not (isinstance(found, list) and len(found) == 2 and isinstance(found[0], str)):
        return None
    keys = found[1]
    if not isinstance(keys, list) or not all(
        isinstance(k, list) and len(k) == 2 and isinstance(k[0], str) and isinstance(k[1], bool)
        for k in keys
    ):
        return None
    return found[0], [(k[0], k[1]) for k in keys]


def _maintainable(query: StoredQuery) -> str | None:
    """The name of a query kg.query.maintained keeps up to date: kg's own text of it."""
    from kg.query.maintained import KINDS
    from kg.query.stored import kg_texts

    return query.name if query.name in KINDS and query.text in kg_texts(query.name) else None


def _maintained(
    store: QueryStore, query: StoredQuery, earlier: Earlier | None, key: str, kind: str | None
) -> tuple[bytes, Callable[[], Answer]] | None:
    """The answer kg.query.maintained makes from the earlier one and the change, as
    `_raw` gives it; None where there is none to make it from or it cannot be made."""
    from kg.query.maintained import maintain

    if kind is None or earlier is None or earlier.changed is None:
        return None
    previous = earlier.entries.get(key)
    sha = previous.get("rawfile") if isinstance(previous, dict) else None
    before = read_verified(earlier.folder / sha, sha) if isinstance(sha, str) else None
    if before is None:
        return None
    raw = maintain(store, kind, run_text(store, query), before, earlier.changed)
    return None if raw is None else (raw, lambda: _from_raw("SELECT", raw))


def _raw(store: QueryStore, query: StoredQuery) -> tuple[bytes, Callable[[], Answer]] | None:
    """The answer of a SELECT, CONSTRUCT or DESCRIBE without parameters as pyoxigraph
    writes it (SPARQL JSON results; N-Triples), lossless and in the order given, and how
    to make the `Answer` from it; a SELECT that kg.query.ordered can order is run without
    its ORDER BY and ordered here (the same rows in the same order)."""
    import pyoxigraph as ox

    if query.form == "ASK" or query.owner_iri({}) is not None:
        return None
    text = run_text(store, query)
    found = _ordered_here(store, query, text) if query.form == "SELECT" else None
    if found is not None:
        return found
    result = store.query(text, query.name)
    try:
        if isinstance(result, ox.QuerySolutions):
            raw = result.serialize(format=ox.QueryResultsFormat.JSON) or b""
        elif isinstance(result, ox.QueryTriples):
            raw = result.serialize(format=ox.RdfFormat.N_TRIPLES) or b""
        else:
            return None
    except (OSError, ValueError, RuntimeError) as exc:
        raise QueryError(f"query {query.name!r} failed: {exc}") from None
    return raw, lambda: _from_raw(query.form, raw)


def _ordered_here(
    store: QueryStore, query: StoredQuery, text: str
) -> tuple[bytes, Callable[[], Answer]] | None:
    """The rows of a SELECT run without its ORDER BY (written by pyoxigraph as SPARQL JSON
    results) and ordered by kg.query.ordered, as `_raw` gives them (the ordered rows as
    JSON), or None where that module cannot order them exactly."""
    import json

    import pyoxigraph as ox

    from kg.query.maintained import order_of
    from kg.query.ordered import in_order

    plain = order_of(text)
    if plain is None:
        return None
    result = store.query(plain[0], query.name)
    if not isinstance(result, ox.QuerySolutions):
        return None
    try:
        written = json.loads(result.serialize(format=ox.QueryResultsFormat.JSON) or b"")
        variables = [str(v) for v in written["head"]["vars"]]
        rows = list(written["results"]["bindings"])
    except (OSError, ValueError, RuntimeError, KeyError, TypeError) as exc:
        raise QueryError(f"query {query.name!r} failed: {exc}") from None
    ordered = in_order(variables, rows, plain[1])
    if ordered is None:
        return None
    document = {"head": {"vars": variables}, "results": {"bindings": ordered}}
    raw = json.dumps(document, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return raw, lambda: _from_raw("SELECT", raw)


def run_text(store: QueryStore | None, query: StoredQuery) -> str:
    """The text run for a query without parameters: kg's faster form on its store where
    it has one (kg.query.stored.store_form, as `run_embedded` runs), else the query's."""
    from kg.query.stored import store_form, with_values

    if store is None or query.parameters:
        return query.text
    bindings = query.bindings({})
    return with_values(query, bindings, store_form(store, query, bindings))


def _from_raw(form: str, raw: bytes) -> Answer:
    """The answer `run_embedded` gives, read back from `_raw`'s bytes, for its renderings
    and size (a graph's triples as `AnswerTriples`, not an rdflib Graph)."""
    import pyoxigraph as ox

    from kg.query.store import AnswerTriples, solutions

    if form in ("CONSTRUCT", "DESCRIBE"):  # what the writers read of a Graph (no index)
        triples = AnswerTriples(ox.parse(raw, format=ox.RdfFormat.N_TRIPLES))
        return Answer(form, graph=cast("Graph", triples))
    parsed = ox.parse_query_results(raw, format=ox.QueryResultsFormat.JSON)
    variables, rows = solutions(cast("ox.QuerySolutions", parsed))
    return Answer("SELECT", variables, tuple(rows))


def link_files(entry: dict, source: Path, folder: Path) -> bool:
    """Every file of an earlier answer's entry, linked from its folder `source` into
    `folder` (never through a link) and read back with the SHA-256 its name says."""
    files = entry.get("files")
    if not isinstance(files, dict):
        return False
    kept = {entry["rawfile"]} if isinstance(entry.get("rawfile"), str) else set()
    return all(_link_file(source, folder, str(sha)) for sha in set(files.values()) | kept)


def _link_file(source: Path, folder: Path, sha: str) -> bool:
    if read_verified(source / sha, sha) is None:
        return False
    target = folder / sha
    try:
        os.link(source / sha, target, follow_symlinks=False)
    except FileExistsError:
        pass
    except OSError:
        return False
    return read_verified(target, sha) is not None


def write_answers_bounded(
    store_path: Path,
    queries: list[StoredQuery],
    folder: Path,
    base: str,
    earlier: Earlier | None = None,
) -> dict[str, dict]:
    """`write_answers` in a new Python process that opens the store at `store_path`
    itself, may add at most MEMORY bytes of address space and is killed after SECONDS: a
    project's queries are hostile until checked (a cross product would never end), and
    kg's own grow with the graph. The entries of the queries answered by then; the rest
    run when asked, as before. A new interpreter, not a fork of the build: a fork starts
    with the build's whole resident size (2.4 GiB at 10k people), counted twice, and
    multiprocessing's spawn would run the caller's main module again."""
    import pickle
    import subprocess
    import threading

    from kg.workers import python_process

    child = python_process("from kg.query.answers import _answer_all; _answer_all()")
    entries: dict[str, dict] = {}

    def collect() -> None:  # the child's (key, entry) messages, until it ends
        assert child.stdout is not None
        with contextlib.suppress(EOFError, OSError, pickle.UnpicklingError, ValueError):
            while True:
                key, entry = pickle.load(child.stdout)
                entries[key] = entry

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    try:
        assert child.stdin is not None
        with contextlib.suppress(OSError), child.stdin:
            child.stdin.write(pickle.dumps((store_path, queries, folder, base, earlier)))
        child.wait(timeout=SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    finally:
        reader.join()
    return dict(entries)


def _answer_all() -> None:
    """The process of `write_answers_bounded`: the job on stdin, pickled; each answer's
    (key, entry) on stdout as it is written."""
    import pickle
    import resource
    import sys

    import pyoxigraph as ox

    from kg.query.store import QueryStore

    store_path, queries, folder, base, earlier = pickle.load(sys.stdin.buffer)
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/statm", encoding="ascii") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (size + MEMORY, size + MEMORY))
    out = sys.stdout.buffer

    def send(item: tuple[str, dict]) -> None:
        pickle.dump(item, out)
        out.flush()

    with contextlib.suppress(Exception):  # what fails runs when asked instead
        store = QueryStore(ox.Store.read_only(str(store_path)), owner_index=True)
        write_answers(store, queries, folder, base, send, earlier)


def _write_renderings(answer: Answer, folder: Path, base: str) -> dict[str, str] | None:
    from kg.query.results import FORMATS, render, same_text_as

    files: dict[str, str] = {}
    written = 0
    for fmt in FORMATS:
        same = same_text_as(answer, fmt)
        if same in files:  # rendered already
            files[fmt] = files[same]
            continue
        data = render(answer, same, base).encode("utf-8")
        sha = hashlib.sha256(data).hexdigest()
        if sha not in files.values():
            written += len(data)
            if written > MOST_BYTES or not _write_new(folder / sha, data):
                return None
        files[fmt] = files[same] = sha
    return files


def _write_new(path: Path, data: bytes) -> bool:
    """A new file (never through a link, never over one)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return read_verified(path, path.name) is not None
    except OSError:
        return False
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    return True


def _entry(answer: Answer, base: str, files: dict[str, str]) -> dict:
    return {
        "form": answer.form,
        "variables": list(answer.variables),
        "boolean": answer.boolean,
        "size": answer.size,
        "base": base,
        "files": files,
    }


def read_verified(path: Path, sha: str) -> bytes | None:
    """The bytes of a regular file (not a link) whose SHA-256 is `sha`, else None."""
    if len(sha) != 64 or not set(sha) <= _HEX:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as found:
        info = os.fstat(found.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MOST_BYTES:
            return None
        data = found.read()  # (a size given to read() is allocated at once)
    return data if len(data) <= MOST_BYTES and hashlib.sha256(data).hexdigest() == sha else None


class Answers:
    """The precomputed answers of one store: its manifest's entries and their folder."""

    def __init__(self, folder: Path, entries: dict) -> None:
        self.folder = folder
        self.entries = entries

    def find(
        self, query: StoredQuery, live: Callable[[], Answer], values: dict[str, str]
    ) -> Answer | None:
        """The precomputed answer to `query` with `values` (its parameters' defaults for
        the others), or None; `live` runs the query, for a reader that needs terms or a
        file that fails its check."""
        entry = self.entries.get(answer_key(query.text))
        if query.parameters and isinstance(entry, dict) and isinstance(entry.get("bound"), dict):
            from kg.query.stored import with_values

            entry = entry["bound"].get(answer_key(with_values(query, query.bindings(values))))
        elif query.parameters or values:
            return None
        if not isinstance(entry, dict) or entry.get("form") != query.form:
            return None
        try:
            return PrecomputedAnswer(self.folder, entry, live)
        except (KeyError, TypeError, ValueError):
            return None


class PrecomputedAnswer(Answer):
    """An answer read from `kg build`'s renderings: `text(fmt, base)` gives the bytes
    `render` would write; rows and graph (rarely needed) come from running the query."""

    _folder: Path
    _files: dict[str, str]
    _base: str
    _size: int
    _live: Callable[[], Answer]

    def __init__(self, folder: Path, entry: dict, live: Callable[[], Answer]) -> None:
        for name, value in (
            ("form", str(entry["form"])),
            ("variables", tuple(str(v) for v in entry["variables"])),
            ("boolean", None if entry["boolean"] is None else bool(entry["boolean"])),
            ("_folder", folder),
            ("_files", {str(k): str(v) for k, v in dict(entry["files"]).items()}),
            ("_base", str(entry["base"])),
            ("_size", int(entry["size"])),
            ("_live", live),
        ):
            object.__setattr__(self, name, value)  # a frozen dataclass's fields

    @cached_property
    def _computed(self) -> Answer:
        return self._live()

    @property
    def rows(self) -> tuple[tuple[Node | None, ...], ...]:
        return self._computed.rows

    @property
    def graph(self) -> Graph | None:
        return self._computed.graph

    @property
    def size(self) -> int:
        return self._size

    def text(self, fmt: str, base: str | None) -> str | None:
        sha = self._files.get(fmt)
        if sha is None or (fmt == "table" and self.form == "SELECT" and base != self._base):
            return None
        data = read_verified(self._folder / sha, sha)
        return None if data is None else data.decode("utf-8")
