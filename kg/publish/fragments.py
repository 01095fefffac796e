"""Rendered fragments kept between builds, by a digest of the value they render
(decision 0062).

A page that shows many entries (a list page's publications, a profiled person's
publications, their BibTeX file) renders each entry from a frozen view
(`PublicationView`, `Citable`) through a template or function of its own. `Fragments`
gives an entry's text from the texts the previous build rendered when the view is the
same, and renders it otherwise: after an edit only the entries whose views changed are
rendered again, the page around them is joined as before.

Invariant: `Fragments.text(view, render)` is `render()`'s text for `view`, byte for
byte, when `render` is a pure function of `view` (a template given only it, or
`bibtex_entry`). A kept text is used only under the digest of the view's canonical
text (`view_digest`: a string's own text; else every field of every dataclass in it,
by class and name, each value by its `repr`, which names a string, a number, a
boolean or None exactly and never as another of those; the two kinds marked apart), so
equal digests mean equal views; a view holding any other kind of value is rendered and
not kept. The template and everything else the text depends on (kg's code and
templates, the project's settings and templates) are in the cache key the kept texts
are read from (`kg.publish.fingerprint.settings_digest`). Kept texts come from the
signed render cache only, so are kg's own.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping
from functools import cache
from operator import attrgetter
from typing import Generic, TypeVar

T = TypeVar("T")

KEPT_MAX = 1 << 20  # entries kept per use: more is not a list kg renders (a miss beyond)


def view_digest(view: object) -> bytes | None:
    """The digest a fragment's text is kept under: of the view's canonical text (a
    string's own text; else every field of every dataclass in it, in order, and each
    plain value's `repr`); None when it holds a value of another type (its text is then
    rendered, not kept)."""
    if type(view) is str:  # a text is its own canonical form (marked apart from others)
        data = b"s" + view.encode("utf-8", "surrogatepass")
        return hashlib.blake2b(data, digest_size=16).digest()
    parts: list[str] = []
    try:
        _canonical(view, parts)
    except TypeError:
        return None
    data = b"c" + "\x00".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).digest()


_PLAIN = frozenset({str, int, float, bool, type(None)})  # their `repr`s never collide


def _canonical(value: object, parts: list[str]) -> None:
    """Append `value`'s canonical text (see `view_digest`) to `parts`."""
    kind: type = type(value)
    if kind in _PLAIN:
        parts.append(repr(value))
    elif isinstance(value, tuple) and kind is tuple:
        parts.append(f"({len(value)}")
        for item in value:
            _canonical(item, parts)
    else:
        name, values = _fields_of(kind)  # of a dataclass, else TypeError
        parts.append(name)
        for field in values(value):
            if type(field) in _PLAIN:
                parts.append(repr(field))
            else:
                _canonical(field, parts)


@cache
def _fields_of(kind: type) -> tuple[str, Callable[[object], tuple]]:
    """The class's name and its fields' values of an object (every field of the
    dataclass, its inherited ones too, also those `repr` leaves out, in order);
    TypeError for a class that is not a dataclass."""
    if not dataclasses.is_dataclass(kind):
        raise TypeError(kind.__name__)
    names = tuple(f.name for f in dataclasses.fields(kind))
    getter = attrgetter(*names) if len(names) > 1 else lambda v: tuple(getattr(v, n) for n in names)
    return f"{kind.__module__}.{kind.__qualname__}:{len(names)}", getter


class Fragments(Generic[T]):
    """Texts of rendered views: the kept ones (`kept`, the previous build's `made`)
    and those rendered in this build (`made`, what the next build keeps)."""

    def __init__(self, kept: Mapping[bytes, T] | None = None) -> None:
        self.kept: Mapping[bytes, T] = kept if isinstance(kept, dict) else {}
        self.made: dict[bytes, T] = {}
        self.rendered = 0  # the texts rendered here (not kept): for the tests and figures

    def text(self, view: object, render: Callable[[], T]) -> T:
        """`render()`, or the text kept for an equal view."""
        key = view_digest(view)
        if key is None:
            self.rendered += 1
            return render()
        return self.keyed(key, render)

    def keyed(self, key: bytes, render: Callable[[], T]) -> T:
        """`render()`, or the text kept under `key`: a digest of everything `render`
        reads, made by the caller (`view_digest`'s are 16 bytes; a caller's own keys
        are of another length, so the two never meet)."""
        found = self.made.get(key)
        if found is None:
            found = self.kept.get(key)
            if found is None:
                found = render()
                self.rendered += 1
            if len(self.made) < KEPT_MAX:
                self.made[key] = found
        return found

    def changed(self) -> bool:
        """Whether `made` differs from what was kept (else there is nothing to write)."""
        return self.made != self.kept
