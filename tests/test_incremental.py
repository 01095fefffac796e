"""Incremental builds: after an edit, a build with the caches of the previous build
gives the very bytes of a cold build, and renders and writes only what changed."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import replace_first, seed_project

from kg.cache import SignedCache, digest
from kg.config import load_config
from kg.pipeline import PARSE_CACHE_DIR, RENDER_CACHE_DIR, build


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".kg-output"
    }


def _assert_same_tree(got: Path, want: Path) -> None:
    got_files, want_files = _tree(got), _tree(want)
    assert sorted(got_files) == sorted(want_files), "different file lists"
    differ = [k for k in want_files if got_files[k] != want_files[k]]
    assert not differ, f"{len(differ)} files differ from a cold build, e.g. {differ[:5]}"


@pytest.fixture(scope="module")
def warm_project(tmp_path_factory) -> Path:
    """The seed project, built once: its caches are warm."""
    root = seed_project(tmp_path_factory.mktemp("warm") / "project")
    result = build(load_config(root), root / "dist")
    assert result.published
    return root


def _copy(warm: Path, target: Path) -> Path:
    shutil.copytree(warm, target, symlinks=True)
    return target


def _profiles(root: Path) -> list[Path]:
    return sorted((root / "data" / "profiles").glob("*.yaml"))


def _edit_title(root: Path) -> None:
    replace_first(_profiles(root)[0], r'^(\s*- title: "?)', r"\1Revised: ")


def _edit_year(root: Path) -> None:
    """A local edit other than a title (decision 0052): the kept resolution is patched."""
    replace_first(_profiles(root)[0], r"^(    year: )2024$", r"\g<1>2023")


def _edit_name(root: Path) -> None:
    replace_first(_profiles(root)[1], r'^name: "?', "name: Dr ")


def _edit_organization(root: Path) -> None:
    replace_first(root / "data" / "organizations.yaml", r'^(\s+name: "?)', r"\1The ")


def _remove_profile(root: Path) -> None:
    _profiles(root)[-1].unlink()


def _add_profile(root: Path) -> None:
    first = _profiles(root)[0]
    shutil.copy(first, first.with_name("zz-twin.yaml"))
    replace_first(first.with_name("zz-twin.yaml"), r'^name: "?', "name: Twin ")


def _rename_project(root: Path) -> None:  # the projects page (a keyed site page, 0055)
    replace_first(
        root / "data" / "profiles" / "yinmin-zhong.yaml", r"\{name: LoongServe", "{name: Loong"
    )


EDITS = {
    "publication title": _edit_title,
    "publication year": _edit_year,
    "project renamed": _rename_project,
    "person name": _edit_name,
    "organization name": _edit_organization,
    "profile removed": _remove_profile,
    "profile added": _add_profile,
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_build_after_an_edit_equals_a_cold_build(warm_project, tmp_path, edit):
    root = _copy(warm_project, tmp_path / "project")
    EDITS[edit](root)
    config = load_config(root)
    warm = build(config, root / "dist")
    cold = build(config, tmp_path / "cold", cache=False)
    assert warm.published == cold.published
    if cold.published:
        _assert_same_tree(root / "dist", tmp_path / "cold")


def test_unchanged_files_are_reused_not_rewritten(warm_project, tmp_path):
    """A second build in place renders from the cache and links unchanged files to the
    previous tree: same inode, while the edited person's page is a new file."""
    root = _copy(warm_project, tmp_path / "project")
    config = load_config(root)
    build(config, root / "dist")  # stamps for this copy's own tree
    first = {k: (root / "dist" / k).stat().st_ino for k in _tree(root / "dist")}
    _edit_title(root)
    build(config, root / "dist")
    second = {k: (root / "dist" / k).stat().st_ino for k in _tree(root / "dist")}
    same = [k for k in second if first.get(k) == second[k]]
    assert len(same) > len(second) * 0.8, f"only {len(same)} of {len(second)} files reused"
    assert "graph.nt" not in same  # the dump holds the new title
    edited = _profiles(root)[0].stem
    assert f"site/person/{edited}.html" not in same


def test_a_site_page_changed_in_the_previous_tree_is_made_again(warm_project, tmp_path):
    """The keyed site pages (network, projects, directories: decision 0055) are kept
    from the previous tree only while its file is untouched: one changed in place is
    rendered again, and the tree is a cold build's."""
    root = _copy(warm_project, tmp_path / "project")
    config = load_config(root)
    build(config, root / "dist")  # stamps for this copy's own tree
    for name in ("network.html", "projects.html", "organizations.html"):
        page = root / "dist" / "site" / name
        assert page.is_file()
        page.write_text("tampered", encoding="utf-8")  # in place: the inode is kept
    build(config, root / "dist")
    cold = build(config, tmp_path / "cold", cache=False)
    assert cold.published
    _assert_same_tree(root / "dist", tmp_path / "cold")


@pytest.mark.parametrize("spare", [False, True], ids=["new folder", "recycled spare"])
def test_kept_files_changed_in_the_previous_tree_are_made_again(warm_project, tmp_path, spare):
    """An item no edit reaches keeps its files only as the writer takes them (decision
    0059): a page or CV changed in place in the previous tree (some of an item's files
    taken first, then one that fails) is rendered again, also when the staging folder
    is the recycled spare, and the tree is a cold build's."""
    root = _copy(warm_project, tmp_path / "project")
    config = load_config(root)
    build(config, root / "dist")  # stamps for this copy's own tree
    if spare:
        build(config, root / "dist")  # the next build fills the replaced tree
        assert (root / ".dist.versions" / "spare").is_dir()
    else:  # a build with no spare (e.g. removed) links the kept files into a new folder
        shutil.rmtree(root / ".dist.versions" / "spare")
    site = root / "dist" / "site"
    changed = sorted(site.glob("cv/*.html")) + sorted(site.glob("bib/*.bib"))[:1]
    changed += sorted(site.glob("organization/*.html"))[:1]
    assert len(changed) > 3
    for page in changed:
        with page.open("r+b") as file:  # in place: the inode is kept, the size too
            first = file.read(1)
            file.seek(0)
            file.write(b"X" if first != b"X" else b"Y")
    _edit_title(root)
    build(config, root / "dist")
    cold = build(config, tmp_path / "cold", cache=False)
    assert cold.published
    _assert_same_tree(root / "dist", tmp_path / "cold")


def test_a_cache_entry_from_elsewhere_is_never_unpickled(warm_project, tmp_path):
    """A project may come with a .kg-cache/ (a clone, an archive): entries not signed
    with this user's secret are misses, so their pickles never run."""
    root = _copy(warm_project, tmp_path / "project")
    shutil.rmtree(root / ".kg-cache")
    config = load_config(root)
    build(config, root / "dist")  # learn the keys this project uses
    planted = tmp_path / "planted"

    class Payload:
        def __reduce__(self):
            return (os.mkdir, (str(planted),))

    for folder in (PARSE_CACHE_DIR, RENDER_CACHE_DIR):
        foreign = SignedCache(root / folder, secret=b"somebody else's secret" * 2)
        for entry in (root / folder).glob("*/*"):
            foreign.put(entry.name, Payload())
    build(config, tmp_path / "out")
    assert not planted.exists()
    cold = build(config, tmp_path / "cold", cache=False)
    assert cold.published
    _assert_same_tree(tmp_path / "out", tmp_path / "cold")


def test_signed_cache_round_trip_and_tamper(tmp_path):
    cache = SignedCache(tmp_path, secret=b"k" * 32)
    key = digest("a", b"b")
    cache.put(key, {"x": "y"})
    assert SignedCache(tmp_path, secret=b"k" * 32).get(key) == {"x": "y"}
    path = next(tmp_path.glob(f"*/{key}"))
    data = bytearray(path.read_bytes())
    data[-2] ^= 1
    path.write_bytes(bytes(data))
    assert SignedCache(tmp_path, secret=b"k" * 32).get(key) is None
    cache.prune(keep=())
    assert not list(tmp_path.glob("*/*"))
    assert digest("ab", "c") != digest("a", "bc")


def test_a_mistake_is_reported_on_every_build_not_cached(warm_project, tmp_path):
    from kg.errors import InputError

    root = _copy(warm_project, tmp_path / "project")
    replace_first(_profiles(root)[0], r"^name: ", "nmae: ")
    config = load_config(root)
    for _ in range(2):
        with pytest.raises(InputError) as caught:
            build(config, root / "dist")
        assert any("nmae" in str(p) for p in caught.value.problems)


def test_kept_entries_after_edits_equal_a_cold_build(warm_project, tmp_path, monkeypatch):
    """Every person's entries kept between builds (decision 0062: the seeds have no
    person with 100 publications): a build keeps their places, a title edit's build
    their texts (of the people it reaches), then a year edit (the paper moves to
    another year on the person's and the list pages) is built with them: a cold
    build's tree."""
    from kg.publish import render

    monkeypatch.setattr(render, "FRAGMENTS_FROM", 1)
    root = _copy(warm_project, tmp_path / "project")
    config = load_config(root)
    build(config, root / "dist")  # the stores' places
    _edit_title(root)
    build(config, root / "dist")  # the reached people's texts
    _edit_year(root)
    _edit_works(root)  # entries kept by their works' digests (decision 0078)
    warm = build(config, root / "dist")
    cold = build(config, tmp_path / "cold", cache=False)
    assert warm.published and cold.published
    _assert_same_tree(root / "dist", tmp_path / "cold")


def _edit_works(root: Path) -> None:
    """In the first profile: an author added to its first work and another removed
    from it, and its second work removed (its block, up to the next work)."""
    first = _profiles(root)[0]
    replace_first(first, r"^(\s*authors: \[Xinyi Zhang, )", r"\1Ada Newperson, ")
    replace_first(first, r"^(\s*authors: \[.*?)Wencong Xiao, ", r"\1")
    text = first.read_text(encoding="utf-8")
    gone = re.sub(r'^  - title: "Llumnix.*?(?=^  - title: )', "", text, count=1, flags=re.M | re.S)
    assert gone != text
    first.write_text(gone, encoding="utf-8")
