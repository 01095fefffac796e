"""The N-Triples dump written into the staging folder, its unchanged runs copied by the
kernel, and its digest made of its chunks' digests (decision 0061).

After an edit, nearly all of the sorted dump is byte ranges of the previous build's
dump (`olddump.PreviousDump`). Read into Python, written back and hashed whole, they
cost about 1.5 CPU-s at 10k people (400 MB); here they are copied file to file
(`os.copy_file_range`: the bytes never enter the process; where the kernel or the file
system cannot, a read and a write) and hashed not at all: the dump's digest is
blake2b-16 over the sequence of its chunks' digests (each subject's chunk, blake2b-16
of its bytes, which the build's digest table or `SubjectChunks` has already), a hash
list: two dumps have the same digest exactly when (up to blake2b collisions) they
have the same chunks, so the same bytes.

The Turtle and JSON-LD dumps are written alike (decision 0079, `write_ranges`): their
head, the block table's ranges joined by the format's separator, their tail; a range
kept in `.kg-cache/blocks` is copied from its file by the kernel, and named in the
digest by what its bytes are made from (its cache key, in its file's name, and its
subjects' N-Triples digests: `kg.publish.blocks` keeps a range under its key only
while these are the same), so it is never read into the process either; a range
made in memory (a build without a render cache) is hashed.

Invariant: the file holds exactly the bytes a write of every chunk gives (a copy that
comes out short fails the build: OSError), and its stamp is (`DIGEST_PREFIX` + the hash
list's digest, inode, size, mtime). The prefix keeps the digest from ever equalling a
content digest (`export.content_digest`), so no writer links this file in place of a
text it made. A dump altered on disk after it was written is seen, as before, by its
stamp (inode, size, modification time, checked on the open descriptor), which the
digest never was: no build hashes the previous dump again.
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from kg.publish.blocks import BlockTable, range_bytes
from kg.publish.export import TreeWriter, Written, _stamp, linked_copies

T = TypeVar("T")
DIGEST_PREFIX = "chunks:"
RANGES_PREFIX = "ranges:"  # the Turtle and JSON-LD dumps' digests (never a content digest)
BUFFER = 1 << 20  # formatted bytes gathered before one write
# copy_file_range cannot here (another file system on an old kernel, a file system or
# a sandbox without it): the same bytes read and written instead
_NO_COPY = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM}


class DumpSink:
    """The dump's file: formatted chunks written (gathered, then one write), runs of the
    previous dump copied (`copy`) after what was gathered is written."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending: list[bytes] = []
        self.size = 0  # bytes in `pending`
        self.kernel = True  # copy_file_range still worth trying

    def write(self, data: bytes, /) -> int:
        self.pending.append(data)
        self.size += len(data)
        if self.size >= BUFFER:
            self.flush()
        return len(data)

    def flush(self) -> None:
        if self.pending:
            _write_all(self.fd, b"".join(self.pending))
            self.pending, self.size = [], 0

    def copy(self, source: int, at: int, count: int) -> None:
        """Append `count` bytes of the file `source` from offset `at`."""
        self.flush()
        end = at + count
        while at < end and self.kernel:
            try:
                done = os.copy_file_range(source, self.fd, end - at, at)
            except OSError as error:
                if error.errno not in _NO_COPY:
                    raise
                self.kernel = False
                break
            if not done:
                raise OSError(f"a file copied into a dump came out short at {at}")
            at += done
        while at < end:
            data = os.pread(source, min(BUFFER * 4, end - at), at)
            if not data:
                raise OSError(f"a file copied into a dump came out short at {at}")
            _write_all(self.fd, data)
            at += len(data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def chunks_digest(digests: Iterable[bytes]) -> str:
    """The dump's digest: of its chunks' digests, in order (see the module)."""
    return DIGEST_PREFIX + hashlib.blake2b(b"".join(digests), digest_size=16).hexdigest()


def write_dump(
    staging: Path,
    rels: tuple[str, ...],
    produce: Callable[[DumpSink], T],
    digest: Callable[[T], str],
) -> tuple[dict[str, Written], T]:
    """Write the dump at `rels[0]` in the staging folder (hard-linked, else copied, at
    the others): `produce` writes it to the sink it is given; `digest(made)` is its
    digest, from what `produce` returned. Returns the stamps and what it returned."""
    writer = TreeWriter(staging, None)
    for rel in rels:
        writer.clear(rel)
    target = writer._target(rels[0])
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        sink = DumpSink(fd)
        made = produce(sink)
        sink.flush()
        stamp = _stamp(digest(made), os.fstat(fd))
    finally:
        os.close(fd)
    return linked_copies(writer, target, rels, stamp), made


def write_ranges(sink: DumpSink, table: BlockTable, ext: str, head: bytes, tail: bytes) -> str:
    """The dump of format `ext` written to `sink` (`BlockTable.dump`, a kept range's
    file copied by `DumpSink.copy`) and its digest (`ranges_digest`)."""
    table.dump(ext, head, tail, sink.write, sink.copy)
    return ranges_digest(table, ext, head, tail)


def ranges_digest(table: BlockTable, ext: str, head: bytes, tail: bytes) -> str:
    """The digest of a dump of the table's ranges: of the head's, each range's (a kept
    range by its file's name and its subjects' digests, any other by its bytes: see the
    module) and the tail's."""
    parts = [_digest(b"h", head)]
    for made in table.ranges:
        data = made.data[ext]
        if isinstance(data, str) and made.stamps and made.digests:
            parts.append(_digest(b"k", data.encode(), made.digests))
        else:
            parts.append(_digest(b"b", range_bytes(data, table.folder)))
    parts.append(_digest(b"t", tail))
    return RANGES_PREFIX + hashlib.blake2b(b"".join(parts), digest_size=16).hexdigest()


def _digest(kind: bytes, *data: bytes) -> bytes:
    """blake2b-16 of `data`, each part's length first (no two sequences share one)."""
    made = hashlib.blake2b(kind, digest_size=16)
    for part in data:
        made.update(len(part).to_bytes(8, "little"))
        made.update(part)
    return made.digest()
