"""Dirty items (kg.publish.dirty, decision 0044): after random edits, a build that keeps
only the items no change reaches gives the very bytes of a cold build, and a title edit
reaches a few items, not all."""

from __future__ import annotations

import random
import shutil
from array import array
from pathlib import Path

import pytest
from conftest import replace_first, seed_project
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_incremental import _assert_same_tree, _profiles

from kg.config import load_config
from kg.errors import InputError
from kg.pipeline import build
from kg.publish import dirty, olddump, render


@pytest.fixture(scope="module")
def warm(tmp_path_factory) -> Path:
    """The seed project, built once: its caches and dirty-items state are warm."""
    root = seed_project(tmp_path_factory.mktemp("warm") / "project")
    assert build(load_config(root), root / "dist").published
    return root


def _title(root: Path, n: int) -> None:
    replace_first(_profiles(root)[n % 5], r'^(\s*- title: "?)', rf"\1Edit {n}: ")


def _coauthor_added(root: Path, n: int) -> None:
    replace_first(_profiles(root)[n % 5], r"^(\s*authors: \[)", rf"\1Ada Newperson{n}, ")


def _coauthor_removed(root: Path, n: int) -> None:
    replace_first(_profiles(root)[0], r"^(\s*authors: \[.*?)Xinyi Zhang, ", r"\1")


def _name(root: Path, n: int) -> None:
    replace_first(_profiles(root)[n % 5], r'^name: "?', f"name: Dr{n} ")


def _affiliation(root: Path, n: int) -> None:
    replace_first(root / "data" / "organizations.yaml", r'^(\s+name: "?)', rf"\1Renamed{n} ")


def _profile_removed(root: Path, n: int) -> None:
    _profiles(root)[n % 5].unlink()


def _profile_added(root: Path, n: int) -> None:
    first = _profiles(root)[0]
    twin = first.with_name(f"zz-twin-{n}.yaml")
    shutil.copy(first, twin)
    replace_first(twin, r'^name: "?', f"name: Twin{n} ")


def _settings(root: Path, n: int) -> None:
    replace_first(root / "kg.toml", r'^(title = ")', rf"\1Edited {n} ")


EDITS = [
    _title,
    _coauthor_added,
    _coauthor_removed,
    _name,
    _affiliation,
    _profile_removed,
    _profile_added,
    _settings,
]


@settings(
    max_examples=3,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.tuples(st.sampled_from(EDITS), st.integers(0, 9)), min_size=1, max_size=2))
def test_a_build_after_random_edits_equals_a_cold_build(warm, tmp_path_factory, edits):
    work = tmp_path_factory.mktemp("edits")
    root = work / "project"
    shutil.copytree(warm, root, symlinks=True)
    build(load_config(root), root / "dist")  # this copy's own tree and state
    for edit, n in edits:
        edit(root, n)
    config = load_config(root)
    try:
        cold = build(config, work / "cold", cache=False)
    except InputError:  # the edits broke a reference (data/people.yaml's same_as…)
        with pytest.raises(InputError):
            build(config, root / "dist")
        return
    warm = build(config, root / "dist")
    assert warm.published == cold.published
    if cold.published:
        _assert_same_tree(root / "dist", work / "cold")


def test_a_title_edit_reaches_its_publications_authors_and_venue(warm, tmp_path, monkeypatch):
    """data/profiles/hanyu-zhao.yaml's first publication, Rubick (arxiv; authors Xinyi
    Zhang, Hanyu Zhao, Wencong Xiao, Xianyan Jia, Fei Xu, Yong Li, Wei Lin, Fangming Liu),
    renamed: its page, its authors' pages, its venue's page and Hanyu Zhao's page.
    Nothing else: the pages of Hanyu Zhao's seven other publications read of the
    changed profile only the names their citation prints (decision 0078)."""
    root = tmp_path / "project"
    shutil.copytree(warm, root, symlinks=True)
    build(load_config(root), root / "dist")
    seen = []
    made = render._dirty

    def spy(before, *args):
        found = made(before, *args)
        seen.append((before, *found))
        return found

    monkeypatch.setattr(render, "_dirty", spy)
    _title(root, 0)
    assert _profiles(root)[0].name == "hanyu-zhao.yaml"
    build(load_config(root), root / "dist")
    before, reached, _ = seen[-1]
    assert before is not None and reached is not None
    base = "thttps://kg.example.org/"
    people = {i.removeprefix(f"{base}person/") for i in reached.items if "/person/" in i}
    assert people == {
        "xinyi-zhang",
        "wencong-xiao",
        "xianyan-jia",
        "fei-xu",
        "yong-li",
        "wei-lin",
        "fangming-liu",
    }
    works = {
        i.removeprefix(f"{base}publication/").split("-")[0]
        for i in reached.items
        if "/publication/" in i
    }
    assert works == {"rubick"}
    assert {i for i in reached.items if "/venue/" in i} == {f"{base}venue/arxiv"}
    assert len(reached.items) == 1 + 7 + 1 + 1 and "phanyu-zhao" in reached.items
    assert len(before.items) > 300


def test_a_family_name_edit_reaches_the_works_citing_it(warm, tmp_path):
    """Decision 0078: a work's key reads of a profiled co-author only the names its
    citation prints (`author`). Rubick lists Hanyu Zhao as "Hanyu De Zhao"; the profile's
    family name made "De Zhao" splits that name otherwise in its BibTeX: the work's page
    is made again, with the new split."""
    root = tmp_path / "project"
    shutil.copytree(warm, root, symlinks=True)
    profile = root / "data" / "profiles" / "hanyu-zhao.yaml"
    replace_first(
        profile,
        r"^(\s*authors: \[Xinyi Zhang, )Hanyu Zhao,",
        r"\1{name: Hanyu De Zhao, person: hanyu-zhao},",
    )
    config = load_config(root)
    build(config, root / "dist")
    page = next((root / "dist" / "site" / "publication").glob("rubick*.html"))
    before = page.read_text(encoding="utf-8")
    replace_first(profile, r"^family_name: Zhao", "family_name: De Zhao")
    assert build(load_config(root), root / "dist").published
    after = page.read_text(encoding="utf-8")
    assert "De Zhao, Hanyu" in after and "De Zhao, Hanyu" not in before


def test_the_dump_after_an_edit_copies_unchanged_chunks_unless_the_old_one_changed(
    warm, tmp_path, monkeypatch
):
    """The N-Triples dump after an edit copies from the previous tree's dump, and gives
    a cold build's bytes; a previous dump changed in place (same size) is not used."""
    root = tmp_path / "project"
    shutil.copytree(warm, root, symlinks=True)
    build(load_config(root), root / "dist")
    opened = []
    real = olddump.PreviousDump.open

    def spy(*args):
        found = real(*args)
        opened.append(found is not None)
        return found

    monkeypatch.setattr(olddump.PreviousDump, "open", spy)
    config = load_config(root)
    for n, tamper in enumerate((False, True)):
        if tamper:
            dump = (root / "dist").resolve() / "graph.nt"
            data = bytearray(dump.read_bytes())
            data[data.index(b"<http")] = ord("X")  # the same size, other bytes
            dump.write_bytes(bytes(data))
        _title(root, n + 1)
        assert build(config, root / "dist").published
        cold = tmp_path / f"cold{n}"
        build(config, cold, cache=False)
        _assert_same_tree(root / "dist", cold)
    assert opened == [True, False]


def test_a_cold_builds_items_come_with_their_atoms_numbered(tmp_path, monkeypatch) -> None:
    """Decision 0064: a cold build numbers every term an atom may name before the render's
    workers fork, so no item's atoms of a term it has reach the parent as text."""
    root = seed_project(tmp_path / "project")
    texts: list[str] = []
    real = dirty.Packing.add_made

    def spy(self: dirty.Packing, fresh: dict[str, dirty.Deps]) -> None:
        texts.extend(atom for deps in fresh.values() for atom in deps.atoms)
        assert all(deps.numbers for deps in fresh.values())
        real(self, fresh)

    monkeypatch.setattr(dirty.Packing, "add_made", spy)
    assert build(load_config(root), root / "dist").published
    # as text: only records no build has made yet (an unprofiled co-author's names, a
    # page's summary)
    assert texts and {atom.split("\t")[0] for atom in texts} == {"rauthor", "rsummary"}


def test_new_readers_are_found_missing_as_a_set_of_the_old_ones_finds_them():
    """`dirty._missing` looks a few numbers up in the packed bytes (decision 0074): the
    same numbers, in the same order, as a set of the old readers gives, also where a
    number's bytes appear across two of the old words."""
    rng = random.Random(74)
    straddle = array("I", [0x0201_0000, 0x0000_0403]).tobytes()  # 0x04030201 across
    assert dirty._missing(straddle, array("I", [0x0403_0201, 0x0201_0000])) == [0x0403_0201]
    for _ in range(200):
        old = array("I", (rng.randrange(1 << rng.choice((8, 16, 32))) for _ in range(300)))
        numbers = array("I", [*rng.sample(list(old), 2), rng.randrange(1 << 16), 7, 7 << 8])
        have = set(old)
        assert dirty._missing(old.tobytes(), numbers) == [n for n in numbers if n not in have]
