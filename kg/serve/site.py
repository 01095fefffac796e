"""A built output directory as `kg serve` sees it: the web root's files (read once and
kept in memory up to a budget), the graph's size and named graphs; the store that
answers queries lives in the query workers (kg/serve/worker.py)."""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass, field
from pathlib import Path

from kg.errors import ProjectError
from kg.publish.deploy import FILE_TYPES
from kg.publish.layout import EXTENSIONS, owner_path
from kg.serve.worker import open_query_store

MEDIA_BY_EXTENSION = {  # the same types as the nginx and Apache recipes
    ext: f"{media}; charset=utf-8" if is_text else media for ext, media, is_text in FILE_TYPES
}
PAGE_AND_DATA = ("html", *EXTENSIONS)
CACHE_BYTES = 256 * 1024 * 1024
CACHE_ENTRIES = 200_000


def safe_relative(url_path: str) -> str | None:
    """The path under the web root for a (decoded) URL path; None for anything that
    could leave the root or reach a hidden file: `..`, `.`, empty segments, dot files,
    backslashes, NUL."""
    rel = url_path[1:] if url_path.startswith("/") else url_path
    if rel == "":
        return rel
    if "\x00" in rel or "\\" in rel:
        return None
    if any(part in ("", ".", "..") or part.startswith(".") for part in rel.split("/")):
        return None
    return rel


@dataclass
class Files:
    """Files under the web root by relative path, cached (None: no such file)."""

    root: Path
    _cache: dict[str, bytes] = field(default_factory=dict)
    _bytes: int = 0

    def read(self, rel: str) -> bytes | None:
        """The file's bytes, or None. Only files that exist are cached (a miss is not:
        its key would be the client's text), up to CACHE_BYTES and CACHE_ENTRIES."""
        if rel in self._cache:
            return self._cache[rel]
        path = self.root / rel
        try:
            if not (path.is_file() and path.resolve().is_relative_to(self.root)):
                return None
            data = path.read_bytes()
        except OSError:
            return None
        if self._bytes + len(data) <= CACHE_BYTES and len(self._cache) < CACHE_ENTRIES:
            self._cache[rel] = data
            self._bytes += len(data)
        return data

    def variants(self, stem: str) -> list[str]:
        """The extensions among html, ttl, jsonld, nt that `stem` has files for."""
        return [ext for ext in PAGE_AND_DATA if self.read(f"{stem}.{ext}") is not None]

    def owner(self, rel: str) -> str | None:
        """The nearest ancestor of `rel` with a page (for IRIs minted under a thing)."""
        return owner_path(rel, _Pages(self))


class _Pages:
    """`path in pages` for `owner_path`: whether `<path>.html` exists."""

    def __init__(self, files: Files) -> None:
        self.files = files

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.files.read(f"{path}.html") is not None


def media_type(rel: str) -> str:
    ext = rel.rsplit(".", 1)[-1] if "." in rel.rsplit("/", 1)[-1] else ""
    if ext in MEDIA_BY_EXTENSION:
        return MEDIA_BY_EXTENSION[ext]
    guessed, _ = mimetypes.guess_type(rel)
    return guessed or "application/octet-stream"


@dataclass(frozen=True)
class Site:
    """One good build: its output directory, web root files and query store (the one the
    stored queries use; /sparql queries run in workers: kg.serve.runner)."""

    out_dir: Path
    files: Files
    triples: int
    graphs: frozenset[str] = frozenset()  # named graphs in `store` (queries may name only these)
    project: Path | None = None  # the project that built it: its persistent store is used

    @classmethod
    def open(cls, out_dir: Path, project: Path | None = None) -> Site:
        root = (out_dir / "site").resolve()
        graph = out_dir / "graph.nt"
        if not root.is_dir() or not graph.is_file():
            raise ProjectError(f"{out_dir} holds no built site (run kg build first)")
        try:
            store = open_query_store(out_dir, project)
        except (OSError, SyntaxError) as exc:
            raise ProjectError(f"{graph}: cannot load the graph: {exc}") from None
        # opened here to check it and learn its size and graph names, then dropped: the
        # query workers hold the one store that answers (kg/serve/worker.py)
        return cls(out_dir, Files(root), store.triples, store.graphs, project)
