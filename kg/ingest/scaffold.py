"""New projects and new profiles: `kg init` and `kg new person`, and a profile written
twice for the same person (one clear error instead of every ambiguous author).

Everything comes from files shipped inside the package (`kg/starter/`): the registries
pre-filled with major CS venues (with their dblp keys) and common organizations (with ROR
and Wikidata identifiers), an example profile and a commented profile skeleton. No network.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from string import Template

from kg.config import CONFIG_FILE, DEFAULT_BASE_IRI, check_base_iri
from kg.errors import Problem, ProjectError, UsageError
from kg.files import NotOurFolder, open_folder, write_new_at
from kg.ingest.catalog import STARTER
from kg.ingest.names import name_key, slugify, text_key
from kg.model import Dataset, Profile, Source

EXAMPLE_SLUG = "alex-example"
GITIGNORE = "dist/\n.dist.versions/\n.kg-cache/\n"
WORKFLOW = ".github/workflows/pages.yml"  # build, then deploy dist/site to GitHub Pages


def init_project(
    target: Path, base_iri: str = DEFAULT_BASE_IRI, title: str = "Researcher profiles"
) -> list[Path]:
    """Write a new project into `target` (created if missing); refuse to touch an existing one."""
    problem = check_base_iri(base_iri)
    if problem:
        raise UsageError(f"--base-iri {base_iri!r}: {problem}")
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a directory")
    for existing in (target / CONFIG_FILE, target / "data"):
        if existing.exists():
            raise UsageError(f"{existing} already exists; kg init only starts new projects")
    files = {
        CONFIG_FILE: _config_text(base_iri, title),
        ".gitignore": GITIGNORE,
        "data/organizations.yaml": _starter("organizations.yaml")
        + _starter("example-organizations.yaml"),
        "data/venues.yaml": _starter("venues.yaml"),
        "data/people.yaml": _starter("people.yaml"),
        f"data/profiles/{EXAMPLE_SLUG}.yaml": _starter("example-profile.yaml"),
        WORKFLOW: _workflow(),
    }
    if (target / ".gitignore").exists():
        del files[".gitignore"]
    try:
        target.mkdir(parents=True, exist_ok=True)  # the folder the user named
    except OSError as exc:
        raise ProjectError(f"cannot make {target}: {exc.strerror or exc}") from None
    written = []
    for name, text in files.items():
        written.append(_write(target, name, text))
    return written


def new_person(data_dir: Path, name: str) -> Path:
    """Write `data/profiles/<slug>.yaml`, a commented skeleton for `name`; never overwrite."""
    name = " ".join(name.split())
    if not name:
        raise UsageError('give the person\'s full name, e.g. kg new person "Mei Lin"')
    slug = slugify(name)
    path = data_dir / "profiles" / f"{slug}.yaml"
    if path.exists():
        raise UsageError(f"{path} already exists; edit it, or pick another name")
    words = name.split()
    given = f"# given_name: {_yaml_text(' '.join(words[:-1]))}\n" if len(words) > 1 else ""
    family = f"# family_name: {_yaml_text(words[-1])}\n" if len(words) > 1 else ""
    text = Template(_starter("person.yaml")).substitute(
        name=_yaml_text(name), slug=slug, given=given, family=family
    )
    return _write(data_dir.parent, f"{data_dir.name}/profiles/{slug}.yaml", text)


def same_name(data: Dataset, name: str) -> list[str]:
    """Where `name` (any spelling kg treats as the same) is already a profile or a
    registered person: `data/profiles/<slug>.yaml` or `data/people.yaml (<key>)`."""
    key = name_key(name)
    found = [
        f"data/profiles/{p.slug}.yaml"
        for p in data.profiles
        if key in {name_key(n) for n in (p.name, *p.alternate_names)}
    ]
    found += [f"data/people.yaml ({k.key})" for k in data.people if name_key(k.name) == key]
    return found


def duplicate_profiles(data: Dataset) -> list[Problem]:
    """A profile that repeats another of the same person: the same name and the same
    ORCID iD, email, homepage or paper. Two different people who share a name differ in
    all of these, and are told apart with `person:` in author lists."""
    problems = []
    seen: dict[str, list[Profile]] = {}
    for profile in sorted(data.profiles, key=lambda p: p.slug):
        for other in seen.get(name_key(profile.name), []):
            shared = _shared(profile, other)
            if shared:
                problems.append(
                    Problem(
                        profile.source or Source(f"data/profiles/{profile.slug}.yaml", 0, 0),
                        "",
                        f"a second profile of {profile.name}: data/profiles/{other.slug}.yaml "
                        f"has the same name and {shared}; keep one profile per person "
                        f"(merge this file into {other.slug}.yaml and delete it)",
                    )
                )
                break
        seen.setdefault(name_key(profile.name), []).append(profile)
    return problems


def _shared(a: Profile, b: Profile) -> str | None:
    if a.orcid and a.orcid == b.orcid:
        return f"the same ORCID iD {a.orcid}"
    if set(a.emails) & set(b.emails):
        return f"the email {sorted(set(a.emails) & set(b.emails))[0]}"
    if a.homepage and a.homepage == b.homepage:
        return f"the homepage {a.homepage}"
    # a paper both list, unless an author list tells two people of that name apart
    titles = {text_key(p.title) for p in b.publications if not _told_apart(p)}
    same = [p.title for p in a.publications if text_key(p.title) in titles and not _told_apart(p)]
    return f"the paper {same[0]!r}" if same else None


def _told_apart(pub) -> bool:
    return any(author.person for author in pub.authors)


def _write(root: Path, rel: str, text: str) -> Path:
    """Write the new file `root/rel`: never over an existing file, never through a link
    (folders on the way are reached without following links, the file is created with
    O_EXCL), so a project that ships `data/profiles` or the file itself as a link to
    elsewhere cannot make kg write there."""
    path = root / rel
    folder, _, name = rel.rpartition("/")
    try:
        fd = open_folder(root, folder, create=True)
        try:
            write_new_at(fd, name, text.encode("utf-8"))
        finally:
            os.close(fd)
    except FileExistsError:
        message = f"{path} already exists (or is a link); kg writes only new files"
        raise UsageError(message) from None
    except NotOurFolder as exc:
        raise ProjectError(f"refusing to write {path}: {exc.strerror or exc}") from None
    except OSError as exc:
        raise ProjectError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def _config_text(base_iri: str, title: str) -> str:
    return (
        "# kg project configuration, written by `kg init`: base IRI, dataset metadata, paths.\n"
        "[kg]\n"
        "# Every node's IRI starts with base_iri: set it to where the site will be published\n"
        f"# (kg build and kg embed warn while it is the example {DEFAULT_BASE_IRI}).\n"
        f"base_iri = {_toml_text(base_iri)}\n"
        f"title = {_toml_text(title)}\n"
        'description = "Researcher profiles published as linked data."\n'
        'license = "https://creativecommons.org/licenses/by/4.0/"\n'
    )


def _workflow() -> str:
    """The GitHub Pages workflow, installing the kg that wrote it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("kg")
    except PackageNotFoundError:  # run from a source tree
        installed = "0.1.0"
    return _starter("github-pages.yml").replace("$version", installed)


def _starter(name: str) -> str:
    return (STARTER / name).read_text(encoding="utf-8")


def _toml_text(text: str) -> str:
    """A TOML basic string (JSON's escapes are valid TOML escapes)."""
    return json.dumps(text, ensure_ascii=False)


def _yaml_text(text: str) -> str:
    """Plain when YAML reads it back as the same text, else double-quoted."""
    plain = text[:1].isalnum() and not any(c in text for c in ":#{}[],&*!|>'\"%@`")
    return text if plain else json.dumps(text, ensure_ascii=False)
