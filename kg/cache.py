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

import hashlib
import hmac
import os
import pickle
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

DIGEST = 32


def digest(*parts: str | bytes) -> str:
    """A hex SHA-256 over the parts, each length-prefixed (so ("ab", "c") != ("a", "bc"))."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        h.update(b"%d:" % len(data))
        h.update(data)
    return h.hexdigest()


@cache
def package_digest() -> str:
    """A digest of kg's own code and templates: entries made by other code never match."""
    root = Path(__file__).parent
    files = sorted(f for f in root.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    return digest(*(part for f in files for part in (str(f.relative_to(root)), f.read_bytes())))


def _secret_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kg" / "secret"


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
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue  # another process made it first: read theirs
        except OSError:
            return None
        with os.fdopen(fd, "wb") as out:
            out.write(secret := os.urandom(DIGEST))
        return secret
    return None


class SignedCache:
    """Entries `<folder>/<key[:2]>/<key>` (key: a hex digest of everything the value
    depends on); `used` records the keys read or written in this run, for `prune`."""

    def __init__(self, folder: Path, secret: bytes | None = None) -> None:
        self.folder = folder
        self.secret = secret if secret is not None else user_secret()
        self.used: set[str] = set()

    @property
    def enabled(self) -> bool:
        return self.secret is not None

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / key

    def _sign(self, key: str, payload: bytes) -> bytes:
        assert self.secret is not None
        return hmac.new(self.secret, key.encode() + b"\0" + payload, hashlib.sha256).digest()

    def get(self, key: str) -> Any | None:
        """The value kept under `key`, or None (missing, unreadable, or not signed by us)."""
        if self.secret is None:
            return None
        try:
            data = self._path(key).read_bytes()
        except OSError:
            return None
        mac, payload = data[:DIGEST], data[DIGEST:]
        if len(mac) != DIGEST or not hmac.compare_digest(mac, self._sign(key, payload)):
            return None
        try:
            value = pickle.loads(payload)
        except Exception:  # a signed entry from an older kg whose classes moved
            return None
        self.used.add(key)
        return value

    def put(self, key: str, value: Any) -> None:
        if self.secret is None:
            return
        self.used.add(key)
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        path = self._path(key)
        temporary = path.with_name(f".{key}.{os.getpid()}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(self._sign(key, payload) + payload)
            os.replace(temporary, path)
        except OSError:
            temporary.unlink(missing_ok=True)

    def prune(self, keep: Iterable[str] | None = None) -> None:
        """Remove the entries not in `keep` (default: not used in this run)."""
        wanted = set(self.used if keep is None else keep)
        try:
            shards = list(self.folder.iterdir())
        except OSError:
            return
        for shard in shards:
            try:
                for entry in shard.iterdir():
                    if entry.name not in wanted:
                        entry.unlink(missing_ok=True)
            except OSError:
                continue
