"""What a build's front end knows changed since the build before it (decision 0056).

A `Change` walks forward with the data: load and resolve fill in which data files,
profiles, publications and persons may differ, map which subjects' triples may; the
stages after it (the subject digest table, validation, the render state) may then do
their work only for what it names and keep the rest from their own kept state.

Invariant: `Change(before=A, after=B)` names, as a superset, everything whose value in
the build whose front-end state is `B` may differ from its value in the build whose
state is `A`: a data file's bytes (`files`), a profile record (`profiles`, by slug), a
resolved publication (`publications`, by key), a resolved person (`persons`, by key),
a subject's triples in the mapped graph after `drop_unused` (`subjects`, by the
subject's N-Triples text, `<iri>` or `_:label`). Anything added or removed is named.
Equal tokens mean equal front-end outputs (the same `Resolution` values and the same
mapped triples and sources). A field that is `None` is not known: its consumer does
the whole work. A build with caches but nothing to compare with (a cold build) has
`before` empty and every field None: no consumer's state is made from "", and the
consumer keeps `after`. Without caches, `Mapped.change` is None. A consumer uses a
`Change` only when its own kept state was made from the front-end state `before` (it
keeps the `after` token it last saw next to its state), and must give exactly the
bytes it gives without one (the incremental tests compare with a build without
caches). `subjects` also names each subject whose source may differ (decision 0056).

The producer of each field proves it against a full run in its tests; no consumer may
widen what it trusts beyond this docstring.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Change:
    """What may differ between two front-end states `before` and `after` (tokens)."""

    before: str
    after: str
    files: frozenset[str] | None = None  # data files, as the loader keys them
    profiles: frozenset[str] | None = None  # profile slugs
    publications: frozenset[str] | None = None  # Resolution.publications keys
    persons: frozenset[str] | None = None  # Resolution.persons keys
    subjects: frozenset[str] | None = None  # subjects' N-Triples texts
