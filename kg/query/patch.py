"""A query store patched from the previous build's instead of loaded again.

Invariant: `patch_store` makes `target` hold exactly what `write_store(graph_nt)` would
(the default graph and the page-owner index), or makes nothing and returns None; the
caller then writes the store in full. It starts from a checkpoint of the previous store
(pyoxigraph's backup: hard links to its immutable files, so the copy is cheap and the
previous store is never written) and applies the difference between the previous graph
file and the new one: both are kg's sorted N-Triples (kg.publish.fingerprint), so the
difference is one merge of the two files. The files are read by offset, not line by line:
stretches that are the same bytes in both (at 10k people, all but a few lines of
400 MB) are compared a block at a time and skipped, and only the lines where the files
differ are merged, each checked to be in order after the line before it in its file. The
co-author index (kg.query.coauthors) is patched from the same difference.

Subjects that appear or disappear (a publication whose title, and so its IRI, changed)
are patched too: the page-owner index is recomputed for them and for every subject under
them (the same rule as a full load, `page_owner`). Whether a subject is in a graph is
asked of that graph's store; the subjects under one are a range of the sorted new file,
found by bisection.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Container, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pyoxigraph as ox

from kg.query.coauthors import patch_index
from kg.query.store import OWNER, OWNERS

MOST_CHANGED = 200_000  # lines: beyond this a full load is about as fast
_BLOCK = 1 << 20  # bytes compared at a time where the files agree


@dataclass(frozen=True)
class Patch:
    """The lines (kg's N-Triples, with their newline) only in the previous graph file and
    only in the new one: what a patch removed from the store and added to it."""

    removed: tuple[bytes, ...]
    added: tuple[bytes, ...]
    index_changed: bool = True  # whether the co-author index gained or lost a pair


def patch_store(
    previous: Path, previous_nt: Path, graph_nt: Path, target: Path, base: str
) -> Patch | None:
    """`target` as the store of `graph_nt`, made from the store of `previous_nt` at
    `previous` (see the module's invariant), and the difference applied; None, with
    nothing at `target`, when the files are not sorted, the difference is too big, or
    anything fails."""
    try:
        with _opened(previous_nt) as old_lines, _opened(graph_nt) as new_lines:
            diff = _difference(old_lines, new_lines)
            if diff is None:
                return None
            old = ox.Store.read_only(str(previous))
            old.backup(str(target))
            store = ox.Store(str(target))
            gone, new = list(_quads(diff.removed)), list(_quads(diff.added))
            for quad in gone:
                store.remove(quad)
            store.extend(new)
            _reindex_owners(store, old, diff, new_lines, base.encode())
            index_changed = patch_index(store, gone, new)
            store.flush()
            del store, old
    except (OSError, SyntaxError, ValueError):
        shutil.rmtree(target, ignore_errors=True)
        return None
    return Patch(diff.removed, diff.added, index_changed)


class _Bytes(Protocol):
    """What the merge reads of a file: bytes, or a `_Lines` reading one by offset."""

    def __len__(self) -> int: ...
    def __getitem__(self, key: slice, /) -> bytes: ...
    def find(self, sub: bytes, start: int, /) -> int: ...
    def rfind(self, sub: bytes, start: int, end: int, /) -> int: ...


class _Lines:
    """A file's bytes read by offset (`os.pread`) where they are needed: neither read
    whole nor mapped, so the process does not grow with the file (480 MB at 10k)."""

    _STEP = 1 << 16

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.size = os.fstat(fd).st_size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, key: slice, /) -> bytes:
        start = max(key.start or 0, 0)
        stop = self.size if key.stop is None else min(key.stop, self.size)
        return os.pread(self.fd, stop - start, start) if stop > start else b""

    def find(self, sub: bytes, start: int, /) -> int:
        at = start
        while at < self.size:
            chunk = os.pread(self.fd, self._STEP, at)
            found = chunk.find(sub)
            if found != -1:
                return at + found
            at += len(chunk) - len(sub) + 1
        return -1

    def rfind(self, sub: bytes, start: int, end: int, /) -> int:
        high = min(end, self.size)
        while high > start:
            low = max(start, high - self._STEP)
            found = os.pread(self.fd, high - low, low).rfind(sub)
            if found != -1:
                return low + found
            high = low + len(sub) - 1 if low > start else low
        return -1


@contextmanager
def _opened(path: Path) -> Iterator[_Lines]:
    fd = os.open(path, os.O_RDONLY)
    try:
        yield _Lines(fd)
    finally:
        os.close(fd)


def page_owner(subject: bytes, subjects: Container[bytes], prefix: bytes) -> bytes | None:
    """The page owner of a subject IRI under `prefix`: its top-most ancestor (cut at a
    `/`) that is a subject too, or None (the subject is a page of its own)."""
    cut = subject.find(b"/", len(prefix))
    while cut != -1 and subject[:cut] not in subjects:
        cut = subject.find(b"/", cut + 1)
    return subject[:cut] if cut != -1 else None


class _Subjects:
    """The subjects of a store's default graph, asked one at a time (with a cache)."""

    def __init__(self, store: ox.Store) -> None:
        self.store = store
        self.known: dict[bytes, bool] = {}

    def __contains__(self, subject: object) -> bool:
        assert isinstance(subject, bytes)
        found = self.known.get(subject)
        if found is None:
            node = ox.NamedNode(subject.decode())
            quads = self.store.quads_for_pattern(node, None, None, ox.DefaultGraph())
            found = self.known[subject] = next(iter(quads), None) is not None
        return found


def _reindex_owners(
    store: ox.Store, old: ox.Store, diff: Patch, new_lines: _Bytes, prefix: bytes
) -> None:
    """The owner index for the subjects that appeared or disappeared and every subject
    under one of them (whose top-most subject ancestor may have changed)."""
    after, before = _Subjects(store), _Subjects(old)
    touched = {_subject_of(line) for line in (*diff.removed, *diff.added)}
    changed = {s for s in touched if (s in before) != (s in after)}
    if not changed:
        return
    affected = set(changed)
    for s in changed:
        affected.update(_subjects_under(new_lines, s))
    graph = ox.NamedNode(OWNERS)
    for subject in affected:
        node = ox.NamedNode(subject.decode())
        for quad in list(store.quads_for_pattern(node, ox.NamedNode(OWNER), None, graph)):
            store.remove(quad)
        owner = page_owner(subject, after, prefix) if subject in after else None
        if owner is not None and subject.startswith(prefix) and len(subject) > len(prefix):
            store.add(ox.Quad(node, ox.NamedNode(OWNER), ox.NamedNode(owner.decode()), graph))


def _subject_of(line: bytes) -> bytes:
    """The subject IRI of one of kg's N-Triples lines (checked by `_difference`)."""
    return line[1 : line.find(b"> ")]


def _subjects_under(lines: _Bytes, subject: bytes) -> Iterator[bytes]:
    """The subjects minted under `subject` (`<subject/…>`) in a sorted N-Triples file:
    one range of its lines, found by bisection."""
    head = b"<" + subject + b"/"
    at = _first_line_at_least(lines, head)
    last = b""
    while at < len(lines) and lines[at : at + len(head)] == head:
        end = lines.find(b"\n", at)
        end = len(lines) if end == -1 else end + 1
        found = _subject_of(lines[at:end])
        if found != last:
            yield found
            last = found
        at = end


def _first_line_at_least(lines: _Bytes, key: bytes) -> int:
    """The offset of the first line of a sorted file that is >= `key`."""
    low, high = 0, len(lines)  # invariant: every line starting before `low` is < key
    while low < high:
        middle = (low + high) // 2
        start = lines.rfind(b"\n", 0, middle) + 1
        end = lines.find(b"\n", start)
        end = len(lines) if end == -1 else end + 1
        if lines[start:end] < key:
            low = end
        else:
            high = start
    return low


def _difference(before: _Bytes, after: _Bytes) -> Patch | None:
    """The lines only in `before` and only in `after` (both sorted files); None when the
    difference is too big to be worth a patch. ValueError where a line read is out of
    order or its subject is not an IRI."""
    removed: list[bytes] = []
    added: list[bytes] = []
    old, new = _Cursor(before), _Cursor(after)
    while True:
        same = _same_lines(before, old.at, after, new.at)
        old.skip(same)
        new.skip(same)
        x, y = old.peek(), new.peek()
        if x is None and y is None:
            return Patch(tuple(removed), tuple(added))
        if y is None or (x is not None and x < y):
            removed.append(old.take())
        elif x is None or y < x:
            added.append(new.take())
        else:
            old.take()
            new.take()
        if len(removed) + len(added) > MOST_CHANGED:
            return None


class _Cursor:
    """A position at the start of a line of a sorted file; each line read is checked to
    come after the one before it."""

    def __init__(self, data: _Bytes) -> None:
        self.data = data
        self.at = 0
        self.last = b""
        self._line: bytes | None = None

    def skip(self, count: int) -> None:
        """Past `count` bytes that end a line (lines the other file has too)."""
        if count:
            self.at += count
            start = self.data.rfind(b"\n", 0, self.at - 1) + 1
            self.last, self._line = bytes(self.data[start : self.at]), None

    def peek(self) -> bytes | None:
        if self._line is None and self.at < len(self.data):
            end = self.data.find(b"\n", self.at)
            end = len(self.data) if end == -1 else end + 1
            line = bytes(self.data[self.at : end])
            if line < self.last or not line.startswith(b"<") or b"> " not in line:
                raise ValueError("not kg's sorted N-Triples")
            self._line = line
        return self._line

    def take(self) -> bytes:
        line = self.peek()
        assert line is not None
        self.at += len(line)
        self.last, self._line = line, None
        return line


def _same_lines(a: _Bytes, i: int, b: _Bytes, j: int) -> int:
    """How many bytes from `a[i:]` and `b[j:]` are the same whole lines: blocks growing
    while they agree, shrinking where they do not."""
    size, block = 0, 256
    while block >= 64:
        if a[i + size : i + size + block] == b[j + size : j + size + block]:
            size += block
            if i + size >= len(a) or j + size >= len(b):
                break
            block = min(block * 2, _BLOCK)
        else:
            block //= 4
    if i + size >= len(a) and j + size >= len(b) and len(a) - i == len(b) - j:
        return len(a) - i  # both files end here, the same
    end = a.rfind(b"\n", i, i + min(size, len(a) - i, len(b) - j))
    return end + 1 - i if end != -1 else 0


def _quads(lines: tuple[bytes, ...] | list[bytes]) -> Iterator[ox.Quad]:
    """The lines' triples, in the default graph."""
    if lines:
        yield from ox.parse(b"".join(lines), format=ox.RdfFormat.N_TRIPLES)
