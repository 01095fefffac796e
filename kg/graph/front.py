"""The front end's state between builds, and the `Change` it reports (decision 0056).

Each build with caches keeps a `State` (one signed entry of the parse cache): the token
of its front-end state, the key of every data file it read, the static files' and the
registries' digest, each profile's listings' publication keys, the profile dates, the
topic slugs, the works counted per profile, the registry entries `drop_unused` dropped,
and, per mapping unit (kg.graph.mapping.unit), the subjects the unit emits.

Invariant: the `Change` of a build names, against the build whose `State` it read (its
`before`), a superset of what `kg/change.py` asks for. Files and profiles come from the
file keys. Publications, persons and subjects are named when the kept resolution read
is the one the `State`'s build kept and the registries and static files are as then
(patched or resolved in full). A publication's value is made of its group's listings,
their mentions' persons and the registries, so the publications named are those a
listing that differs (of a changed profile: by index against the last build's record
when the loader or the parse cache still has it, else all) or a listing whose
mentions' persons differ (`Parts.mentioned`), or a removed profile's listing, was in or
is in, and those a listing of any profile left or joined by key (a key taken or freed
elsewhere); the persons named are those whose values differ. A subject's triples can
differ only through a unit that emits it now or emitted it before and whose input may
differ (a changed, added or removed profile, or one whose mentions' persons, dates,
topic slugs or project papers' publications may differ; a publication or person
named), through a profile's count of works, or through `drop_unused` dropping or
keeping a registry entry. A unit's subjects do not depend on the units mapped before
it, so the subjects kept for the units that did not change are still theirs. A subject
whose source may differ is named too (a source is set by a unit that emits the
subject). Otherwise those three fields are None; without a usable `State` every field
is None and `before` is empty (no consumer's state is made from it), so that a
consumer still learns the `after` token of a cold build.

The mapped graph itself (decision 0060): a full map keeps a base (kg.graph.kept) and
each unit's emission; a later build whose `State` names that base maps only the units
named above, those of every changed profile and of every publication it lists (a
record compares equal without its sources), and those whose works count differs, and
patches the base with them and with the units named since the base (`emitted`); the
graph and sources are then a full map's, else (anything not known) it maps in full.
With the patch, `subjects` is the subjects of the triples and source calls the named
units' emissions gained or lost since the last build (see `_differing_subjects`). The
`State` keeps the subjects `drop_unused` dropped (`gone`); a patched build takes them
and the dropped entries again when the triples its named units gained or lost do not
change which entries are linked to (kg.graph.used.drops_alike, decision 0076), else it
walks the graph.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rdflib import URIRef

from kg import scheme
from kg.cache import SignedCache, digest, package_digest, paused_collector
from kg.change import Change
from kg.graph import kept as graphs
from kg.graph.mapping import (
    Emissions,
    Mapped,
    Units,
    map_graph,
    map_units,
    mapper,
    topic_key,
    unit,
)
from kg.graph.used import drop_known, drop_unused_subjects, drops_alike
from kg.model import PartialDate, Profile
from kg.resolve.identity import Resolution, mention_refs, project_papers
from kg.resolve.kept import Kept, profile_file

VERSION = "5"  # 5: the subjects drop_unused dropped (`gone`)
PROFILES = "data/profiles/"
SHARDS = 256
REBASE = 4096  # units named since the shards were written: then they are written anew


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
    shards: str  # which `Shelf` entries hold each unit's subjects (a full map wrote them)
    delta: Units  # the units named since that full map: their subjects now
    graph: str = ""  # the kept graph's base (kg.graph.kept): the last full map's token
    parts: int = 0  # the entries holding the base's graph
    emitted: Emissions | None = None  # the units named since the base: their emissions now
    gone: frozenset[str] | None = None  # the subjects drop_unused dropped (None: not known)


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


class Shelf:
    """Each mapping unit's subjects as a full map recorded them, in `SHARDS` signed
    entries of the parse cache (a unit's shard: a CRC of its name), so that a rebuild
    reads only the shards of the units it names; the units named since are the
    state's `delta`."""

    def __init__(self, cache: SignedCache, data_dir: Path) -> None:
        self.cache = cache
        self.prefix = state_key(data_dir)
        self.keeper = graphs.Keeper(cache, self.prefix)

    def key(self, shards: str, n: int) -> str:
        return digest(self.prefix, "units", shards, str(n))

    def hold(self, state: State | None) -> None:
        """Keep `state`'s shards through this run's prune (they are read later, if at all)."""
        if state is not None:
            self.cache.used.update(self.key(state.shards, n) for n in range(SHARDS))
            self.keeper.hold(state.graph, state.parts)

    def write(self, shards: str, units: Units) -> None:
        tables: list[Units] = [{} for _ in range(SHARDS)]
        for name, subjects in units.items():  # plain texts: a term pickles as its class too
            tables[_shard(name)][name] = tuple(map(str, subjects))
        for n, table in enumerate(tables):
            self.cache.put(self.key(shards, n), table)

    def read(self, state: State, names: Iterable[str]) -> Units | None:
        """The subjects of the named units in `state`'s build (None: a shard is gone)."""
        found: Units = {}
        wanted: dict[int, list[str]] = {}
        for name in names:
            if name in state.delta:
                found[name] = state.delta[name]
            else:
                wanted.setdefault(_shard(name), []).append(name)
        for n, group in wanted.items():
            table = self.cache.get(self.key(state.shards, n))
            if not isinstance(table, dict):
                return None
            found.update((name, table.get(name, ())) for name in group)
        return found

    def every(self, state: State) -> Units | None:
        """Every unit's subjects in `state`'s build (None: a shard is gone)."""
        found: Units = {}
        for n in range(SHARDS):
            table = self.cache.get(self.key(state.shards, n))
            if not isinstance(table, dict):
                return None
            found.update(table)
        found.update(state.delta)
        return found


def _shard(name: str) -> int:
    return zlib.crc32(name.encode("utf-8", "surrogatepass")) % SHARDS


def token(given: Inputs, dates: dict[str, str] | None = None) -> str:
    """Names the front-end state: equal tokens, equal resolution and mapped graph
    (`dates`: `_dates(given)`, when made already)."""
    dates = _dates(given) if dates is None else dates
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


def previous_profiles(
    cache: SignedCache,
    last: State | None,
    keys: dict[str, str],
    previous: dict[str, tuple[str, Any]],
    prepare: Callable[[Profile], Profile | None],
) -> dict[str, Profile]:
    """The last build's records of the profiles whose files changed (`keys`: this
    build's), where the loader's snapshot (`previous`: file -> key, record) or the parse
    cache still has them, made ready as this build's are (`prepare`: redacted, local
    files placed)."""
    found: dict[str, Profile] = {}
    if last is None:
        return found
    for display, want in last.keys.items():
        slug = _slug(display)
        if slug is None or keys.get(display, want) == want:
            continue  # not a profile, unchanged or gone
        entry = previous.get(display)
        if entry is not None and entry[0] == want:
            record = entry[1]
        else:
            value = cache.get(want)  # the parse cache's (record, problems)
            record = value[0] if isinstance(value, tuple) and len(value) == 2 else None
            record = replace(record, slug=slug) if isinstance(record, Profile) else None
        ready = prepare(record) if isinstance(record, Profile) else None
        if ready is not None:
            found[slug] = ready
    return found


def mapped(
    shelf: Shelf,
    resolution: Resolution,
    given: Inputs,
    last: State | None,
    kept: tuple[Kept | None, Kept],
    before: dict[str, Profile] | None = None,
) -> tuple[Mapped, State]:
    """The mapped graph after `drop_unused`, with its `change` against `last`, and the
    state to keep (`kept`: the kept resolution read, if any, and the one kept now;
    `before`: the last build's records of the changed profiles; see the module)."""
    old, new = kept
    if last is not None and last.base != given.base:
        last = None  # every IRI differs: nothing to compare
    if last is None or old is None or old.inputs != new.inputs or not _made_from(last, old):
        return _full(shelf, resolution, given, last)
    found = _local(shelf, resolution, given, last, (old, new), before or {})
    return found or _full(shelf, resolution, given, last)


def _made_from(last: State, old: Kept) -> bool:
    """Whether `old` (the kept resolution patched) is the one `last`'s build kept."""
    if old.inputs != last.inputs or old.slugs != tuple(last.listed):
        return False
    return all(last.keys.get(profile_file(s)) == k for s, k in old.files.items())


def _full(
    shelf: Shelf, resolution: Resolution, given: Inputs, last: State | None
) -> tuple[Mapped, State]:
    """Mapped in full, each unit's subjects recorded; files and profiles named."""
    m = mapper(resolution, given.base, given.modified, given.created)
    units: Units = {}
    full, base = _in_full(shelf, m, given, units)
    graph, dropped, gone = drop_unused_subjects(full, given.base)
    state = _state(resolution, given, m.topics, m.works_by_person, (dropped, gone), base)
    shelf.write(state.shards, units)
    if last is None:  # no build to compare with: a consumer learns this state's token
        graph.change = Change("", state.token)
        return graph, state
    files = _files(last.keys, given.keys)
    profiles = _profiles(files) if last.assets == given.assets else None
    graph.change = Change(last.token, state.token, files, profiles)
    return graph, state


def _in_full(shelf: Shelf, m: Any, given: Inputs, units: Units) -> tuple[Mapped, graphs.Base]:
    """A full map (before drop_unused) with each unit's emission, kept as the base of
    the kept graph (kg.graph.kept)."""
    emissions: Emissions = {}
    with paused_collector():
        full = map_graph(m.r, given.base, m=m, units=units, emissions=emissions)
        base = graphs.base_of(token(given), full, emissions, m.repeated, m.shared)
        shelf.keeper.write(base, full.triples, emissions)
    return full, base


def _patched(
    shelf: Shelf, m: Any, last: State, names: set[str]
) -> tuple[Mapped, Units, Emissions, set[str], set[graphs.Triple]] | None:
    """The kept graph patched: the base's graph less the base emissions of the units
    named now or since the base, plus their emissions now; with the named units'
    subjects, the emissions to keep, the subjects whose triples or source may differ
    from the last build's and the triples a named unit emitted in one build and not
    the other (None: not known, map in full)."""
    if not last.graph or last.emitted is None or len(names | last.emitted.keys()) > REBASE:
        return None
    keeper = shelf.keeper
    base = keeper.base(last.graph)
    old = keeper.emissions(last.graph, names | last.emitted.keys()) if base else None
    triples = keeper.graph(base) if base is not None and old is not None else None
    if triples is None or old is None or base is None:
        return None
    new: Emissions = {}
    emitted = map_units(m, names, new)
    now = {u: e for u, e in last.emitted.items() if u not in names}
    now.update((u, new.get(u, ((), ()))) for u in names)  # a unit gone emits nothing
    patched = graphs.patch(triples, base, old, now, _rank(m.r))
    if patched is None:
        return None
    sources, mixed = patched
    was = {u: last.emitted[u] if u in last.emitted else old[u] for u in names}
    differ = _differing_triples(was, now)
    return (
        Mapped(triples, sources),
        emitted,
        now,
        _differing_subjects(was, now, mixed, differ),
        differ,
    )


def _differing_triples(was: Emissions, now: Emissions) -> set[graphs.Triple]:
    """The triples a unit of `was` emitted in one build and not the other."""
    found: set[graphs.Triple] = set()
    for name, before in was.items():
        after = now[name]
        found |= set(graphs.emission_triples(before[0])) ^ set(graphs.emission_triples(after[0]))
    return found


def _differing_subjects(
    was: Emissions, now: Emissions, mixed: set[URIRef], differ: set[graphs.Triple]
) -> set[str]:
    """The subjects of the triples a named unit emitted in one build and not the
    other, those whose source calls it makes differ, and those a publication sets a
    source of among calls of several sources (`mixed`: the order of the setters
    decides, and a publication may move in the resolution's order; a profile keeps
    its place among the others, and a person sets no source). Any other subject's
    triples come from the same emissions, and its source from the same calls in the
    same order, or from calls of one source."""
    found: set[object] = {t[0] for t in differ}
    for name, before in was.items():
        after = now[name]
        calls = (_calls_by_subject(before[1]), _calls_by_subject(after[1]))
        movable = name.startswith(unit("publication", ""))
        for s in calls[0].keys() | calls[1].keys():
            if (movable and s in mixed) or calls[0].get(s) != calls[1].get(s):
                found.add(s)
    return {f"<{s}>" for s in found}


def _calls_by_subject(calls: Iterable[tuple[URIRef, Any, bool]]) -> dict[URIRef, list]:
    found: dict[URIRef, list] = {}
    for s, source, forced in calls:
        found.setdefault(s, []).append((source, forced))
    return found


KINDS = ("org", "venue", "person", "known", "profile", "publication")


def _rank(r: Resolution) -> graphs.Rank:
    """A unit's place in this build's full map (kg.graph.mapping._every_unit)."""
    keys: dict[str, Iterable[str]] = {
        "org": r.organizations,
        "venue": r.venues,
        "person": r.persons,
        "known": [k.key for k in r.dataset.people],
        "profile": [p.slug for p in r.dataset.profiles],
        "publication": r.publications,
    }
    made: dict[str, dict[str, int]] = {}

    def rank(name: str) -> tuple[int, int] | None:
        kind, _, key = name.partition("\x1f")
        if kind not in keys:
            return None
        index = made.get(kind)
        if index is None:
            index = made[kind] = {k: i for i, k in enumerate(keys[kind])}
        at = index.get(key)
        return None if at is None else (KINDS.index(kind), at)

    return rank


def _local(
    shelf: Shelf,
    resolution: Resolution,
    given: Inputs,
    last: State,
    kept: tuple[Kept, Kept],
    before: dict[str, Profile],
) -> tuple[Mapped, State] | None:
    """Mapped in full, the units that may differ named; None when the last build's
    units' subjects are gone (then `_full`)."""
    m = mapper(resolution, given.base, given.modified, given.created)
    listed = _listed(resolution)
    listings, profiles = _differing(kept, {p.slug: p for p in resolution.dataset.profiles}, before)
    publications = _publications(last.listed, listed, listings)
    persons = frozenset(_differ(kept[0].persons, resolution.persons))
    dates, topics, writes = _dates(given), m.topics, _writes(resolution, m.works_by_person)
    profiles.update(s for s in listed if last.dates.get(s) != dates.get(s))
    profiles.update(_by_topic(resolution.dataset.profiles, last.topics, topics))
    profiles.update(_by_papers(resolution, publications))
    names = {unit("profile", s) for s in profiles}
    names.update(unit("publication", k) for k in publications)
    names.update(unit("person", k) for k in persons)
    names.update(unit("profile", s) for s in writes if writes[s] != last.writes.get(s, 0))
    names.update(_sourced(last.listed, listed, kept))  # sources moved with their lines
    had = shelf.read(last, names)
    if had is None:
        return None
    patched = _patched(shelf, m, last, names)
    differ: set[graphs.Triple] | None = None
    if patched is not None:
        full, emitted, now, exact, differ = patched
        kept_graph: tuple[str, int, Emissions] = (last.graph, last.parts, now)
    else:  # a fresh mapper: the patch's may have mapped the named units
        m = mapper(resolution, given.base, given.modified, given.created)
        full, base = _in_full(shelf, m, given, {})
        emitted = map_units(m, names)  # before drop_unused: the same triples again, in `full`
        exact, kept_graph = None, (base.token, base.parts, {})
    graph, dropped, gone = _dropped(full, given.base, last, differ)
    subjects = _subjects(shelf, last, given.base, (had, emitted), writes, dropped, exact)
    delta = dict(last.delta)
    delta.update((name, tuple(map(str, emitted.get(name, ())))) for name in names)
    state = State(
        token(given, dates), given.base, given.inputs, given.assets, given.keys,
        listed, dates, topics, writes, dropped, last.shards, delta, *kept_graph,
        frozenset(map(str, gone)),
    )  # fmt: skip
    state = _rebased(shelf, state, last) if len(delta) > REBASE else state
    files = _files(last.keys, given.keys)
    found = (frozenset(publications), persons, subjects)
    graph.change = Change(last.token, state.token, files, _profiles(files), *found)
    return graph, state


def _dropped(
    full: Mapped, base: str, last: State, differ: set[graphs.Triple] | None
) -> tuple[Mapped, frozenset[str], frozenset[URIRef]]:
    """`full` after drop_unused, with the entries and subjects dropped: the last
    build's when the triples the patch changed do not change which entries are linked
    to (kg.graph.used.drops_alike; `differ`: those triples, None when not known), else
    found by a walk of the graph."""
    if differ is None or last.gone is None:
        return drop_unused_subjects(full, base)
    if not drops_alike(differ, full.triples, base, last.dropped):
        return drop_unused_subjects(full, base)
    gone = frozenset(map(URIRef, last.gone))
    return drop_known(full, gone), last.dropped, gone


def _sourced(
    before: dict[str, tuple[str | None, ...]],
    after: dict[str, tuple[str | None, ...]],
    kept: tuple[Kept, Kept],
) -> set[str]:
    """The units of the changed profiles and of every publication they list, before
    or now: a record compares equal without its sources, so a listing that did not
    change may still have moved in its file (a line added above it), and with it the
    sources its publication's emission sets (decision 0060)."""
    old, new = kept
    slugs = old.files.keys() | new.files.keys()
    changed = {s for s in slugs if old.files.get(s) != new.files.get(s)}
    found = {unit("profile", s) for s in changed}
    for s in changed:
        keys = (*before.get(s, ()), *after.get(s, ()))
        found.update(unit("publication", k) for k in keys if k is not None)
    return found


def _differing(
    kept: tuple[Kept, Kept], now: dict[str, Profile], before: dict[str, Profile]
) -> tuple[dict[str, set[int] | None], set[str]]:
    """Per profile, the listings that may differ (None: all), and the profiles whose
    own units may: changed (more than in their publications), gone, or with a mention
    outside their publications whose person differs."""
    old, new = kept
    changed = {s for s in new.slugs if old.files.get(s) != new.files.get(s)}
    gone = set(old.slugs) - now.keys()
    mentions, was = new.parts.mentioned, old.parts.mentioned
    listings = {s: _listings(before.get(s), now[s]) for s in changed}
    profiles = {s for s in changed if not _same_but_works(before.get(s), now[s])} | gone
    for s in (s for s in new.slugs if s in was and was[s] != mentions.get(s)):
        found, elsewhere = _moved(now[s], was[s], mentions[s])
        profiles.update([s] if elsewhere else [])
        known = listings.get(s, set())
        listings[s] = None if found is None or known is None else known | found
    listings.update((s, None) for s in gone)
    return listings, profiles


def _subjects(
    shelf: Shelf,
    last: State,
    base: str,
    units: tuple[Units, Units],
    writes: dict[str, int],
    dropped: frozenset[str],
    exact: set[str] | None = None,
) -> frozenset[str] | None:
    """The named units' subjects before and now (`units`; `exact`: those of them whose
    triples or source may differ, when the emissions tell), the works counters whose
    count differs and the subjects under registry entries that flipped (None: the last
    build's units cannot all be read)."""
    had, emitted = units
    found = exact if exact is not None else set()
    if exact is None:
        found.update(f"<{s}>" for n in had for s in (*had[n], *emitted.get(n, ())))
    found.update(
        f"<{scheme.mint(base, 'person', s, 'writes')}>"
        for s in writes
        if writes[s] != last.writes.get(s, 0)
    )
    if last.dropped != dropped:  # rare: an entry now used or unused
        every = shelf.every(last)
        if every is None:
            return None
        found.update(_entries(last.dropped ^ dropped, base, every, emitted))
    return frozenset(found)


def _rebased(shelf: Shelf, state: State, last: State) -> State:
    """`state` with its units written as shards anew (when the last ones can be read)."""
    every = shelf.every(last)
    if every is None:
        return state
    every.update(state.delta)
    shelf.write(state.token, every)
    return replace(state, shards=state.token, delta={})


def _state(
    resolution: Resolution,
    given: Inputs,
    topics: dict[str, tuple[str, str]],
    works: dict[str, int],
    drop: tuple[frozenset[str], frozenset[URIRef]],
    base: graphs.Base,
) -> State:
    dates = _dates(given)
    now = token(given, dates)
    dropped, gone = drop
    return State(
        now, given.base, given.inputs, given.assets, given.keys, _listed(resolution), dates,
        topics, _writes(resolution, works), dropped, now, {}, base.token, base.parts, {},
        frozenset(map(str, gone)),
    )  # fmt: skip


def _differ(before: dict, after: dict) -> set:
    """The keys whose values differ, added or removed."""
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def _slug(display: str) -> str | None:
    """The profile a data file is (`data/profiles/<slug>.yaml`), or None."""
    if not (display.startswith(PROFILES) and display.endswith(".yaml")):
        return None
    slug = display[len(PROFILES) : -len(".yaml")]
    return None if "/" in slug else slug


def _files(before: dict[str, str], after: dict[str, str]) -> frozenset[str]:
    return frozenset(f for f in before.keys() | after.keys() if before.get(f) != after.get(f))


def _profiles(files: Iterable[str]) -> frozenset[str]:
    """The profiles (slugs) of the changed files under data/profiles/."""
    found = (_slug(f) for f in files)
    return frozenset(s for s in found if s is not None)


def _listed(resolution: Resolution) -> dict[str, tuple[str | None, ...]]:
    """Each profile's listings' publication keys, in order (the entities hold the
    dataset's listing objects: found by identity, without hashing their sources)."""
    of = {id(pub): key for key, e in resolution.publications.items() for _, pub in e.listings}
    return {
        p.slug: tuple(of.get(id(pub)) for pub in p.publications)
        for p in resolution.dataset.profiles
    }


def _writes(resolution: Resolution, works: dict[str, int]) -> dict[str, int]:
    return {p.slug: works.get(p.slug, 0) for p in resolution.dataset.profiles}


def _listings(before: Profile | None, after: Profile) -> set[int] | None:
    """The indexes of a changed profile's listings whose records differ (None: every
    listing, the last build's record being unknown)."""
    if before is None:
        return None
    old, new = before.publications, after.publications
    found = {i for i in range(min(len(old), len(new))) if old[i] != new[i]}
    return found | set(range(min(len(old), len(new)), max(len(old), len(new))))


def _moved(
    profile: Profile, before: tuple[str | None, ...], after: tuple[str | None, ...]
) -> tuple[set[int] | None, bool]:
    """The indexes of the listings with a mention whose person differs (None: the
    mentions are not the same in number), and whether a mention outside the
    publications differs (`before`, `after`: each mention's person, `mention_refs`
    order)."""
    if len(before) != len(after):
        return None, True
    at = {id(r): i for i, pub in enumerate(profile.publications) for r in pub.authors}
    refs = mention_refs(profile)
    found, elsewhere = set(), False
    for k, ref in enumerate(refs):
        if before[k] != after[k]:
            i = at.get(id(ref))
            if i is None:
                elsewhere = True
            else:
                found.add(i)
    return found, elsewhere


def _same_but_works(before: Profile | None, after: Profile) -> bool:
    """Whether the two records differ at most in their publications (which the
    profile's own mapping unit does not map)."""
    return before is not None and replace(before, publications=[]) == replace(
        after, publications=[]
    )


def _publications(
    before: dict[str, tuple[str | None, ...]],
    after: dict[str, tuple[str | None, ...]],
    changed: dict[str, set[int] | None],
) -> set[str]:
    """The publications a changed listing of a changed profile is in (before or now;
    every listing when the record before is unknown), and those a listing of any
    profile left or joined (a key taken or freed elsewhere)."""
    found: set[str | None] = set()
    for slug, indexes in changed.items():
        old, new = before.get(slug, ()), after.get(slug, ())
        if indexes is None:
            found.update(old)
            found.update(new)
            continue
        found.update(old[i] for i in indexes if i < len(old))
        found.update(new[i] for i in indexes if i < len(new))
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
    """The subjects (N-Triples texts) minted under registry entries dropped in one build
    and kept in the other."""
    if not flipped:
        return set()
    heads = tuple(f"{base}{e}" for e in flipped)
    found = set()
    for table in tables:
        for subjects in table.values():
            for s in subjects:
                if s.startswith(heads) and _under(s, base, flipped):
                    found.add(f"<{s}>")
    return found


def _under(subject: str, base: str, entries: frozenset[str]) -> bool:
    section, _, rest = subject[len(base) :].partition("/")
    return f"{section}/{rest.split('/', 1)[0]}" in entries
