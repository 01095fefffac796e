"""Stage 5a: every output file as text, by path relative to the output directory.

The work is split into tasks (each whole-graph format, the per-person files and pages
of a slice of the people, the publication pages of a slice, the dataset description).
With `jobs > 1` the tasks run in forked worker processes that share the parent's graph
(copy-on-write), so both cores work; the result is the same dictionary either way, and
a test checks that one and two jobs give byte-identical files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rdflib import URIRef
from rdflib.term import Node

from kg.config import Config
from kg.deploy import deploy_files
from kg.export import (
    SERIALIZERS,
    NodeBlocks,
    dataset_description,
    jsonld_context,
    owned_nodes,
    person_subset,
    to_jsonld,
    to_turtle,
)
from kg.resolve import Resolution
from kg.site import SiteBuilder
from kg.triples import Triples
from kg.workers import fork_map

PEOPLE_PER_TASK = 50
PUBLICATIONS_PER_TASK = 200

Task = tuple[str, int, int]  # kind, start, stop


@dataclass
class _State:
    config: Config
    resolution: Resolution
    graph: Triples
    owned: dict[URIRef, list[Node]]
    site: SiteBuilder
    blocks: NodeBlocks  # filled by each worker process for the files it renders


_state: _State | None = None  # set in the parent before forking; read by the workers


def render_outputs(
    config: Config,
    resolution: Resolution,
    graph: Triples,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, str]:
    """Every export file and page, as one dictionary (see `render_parts` to stream)."""
    files: dict[str, str] = {}
    for part in render_parts(config, resolution, graph, jobs, progress):
        files.update(part)
    return files


def render_parts(
    config: Config,
    resolution: Resolution,
    graph: Triples,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[dict[str, str]]:
    """The files in parts, in a fixed order, as tasks finish; `progress(done, total)`.

    A build writes each part and lets it go, so the whole output (several times the
    graph's size in text) is never in memory at once.
    """
    global _state
    people = [_person(config, p.slug) for p in resolution.dataset.profiles]
    graph.reverse()  # build the shared index once, before any fork
    _state = _State(
        config,
        resolution,
        graph,
        owned_nodes(graph, people),
        SiteBuilder(resolution, graph, config.base_iri),
        NodeBlocks(graph),
    )
    tasks = list(_tasks(resolution))
    try:
        for done, part in enumerate(fork_map(_render, tasks, jobs), start=1):
            yield part
            if progress is not None:
                progress(done, len(tasks))
    finally:
        _state = None
    yield {"context.jsonld": json.dumps({"@context": jsonld_context()}, indent=2) + "\n"}
    yield deploy_files(config.base_iri)


def _tasks(resolution: Resolution) -> Iterator[Task]:
    yield from (("graph.jsonld", 0, 0), ("graph.ttl", 0, 0), ("graph.nt", 0, 0))
    yield ("void", 0, 0)
    profiles = len(resolution.dataset.profiles)
    for start in range(0, max(profiles, 1), PEOPLE_PER_TASK):  # the index page comes with 0
        yield ("people", start, min(start + PEOPLE_PER_TASK, profiles))
    publications = len(resolution.publications)
    for start in range(0, publications, PUBLICATIONS_PER_TASK):
        yield ("publications", start, min(start + PUBLICATIONS_PER_TASK, publications))


def _render(task: Task) -> dict[str, str]:
    assert _state is not None
    kind, start, stop = task
    if kind.startswith("graph."):
        return {kind: SERIALIZERS[kind.removeprefix("graph.")][1](_state.graph)}
    if kind == "void":
        return _void(_state)
    if kind == "people":
        return _people(_state, start, stop)
    pubs = list(_state.resolution.publications.values())[start:stop]
    return {f"site/{k}": v for k, v in _state.site.publication_pages(pubs).items()}


def _people(state: _State, start: int, stop: int) -> dict[str, str]:
    profiles = state.resolution.dataset.profiles[start:stop]
    files = {}
    for profile in profiles:
        person = _person(state.config, profile.slug)
        subset = person_subset(state.graph, person, state.owned[person])
        state.blocks.skip = set(state.owned[person])  # their own nodes: in this file only
        turtle, jsonld = to_turtle(subset, state.blocks), to_jsonld(subset, state.blocks)
        for ext, text in (("ttl", turtle), ("jsonld", jsonld)):
            files[f"people/{profile.slug}.{ext}"] = text
            files[f"site/data/{profile.slug}.{ext}"] = text  # the same string: a hard link
    files.update({f"site/{k}": v for k, v in state.site.person_pages(profiles).items()})
    if start == 0:
        files["site/index.html"] = state.site.index_page()
    return files


def _void(state: _State) -> dict[str, str]:
    config = state.config
    examples = [_person(config, p.slug) for p in state.resolution.dataset.profiles[:3]]
    void = dataset_description(
        state.graph,
        config.base_iri,
        config.title,
        config.description,
        config.license,
        config.sparql_endpoint,
        examples,
    )
    return {"void.ttl": to_turtle(void)}


def _person(config: Config, slug: str) -> URIRef:
    return URIRef(f"{config.base_iri}person/{slug}")
