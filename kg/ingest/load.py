"""Stage 1: YAML files under `data/` -> a typed `Dataset`.

Conversion is driven by the model's type hints, so every class in `kg.model` is
checked the same way: unknown keys (with a suggestion), duplicate keys, wrong
types, closed value lists and text formats. All problems of a run are collected
and raised together as one `InputError`.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import types
import typing
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Union

from kg import model
from kg.cache import SignedCache, digest, package_digest
from kg.errors import InputError, Problem
from kg.ingest.names import name_key
from kg.ingest.share import share_texts
from kg.ingest.snapshot import Snapshot, Status, status_of
from kg.ingest.yamlsafe import (
    MappingNode,
    Node,
    ScalarNode,
    SequenceNode,
    node_from_bytes,
    read_node,
    read_yaml_bytes,
    source_of,
)
from kg.iri import http_problem, iri_problem
from kg.model import PRESENT, Dataset, PartialDate, Present, Source

_EMAIL_PART = r"[^@\s<>()\"\\{}|^`\x00-\x1f\x7f-\x9f]+"
FORMATS = {
    "email": (
        re.compile(rf"^{_EMAIL_PART}@{_EMAIL_PART}\.[A-Za-z]{{2,}}$"),
        "an email address (no spaces, quotes or any of <>(){}|\\^`)",
    ),
    "url": (re.compile(r"^https?://[^\s<>\"{}|\\^`\x00-\x1f\x7f-\x9f]+$"), "an http(s) URL"),
    "doi": (  # no `.` or `..` segment: https://doi.org/10.1/../x would leave the DOI
        re.compile(r"^10\.[0-9]{4,9}/(?!(?:[^/]*/)*\.\.?(?:/|$))[^\s\x00-\x1f\x7f-\x9f]+$"),
        "a DOI like 10.1145/3575693.3575721 (no `.` or `..` segment)",
    ),
    "arxiv": (
        re.compile(r"^([0-9]{4}\.[0-9]{4,5}|[a-z-]+(\.[A-Z]{2})?/[0-9]{7})(v[0-9]+)?$"),
        "an arXiv identifier like 2408.08586 or cs/0112017",
    ),
    "orcid": (
        re.compile(r"^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$"),
        "an ORCID iD like 0000-0002-1825-0097",
    ),
    "lang": (re.compile(r"^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$"), "a BCP 47 language tag"),
    "key": (
        re.compile(r"^(?=.{1,100}$)[a-z0-9]+(-[a-z0-9]+)*$"),
        "a key of lower-case letters, digits, - (at most 100)",
    ),
    "ror": (
        re.compile(r"^0[a-hj-km-np-tv-z0-9]{6}[0-9]{2}$"),
        "a ROR identifier like 02v51f717 (without https://ror.org/; its last two digits "
        "are a checksum)",
    ),
    "wikidata": (re.compile(r"^Q[1-9][0-9]*$"), "a Wikidata item like Q16955"),
    "file": (
        re.compile(
            r"^(https?://[^\s<>\"{}|\\^`\x00-\x1f\x7f-\x9f]+"
            r"|static/(?!(.*/)?\.\.?(/|$))[^\s<>\"{}|\\^`\x00-\x1f\x7f-\x9f]*[^/\s])$"
        ),
        "an http(s) URL, or the path of a file in the project's static/ folder like "
        "static/img/ann.jpg",
    ),
    "dblp": (
        re.compile(r"^(conf|journals|series)/[a-z0-9][a-z0-9-]*$"),
        "a dblp venue key like conf/osdi or journals/pacmpl",
    ),
}
# Formats whose text becomes (part of) an IRI, checked as the IRI it becomes (RFC 3987).
# A DOI may hold <, > or spaces-free oddities; kg.graph.mapping percent-encodes it, so only the
# format is checked here.
IRI_OF = {"url": "", "email": "mailto:", "orcid": "https://orcid.org/"}
NULLS = frozenset({"", "~", "null"})
YEARS = (1000, 2999)  # every year and date: a four-digit year in the Gregorian calendar
INTEGER_RANGES = {"year": YEARS, "ordinal": (1, 9999)}
MAX_PROBLEMS_PER_FILE = 100
MAX_SLUG = 100  # file and folder names built from it stay far below the usual 255 bytes
SHORTHAND: dict[type, str] = {model.PersonRef: "name"}


class _Context:
    """Collects problems while converting one file (the first MAX_PROBLEMS_PER_FILE in
    full, then only a count, so a file of a million mistakes is reported quickly)."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []
        self.count = 0
        self.first_dropped: Source | None = None

    @property
    def full(self) -> bool:
        return self.count >= MAX_PROBLEMS_PER_FILE

    def report(self, node: Node, path: str, message: str) -> None:
        self.count += 1
        if self.count <= MAX_PROBLEMS_PER_FILE:
            self.problems.append(Problem(source_of(node, self.file), path, message))
        elif self.first_dropped is None:
            self.first_dropped = source_of(node, self.file)

    def all_problems(self) -> list[Problem]:
        """The problems kept, then one line counting those that were only counted."""
        dropped = self.count - len(self.problems)
        if not dropped or self.first_dropped is None:
            return list(self.problems)
        more = Problem(self.first_dropped, "", f"... and {dropped} more problem(s) in this file")
        return [*self.problems, more]


def _describe(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    text = node.value if len(node.value) <= 40 else node.value[:37] + "..."
    return f"{text!r}"


def _is_plain(node: ScalarNode) -> bool:
    """Unquoted, not a block scalar (libyaml reports '' where PyYAML reports None)."""
    return not node.style


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and _is_plain(node) and node.value in NULLS


# --------------------------------------------------------------------------- conversion


def convert(node: Node, hint: Any, path: str, ctx: _Context, meta: Mapping | None = None) -> Any:
    """Convert `node` to a value of type `hint`; report and return None when it cannot."""
    kind, args = _kind(hint)
    if kind == "scalar":
        return _convert_leaf(node, hint, path, ctx, meta or _NO_META)
    if kind == "union":
        return _convert_union(node, args, path, ctx, meta or _NO_META)
    if kind == "list":
        return _convert_list(node, args[0], path, ctx, meta or _NO_META)
    if kind == "dict":
        return _convert_dict(node, args, path, ctx)
    return _convert_record(node, hint, path, ctx)


_NO_META: Mapping = types.MappingProxyType({})


def _convert_leaf(node: Node, hint: Any, path: str, ctx: _Context, meta: Mapping) -> Any:
    """A single value (text, number, flag, date) from a scalar node."""
    if node.__class__ is not ScalarNode and not isinstance(node, ScalarNode):
        ctx.report(node, path, f"found {_describe(node)}; expected {_expected(hint, meta)}")
        return None
    if not node.style and node.value in NULLS:  # `key:`, `~` or `null` where a value is required
        ctx.report(
            node,
            path,
            f"found no value; expected {_expected(hint, meta)} "
            "(quote it, e.g. 'null', if you mean the text)",
        )
        return None
    return _convert_scalar(node, hint, path, ctx, meta)


@cache
def _kind(hint: Any) -> tuple[str, tuple]:
    """How a type hint converts (cached: the model's hints are few and fixed)."""
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return "union", typing.get_args(hint)
    if origin is list:
        return "list", typing.get_args(hint)
    if origin is dict:
        return "dict", typing.get_args(hint)
    if dataclasses.is_dataclass(hint) and hint not in (PartialDate, Present):
        return "record", ()
    return "scalar", ()


def _convert_union(node: Node, args: tuple, path: str, ctx: _Context, meta: Mapping) -> Any:
    nullable, present, option = _union_plan(args)
    if nullable and _is_null(node):
        return None
    if present and isinstance(node, ScalarNode) and node.value.lower() == "present":
        return PRESENT
    return convert(node, option, path, ctx, meta)


@cache
def _union_plan(args: tuple) -> tuple[bool, bool, Any]:
    """Whether a union admits None, whether it admits `present`, and the type of the rest."""
    options = [a for a in args if a is not type(None)]
    return type(None) in args, Present in options, next(a for a in options if a is not Present)


def _convert_list(node: Node, item: Any, path: str, ctx: _Context, meta: Mapping) -> tuple | list:
    if not isinstance(node, SequenceNode):
        ctx.report(node, path, f"found {_describe(node)}; expected a list")
        return []
    if _kind(item)[0] == "record":  # what `convert` would call, one call less per item
        records = [_convert_record(c, item, f"{path}[{i}]", ctx) for i, c in enumerate(node.value)]
        return [v for v in records if v is not None]
    values = [convert(child, item, f"{path}[{i}]", ctx, meta) for i, child in enumerate(node.value)]
    return [v for v in values if v is not None]


def _convert_dict(node: Node, args: tuple, path: str, ctx: _Context) -> dict:
    key_type, value_type = args
    if not isinstance(node, MappingNode):
        ctx.report(node, path, f"found {_describe(node)}; expected a mapping")
        return {}
    result: dict = {}
    for key_node, value_node in node.value:
        key = convert(key_node, key_type, path, ctx)
        if key is None:
            continue
        if key in result:
            ctx.report(key_node, f"{path}.{key}", "duplicate key")
            continue
        value = convert(value_node, value_type, f"{path}.{key}", ctx)
        if value is not None:
            result[key] = value
    return result


def _convert_scalar(node: ScalarNode, hint: Any, path: str, ctx: _Context, meta: Mapping) -> Any:
    text = node.value
    try:
        if hint is str:
            return _check_text(text, meta)
        if hint is bool:
            if _is_plain(node) and text in ("true", "false"):
                return text == "true"
            raise ValueError("true or false")
        if hint is int:
            if _is_plain(node) and re.fullmatch(r"-?(0|[1-9]\d*)", text) and len(text) < 12:
                return _in_range(int(text), path)
            raise ValueError("a whole number (no quotes, no leading zeros)")
        if hint is PartialDate:
            date = PartialDate.parse(text)
            _in_range(date.year, "year")
            return date
    except ValueError as exc:
        ctx.report(node, path, f"found {_describe(node)}; expected {exc}")
        return None
    raise TypeError(f"no conversion for {hint!r}")  # a bug in the model, not in the data


def _in_range(number: int, path: str) -> int:
    """Numbers are bounded so that no input can make later stages do unbounded work
    (a chart with a bar per year from 1 to 2000000000)."""
    field = path.rsplit(".", 1)[-1]
    low, high = INTEGER_RANGES.get(field, (-(10**9), 10**9))
    if not low <= number <= high:
        what = "a year" if field == "year" else "a number"
        raise ValueError(f"{what} from {low} to {high} (got {number})")
    return number


def _check_text(text: str, meta: Mapping) -> str:
    text = text.strip()
    if not text:
        raise ValueError("non-empty text")
    choices = meta.get("choices")
    if choices and text not in choices:
        raise ValueError("one of " + ", ".join(choices) + _suggest(text, choices))
    fmt = meta.get("format")
    if fmt:
        pattern, what = FORMATS[fmt]
        problem = None
        if fmt == "file" and text.startswith(("http://", "https://")):
            problem = http_problem(text)  # an address, not a file in static/
        elif fmt in IRI_OF:  # first: it says which character is wrong
            problem = http_problem(text) if fmt == "url" else iri_problem(IRI_OF[fmt] + text)
        if problem:
            raise ValueError(f"{what}: {problem}")
        if not pattern.match(text) or (fmt == "ror" and not ror_checksum_ok(text)):
            raise ValueError(what)
    return text


_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def ror_checksum_ok(ror: str) -> bool:
    """ROR identifiers end in an ISO 7064 Mod 97-10 checksum of their base-32 number."""
    number = 0
    for char in ror[:7]:
        number = number * 32 + _CROCKFORD.index(char)
    return 98 - (number * 100) % 97 == int(ror[7:])


def _expected(hint: Any, meta: Mapping) -> str:
    if hint is PartialDate:
        return "a date (YYYY, YYYY-MM or YYYY-MM-DD)"
    names = {str: "text", int: "a whole number", bool: "true or false"}
    return names.get(hint, "a single value")


def _suggest(word: str, candidates: typing.Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


@cache
def _fields(cls: type) -> dict[str, tuple[Any, dataclasses.Field]]:
    hints = typing.get_type_hints(cls, vars(model))
    return {
        f.name: (hints[f.name], f)
        for f in dataclasses.fields(cls)
        if not f.metadata.get("internal")
    }


def _convert_record(node: Node, cls: type, path: str, ctx: _Context) -> Any:
    if isinstance(node, ScalarNode) and cls in SHORTHAND and not _is_null(node):
        return _convert_record_shorthand(node, cls, path, ctx)
    if not isinstance(node, MappingNode):
        ctx.report(node, path, f"found {_describe(node)}; expected a mapping ({cls.__name__})")
        return None
    fields = _fields(cls)
    values: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, ScalarNode) else None
        if key not in fields:
            where = f"{path}.{key}" if path else str(key)
            hint = (
                ""
                if ctx.full
                else _suggest(str(key), fields) or f"; expected one of {', '.join(fields)}"
            )
            ctx.report(key_node, where, f"unknown key {key!r}{hint}")
        elif key in values:
            ctx.report(key_node, f"{path}.{key}" if path else key, f"duplicate key {key!r}")
        else:
            hint, fld = fields[key]
            where = f"{path}.{key}" if path else key
            values[key] = convert(value_node, hint, where, ctx, fld.metadata)
    required = _required(cls)
    for name in required:
        if name not in values:
            ctx.report(node, f"{path}.{name}" if path else name, "missing required key")
    values = {k: v for k, v in values.items() if v is not None or k not in required}
    named = cls is not model.PersonRef or "name" not in values
    if not named and not _has_name(values["name"], ctx, node, path):
        return None
    try:  # with problems, a partial record still lets references be checked in the same run
        return cls(**values, source=source_of(node, ctx.file))
    except TypeError:  # a required field is missing or was wrong
        return None


@cache
def _required(cls: type) -> tuple[str, ...]:
    """The names of the fields of `cls` a file must give, in the model's order."""
    return tuple(name for name, (_, fld) in _fields(cls).items() if _is_required(fld))


def _has_name(name: str, ctx: _Context, node: Node, path: str) -> bool:
    """A co-author's name must keep a letter once markers (*, †) and titles (Prof.) go."""
    if name_key(name):
        return True
    ctx.report(
        node,
        path,
        f"found {name!r}; expected a person's name (nothing is left once markers such as * "
        "and titles such as Prof. are removed)",
    )
    return False


def _convert_record_shorthand(node: ScalarNode, cls: type, path: str, ctx: _Context) -> Any:
    name = node.value.strip()  # what _check_text answers for text with no format
    if not name:
        ctx.report(node, path, "found ''; expected a name")
        return None
    if cls is model.PersonRef and not _has_name(name, ctx, node, path):
        return None
    return cls(**{SHORTHAND[cls]: name}, source=source_of(node, ctx.file))


def _is_required(fld: dataclasses.Field) -> bool:
    no_default = fld.default is dataclasses.MISSING
    return no_default and fld.default_factory is dataclasses.MISSING


# --------------------------------------------------------------------------- files


def load_file(path: Path, cls: type, display: str) -> Any:
    """Load one YAML file holding a single record of type `cls`."""
    record, problems = _load_file(path, cls, display)
    if problems:
        raise InputError(problems)
    return record


def _load_file(
    path: Path, cls: type, display: str, parse_cache: Snapshot | None = None
) -> tuple[Any, list[Problem]]:
    """The record (partial when there are problems, None when unusable) and the problems."""
    return _parsed(path, display, cls.__name__, parse_cache, lambda n: _record(n, cls, display))


def _record(node: Node, cls: type, display: str) -> tuple[Any, list[Problem]]:
    ctx = _Context(display)
    record = convert(node, cls, "", ctx)
    return record, ctx.all_problems()


def load_registry(path: Path, cls: type, display: str) -> tuple:
    """Load a registry file: a mapping from key to a record of type `cls`."""
    records, problems = _load_registry(path, cls, display)
    if problems:
        raise InputError(problems)
    return records


def _parsed(
    path: Path,
    display: str,
    kind: str,
    parse_cache: Snapshot | None,
    convert_node: typing.Callable[[Node], tuple[Any, list[Problem]]],
) -> tuple[Any, list[Problem]]:
    """`convert_node` of the file's YAML, or, for bytes read before without problems,
    the value kept in `parse_cache` (keyed by the bytes, the path and kg's code)."""
    if parse_cache is None or not parse_cache.enabled:
        return convert_node(read_node(path, display))
    status = status_of(path)  # before reading: a later change gives another status
    data = read_yaml_bytes(path, display)
    key = digest("parse", package_digest(), kind, display, data)

    def again(before: int) -> tuple[Status, str] | None:  # the same, later (Snapshot.settle)
        status = status_of(path)
        if status is None or max(status[4], status[5]) >= before:
            return None
        data = read_yaml_bytes(path, display)
        return status, digest("parse", package_digest(), kind, display, data)

    kept = parse_cache.same_bytes(display, key, status, again)
    if kept is not None:
        return kept
    value = convert_node(node_from_bytes(data, display))
    if not value[1]:
        parse_cache.converted(key, value)
    return value


def _load_registry(
    path: Path, cls: type, display: str, parse_cache: Snapshot | None = None
) -> tuple[tuple, list[Problem]]:
    return _parsed(
        path, display, f"{cls.__name__}s", parse_cache, lambda n: _registry(n, cls, display)
    )


def _registry(node: Node, cls: type, display: str) -> tuple[tuple, list[Problem]]:
    ctx = _Context(display)
    if not isinstance(node, MappingNode):
        ctx.report(node, "", f"found {_describe(node)}; expected a mapping from key to entry")
        return (), ctx.all_problems()
    records = []
    seen: set[str] = set()
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, ScalarNode) else ""
        if not FORMATS["key"][0].match(key):
            ctx.report(key_node, key, f"found {_describe(key_node)}; expected {FORMATS['key'][1]}")
            continue
        if key in seen:
            ctx.report(key_node, key, f"duplicate key {key!r}")
            continue
        seen.add(key)
        record = convert(value_node, cls, key, ctx)
        if record is not None:
            records.append(dataclasses.replace(record, key=key))
    return tuple(records), ctx.all_problems()


REGISTRIES = (
    ("organizations", model.Organization),
    ("venues", model.Venue),
    ("people", model.KnownPerson),
)


def load_dataset(data_dir: Path) -> Dataset:
    """Load every profile and registry under `data_dir`, reporting all problems at once."""
    data, problems = load_dataset_partially(data_dir)
    if problems:
        raise InputError(problems)
    return data


def load_dataset_partially(
    data_dir: Path, parse_cache: SignedCache | None = None
) -> tuple[Dataset, list[Problem]]:
    """`load_dataset_keyed` without the files' keys."""
    data, problems, _ = load_dataset_keyed(data_dir, parse_cache)
    return data, problems


def load_dataset_keyed(
    data_dir: Path,
    parse_cache: SignedCache | None = None,
    previous: dict[str, tuple[str, Any]] | None = None,
) -> tuple[Dataset, list[Problem], dict[str, str]]:
    """Every profile and registry entry that could be read (partly, where a mapping has
    problems) and every problem found; for checking references in the same run.

    With `parse_cache`, files whose bytes were read before without problems are not
    parsed again (a build of 10k profiles after one edit parses one), and the loader's
    snapshot (kg.ingest.snapshot) gives back, without reading them, the records of the
    files whose status did not change since the last build. The keys: each file read
    without problems (as `data/...`) -> the parse cache's key of its bytes (none
    without a cache): a rebuild compares them to tell which files changed. `previous`,
    when given, gets for each file whose bytes changed since the snapshot the key and
    the record the snapshot had (kg.graph.front compares a changed profile with it)."""
    if not data_dir.is_dir():
        problem = Problem(Source(str(data_dir), 0, 0), "", "data directory not found")
        raise InputError([problem])
    _RESOLVED.clear()
    snap = Snapshot(parse_cache, data_dir) if parse_cache is not None else None
    problems: list[Problem] = []
    found: dict[str, tuple] = {}
    for name, cls in REGISTRIES:
        path = data_dir / f"{name}.yaml"
        display = _display(path, data_dir)
        found[name] = _collect(problems, data_dir, snap, _load_registry, path, cls, display)
    profiles = [
        _collect(problems, data_dir, snap, _load_profile, path, data_dir)
        for path in _profile_paths(data_dir, problems)
    ]
    news_file = data_dir / "news.yaml"
    news = None
    if news_file.exists() or news_file.is_symlink():  # optional
        display = _display(news_file, data_dir)
        news = _collect(problems, data_dir, snap, _load_file, news_file, model.News, display)
    data = Dataset(
        profiles=tuple(p for p in profiles if p is not None),
        organizations=found["organizations"] or (),
        venues=found["venues"] or (),
        people=found["people"] or (),
        news=tuple(news.news) if news is not None else (),
    )
    _share(data, snap, problems)
    keys = {display: entry[1] for display, entry in snap.new.items()} if snap else {}
    if previous is not None and snap is not None:
        previous.update(snap.previous)
    return data, problems, keys


def _share(data: Dataset, snap: Snapshot | None, problems: list[Problem]) -> None:
    """Equal texts of different files as one object (a 10k dataset: a tenth of the
    strings); the snapshot's records share theirs already, with its table of texts.
    Then the snapshot keeps this run's records."""
    registries = [*data.organizations, *data.venues, *data.people]
    records = [*data.profiles, *data.news]
    if snap is None or not snap.found or snap.rewrites(not problems):
        texts = share_texts(registries)  # anew: no text of a file gone is kept
        share_texts(records, texts)
    else:
        texts = share_texts(_fresh(registries, snap), snap.texts)
        share_texts(_fresh(records, snap), texts)
    if snap is not None:
        snap.save(not problems, texts)


def _fresh(records: list[Any], snap: Snapshot) -> list[Any]:
    """The records not taken from the snapshot (by the file they were read from)."""
    return [r for r in records if r.source is None or r.source.file not in snap.kept]


def _profile_paths(data_dir: Path, problems: list[Problem]) -> list[Path]:
    """data/profiles/*.yaml; a missing or empty folder and *.yml files are problems
    (a build must not publish an empty graph over the last one, nor skip a file)."""
    folder = data_dir / "profiles"
    where = Source(str(Path("data") / "profiles"), 0, 0)
    if not folder.is_dir():
        problems.append(Problem(where, "", "folder not found; expected one .yaml file per person"))
        return []
    for path in sorted(folder.glob("*.yml"), key=_name):
        problems.append(
            Problem(
                Source(_display(path, data_dir), 0, 0),
                "",
                f"profiles end in .yaml; rename it to {path.stem}.yaml",
            )
        )
    paths = sorted(folder.glob("*.yaml"), key=_name)  # one folder: as Path's own order
    if not paths:
        problems.append(Problem(where, "", "no profiles; expected one .yaml file per person"))
    return paths


def _name(path: Path) -> str:
    return path.name


def _outside(path: Path, data_dir: Path) -> bool:
    """Whether `path` is (or links to) a file outside data/: such a file is never read,
    so a link to a secret cannot be published or quoted in an error message. (A file
    that is not a link is where its folder is: the folder is resolved once per run.)"""
    if path.is_symlink():
        return not path.resolve().is_relative_to(data_dir.resolve())
    return not _resolved(path.parent).is_relative_to(_resolved(data_dir))


def _resolved(folder: Path) -> Path:
    """`folder.resolve()`, once per load (`_RESOLVED` is cleared when a load starts)."""
    found = _RESOLVED.get(folder)
    if found is None:
        found = _RESOLVED[folder] = folder.resolve()
    return found


_RESOLVED: dict[Path, Path] = {}


def _load_profile(
    path: Path, data_dir: Path, parse_cache: Snapshot | None = None
) -> tuple[model.Profile | None, list[Problem]]:
    display = _display(path, data_dir)
    if not FORMATS["key"][0].match(path.stem) or len(path.stem) > MAX_SLUG:
        problem = Problem(
            Source(display, 0, 0),
            "",
            f"file name {path.stem[:80]!r} is not a slug; expected at most {MAX_SLUG} "
            "lower-case letters, digits and -, e.g. yihao-zhao.yaml",
        )
        return None, [problem]
    profile, problems = _load_file(path, model.Profile, display, parse_cache)
    return (dataclasses.replace(profile, slug=path.stem) if profile else None), problems


def _collect(
    problems: list[Problem], data_dir: Path, snap: Snapshot | None, fn: Any, path: Path, *args: Any
) -> Any:
    """What `fn(path, *args, snap)` read from one file, its problems noted; None when the
    file cannot be read at all (or is a link out of data/, which is never read). A file
    the snapshot has unchanged is not read; one read without problems is recorded."""
    if fn is _load_registry and not path.exists() and not path.is_symlink():
        return ()
    display = _display(path, data_dir)
    if _outside(path, data_dir):
        message = "is a link to a file outside data/; expected a file inside data/"
        problems.append(Problem(Source(display, 0, 0), "", message))
        return None
    kept = snap.unchanged(path, display) if snap is not None and snap.enabled else None
    if kept is not None:
        return kept
    try:
        value, found = fn(path, *args, snap)
    except InputError as exc:  # the file cannot be read or parsed at all
        problems.extend(exc.problems)
        return None
    problems.extend(found)
    if snap is not None and not found and value is not None:
        snap.keep(display, value)
    return value


def _display(path: Path, data_dir: Path) -> str:
    """`data/...` for a file under `data_dir` (its path as given, else)."""
    text, base = str(path), str(data_dir) + os.sep
    if text.startswith(base):  # the common case, without pathlib's parsing (20,000 at 10k)
        return os.path.join("data", text[len(base) :])
    try:
        return str(Path("data") / path.relative_to(data_dir))
    except ValueError:
        return str(path)
