"""Reading files that come with a project (or from a user's download folder): only
regular files, opened without blocking and checked before reading, and never more than
a limit, so a FIFO cannot hang a run nor /dev/zero fill memory. Folders kg writes in
inside a project (caches) are reached one name at a time without following links, so a
project that ships `.kg-cache` as a link to elsewhere cannot make kg write or delete
there."""

from __future__ import annotations

import contextlib
import errno
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
        return _read_fd(fd, path, limit)
    finally:
        os.close(fd)


def _read_fd(fd: int, path: Path | str, limit: int) -> bytes:
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        raise NotRegularFile(f"{path} is not a regular file")
    chunks, size = [], 0
    hint = status.st_size + 1  # not a buffer of `limit` bytes for a small file
    while size <= limit:
        chunk = os.read(fd, min(limit + 1 - size, max(hint - size, 65536)))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


class NotOurFolder(OSError):
    """A folder kg would write in is a symbolic link, or not a folder at all."""


FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def open_folder(root: Path, rel: str, create: bool = False) -> int:
    """A descriptor of the folder `root/rel`, reached one name at a time without
    following any link below `root` (O_NOFOLLOW at each step, so the answer cannot change
    between a check and its use); missing folders are made when `create` is set.
    NotOurFolder when a name on the way is a link or a file; the caller closes the fd."""
    fd = os.open(root, FOLDER_FLAGS & ~os.O_NOFOLLOW)
    try:
        for name in (p for p in rel.split("/") if p not in ("", ".")):
            if name == "..":
                raise NotOurFolder(f"{root}/{rel} leaves {root}")
            child = open_child(fd, name, create, f"{root}/{rel}")
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_child(fd: int, name: str, create: bool, where: str = "") -> int:
    """The folder `name` inside the folder `fd` (made when missing and `create`), never
    through a link: NotOurFolder when it is a link or a file."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=fd)
    try:
        return os.open(name, FOLDER_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            message = f"{name} is a symbolic link or a file, not a folder"
            raise NotOurFolder(exc.errno, message, where or name) from None
        raise


def read_regular_at(dir_fd: int, name: str, limit: int) -> bytes:
    """`read_regular` for the file `name` in the folder `dir_fd`, never through a link."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(name, flags, dir_fd=dir_fd)
    try:
        return _read_fd(fd, name, limit)
    finally:
        os.close(fd)


def write_new_at(dir_fd: int, name: str, data: bytes) -> None:
    """Write `data` to a new file `name` in the folder `dir_fd` (never an existing file,
    never through a link)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(name, flags, 0o666, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
