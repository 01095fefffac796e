"""Resolution after an edit: the last build's decisions about persons, kept, and this
build's publications merged again (decision 0052, completing 0048's Part 2).

What is kept (`Kept`, one signed entry of the parse cache): a digest of every input but
the profiles (the registries' file keys, the static files), the profiles' slugs in
order, each profile file's key (the parse cache's: its bytes), each profile's
*signature* (its owner's names and every person mention: name, `person:` key,
honorific, in order), the persons, the decisions, each profile's mentions' persons and
the near-miss notes.

Invariant: `patched` gives the `Resolution` that `resolve` gives for the same dataset
(the same values, and the same objects where a full run takes them from the dataset:
person keys are the profiles' slugs, the registry's keys, a mention's own `person:`
text), or None when the change is not local. A change is local when the inputs but
the profiles and the slugs are the same and every changed profile has the same
signature: then the person index, every minted key, every person's printed names,
documents and honorifics, the decisions and the near misses are the same (they are
made from names, mentions and registries only), and so is each mention's person. What
follows from the publications is made again over the whole dataset as `resolve` makes
it (grouping, keys, merging, which is most of the rest), except the identity basis,
made again only for the persons named in the changed profiles' author lists (the only
persons whose shared-publication joins can differ), and the check that a group's
listings name the same authors, made again only for the groups a changed profile lists
(decision 0076: any other group is part of a group the last build checked, its
listings' persons the same). A problem in the patched run is
not reported from here: the caller resolves in full, which reports every problem.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from kg.cache import SignedCache, digest, package_digest
from kg.errors import Problem
from kg.model import Dataset, Profile
from kg.resolve.identity import (
    Parts,
    PersonEntity,
    Resolution,
    _check_project_papers,
    _check_references,
    _check_units,
    _distinct_decisions,
    _index,
    _org_names,
    _person_notes,
    _Refs,
    _resolve_publications,
    _title_index,
    _venue_names,
    assemble,
    identity_basis,
    mention_refs,
)

VERSION = "1"
REGISTRY_FILES = ("organizations", "venues", "people")


@dataclass(frozen=True)
class Kept:
    """What one build keeps of its resolution for the next (see the module)."""

    inputs: str
    slugs: tuple[str, ...]
    files: dict[str, str]
    signatures: dict[str, bytes]
    persons: dict[str, PersonEntity]
    parts: Parts


def state_key(data_dir: Path) -> str:
    return digest("resolve-kept", VERSION, package_digest(), str(data_dir.resolve()))


def read(cache: SignedCache, data_dir: Path) -> Kept | None:
    """The last build's `Kept`, or None (none, not signed by us, another kg)."""
    value = cache.get(state_key(data_dir))
    return value if isinstance(value, Kept) else None


def write(cache: SignedCache, data_dir: Path, kept: Kept) -> None:
    cache.put(state_key(data_dir), kept)


def inputs_digest(keys: dict[str, str], assets: list[tuple[str, str]]) -> str:
    """Everything but the profiles a resolution depends on: the registries' file keys
    (their bytes) and the static files (`pipeline.ready` rewrites profiles with them)."""
    registries = [keys.get(f"data/{name}.yaml", "-") for name in REGISTRY_FILES]
    return digest("inputs", *registries, *(f"{k}\t{d}" for k, d in assets))


def profile_file(slug: str) -> str:
    return f"data/profiles/{slug}.yaml"


def signature(profile: Profile) -> bytes:
    """A digest of what a profile says that persons are made of: the owner's names and
    each mention's name, `person:` key and honorific, in order."""
    parts = [profile.name, *profile.alternate_names]
    parts += [f"{n.name}\x1e{n.lang}" for n in profile.native_names]
    parts.append("\x1d")
    for ref in mention_refs(profile):
        parts += (ref.name, ref.person or "\x1c", ref.honorific or "\x1c")
    text = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(text, digest_size=16).digest()


def keep(resolution: Resolution, parts: Parts, inputs: str, files: dict[str, str]) -> Kept:
    """What this build keeps for the next (`files`: each data file's key)."""
    profiles = resolution.dataset.profiles
    return Kept(
        inputs,
        tuple(p.slug for p in profiles),
        {p.slug: files.get(profile_file(p.slug), "") for p in profiles},
        {p.slug: signature(p) for p in profiles},
        resolution.persons,
        parts,
    )


class Patched(NamedTuple):
    """A patched run: the resolution, what to keep next, the profiles whose files
    changed (slugs) and the persons whose identity basis was made again (keys)."""

    resolution: Resolution
    kept: Kept
    changed: tuple[str, ...]
    rebased: frozenset[str]


def patched(kept: Kept, data: Dataset, inputs: str, files: dict[str, str]) -> Patched | None:
    """This dataset's resolution from `kept`, and what to keep next; None when the
    change is not local or the patched run finds a problem (see the module)."""
    changed = _changed(kept, data, inputs, files)
    if changed is None:
        return None
    problems: list[Problem] = []
    org_index = _index(data.organizations, _org_names, "organization", problems)
    venue_index = _index(data.venues, _venue_names, "venue", problems)
    refs = _Refs(org_index, venue_index, problems)
    # the other profiles' references were checked before, against the same registries
    only = Dataset(profiles=tuple(changed), organizations=(), venues=(), people=())
    _check_references(only, refs)
    _check_units(replace(only, organizations=data.organizations), org_index, problems)
    person_of = _person_of(data, kept.parts.mentioned)
    slugs = frozenset(p.slug for p in changed)
    publications, publication_of, pub_notes = _resolve_publications(
        data, person_of, refs, venue_index, problems, slugs
    )
    named = {person_of.get(r.source) for p in changed for w in p.publications for r in w.authors}
    only_named = {key for key in named if key is not None}
    persons = identity_basis(kept.persons, kept.parts.decided, publications, only_named)
    decisions = _distinct_decisions(data, persons, problems)
    evidence = {k.key: k.note for k in data.people if k.note}
    notes = _person_notes(persons, decisions, evidence, kept.parts.near)
    titles = _title_index(publications)
    _check_project_papers(only, titles, problems)
    if problems:
        return None
    works, indexes = (publications, publication_of), (org_index, venue_index, titles)
    resolution = assemble(data, persons, person_of, works, notes + pub_notes, indexes)
    order, rebased = tuple(p.slug for p in changed), frozenset(only_named)
    if not changed:
        return Patched(resolution, kept, order, rebased)  # nothing to write again
    new_files = dict(kept.files)
    new_files.update((p.slug, files[profile_file(p.slug)]) for p in changed)
    keeping = Kept(inputs, kept.slugs, new_files, kept.signatures, persons, kept.parts)
    return Patched(resolution, keeping, order, rebased)


def _changed(kept: Kept, data: Dataset, inputs: str, files: dict[str, str]) -> list[Profile] | None:
    """The profiles whose files changed, when the change is local (else None)."""
    if kept.inputs != inputs or kept.slugs != tuple(p.slug for p in data.profiles):
        return None
    changed = []
    for p in data.profiles:
        key = files.get(profile_file(p.slug))
        if key is None:
            return None  # not recorded by the loader: nothing says what it was made of
        if key != kept.files.get(p.slug):
            if signature(p) != kept.signatures.get(p.slug):
                return None
            changed.append(p)
    return changed


def _person_of(data: Dataset, mentioned: dict[str, tuple[str | None, ...]]) -> dict:
    """`person_of` as `resolve` makes it, from each mention's kept person: the key is
    the object a full run takes (the profile's slug, the registry's key, the mention's
    own `person:` text; a minted key, one object per key)."""
    canonical: dict[str, str] = {p.slug: p.slug for p in data.profiles}
    canonical.update((k.key, k.key) for k in data.people)
    person_of: dict = {}
    for profile in data.profiles:
        assert profile.source is not None
        person_of[profile.source] = profile.slug
        refs = mention_refs(profile)
        for ref, key in zip(refs, mentioned[profile.slug], strict=True):
            if key is not None and ref.source is not None:
                if ref.person is not None:
                    person_of[ref.source] = ref.person
                else:
                    person_of[ref.source] = canonical.setdefault(key, key)
    return person_of
