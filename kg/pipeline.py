"""The Python API: the straight line load -> resolve -> map -> validate -> export."""

from __future__ import annotations

import datetime
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rdflib import URIRef

from kg.config import Config
from kg.errors import InputError, Problem
from kg.load import load_dataset_partially
from kg.map import Mapped, map_graph
from kg.model import Dataset, PartialDate
from kg.redact import redact
from kg.resolve import Resolution, reference_problems, resolve
from kg.validate import Report, validate_in_parts  # pySHACL only when a part is validated
from kg.workers import worker_count

Progress = Callable[[str], None]


def _quiet(message: str) -> None:
    return None


def load_project(config: Config) -> Dataset:
    """Load data/; on mistakes, raise InputError with the structural problems and, in the
    same run, the unknown organizations and venues named by what could be read."""
    data, problems = load_dataset_partially(config.data_dir)
    if problems:
        raise InputError([*problems, *reference_problems(data)])
    return data


@dataclass(frozen=True)
class CheckReport:
    """Everything `kg check` finds in one run: errors (which stop a build) and warnings."""

    dataset: Dataset
    errors: tuple[Problem, ...]
    warnings: tuple[Problem, ...]


def check_project(config: Config) -> CheckReport:
    """Load and resolve everything; collect every error and warning instead of raising."""
    from kg.lint import warnings

    data, problems = load_dataset_partially(config.data_dir)
    if problems:
        problems += reference_problems(data)
    else:
        try:
            resolve(data)
        except InputError as exc:
            problems += exc.problems
    return CheckReport(data, InputError(problems).problems, tuple(warnings(data)))


def check(config: Config) -> Dataset:
    """Load and resolve everything, raising InputError with every problem found."""
    data = load_project(config)
    resolve(data)
    return data


def resolve_project(config: Config) -> Resolution:
    return resolve(redact(load_project(config)))


@dataclass(frozen=True)
class BuildResult:
    out_dir: Path | None
    files: tuple[str, ...]
    triples: int
    resolution: Resolution
    report: Report

    @property
    def published(self) -> bool:
        return self.out_dir is not None


def profile_dates(config: Config, data: Dataset) -> dict[str, PartialDate]:
    """When each profile last changed: SOURCE_DATE_EPOCH, else its last git commit, else mtime.

    Reproducible: the same checkout gives the same dates, so rebuilds are byte-identical.
    """
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        day = _day(int(epoch))
        return {p.slug: day for p in data.profiles}
    committed = _git_dates(config.data_dir / "profiles")
    dates = {}
    for p in data.profiles:
        path = config.data_dir / "profiles" / f"{p.slug}.yaml"
        stamp = committed.get(path.name)
        dates[p.slug] = _day(stamp if stamp is not None else int(path.stat().st_mtime))
    return dates


def _day(epoch: int) -> PartialDate:
    moment = datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC)
    return PartialDate(moment.year, moment.month, moment.day)


def _git_dates(folder: Path) -> dict[str, int]:
    """File name -> commit time of its last commit (one git call for the folder)."""
    try:
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "."],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        log = subprocess.run(
            ["git", "log", "--format=%x00%ct", "--name-only", "--", "."],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    changed = {Path(line[3:]).name for line in dirty.splitlines()}
    dates: dict[str, int] = {}
    for chunk in log.split("\x00")[1:]:
        stamp, *names = chunk.strip().splitlines() or ["0"]
        for name in names:
            dates.setdefault(Path(name).name, int(stamp))
    return {k: v for k, v in dates.items() if k not in changed}


CACHE_DIR = ".kg-cache/validation"


def build_graph(config: Config, progress: Progress = _quiet) -> tuple[Resolution, Mapped]:
    progress("loading data/")
    data = redact(load_project(config))
    progress(f"resolving {len(data.profiles)} profiles")
    resolution = resolve(data)
    progress("mapping to RDF")
    return resolution, map_graph(resolution, config.base_iri, profile_dates(config, data))


def validate_project(
    config: Config, progress: Progress = _quiet, jobs: int = 0, cache: bool = True
) -> tuple[Resolution, Report]:
    resolution, mapped = build_graph(config, progress)
    jobs = worker_count(jobs, len(resolution.dataset.profiles))
    return resolution, _validate(config, mapped, progress, jobs, cache)


def _validate(config: Config, mapped: Mapped, progress: Progress, jobs: int, cache: bool) -> Report:
    progress(f"validating against shapes/ ({jobs} job{'s' if jobs != 1 else ''})")
    return validate_in_parts(
        mapped.triples,
        mapped.sources,
        config.shapes_dir,
        config.ontology_dir,
        config.base_iri,
        jobs,
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
) -> BuildResult:
    """Load, resolve, map, validate and export; the output directory is replaced atomically.

    With violations nothing is written unless `allow_violations` is set.
    """
    resolution, mapped = build_graph(config, progress)
    jobs = worker_count(jobs, len(resolution.dataset.profiles))
    report = _validate(config, mapped, progress, jobs, cache)
    if not report.conforms and not allow_violations:
        return BuildResult(None, (), len(mapped.triples), resolution, report)
    from kg.export import write_outputs
    from kg.render import render_parts  # Jinja and the writers: only when writing

    out_dir = out or config.out_dir
    progress(f"rendering and writing to {out_dir} ({jobs} job{'s' if jobs != 1 else ''})")
    parts = render_parts(
        config, resolution, mapped.triples, jobs, _every_tenth(progress, "rendered")
    )
    files = write_outputs(out_dir, parts)
    return BuildResult(out_dir, tuple(files), len(mapped.triples), resolution, report)


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
    from kg.render import render_parts

    resolution, mapped = build_graph(config, progress)
    jobs = worker_count(jobs, len(resolution.dataset.profiles))
    for part in render_parts(config, resolution, mapped.triples, jobs):
        yield {k[len("site/") :]: v for k, v in part.items() if k.startswith("site/")}


def embed_markup(config: Config, person: str) -> dict:
    """The JSON-LD a person's page embeds, for pasting into an existing homepage."""
    from kg.errors import UsageError
    from kg.markup import profile_markup

    resolution, mapped = build_graph(config)
    slugs = {p.slug for p in resolution.dataset.profiles}
    if person not in slugs:
        import difflib

        close = difflib.get_close_matches(person, sorted(slugs), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UsageError(f"no profile {person!r}{hint}; profiles: {', '.join(sorted(slugs))}")
    base = config.base_iri
    return profile_markup(
        mapped.triples, URIRef(f"{base}person/{person}"), URIRef(f"{base}profile/{person}")
    )
