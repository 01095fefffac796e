"""Stage 5a: every output file as text, by path relative to the output directory.

The work is split into tasks (each whole-graph format, the per-person files and pages
of a slice of the people, the publication pages of a slice, the dataset description).
Each task is a pure function of the shared state and the task (`render_task`), so
the tasks can run in forked worker processes that share the parent's graph
(copy-on-write) or on a dask cluster that receives the state once per worker
(kg/workers.py); the result is the same dictionary either way, and tests check that
one and two jobs, and dask, give byte-identical files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rdflib import URIRef
from rdflib.term import Node

from kg.config import Config
from kg.graph.triples import Triples
from kg.publish.deploy import deploy_files
from kg.publish.export import (
    SERIALIZERS,
    NodeBlocks,
    dataset_description,
    described,
    jsonld_context,
    owned_nodes,
    person_subset,
    to_jsonld,
    to_ntriples,
    to_turtle,
)
from kg.publish.layout import DATASET, DUMP, SPARQL, page_things, path_of
from kg.publish.site import SiteBuilder, SiteSettings
from kg.resolve.identity import Resolution
from kg.workers import Pool, as_pool

PEOPLE_PER_TASK = 50
THINGS_PER_TASK = 200

Task = tuple[str, int, int]  # kind, start, stop


@dataclass
class _State:
    config: Config
    resolution: Resolution
    graph: Triples
    owned: dict[URIRef, list[Node]]
    things: list[URIRef]  # every thing with a page but the profiled people and profiles
    pages: frozenset[str]  # the path of every thing with a page
    site: SiteBuilder
    blocks: NodeBlocks  # filled by each worker process for the files it renders


def render_outputs(
    config: Config,
    resolution: Resolution,
    graph: Triples,
    jobs: int | Pool = 1,
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
    jobs: int | Pool = 1,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[dict[str, str]]:
    """The files in parts, in a fixed order, as tasks finish; `progress(done, total)`.

    A build writes each part and lets it go, so the whole output (several times the
    graph's size in text) is never in memory at once. `jobs`: a number of forked
    processes, or a pool (kg/workers.py).
    """
    people = [_person(config, p.slug) for p in resolution.dataset.profiles]
    graph.reverse()  # build the shared index once, before any fork
    tops = page_things(graph.subjects(), config.base_iri)
    profiled = set(people) | {_profile(config, p.slug) for p in resolution.dataset.profiles}
    state = _State(
        config,
        resolution,
        graph,
        owned_nodes(graph, tops),
        [t for t in tops if t not in profiled],
        frozenset(path_of(str(t), config.base_iri) or "" for t in tops) | {DATASET},
        SiteBuilder(
            resolution,
            graph,
            config.base_iri,
            SiteSettings(
                config.title,
                config.description,
                config.sparql_endpoint,
                config.root / "templates",
            ),
        ),
        NodeBlocks(graph),
    )
    tasks = list(_tasks(resolution, len(state.things)))
    for done, part in enumerate(as_pool(jobs).map(render_task, state, tasks), start=1):
        yield part
        if progress is not None:
            progress(done, len(tasks))
    yield {"context.jsonld": json.dumps({"@context": jsonld_context()}, indent=2) + "\n"}
    yield deploy_files(config.base_iri)


def _tasks(resolution: Resolution, things: int) -> Iterator[Task]:
    yield from (("graph.jsonld", 0, 0), ("graph.ttl", 0, 0), ("graph.nt", 0, 0))
    yield ("void", 0, 0)
    yield ("site", 0, 0)
    profiles = len(resolution.dataset.profiles)
    for start in range(0, max(profiles, 1), PEOPLE_PER_TASK):  # the index page comes with 0
        yield ("people", start, min(start + PEOPLE_PER_TASK, profiles))
    for start in range(0, things, THINGS_PER_TASK):
        yield ("things", start, min(start + THINGS_PER_TASK, things))


def render_task(state: _State, task: Task) -> dict[str, str]:
    """The files of one task: a pure function of the shared state and the task (only
    `state.blocks`, a cache of text that does not change the output, is written)."""
    kind, start, stop = task
    if kind.startswith("graph."):
        text = SERIALIZERS[kind.removeprefix("graph.")][1](state.graph)
        return {kind: text, f"site/{kind}": text}  # the same string: a hard link
    if kind == "void":
        return _void(state)
    if kind == "site":
        paths = sorted(state.pages)
        return {f"site/{k}": v for k, v in state.site.site_files(paths).items()}
    if kind == "people":
        return _people(state, start, stop)
    files: dict[str, str] = {}
    for thing in state.things[start:stop]:
        files.update(_thing(state, thing))
    return files


def _descriptions(path: str, subset: Triples, turtle: str | None = None) -> dict[str, str]:
    """`site/<path>.ttl|.jsonld|.nt` of one thing."""
    return {
        f"site/{path}.ttl": turtle if turtle is not None else to_turtle(subset),
        f"site/{path}.jsonld": to_jsonld(subset),
        f"site/{path}.nt": to_ntriples(subset),
    }


def _thing(state: _State, thing: URIRef) -> dict[str, str]:
    """The description files and the page of one thing (not a profiled person)."""
    path = path_of(str(thing), state.config.base_iri) or ""
    own = state.owned[thing]
    kind = path.split("/", 1)[0]
    subset = (
        person_subset(state.graph, thing, own) if kind == "person" else described(state.graph, own)
    )
    files = _descriptions(path, subset)
    key = path.split("/", 1)[-1]
    if kind == "publication" and key in state.resolution.publications:
        page = state.site.publication_pages([state.resolution.publications[key]])
        files.update({f"site/{k}": v for k, v in page.items()})
    else:
        files[f"site/{path}.html"] = state.site.thing_page(thing, subset, state.pages)
    return files


def _people(state: _State, start: int, stop: int) -> dict[str, str]:
    profiles = state.resolution.dataset.profiles[start:stop]
    files = {}
    for profile in profiles:
        person = _person(state.config, profile.slug)
        subset = person_subset(state.graph, person, state.owned[person])
        state.blocks.skip = set(state.owned[person])  # their own nodes: in this file only
        turtle, jsonld = to_turtle(subset, state.blocks), to_jsonld(subset, state.blocks)
        bib = state.site.citations.bibtex(profile.slug)
        for ext, text in (("ttl", turtle), ("jsonld", jsonld)):
            files[f"people/{profile.slug}.{ext}"] = text
            files[f"site/person/{profile.slug}.{ext}"] = text  # the same string: a hard link
        # not beside the descriptions: Apache's MultiViews would offer it for text/*
        files[f"people/{profile.slug}.bib"] = bib
        files[f"site/bib/{profile.slug}.bib"] = bib
        files[f"site/person/{profile.slug}.nt"] = to_ntriples(subset)
        page = state.site.person_page(profile)
        files[f"site/person/{profile.slug}.html"] = page
        files[f"site/profile/{profile.slug}.html"] = page  # the profile document: same page
        profile_iri = _profile(state.config, profile.slug)
        files.update(
            _descriptions(f"profile/{profile.slug}", described(state.graph, [profile_iri]))
        )
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
        config.sparql_endpoint or config.base_iri + SPARQL,
        examples,
        DUMP,
    )
    turtle = to_turtle(void)
    files = {"void.ttl": turtle, "site/void.ttl": turtle}
    files.update(_descriptions(DATASET, void, turtle))
    dataset = URIRef(config.base_iri + DATASET)
    files[f"site/{DATASET}.html"] = state.site.thing_page(dataset, void, state.pages)
    return files


def _person(config: Config, slug: str) -> URIRef:
    return URIRef(f"{config.base_iri}person/{slug}")


def _profile(config: Config, slug: str) -> URIRef:
    return URIRef(f"{config.base_iri}profile/{slug}")
