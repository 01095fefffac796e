"""A query store patched from the previous build's instead of loaded again.

Invariant: `patch_store` makes `target` hold exactly what `write_store(graph_nt)` would
(the default graph and the page-owner index), or makes nothing and returns False; the
caller then writes the store in full. It starts from a checkpoint of the previous store
(pyoxigraph's backup: hard links to its immutable files, so the copy is cheap and the
previous store is never written) and applies the difference between the previous graph
file and the new one: both are kg's sorted N-Triples (kg.publish.fingerprint), so the
difference is one merge of the two files, line by line, in bounded memory. The
co-author index (kg.query.coauthors) is patched from the same difference.

Subjects that appear or disappear (a publication whose title, and so its IRI, changed)
are patched too: the page-owner index is recomputed for them and for every subject under
them (the same rule as a full load, `page_owner`), from the sets of subjects the merge
collects.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox

from kg.query.coauthors import patch_index
from kg.query.store import OWNER, OWNERS

MOST_CHANGED = 200_000  # lines: beyond this a full load is about as fast


def patch_store(previous: Path, previous_nt: Path, graph_nt: Path, target: Path, base: str) -> bool:
    """`target` as the store of `graph_nt`, made from the store of `previous_nt` at
    `previous` (see the module's invariant); False, with nothing at `target`, when the
    files are not sorted, the difference is too big, or anything fails."""
    try:
        diff = _difference(previous_nt, graph_nt)
        if diff is None:
            return False
        removed, added, before, after = diff
        old = ox.Store.read_only(str(previous))
        old.backup(str(target))
        del old
        store = ox.Store(str(target))
        gone, new = list(_quads(removed)), list(_quads(added))
        for quad in gone:
            store.remove(quad)
        store.extend(new)
        _reindex_owners(store, before, after, base.encode())
        patch_index(store, gone, new)
        store.flush()
        del store
    except (OSError, SyntaxError, ValueError):
        shutil.rmtree(target, ignore_errors=True)
        return False
    return True


def page_owner(
    subject: bytes, subjects: set[bytes] | frozenset[bytes], prefix: bytes
) -> bytes | None:
    """The page owner of a subject IRI under `prefix`: its top-most ancestor (cut at a
    `/`) that is a subject too, or None (the subject is a page of its own)."""
    cut = subject.find(b"/", len(prefix))
    while cut != -1 and subject[:cut] not in subjects:
        cut = subject.find(b"/", cut + 1)
    return subject[:cut] if cut != -1 else None


def _reindex_owners(store: ox.Store, before: set[bytes], after: set[bytes], prefix: bytes) -> None:
    """The owner index for the subjects that appeared or disappeared and every subject
    under one of them (whose top-most subject ancestor may have changed)."""
    changed = (before - after) | (after - before)
    if not changed:
        return
    under = tuple(s + b"/" for s in changed)
    affected = changed | {s for s in after if s.startswith(under)}
    graph = ox.NamedNode(OWNERS)
    for subject in affected:
        node = ox.NamedNode(subject.decode())
        for quad in list(store.quads_for_pattern(node, ox.NamedNode(OWNER), None, graph)):
            store.remove(quad)
        owner = page_owner(subject, after, prefix) if subject in after else None
        if owner is not None and subject.startswith(prefix) and len(subject) > len(prefix):
            store.add(ox.Quad(node, ox.NamedNode(OWNER), ox.NamedNode(owner.decode()), graph))


def _difference(
    before: Path, after: Path
) -> tuple[list[bytes], list[bytes], set[bytes], set[bytes]] | None:
    """The lines only in `before` and only in `after` (both sorted files), and the
    subject IRIs of each file; None when a file is out of order or the difference is too
    big to be worth a patch."""
    removed: list[bytes] = []
    added: list[bytes] = []
    subjects: tuple[set[bytes], set[bytes]] = (set(), set())
    with before.open("rb") as old, after.open("rb") as new:
        a, b = _sorted_lines(old, subjects[0]), _sorted_lines(new, subjects[1])
        x, y = next(a, None), next(b, None)
        while x is not None or y is not None:
            if y is None or (x is not None and x < y):
                removed.append(x)  # type: ignore[arg-type]
                x = next(a, None)
            elif x is None or y < x:
                added.append(y)
                y = next(b, None)
            else:
                x, y = next(a, None), next(b, None)
            if len(removed) + len(added) > MOST_CHANGED:
                return None
    return removed, added, *subjects


def _sorted_lines(file: BinaryIO, subjects: set[bytes]) -> Iterator[bytes]:
    """The lines of a sorted N-Triples file; each subject IRI goes into `subjects`."""
    last = b""
    for line in file:
        if line < last:
            raise ValueError("not sorted")
        if not line.startswith(b"<"):
            raise ValueError("a subject that is not an IRI")
        subjects.add(line[1 : line.find(b"> ")])
        last = line
        yield line


def _quads(lines: list[bytes]) -> Iterator[ox.Quad]:
    """The lines' triples, in the default graph."""
    if lines:
        yield from ox.parse(b"".join(lines), format=ox.RdfFormat.N_TRIPLES)
