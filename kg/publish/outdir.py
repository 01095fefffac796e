"""The output directory, replaced atomically even when the process is killed.

`dist` is a symbolic link to one complete version under `.dist.versions/`. A build
writes a new version beside the current one, makes a new link to it and renames that
link over `dist` (rename(2) replaces a link atomically): whenever the process dies,
`dist` is the complete old tree or the complete new one. Users and web servers use
`dist/...` as before (the link is followed). A `dist` that is still a real directory
(written by an older kg) is exchanged with the link in one renameat2(RENAME_EXCHANGE)
call where the kernel has it. Leftovers of a killed run (unfinished versions, links)
are removed by the next run, under a lock so two runs never remove each other's work.

The tree a build replaces is not removed: it is kept as `.dist.versions/spare` and the
next build fills it again as its staging folder (decision 0050; kg.publish.export keeps
each file that is the current tree's very file with the new bytes and replaces the
rest), so a rebuild neither links every kept file into a new folder nor unlinks the
old tree. A first tree (none replaced) is linked file by file as the spare (decision
0079), so the next build recycles one too. The spare is never the tree `dist` shows:
writing into it cannot change the published tree (files are only ever unlinked and made
anew there, never written in place, so a hard link it shares with the current tree is
never written through).

A project may come from someone else, so nothing here writes or deletes through a link
kg did not make: `dist` must be absent, a real folder, or kg's own link (to a real folder
in a real `.dist.versions/`); `.dist.versions` must be a real folder; leftovers are
removed through folder descriptors opened without following links (a link found there
is removed itself, never followed). Anything else is refused with a message (exit 2).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import signal
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from kg.errors import ProjectError
from kg.files import FOLDER_FLAGS

MARKER = ".kg-output"
T = TypeVar("T")
LOCK = ".lock"
SPARE = "spare"  # the tree before the current one, the next build's staging folder
CRASH_ENV = "KG_TEST_CRASH_AT"  # tests: SIGKILL this process at the named step


def replace_tree(
    out_dir: Path, fill: Callable[[Path], T], inside: Path | None = None, spare: bool = False
) -> T:
    """Call `fill(staging)` to write the new tree, then make it `out_dir` atomically.
    With `inside` (the project), `out_dir` must really be inside it (links resolved).
    With `spare`, a first tree (none replaced) is also linked as the spare."""
    out_dir = _own_path(out_dir, inside)
    _check_replaceable(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    versions = out_dir.parent / f".{out_dir.name}.versions"
    with contextlib.suppress(FileExistsError):
        versions.mkdir()
    _check_real_folder(versions)
    with _locked(versions):
        clean_leftovers(out_dir)
        staging = Path(tempfile.mkdtemp(prefix="v-", dir=versions))
        _recycle(versions / SPARE, staging)
        os.chmod(staging, 0o755)
        try:
            result = fill(staging)
            _crash_point("staged")
            replaced = _current(out_dir)
            _switch(out_dir, staging)
        except BaseException:
            _remove(staging)
            raise
        _crash_point("switched")
        if replaced is not None:
            _keep_spare(versions, replaced)
        elif spare:
            _linked_spare(versions, staging)
        clean_leftovers(out_dir)
    return result


def _recycle(spare: Path, staging: Path) -> None:
    """The spare tree (a real folder) moved to `staging` (new and empty: rename(2)
    replaces it in one step); else `staging` stays the new empty folder."""
    if not _real_folder(spare):
        return
    try:
        os.rename(spare, staging)
    except OSError:
        _remove(spare)
        return
    if not _real_folder(staging):  # the spare was swapped for a link since the check
        _remove(staging)
        os.mkdir(staging, 0o700)


def _current(out_dir: Path) -> str | None:
    """The name of the version `out_dir` (kg's link) shows, else None."""
    if not out_dir.is_symlink():
        return None
    name = Path(os.readlink(out_dir)).name
    return name if name.startswith("v-") else None


def _keep_spare(versions: Path, replaced: str) -> None:
    """The tree just replaced kept as the spare (a real folder of kg's, not a link)."""
    if not _real_folder(versions / replaced):
        return
    _remove(versions / SPARE)
    with contextlib.suppress(OSError):
        os.rename(versions / replaced, versions / SPARE)


def _linked_spare(versions: Path, tree: Path) -> None:
    """A first tree's files hard-linked, in folders of their own, as the spare (decision
    0079): the next build recycles a spare as every later one does, and takes each
    unchanged file with one `stat` instead of a link and a `stat`. Made under a name
    `clean_leftovers` removes, then renamed; without hard links, there is no spare."""
    if os.path.lexists(versions / SPARE):
        return
    made = Path(tempfile.mkdtemp(prefix="s-", dir=versions))
    try:
        with _opened(tree) as source, _opened(made) as target:
            linked = _link_tree(source, target, 0)
    except OSError:
        linked = False
    if linked:
        with contextlib.suppress(OSError):
            os.rename(made, versions / SPARE)
            return
    _remove(made)


@contextlib.contextmanager
def _opened(folder: Path | str, parent: int | None = None) -> Iterator[int]:
    """The folder's descriptor (opened without following a link), closed after."""
    fd = os.open(folder, FOLDER_FLAGS, dir_fd=parent)
    try:
        yield fd
    finally:
        os.close(fd)


def _link_tree(source: int, target: int, depth: int) -> bool:
    """Each file of the folder `source` hard-linked into `target`, each folder made
    there and filled alike (never through a link: links are not kg's, and are left
    out); False for folders nested too deep, OSError when a file cannot be linked."""
    if depth > MAX_DEPTH:
        return False
    with os.scandir(source) as found:
        entries = list(found)
    for entry in entries:
        name = entry.name
        if entry.is_dir(follow_symlinks=False):
            os.mkdir(name, 0o777, dir_fd=target)  # less the umask, as a build's folders
            with _opened(name, source) as sub, _opened(name, target) as made:
                if not _link_tree(sub, made, depth + 1):
                    return False
        elif entry.is_file(follow_symlinks=False):
            os.link(name, name, src_dir_fd=source, dst_dir_fd=target, follow_symlinks=False)
    return True


def _own_path(out_dir: Path, inside: Path | None) -> Path:
    """The path to replace: `out_dir` (absent, a real folder or kg's own link), with its
    parent's links resolved; a link kg did not make is refused, never followed."""
    out_dir = out_dir.absolute()
    out_dir = out_dir.parent.resolve() / out_dir.name
    if inside is not None and not out_dir.is_relative_to(inside.resolve()):
        raise ProjectError(
            f"refusing to write {out_dir}: it is outside the project {inside} "
            "(a folder on the way is a link); pass --out to write elsewhere"
        )
    if out_dir.is_symlink() and not _is_ours(out_dir):
        raise ProjectError(
            f"refusing to write through {out_dir}: it is a symbolic link kg did not make "
            f"(to {os.readlink(out_dir)}); remove it, or choose another --out"
        )
    return out_dir


def _is_ours(link: Path) -> bool:
    """A link kg made: to a real folder `.<name>.versions/v-...` in a real folder."""
    target = Path(os.readlink(link))
    if target.parts[:1] != (f".{link.name}.versions",) or len(target.parts) != 2:
        return False
    versions = link.parent / target.parts[0]
    return _real_folder(versions) and _real_folder(versions / target.parts[1])


def _real_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _check_real_folder(path: Path) -> None:
    if not _real_folder(path):
        raise ProjectError(
            f"refusing to use {path}: kg keeps its output versions there, but it is a "
            "symbolic link or a file (kg did not make it); remove it"
        )


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
        if not out_dir.exists() and not out_dir.is_symlink() and _real_folder(old):
            os.replace(old, out_dir)
        else:
            _remove(old)
    for link in parent.glob(f".{name}.link-*"):
        _remove(link)
    versions = parent / f".{name}.versions"
    current = os.readlink(out_dir) if out_dir.is_symlink() else None
    if not _real_folder(versions):
        return
    fd = os.open(versions, FOLDER_FLAGS)  # not through a link put there since the check
    try:
        for version in os.scandir(fd):
            if version.name in (LOCK, SPARE):
                continue
            if current is None or Path(current).name != version.name:
                _remove_at(fd, version.name)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _locked(versions: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        lock_fd = os.open(versions / LOCK, flags, 0o644)  # never through a planted link
    except OSError as exc:
        raise ProjectError(f"cannot lock {versions / LOCK}: {exc.strerror}") from None
    with os.fdopen(lock_fd, "r+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ProjectError(
                f"another kg run is writing {versions.parent}; try again when it ends"
            ) from None
        yield


def _remove(path: Path) -> None:
    """Remove a file, link or tree (a link itself, never what it points to), making
    read-only folders writable first."""
    fd = os.open(path.parent, FOLDER_FLAGS & ~os.O_NOFOLLOW)
    try:
        _remove_at(fd, path.name)
    finally:
        os.close(fd)


MAX_DEPTH = 256  # deeper trees are not kg's output


def remove_at(dir_fd: int, name: str) -> None:
    """Remove `name` in the folder `dir_fd` (a folder with all it holds), never
    following a link (see `_remove_at`)."""
    _remove_at(dir_fd, name)


def _remove_at(dir_fd: int, name: str, depth: int = 0) -> None:
    """Remove `name` in the folder `dir_fd`: a folder with all it holds, reached through
    descriptors opened without following links; anything else (a link too) unlinked."""
    try:
        fd = os.open(name, FOLDER_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dir_fd)
        return
    try:
        if depth > MAX_DEPTH:
            raise ProjectError(f"cannot remove {name}: folders nested too deep")
        with contextlib.suppress(OSError):
            os.chmod(fd, stat.S_IRWXU)  # a read-only folder of an older output
        for entry in list(os.scandir(fd)):
            _remove_at(fd, entry.name, depth + 1)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dir_fd)


def _crash_point(step: str) -> None:
    if os.environ.get(CRASH_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)
