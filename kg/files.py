"""Reading files that come with a project (or from a user's download folder): only
regular files, opened without blocking and checked before reading, and never more than
a limit, so a FIFO cannot hang a run nor /dev/zero fill memory."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a directory: anything but a regular file."""


def read_regular(path: Path, limit: int) -> bytes:
    """At most `limit` + 1 bytes of the regular file at `path` (so a caller can tell a
    file over the limit); OSError (NotRegularFile for special files) when it cannot."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(f"{path} is not a regular file")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
