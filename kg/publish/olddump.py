"""The previous build's N-Triples dump as a source of unchanged chunks (decision 0049).

After an edit, most subjects of the sorted dump have the digest they had (the build's
digest table, kg/graph/delta.py): their chunk, the same bytes, is copied from the
previous tree's dump instead of being formatted again (`SubjectChunks`). What the
previous build wrote is known from the kept digest table (decision 0057: the subjects
of the table it was made with, sorted, and those whose digest changed since, `edits`)
and the dirty-items state (kg/publish/dirty.py: each chunk's size, in that order).

Invariant: a chunk is copied only from the file the previous build wrote, untouched
since (its stamp: digest, inode, size, mtime, checked on the open descriptor; opened
without following a link), whose sizes add up to the file's size; a copy that comes
out short fails the build (OSError) rather than write a different dump. Both dumps are
in the same order (the subjects' N-Triples texts): the subjects between two edits are
one run of chunks in both, copied as one byte range (`runs`, `write`).
"""

from __future__ import annotations

import bisect
import os
from array import array
from collections.abc import Set
from itertools import accumulate
from stat import S_ISREG

from kg.graph.delta import Chunks
from kg.publish.dumpfile import DumpSink
from kg.publish.export import Previous, _stamp
from kg.publish.fingerprint import ByteSink

READ_SIZE = 1 << 22


class PreviousDump:
    """The old dump's chunks: the runs of unchanged subjects, and their byte ranges."""

    def __init__(self, fd: int, order: list[str], edits: Set[str], sizes: array) -> None:
        self.fd = fd
        self.texts = order
        self.edits = edits
        self.sizes = sizes
        self.starts = array("Q", accumulate(sizes, initial=0))  # where each chunk starts

    @classmethod
    def open(
        cls,
        previous: Previous,
        rel: str,
        digest: str,
        order: list[str],
        edits: Set[str],
        sizes: array,
    ) -> PreviousDump | None:
        """The previous tree's dump `rel`, when it is the one described (else None):
        the chunks of the subjects `order` (sorted), of `sizes`."""
        tree, stamps = previous
        stamp = stamps.get(rel)
        if stamp is None or stamp[0] != digest or len(sizes) != len(order):
            return None
        try:
            fd = os.open(os.path.join(tree, rel), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        found = os.fstat(fd)
        if (
            not S_ISREG(found.st_mode)
            or _stamp(digest, found) != stamp
            or sum(sizes) != found.st_size
        ):
            os.close(fd)
            return None
        return cls(fd, order, edits, sizes)

    @classmethod
    def of_chunks(cls, chunks: Chunks) -> PreviousDump | None:
        """The chunks the build's digest walk formatted and kept (decision 0071): every
        subject's, in the dump's order, none to format again (None: taken already)."""
        fd = chunks.take()
        return None if fd is None else cls(fd, chunks.texts, frozenset(), chunks.sizes)

    def runs(self, keys: list[str]) -> list[tuple[int, int, int]]:
        """Each run of this build's subjects (`keys`: their texts, sorted) whose chunks
        the old dump holds unchanged and one after the other: (start, stop) in `keys`,
        and where the run starts in the old order. A subject in `edits` is formatted
        again (changed or new); one in `edits` and not in `keys` (gone) ends a run."""
        cuts = []  # (where a run must stop, where the next may start)
        for text in self.edits:
            at = bisect.bisect_left(keys, text)
            here = at < len(keys) and keys[at] == text
            cuts.append((at, at + 1 if here else at))
        cuts.sort()
        found, start = [], 0
        for stop, after in [*cuts, (len(keys), len(keys))]:
            if stop > start:
                first = bisect.bisect_left(self.texts, keys[start])
                last = first + stop - start - 1
                if last >= len(self.texts) or self.texts[last] != keys[stop - 1]:
                    return []  # not the table's subjects: every chunk formatted again
                found.append((start, stop, first))
            start = max(start, after)
        return found

    def write(self, start: int, stop: int, sink: ByteSink) -> None:
        """Write the old chunks of subjects `start` to `stop` (old order) to `sink`: a
        `DumpSink` copies them file to file (decision 0061)."""
        at, end = self.starts[start], self.starts[stop]
        if isinstance(sink, DumpSink):
            sink.copy(self.fd, at, end - at)
            return
        while at < end:
            data = os.pread(self.fd, min(READ_SIZE, end - at), at)
            if not data:
                raise OSError(f"the previous N-Triples dump came out short at {at}")
            sink.write(data)
            at += len(data)

    def close(self) -> None:
        os.close(self.fd)
