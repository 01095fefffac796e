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
in the same order (the subjects' N-Triples texts), so one forward walk finds each chunk.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Set
from stat import S_ISREG

from kg.publish.export import Previous, _stamp
from kg.publish.fingerprint import ByteSink

READ_SIZE = 1 << 22


class PreviousDump:
    """The old dump's chunks, found by a forward walk over its subjects' texts."""

    def __init__(self, fd: int, order: list[str], edits: Set[str], sizes: array) -> None:
        self.fd = fd
        self.texts = order
        self.edits = edits
        self.sizes = sizes
        self.at = 0  # the next old subject not passed
        self.offset = 0  # where it starts in the file
        self.start = self.end = 0  # the byte range `copy` holds back

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

    def same(self, text: str, digest: bytes) -> bool:
        """Whether the old dump holds `text`'s chunk with this digest (texts come in
        increasing order; `digest` is the table's, so the same unless in `edits`)."""
        texts, sizes = self.texts, self.sizes
        while self.at < len(texts) and texts[self.at] < text:
            self.offset += sizes[self.at]
            self.at += 1
        return self.at < len(texts) and texts[self.at] == text and text not in self.edits

    def copy(self, text: str, sink: ByteSink) -> int:
        """Copy the chunk `same` just found (held back while the ranges are adjacent)."""
        size = self.sizes[self.at]
        if self.end != self.offset:
            self.flush(sink)
            self.start = self.end = self.offset
        self.end += size
        return size

    def flush(self, sink: ByteSink) -> None:
        while self.start < self.end:
            data = os.pread(self.fd, min(READ_SIZE, self.end - self.start), self.start)
            if not data:
                raise OSError(f"the previous N-Triples dump came out short at {self.start}")
            sink.write(data)
            self.start += len(data)

    def close(self) -> None:
        os.close(self.fd)
