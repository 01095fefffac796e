"""A content-addressed cache of Python values under `.kg-cache/`, signed so that a cache
that came with a project (a clone, an archive) is never unpickled.

Values are pickled, which is fast and keeps any type, but unpickling runs code named in
the data. Each entry therefore starts with an HMAC-SHA256 of its key and pickle, made
with a secret that lives outside the project (`$KG_CACHE_SECRET`, else
`$XDG_CACHE_HOME/kg/secret`, else `~/.cache/kg/secret`, created with mode 0600). An entry
this user did not write fails the check and counts as a miss; where no secret can be
kept, nothing is cached. A cache that cannot be read or written only costs time.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import hmac
import os
import pickle
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from kg.files import FOLDER_FLAGS, open_child, open_folder, read_regular_at, write_new_at

DIGEST = 32
CACHE_FOLDER = ".kg-cache"
BIG_PICKLE = 1 << 20  # bytes: a pickle this long is unpickled with the collector paused


def digest(*parts: str | bytes) -> str:
    """A hex SHA-256 over the parts, each length-prefixed (so ("ab", "c") != ("a", "bc"))."""
    chunks: list[bytes] = []
    for part in parts:  # hashed at once: one update per part costs more than a join
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        chunks += (b"%d:" % len(data), data)
    return hashlib.sha256(b"".join(chunks)).hexdigest()


@contextmanager
def paused_collector() -> Iterator[None]:
    """The cyclic collector paused while millions of acyclic objects are made, then
    those moved to its oldest generation (`gc.freeze`, then `gc.unfreeze`: nothing stays
    frozen, so a long-lived process collects as before). Left running, it walks the
    objects made so far again and again for cycles they do not have: unpickling the
    kept graph's base at 10k took 1.15 CPU-s with it and 0.67 without (decision 0068).
    In a process whose objects were frozen already (a forked worker: kg.workers starts
    them frozen, so that their collections never write to the inherited pages), the
    new objects stay frozen with them: unfreezing would give the inherited ones back."""
    was = gc.isenabled()
    inherited = gc.get_freeze_count()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if not inherited:
            gc.unfreeze()
        if was:
            gc.enable()


def unpickled(payload: bytes) -> Any:
    """`pickle.loads(payload)`; a big payload (`BIG_PICKLE`) with the collector paused."""
    if len(payload) < BIG_PICKLE:
        return pickle.loads(payload)
    with paused_collector():
        return pickle.loads(payload)


@cache
def package_digest() -> str:
    """A digest of kg's own code and templates: entries made by other code never match."""
    root = Path(__file__).parent
    files = sorted(f for f in root.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    return digest(*(part for f in files for part in (str(f.relative_to(root)), f.read_bytes())))


def user_cache_dir() -> Path:
    """This user's own cache folder (outside every project): `$XDG_CACHE_HOME/kg`, else
    `~/.cache/kg`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kg"


def _secret_path() -> Path:
    return user_cache_dir() / "secret"


def user_secret() -> bytes | None:
    """This user's signing key, made on first use; None where none can be kept."""
    given = os.environ.get("KG_CACHE_SECRET")
    if given:
        return given.encode()
    path = _secret_path()
    for _attempt in range(2):
        try:
            secret = path.read_bytes()
            return secret if len(secret) >= DIGEST else None
        except FileNotFoundError:
            pass
        except OSError:
            return None
        made = _new_secret(path)
        if made is not None:
            return made
    return None


def _new_secret(path: Path) -> bytes | None:
    """A new secret at `path`, which appears there whole: written to a file of its own
    first, then linked to `path` (never replacing one), so that a process starting at
    the same moment never reads it empty (it used to: that process then ran without a
    cache). None when another process made it first (read theirs) or none can be kept."""
    secret = os.urandom(DIGEST)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        draft = path.with_name(f".secret-{os.getpid()}-{secret[:4].hex()}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(secret)
        os.link(draft, path, follow_symlinks=False)
    except FileExistsError:  # another process made it first
        return None
    except OSError:  # no hard links here: written in place, as before
        return _written_in_place(path, secret)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(draft)
    return secret


def _written_in_place(path: Path, secret: bytes) -> bytes | None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None
    with os.fdopen(fd, "wb") as out:
        out.write(secret)
    return secret


class SignedCache:
    """Entries `<folder>/<key[:2]>/<key>` (key: a hex digest of everything the value
    depends on); `used` records the keys read or written in this run, for `prune`.

    The folder is reached from `root` (default: the folder holding `.kg-cache`, else the
    folder's parent) one name at a time without following links, and entries are read,
    written and removed through those descriptors: where the project ships any of these
    folders (or a shard, or an entry) as a symbolic link, the cache reads nothing there
    and writes and deletes nothing through it. The signature covers the folder's name
    and the key, so a valid entry copied under another key or into another cache is a
    miss too."""

    def __init__(self, folder: Path, secret: bytes | None = None, root: Path | None = None) -> None:
        self.folder = folder
        self.root = root if root is not None else _trusted_root(folder)
        self.rel = os.path.relpath(folder, self.root)
        self.secret = secret if secret is not None else user_secret()
        self.used: set[str] = set()
        self._fd: int | None = None
        self._shards: dict[str, int] = {}  # shard name -> its folder's descriptor
        self.pending: dict[str, bytes] = {}  # packed entries made, not yet written

    @property
    def enabled(self) -> bool:
        return self.secret is not None

    def _sign(self, key: str, payload: bytes) -> bytes:
        assert self.secret is not None
        head = f"{self.folder.name}\0{key}\0".encode()
        return hmac.new(self.secret, head + payload, hashlib.sha256).digest()

    def _shard(self, key: str, create: bool) -> int:
        """The shard folder of `key`, reached without following links, opened once per
        process and kept (a build puts and gets thousands of entries)."""
        if not _is_key(key):
            raise OSError(f"not a cache key: {key!r}")
        fd = self._shards.get(key[:2])
        if fd is None:
            if len(self._shards) >= _shard_descriptors():  # stay far below the fd limit
                self._close_shards()
            fd = self._shards[key[:2]] = open_child(self._folder(create), key[:2], create)
        return fd

    def _close_shards(self) -> None:
        shards, self._shards = self._shards, {}
        for fd in shards.values():
            with contextlib.suppress(OSError):
                os.close(fd)

    def _folder(self, create: bool) -> int:
        """The cache's folder, opened once (without following links) and kept: later
        entries are reached from this descriptor, whatever is renamed meanwhile."""
        if self._fd is None:
            self._fd = open_folder(self.root, self.rel, create)
        return self._fd

    def __getstate__(self) -> dict[str, Any]:  # a descriptor means nothing elsewhere
        return {**self.__dict__, "_fd": None, "_shards": {}, "pending": {}}

    def __del__(self) -> None:
        for fd in [getattr(self, "_fd", None), *getattr(self, "_shards", {}).values()]:
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def get(self, key: str) -> Any | None:
        """The value kept under `key`, or None (missing, unreadable, or not signed by us)."""
        value = self._read(key)
        if value is not None:
            self.used.add(key)
        return value

    def _read(self, key: str) -> Any | None:
        if self.secret is None:
            return None
        try:
            data = read_regular_at(self._shard(key, create=False), key, MAX_ENTRY_BYTES)
        except OSError:
            return None
        return self._verified(key, data)

    def _verified(self, key: str, entry: bytes) -> Any | None:
        """The value of a stored entry (its signature, then its pickle), or None when
        `entry` is not signed by us for `key`."""
        mac, payload = entry[:DIGEST], entry[DIGEST:]
        if len(mac) != DIGEST or not hmac.compare_digest(mac, self._sign(key, payload)):
            return None
        try:
            return unpickled(payload)
        except Exception:  # a signed entry from an older kg whose classes moved
            return None

    def put(self, key: str, value: Any) -> None:
        if self.secret is None:
            return
        self.used.add(key)
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        self._write(key, self._sign(key, payload) + payload)

    def _write(self, key: str, data: bytes) -> None:
        try:
            shard = self._shard(key, create=True)
            try:  # a new key (most are): written in place, one open, write and close
                write_new_at(shard, key, data)
            except FileExistsError:
                _replace_at(shard, key, data)
        except OSError:
            return  # a cache that cannot be written only costs time

    def get_packed(self, key: str) -> Any | None:
        """The value `put_packed` kept under `key`, or None (missing, or not signed by
        us): found in its pack, the file of the entries whose keys begin alike. Each
        entry in a pack is signed as a file entry is, so only its own bytes are checked
        and unpickled."""
        if self.secret is None or not _is_key(key):
            return None
        entry = _find(self._pack(key[:PACK_DIGITS]), key.encode())
        value = None if entry is None else self._verified(key, entry)
        if value is not None:
            self.used.add(key)
        return value

    def put_packed(self, key: str, value: Any) -> None:
        """Keep `value` under `key` for `write_packs` (signed here, in the worker that
        made it): one file per entry costs more than the entry (creating a file is
        ~80 µs of kernel time), a pack holds many."""
        if self.secret is None or not _is_key(key):
            return
        self.used.add(key)
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        self.pending[key] = self._sign(key, payload) + payload

    def take_pending(self) -> dict[str, bytes]:
        """The entries `put_packed` kept in this process since the last call (a worker
        hands them to the process that writes the packs)."""
        pending, self.pending = self.pending, {}
        return pending

    def write_packs(self, fresh: Mapping[str, bytes], keep: Collection[str]) -> set[str]:
        """Write every pack anew where it changed: the entries of `keep` it held, and
        those of `fresh` (`take_pending`'s); returns the packs' names, for `prune`. A
        pack left empty is not written (and `prune` removes it)."""
        if self.secret is None:
            return set()
        fresh = {**fresh, **self.take_pending()}
        by_pack: dict[str, dict[str, bytes]] = {}
        for key, entry in fresh.items():
            if _is_key(key):
                by_pack.setdefault(key[:PACK_DIGITS], {})[key] = entry
        wanted = keep if isinstance(keep, set | frozenset) else set(keep)
        names = set()
        for n in range(16**PACK_DIGITS):
            name = f"{n:0{PACK_DIGITS}x}"
            old = dict(_entries(self._pack(name)))
            new = {k: v for k, v in old.items() if k in wanted}
            new.update(by_pack.get(name, {}))
            if new != old and new:
                self._write(name, _packed(new))
            if new:
                names.add(name)
        return names

    def _pack(self, name: str) -> bytes:
        """A pack's bytes (b"" when there is none)."""
        try:
            return read_regular_at(self._shard(name, create=False), name, MAX_ENTRY_BYTES)
        except OSError:
            return b""

    def prune(self, keep: Iterable[str] | None = None) -> None:
        """Remove the entries not in `keep` (default: not used in this run). Only names
        inside the cache's own folders are removed (a link is removed, never followed)."""
        wanted = set(self.used if keep is None else keep)
        try:
            folder = open_folder(self.root, self.rel)
        except OSError:
            return
        try:
            for shard in os.scandir(folder):
                with contextlib.suppress(OSError):
                    if shard.is_dir(follow_symlinks=False):
                        _prune_shard(folder, shard.name, wanted)
                    else:  # not a shard: a stray file or a link (the link itself goes)
                        os.unlink(shard.name, dir_fd=folder)
        except OSError:
            return
        finally:
            os.close(folder)


PACK_DIGITS = 3  # packed entries go in 16**3 packs, by their keys' first hex digits
MAX_ENTRY_BYTES = 512 * 1024 * 1024  # larger files are not entries kg wrote: a miss
_HEX = frozenset("0123456789abcdef")


@cache
def _shard_descriptors() -> int:
    """How many shard folders a cache keeps open: all 256 where the process may open
    thousands of files, else a few (macOS's default limit is 256 in all)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return 16
    return 256 if soft == resource.RLIM_INFINITY or soft >= 4096 else 16


def _is_key(key: str) -> bool:
    return 2 < len(key) <= 128 and set(key) <= _HEX


def _trusted_root(folder: Path) -> Path:
    """The project folder a cache folder lives in: the parent of `.kg-cache`."""
    for parent in folder.parents:
        if parent.name == CACHE_FOLDER:
            return parent.parent
    return folder.parent


def _packed(entries: dict[str, bytes]) -> bytes:
    """A pack's bytes: per entry, the key's length (a byte), the key, the entry's
    length (4 bytes) and the entry (its signature and pickle)."""
    return b"".join(
        b"%c%s%s%s" % (len(key), key.encode(), len(entry).to_bytes(4, "big"), entry)
        for key, entry in sorted(entries.items())
    )


def _entries(data: bytes) -> Iterator[tuple[str, bytes]]:
    """The (key, entry) pairs of a pack, up to the first malformed one."""
    at, end = 0, len(data)
    while at < end:
        size = data[at]
        key, at = data[at + 1 : at + 1 + size], at + 1 + size
        length = int.from_bytes(data[at : at + 4], "big")
        at += 4
        if len(key) != size or at + length > end:
            return
        yield key.decode("ascii", "replace"), data[at : at + length]
        at += length


def _find(data: bytes, key: bytes) -> bytes | None:
    """The entry of `key` in a pack, without reading the other entries' bytes."""
    at, end, size = 0, len(data), len(key)
    while at < end:
        found, length = data[at], int.from_bytes(data[at + 1 + data[at] : at + 5 + data[at]], "big")
        start = at + 5 + found
        if start + length > end:
            return None
        if found == size and data[at + 1 : at + 1 + size] == key:
            return data[start : start + length]
        at = start + length
    return None


def _replace_at(shard: int, key: str, data: bytes) -> None:
    """Replace the entry `key` through a new file renamed over it (never writing into
    the file there, which may be a link)."""
    temporary = f".{key}.{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary, dir_fd=shard)  # a killed run's (or a planted link)
    try:
        write_new_at(shard, temporary, data)
        os.replace(temporary, key, src_dir_fd=shard, dst_dir_fd=shard)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=shard)


def _prune_shard(folder: int, name: str, wanted: set[str]) -> None:
    shard = os.open(name, FOLDER_FLAGS, dir_fd=folder)
    try:
        for entry in os.scandir(shard):
            if entry.name not in wanted and not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.name, dir_fd=shard)
    finally:
        os.close(shard)
