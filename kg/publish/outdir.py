"""The output directory, replaced atomically even when the process is killed.

`dist` is a symbolic link to one complete version under `.dist.versions/`. A build
writes a new version beside the current one, makes a new link to it and renames that
link over `dist` (rename(2) replaces a link atomically): whenever the process dies,
`dist` is the complete old tree or the complete new one. Users and web servers use
`dist/...` as before (the link is followed). A `dist` that is still a real directory
(written by an older kg) is exchanged with the link in one renameat2(RENAME_EXCHANGE)
call where the kernel has it. Leftovers of a killed run (unfinished versions, links)
are removed by the next run, under a lock so two runs never remove each other's work.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from kg.errors import ProjectError

MARKER = ".kg-output"
T = TypeVar("T")
LOCK = ".lock"
CRASH_ENV = "KG_TEST_CRASH_AT"  # tests: SIGKILL this process at the named step


def replace_tree(out_dir: Path, fill: Callable[[Path], T]) -> T:
    """Call `fill(staging)` to write the new tree, then make it `out_dir` atomically."""
    out_dir = _own_path(out_dir)
    _check_replaceable(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    versions = out_dir.parent / f".{out_dir.name}.versions"
    versions.mkdir(exist_ok=True)
    with _locked(versions):
        clean_leftovers(out_dir)
        staging = Path(tempfile.mkdtemp(prefix="v-", dir=versions))
        os.chmod(staging, 0o755)
        try:
            result = fill(staging)
            _crash_point("staged")
            _switch(out_dir, staging)
        except BaseException:
            _remove(staging)
            raise
        _crash_point("switched")
        clean_leftovers(out_dir)
    return result


def _own_path(out_dir: Path) -> Path:
    """The path to replace: `out_dir` itself when it is kg's link (or absent), else the
    real directory a user's own link points to."""
    out_dir = out_dir.absolute()
    out_dir = out_dir.parent.resolve() / out_dir.name
    if out_dir.is_symlink() and not _is_ours(out_dir):
        return out_dir.resolve()
    return out_dir


def _is_ours(link: Path) -> bool:
    target = Path(os.readlink(link))
    return target.parts[:1] == (f".{link.name}.versions",) and len(target.parts) == 2


def _check_replaceable(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ProjectError(
            f"{out_dir} is a file, not a directory; remove it or choose another --out"
        )
    if not out_dir.is_dir() or (out_dir / MARKER).exists() or (out_dir.parent / MARKER).exists():
        return
    if any(out_dir.iterdir()):
        raise ProjectError(
            f"refusing to replace {out_dir}: it is not empty and was not written "
            f"by kg (no {MARKER} file); choose another --out"
        )


def _switch(out_dir: Path, staging: Path) -> None:
    link = out_dir.parent / f".{out_dir.name}.link-{os.getpid()}"
    _remove(link)
    os.symlink(os.path.relpath(staging, out_dir.parent), link)
    _crash_point("linked")
    if out_dir.is_symlink() or not out_dir.exists():
        os.replace(link, out_dir)  # atomic: the old link or the new one, never none
        return
    if _exchange(link, out_dir):  # an older kg's real directory, swapped in one step
        _remove(link)
        return
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    os.replace(out_dir, old)  # no RENAME_EXCHANGE here: the next run restores `old`
    _crash_point("moved-old")
    os.replace(link, out_dir)
    _remove(old)


def _exchange(a: Path, b: Path) -> bool:
    """renameat2(a, b, RENAME_EXCHANGE); False where the system has no such call."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: the file system cannot
        return False
    raise OSError(errno, os.strerror(errno), str(b))


def clean_leftovers(out_dir: Path) -> None:
    """Remove what a killed run left: versions `out_dir` does not point to, stray links;
    put back a previous tree that a run without RENAME_EXCHANGE had moved aside."""
    parent, name = out_dir.parent, out_dir.name
    for old in sorted(parent.glob(f".{name}.old-*")):
        if not out_dir.exists() and not out_dir.is_symlink():
            os.replace(old, out_dir)
        else:
            _remove(old)
    for link in parent.glob(f".{name}.link-*"):
        _remove(link)
    versions = parent / f".{name}.versions"
    current = os.readlink(out_dir) if out_dir.is_symlink() else None
    if versions.is_dir():
        for version in versions.iterdir():
            if version.name != LOCK and (current is None or Path(current).name != version.name):
                _remove(version)


@contextlib.contextmanager
def _locked(versions: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(versions / LOCK, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ProjectError(
                f"another kg run is writing {versions.parent}; try again when it ends"
            ) from None
        yield


def _remove(path: Path) -> None:
    """Remove a file, link or tree, making read-only folders writable first."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path, onerror=_writable_and_retry)


def _writable_and_retry(function: Callable, path: str, _exc: object) -> None:
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        function(path)


def _crash_point(step: str) -> None:
    if os.environ.get(CRASH_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)
