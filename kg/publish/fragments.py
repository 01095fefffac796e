"""Rendered fragments kept between builds, by a digest of the value they render
(decision 0062).

A page that shows many entries (a list page's publications, a profiled person's
publications) renders each entry from a frozen view (`PublicationView`, `Citable`) through a
template of its own. `Fragments` gives an entry's text from the texts the previous
build rendered when the view is the same, and renders it otherwise: after an edit only
the entries whose views changed are rendered again, the page around them is joined
as before.

Invariant: `Fragments.text(view, render)` is `render()`'s text for `view`, byte for
byte, when `render` is a pure function of `view` (a template given only it, or
`bibtex_entry`). A kept text is used only under the digest of the view's pickle, and
a pickle is read back to an equal value, so equal digests mean equal views (a view
that pickles to other bytes while equal only misses). The template and everything
else the text depends on (kg's code and templates, the project's settings and
templates) are in the cache key the kept texts are read from
(`kg.publish.fingerprint.settings_digest`). Kept texts come from the signed render
cache only, so are kg's own.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Mapping

PROTOCOL = 5  # fixed: the same view pickles to the same bytes in every build
KEPT_MAX = 1 << 20  # entries kept per use: more is not a list kg renders (a miss beyond)


def view_digest(view: object) -> bytes:
    """The digest a fragment's text is kept under: of the view's pickle."""
    return hashlib.blake2b(pickle.dumps(view, PROTOCOL), digest_size=16).digest()


class Fragments:
    """Texts of rendered views: the kept ones (`kept`, the previous build's `made`)
    and those rendered in this build (`made`, what the next build keeps)."""

    def __init__(self, kept: Mapping[bytes, str] | None = None) -> None:
        self.kept: Mapping[bytes, str] = kept if isinstance(kept, dict) else {}
        self.made: dict[bytes, str] = {}
        self.rendered = 0  # the texts rendered here (not kept): for the tests and figures

    def text(self, view: object, render: Callable[[], str]) -> str:
        """`render()`, or the text kept for an equal view."""
        key = view_digest(view)
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
