"""A query store patched from the previous build's instead of loaded again.

Invariant: `patch_store` makes `target` hold exactly what `write_store(graph_nt)` would
(the default graph and the page-owner index), or makes nothing and returns False; the
caller then writes the store in full. It starts from a checkpoint of the previous store
(pyoxigraph's backup: hard links to its immutable files, so the copy is cheap and the
previous store is never written) and applies the difference between the previous graph
file and the new one: both are kg's sorted N-Triples (kg.publish.fingerprint), so the
difference is one merge of the two files, line by line, in bounded memory.

Only edits that keep the set of subjects are patched (a title, a date, an affiliation:
the common edit); a subject that appears or disappears can change which page owner
other subjects have, so such a build writes the store in full.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox

MOST_CHANGED = 200_000  # lines: beyond this a full load is about as fast


def patch_store(previous: Path, previous_nt: Path, graph_nt: Path, target: Path) -> bool:
    """`target` as the store of `graph_nt`, made from the store of `previous_nt` at
    `previous` (see the module's invariant); False, with nothing at `target`, when the
    subjects changed, the files are not sorted, or anything fails."""
    try:
        diff = _difference(previous_nt, graph_nt)
        if diff is None:
            return False
        removed, added = diff
        old = ox.Store.read_only(str(previous))
        if not _same_subjects(old, removed, added):
            return False
        old.backup(str(target))
        del old
        store = ox.Store(str(target))
        for quad in _quads(removed):
            store.remove(quad)
        store.extend(_quads(added))
        store.flush()
        del store
    except (OSError, SyntaxError, ValueError):
        shutil.rmtree(target, ignore_errors=True)
        return False
    return True


def _difference(before: Path, after: Path) -> tuple[list[bytes], list[bytes]] | None:
    """The lines only in `before` and only in `after`, both sorted files (None when a
    file is out of order or the difference is too big to be worth a patch)."""
    removed: list[bytes] = []
    added: list[bytes] = []
    with before.open("rb") as old, after.open("rb") as new:
        a, b = _sorted_lines(old), _sorted_lines(new)
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
    return removed, added


class _OutOfOrder(ValueError):
    pass


def _sorted_lines(file: BinaryIO) -> Iterator[bytes]:
    last = b""
    for line in file:
        if line < last:
            raise _OutOfOrder("not sorted")
        last = line
        yield line


def _subject(line: bytes) -> bytes:
    return line[: line.find(b" ")]


def _same_subjects(store: ox.Store, removed: list[bytes], added: list[bytes]) -> bool:
    """Whether every subject keeps at least one triple and no subject is new."""
    gone: dict[bytes, int] = {}
    for line in removed:
        gone[_subject(line)] = gone.get(_subject(line), 0) + 1
    arriving = {_subject(line) for line in added}
    for subject in set(gone) | arriving:
        node = _node(subject)
        if node is None:
            return False
        present = store.quads_for_pattern(node, None, None, ox.DefaultGraph())
        held = sum(1 for _ in itertools.islice(present, gone.get(subject, 0) + 1))
        if held == 0 or (subject not in arriving and held <= gone.get(subject, 0)):
            return False
    return True


def _node(subject: bytes) -> ox.NamedNode | None:
    """The subject of a line as a term (kg writes IRIs; anything else: no patch)."""
    if not (subject.startswith(b"<") and subject.endswith(b">")):
        return None
    try:
        return ox.NamedNode(subject[1:-1].decode())
    except (UnicodeDecodeError, ValueError):
        return None


def _quads(lines: list[bytes]) -> Iterator[ox.Quad]:
    """The lines' triples, in the default graph."""
    if lines:
        yield from ox.parse(b"".join(lines), format=ox.RdfFormat.N_TRIPLES)
