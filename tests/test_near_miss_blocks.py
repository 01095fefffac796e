"""Near misses in big blocks (issue 24, decision 0048): `near_misses` rules pairs of an
initial-and-family block out on their letters before comparing them, and must report
exactly what comparing every pair its blocking keys name would report."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from kg.resolve.identity import (
    FAMILY_ALL_PAIRS,
    PersonEntity,
    _deletions,
    _near_miss,
    _shape,
    near_misses,
)


def _every_pair(persons: dict[str, PersonEntity]) -> list:
    """The blocking keys of `near_misses`' docstring, every pair they name compared."""
    shapes = {p.key: _shape(p.name) for p in persons.values()}
    people = [p for p in persons.values() if shapes[p.key].words]
    family_size: dict[str, int] = {}
    for p in people:
        family = shapes[p.key].words[-1]
        family_size[family] = family_size.get(family, 0) + 1
    notes = []
    for a, b in itertools.combinations(people, 2):
        sa, sb = shapes[a.key], shapes[b.key]
        same_family = sa.words[-1] == sb.words[-1]
        if (
            _deletions(sa.flat) & _deletions(sb.flat)
            or (same_family and sa.words[0][0] == sb.words[0][0])
            or (same_family and family_size[sa.words[-1]] <= FAMILY_ALL_PAIRS)
        ):
            notes += _near_miss(a, b, {}, shapes)
    return sorted(notes, key=lambda n: (n.subject, n.detail))


def _persons(names: list[str]) -> dict[str, PersonEntity]:
    return {f"p{i}": PersonEntity(f"p{i}", name) for i, name in enumerate(names)}


# one family and one initial, more names than FAMILY_ALL_PAIRS: a block compared pairwise
GIVEN = st.sampled_from(["yu", "yun", "yufeng", "yuming", "yuhao", "y", "y. x.", "yi", "yixin"])
MIDDLE = st.sampled_from(["", "ab.", "ac.", "x.", "bd.", "xy."])
FAMILY = st.sampled_from(["wang", "wong", "wangg"])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(GIVEN, MIDDLE, FAMILY), min_size=FAMILY_ALL_PAIRS + 2, max_size=90))
def test_a_big_block_reports_what_every_pair_would(parts):
    persons = _persons([" ".join(w for w in part if w) for part in parts])
    got = sorted(near_misses(persons, {}), key=lambda n: (n.subject, n.detail))
    assert got == _every_pair(persons)


def test_look_alikes_only_the_letters_bound_finds_in_a_big_block():
    """Names of 11 and 14 letters, 2 x 11 / 25 = 0.88 alike: three deletions apart, so only
    their block (initial Y, family Wang, 70 names: no all-pairs family) compares them;
    the initials-only "Y. Wang" still meets the full names."""
    others = [f"Yu{chr(97 + i // 26)}{chr(97 + i % 26)}zzq Wang" for i in range(68)]
    names = ["Yuhaoxy Wang", "Yuhaoxyzab Wang", "Y. Wang", *others]
    notes = {n.subject: n.detail for n in near_misses(_persons(names), {})}
    assert notes["person/p0 ~ person/p1"] == (
        "'Yuhaoxy Wang' and 'Yuhaoxyzab Wang' look alike (similarity 0.88); kept apart"
    )
    assert notes["person/p0 ~ person/p2"].endswith(
        "may be the same (initials against a full name); kept apart"
    )
    assert sorted(notes.values()) == sorted(n.detail for n in _every_pair(_persons(names)))
