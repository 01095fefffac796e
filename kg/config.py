"""The project's configuration, read from one place: `kg.toml` at the project root.

The project root is the directory given with `--project`, else the nearest of the
current directory and its parents that holds `kg.toml` or a `data/` directory.
`shapes/`, `queries/` and `ontology/` come from the project when it has them, else
from the copies shipped inside the `kg` package (so an installed wheel works).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kg.errors import ProjectError
from kg.files import read_regular
from kg.iri import http_problem, iri_problem

PACKAGE_DIR = Path(__file__).resolve().parent
CONFIG_FILE = "kg.toml"
DEFAULT_BASE_IRI = "https://kg.example.org/"


NAV_LINKS = {  # name in kg.toml -> (label, page)
    "people": ("People", "index.html"),
    "publications": ("Publications", "publications.html"),
    "network": ("Co-authors", "network.html"),
    "projects": ("Projects", "projects.html"),
    "search": ("Search", "search.html"),
    "organizations": ("Organizations", "organizations.html"),
    "venues": ("Venues", "venues.html"),
    "topics": ("Topics", "topics.html"),
    "data": ("Data", "dataset.html"),
}
DIRECTORY_NAMES = ("organizations", "venues", "topics")
DARK_MODES = ("auto", "off")


@dataclass(frozen=True)
class SiteConfig:
    """The `[site]` table of kg.toml: how the site looks, without copying templates."""

    nav: tuple[str, ...] = ("people", "publications", "network", "search", "data")
    accent: str = "#1f4e8c"  # links, bars and dots; at least 4.5:1 against white
    dark_mode: str = "auto"  # auto: follow the visitor's system setting; off: always light
    directories: tuple[str, ...] = DIRECTORY_NAMES  # which directory pages exist
    logo: str | None = None  # a file of static/, shown beside the title
    tagline: str | None = None  # a line under the title on the front page


@dataclass(frozen=True)
class Config:
    """Where things are and how IRIs are minted."""

    root: Path
    base_iri: str = DEFAULT_BASE_IRI
    title: str = "Researcher profiles"
    description: str = "Researcher profiles published as linked data."
    license: str = "https://creativecommons.org/licenses/by/4.0/"
    sparql_endpoint: str | None = None
    out: str = "dist"
    site: SiteConfig = field(default_factory=SiteConfig)

    @property
    def example_base(self) -> bool:
        """True while the base IRI is still the example one (IRIs nobody can dereference)."""
        return self.base_iri == DEFAULT_BASE_IRI

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def out_dir(self) -> Path:
        return self.root / self.out

    @property
    def shapes_dir(self) -> Path:
        return resource_dir(self.root, "shapes")

    @property
    def queries_dir(self) -> Path:
        return resource_dir(self.root, "queries")

    @property
    def builtin_queries_dir(self) -> Path | None:
        """The stored queries shipped with kg."""
        return builtin_queries_dir()

    @property
    def project_queries_dir(self) -> Path | None:
        """The project's own `queries/`, which adds to (and on a name clash wins over) the
        built-in ones."""
        folder = self.root / "queries"
        builtin = self.builtin_queries_dir
        if not folder.is_dir() or (builtin and folder.resolve() == builtin.resolve()):
            return None
        return folder

    @property
    def ontology_dir(self) -> Path:
        return resource_dir(self.root, "ontology")


def resource_dir(root: Path, name: str) -> Path:
    """The project's own `name/` directory, else the one shipped with the package."""
    for candidate in (root / name, PACKAGE_DIR / "_resources" / name, PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise ProjectError(f"no {name}/ directory in {root} and none shipped with kg")


def builtin_queries_dir() -> Path | None:
    """The stored queries shipped with kg (installed, or beside the package in a checkout)."""
    for candidate in (PACKAGE_DIR / "_resources" / "queries", PACKAGE_DIR.parent / "queries"):
        if candidate.is_dir():
            return candidate
    return None


def find_root(start: Path) -> Path:
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / CONFIG_FILE).is_file() or (folder / "data").is_dir():
            return folder
    raise ProjectError(
        f"no kg project here: neither {start} nor a parent holds {CONFIG_FILE} or data/ "
        "(run kg in a project directory or pass --project DIR)"
    )


def load_config(project: Path | None = None) -> Config:
    """Read `kg.toml` of the project (found from the current directory by default)."""
    root = project.resolve() if project else find_root(Path.cwd())
    if project and not root.is_dir():
        raise ProjectError(f"project directory {project} does not exist")
    path = root / CONFIG_FILE
    if not path.exists() and not path.is_symlink():
        return Config(root=root)
    text = _read_config(path)
    try:
        document = tomllib.loads(text)
        table = document.get("kg", {})
    except tomllib.TOMLDecodeError as exc:  # "... (at line 3, column 12)"
        where = re.search(r"\(at line (\d+), column (\d+)\)$", str(exc))
        reason = str(exc)[: where.start()].strip() if where else str(exc)
        at = f":{where.group(1)}:{where.group(2)}" if where else ""
        raise ProjectError(f"{path}{at}: invalid TOML: {reason}") from None
    site = site_config(document.get("site", {}), path, text)
    if not isinstance(table, dict):
        raise ProjectError(f"{path}:{_line_of(text, 'kg')}: kg must be a [kg] table")
    known = {f.name for f in fields(Config)} - {"root", "site"}
    unknown = sorted(set(table) - known)
    if unknown:
        line = _line_of(text, unknown[0])
        raise ProjectError(
            f"{path}:{line}: unknown setting(s) {', '.join(unknown)} in [kg]; "
            f"expected {', '.join(sorted(known))}"
        )
    for key, value in table.items():
        problem = _setting_problem(key, value, root)
        if problem:
            raise ProjectError(f"{path}:{_line_of(text, key)}: [kg] {key}: {problem}")
    return Config(root=root, site=site, **table)


def site_config(table: object, path: Path, text: str) -> SiteConfig:
    """The `[site]` table, every value checked (kg.toml may come from someone else)."""
    if not isinstance(table, dict):
        raise ProjectError(f"{path}:{_line_of(text, 'site')}: site must be a [site] table")
    known = {f.name for f in fields(SiteConfig)}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ProjectError(
            f"{path}: unknown setting(s) {', '.join(unknown)} in [site]; "
            f"expected {', '.join(sorted(known))}"
        )
    values: dict[str, Any] = {}
    for key, value in table.items():
        checked = _site_value(key, value)
        if isinstance(checked, _Bad):
            raise ProjectError(f"{path}:{_line_of(text, key)}: [site] {key}: {checked.problem}")
        values[key] = checked
    return SiteConfig(**values)


@dataclass(frozen=True)
class _Bad:
    problem: str


def _site_value(key: str, value: object) -> object:
    if key in ("nav", "directories"):
        choices = tuple(NAV_LINKS) if key == "nav" else DIRECTORY_NAMES
        if not isinstance(value, list) or not all(v in choices for v in value):
            return _Bad(f"expected a list of names from {', '.join(choices)}; found {value!r}")
        return tuple(dict.fromkeys(value))
    if not isinstance(value, str) or not value.strip():
        return _Bad(f"expected text in quotes, found {value!r}")
    if key == "accent":
        if not re.fullmatch(r"#[0-9a-fA-F]{6}", value):
            return _Bad(f"expected a colour like '#1f4e8c', found {value!r}")
        ratio = contrast(value, "#ffffff")
        if ratio < 4.5:
            return _Bad(
                f"{value} on white has a contrast of {ratio:.1f}:1; links need at least 4.5:1 "
                "(choose a darker colour)"
            )
        return value.lower()
    if key == "dark_mode" and value not in DARK_MODES:
        return _Bad(f"expected one of {', '.join(DARK_MODES)}, found {value!r}")
    if key == "logo" and not re.fullmatch(r"static/(?!(.*/)?\.\.?(/|$))[^\s\\]+", value):
        return _Bad(f"expected a file of the project's static/ folder, found {value!r}")
    return value


def contrast(a: str, b: str) -> float:
    """The WCAG contrast ratio of two `#rrggbb` colours."""

    def luminance(colour: str) -> float:
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


MAX_CONFIG_BYTES = 1024 * 1024


def _read_config(path: Path) -> str:
    """kg.toml as text: a regular file (not a FIFO, not a device) of at most 1 MiB,
    strict UTF-8; errors name the file (and the line)."""
    try:
        data = read_regular(path, MAX_CONFIG_BYTES)
    except OSError as exc:
        raise ProjectError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ProjectError(f"{path}: more than {MAX_CONFIG_BYTES} bytes; expected a small file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].replace(b"\r\n", b"\n").replace(b"\r", b"\n").count(b"\n") + 1
        raise ProjectError(f"{path}:{line}: invalid UTF-8 at byte {exc.start}") from None


def check_base_iri(base: str) -> str | None:
    """What is wrong with a base IRI, or None when it can be used (kg.toml and kg init)."""
    problem = http_problem(base)
    if problem is None and not base.endswith(("/", "#")):
        problem = "an IRI ending in / or #"
    return (
        f"{base!r} must be an http(s) IRI ending in / or #: expected {problem}" if problem else None
    )


def _setting_problem(key: str, value: object, root: Path) -> str | None:
    """What is wrong with one [kg] setting, or None. kg.toml comes with the project
    (perhaps from someone else), so every value that becomes an IRI or a path is checked."""
    if not isinstance(value, str):
        return f"expected text in quotes, found {type(value).__name__} {value!r}"
    if key == "base_iri":
        return check_base_iri(value)
    if key in ("license", "sparql_endpoint"):
        problem = iri_problem(value) if key == "license" else http_problem(value)
        return f"{value!r} is not usable: expected {problem}" if problem else None
    if key == "out":
        target = (root / value).resolve()
        if target == root.resolve() or not target.is_relative_to(root.resolve()):
            return (
                f"{value!r} is not a folder inside the project; expected one like 'dist' "
                "(to write elsewhere, pass --out on the command line)"
            )
    if key in ("title", "description") and not value.strip():
        return "expected non-empty text"
    return None


def _line_of(text: str, key: str) -> int:
    """The line of `key = ...` in the TOML text (1 when it cannot be found)."""
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(rf"\s*{re.escape(key)}\s*=", line):
            return number
    return 1
