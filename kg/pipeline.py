"""The Python API: the straight line load -> resolve -> map -> validate -> export."""

from __future__ import annotations

import datetime
import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

from rdflib import URIRef

from kg import scheme
from kg.cache import SignedCache, digest
from kg.config import Config
from kg.errors import InputError, Problem
from kg.graph import front
from kg.graph.delta import KeptTable, Table, kept_table
from kg.graph.mapping import Mapped, map_graph
from kg.graph.used import drop_unused
from kg.ingest.load import load_dataset_keyed, load_dataset_partially
from kg.ingest.redact import redact
from kg.model import Dataset, PartialDate, Profile
from kg.resolve import kept
from kg.resolve.identity import Resolution, reference_problems, resolve, resolve_with_parts
from kg.validate.shacl import (
    Report,
    validate_compiled,
    validate_compiled_apart,
    validate_compiled_kept,
    validate_in_parts,
)
from kg.workers import (
    LOCAL,
    Executor,
    ForkPool,
    Pool,
    Session,
    session,
    worker_count,
)

if TYPE_CHECKING:
    from kg.publish.assets import Assets
    from kg.publish.cv.model import Options as CVOptions
    from kg.publish.export import Encoded, Kept, Written
    from kg.query.graph_store import BuiltGraph
    from kg.query.store import QueryStore

Progress = Callable[[str], None]
Files = Mapping[str, "str | bytes | Kept | Written | Encoded"]  # as render_parts gives them


def _quiet(message: str) -> None:
    return None


def load_project(config: Config, parse_cache: SignedCache | None = None) -> Dataset:
    """Load data/; on mistakes, raise InputError with the structural problems and, in the
    same run, the unknown organizations and venues named by what could be read."""
    return _load_keyed(config, parse_cache)[0]


def _load_keyed(
    config: Config, parse_cache: SignedCache | None, previous: dict | None = None
) -> tuple[Dataset, dict[str, str]]:
    """`load_project`, with each data file's key (kg.ingest.load.load_dataset_keyed)."""
    from kg.ingest.scaffold import duplicate_profiles

    data, problems, keys = load_dataset_keyed(config.data_dir, parse_cache, previous)
    if problems:
        raise InputError([*problems, *reference_problems(data)])
    twice = duplicate_profiles(data)  # one clear error, not every ambiguous author
    if twice:
        raise InputError(twice)
    return data, keys


@dataclass(frozen=True)
class CheckReport:
    """Everything `kg check` finds in one run: errors (which stop a build) and warnings."""

    dataset: Dataset
    errors: tuple[Problem, ...]
    warnings: tuple[Problem, ...]


def check_project(config: Config) -> CheckReport:
    """Load and resolve everything; collect every error and warning instead of raising."""
    from kg.ingest.lint import warnings
    from kg.publish.assets import problems as file_problems
    from kg.publish.assets import scan

    data, problems = load_dataset_partially(config.data_dir)
    problems += file_problems(data, scan(config.root))
    from kg.ingest.scaffold import duplicate_profiles

    twice = duplicate_profiles(data)
    if problems:
        problems += reference_problems(data) + twice
    elif twice:
        problems += twice  # resolving would report every author both profiles list
    else:
        try:
            resolve(data)
        except InputError as exc:
            problems += exc.problems
    return CheckReport(data, InputError(problems).problems, tuple(warnings(data)))


def resolve_project(config: Config) -> Resolution:
    from kg.publish.assets import scan

    return resolve(ready(load_project(config), scan(config.root), config.base_iri))


def ready(data: Dataset, assets: Assets, base: str) -> Dataset:
    """`data` as the graph is made from it: redacted, and local `photo:`, `pdf:`,
    `slides:` (files of static/, `assets`) as their site addresses."""
    from kg.publish.assets import localize

    return localize(redact(data), assets, base)


@dataclass(frozen=True)
class BuildResult:
    out_dir: Path | None
    files: tuple[str, ...]
    triples: int
    resolution: Resolution
    report: Report
    warnings: tuple[Problem, ...] = ()  # the data's lint warnings (kg.ingest.lint)

    @property
    def published(self) -> bool:
        return self.out_dir is not None


def profile_dates(
    config: Config, data: Dataset
) -> tuple[dict[str, PartialDate], dict[str, PartialDate]]:
    """When each profile last changed and when it was created: SOURCE_DATE_EPOCH, else its
    last and first git commits (one `git log` for both), else its mtime.

    Reproducible: the same checkout gives the same dates, so rebuilds are byte-identical.
    """
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        day = _day(int(epoch))
        same = {p.slug: day for p in data.profiles}
        return same, dict(same)
    last, first = _git_dates(config.data_dir / "profiles")
    modified, created = {}, {}
    for p in data.profiles:
        path = config.data_dir / "profiles" / f"{p.slug}.yaml"
        mtime = None if path.name in last and path.name in first else int(path.stat().st_mtime)
        modified[p.slug] = _day(last.get(path.name, mtime or 0))
        created[p.slug] = _day(first.get(path.name, mtime or 0))
    return modified, created


def _day(epoch: int) -> PartialDate:
    moment = datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC)
    return PartialDate(moment.year, moment.month, moment.day)


# git reads the repository's own .git/config, which comes with the project and can name
# programs to run (core.fsmonitor, gpg.program for log.showSignature, clean filters that
# `git status` applies). kg therefore runs only `git log` and `git ls-tree`, which run
# none of them once these settings are forced off, and compares file contents itself
# instead of asking `git status`.
_GIT = (
    "git",
    "--no-pager",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "log.showSignature=false",
)
_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}


def _git_dates(folder: Path) -> tuple[dict[str, int], dict[str, int]]:
    """File name -> commit time of its last commit, for files whose content is the
    committed content, and file name -> time of its first commit, whatever changed since
    (one `git log` and one `git ls-tree` for the folder)."""
    try:
        log = _git(folder, "log", "--no-show-signature", "--format=%x00%ct", "--name-only")
        tree = _git(folder, "ls-tree", "-z", "HEAD")
    except (OSError, subprocess.SubprocessError):
        return {}, {}
    committed = {}
    for entry in tree.split("\x00"):
        meta, _, name = entry.partition("\t")
        if meta.endswith(tuple("0123456789abcdef")) and " blob " in meta:
            committed[name] = meta.rsplit(" ", 1)[1]
    last: dict[str, int] = {}
    first: dict[str, int] = {}
    for chunk in log.split("\x00")[1:]:
        stamp, *names = chunk.strip().splitlines() or ["0"]
        for name in names:
            last.setdefault(Path(name).name, int(stamp))
            first[Path(name).name] = int(stamp)  # newest first: the last seen is the oldest
    unchanged = {k: v for k, v in last.items() if _unchanged(folder / k, committed.get(k))}
    return unchanged, first


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        [*_GIT, *args, "--", "."],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, **_GIT_ENV},
    ).stdout


def _unchanged(path: Path, blob: str | None) -> bool:
    """Whether the file holds exactly the committed blob (git's object id, computed here)."""
    import hashlib

    if blob is None or len(blob) not in (40, 64):
        return False
    try:
        content = path.read_bytes()
    except OSError:
        return False
    digest = hashlib.sha1 if len(blob) == 40 else hashlib.sha256
    return digest(b"blob %d\x00" % len(content) + content).hexdigest() == blob


CACHE_DIR = ".kg-cache/validation"
PARSE_CACHE_DIR = ".kg-cache/parse"
RENDER_CACHE_DIR = ".kg-cache/render"
STATE_DIR = ".kg-cache/validation-state"  # the compiled validator's last findings (0043)
OUTPUTS_DIR = ".kg-cache/outputs"  # per output folder: the stamps of its files
TABLE_DIR = ".kg-cache/table"  # the subject digest table, kept between builds (0057)


def build_graph(
    config: Config, progress: Progress = _quiet, cache: bool = True
) -> tuple[Resolution, Mapped]:
    """The resolution and the mapped graph; with caches, the resolution also carries
    the data's lint warnings, each profile's kept by its file's key (kg.ingest.lint.kept,
    decision 0076)."""
    from kg.ingest import lint as linter
    from kg.publish.assets import scan

    progress("loading data/")
    parse_cache = SignedCache(config.root / PARSE_CACHE_DIR) if cache else None
    previous: dict = {}  # the snapshot's records of files that changed (kg.graph.front)
    loaded, keys = _load_keyed(config, parse_cache, previous)
    assets = scan(config.root)
    data = ready(loaded, assets, config.base_iri)
    progress(f"resolving {len(data.profiles)} profiles")
    if parse_cache is None:
        resolution = resolve(data)
        progress("mapping to RDF")
        modified, created = profile_dates(config, data)
        mapped = map_graph(resolution, config.base_iri, modified, created)
        return resolution, drop_unused(mapped, config.base_iri)  # only entries something uses
    listing = sorted((k, a.digest) for k, a in assets.items())
    inputs = kept.inputs_digest(keys, listing)
    try:
        warned = linter.kept(parse_cache, config.data_dir, data, keys, inputs)
        last = front.read(parse_cache, config.data_dir)
        shelf = front.Shelf(parse_cache, config.data_dir)
        shelf.hold(last)
        resolution, kept_now = _resolve_kept(config, parse_cache, data, inputs, keys)
        prepare = partial(_prepared, assets, config.base_iri)
        before = front.previous_profiles(parse_cache, last, keys, previous, prepare)
    finally:
        parse_cache.prune()  # every file was read: what was not used is stale
    progress("mapping to RDF")
    modified, created = profile_dates(config, data)
    given = front.Inputs(
        config.base_iri, inputs, digest(*(f"{k}\t{d}" for k, d in listing)), keys, modified, created
    )
    mapped, state = front.mapped(shelf, resolution, given, last, kept_now, before)
    front.write(parse_cache, config.data_dir, state)
    resolution.warnings = tuple(warned)
    return resolution, mapped


def _prepared(assets: Assets, base: str, profile: Profile) -> Profile | None:
    """A profile as `build_graph` makes it `ready`, or None."""
    one = Dataset(profiles=(profile,), organizations=(), venues=(), people=())
    try:
        profiles = ready(one, assets, base).profiles
    except InputError:
        return None
    return profiles[0] if profiles else None


def _resolve_kept(
    config: Config, cache: SignedCache, data: Dataset, inputs: str, keys: dict[str, str]
) -> tuple[Resolution, tuple[kept.Kept | None, kept.Kept]]:
    """The resolution patched from the last build's when the change is local, else
    resolved in full (decision 0052); what the next build needs is kept either way.
    Also the kept resolution read (None: none) and the one kept now."""
    last = kept.read(cache, config.data_dir)
    found = kept.patched(last, data, inputs, keys) if last is not None else None
    if found is not None:
        resolution, keeping = found.resolution, found.kept
    else:
        resolution, parts = resolve_with_parts(data)
        keeping = kept.keep(resolution, parts, inputs, keys)
    if keeping is not last:
        kept.write(cache, config.data_dir, keeping)
    return resolution, (last, keeping)


def validate_project(
    config: Config,
    progress: Progress = _quiet,
    jobs: int = 0,
    cache: bool = True,
    engine: str = "compiled",
) -> tuple[Resolution, Report]:
    resolution, mapped = build_graph(config, progress, cache)
    pool = ForkPool(worker_count(jobs, len(resolution.dataset.profiles)))
    return resolution, _validate(config, mapped, progress, pool, cache, engine)


def _validate(
    config: Config,
    mapped: Mapped,
    progress: Progress,
    pool: Pool,
    cache: bool,
    engine: str,
    table: Table | None = None,
) -> Report:
    """`compiled` (the default): one pass, after an edit only over what it can affect
    (with a cache), a full run in a new interpreter for a big project; `pyshacl`: in
    parts on the pool, each part's results cached by content hash. `table`: the
    build's subject digests (kg/graph/delta.py), made once for validation and render."""
    if engine == "compiled":
        progress("validating against shapes/ (compiled)")
        # a big project: in a new interpreter, so that its memory (a copy of the graph
        # in plain terms, and indexes) is neither kept by this process and its workers
        # nor counted with this process's pages, as a fork's would be (decision 0051)
        apart = isinstance(pool, ForkPool) and pool.jobs > 1
        if cache:  # after an edit: only what it can affect, here (decision 0043)
            return validate_compiled_kept(
                mapped.triples,
                mapped.sources,
                config.shapes_dir,
                config.ontology_dir,
                config.root / STATE_DIR,
                apart,
                table,
                mapped.change,  # what the front end says differs (kg/change.py)
            )
        if apart:
            return validate_compiled_apart(
                mapped.triples, mapped.sources, config.shapes_dir, config.ontology_dir
            )
        return validate_compiled(
            mapped.triples, mapped.sources, config.shapes_dir, config.ontology_dir
        )
    progress(f"validating against shapes/ with pySHACL ({pool.describe()})")
    return validate_in_parts(
        mapped.triples,
        mapped.sources,
        config.shapes_dir,
        config.ontology_dir,
        config.base_iri,
        pool,
        config.root / CACHE_DIR if cache else None,
        _every_tenth(progress, "validated"),
    )


def build(
    config: Config,
    out: Path | None = None,
    progress: Progress = _quiet,
    allow_violations: bool = False,
    jobs: int = 0,
    cache: bool = True,
    executor: Executor = LOCAL,
    engine: str = "compiled",
) -> BuildResult:
    """Load, resolve, map, validate and export; the output directory is replaced atomically.

    With violations nothing is written unless `allow_violations` is set. The parts of
    validation and rendering run on `executor` (forked processes, or dask), which is
    opened first: an unreachable scheduler fails before any work.
    """
    with session(executor, jobs) as opened:
        return _build(config, out, progress, allow_violations, cache, opened, engine)


def _build(
    config: Config,
    out: Path | None,
    progress: Progress,
    allow_violations: bool,
    cache: bool,
    opened: Session,
    engine: str = "compiled",
) -> BuildResult:
    from kg.ingest.lint import warnings as lint

    resolution, mapped = build_graph(config, progress, cache)
    warnings = resolution.warnings
    warnings = tuple(lint(resolution.dataset)) if warnings is None else warnings
    pool = opened.pool(len(resolution.dataset.profiles))
    table = _subject_table(config, mapped) if cache else None  # one walk, or a patch (0057)
    report = _validate(config, mapped, progress, pool, cache, engine, table and table.table)
    if not report.conforms and not allow_violations:
        return BuildResult(None, (), len(mapped.triples), resolution, report, warnings)
    _let_go(mapped)
    from kg.publish.export import previous_tree, write_outputs
    from kg.publish.render import render_parts  # Jinja and the writers: only when writing

    out_dir = out or config.out_dir
    progress(f"rendering and writing to {out_dir} ({pool.describe()})")
    render_cache = SignedCache(config.root / RENDER_CACHE_DIR) if cache else None
    manifest = output_manifest(config, out_dir) if cache else None
    previous = previous_tree(out_dir, manifest)
    local = isinstance(pool, ForkPool)  # dask workers may not see this file system

    def parts(staging: Path) -> Iterator[Files]:
        found = render_parts(
            config,
            resolution,
            mapped.triples,
            pool,
            _every_tenth(progress, "rendered"),
            render_cache,
            previous,
            staging if local else None,  # local workers write their files themselves
            table,
        )
        return with_build_record(found, report, staging)

    # --out (or an absolute `out` set through the API) may name any folder; kg.toml's may not
    inside = None if out or Path(config.out).is_absolute() else config.root
    files = write_outputs(out_dir, parts, manifest, inside, previous)  # read once (0068)
    if cache and out is None:  # the project's own output: kg query and kg serve open it
        from kg.query.persist import save_built_store

        progress("writing the query store")
        save_built_store(config, out_dir)
    return BuildResult(out_dir, tuple(files), len(mapped.triples), resolution, report, warnings)


def _let_go(mapped: Mapped) -> None:
    """What the render does not read, let go before its workers fork (each counts this
    process's pages again: decision 0075): where each subject came from (validation's,
    done) and the name keys memoised while resolving (pure memos: made again if asked)."""
    from kg.ingest import names

    mapped.sources = {}
    for memo in (names.clean_person_name, names.name_key, names.text_key, names.honorific_of):
        memo.cache_clear()


def _subject_table(config: Config, mapped: Mapped) -> KeptTable:
    """The build's subject digest table (decision 0057), patched from the kept one."""
    from kg.publish.export import CONTEXT_PREFIXES

    cache = SignedCache(config.root / TABLE_DIR)
    return kept_table(mapped.triples, cache, mapped.change, CONTEXT_PREFIXES)


def query_store(config: Config) -> QueryStore:
    """The graph of data/ as a query store: the persistent store of the last build when
    it is current (kg.query.persist), else the graph built from data/ in memory."""
    from kg.query.persist import open_built_store
    from kg.query.store import QueryStore

    return open_built_store(config) or QueryStore.from_graph(build_graph(config)[1].triples)


def output_manifest(config: Config, out_dir: Path) -> Path:
    """Where the stamps of the files last written to `out_dir` are kept."""
    return config.root / OUTPUTS_DIR / f"{digest(str(out_dir.absolute()))[:16]}.json"


def with_build_record(
    parts: Iterator[Files], report: Report, staging: Path | None = None
) -> Iterator[Files]:
    """The parts, then `build.json`: the verdict on graph.nt, which `kg publish` checks
    (read back from `staging` when a worker wrote it there)."""
    from kg.publish.export import Written
    from kg.query.graph_store import BUILD_RECORD, GRAPH_FILES, build_record

    graph_path, graph = "graph.nt", None
    for part in parts:
        found = [path for path in GRAPH_FILES if path in part]
        if found:  # the first of the places a layout may put it
            graph_path = found[0]
            graph = part[graph_path]
        yield part
    ntriples = staging / graph_path if isinstance(graph, Written) and staging else str(graph or "")
    counts = report.count("Violation"), report.count("Warning")
    yield {BUILD_RECORD: build_record(report.conforms, *counts, graph_path, ntriples)}


def _every_tenth(progress: Progress, verb: str) -> Callable[[int, int], None]:
    def report(done: int, total: int) -> None:
        if done == total or done * 10 // total != (done - 1) * 10 // total:
            progress(f"{verb} {done}/{total} parts")

    return report


def site_parts(
    config: Config, progress: Progress = _quiet, jobs: int = 0
) -> Iterator[dict[str, str]]:
    """The site alone (pages and the per-person downloads they link to), in parts for
    `write_outputs`, paths relative to the site folder."""
    from kg.publish.render import render_parts

    resolution, mapped = build_graph(config, progress)
    jobs = worker_count(jobs, len(resolution.dataset.profiles))
    for part in render_parts(config, resolution, mapped.triples, jobs):
        site = {k[len("site/") :]: v for k, v in part.items() if k.startswith("site/")}
        yield cast("dict[str, str]", site)  # without a cache, every file is text


def embed_markup(config: Config, person: str) -> dict:
    """The JSON-LD a person's page embeds, for pasting into an existing homepage."""
    from kg.errors import UsageError
    from kg.publish.markup import profile_markup

    resolution, mapped = build_graph(config)
    slugs = {p.slug for p in resolution.dataset.profiles}
    if person not in slugs:
        import difflib

        close = difflib.get_close_matches(person, sorted(slugs), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UsageError(f"no profile {person!r}{hint}; profiles: {', '.join(sorted(slugs))}")
    base = config.base_iri
    homepage = next(p.homepage for p in resolution.dataset.profiles if p.slug == person)
    return profile_markup(
        mapped.triples,
        URIRef(scheme.person(base, person)),
        URIRef(scheme.profile(base, person)),
        address=homepage,  # the snippet goes on the homepage: it describes that page
    )


def export_citations(config: Config, person: str, fmt: str) -> str:
    """A person's publications as BibTeX (`bibtex`) or CSL-JSON (`csl`)."""
    from kg.errors import UsageError
    from kg.publish.citation import bibtex_file, csl_file

    resolution = resolve_project(config)
    slugs = sorted(p.slug for p in resolution.dataset.profiles)
    if person not in slugs:
        import difflib

        close = difflib.get_close_matches(person, slugs, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UsageError(f"no profile {person!r}{hint}; profiles: {', '.join(slugs)}")
    return (bibtex_file if fmt == "bibtex" else csl_file)(resolution, person)


def render_cv(
    config: Config, person: str, fmt: str, options: CVOptions | None = None
) -> str | bytes:
    """A person's CV (`kg cv`) from their own profile, with the project's templates/cv/."""
    from kg.publish.cv.formats import render_cv as render

    return render(resolve_project(config), person, fmt, options, config.root / "templates")


def publishable(
    config: Config, out_dir: Path, allow_violations: bool = False
) -> AbstractContextManager[BuiltGraph]:
    """The built graph `kg publish` uploads, open (kg.query.graph_store.published_graph).

    `build.json` is taken at its word only when the tree in `out_dir` is one a build on
    this machine wrote and signed (its output manifest, a signed cache entry) and the
    record is the file that build wrote. Otherwise (a cloned project's `dist/`, a tree
    built with `--no-cache` or elsewhere) the record could say anything: the graph file is
    validated now, with the project's shapes, and that verdict decides."""
    from kg.query.graph_store import published_graph

    verdict = None if _record_signed_here(config, out_dir) else partial(_verdict, config)
    return published_graph(out_dir, allow_violations, verdict)


def _record_signed_here(config: Config, out_dir: Path) -> bool:
    from kg.publish.export import previous_tree, still_there
    from kg.query.graph_store import BUILD_RECORD

    previous = previous_tree(out_dir, output_manifest(config, out_dir))
    if previous is None or BUILD_RECORD not in previous[1]:
        return False
    return still_there(previous, BUILD_RECORD, previous[1][BUILD_RECORD][0])


def _verdict(config: Config, path: Path, file: BinaryIO) -> tuple[bool, int, int]:
    """Whether the N-Triples `file` conforms to the project's shapes, its violations and
    its triples (lines), in one pass over it."""
    from kg.errors import UsageError
    from kg.validate.shacl import validate_ntriples

    file.seek(0)
    lines = [0]

    def read() -> Iterator[str]:
        for line in file:
            lines[0] += 1
            yield line.decode("utf-8")

    try:
        report = validate_ntriples(read(), {}, config.shapes_dir, config.ontology_dir, str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path} as N-Triples: {exc}") from None
    return report.conforms, report.count("Violation"), lines[0]
