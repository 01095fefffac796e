"""The block table kept between builds (decision 0045): with a render cache, each range's
files live in `.kg-cache/blocks` and are read in place; a rebuild writes only the
ranges an edit touched, and a file changed, replaced or planted since is a miss (never
read as the range, never written through)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import seed_project

from kg.config import load_config
from kg.pipeline import build
from kg.publish import blocks

DUMPS = ("graph.nt", "graph.ttl", "graph.jsonld")


@pytest.fixture(scope="module")
def small_ranges():
    """Ranges of about 25 subjects: the seed project's table has many."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(blocks, "RANGE_SIZE", 25)
        yield


@pytest.fixture(scope="module")
def built(tmp_path_factory, small_ranges) -> Path:
    root = seed_project(tmp_path_factory.mktemp("kept") / "project")
    assert build(load_config(root), root / "dist").published
    return root


def _kept(root: Path) -> dict[str, tuple[int, int, int]]:
    folder = root / ".kg-cache" / "blocks"
    return {
        p.name: (p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_ctime_ns)
        for p in folder.iterdir()
    }


def _dumps(root: Path, out: str = "dist") -> dict[str, bytes]:
    return {name: (root / out / name).read_bytes() for name in DUMPS}


def _title_edit(root: Path) -> None:
    first = sorted((root / "data" / "profiles").glob("*.yaml"))[0]
    text = first.read_text(encoding="utf-8")
    edited = re.sub(r'^(\s*- title: "?)', r"\1Revised ", text, count=1, flags=re.M)
    assert edited != text
    first.write_text(edited, encoding="utf-8")


def test_a_rebuild_writes_only_the_ranges_an_edit_touched(built, tmp_path, small_ranges):
    before = _kept(built)
    assert len(before) > 10 and all(name.endswith((".ttl", ".jsonld")) for name in before)
    root = tmp_path / "project"
    shutil.copytree(built, root, symlinks=True)  # new inodes: every range a miss once
    config = load_config(root)
    build(config, root / "dist")
    first = _kept(root)
    assert sorted(first) == sorted(before)
    build(config, root / "dist")  # no change: not one range file written again
    assert _kept(root) == first
    _title_edit(root)
    build(config, root / "dist")
    after = _kept(root)
    same = [name for name in after if first.get(name) == after[name]]
    assert 0 < len(after) - len(same) < len(after) / 2, (len(same), len(after))
    assert not set(first) - set(after) or len(set(first) - set(after)) < len(first) / 2
    cold = build(config, tmp_path / "cold", cache=False)
    assert cold.published
    assert _dumps(root) == _dumps(tmp_path, "cold")


def test_a_changed_or_planted_range_file_is_a_miss(built, tmp_path, small_ranges):
    """A kept file written in place (its times set back), or replaced by a link, is not
    the range: the dumps are as before, the link's target is never written."""
    root = tmp_path / "project"
    shutil.copytree(built, root, symlinks=True)
    config = load_config(root)
    build(config, root / "dist")
    want = _dumps(root)
    folder = root / ".kg-cache" / "blocks"
    changed, linked = sorted(folder.glob("*.ttl"))[:2]
    times = changed.stat()
    changed.write_bytes(b"#" * times.st_size)
    os.utime(changed, ns=(times.st_atime_ns, times.st_mtime_ns))
    outside = tmp_path / "outside.ttl"
    outside.write_bytes(b"<a> <b> <c> .\n")
    linked.unlink()
    linked.symlink_to(outside)
    build(config, root / "dist")
    assert _dumps(root) == want
    assert outside.read_bytes() == b"<a> <b> <c> .\n"
    assert not linked.is_symlink() and not changed.read_bytes().startswith(b"##")


def test_a_blocks_folder_that_is_a_link_is_not_used(built, tmp_path, small_ranges):
    root = tmp_path / "project"
    shutil.copytree(built, root, symlinks=True)
    shutil.rmtree(root / ".kg-cache" / "blocks")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".kg-cache" / "blocks").symlink_to(elsewhere)
    build(load_config(root), root / "dist")
    assert list(elsewhere.iterdir()) == []
    assert _dumps(root) == _dumps(built)
