"""Warnings about data that loads but probably does not say what its author meant.

They never stop a build; `kg check` prints them with the errors (and in its JSON and GitHub
formats as warnings).
"""

from __future__ import annotations

from collections.abc import Iterator

from kg.errors import Problem
from kg.model import ACCOUNT_SERVICES, Dataset, PersonRef, Profile, Source


def warnings(data: Dataset) -> list[Problem]:
    found: list[Problem] = []
    for profile in data.profiles:
        found += [_starred(ref, path) for ref, path in _people(profile) if "*" in ref.name]
        found += _accounts(profile)
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
