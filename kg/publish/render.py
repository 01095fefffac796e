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
import os
import pickle
import shutil
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from itertools import accumulate
from pathlib import Path
from typing import cast

from rdflib import URIRef
from rdflib.term import Node

from kg import scheme
from kg.cache import SignedCache, digest
from kg.config import Config
from kg.files import open_folder
from kg.formats import NTRIPLES, RDF_FORMATS, TURTLE
from kg.graph.delta import KeptTable
from kg.graph.triples import Triples
from kg.publish import dirty
from kg.publish.assets import logo_path, photo_thumbnails, scan, site_files
from kg.publish.blocks import (
    RANGE_SIZE,
    BlockTable,
    Formatter,
    Range,
    cut,
    dump_ends,
    dump_text,
    format_range,
    keep_range,
    kept_range,
    prune_kept,
    write_range,
)
from kg.publish.deploy import deploy_files
from kg.publish.dirty import DirtyState, Made, Reached
from kg.publish.dumpfile import chunks_digest, write_dump, write_ranges
from kg.publish.export import (
    Encoded,
    Kept,
    NodeBlocks,
    NodeTexts,
    Previous,
    Seen,
    TreeWriter,
    Written,
    _JsonTerms,
    colliding_prefixes,
    dataset_description,
    described,
    description_texts,
    encoded,
    jsonld_context,
    person_nodes,
    serialize,
    still_there,
    to_turtle,
    write_part,
)
from kg.publish.fingerprint import (
    Fingerprints,
    KeptRecords,
    Reads,
    SubjectChunks,
    record_atom,
    settings_digest,
)
from kg.publish.fragments import Fragments
from kg.publish.layout import DATASET, DUMP, SPARQL, owner_path, path_of
from kg.publish.lists import ListRows
from kg.publish.olddump import PreviousDump
from kg.publish.site import SiteBuilder, SiteSettings
from kg.publish.subjectset import subject_layout
from kg.resolve.identity import Resolution
from kg.spool import Spool
from kg.workers import ForkPool, Pool, as_pool, in_child, return_large_blocks

PEOPLE_PER_TASK = 50
BLOCKS_FOLDER = ".kg-blocks"  # the block table's files in the staging folder, removed after
KEPT_BLOCKS = "blocks"  # with a render cache: the table's files, kept beside it in .kg-cache
THINGS_PER_TASK = 200
FRAGMENTS_FROM = 100  # a person page's entries are kept from this many publications (0062)

Task = tuple[str, int, int]  # kind, start, stop
# path -> text (bytes: a static file), the previous build's unchanged file, or a file
# a task wrote itself
Files = Mapping[str, "str | bytes | Kept | Written | Encoded"]
Rendered = Mapping[str, "str | bytes | Kept | Encoded | Written"]  # a task's files, before written


@dataclass
class _State:
    config: Config
    resolution: Resolution
    graph: Triples
    owned: dict[URIRef, list[Node]]
    things: list[URIRef]  # every thing with a page but the profiled people and profiles
    pages: frozenset[str]  # the path of every thing with a page
    site: SiteBuilder
    blocks: NodeBlocks  # the block table (once made) and each process's term texts
    chunks: SubjectChunks  # each subject's N-Triples: the dump, and what keys are made of
    cache: SignedCache | None  # each person's and thing's files, by what they depend on
    prints: Fingerprints | None  # with a cache only: the keys its entries are kept under
    previous: Previous | None  # the tree this build replaces: where kept files are
    staging: Path | None = None  # where the tasks write their people's and things' files
    ntriples: Files | None = None  # the N-Triples dump, when written into `staging`
    subjects: list[Node] | None = None  # every subject in canonical order: the table's rows
    unusable: frozenset[str] = frozenset()  # context prefixes the whole graph collides with
    table_folder: Path | None = None  # the table's folder in `staging` (removed after)
    table_fd: int | None = None  # the folder the workers write the table's ranges in
    kept: list[str] | None = None  # with `.kg-cache/blocks`: the range keys it holds
    before: DirtyState | None = None  # the previous build's items (`kg.publish.dirty`)
    reached: Reached | None = None  # the items of `before` an edit reaches, or may
    after: DirtyState | None = None  # this build's state, once its items are known
    made: Made | None = None  # the items this process rendered, for `after`
    heavy: frozenset[Task] = frozenset()  # the tasks after which a process empties its memos
    runs: int = 0  # the tasks this process ran (each process counts in its own copy)
    ranges: int = 0  # the block table's ranges this process made, likewise
    writer: TreeWriter | None = None  # the task's writer of kept files (`_unreached`)
    at: array | None = None  # each row's chunk's place in the N-Triples dump (0071)


def _ntriples_dump(
    graph: Triples, staging: Path | None, table: KeptTable | None, old: PreviousDump | None
) -> tuple[SubjectChunks, Files | None]:
    """Each subject's N-Triples; with `staging`, the sorted dump written there (and
    linked into site/) as the chunks are made, so that its text is never kept; with the
    build's digest `table` and the `old` dump, unchanged chunks copied from it."""
    made = table.table if table is not None else None
    if staging is None:
        if old is not None:
            old.close()
        return SubjectChunks(graph, None, made), None
    kind = scheme.file_path(DUMP, NTRIPLES.ext)
    make = partial(SubjectChunks, graph, table=made, old=old, kept=table and table.chunks)
    try:
        stamps, chunks = write_dump(staging, (kind, f"site/{kind}"), make, _chunks_digest)
    finally:
        if old is not None:
            old.close()
    return chunks, stamps


def _chunks_digest(chunks: SubjectChunks) -> str:
    """The dump's digest, of its chunks' (`kg.publish.dumpfile`)."""
    return chunks_digest(map(chunks.digest.__getitem__, chunks.order))


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
        files.update(cast("dict[str, str]", part))  # without a cache, every file is text
    return files


def render_parts(
    config: Config,
    resolution: Resolution,
    graph: Triples,
    jobs: int | Pool = 1,
    progress: Callable[[int, int], None] | None = None,
    cache: SignedCache | None = None,
    previous: Previous | None = None,
    staging: Path | None = None,
    table: KeptTable | None = None,
) -> Iterator[Files]:
    """The files in parts, in a fixed order, as tasks finish; `progress(done, total)`.

    A build writes each part and lets it go, so the whole output (several times the
    graph's size in text) is never in memory at once. With `cache`, a person's or a
    thing's files are rendered only when what they show changed (see
    `kg.publish.fingerprint`); entries no longer used are removed at the end. Files the
    `previous` tree holds unchanged come as `Kept` (the writer links them). With
    `staging` (the folder `write_outputs` fills), the tasks of people and things write
    their files there themselves and return only their stamps (`Written`): the texts
    never cross a pipe and the parent neither hashes nor writes them. `table`: the
    build's subject digests (kg/graph/delta.py), made before validation, with what
    changed since the kept table.
    """
    return_large_blocks()  # large texts freed leave this process and its helpers (0054)
    state = _make_state(config, resolution, graph, cache, previous, staging, table)
    tasks = list(_tasks(resolution, len(state.things)))
    used: set[str] = set()
    pool = _pool(state.reached, jobs)
    packing = _packing(state)
    made = Spool(staging)  # what the parts made for the cache: read back after the render
    try:
        try:
            state.blocks.table = _block_table(state, pool, used)  # before the other tasks
            state.blocks.forget_terms()  # before the render workers fork (decision 0047)
            heavy = _heavy(tasks, state)
            state.heavy = frozenset(tasks[i] for i in heavy)
            results = _results(pool, state, tasks, heavy)
            for done, (part, keys, pickled) in enumerate(results, start=1):
                yield part
                used.update(keys)
                if packing is not None and pickled:
                    made.add_pickled(pickled)
                if progress is not None:
                    progress(done, len(tasks))
        finally:
            _drop_table(state)
        if cache is not None and packing is not None:
            _keep_made(state, packing, made, used)
    finally:
        made.close()
    yield {"context.jsonld": json.dumps({"@context": jsonld_context()}, indent=2) + "\n"}
    yield deploy_files(config.base_iri)
    assets = scan(config.root)  # the project's static/ and the photos' thumbnails
    static = site_files(assets, dict(state.site.settings.thumbnails))
    yield {f"site/{path}": data for path, data in static.items()}


FORGET_EVERY = 8  # tasks: a process empties its memos this often (decision 0067)
FORGET_RANGES = 32  # ranges of the block table: its process empties its term texts this often
ALONE_UP_TO = 500  # items an edit reaches: up to this many, the render forks no worker (0069)


def _pool(reached: Reached | None, jobs: int | Pool) -> Pool:
    """The pool; after an edit that `reached` at most `ALONE_UP_TO` items, this process
    alone (decision 0069): a forked worker counts every page of this process again,
    which after an edit also holds what the kept states left, for a few seconds of
    work that is mostly linking kept files."""
    pool = as_pool(jobs)
    if isinstance(pool, ForkPool) and reached is not None and len(reached.items) <= ALONE_UP_TO:
        return as_pool(1)
    return pool


def _results(
    pool: Pool, state: _State, tasks: list[Task], heavy: frozenset[int]
) -> Iterator[tuple[Files, list[str], bytes]]:
    """`render_task` of every task, in order. With forked workers, the heaviest tasks
    (`_alone`) run first, each in a short-lived child of its own before the workers
    fork (decisions 0069, 0075): their transient texts (hundreds of MB for a profile
    listing thousands of works) leave with the child, instead of staying in this
    process's peak, counted beside the workers', and in its arenas after."""
    alone = _alone(pool, tasks, heavy)
    early = {i: in_child(partial(render_task, state, tasks[i])) for i in alone}
    rest = [i for i in range(len(tasks)) if i not in early]
    here = frozenset(n for n, i in enumerate(rest) if i in heavy)
    found = iter(pool.map(render_task, state, [tasks[i] for i in rest], here))
    try:
        for i in range(len(tasks)):
            yield early.pop(i) if i in early else next(found)
    finally:
        close = getattr(found, "close", None)
        if close is not None:
            close()  # the workers are stopped now, not when collected


def _alone(pool: Pool, tasks: list[Task], heavy: frozenset[int]) -> list[int]:
    """The heavy tasks that run in children of their own (`_results`): the heaviest
    profiles' (decision 0069), the site pages and the heaviest things' (decision 0075:
    run by this process, they grew it by hundreds of MB beside the render worker and
    left it that much larger). With more than one forked process only (with one, a
    child would count this process twice)."""
    if not isinstance(pool, ForkPool) or pool.jobs <= 1:
        return []
    return sorted(heavy)


HEAVY_PEOPLE = 3  # the profiles with the most publications whose tasks one process runs
HEAVY_THINGS = 3  # the things' tasks most linked into, likewise (decision 0054)


def _heavy(tasks: list[Task], state: _State) -> frozenset[int]:
    """The tasks that need the most memory, for one process to run (decisions 0051 and
    0054): the site-wide pages, the people of the profiles with the most publications,
    and the things' tasks whose pages show the most (the most links into their things:
    a topic's, a venue's or an organization's page lists what refers to it)."""
    profiles = state.resolution.dataset.profiles
    by_size = sorted(range(len(profiles)), key=lambda i: -len(profiles[i].publications))
    most = by_size[:HEAVY_PEOPLE]
    found = {
        i
        for i, (kind, start, stop) in enumerate(tasks)
        if kind == "site" or (kind == "people" and any(start <= m < stop for m in most))
    }
    reverse = state.graph.reverse()

    def links(i: int) -> int:  # the links into the things of task i (each two entries)
        return sum(len(reverse.get(t, ())) for t in state.things[tasks[i][1] : tasks[i][2]])

    things = [i for i, (kind, _, _) in enumerate(tasks) if kind == "things"]
    found.update(sorted(things, key=lambda i: (-links(i), i))[:HEAVY_THINGS])
    return frozenset(found)


def _make_state(
    config: Config,
    resolution: Resolution,
    graph: Triples,
    cache: SignedCache | None,
    previous: Previous | None,
    staging: Path | None = None,
    table: KeptTable | None = None,
) -> _State:
    """What every task reads, made once in the parent before any fork. With `staging`,
    the N-Triples dump is written there as its chunks are made (`_ntriples_dump`)."""
    people = [_person(config, p.slug) for p in resolution.dataset.profiles]
    graph.reverse()  # build the shared index once, before any fork
    profiled = set(people) | {_profile(config, p.slug) for p in resolution.dataset.profiles}
    assets = scan(config.root)
    thumbnails = photo_thumbnails(resolution.dataset, assets, config.base_iri)
    settings = SiteSettings(
        config.title,
        config.description,
        config.sparql_endpoint,
        config.root / "templates",
        tuple(sorted(thumbnails.items())),
        config.site,
        logo_path(assets, config.site.logo),
    )
    site = SiteBuilder(resolution, graph, config.base_iri, settings)
    cache = cache if cache is not None and cache.enabled else None
    keyed = settings_digest(config, resolution) if cache is not None else ""
    before = _previous_items(cache, keyed, previous, staging, table)
    chunks, dump = _ntriples_dump(graph, staging, table, _old_dump(before, previous, table))
    if table is not None:  # its digests are the chunks' now: not held twice, nor forked (0054)
        table.table.digests.clear()
    layout = subject_layout(chunks.order, chunks.texts, config.base_iri, chunks.under)
    tops = layout.tops
    pages = layout.pages | {DATASET}
    prints = None  # the keys of kept files: made (once, before any fork) only to keep them
    if cache is not None:
        href = _linker(config.base_iri, pages)
        citations = site.citations.keys
        records = _kept_records(before, table)
        prints = Fingerprints(config, resolution, graph, chunks, href, citations, keyed, records)
    things = [t for t in tops if t not in profiled]
    reached, after = _dirty(before, prints, site, graph, chunks, pages, staging, table)
    if after is not None and dump is not None:  # where the next build copies chunks from
        after.dump = cast("Written", dump[scheme.file_path(DUMP, NTRIPLES.ext)]).stamp[0]
    owned = layout.owned
    blocks = NodeBlocks(graph)
    colliding = table.prefixes if table is not None else colliding_prefixes(chunks.terms)
    unusable = frozenset(colliding)
    blocks.collision_free = not unusable
    blocks.nt_terms = chunks.memo  # each term's N-Triples text once
    return _State(
        config,
        resolution,
        graph,
        owned,
        things,
        pages,
        site,
        blocks,
        chunks,
        cache,
        prints,
        previous,
        staging,
        dump,
        layout.canonical,
        unusable,
        before=before if reached is not None else None,
        reached=reached,
        after=after,
        at=layout.at,
    )


def _previous_items(
    cache: SignedCache | None,
    settings: str,
    previous: Previous | None,
    staging: Path | None,
    table: KeptTable | None,
) -> DirtyState | None:
    """The previous build's items (`kg.publish.dirty`), when it made the tree this build
    replaces with the same settings and the digest table this build's was compared with
    (decision 0057: its `edits` are the changes since); with a cache and workers that
    write only."""
    if cache is None or staging is None or previous is None or table is None:
        return None
    found = dirty.load(cache, previous[0].name, settings)
    if found is None or table.edits is None or found.table != table.before:
        return None
    return found


def _old_dump(
    before: DirtyState | None, previous: Previous | None, table: KeptTable | None
) -> PreviousDump | None:
    """The previous tree's N-Triples dump, to copy unchanged chunks from (decision 0049);
    the chunks the build's digest walk kept, when it walked the whole graph (0071)."""
    chunks = table.chunks if table is not None else None
    if chunks is not None:
        return PreviousDump.of_chunks(chunks)
    if before is None or previous is None or not before.dump or table is None:
        return None
    if table.edits is None or before.table != table.before:
        return None
    rel = scheme.file_path(DUMP, NTRIPLES.ext)
    sizes = array("Q", before.sizes)
    return PreviousDump.open(previous, rel, before.dump, table.order, table.edits, sizes)


def _kept_records(before: DirtyState | None, table: KeptTable | None) -> KeptRecords | None:
    """The previous build's record digests, with the front end's `Change` since it
    (decision 0057), when its state is the one that change starts from."""
    change = table.change if table is not None else None
    if before is None or change is None or change.before != before.table:
        return None
    return KeptRecords(before.records, change)


def _dirty(
    before: DirtyState | None,
    prints: Fingerprints | None,
    site: SiteBuilder,
    graph: Triples,
    chunks: SubjectChunks,
    pages: frozenset[str],
    staging: Path | None,
    table: KeptTable | None,
) -> tuple[Reached | None, DirtyState | None]:
    """The items an edit reaches (None: all) and this build's state to fill
    (`kg.publish.dirty`); with a cache and workers that write only."""
    if prints is None or staging is None or table is None:
        return None, None
    records = prints.record_digests()
    for path in site.related:
        records[f"{dirty.RECORD}summary\t{path}"] = dirty.blake(repr(site.summary(path)))
    after = DirtyState(staging.name, prints.settings, pages, table.token, records)
    after.sizes = chunks.sizes.tobytes()
    if before is None or table.edits is None:
        return None, after
    page_iri = partial(scheme.mint, prints.config.base_iri)
    edits = dirty.Edits(table.edits, table.order)
    return dirty.dirty_items(before, after, graph, chunks, prints.view, page_iri, edits), after


def _packing(state: _State) -> dirty.Packing | None:
    """Where this build's items are packed as their parts come in (`kg.publish.dirty`).
    Before the workers fork: without a previous state, every term an atom may name is
    numbered first, and the workers number their atoms (decision 0064)."""
    if state.after is None or state.cache is None:
        return None
    packing = dirty.Packing(state.before, state.after)
    if state.before is None:
        dirty.number_all(packing.state, state.chunks, state.graph)
    _keys(state).numbered(packing.state.known, state.before is None, len(packing.state.terms))
    return packing


def _keep_made(state: _State, packing: dirty.Packing, made: Spool, used: set[str]) -> None:
    """Pack this build's items and write the cache entries the parts made, read back
    from `made` in the parts' order (decision 0067: held on disk while the render
    workers lived, not in this process, whose pages each of them counts again); then
    prune the cache to what this build used."""
    cache = state.cache
    assert cache is not None
    fresh: dict[str, bytes] = {}
    for entries, items, views in made.drain():
        fresh.update(entries)
        packing.add_made(items)  # packed as they come, not kept as text (0049)
        packing.add_views(views)
    _save_items(state, packing, used)
    packs = cache.write_packs(fresh, used) if cache.enabled else set()
    cache.prune(used | packs)


def _save_items(state: _State, packing: dirty.Packing, used: set[str]) -> None:
    """Keep this build's items (`kg.publish.dirty`) in the render cache."""
    if state.cache is None:
        return
    r = state.resolution
    items = {_item_id("p", p.slug) for p in r.dataset.profiles}
    items.update(_item_id("t", str(t)) for t in state.things)
    used.update(dirty.save(state.cache, packing.finish(items)))


def _item_id(kind: str, name: str) -> str:
    return f"{kind}{name}"


def _block_table(state: _State, pool: Pool, used: set[str]) -> BlockTable:
    """The block table, its ranges formatted by the workers (written into a folder of
    the staging folder when there is one); the cache keys used go to `used`. This
    process formats none when it has helpers: the arenas the formatting leaves half
    used would stay in it, and in the render workers forked from it (decision 0067)."""
    subjects = state.subjects or []
    ranges = [(i, start, stop) for i, (start, stop) in enumerate(cut(subjects))]
    _table_folder(state)
    made: list[Range] = []
    keys: list[str] = []
    for found, key in pool.map(block_task, state, ranges, apart=True):  # (decision 0067)
        made.append(found)
        keys.extend(key)
    used.update(keys)
    if state.kept is not None:
        state.kept = keys  # the files to keep in .kg-cache/blocks
    prefixes = [prefix for _, prefix in state.blocks.turtle_terms.order]
    starts = [start for _, start, _ in ranges]
    table = BlockTable(subjects, made, prefixes, starts, state.table_fd)
    _read_dump(state, table)
    return table


def _read_dump(state: _State, table: BlockTable) -> None:
    """Let the files take the N-Triples of the nodes they hold whole from the dump
    written into the staging folder (decision 0071), opened before the workers fork."""
    rel = scheme.file_path(DUMP, NTRIPLES.ext)
    if state.staging is None or state.ntriples is None or state.at is None:
        return
    fd = os.open(state.staging / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    table.read_ntriples(fd, state.at, array("Q", accumulate(state.chunks.sizes, initial=0)))


def _table_folder(state: _State) -> None:
    """Where the workers write the table's ranges: with a render cache, kg's own
    `.kg-cache/blocks` (reached without following links; kept between builds), else a
    new folder of the staging folder; none without a staging folder (the data stays
    bytes: dask's workers may not see this file system)."""
    if state.staging is None:
        return
    cache = state.cache
    if cache is not None:
        rel = os.path.join(os.path.dirname(cache.rel), KEPT_BLOCKS)
        try:
            state.table_fd, state.kept = open_folder(cache.root, rel, create=True), []
            return
        except OSError:  # shipped as a link, or not writable: this build's folder
            pass
    state.table_folder = state.staging / BLOCKS_FOLDER
    os.mkdir(state.table_folder, 0o700)  # new: the staging folder is kg's, made now
    state.table_fd = open_folder(state.table_folder, ".")


def block_task(state: _State, item: tuple[int, int, int]) -> tuple[Range, list[str]]:
    """One range of the block table (`kg.publish.blocks`) and the cache key it used.
    The process empties its term texts every `FORGET_RANGES` ranges (decision 0075):
    the process formatting the table would hold every term's texts by its end."""
    made = _block_range(state, item)
    state.ranges += 1
    if state.ranges % FORGET_RANGES == 0:
        state.blocks.forget_terms()
    return made


def _block_range(state: _State, item: tuple[int, int, int]) -> tuple[Range, list[str]]:
    index, start, stop = item
    subjects = (state.subjects or [])[start:stop]
    digests = [state.chunks.digest[s] for s in subjects]
    folder = state.table_fd
    if state.cache is None or state.kept is None or folder is None:
        made = format_range(state.graph, subjects, _formatter(state), digests)
        return (made if folder is None else write_range(folder, str(index), made)), []
    key = _range_key(state, subjects[0])
    old = kept_range(folder, key, state.cache.get(key))
    if old is not None and old.digests == b"".join(digests):
        return old, [key]  # its files are read in place: neither read nor written here
    made = format_range(state.graph, subjects, _formatter(state), digests, old, folder)
    made = keep_range(folder, key, made)
    state.cache.put(key, made.entry())
    return made, [key]


def _range_key(state: _State, first: Node) -> str:
    """A range's cache key: by its first subject, which only an edit near it changes."""
    unusable = ",".join(sorted(state.unusable))
    return digest(_keys(state).settings, "blocks", str(RANGE_SIZE), first.n3(), unusable)


def _formatter(state: _State) -> Formatter:
    """This process's term texts; JSON-LD in the whole graph's context."""
    blocks = state.blocks
    json = blocks.json_terms if not state.unusable else _JsonTerms(state.unusable)
    return Formatter(blocks.turtle_terms, json)


def _drop_table(state: _State) -> None:
    """Close the table's files; prune `.kg-cache/blocks` to this build's ranges (after
    a build that made them all), or remove the staging folder's table."""
    if isinstance(state.blocks.table, BlockTable):
        state.blocks.table.close()
        if state.blocks.table.nt_dump is not None:
            os.close(state.blocks.table.nt_dump[0])
            state.blocks.table.nt_dump = None
    if state.table_fd is not None:
        if state.kept:
            prune_kept(state.table_fd, state.kept)
        os.close(state.table_fd)
        state.table_fd = None
    if state.table_folder is not None:
        shutil.rmtree(state.table_folder)
        state.table_folder = None


def _linker(base: str, pages: frozenset[str]) -> Callable[[str], str]:
    """Where a page links an IRI to: its page, its owner's page, or itself."""

    def href(iri: str) -> str:
        path = path_of(iri, base)
        if path is None or path in pages:
            return iri
        return owner_path(path, pages) or ""

    return href


def _tasks(resolution: Resolution, things: int) -> Iterator[Task]:
    dumps = sorted(RDF_FORMATS, key=lambda f: (f is NTRIPLES, f is TURTLE))  # longest first
    yield from ((scheme.file_path(DUMP, f.ext), 0, 0) for f in dumps)
    yield ("void", 0, 0)
    yield ("site", 0, 0)
    profiles = len(resolution.dataset.profiles)
    for start in range(0, max(profiles, 1), PEOPLE_PER_TASK):  # the index page comes with 0
        yield ("people", start, min(start + PEOPLE_PER_TASK, profiles))
    for start in range(0, things, THINGS_PER_TASK):
        yield ("things", start, min(start + THINGS_PER_TASK, things))


def render_task(state: _State, task: Task) -> tuple[Files, list[str], bytes]:
    """The files of one task, the cache keys it used, and pickled (b"" when there is
    none) the packed entries it made (`SignedCache.put_packed`, written by the parent)
    with what the items it rendered depend on (`kg.publish.dirty`): the parent keeps
    these on disk as they come (`kg.spool`), never unpickled until the render is over.
    A pure function of the shared state and the task (only the terms' texts of
    `state.blocks`, a cache that does not change the output, and the render cache's
    files are written)."""
    state.made, state.writer = Made(), None
    try:
        files, keys = _task_files(state, task)
    finally:
        if state.writer is not None:
            state.writer.close()
    made, state.made, state.writer = state.made, None, None
    state.runs += 1
    if task in state.heavy or state.runs % FORGET_EVERY == 0:
        _forget_memos(state)
    entries = state.cache.take_pending() if state.cache is not None else {}
    if not (entries or made.items or made.views):
        return files, keys, b""
    return files, keys, pickle.dumps((entries, made.items, made.views), pickle.HIGHEST_PROTOCOL)


def _forget_memos(state: _State) -> None:
    """Empty this process's memos (term texts, markup, fingerprints' views) after one of
    the heaviest tasks and after every `FORGET_EVERY` tasks (decision 0067): a profile
    with thousands of works, or a page listing thousands of things, fills them with
    entries few later tasks read, they would keep the arenas the tasks' transient
    objects left half used, and a forked worker's memos would grow to the whole graph's
    by the end of the render."""
    state.blocks.forget_terms()
    state.site.forget_memos()
    if state.prints is not None:
        state.prints.forget()


def _task_files(state: _State, task: Task) -> tuple[Files, list[str]]:
    kind, start, stop = task
    keys: list[str] = []
    if kind == scheme.file_path(DUMP, NTRIPLES.ext):
        if state.ntriples is not None:  # written while the state was made
            return state.ntriples, keys
        text = state.chunks.ntriples()
        return _written(state, {kind: text, f"site/{kind}": text}), keys  # one file, linked
    if kind.startswith(scheme.file_path(DUMP, "")):
        return _dump(state, kind.removeprefix(scheme.file_path(DUMP, "")), keys), keys
    if kind == "void":
        return _void(state), keys
    if kind == "site":  # written where it runs, as the others: a child's texts never cross
        return _written(state, _site(state, keys)), keys
    if kind == "people":
        return _written(state, _people(state, start, stop, keys)), keys
    files: dict[str, str | bytes | Kept | Encoded | Written] = {}
    for thing in state.things[start:stop]:
        files.update(_thing(state, thing, keys))
    return _written(state, files), keys


def _site(state: _State, keys: list[str]) -> Rendered:
    """The site-wide pages; with a render cache, those `SiteBuilder.keyed_pages` names
    are kept under their key while what they show is the same (decision 0055)."""
    paths = sorted(state.pages)
    site = state.site
    if state.cache is None or state.prints is None:
        return {f"site/{k}": v for k, v in site.site_files(paths).items()}
    if site.kg_lists:  # the list pages from rows kept by publication (decision 0074)
        key, rows = _list_rows(state, keys)
        made = site.site_files(paths, keyed=False, rows=rows)
        if rows.changed():
            state.cache.put(key, rows.made)
    else:
        entries = _kept_fragments(state, "list entries", keys)
        made = site.site_files(paths, keyed=False, entries=entries)
        _keep_fragments(state, "list entries", entries)
    files: dict[str, str | bytes | Kept | Encoded | Written] = {
        f"site/{k}": v for k, v in made.items()
    }
    for path, (key, render) in site.keyed_pages(paths).items():
        found = digest(state.prints.settings, "site page", key)
        page = partial(_one_page, f"site/{path}", render)  # one text: its group
        files.update(_cached(state, found, page, keys))
    return files


def _list_rows(state: _State, keys: list[str]) -> tuple[str, ListRows]:
    """The publications' rows the previous build kept (`kg.publish.lists`) and their
    cache key (also put in `keys`)."""
    assert state.cache is not None
    prints = _keys(state)
    key = digest(prints.settings, "list rows")
    keys.append(key)
    settings = digest(prints.settings, repr(state.site.settings))
    records = prints.record_digests()
    record = partial(_publication_record, records)
    return key, ListRows(state.cache.get(key), settings, record, state.resolution.persons)


def _publication_record(records: dict[str, bytes], key: str) -> bytes | None:
    return records.get(record_atom("publication", key))


def _fragments_key(state: _State, name: str) -> str:
    return digest(_keys(state).settings, "fragments", name)


def _kept_fragments(state: _State, name: str, keys: list[str]) -> Fragments | None:
    """The fragments `name` the previous build rendered (decision 0062), to render
    again only those whose views changed; their cache key goes to `keys`. None when
    there is no such entry (a cold build): an empty one is kept in its place, so that
    the next build that renders them keeps their texts (a cold build pays no digests
    for texts only a rebuild would reuse)."""
    assert state.cache is not None
    key = _fragments_key(state, name)
    keys.append(key)
    found = state.cache.get(key)
    if found is None:
        state.cache.put(key, {})
        return None
    return Fragments(found)


def _keep_fragments(state: _State, name: str, fragments: Fragments | None) -> None:
    """Keep the fragments this build rendered or used, for the next build."""
    if state.cache is not None and fragments is not None and fragments.changed():
        state.cache.put(_fragments_key(state, name), fragments.made)


def _one_page(rel: str, render: Callable[[], str]) -> Groups:
    return [((rel,), render())]


def _written(state: _State, files: Rendered) -> Files:
    """The files, or with a staging folder, written there and given as their stamps."""
    if state.staging is None:
        return files
    return write_part(state.staging, state.previous, files)


def _dump(state: _State, fmt: str, keys: list[str]) -> Files:
    """The whole graph as Turtle or JSON-LD: a header and the block table's ranges,
    copied into the staging folder when there is one."""
    kind = scheme.file_path(DUMP, fmt)
    table = state.blocks.table
    assert isinstance(table, BlockTable)
    if state.staging is None:
        text = dump_text(table, fmt, state.graph, state.unusable)
        return {kind: text, f"site/{kind}": text}
    head, tail = dump_ends(table, fmt, state.graph, state.unusable)
    rels = (kind, f"site/{kind}")
    write = partial(write_ranges, table=table, ext=fmt, head=head, tail=tail)
    files, _ = write_dump(state.staging, rels, write, str)  # its digest, of its ranges'
    return files


def _keys(state: _State) -> Fingerprints:
    """The keys of kept files (a build with a render cache has them)."""
    assert state.prints is not None
    return state.prints


def _item(
    state: _State,
    item: str,
    owned: Callable[[], set[Node]],
    key: Callable[[Reads], str],
    render: Callable[[], Groups],
    keys: list[str],
) -> Rendered:
    """An item's files: the previous tree's when no edit reaches it (`kg.publish.dirty`),
    else `render()` or the files kept under its key (`key(reads)`, which gives what it
    read to `reads`) when the cache has them."""
    if state.cache is None:
        return _texts(render())
    kept = _unreached(state, item, owned)
    if kept is not None:
        keys.append(kept[0])  # its cache entry stays
        return kept[1]
    reads = Reads()
    found = key(reads)
    files = _cached(state, found, render, keys)
    if state.made is not None and state.after is not None:
        digests = {rel: _digest(file) for rel, file in files.items()}
        state.made.items[item] = dirty.deps(found, digests, reads)
        fresh = _keys(state).fresh.take()  # the views no item of this process read before
        state.made.views.numbered.update(fresh.numbered)
        state.made.views.texts.update(fresh.texts)
    return files


def _unreached(
    state: _State, item: str, owned: Callable[[], set[Node]]
) -> tuple[str, dict[str, Kept] | dict[str, Written]] | None:
    """The key and the previous tree's files of an item no edit reaches (a candidate:
    when the lines linking into its nodes are the same), when all are still there."""
    before, previous, reached = state.before, state.previous, state.reached
    if before is None or reached is None or previous is None or item in reached.items:
        return None
    deps = before.items.get(item)
    if deps is None:
        return None
    if item in reached.candidates:
        nodes = owned()
        links, _ = _keys(state).links_in(sorted(nodes, key=str), nodes)
        if links != deps.links:
            return None
    files = deps.files()
    if state.staging is None:
        if not all(still_there(previous, r, d) for r, d in files.items()):
            return None
        return deps.key, {rel: Kept(d) for rel, d in files.items()}
    taken = _writer(state).keep_all(files)  # checked as the writer takes them (0059)
    return None if taken is None else (deps.key, taken)


def _writer(state: _State) -> TreeWriter:
    """This process's writer into the staging folder (one per task: `render_task`)."""
    assert state.staging is not None
    if state.writer is None:
        state.writer = TreeWriter(state.staging, state.previous)
    return state.writer


Groups = Iterable[tuple[tuple[str, ...], str]]  # an item's texts, each with its paths


def _cached(state: _State, found: str, render: Callable[[], Groups], keys: list[str]):
    """`render()`, or the files kept under the key `found` when the cache has them."""
    assert state.cache is not None
    keys.append(found)
    kept = state.cache.get_packed(found)  # path -> digest of the bytes last rendered for it
    previous = state.previous
    if kept and previous and all(still_there(previous, r, d) for r, d in kept.items()):
        return {rel: Kept(d) for rel, d in kept.items()}
    if state.staging is None:  # each text encoded and digested once, for the cache and the writer
        files: dict[str, Encoded] | dict[str, Written] = encoded(_texts(render()))
    else:
        files = _write_as_made(state, render())
    state.cache.put_packed(found, {rel: _digest(file) for rel, file in files.items()})
    return files


def _write_as_made(state: _State, groups: Groups) -> dict[str, Written]:
    """Each text written into the staging folder as it is made (its paths but the first
    hard links), then let go: a profile listing thousands of works never holds all its
    files' texts and bytes at once (decision 0075). Their stamps, in the texts' order."""
    writer, files = _writer(state), {}
    for rels, text in groups:
        part = encoded(dict.fromkeys(rels, text))  # one text: one file, its other paths links
        del text
        writer.write(part)
        files.update({rel: Written(writer.done[rel]) for rel in rels})
        del part
    return files


def _digest(file: Encoded | Written | Kept) -> str:
    return file.stamp[0] if isinstance(file, Written) else file.digest


def _texts(groups: Groups) -> dict[str, str]:
    return {rel: text for rels, text in groups for rel in rels}


def _grouped(files: dict[str, str]) -> Groups:
    """The paths given the very same text object, together (a file and its links)."""
    found: dict[int, tuple[list[str], str]] = {}
    for rel, text in files.items():
        found.setdefault(id(text), ([], text))[0].append(rel)
    return [(tuple(rels), text) for rels, text in found.values()]


def _descriptions(
    path: str,
    subset: Triples,
    turtle: str | None = None,
    terms: NodeBlocks | None = None,
    seen: Seen | None = None,
    kept: Fragments[NodeTexts] | None = None,
) -> dict[str, str]:
    """`site/<path>.<ext>` of one thing, for every RDF format (`terms`: the texts of terms
    a process has formatted already, for a subset of the whole graph made by `described`;
    `seen`, `kept`: see `description_texts`)."""
    if terms is not None and turtle is None:
        texts = description_texts(subset, terms, seen, kept)
        return {f"site/{scheme.file_path(path, f.ext)}": texts[f.ext] for f in RDF_FORMATS}
    return {
        f"site/{scheme.file_path(path, f.ext)}": turtle
        if turtle is not None and f is TURTLE
        else serialize(f.ext, subset, terms)
        for f in RDF_FORMATS
    }


def _thing(state: _State, thing: URIRef, keys: list[str]) -> Rendered:
    """The description files and the page of one thing (not a profiled person)."""
    path = path_of(str(thing), state.config.base_iri) or ""
    own = state.owned[thing]
    kind, name = scheme.kind_of(path), scheme.key_of(path)
    person = kind == scheme.PERSON
    owned = _lazy(lambda: person_nodes(state.graph, thing, own) if person else set(own))
    pub = state.resolution.publications.get(name) if kind == scheme.PUBLICATION else None

    def render() -> Groups:
        subset = described(state.graph, owned())
        files = _descriptions(path, subset, terms=state.blocks)
        if pub is not None:
            page = state.site.publication_pages([pub])
            files.update({f"site/{k}": v for k, v in page.items()})
        else:
            html = scheme.file_path(path, "html")
            files[f"site/{html}"] = state.site.thing_page(thing, subset, state.pages)
        return _grouped(files)

    def key(reads: Reads) -> str:  # an organization's or venue's page shows what refers to it
        reads.atoms.add(_keys(state).record(f"{dirty.RECORD}summary\t{path}"))
        made = _keys(state).thing(thing, owned(), pub, reads)
        return digest(made, repr(state.site.summary(path)))

    return _item(state, _item_id("t", str(thing)), owned, key, render, keys)


def _people(state: _State, start: int, stop: int, keys: list[str]) -> Rendered:
    files: dict[str, str | bytes | Kept | Encoded | Written] = {}
    for profile in state.resolution.dataset.profiles[start:stop]:
        person = _person(state.config, profile.slug)
        owned = _lazy(partial(person_nodes, state.graph, person, state.owned[person]))
        works = partial(state.site.publications_of, profile.slug)
        files.update(
            _item(
                state,
                _item_id("p", profile.slug),
                owned,
                lambda reads: _keys(state).person(profile, owned(), works(), reads),  # noqa: B023
                lambda: _person_files(state, profile, person, owned()),  # noqa: B023
                keys,
            )
        )
    if state.prints is not None:  # kept while the person is, rendered or not (0062)
        profiles = state.resolution.dataset.profiles[start:stop]
        hubs = [p.slug for p in profiles if _keeps(state, p)]
        keys.extend(_fragments_key(state, n) for s in hubs for n in _person_stores(state, s))
    if start == 0:
        files["site/index.html"] = state.site.index_page()
    return files


def _lazy(make: Callable[[], set[Node]]) -> Callable[[], set[Node]]:
    """`make()`, made on the first call only (an item no edit reaches never needs it)."""
    found: list[set[Node]] = []

    def get() -> set[Node]:
        if not found:
            found.append(make())
        return found[0]

    return get


def _person_files(
    state: _State, profile, person: URIRef, owned: set[Node]
) -> Iterator[tuple[tuple[str, ...], str]]:
    """A profiled person's downloads, page and profile document, each text with its
    paths, as made (`_write_as_made` writes each and lets it go); a hub's entries and
    partial nodes' texts kept between builds (`_keeps`, decision 0062)."""
    slug, path = profile.slug, scheme.path(scheme.PERSON, profile.slug)
    stores = _person_stores(state, slug) if _keeps(state, profile) else []
    kept = [_kept_fragments(state, name, []) for name in stores]
    entries, nodes = (kept[0], kept[1]) if kept else (None, None)
    seen: Seen = {}  # the profile document's nodes are the person's, or fewer of their triples
    texts = description_texts(described(state.graph, owned), state.blocks, seen, nodes)
    for f in RDF_FORMATS:
        site = f"site/{scheme.file_path(path, f.ext)}"
        if f is NTRIPLES:
            yield (site,), texts.pop(f.ext)
        else:  # the same text: a hard link
            yield (site, f"people/{scheme.file_path(slug, f.ext)}"), texts.pop(f.ext)
    # not beside the descriptions: Apache's MultiViews would offer it for text/*
    work = _keys(state).work if entries is not None else None
    bib = (f"people/{slug}.bib", f"site/bib/{slug}.bib")
    yield bib, state.site.citations.bibtex(slug, entries, work)
    profile_path = scheme.path(scheme.PROFILE, slug)
    pages = (scheme.file_path(path, "html"), scheme.file_path(profile_path, "html"))
    yield tuple(f"site/{p}" for p in pages), state.site.person_page(profile, entries, work)
    yield (f"site/cv/{slug}.html",), cv_page(state, slug)
    profile_subset = described(state.graph, [_profile(state.config, slug)])
    yield from _grouped(
        _descriptions(profile_path, profile_subset, None, state.blocks, seen, nodes)
    )
    for name, made in zip(stores, kept, strict=True):
        _keep_fragments(state, name, made)


def _keeps(state: _State, profile) -> bool:
    """Whether a person's entries and partial nodes' texts are kept between builds
    (decision 0062): with a render cache, for a person listing `FRAGMENTS_FROM`
    publications or more (a hub, whose files are long and reached by many edits)."""
    return state.prints is not None and len(profile.publications) >= FRAGMENTS_FROM


def _person_stores(state: _State, slug: str) -> list[str]:
    """The names a hub's kept texts are under: its page's and BibTeX file's entries,
    and its description files' partial nodes (in the whole graph's Turtle prefixes)."""
    prefixes = repr(state.blocks.turtle_terms.order)
    return [f"person entries\t{slug}", f"person nodes\t{slug}\t{prefixes}"]


def cv_page(state: _State, slug: str) -> str:
    """The printable CV beside the person page (issue 29), through the site's template
    loader (the project's templates/cv/ first, also on a Dask worker)."""
    from kg.publish.cv.build import cv_of
    from kg.publish.cv.render import render_text

    cv = cv_of(state.resolution, state.site.profiles[slug])
    loader = state.site.env.loader
    return render_text(cv, "html", loader=loader, back=f"../person/{slug}.html")


def _void(state: _State) -> dict[str, str]:
    config = state.config
    examples = [_person(config, p.slug) for p in state.resolution.dataset.profiles[:3]]
    void = dataset_description(
        state.graph,
        config.base_iri,
        config.title,
        config.description,
        config.license,
        config.sparql_endpoint or scheme.mint(config.base_iri, SPARQL),
        examples,
        DUMP,
    )
    turtle = to_turtle(void)
    void_file = scheme.file_path(scheme.VOID, TURTLE.ext)
    files = {void_file: turtle, f"site/{void_file}": turtle}
    files.update(_descriptions(DATASET, void, turtle))
    dataset = URIRef(scheme.dataset(config.base_iri))
    page = scheme.file_path(DATASET, "html")
    files[f"site/{page}"] = state.site.thing_page(dataset, void, state.pages)
    return files


def _person(config: Config, slug: str) -> URIRef:
    return URIRef(scheme.person(config.base_iri, slug))


def _profile(config: Config, slug: str) -> URIRef:
    return URIRef(scheme.profile(config.base_iri, slug))
