"""Stage 1b: drop what the authors marked non-public, before anything is derived from it.

A profile with `public: false` is removed; the fields a profile lists under `private`
are emptied. Because this runs right after loading, nothing later (graph, exports,
pages, snippets, queries) can see the withheld values.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kg.model import Dataset, Profile


def redact_profile(profile: Profile) -> Profile:
    if not profile.private:
        return profile
    cleared: dict[str, Any] = {}  # field name -> its empty value
    for name in profile.private:
        value = getattr(profile, name)
        cleared[name] = [] if isinstance(value, list) else None
    return dataclasses.replace(profile, **cleared)


def redact(data: Dataset) -> Dataset:
    """The dataset without non-public profiles and private fields."""
    profiles = tuple(redact_profile(p) for p in data.profiles if p.public)
    return dataclasses.replace(data, profiles=profiles)
