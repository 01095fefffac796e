"""The kept mapped graph (decision 0060): a base written by a full map, patched after an edit.

A full map (with `emissions`) writes a `Base`: the graph before `drop_unused` in parts
of at most `PART` triples, its sources, how often each triple emitted more than once
was emitted, and every call setting the source of a subject whose source is set more
than once; and, in `SHARDS` signed entries of the parse cache, each mapping unit's
emission (kg.graph.mapping.Emission). A later build maps only the units whose input may
differ, takes their base emissions away from the base graph and adds their emissions
now (`patch`).

Invariant: when `old` holds the base build's emission of every unit whose emission may
differ from it (and no other unit's emission differs), and `new` each such unit's
emission now, `patch` turns the base graph into the graph a full map of this build's
data makes (a triple stays while any emission still has it: the counts) and returns
the same sources (the first call in map order sets a subject's source unless a people
registry entry forces its own); or None when that source cannot be known (a subject a
single unit outside `old` set gains a setter with another source), and the caller maps
in full. Nothing is read through a link or unsigned: entries are the parse cache's.
"""

from __future__ import annotations

import copyreg
import io
import pickle
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from rdflib import URIRef
from rdflib.term import Node

from kg.cache import SignedCache, digest, unpickled
from kg.graph.mapping import Emissions, Mapped
from kg.graph.triples import Triples
from kg.model import Source

VERSION = "2"  # 2: emissions flat (s, p, o, ...)
SHARDS = 256
PART = 1_000_000  # triples per signed entry of the base graph: far under 512 MiB each

Triple = tuple[Node, Node, Node]
Call = tuple[str, Source | None, bool]  # a unit setting a source: its name, the source, forced
Rank = Callable[[str], tuple[int, int] | None]  # a unit's place in the full map (None: gone)


@dataclass(frozen=True)
class Base:
    """What a full map keeps besides the graph's parts and the units' emissions."""

    token: str
    size: int  # triples
    parts: int  # entries holding the graph
    sources: dict[URIRef, Source]
    counts: dict[Triple, int]  # a triple emitted more than once -> how often
    setters: dict[URIRef, tuple[Call, ...]]  # a subject whose source is set more than once
    forced: frozenset[URIRef]  # the subjects whose source a people registry entry sets


def _uri(text: str) -> URIRef:
    """An IRI of a kept graph, made again without rdflib's validation (it was valid
    when mapped; the entry is signed): a third of the time of reading the graph."""
    return str.__new__(URIRef, text)


def _reduce_uri(term: URIRef) -> tuple:
    return _uri, (str(term),)


_TABLE = copyreg.dispatch_table.copy()
_TABLE[URIRef] = _reduce_uri


def dumps(value: object) -> bytes:
    """`value` pickled, its IRIs as `_uri` calls (a type table: nothing else slows)."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _TABLE
    pickler.dump(value)
    return out.getvalue()


def _loaded(value: object) -> object | None:
    """The value of an entry `dumps` made (None: not such an entry)."""
    return unpickled(value) if isinstance(value, bytes) else None


class Keeper:
    """The kept graph's entries in the parse cache, under one build's `token`."""

    def __init__(self, cache: SignedCache, prefix: str) -> None:
        self.cache = cache
        self.prefix = digest(prefix, "kept-graph", VERSION)

    def key(self, token: str, *what: str) -> str:
        return digest(self.prefix, token, *what)

    def hold(self, base: str, parts: int) -> None:
        """Keep the entries of the base `base` through this run's prune."""
        if base:
            names: list[tuple[str, ...]] = [("base",), *((f"part{n}",) for n in range(parts))]
            names += [("shard", str(n)) for n in range(SHARDS)]
            self.cache.used.update(self.key(base, *n) for n in names)

    def write(self, base: Base, triples: Triples, emissions: Emissions) -> None:
        """The base of a full map (`triples`: before drop_unused)."""
        for n, part in enumerate(triples.parts(PART)):
            self.cache.put(self.key(base.token, f"part{n}"), dumps(part))
        tables: list[Emissions] = [{} for _ in range(SHARDS)]
        for name, emission in emissions.items():
            tables[shard(name)][name] = emission
        for n, table in enumerate(tables):
            self.cache.put(self.key(base.token, "shard", str(n)), table)
        self.cache.put(self.key(base.token, "base"), dumps(base))

    def base(self, token: str) -> Base | None:
        found = _loaded(self.cache.get(self.key(token, "base")))
        return found if isinstance(found, Base) and found.token == token else None

    def graph(self, base: Base) -> Triples | None:
        parts = []
        for n in range(base.parts):
            part = _loaded(self.cache.get(self.key(base.token, f"part{n}")))
            if not isinstance(part, dict):
                return None
            parts.append(part)
        return Triples.from_parts(parts, base.size)

    def emissions(self, token: str, names: Iterable[str]) -> Emissions | None:
        """The base build's emissions of the named units (a unit it did not have: none;
        None: a shard is gone)."""
        wanted: dict[int, list[str]] = {}
        for name in names:
            wanted.setdefault(shard(name), []).append(name)
        found: Emissions = {}
        for n, group in wanted.items():
            table = self.cache.get(self.key(token, "shard", str(n)))
            if not isinstance(table, dict):
                return None
            found.update((name, table.get(name, ((), ()))) for name in group)
        return found


def shard(name: str) -> int:
    return zlib.crc32(name.encode("utf-8", "surrogatepass")) % SHARDS


def base_of(
    token: str, mapped: Mapped, emissions: Emissions, counts: dict, shared: set[URIRef]
) -> Base:
    """The `Base` of a full map (`counts`, `shared`: the mapper's `repeated`, `shared`)."""
    setters: dict[URIRef, list[Call]] = {s: [] for s in shared}
    forced = set()
    for name, (_, calls) in emissions.items():
        for s, source, force in calls:
            if force:
                forced.add(s)
            if s in setters:
                setters[s].append((name, source, force))
    size, parts = len(mapped.triples), -(-len(mapped.triples) // PART) or 1
    frozen = {s: tuple(c) for s, c in setters.items()}
    return Base(token, size, parts, dict(mapped.sources), counts, frozen, frozenset(forced))


def patch(
    triples: Triples, base: Base, old: Emissions, new: Emissions, rank: Rank
) -> tuple[dict[URIRef, Source], set[URIRef]] | None:
    """Turn the base graph `triples` into this build's (in place) and return its
    sources (see the module; the base's own dict, changed), with the subjects whose
    source the units of `new` set among calls of several sources (their order
    decides); None: a source cannot be known."""
    counts = dict(base.counts)
    for _, (emitted, _) in old.items():
        for t in emission_triples(emitted):
            n = counts.get(t)
            if n is None:
                triples.discard(t)
            elif n == 2:
                del counts[t]
            else:
                counts[t] = n - 1
    for _, (emitted, _) in new.items():
        for t in emission_triples(emitted):
            if not triples.add(t):
                counts[t] = counts.get(t, 1) + 1
    return _sources(base, old, new, rank)


def _sources(
    base: Base, old: Emissions, new: Emissions, rank: Rank
) -> tuple[dict[URIRef, Source], set[URIRef]] | None:
    sources, mixed = base.sources, set()  # a subject's own entry is read before it is set
    touched = _calls(old)
    calls_now = _calls(new)
    for s in touched.keys() | calls_now.keys():
        was: Iterable[Call] | None = base.setters.get(s)
        if was is None:  # one call in the base, by a unit of `old` or by another
            was = touched.get(s) or _one(s, base.sources, base.forced)
        kept = [c for c in was if c[0] not in old]
        now = calls_now.get(s, ())
        if len({c[1] for c in (*kept, *now)}) > 1:
            mixed.add(s)
        found = _resolve(kept, now, rank)
        if found is None:
            sources.pop(s, None)
        elif isinstance(found, bool):
            return None
        else:
            sources[s] = found[1]  # type: ignore[assignment]
    return sources, mixed


def _one(s: URIRef, sources: dict, forced: frozenset[URIRef]) -> tuple[Call, ...]:
    """The one base call setting `s`'s source, by a unit not named (place unknown)."""
    return (("", sources[s], s in forced),) if s in sources else ()


def _calls(emissions: Emissions) -> dict[URIRef, list[Call]]:
    found: dict[URIRef, list[Call]] = {}
    for name, (_, calls) in emissions.items():
        for s, source, force in calls:
            found.setdefault(s, []).append((name, source, force))
    return found


def _resolve(kept: list[Call], now: Iterable[Call], rank: Rank) -> Call | bool | None:
    """The call whose source a subject gets (None: no call; False: not known, a call
    of a unit whose place is unknown competes with one of another source)."""
    calls = [*kept, *now]
    if not calls:
        return None
    places = [rank(c[0]) if c[0] else None for c in calls]
    if any(p is None for p in places):
        return _unplaced(calls)
    ordered = [c for _, _, c in sorted(zip(places, range(len(calls)), calls, strict=True))]
    return _simulated(ordered)


def _unplaced(calls: list[Call]) -> Call | bool:
    """The winning call when some calls' places are unknown: known only when every
    source is the same, or a forced one (a registry entry's) is alone in forcing."""
    forced = [c for c in calls if c[2]]
    if len(forced) == 1:
        return forced[0]
    if not forced and all(c[1] == calls[0][1] for c in calls):
        return calls[0]
    return False


def _simulated(calls: list[Call]) -> Call:
    """The full map's rule over calls in map order: a forced call sets, any other sets
    only the first time."""
    found: Call | None = None
    for call in calls:
        if call[2] or found is None:
            found = call
    return found  # type: ignore[return-value]


def emission_triples(flat: tuple[Node, ...]) -> Iterator[Triple]:
    """An emission's triples, from its flat terms (kg.graph.mapping.Emission)."""
    terms = iter(flat)
    return zip(terms, terms, terms, strict=True)
