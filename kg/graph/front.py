"""The front end's state between builds, and the `Change` it reports (decision 0056).

Each build with caches keeps a `State` (one signed entry of the parse cache): the token
of its front-end state, the key of every data file it read, the static files' and the
registries' digest, each profile's listings' publication keys, the profile dates, the
topic slugs, the works counted per profile, the registry entries `drop_unused` dropped,
and, per mapping unit (kg.graph.mapping.unit), the subjects the unit emits.

Invariant: the `Change` of a build names, against the build whose `State` it read (its
`before`), a superset of what `kg/change.py` asks for. Files and profiles come from the
file keys. Publications, persons and subjects are named only after a patched resolution
(kg.resolve.kept) made from the same build's kept resolution: then the registries,
static files, slugs and every mention's person are as before, and a subject's triples
can differ only through a unit that emits it now or emitted it before and whose input
may differ (a changed profile; a profile whose dates, topic slugs or project papers'
publications may differ; a publication named; a person whose basis was made again),
through a profile's count of works, or through `drop_unused` dropping or keeping a
registry entry. A unit's subjects do not depend on the units mapped before it, so the
subjects kept for the units that did not change are still theirs. A subject whose
source may differ is named too (a source is set by a unit that emits the subject).
Otherwise those three fields are None; without a usable `State` the change is None.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kg import scheme
from kg.cache import SignedCache, digest, package_digest
from kg.change import Change
from kg.graph.mapping import Mapped, Units, map_graph, map_units, mapper, topic_key, unit
from kg.graph.used import drop_unused_entries
from kg.model import PartialDate, Profile
from kg.resolve.identity import Resolution, project_papers
from kg.resolve.kept import Kept, Patched, profile_file

VERSION = "1"
PROFILES = "data/profiles/"


@dataclass(frozen=True)
class State:
    """What one build's front end keeps for the next (see the module)."""

    token: str
    base: str
    inputs: str  # kg.resolve.kept.inputs_digest: the registries and static files
    assets: str  # the static files alone
    keys: dict[str, str]  # each data file read -> the key of its bytes
    listed: dict[str, tuple[str | None, ...]]  # slug -> its listings' publication keys
    dates: dict[str, str]  # slug -> its profile dates
    topics: dict[str, tuple[str, str]]  # topic key -> slug and preferred label
    writes: dict[str, int]  # slug -> the works counted for the profile
    dropped: frozenset[str]  # the registry entries drop_unused dropped
    units: Units


@dataclass(frozen=True)
class Inputs:
    """This build's inputs of the mapped graph, besides the resolution."""

    base: str
    inputs: str
    assets: str
    keys: dict[str, str]
    modified: dict[str, PartialDate]
    created: dict[str, PartialDate]


def state_key(data_dir: Path) -> str:
    return digest("front-state", VERSION, package_digest(), str(data_dir.resolve()))


def read(cache: SignedCache, data_dir: Path) -> State | None:
    value = cache.get(state_key(data_dir))
    return value if isinstance(value, State) else None


def write(cache: SignedCache, data_dir: Path, state: State) -> None:
    cache.put(state_key(data_dir), state)


def token(given: Inputs) -> str:
    """Names the front-end state: equal tokens, equal resolution and mapped graph."""
    dates = _dates(given)
    return digest(
        "front",
        VERSION,
        package_digest(),
        given.base,
        given.inputs,
        *(f"{k}\t{v}" for k, v in sorted(given.keys.items())),
        *(f"{k}\t{v}" for k, v in sorted(dates.items())),
    )


def _dates(given: Inputs) -> dict[str, str]:
    slugs = given.modified.keys() | given.created.keys()
    return {s: f"{given.modified.get(s)}\t{given.created.get(s)}" for s in slugs}


def mapped(
    resolution: Resolution,
    given: Inputs,
    last: State | None,
    patch: Patched | None,
    old: Kept | None,
) -> tuple[Mapped, State]:
    """The mapped graph after `drop_unused`, with its `change` against `last`, and the
    state to keep (`patch`: the patched resolution, made from `old`; see the module)."""
    if last is not None and last.base != given.base:
        last = None  # every IRI differs: nothing to compare
    if patch is None or last is None or old is None or not _made_from(last, old):
        return _full(resolution, given, last)
    return _local(resolution, given, last, patch, old)


def _made_from(last: State, old: Kept) -> bool:
    """Whether `old` (the kept resolution patched) is the one `last`'s build kept."""
    if old.inputs != last.inputs or old.slugs != tuple(last.listed):
        return False
    return all(last.keys.get(profile_file(s)) == k for s, k in old.files.items())


def _full(resolution: Resolution, given: Inputs, last: State | None) -> tuple[Mapped, State]:
    """Mapped in full, each unit's subjects recorded; files and profiles named."""
    m = mapper(resolution, given.base, given.modified, given.created)
    units: Units = {}
    full = map_graph(resolution, given.base, m=m, units=units)
    graph, dropped = drop_unused_entries(full, given.base)
    state = _state(resolution, given, m.topics, m.works_by_person, dropped, units)
    if last is not None:
        files = _files(last.keys, given.keys)
        profiles = _profiles(files) if last.assets == given.assets else None
        graph.change = Change(last.token, state.token, files, profiles)
    return graph, state


def _local(
    resolution: Resolution, given: Inputs, last: State, patch: Patched, old: Kept
) -> tuple[Mapped, State]:
    m = mapper(resolution, given.base, given.modified, given.created)
    listed = _listed(resolution)
    publications = _publications(last.listed, listed, patch.changed)
    new = resolution.persons
    persons = frozenset(k for k in patch.rebased if old.persons.get(k) != new.get(k))
    dates, topics, writes = _dates(given), m.topics, _writes(resolution, m.works_by_person)
    profiles = set(patch.changed)
    profiles.update(s for s in listed if last.dates.get(s) != dates.get(s))
    profiles.update(_by_topic(resolution.dataset.profiles, last.topics, topics))
    profiles.update(_by_papers(resolution, publications))
    names = {unit("profile", s) for s in profiles}
    names.update(unit("publication", k) for k in publications)
    names.update(unit("person", k) for k in persons)
    full = map_graph(resolution, given.base, m=m)
    now = map_units(m, names)  # before drop_unused: the same triples again, into `full`
    graph, dropped = drop_unused_entries(full, given.base)
    subjects = {s for n in names for s in (*last.units.get(n, ()), *now.get(n, ()))}
    subjects.update(
        f"<{scheme.mint(given.base, 'person', s, 'writes')}>"
        for s in writes
        if writes[s] != last.writes.get(s, 0)
    )
    subjects.update(_entries(last.dropped ^ dropped, given.base, last.units, now))
    units = dict(last.units)
    for name in names:
        if name in now:
            units[name] = now[name]
        else:
            units.pop(name, None)
    state = State(
        token(given), given.base, given.inputs, given.assets, given.keys,
        listed, dates, topics, writes, dropped, units,
    )  # fmt: skip
    files = _files(last.keys, given.keys)
    graph.change = Change(
        last.token,
        state.token,
        files,
        _profiles(files),
        frozenset(publications),
        persons,
        frozenset(subjects),
    )
    return graph, state


def _state(
    resolution: Resolution,
    given: Inputs,
    topics: dict[str, tuple[str, str]],
    works: dict[str, int],
    dropped: frozenset[str],
    units: Units,
) -> State:
    return State(
        token(given), given.base, given.inputs, given.assets, given.keys,
        _listed(resolution), _dates(given), topics, _writes(resolution, works), dropped, units,
    )  # fmt: skip


def _files(before: dict[str, str], after: dict[str, str]) -> frozenset[str]:
    return frozenset(f for f in before.keys() | after.keys() if before.get(f) != after.get(f))


def _profiles(files: Iterable[str]) -> frozenset[str]:
    """The profiles (slugs) of the changed files under data/profiles/."""
    found = (f[len(PROFILES) : -len(".yaml")] for f in files if f.startswith(PROFILES))
    return frozenset(s for s in found if "/" not in s)


def _listed(resolution: Resolution) -> dict[str, tuple[str | None, ...]]:
    of = resolution.publication_of
    return {
        p.slug: tuple(of.get(pub.source) for pub in p.publications)  # type: ignore[arg-type]
        for p in resolution.dataset.profiles
    }


def _writes(resolution: Resolution, works: dict[str, int]) -> dict[str, int]:
    return {p.slug: works.get(p.slug, 0) for p in resolution.dataset.profiles}


def _publications(
    before: dict[str, tuple[str | None, ...]],
    after: dict[str, tuple[str | None, ...]],
    changed: Iterable[str],
) -> set[str]:
    """The publications a changed profile lists (before or now), and those a listing of
    another profile left or joined (a key taken or freed elsewhere)."""
    found: set[str | None] = set()
    for slug in changed:
        found.update(before.get(slug, ()))
        found.update(after.get(slug, ()))
    for slug, keys in after.items():
        old = before.get(slug, ())
        if keys != old:
            found.update(k for i, k in enumerate(keys) if i >= len(old) or old[i] != k)
            found.update(k for i, k in enumerate(old) if i >= len(keys) or keys[i] != k)
    found.discard(None)
    return found  # type: ignore[return-value]


def _labels(p: Profile) -> Iterable[str]:
    yield from p.interests
    for group in p.skills:
        yield from group.items


def _by_topic(
    profiles: Iterable[Profile],
    before: dict[str, tuple[str, str]],
    after: dict[str, tuple[str, str]],
) -> set[str]:
    """The profiles naming a topic whose slug or preferred label may differ."""
    differ = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    if not differ:
        return set()
    return {p.slug for p in profiles if any(topic_key(x) in differ for x in _labels(p))}


def _by_papers(resolution: Resolution, publications: set[str]) -> set[str]:
    """The profiles whose projects name a paper among `publications`."""
    found = set()
    for p in resolution.dataset.profiles:
        for proj in p.projects:
            titles = project_papers(proj)
            if any(resolution.publication_titled(t) in publications for t in titles):
                found.add(p.slug)
    return found


def _entries(flipped: frozenset[str], base: str, *tables: Units) -> set[str]:
    """The subjects minted under registry entries dropped in one build, kept in the other."""
    if not flipped:
        return set()
    heads = tuple(f"<{base}{e}" for e in flipped)
    found = set()
    for table in tables:
        for subjects in table.values():
            for s in subjects:
                if s.startswith(heads) and _under(s, base, flipped):
                    found.add(s)
    return found


def _under(subject: str, base: str, entries: frozenset[str]) -> bool:
    section, _, rest = subject[len(base) + 1 : -1].partition("/")
    return f"{section}/{rest.split('/', 1)[0]}" in entries
