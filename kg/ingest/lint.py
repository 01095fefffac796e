"""Warnings about data that loads but probably does not say what its author meant.

They never stop a build; `kg check` prints them with the errors (and in its JSON and GitHub
formats as warnings).

A build keeps each profile's warnings by the key of its file's bytes (`kept`, decision
0076: one signed entry of the parse cache), so a rebuild looks again only at the
profiles whose files changed. Invariant: a profile's warnings are a function of its
record as the build makes it ready, that is of its file's bytes (the parse cache's key
names them) and of the registries and static files (`inputs`: the table is dropped
when they differ); `kept` gives what `warnings` gives, in the same order.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from kg.cache import SignedCache, digest, package_digest
from kg.errors import Problem
from kg.model import ACCOUNT_SERVICES, Dataset, PersonRef, Profile, Source

VERSION = "1"


def warnings(data: Dataset) -> list[Problem]:
    found: list[Problem] = []
    for profile in data.profiles:
        found += profile_warnings(profile)
    return sorted(found)


def profile_warnings(profile: Profile) -> list[Problem]:
    """One profile's warnings, in the order `warnings` finds them."""
    found = [_starred(ref, path) for ref, path in _people(profile) if "*" in ref.name]
    return found + _accounts(profile) + _mixed_scripts(profile)


def _key(data_dir: Path) -> str:
    return digest("lint", VERSION, package_digest(), str(data_dir.resolve()))


def kept(
    cache: SignedCache, data_dir: Path, data: Dataset, keys: dict[str, str], inputs: str
) -> list[Problem]:
    """`warnings(data)`, a profile's taken from the last build's table when its file's
    key (`keys`: each data file's) is there (see the module); the table kept anew."""
    key = _key(data_dir)
    last = cache.get(key)
    table = last[1] if isinstance(last, tuple) and len(last) == 2 and last[0] == inputs else {}
    table = table if isinstance(table, dict) else {}
    now: dict[str, tuple[Problem, ...]] = {}
    found: list[Problem] = []
    for profile in data.profiles:
        file = keys.get(f"data/profiles/{profile.slug}.yaml")
        mine = table.get(file) if file is not None else None
        if not isinstance(mine, tuple):
            mine = tuple(profile_warnings(profile))
        if file is not None:
            now[file] = mine
        found += mine
    if now != table:
        cache.put(key, (inputs, now))
    return sorted(found)


def _people(profile: Profile) -> Iterator[tuple[PersonRef, str]]:
    for i, pub in enumerate(profile.publications):
        for j, ref in enumerate(pub.authors):
            yield ref, f"publications[{i}].authors[{j}]"
    for i, e in enumerate(profile.education):
        yield from ((r, f"education[{i}].advisors") for r in e.advisors)
        yield from ((r, f"education[{i}].co_advisors") for r in e.co_advisors)
    for i, pos in enumerate(profile.positions):
        yield from ((r, f"positions[{i}].mentors") for r in pos.mentors)
        yield from ((r, f"positions[{i}].supervisors") for r in pos.supervisors)


def _starred(ref: PersonRef, path: str) -> Problem:
    name = " ".join(ref.name.replace("*", " ").split())
    message = (
        f"the name {ref.name!r} contains '*', which stays in the printed name; to mark equal "
        f"contribution write {{name: {name}, equal_contribution: true}}"
    )
    return Problem(ref.source or Source("?", 0, 0), path, message)


def _accounts(profile: Profile) -> list[Problem]:
    found = []
    for i, account in enumerate(profile.accounts):
        if account.url or account.service.lower() in ACCOUNT_SERVICES:
            continue
        message = (
            f"kg does not know the address of {account.service!r} accounts, so none is "
            f"published; add url: (known services: {', '.join(sorted(ACCOUNT_SERVICES))})"
        )
        found.append(Problem(account.source or Source("?", 0, 0), f"accounts[{i}]", message))
    return found


# Scripts whose letters are look-alikes of one another (UTS #39 "confusables"): a word
# mixing them, such as "Zh\u0430o" with a Cyrillic \u0430, is almost always a copy-paste accident or
# a spoof, and resolves to another person than the one it looks like.
CONFUSABLE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC")


def _mixed_scripts(profile: Profile) -> list[Problem]:
    names = [(profile.name, "name", profile.source)]
    names += [(ref.name, path, ref.source) for ref, path in _people(profile)]
    found = []
    for name, path, source in names:
        odd = mixed_script_letters(name)
        if odd:
            letters = ", ".join(f"{unicodedata.name(c).title()} U+{ord(c):04X}" for c in odd)
            message = (
                f"the name {name!r} mixes scripts within a word ({letters}): it looks like "
                "another name but is a different person to kg; retype it in one script"
            )
            found.append(Problem(source or Source("?", 0, 0), path, message))
    return found


def mixed_script_letters(name: str) -> list[str]:
    """The letters of `name` outside the main script of their word, where a word mixes
    look-alike scripts (Latin with Cyrillic or Greek, ...); [] for a clean name."""
    odd: list[str] = []
    if name.isascii():  # ASCII letters are all Latin: the common case, at no cost
        return odd
    for word in name.split():
        scripts = [(_script(c), c) for c in word if c.isalpha()]
        kinds = [k for k, _ in scripts if k in CONFUSABLE_SCRIPTS]
        if len(set(kinds)) > 1:
            main = max(set(kinds), key=lambda k: (kinds.count(k), k == "LATIN"))
            odd += [c for k, c in scripts if k in CONFUSABLE_SCRIPTS and k != main]
    return odd


@lru_cache(maxsize=4096)  # names use few letters: each is looked up once per process
def _script(char: str) -> str:
    return unicodedata.name(char, "UNKNOWN").split(" ", 1)[0]
