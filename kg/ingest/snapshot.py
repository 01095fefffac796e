"""The loader's snapshot: what the last build read from data/, kept so that a rebuild
parses, reads and unpickles only the files that changed (decision 0046).

Invariant: a value is taken from the snapshot only for a file whose bytes are those the
value was made from: either its status (device, inode, mode, size, mtime and ctime in
nanoseconds, taken with `lstat`, so never through a link) equals the one recorded, or its
bytes hash to the key recorded (the parse cache's key: kg's code, the kind of record,
the file's name and its bytes). Only files read without problems are recorded, so every
problem of a run is found again by parsing its file. A status taken within `RACY_NS` of
the run that recorded it is not recorded (a file changed again within the clock's
granularity would keep its status): such a file is compared by its bytes.

The snapshot is kept in columns (kg.ingest.columns, decision 0063: its records are
rebuilt without a Python call each), else, holding a value columns do not keep, as the
tuple itself. It is one entry of the parse cache (`SignedCache`: signed with this user's
secret, bounded in size, reached without following links), so a snapshot that came with
a project is never unpickled. It is rewritten only when it drifted (more than
`max(MIN_DRIFT, files // DRIFT_SHARE)` files not served by their status): in between,
the few changed files are kept as the parse cache's per-file entries, and a rebuild
after one edit unpickles one big entry and parses one file.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kg.cache import SignedCache, digest, package_digest, paused_collector
from kg.errors import KgError
from kg.ingest import columns

RACY_NS = 2_000_000_000  # FAT keeps modification times to 2 s; others to ns or jiffies
MIN_DRIFT = 32
DRIFT_SHARE = 50

Status = tuple[int, ...]
Again = Callable[[int], "tuple[Status, str] | None"]  # (`settle`) a file's status taken
# anew and its bytes' key, when its mtime and ctime are before the time given; else None


def status_of(path: Path) -> Status | None:
    """A regular file's recorded status (None for a link, anything else, or an error)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class Snapshot:
    """The entries of the last build (`old`: file -> (status, key, value)) and those of
    this run (`new`), with the per-file entries of the files parsed in this run."""

    def __init__(self, cache: SignedCache, data_dir: Path) -> None:
        self.cache = cache
        self.key = digest("load-snapshot", package_digest(), str(data_dir.resolve()))
        self.started = time.time_ns()
        kept = self._read() if cache.enabled else None
        self.found = kept is not None
        self.old: dict[str, tuple] = kept[0] if kept else {}
        self.texts: dict[str, str] = kept[1] if kept else {}
        self.new: dict[str, tuple] = {}
        self.pending: dict[str, tuple[Status | None, str]] = {}  # file -> its status, key
        self.parsed: dict[str, Any] = {}  # per-file key -> what conversion gave
        self.previous: dict[str, tuple[str, Any]] = {}  # file -> its snapshot key, value
        self.by_status = 0
        self.kept: set[str] = set()  # files whose value is the snapshot's (texts shared)
        self.unsure: dict[str, Again] = {}  # file -> how to check it again (`settle`)

    @property
    def enabled(self) -> bool:
        return self.cache.enabled

    def _read(self) -> tuple[dict, dict] | None:
        """The last build's entries and shared texts (None: none kept, or not ours).
        The collector is paused while a million records are made, then they are moved
        to its oldest generation (`kg.cache.paused_collector`): it would walk them
        again and again for cycles records do not have (about half the time)."""
        with paused_collector():
            kept = self.cache.get(self.key)
            if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == columns.VERSION:
                data, kept = kept[1], None  # (the bytes freed as soon as they are read)
                kept = columns.decode(data) if isinstance(data, bytes) else None
        if not (isinstance(kept, tuple) and len(kept) == 2):
            return None
        return kept if isinstance(kept[0], dict) and isinstance(kept[1], dict) else None

    def unchanged(self, path: Path, display: str) -> Any | None:
        """The value kept for `display` when the file's status is the recorded one."""
        entry = self.old.get(display)
        if entry is None or entry[0] is None or status_of(path) != entry[0]:
            return None
        self.new[display] = entry
        self.by_status += 1
        self.kept.add(display)
        return entry[2]

    def same_bytes(
        self, display: str, key: str, status: Status | None, again: Again | None = None
    ) -> Any | None:
        """What the file's bytes gave before (key: the parse cache's key of them): the
        snapshot's value, else the parse cache's per-file entry; None when not kept.
        `again`: the file's status and key taken anew, for `settle`."""
        settled = self._settled(status)
        self.pending[display] = (settled, key)
        if settled is None and again is not None:
            self.unsure[display] = again
        entry = self.old.get(display)
        if entry is not None and entry[1] == key:
            self.kept.add(display)
            return entry[2], []
        if entry is not None:  # what the snapshot had of other bytes (kg.graph.front)
            self.previous[display] = (entry[1], entry[2])
        return self.cache.get(key)

    def converted(self, key: str, value: Any) -> None:
        """A file parsed in this run without problems (`value`: what conversion gave)."""
        self.parsed[key] = value

    def keep(self, display: str, value: Any) -> None:
        """Record what the loader made of a file read without problems in this run."""
        status, key = self.pending.pop(display, (None, ""))
        if key:
            self.new[display] = (status, key, value)

    def _settled(self, status: Status | None) -> Status | None:
        """`status`, or None when the file changed too recently to trust its times."""
        if status is None or max(status[4], status[5]) >= self.started - RACY_NS:
            return None
        return status

    def settle(self) -> None:
        """Record the status of each file kept without one (changed too recently when it
        was read) whose bytes, read again now, give the recorded key, when that status
        is older than `RACY_NS` before this check began (the racy-git argument: a later
        change gives a later mtime or ctime, so another status)."""
        now = time.time_ns()
        for display, again in self.unsure.items():
            entry = self.new.get(display)
            if entry is None or entry[0] is not None:
                continue
            try:
                found = again(now - RACY_NS)
            except (KgError, OSError):
                continue  # unreadable now: compared by its bytes next time
            if found is not None and found[1] == entry[1]:
                self.new[display] = (found[0], found[1], entry[2])
        self.unsure.clear()

    def rewrites(self, clean: bool) -> bool:
        """Whether `save` writes the snapshot anew: none was found, or it drifted (files
        not served by their status, entries of files gone), and the run was clean."""
        files = len(self.new)
        drift = files - self.by_status + (len(self.old) - self.by_status)
        return clean and (not self.found or drift > max(MIN_DRIFT, files // DRIFT_SHARE))

    def save(self, clean: bool, texts: dict[str, str]) -> None:
        """Keep this run's entries: the whole snapshot anew when `rewrites`, else the
        files parsed in this run as the parse cache's per-file entries."""
        if not self.enabled:
            return
        if self.rewrites(clean):
            self.settle()
            kept = columns.encode((self.new, texts))  # read back without a call per record
            self.cache.put(self.key, (columns.VERSION, kept) if kept else (self.new, texts))
            return
        if self.found:
            self.cache.used.add(self.key)
        for key, value in self.parsed.items():
            self.cache.put(key, value)
