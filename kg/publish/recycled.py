"""The spare tree recycled as a build's staging folder (kg.publish.outdir, decision 0050):
what is in it before the build writes, and what the build did not write, removed after.

Invariant: after `sweep`, the staging folder holds only real folders and regular files
(anything else, links first, was removed, never followed) and the marker `RECYCLED`,
which tells every writer (kg.publish.export's, in any process) to check a path before
making it; after `drop_unwritten`, it holds exactly the files the build wrote or kept
and their folders, as a new staging folder would. A new, empty staging folder is left
as it is (no marker: nothing to check).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from kg.errors import ProjectError
from kg.files import FOLDER_FLAGS
from kg.publish.outdir import MAX_DEPTH, remove_at

RECYCLED = ".kg-recycled"  # in a recycled staging folder while the build writes
SCRATCH = (".kg-blocks",)  # kg.publish.render's folders made new in the staging folder

Swept = tuple[set[str], set[str]]  # the recycled tree's files and folders (relative)


def sweep(staging: Path) -> Swept | None:
    """The files and folders of a recycled staging folder (see the module's invariant),
    with its marker made; None for a new, empty one."""
    fd = os.open(staging, FOLDER_FLAGS)
    try:
        with os.scandir(fd) as entries:
            if next(entries, None) is None:
                return None
        files: set[str] = set()
        folders: set[str] = set()
        _walk(fd, "", files, folders, 0)
        os.close(os.open(RECYCLED, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600, dir_fd=fd))
    finally:
        os.close(fd)
    return files, folders


def _walk(fd: int, prefix: str, files: set[str], folders: set[str], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ProjectError(f"cannot reuse {prefix!r} of the output: folders nested too deep")
    with os.scandir(fd) as found:
        entries = list(found)
    for entry in entries:
        rel = prefix + entry.name
        if entry.is_dir(follow_symlinks=False) and rel not in SCRATCH:
            sub = os.open(entry.name, FOLDER_FLAGS, dir_fd=fd)  # not a link since
            try:
                folders.add(rel)
                _walk(sub, rel + "/", files, folders, depth + 1)
            finally:
                os.close(sub)
        elif entry.is_file(follow_symlinks=False) and rel != RECYCLED:
            files.add(rel)
        else:
            remove_at(fd, entry.name)


def drop_unwritten(staging: Path, swept: Swept, written: Collection[str]) -> None:
    """Remove what the recycled tree held and the build did not write: files, then
    folders no written file is in (the deepest first), and the marker."""
    files, folders = swept
    kept_folders = {rel.rpartition("/")[0] for rel in written}
    for folder in list(kept_folders):
        while folder:
            folder = folder.rpartition("/")[0]
            kept_folders.add(folder)
    fd = os.open(staging, FOLDER_FLAGS)
    try:
        done = set(written)
        for rel in sorted(files - done - kept_folders):  # (a file may be a folder now)
            if rel.rpartition("/")[0] in kept_folders:  # else its folder goes below
                _remove_in(fd, rel)
        for rel in sorted(folders - kept_folders - done, key=lambda r: -r.count("/")):
            _remove_in(fd, rel)  # (a folder may be a file now)
        remove_at(fd, RECYCLED)
    finally:
        os.close(fd)


def _remove_in(fd: int, rel: str) -> None:
    """Remove `rel` (a path below the folder `fd`), its folders opened without links."""
    folder, _, name = rel.rpartition("/")
    if not folder:
        remove_at(fd, name)
        return
    try:
        sub = os.open(folder, FOLDER_FLAGS, dir_fd=fd)
    except FileNotFoundError:  # its folder went first
        return
    try:
        remove_at(sub, name)
    finally:
        os.close(sub)
