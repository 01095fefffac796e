"""The block table: each subject's Turtle block and JSON-LD node text, formatted once.

Invariant: block i of the table, in each format, is the text `to_turtle` and `to_jsonld`
of the whole graph write for the i-th subject in canonical order (`canonical_subjects`:
blank nodes, then IRIs, each by text); Turtle blocks carry the prefixes they use, JSON-LD
blocks are in the whole graph's context. The subjects are split in ranges of about
`RANGE_SIZE` at subjects chosen by their text (`cut`), so that a subject added or removed
changes one range and the others keep their subjects (and their cache entries); a range's
data is its blocks joined by the format's separator, exactly as they stand in
the dumps. Hence:

- a dump is its header plus the ranges' data joined by the separator (`BlockTable.dump`),
  copied at the byte level and never one string in memory;
- a file that holds a node whole (every triple the graph has of it) takes the node's text
  from the table (`BlockTable.turtle`, `BlockTable.jsonld`, read by offset) and formats
  only its partial nodes itself; its N-Triples lines too (`BlockTable.ntriples_at`), from
  the build's N-Triples dump, where the node's chunk is (decision 0071).

The ranges are formatted by the render workers in parallel (`format_range`) and written
to files in a folder kg made (given as a descriptor: files are named inside it, opened
without following links), or kept as bytes when there is no such folder
(`render_outputs`, dask). Without a render cache the folder is in the build's staging
folder (removed before the tree is shown). With one, it is `.kg-cache/blocks` and the
files are kept between builds (`keep_range`, `kept_range`): a range's file is named by
its cache key, and the range's signed cache entry holds its subjects' N-Triples digests
(`SubjectChunks.digest`) and each file's stamp (inode, size, modification and change
times), so a file changed, replaced or planted since is a miss. A rebuild neither reads nor writes
the ranges whose subjects' digests are all unchanged (the files are read in place), and
formats only the subjects whose triples changed.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import shutil
import stat
import zlib
from array import array
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rdflib.term import Node

from kg.formats import JSONLD, TURTLE
from kg.graph.triples import Triples
from kg.publish import export
from kg.publish.jsontext import dumps

Stamp = tuple[int, int, int, int]  # a kept file's inode, size, modification and change times
RANGE_SIZE = 2000  # subjects per range on average: a task of about 0.1 CPU-s at 10k
OPEN_FILES = 64  # range files a process keeps open for reading, at most
FORMATS = (TURTLE.ext, JSONLD.ext)
SEPARATOR = {TURTLE.ext: b"\n", JSONLD.ext: b",\n    "}


def canonical_subjects(graph: Triples) -> list[Node]:
    """The subjects in the order the writers give them (`export.subject_key`)."""
    return sorted(graph.subjects(), key=export.subject_key)


def cut(subjects: Sequence[Node], size: int | None = None) -> list[tuple[int, int]]:
    """Ranges (start, stop) of `subjects`, each ending at a subject whose text's CRC-32 is
    0 modulo `size` (default `RANGE_SIZE`; or after `8 * size` subjects): where a range
    ends depends on its own subjects only."""
    size = size or RANGE_SIZE
    ranges, start = [], 0
    for i, s in enumerate(subjects):
        if zlib.crc32(str(s).encode()) % size == 0 or i + 1 - start >= 8 * size:
            ranges.append((start, i + 1))
            start = i + 1
    if start < len(subjects):
        ranges.append((start, len(subjects)))
    return ranges


@dataclass
class Range:
    """One range of the table: per format its blocks joined (bytes, or the file holding
    them) and where each block starts; the Turtle prefixes each block uses (bits of the
    table's prefix order) and each subject's number of triples."""

    data: dict[str, bytes | str]  # str: a file's name in the table's folder
    starts: dict[str, array]  # one more than the blocks: the end plus the separator
    masks: array
    sizes: array
    digests: bytes  # the subjects' N-Triples digests, 16 bytes each ("" without a cache)
    stamps: dict[str, Stamp] = field(default_factory=dict)  # of the kept files

    def entry(self) -> dict[str, Any]:
        """What the render cache keeps of a kept range: all but its data, which is in
        the files the stamps name."""
        return {
            "digests": self.digests,
            "stamps": self.stamps,
            "starts": self.starts,
            "masks": self.masks,
            "sizes": self.sizes,
        }

    def blocks(self, ext: str, folder: int | None) -> list[bytes]:
        """The blocks of format `ext` (a file's read whole, from `folder`)."""
        data = range_bytes(self.data[ext], folder)
        starts, cut = self.starts[ext], len(SEPARATOR[ext])
        return [data[starts[i] : starts[i + 1] - cut] for i in range(len(starts) - 1)]


def range_bytes(data: bytes | str, folder: int | None = None) -> bytes:
    """A range's data in one format: its bytes, or its file's (in `folder`) read whole."""
    if isinstance(data, bytes):
        return data
    fd = os.open(data, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=folder)
    with open(fd, "rb") as file:
        return file.read()


class Formatter:
    """Formats whole nodes with one process's term tables (the Turtle prefixes of the
    graph, the JSON-LD context of the whole graph's `unusable` prefixes)."""

    def __init__(self, turtle: export._TurtleTerms, json: export._JsonTerms) -> None:
        self.turtle, self.json = turtle, json
        self.prefixes = [prefix for _, prefix in turtle.order]  # the bits of a mask
        self.bits = {prefix: 1 << i for i, prefix in enumerate(self.prefixes)}

    def block(self, s: Node, predicates: export.Described) -> tuple[bytes, int, bytes]:
        """The Turtle block, the prefixes it uses (bits) and the JSON-LD node text."""
        self.turtle.used = set()
        ttl = export._turtle_block(s, predicates, self.turtle)
        mask = sum(self.bits[p] for p in self.turtle.used)
        return ttl.encode(), mask, export._node_json(s, predicates, self.json).encode()


def format_range(
    graph: Triples,
    subjects: Sequence[Node],
    formatter: Formatter,
    digests: Sequence[bytes] = (),
    old: Range | None = None,
    folder: int | None = None,
) -> Range:
    """The range of `subjects`; with `old` (a kept range, its files in `folder`) and the
    subjects' `digests`, the blocks of subjects whose digest `old` has are taken from
    it, not formatted."""
    reuse = _reusable(old, folder) if old is not None and digests else {}
    texts: dict[str, list[bytes]] = {ext: [] for ext in FORMATS}
    masks, sizes = array("q"), array("q")
    for i, s in enumerate(subjects):
        found = reuse.get(digests[i]) if reuse else None
        if found is None:
            predicates = graph.describe(s)
            ttl, mask, json = formatter.block(s, predicates)
            found = (ttl, mask, json, sum(map(len, predicates.values())))
        texts[TURTLE.ext].append(found[0])
        texts[JSONLD.ext].append(found[2])
        masks.append(found[1])
        sizes.append(found[3])
    data: dict[str, bytes | str] = {}
    starts: dict[str, array] = {}
    for ext, blocks in texts.items():
        data[ext], starts[ext] = _joined(blocks, SEPARATOR[ext])
    return Range(data, starts, masks, sizes, b"".join(digests))


def _joined(blocks: list[bytes], separator: bytes) -> tuple[bytes, array]:
    starts, at = array("q"), 0
    for block in blocks:
        starts.append(at)
        at += len(block) + len(separator)
    starts.append(at)
    return separator.join(blocks), starts


def _reusable(old: Range, folder: int | None) -> dict[bytes, tuple[bytes, int, bytes, int]]:
    """A kept range's blocks by their subject's digest."""
    found: dict[bytes, tuple[bytes, int, bytes, int]] = {}
    try:
        ttl, json = (old.blocks(ext, folder) for ext in FORMATS)
        digests = old.digests
        for i in range(len(digests) // 16):
            found[digests[16 * i : 16 * i + 16]] = (ttl[i], old.masks[i], json[i], old.sizes[i])
    except (OSError, KeyError, IndexError, TypeError, ValueError):  # not as the entry says
        return {}
    return found


NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def write_range(folder: int, name: str, made: Range) -> Range:
    """`made` with its data in new files `<name>.<ext>` of `folder` (a descriptor of a
    folder kg made for this build)."""
    data: dict[str, bytes | str] = {}
    for ext, blob in made.data.items():
        data[ext] = _write_new(folder, f"{name}.{ext}", range_bytes(blob, folder))
    return Range(data, made.starts, made.masks, made.sizes, made.digests)


def _write_new(folder: int, name: str, data: bytes) -> str:
    """A new file `name` of `folder` holding `data` (never an existing file or a link)."""
    fd = os.open(name, NEW_FILE, 0o600, dir_fd=folder)
    with open(fd, "wb") as file:
        file.write(data)
    return name


def keep_range(folder: int, key: str, made: Range) -> Range:
    """`made` with its data in the files `<key>.<ext>` of `folder` (kg's own
    `.kg-cache/blocks`), each written new and renamed over the one there (never written
    into, never through a link), and their stamps."""
    data: dict[str, bytes | str] = {}
    stamps: dict[str, Stamp] = {}
    for ext, blob in made.data.items():
        name, temporary = f"{key}.{ext}", f".{key}.{ext}.{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=folder)  # a killed run's (or a planted link)
        _write_new(folder, temporary, range_bytes(blob, folder))
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        stamps[ext] = _stamp(os.stat(name, dir_fd=folder, follow_symlinks=False))
        data[ext] = name
    return Range(data, made.starts, made.masks, made.sizes, made.digests, stamps)


def kept_range(folder: int, key: str, entry: object) -> Range | None:
    """The range kept under `key` (its cache `entry`, files in `folder`), or None when
    the entry is not one `keep_range` made or a file is not the one it wrote."""
    if not isinstance(entry, dict):
        return None
    try:
        stamps = entry["stamps"]
        data: dict[str, bytes | str] = {ext: f"{key}.{ext}" for ext in FORMATS}
        for ext, name in data.items():
            found = os.stat(name, dir_fd=folder, follow_symlinks=False)
            if not stat.S_ISREG(found.st_mode) or _stamp(found) != stamps[ext]:
                return None
        starts, masks, sizes = entry["starts"], entry["masks"], entry["sizes"]
        return Range(data, starts, masks, sizes, entry["digests"], stamps)
    except (OSError, KeyError, TypeError):
        return None


def _stamp(found: os.stat_result) -> Stamp:
    """Where a file's bytes may have changed, one of these has: a write changes the
    times, and only the change time (ctime) cannot be set back."""
    return found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns


def prune_kept(folder: int, keys: Collection[str]) -> None:
    """Remove from `folder` every file but the ranges of `keys` (links are removed, not
    followed; folders are left)."""
    wanted = {f"{key}.{ext}" for key in keys for ext in FORMATS}
    for entry in os.scandir(folder):
        if entry.name not in wanted and not entry.is_dir(follow_symlinks=False):
            with contextlib.suppress(OSError):
                os.unlink(entry.name, dir_fd=folder)


class BlockTable:
    """The ranges of a build, and each subject's place in them."""

    def __init__(
        self,
        subjects: Iterable[Node],
        ranges: list[Range],
        prefixes: list[str],
        starts: Sequence[int],
        folder: int | None = None,
    ) -> None:
        self.folder = folder  # a descriptor of the folder the ranges' files are in
        self.index = {s: i for i, s in enumerate(subjects)}
        self.ranges = ranges
        self.starts = array("q", starts)  # each range's first subject
        self.prefixes = prefixes  # the Turtle prefix of each bit of a block's mask
        self._used: dict[int, frozenset[str]] = {}
        self._fds: dict[str, int] = {}  # the range files open for reading (read with pread)
        self.nt_dump: tuple[int, array, array] | None = None  # see `read_ntriples`

    def __getstate__(self) -> dict[str, Any]:  # (dask) the data, not this process's memos
        return {**self.__dict__, "_used": {}, "_fds": {}, "folder": None, "nt_dump": None}

    def read_ntriples(self, fd: int, at: array, starts: array) -> None:
        """Take whole nodes' N-Triples from the build's N-Triples dump (decision 0071):
        `fd`, open for reading (its owner closes it); the chunk of the table's subject i
        is `starts[at[i]]` to `starts[at[i] + 1]`."""
        self.nt_dump = fd, at, starts

    def close(self) -> None:
        """Close the files this process opened (a forked process shares them: pread)."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def _find(self, s: Node, size: int) -> tuple[Range, int] | None:
        """The range and place of `s`, when a file holding `size` of its triples holds
        it whole."""
        i = self.index.get(s)
        if i is None:
            return None
        r = bisect.bisect_right(self.starts, i) - 1
        found = self.ranges[r], i - self.starts[r]
        return found if found[0].sizes[found[1]] == size else None

    def row(self, s: Node, size: int) -> int | None:
        """The row of `s`, when a file holding `size` of its triples holds it whole."""
        i = self.index.get(s)
        if i is None:
            return None
        r = bisect.bisect_right(self.starts, i) - 1
        return i if self.ranges[r].sizes[i - self.starts[r]] == size else None

    def texts_at(self, row: int) -> tuple[str, frozenset[str], str]:
        """The Turtle block of the subject of `row`, the prefixes it uses, and its
        JSON-LD node text."""
        r = bisect.bisect_right(self.starts, row) - 1
        found, i = self.ranges[r], row - self.starts[r]
        ttl, json = self._read(TURTLE.ext, found, i), self._read(JSONLD.ext, found, i)
        return ttl, self.used(found.masks[i]), json

    def ntriples_at(self, row: int) -> str | None:
        """The N-Triples chunk (sorted lines) of the subject of `row`, when the dump is
        there to read it from (`read_ntriples`)."""
        if self.nt_dump is None:
            return None
        fd, at, starts = self.nt_dump
        place = at[row]
        start = starts[place]
        return os.pread(fd, starts[place + 1] - start, start).decode()

    def turtle(self, s: Node, size: int) -> tuple[str, frozenset[str]] | None:
        """The Turtle block of `s` and the prefixes it uses, when `size` is all of it."""
        found = self._find(s, size)
        if found is None:
            return None
        mask = found[0].masks[found[1]]
        return self._read(TURTLE.ext, *found), self.used(mask)

    def jsonld(self, s: Node, size: int) -> str | None:
        """The JSON-LD node text of `s`, when `size` is all of it."""
        found = self._find(s, size)
        return None if found is None else self._read(JSONLD.ext, *found)

    def used(self, mask: int) -> frozenset[str]:
        found = self._used.get(mask)
        if found is None:
            bits = enumerate(self.prefixes)
            found = self._used[mask] = frozenset(p for i, p in bits if mask >> i & 1)
        return found

    def _read(self, ext: str, r: Range, i: int) -> str:
        start, stop = r.starts[ext][i], r.starts[ext][i + 1] - len(SEPARATOR[ext])
        data = r.data[ext]
        if isinstance(data, bytes):
            return data[start:stop].decode()
        fd = self._fds.get(data)
        if fd is None:
            if len(self._fds) >= OPEN_FILES:  # bounded: a process may open few files
                self.close()
            fd = os.open(data, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=self.folder)
            self._fds[data] = fd
        return os.pread(fd, stop - start, start).decode()

    def turtle_prefixes(self) -> frozenset[str]:
        """Every prefix a block uses: those the Turtle dump names."""
        mask = 0
        for r in self.ranges:
            for m in set(r.masks):
                mask |= m
        return self.used(mask)

    def dump(
        self,
        ext: str,
        head: bytes,
        tail: bytes,
        write: Callable[[bytes], object],
        copy: Callable[[int, int, int], None] | None = None,
    ) -> None:
        """`head`, the ranges' data joined by the format's separator, `tail`: a dump (the
        one owner of its layout). A range kept in a file is handed to `copy(fd, at,
        count)` when given (kg.publish.dumpfile: the kernel copies it, never read into
        the process), else read and written."""
        write(head)
        for n, r in enumerate(self.ranges):
            if n:
                write(SEPARATOR[ext])
            data = r.data[ext]
            if isinstance(data, bytes):
                write(data)
                continue
            fd = os.open(data, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=self.folder)
            try:
                if copy is not None:
                    copy(fd, 0, os.fstat(fd).st_size)
                else:
                    with open(fd, "rb", closefd=False) as file:
                        shutil.copyfileobj(file, _Writer(write), 1 << 20)
            finally:
                os.close(fd)
        write(tail)


class _Writer:
    def __init__(self, write: Callable[[bytes], object]) -> None:
        self.write = write


def dump_ends(
    table: BlockTable, ext: str, graph: Triples, unusable: Collection[str]
) -> tuple[bytes, bytes]:
    """The text of the dump of `graph` in format `ext` before the first block and after
    the last (`unusable`: the context prefixes the whole graph collides with)."""
    if ext == TURTLE.ext:
        used = table.turtle_prefixes()
        return export.prefix_header(export.graph_prefixes(graph), used).encode(), b""
    context = dumps(export.jsonld_context(unusable), depth=1)
    head = f'{{\n  "@context": {context},\n  "@graph": ['
    if not table.ranges:
        return head.encode(), b"]\n}\n"
    return (head + "\n    ").encode(), b"\n  ]\n}\n"


def dump_text(table: BlockTable, ext: str, graph: Triples, unusable: Collection[str]) -> str:
    """The dump as one text (without a staging folder to stream it to)."""
    parts: list[bytes] = []
    table.dump(ext, *dump_ends(table, ext, graph, unusable), parts.append)
    return b"".join(parts).decode()


def table_of(graph: Triples, size: int | None = None) -> BlockTable:
    """The block table of `graph` made in this process, its ranges kept as bytes."""
    subjects = canonical_subjects(graph)
    formatter = _formatter_of(graph)
    bounds = cut(subjects, size)
    ranges = [format_range(graph, subjects[start:stop], formatter) for start, stop in bounds]
    return BlockTable(subjects, ranges, formatter.prefixes, [start for start, _ in bounds])


def _formatter_of(graph: Triples) -> Formatter:
    prefixes = export.graph_prefixes(graph)
    unusable = export.colliding_prefixes(t for triple in graph for t in triple)
    return Formatter(export._TurtleTerms(prefixes), export._JsonTerms(unusable))
