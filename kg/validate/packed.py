"""`Packed`: a table keyed by N-Triples texts, pickled as a few objects (decision 0077).

The kept validation state's tables by subject (`digests`, `pointers`, `deep`: one entry
per subject, half a million at 10k people) cost most of its reading as dicts: an int,
a str and a bytes object made per entry. Packed, a table is its keys sorted and joined
by newlines, where each ends, and its values laid end to end (a 16-byte digest as it
is, any other value pickled on its own); read back, it is those few objects, and a
build after an edit bisects the keys for the few subjects it changed. Entries set or
removed since it was read sit beside it until it is pickled again (merged in then).

Invariant: a `Packed` answers every lookup, and compares equal, as the dict of its
entries does; pickled and read back it holds the same entries. A table whose keys hold
a newline is not packed (`packed` gives it back as it is).
"""

from __future__ import annotations

import bisect
import pickle
from array import array
from collections.abc import Iterator, Mapping
from itertools import accumulate
from typing import Any

WIDTH = 16  # values of exactly this many bytes (digests) are packed as they are


class _Keys:
    """The sorted keys as a sequence (for `bisect`): key i is `text[ends[i-1]+1:ends[i]]`."""

    __slots__ = ("ends", "text")

    def __init__(self, text: str, ends: array) -> None:
        self.text, self.ends = text, ends

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, i: int) -> str:
        return self.text[self.ends[i - 1] + 1 if i else 0 : self.ends[i]]


class Packed(Mapping[str, Any]):
    def __init__(self, entries: Mapping[str, Any] | None = None) -> None:
        self._keys = _Keys("", array("Q"))
        self._width = WIDTH
        self._values = b""
        self._ends = array("Q")  # with width 0: where each pickled value ends
        self._fresh: dict[str, Any] = {}  # set since packed (they win over the packed)
        self._gone: set[str] = set()  # packed keys removed since
        self._len = 0
        if entries:
            self._pack(sorted(entries.items()))

    def _pack(self, entries: list[tuple[str, Any]]) -> None:
        keys = [k for k, _ in entries]
        text = "\n".join(keys)
        if text.count("\n") != max(len(keys) - 1, 0):
            raise ValueError("a key holds a newline")
        self._keys = _Keys(text, array("Q", (e - 1 for e in accumulate(len(k) + 1 for k in keys))))
        values = [v for _, v in entries]
        if all(type(v) is bytes and len(v) == WIDTH for v in values):
            self._width, self._values, self._ends = WIDTH, b"".join(values), array("Q")
        else:
            parts = [pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL) for v in values]
            self._width, self._values = 0, b"".join(parts)
            self._ends = array("Q", accumulate(map(len, parts)))
        self._fresh, self._gone, self._len = {}, set(), len(keys)

    def _find(self, key: str) -> int:
        """The place of `key` among the packed keys (-1: not there)."""
        keys = self._keys
        at = bisect.bisect_left(keys, key)
        return at if at < len(keys) and keys[at] == key else -1

    def _value(self, i: int) -> Any:
        if self._width:
            return self._values[self._width * i : self._width * (i + 1)]
        ends = self._ends
        return pickle.loads(self._values[ends[i - 1] if i else 0 : ends[i]])

    def __getitem__(self, key: str) -> Any:
        if key in self._fresh:
            return self._fresh[key]
        at = -1 if key in self._gone else self._find(key)
        if at < 0:
            raise KeyError(key)
        return self._value(at)

    def __contains__(self, key: object) -> bool:
        if key in self._fresh:
            return True
        return type(key) is str and key not in self._gone and self._find(key) >= 0

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self.items())

    def items(self) -> Iterator[tuple[str, Any]]:  # type: ignore[override]
        """Every entry: the packed ones (in key order), then those set since."""
        fresh, gone, keys = self._fresh, self._gone, self._keys
        for i in range(len(keys)):
            key = keys[i]
            if key not in fresh and key not in gone:
                yield key, self._value(i)
        yield from fresh.items()

    def __setitem__(self, key: str, value: Any) -> None:
        if key not in self:
            self._len += 1
        self._gone.discard(key)
        self._fresh[key] = value

    def pop(self, key: str, default: Any = None) -> Any:
        if key not in self:
            return default
        value = self[key]
        self._fresh.pop(key, None)
        if self._find(key) >= 0:
            self._gone.add(key)
        self._len -= 1
        return value

    def update(self, entries: Mapping[str, Any]) -> None:
        for key, value in entries.items():
            self[key] = value

    def copy(self) -> Packed:
        """Another table of the same entries (the packed objects shared, never changed)."""
        other = Packed()
        other.__dict__.update(self.__dict__)
        other._fresh, other._gone = dict(self._fresh), set(self._gone)
        return other

    def __getstate__(self) -> tuple:
        if self._fresh or self._gone:
            self._pack(sorted(self.items()))
        return self._keys.text, self._keys.ends, self._width, self._values, self._ends

    def __setstate__(self, state: tuple) -> None:
        text, ends, width, values, value_ends = state
        self._keys, self._width = _Keys(text, ends), width
        self._values, self._ends = values, value_ends
        self._fresh, self._gone, self._len = {}, set(), len(ends)
        size = width * len(ends) if width else (value_ends[-1] if value_ends else 0)
        whole = width or len(value_ends) == len(ends)
        if not (whole and len(values) == size and len(text) == (ends[-1] if ends else 0)):
            raise TypeError("not a packed table")  # (the cache: a miss)


def packed(table: dict[str, Any] | Packed) -> dict[str, Any] | Packed:
    """`table` packed (as it is when it is packed already, or a key holds a newline)."""
    if isinstance(table, Packed):
        return table
    try:
        return Packed(table)
    except ValueError:
        return table
