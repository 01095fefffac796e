"""Importers: BibTeX, CSL-JSON, ORCID and dblp records merged into a profile.

`import_file` is the one entry point: parse the file into records
(`kg.imports.record`), plan the merge against the profile (`kg.imports.merge`), edit the
YAML text in place (`kg.imports.yamledit`), check that the project still loads and
resolves with the edited profile, then replace the file atomically (or, with
`dry_run`, only return the diff).
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kg.config import Config
from kg.errors import BadRecordsError, Problem, UsageError
from kg.files import read_regular
from kg.imports.bibtex import parse_bibtex
from kg.imports.csl import parse_csl
from kg.imports.dblp import parse_dblp_xml, with_dblp_names
from kg.imports.fetch import fetch, fetchable, with_full_works
from kg.imports.hugo import parse_hugo, with_owner
from kg.imports.merge import (
    Plan,
    PublicationMerger,
    insertion_index,
    merge_affiliations,
    newest_first,
)
from kg.imports.orcid import parse_orcid
from kg.imports.profilelock import ProfileChanged, folder_lock, unchanged
from kg.imports.record import Parsed, file_error
from kg.imports.yamledit import ProfileText
from kg.ingest.load import load_dataset, load_file
from kg.model import Dataset, Profile, Source
from kg.resolve.identity import resolve


def parse_dblp(text: str, file: str) -> Parsed:
    """dblp gives person XML or BibTeX; the first character tells which."""
    if text.lstrip().startswith("<"):
        return parse_dblp_xml(text, file)
    return with_dblp_names(parse_bibtex(text, file))


PARSERS: dict[str, Callable[[str, str], Parsed]] = {
    "bibtex": parse_bibtex,
    "csl": parse_csl,
    "orcid": parse_orcid,
    "dblp": parse_dblp,
    "hugo": parse_hugo,
}


@dataclass(frozen=True)
class ImportResult:
    """What an import did (or, with `dry_run`, would do)."""

    profile: str  # the profile file, as displayed
    diff: str
    written: bool
    added: int
    filled: int
    matched: int
    conflicts: tuple[str, ...]
    warnings: tuple[str, ...]
    registry_entries: tuple[tuple[str, str], ...]  # (where, YAML to paste)
    skipped: tuple[str, ...]  # malformed entries skipped with `skip_bad`


MAX_IMPORT_BYTES = 16 * 1024 * 1024  # a whole library's .bib is a few MiB


def read_records(source: str, path: Path, skip_bad: bool = False) -> Parsed:
    """Parse one file; malformed entries fail the import unless `skip_bad`."""
    if source not in PARSERS:
        raise UsageError(f"unknown source {source!r}; expected one of {', '.join(PARSERS)}")
    if fetchable(source, str(path)):
        parsed = _fetched(source, str(path))
    elif source == "hugo" and path.is_dir() and not path.is_symlink():
        parsed = _parse_folder(path)
    else:
        parsed = _parse_file(source, path)
    if not (parsed.works or parsed.affiliations or parsed.bad or parsed.warnings):
        message = f"{path}: no entries found; expected a {source} file with publications"
        parsed = dataclasses.replace(parsed, warnings=(message,))
    if parsed.bad and not skip_bad:
        problems = [
            Problem(Source(b.origin.file, b.origin.line, 1), b.origin.key, b.message)
            for b in parsed.bad
        ]
        raise BadRecordsError(problems)
    return parsed


def _parse_file(source: str, path: Path) -> Parsed:
    try:
        data = read_regular(path, MAX_IMPORT_BYTES)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise UsageError(f"{path}: more than {MAX_IMPORT_BYTES:,} bytes; expected an export")
    return _parse(source, _text(data, str(path)), str(path))


MAX_PAGES = 10_000


def _parse_folder(folder: Path) -> Parsed:
    """Hugo Blox's `content/publication/`: every `<slug>/index.md` (links are skipped)."""
    pages = sorted(
        p for p in folder.glob("*/index.md") if not p.is_symlink() and not p.parent.is_symlink()
    )
    if len(pages) > MAX_PAGES:
        raise UsageError(f"{folder}: more than {MAX_PAGES:,} pages; expected a publication folder")
    if not pages:
        raise UsageError(f"{folder}: no */index.md; expected Hugo Blox's content/publication")
    found = [_parse_file("hugo", page) for page in pages]
    return Parsed(
        works=tuple(w for p in found for w in p.works),
        bad=tuple(b for p in found for b in p.bad),
        warnings=tuple(w for p in found for w in p.warnings),
    )


def _parse(source: str, text: str, file: str) -> Parsed:
    try:
        return PARSERS[source](text, file)
    except RecursionError:  # JSON arrays 100,000 deep (Python's parser recurses)
        raise file_error(
            file,
            1,
            "nested too deeply (arrays, objects or markup thousands of levels "
            "deep); expected an export",
        ) from None


def _fetched(source: str, ident: str) -> Parsed:
    """`kg import orcid 0000-…` / `kg import dblp 00/0000`: the record, fetched."""
    text, url = fetch(source, ident, MAX_IMPORT_BYTES)
    parsed = _parse(source, text, url)
    if source == "orcid":
        parsed = with_full_works(
            parsed, text, ident, MAX_IMPORT_BYTES, lambda t, u: _parse(source, t, u)
        )
    return parsed


def _text(data: bytes, file: str) -> str:
    """The file as text: UTF-8 (a byte order mark allowed), no NUL byte; a problem is
    reported at its line and column."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, column = _position(data, exc.start)
        raise file_error(
            file,
            line,
            f"invalid UTF-8 (byte 0x{data[exc.start]:02x} at column {column}); "
            "expected a UTF-8 text file (re-export it as UTF-8)",
            column,
        ) from None
    nul = data.find(b"\x00")
    if nul >= 0:
        line, column = _position(data, nul)
        raise file_error(file, line, f"a NUL byte at column {column}; expected text", column)
    return text


def _position(data: bytes, offset: int) -> tuple[int, int]:
    start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, len(data[start:offset].decode("utf-8", "replace")) + 1


def import_file(
    config: Config,
    source: str,
    path: Path,
    person: str,
    dry_run: bool = False,
    skip_bad: bool = False,
) -> ImportResult:
    """Merge the records of `path` into `data/profiles/<person>.yaml`.

    Holds the profiles folder's lock throughout (kg.imports.profilelock); when another
    program saves the profile meanwhile, the import starts over from the saved text, and
    refuses (nothing written) when it keeps changing."""
    parsed = read_records(source, path, skip_bad)
    display = f"data/profiles/{person}.yaml"
    with folder_lock(config.data_dir / "profiles", "data/profiles/"):
        for _ in range(MAX_ATTEMPTS):
            try:
                return _import_once(config, parsed, person, display, dry_run)
            except ProfileChanged:
                continue
    raise UsageError(
        f"{display} changed while kg import was reading it, {MAX_ATTEMPTS} times in a row "
        "(another program is saving it); nothing written; run the import again"
    )


MAX_ATTEMPTS = 3


def _import_once(
    config: Config, parsed: Parsed, person: str, display: str, dry_run: bool
) -> ImportResult:
    target = config.data_dir / "profiles" / f"{person}.yaml"
    raw = target.read_bytes() if target.is_file() else b""  # before loading: see unchanged()
    data = load_dataset(config.data_dir)
    profile = _profile(data.profiles, person)
    plan = plan_import(data, profile, with_owner(parsed, profile.name))
    old = raw.decode("utf-8-sig")  # line ends kept as written
    new = _edited(target, display, profile, plan) if plan.changes else old
    written = False
    if new != old:
        bom = "\ufeff" if raw.startswith(b"\xef\xbb\xbf") else ""
        written = _check_and_replace(data, target, display, bom + new, dry_run, raw)
    lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(*lines, f"a/{display}", f"b/{display}"))
    return _result(display, diff, written, parsed, plan)


def plan_import(data: Dataset, profile: Profile, parsed: Parsed) -> Plan:
    """What merging the records into the profile would change (nothing is written)."""
    resolution = resolve(data, with_notes=False)
    plan = Plan()
    merger = PublicationMerger(resolution, profile, plan)
    for work in parsed.works:
        merger.merge(work)
    merge_affiliations(resolution, profile, parsed.affiliations, plan)
    if parsed.orcid and not profile.orcid:  # the record read is the profile's own
        plan.top["orcid"] = parsed.orcid
    elif parsed.orcid and parsed.orcid != profile.orcid:
        plan.warnings.append(
            f"the file is ORCID record {parsed.orcid}; the profile says {profile.orcid}"
        )
    return plan


def _result(display: str, diff: str, written: bool, parsed: Parsed, plan: Plan) -> ImportResult:
    filled = set(plan.filled) | set(plan.filled_authors) | {f"top {k}" for k in plan.top}
    return ImportResult(
        profile=display,
        diff=diff,
        written=written,
        added=len(plan.added) + len(plan.added_positions) + len(plan.added_education),
        filled=len(filled) + len(plan.filled_positions) + len(plan.filled_education),
        matched=plan.matched,
        conflicts=tuple(plan.conflicts),
        warnings=tuple(parsed.warnings) + tuple(plan.warnings),
        registry_entries=tuple(plan.registry_entries.items()),
        skipped=tuple(str(b) for b in parsed.bad),
    )


def _profile(profiles: tuple[Profile, ...], person: str) -> Profile:
    for p in profiles:
        if p.slug == person:
            return p
    close = difflib.get_close_matches(person, [p.slug for p in profiles], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise UsageError(f"no profile {person!r} in data/profiles/{hint}")


def _edited(target: Path, display: str, profile: Profile, plan: Plan) -> str:
    doc = ProfileText(target, display)
    doc.add_top(plan.top)
    for index, values in plan.filled.items():  # fills first: an addition may share the line
        doc.fill("publications", index, values)
    for index, ranks in plan.filled_authors.items():
        for rank, marks in ranks.items():
            doc.fill_author(index, rank, marks)
    for index, values in plan.filled_positions.items():
        doc.fill("positions", index, values)
    for index, values in plan.filled_education.items():
        doc.fill("education", index, values)
    by_place: dict[int | None, list[dict]] = {}
    for new in sorted(plan.added, key=lambda e: -(e.get("year") or 0)):
        by_place.setdefault(insertion_index(profile, new.get("year")), []).append(new)
    if not newest_first(profile):  # keep the file's order: new entries at the end
        by_place = {None: plan.added} if plan.added else {}
    for before, entries in by_place.items():
        doc.add_items("publications", entries, before)
    doc.add_items("positions", plan.added_positions)
    doc.add_items("education", plan.added_education)
    return doc.result()


def _check_and_replace(
    data: Dataset, target: Path, display: str, text: str, dry_run: bool, read: bytes
) -> bool:
    """Load and resolve the project with the edited profile; replace the file atomically,
    unless it no longer holds the text `read` (ProfileChanged)."""
    fd, temp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".kg-import", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(temp, stat.S_IMODE(target.stat().st_mode))  # mkstemp made it 0600
        edited = dataclasses.replace(load_file(Path(temp), Profile, display), slug=target.stem)
        profiles = tuple(edited if p.slug == target.stem else p for p in data.profiles)
        resolve(dataclasses.replace(data, profiles=profiles), with_notes=False)
        if dry_run:
            return False
        unchanged(target, read)
        os.replace(temp, target)
        return True
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
