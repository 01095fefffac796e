"""No lost edits: one kg writer per profile folder at a time, and no write over a change.

Invariant: a profile is replaced only by a writer that holds the folder's lock (an
advisory `flock` on the `data/profiles/` directory itself, so no lock file is left in
the project) and only when the file still holds, byte for byte, the text the writer
read. Editors take no lock: a save between kg's read and its write is found by
comparing the bytes again just before `os.replace`, and the writer starts over from the
saved text (or refuses, when the file keeps changing). The remaining window is the
instant between that comparison and the rename.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kg.errors import UsageError

LOCK_WAIT_SECONDS = 60.0  # another import of a 4,000-entry file takes well under this


class ProfileChanged(Exception):
    """The profile's text changed between kg's read and its write (an editor saved)."""


@contextmanager
def folder_lock(folder: Path, display: str, wait: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold the exclusive lock of `folder` (waiting for another kg writer to finish)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise UsageError(f"cannot open {display}: {exc.strerror}") from None
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise UsageError(
                        f"{display} is being written by another kg command for more than "
                        f"{wait:.0f} s; nothing written; try again when it has finished"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def unchanged(path: Path, read: bytes) -> None:
    """Raise ProfileChanged unless `path` still holds exactly `read`."""
    try:
        now = path.read_bytes()
    except OSError:
        raise ProfileChanged(str(path)) from None
    if now != read:
        raise ProfileChanged(str(path))
