"""The replaced output tree kept as `.dist.versions/spare` and filled again by the next
build (kg.publish.outdir, kg.publish.recycled, decision 0050): the tree it gives is the
one a new folder would get, whatever was done to the spare; nothing is written or
removed through a link in it; a build killed while filling it leaves the old tree."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MINI, REPO

from kg.cli import main
from kg.publish.outdir import CRASH_ENV, SPARE

ENV = {**os.environ, "PYTHONPATH": str(REPO), "SOURCE_DATE_EPOCH": "1700000000"}
PROFILE = Path("data") / "profiles" / "a-b.yaml"


def _tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry: a file's bytes, a folder as "dir" (links would show as "link")."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            found[rel] = "link"
        elif path.is_dir():
            found[rel] = "dir"
        else:
            found[rel] = path.read_bytes()
    return found


def _edit(project: Path, old: str, new: str) -> None:
    path = project / PROFILE
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


@pytest.fixture(scope="module")
def trees(tmp_path_factory) -> tuple[Path, dict, dict]:
    """A project built twice (so it has a spare: the tree its second build replaced;
    the first went into a new folder and linked its files as the spare, decision 0079),
    its tree, and the tree a new folder gets for the edited data."""
    base = tmp_path_factory.mktemp("recycled")
    project = base / "project"
    shutil.copytree(MINI, project)
    command = [sys.executable, "-m", "kg", "--project", str(project), "build"]
    assert subprocess.run(command, env=ENV).returncode == 0
    same = _tree(project / "dist")
    assert subprocess.run(command, env=ENV).returncode == 0
    assert (project / ".dist.versions" / SPARE).is_dir()
    fresh = base / "edited"
    shutil.copytree(MINI, fresh)
    _edit(fresh, "Ann Bee", "Ann Bea-Changed")
    command = [sys.executable, "-m", "kg", "--project", str(fresh), "build", "--no-cache"]
    assert subprocess.run(command, env=ENV).returncode == 0
    return project, same, _tree(fresh / "dist")


def _copy(project: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(project, copy, symlinks=True)
    return copy


def test_rebuilds_that_fill_the_spare_give_the_tree_of_a_new_folder(trees, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    project, same, edited = trees
    project = _copy(project, tmp_path)
    _edit(project, "Ann Bee", "Ann Bea-Changed")
    assert main(["--project", str(project), "build"]) == 0
    assert _tree(project / "dist") == edited
    _edit(project, "Ann Bea-Changed", "Ann Bee")
    assert main(["--project", str(project), "build"]) == 0
    assert _tree(project / "dist") == same
    versions = sorted(p.name for p in (project / ".dist.versions").iterdir())
    assert versions[0] == ".lock" and versions[1] == SPARE and len(versions) == 3


def test_a_tampered_spare_is_never_followed_and_gives_the_same_tree(trees, tmp_path, monkeypatch):
    """Links (to a file and to a folder outside), a file changed in place, a file where a
    folder goes, a folder where a file goes, an extra file and a FIFO, put in the spare:
    the new tree is a new folder's, and what the links point to is untouched."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    project, same, _ = trees
    project = _copy(project, tmp_path)
    spare = project / ".dist.versions" / SPARE
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    files = sorted(p for p in spare.rglob("*") if p.is_file() and p.parent != spare)
    linked, changed, boxed = files[0], files[1], files[2]
    linked.unlink()
    linked.symlink_to(outside / "secret.txt")
    changed.unlink()
    changed.write_bytes(b"changed in the spare\n")  # a new file: not the current tree's
    folder = boxed.parent
    shutil.rmtree(folder)
    folder.write_text("a file where a folder goes\n", encoding="utf-8")
    (spare / ".kg-output").unlink()
    (spare / ".kg-output").mkdir()  # a folder where a file goes
    (spare / "extra.html").write_text("not kg's\n", encoding="utf-8")
    (spare / "linked-folder").symlink_to(outside)
    os.mkfifo(spare / "fifo")
    assert main(["--project", str(project), "build"]) == 0
    assert _tree(project / "dist") == same
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "secret\n"


def test_a_spare_that_is_a_link_is_removed_not_followed(trees, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    project, same, _ = trees
    project = _copy(project, tmp_path)
    spare = project / ".dist.versions" / SPARE
    outside = tmp_path / "outside"
    shutil.copytree(spare, outside)
    shutil.rmtree(spare)
    spare.symlink_to(outside)
    before = _tree(outside)
    assert main(["--project", str(project), "build"]) == 0
    assert _tree(project / "dist") == same
    assert _tree(outside) == before
    assert (project / ".dist.versions" / SPARE).is_dir()
    assert not (project / ".dist.versions" / SPARE).is_symlink()


def test_a_build_killed_after_filling_the_spare_leaves_the_old_tree(trees, tmp_path, monkeypatch):
    """Killed with the spare filled, before the switch (after it, the switch is the one
    tests/test_hostile.py kills)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    project, same, edited = trees
    project = _copy(project, tmp_path)
    _edit(project, "Ann Bee", "Ann Bea-Changed")
    killed = subprocess.run(
        [sys.executable, "-m", "kg", "--project", str(project), "build"],
        env={**ENV, CRASH_ENV: "staged"},
        capture_output=True,
    )
    assert killed.returncode == -signal.SIGKILL
    assert _tree(project / "dist") == same
    assert main(["--project", str(project), "build"]) == 0
    assert _tree(project / "dist") == edited
    assert len(list((project / ".dist.versions").glob("v-*"))) == 1


def test_a_first_tree_leaves_a_linked_spare_and_changes_to_it_are_noticed(
    trees, tmp_path, monkeypatch
):
    """A build that replaces no tree links its files as the spare (decision 0079), so
    the spare's files are the tree's very files: files of `dist` then changed in place
    (the spare's too), removed, or replaced by links are noticed by the next build,
    which gives a new folder's tree and writes nothing through the links."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    project, same, edited = trees
    project = _copy(project, tmp_path)
    (project / "dist").unlink()
    shutil.rmtree(project / ".dist.versions")
    assert main(["--project", str(project), "build"]) == 0
    dist, spare = project / "dist", project / ".dist.versions" / SPARE
    files = sorted(p for p in dist.rglob("*") if p.is_file())
    assert _tree(dist) == same and _tree(spare) == same
    assert all((spare / p.relative_to(dist)).stat().st_ino == p.stat().st_ino for p in files)
    outside = tmp_path / "outside.txt"
    outside.write_text("not kg's\n", encoding="utf-8")
    for n, path in enumerate(files):
        if n % 7 == 1:  # in place: the inode kept (the spare's file too), the size too
            with path.open("r+b") as file:
                first = file.read(1)
                file.seek(0)
                file.write(b"X" if first != b"X" else b"Y")
        elif n % 7 == 3:
            path.unlink()
        elif n % 7 == 5:
            path.unlink()
            path.symlink_to(outside)
    _edit(project, "Ann Bee", "Ann Bea-Changed")
    assert main(["--project", str(project), "build"]) == 0
    assert _tree(project / "dist") == edited
    assert outside.read_text(encoding="utf-8") == "not kg's\n"
