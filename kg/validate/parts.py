"""Stage 4 at scale: SHACL validation in parts, in parallel, cached by content hash.

pySHACL's cost grows with the number of focus nodes, and it runs on one core. Every
node the mapper mints lives under the IRI of what it belongs to (a person's roles under
`person/<key>/`, authorships under `publication/<key>/`), so the graph splits into
*groups*: one per person, per publication, ..., and one for the whole organization
registry and one for the venue registry (so `parentOrganization+` cycles stay inside
one part). Groups are packed into *parts*; each part is validated on its *closure*:

- every triple of the nodes it owns, every triple pointing at them,
- the `rdf:type` of every node those triples reach, and the ontology.

That is all our shapes read about a focus node (values, their classes, authorship
ranks under the same publication, incoming `instructor` / `mainEntity` / `contributor`
edges for targets). Results are kept only for the part's own nodes, so every focus node
is reported once. Tests compare this with pySHACL on the whole graph for each of the
invalid inputs in tests/test_validate.py and on a synthetic corpus.

A part's results are stored under the SHA-256 of its closure (and of the shapes and
ontology), so a rebuild validates only the parts whose closure changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rdflib import Graph, Literal, URIRef
from rdflib.term import Node

from kg.cache import SignedCache
from kg.graph.namespaces import RDF, SH
from kg.graph.ntriples import ntriples_lines
from kg.graph.triples import Triple, Triples
from kg.workers import Pool, as_pool

REGISTRY_GROUPS = ("org", "venue")
NODES_PER_PART = 500  # on average; between a quarter and four times that
CUT_EVERY = 48  # a part ends at one group in this many (groups average ~10 nodes)
CACHE_VERSION = "2"

Raw = tuple[str, ...]  # focus, severity, path, value, message, shape (N-Triples terms)


@dataclass(frozen=True)
class Part:
    owned: tuple[Node, ...]
    closure: tuple[Triple, ...]
    key: str


def group_of(node: Node, base: str) -> str:
    """The group a subject belongs to: `person/<key>`, `publication/<key>`, `org`, ..."""
    text = str(node)
    if not text.startswith(base):
        return "~" + text
    segments = text[len(base) :].split("/")
    if segments[0] in REGISTRY_GROUPS or len(segments) == 1:
        return segments[0]
    return f"{segments[0]}/{segments[1]}"


def split(triples: Triples, base: str, salt: str) -> list[Part]:
    """The parts of the graph, in a stable order, each with its closure and cache key."""
    groups: dict[str, list[Node]] = {}
    for s in triples.subjects():
        groups.setdefault(group_of(s, base), []).append(s)
    parts, current = [], []
    for name in sorted(groups):
        current.extend(groups[name])
        if _ends_part(name, len(current)):
            parts.append(current)
            current = []
    if current:
        parts.append(current)
    return [_part(triples, owned, salt) for owned in parts]


def _ends_part(group: str, nodes: int) -> bool:
    """Whether a part ends after `group`: at groups picked by their name's hash, so the
    boundaries stay where they are when groups are added or removed elsewhere (a part
    cut every N nodes would shift every later part, and miss the cache, after one edit)."""
    if nodes >= NODES_PER_PART * 4:
        return True
    name_hash = int.from_bytes(hashlib.blake2b(group.encode(), digest_size=4).digest(), "big")
    return nodes >= NODES_PER_PART // 4 and name_hash % CUT_EVERY == 0


def _part(triples: Triples, owned: list[Node], salt: str) -> Part:
    closure: set[Triple] = set()
    reached: set[Node] = set()
    for s in owned:
        for p, o in triples.predicate_objects(s):
            closure.add((s, p, o))
            reached.add(o)
        for s2, p in triples.subject_predicates(s):
            closure.add((s2, p, s))
            reached.add(s2)
    rdf_type = RDF.type
    for node in reached:
        for t in triples.objects(node, rdf_type):
            closure.add((node, rdf_type, t))
    digest = hashlib.sha256(salt.encode())
    for line in ntriples_lines(closure):
        digest.update(line.encode())
    for iri in sorted(str(n) for n in owned):
        digest.update(iri.encode())
        digest.update(b"\x00")
    return Part(tuple(owned), tuple(closure), digest.hexdigest())


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class Shapes:
    """What every part is validated with: the state shared by the workers."""

    shapes: Graph
    ontology: Graph


def run_parts(
    parts: list[Part],
    load_shapes: Callable[[], tuple[Graph, Graph]],
    jobs: int | Pool,
    cache_dir: Path | None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Raw]:
    """Raw results of every part: from the cache where the closure is unchanged.

    `load_shapes` gives (shapes, ontology); it is called only when some part is not
    cached, so a build with every part cached neither parses the shapes nor imports
    pySHACL. `jobs`: a number of forked processes, or a pool (kg/workers.py)."""
    cached = _read_cache(cache_dir, parts)
    todo = [p for p in parts if p.key not in cached]
    if not todo:
        _write_cache(cache_dir, parts, cached, [])
        return [r for p in parts for r in cached[p.key]]
    results = as_pool(jobs).map(validate_part, Shapes(*load_shapes()), todo)
    for done, (part, raw) in enumerate(zip(todo, results, strict=True), start=1):
        cached[part.key] = raw
        if progress is not None:
            progress(done, len(todo))
    _write_cache(cache_dir, parts, cached, todo)
    return [r for p in parts for r in cached[p.key]]


def validate_part(shapes: Shapes, part: Part) -> list[Raw]:
    """The results for the part's own nodes: a pure function of the shapes and the part."""
    from pyshacl import validate as shacl_validate

    from kg.validate.pyshacl_tuning import constraint_lookup_by_set, parsed_once

    data = Graph()
    data.addN((s, p, o, data) for s, p, o in part.closure)
    data.addN((s, p, o, data) for s, p, o in shapes.ontology)
    owned = set(part.owned)
    with parsed_once(), constraint_lookup_by_set(), _targets_within(owned):
        _, results, _ = shacl_validate(
            data,
            shacl_graph=shapes.shapes,
            inference="none",
            advanced=True,
            allow_warnings=True,
            inplace=True,
        )
    raw = []
    for node in results.subjects(RDF.type, SH.ValidationResult):
        focus = results.value(node, SH.focusNode)
        if focus in owned:
            raw.append(_raw(results, node, shapes.shapes))
    return sorted(raw)


@contextmanager
def _targets_within(owned: set[Node]) -> Iterator[None]:
    """Restrict every shape's *targets* to the part's own nodes while pySHACL runs.

    The closure holds neighbours (their types, for `sh:class`); without this they would
    be targets too, and validating them, incomplete as they are, made a part cost twice
    its share. Only target selection is narrowed: nested evaluation (property shapes,
    `sh:or`) passes its focus nodes explicitly and is untouched.
    """
    from pyshacl.shape import Shape

    original = Shape.focus_nodes

    def focus_nodes(self, data_graph, debug=False):
        return original(self, data_graph, debug) & owned

    Shape.focus_nodes = focus_nodes  # type: ignore[method-assign]  # deliberate patch
    try:
        yield
    finally:
        Shape.focus_nodes = original  # type: ignore[method-assign]


def _raw(results: Graph, node: Node, shapes: Graph) -> Raw:
    """A result as N-Triples terms; blank nodes (anonymous shapes and paths) are not kept
    as such: their ids mean nothing in another process, so a shape is named by the node
    shape that holds it and a complex path is left out."""
    from kg.validate.pyshacl_tuning import owner_shape

    def term(p: URIRef) -> str:
        value = results.value(node, p)
        return value.n3() if isinstance(value, URIRef | Literal) else ""

    shape = results.value(node, SH.sourceShape)
    if not isinstance(shape, URIRef):
        owner = owner_shape(shapes, shape)
        shape = URIRef(owner) if owner else None
    return (
        term(SH.focusNode),
        term(SH.resultSeverity),
        term(SH.resultPath),
        term(SH.value),
        term(SH.resultMessage),
        shape.n3() if shape is not None else "",
    )


# --------------------------------------------------------------------------- cache


def _read_cache(cache_dir: Path | None, parts: list[Part]) -> dict[str, list[Raw]]:
    """The parts' results kept by an earlier run: only entries signed by this user for
    that very key (`kg.cache.SignedCache`); anything else is validated again."""
    found: dict[str, list[Raw]] = {}
    if cache_dir is None:
        return found
    cache = SignedCache(cache_dir)
    for part in parts:
        entry = cache.get(part.key)
        if isinstance(entry, list):
            found[part.key] = entry
    return found


def _write_cache(
    cache_dir: Path | None, parts: list[Part], results: dict[str, list[Raw]], fresh: list[Part]
) -> None:
    """Store the parts validated in this run and drop entries no part uses any more."""
    if cache_dir is None:
        return
    cache = SignedCache(cache_dir)
    for part in fresh:
        cache.put(part.key, results[part.key])
    cache.prune(keep={p.key for p in parts})
