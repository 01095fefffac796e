"""Files kg does not own (issue 26): a cloned project may ship its output folder, its
`.dist.versions`, its `.kg-cache` (or any folder or entry in it) as symbolic links, or
cache entries kg did not write; a dask scheduler may never answer or answer garbage.

Every test runs `kg` as a user would (a subprocess on a copy of tests/fixtures/mini)
and checks: nothing outside the project changes (a folder beside it is snapshotted
before and after), the previous output stays, the exit code is 0, 1 or 2 (never 3)
with a message naming the file, in bounded time, and `build.json` never depends on the
cache."""

from __future__ import annotations

import asyncio
import os
import pickle
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import MINI

from kg.cache import SignedCache

ENV = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
A_B = Path("data/profiles/a-b.yaml")


def kg(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kg", *args],
        env=env or ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def snapshot(folder: Path) -> dict[str, object]:
    """Every name under `folder` with its bytes (files) or target (links)."""
    found: dict[str, object] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            found[rel] = ("link", os.readlink(path))
        elif path.is_file():
            found[rel] = path.read_bytes()
        else:
            found[rel] = "folder"
    return found


PYSHACL_BUILD = ("build", "--engine", "pyshacl")  # the engine that caches validation


@pytest.fixture(scope="module")
def warm(tmp_path_factory) -> Path:
    """The mini project built once (output, versions and every cache filled: pySHACL is
    the engine with a validation cache, decision 0026)."""
    root = tmp_path_factory.mktemp("warm") / "project"
    shutil.copytree(MINI, root)
    run = kg("--project", str(root), *PYSHACL_BUILD)
    assert run.returncode == 0, run.stderr
    return root


@pytest.fixture
def site(tmp_path, warm) -> tuple[Path, Path]:
    """(a copy of the warm project, an `outside` folder beside it with files to lose)."""
    root = tmp_path / "project"
    shutil.copytree(warm, root, symlinks=True)
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "keep.txt").write_text("precious\n")
    (outside / "sub" / "deep.txt").write_text("also precious\n")
    (outside / ".kg-output").write_text("a marker planted to look like kg's output\n")
    return root, outside


def _refused(run: subprocess.CompletedProcess, *words: str) -> None:
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    assert all(word in run.stderr for word in words), run.stderr


# --------------------------------------------------------------------------- output folder


@pytest.mark.parametrize("target", ["outside", "inside"])
def test_a_shipped_dist_link_is_refused_never_followed(site, target):
    root, outside = site
    before_out, before_data = snapshot(outside), snapshot(root / "data")
    (root / "dist").unlink()
    (root / "dist").symlink_to("../outside" if target == "outside" else "data")
    _refused(kg("--project", str(root), "build"), "dist", "symbolic link kg did not make")
    assert snapshot(outside) == before_out
    assert snapshot(root / "data") == before_data
    assert os.readlink(root / "dist") in ("../outside", "data")  # the link itself stays


def test_kg_site_into_a_shipped_link_is_refused(site):
    root, outside = site
    before = snapshot(outside)
    (root / "dist").unlink()
    (root / "dist").symlink_to(outside)
    _refused(kg("--project", str(root), "site"), "outside the project")
    assert snapshot(outside) == before


def test_versions_folder_or_a_version_or_the_lock_as_links_are_refused(site):
    root, outside = site
    before = snapshot(outside)
    old = (root / "dist" / "graph.nt").read_bytes()
    versions = root / ".dist.versions"
    # a version that is a link to outside, which `dist` points to
    (versions / "v-planted").symlink_to(outside)
    current = os.readlink(root / "dist")
    (root / "dist").unlink()
    (root / "dist").symlink_to(".dist.versions/v-planted")
    _refused(kg("--project", str(root), "build"), "symbolic link kg did not make")
    assert snapshot(outside) == before
    # the lock file as a link to a file outside
    (root / "dist").unlink()
    (root / "dist").symlink_to(current)
    (versions / "v-planted").unlink()
    (versions / ".lock").unlink()
    (versions / ".lock").symlink_to(outside / "keep.txt")
    _refused(kg("--project", str(root), "build"), ".lock")
    assert snapshot(outside) == before
    # the whole versions folder as a link to outside (holding a "version")
    shutil.rmtree(versions)
    (outside / "v-abc").mkdir()
    before = snapshot(outside)
    versions.symlink_to(outside)
    (root / "dist").unlink()
    (root / "dist").symlink_to(".dist.versions/v-abc")
    _refused(kg("--project", str(root), "build"), ".dist.versions")
    assert snapshot(outside) == before
    assert old  # the previous build's dump existed before the planting


def test_leftovers_that_are_links_are_removed_not_followed(site):
    root, outside = site
    before = snapshot(outside)
    (root / ".dist.versions" / "v-stale").symlink_to(outside)
    (root / ".dist.old-4242").symlink_to(outside)
    (root / ".dist.link-4242").symlink_to(outside)
    run = kg("--project", str(root), "build")
    assert run.returncode == 0, run.stderr
    assert snapshot(outside) == before
    assert not (root / ".dist.versions" / "v-stale").is_symlink()
    assert not (root / ".dist.old-4242").is_symlink()
    assert (root / "dist").is_symlink() and (root / "dist" / "build.json").is_file()


# --------------------------------------------------------------------------- caches


def test_cache_folders_that_are_links_are_ignored_and_nothing_outside_changes(site, warm):
    root, outside = site
    expected = (warm / "dist" / "build.json").read_bytes()
    for name in ("parse", "validation", "render", "outputs"):
        copy = outside / name
        shutil.copytree(root / ".kg-cache" / name, copy)  # what a cleanup would delete
        shutil.rmtree(root / ".kg-cache" / name)
        (root / ".kg-cache" / name).symlink_to(copy)
    before = snapshot(outside)
    run = kg("--project", str(root), *PYSHACL_BUILD)
    assert run.returncode == 0, run.stderr
    assert snapshot(outside) == before
    assert (root / "dist" / "build.json").read_bytes() == expected
    # the whole .kg-cache as a link
    for name in ("parse", "validation", "render", "outputs"):
        (root / ".kg-cache" / name).unlink()
    shutil.rmtree(root / ".kg-cache")
    (root / ".kg-cache").symlink_to(outside)
    run = kg("--project", str(root), *PYSHACL_BUILD)
    assert run.returncode == 0, run.stderr
    assert snapshot(outside) == before
    assert (root / "dist" / "build.json").read_bytes() == expected


def test_shards_and_entries_that_are_links_fifos_or_garbage_are_misses(site, warm):
    root, outside = site
    expected = (warm / "dist" / "build.json").read_bytes()
    cache = root / ".kg-cache"
    entries = sorted(cache.glob("*/*/*"))
    assert len(entries) > 20
    for i, entry in enumerate(entries):
        entry.unlink()
        if i % 4 == 0:
            entry.symlink_to(outside / "keep.txt")
        elif i % 4 == 1:
            os.mkfifo(entry)
        elif i % 4 == 2:
            entry.write_bytes(os.urandom(40))
        else:
            entry.write_bytes(b"")
    shard = next(p for p in sorted((cache / "render").iterdir()) if p.is_dir())
    shutil.rmtree(shard)
    shard.symlink_to(outside / "sub")
    before = snapshot(outside)
    started = time.monotonic()
    run = kg("--project", str(root), *PYSHACL_BUILD)
    assert run.returncode == 0, run.stderr
    assert time.monotonic() - started < 30
    assert snapshot(outside) == before
    assert (root / "dist" / "build.json").read_bytes() == expected


@pytest.fixture(scope="module")
def violating(tmp_path_factory) -> Path:
    """A project with one violation (a role that ends before it starts), built once so
    its validation cache holds the violation."""
    root = tmp_path_factory.mktemp("violating") / "project"
    shutil.copytree(MINI, root)
    profile = root / A_B
    profile.write_text(profile.read_text().replace("end: 2024-05", "end: 2022-05"))
    run = kg("--project", str(root), *PYSHACL_BUILD)
    assert run.returncode == 1 and "a-b.yaml" in run.stdout, run.stdout + run.stderr
    return root


def test_a_forged_validation_entry_cannot_make_a_violation_conform(violating, tmp_path):
    root = tmp_path / "project"
    shutil.copytree(violating, root, symlinks=True)
    entries = sorted((root / ".kg-cache" / "validation").glob("*/*"))
    assert entries
    forged = pickle.dumps([])

    def emptied(entry: Path) -> None:  # the old signature kept, the results emptied
        entry.write_bytes(entry.read_bytes()[:32] + forged)

    def swapped(entry: Path) -> None:  # a valid signed entry of another cache, as it is now
        parse = sorted((root / ".kg-cache" / "parse").glob("*/*"))  # builds prune them
        shutil.copyfile(parse[0], entry)

    for forge in (emptied, swapped):
        for entry in entries:
            forge(entry)
        run = kg("--project", str(root), *PYSHACL_BUILD)
        assert run.returncode == 1, run.stdout + run.stderr
        assert "a-b.yaml\n  20:5: Violation: The end date" in run.stdout
        assert "does not conform: 1 violations" in run.stdout


def test_signed_entries_moved_to_another_key_or_cache_are_misses(tmp_path):
    secret = b"s" * 32
    validation = SignedCache(tmp_path / ".kg-cache" / "validation", secret=secret)
    parse = SignedCache(tmp_path / ".kg-cache" / "parse", secret=secret)
    validation.put("aa" * 32, ["a violation"])
    validation.put("bb" * 32, [])
    assert validation.get("aa" * 32) == ["a violation"]
    first = tmp_path / ".kg-cache" / "validation" / "aa" / ("aa" * 32)
    second = tmp_path / ".kg-cache" / "validation" / "bb" / ("bb" * 32)
    shutil.copyfile(second, first)  # the empty results under the violating key
    assert SignedCache(validation.folder, secret=secret).get("aa" * 32) is None
    (tmp_path / ".kg-cache" / "parse" / "bb").mkdir(parents=True)
    shutil.copyfile(second, tmp_path / ".kg-cache" / "parse" / "bb" / ("bb" * 32))
    assert parse.get("bb" * 32) is None  # same key, another cache
    assert validation.get("../../x") is None  # not a key: never a path


# --------------------------------------------------------------------------- kg new / init


def test_kg_new_and_init_never_write_through_a_shipped_link(site, tmp_path):
    root, outside = site
    before = snapshot(outside)
    (root / "data" / "profiles" / "mei-lin.yaml").symlink_to(outside / "mei-lin.yaml")
    run = kg("--project", str(root), "new", "person", "Mei Lin")
    _refused(run, "mei-lin.yaml", "already exists")
    assert snapshot(outside) == before
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "kg.toml").symlink_to(outside / "kg.toml")
    run = kg("init", str(fresh))
    assert run.returncode == 2 and "kg.toml" in run.stderr, run.stderr
    assert snapshot(outside) == before
    other = tmp_path / "other"
    other.mkdir()
    (other / "data").symlink_to(outside / "sub")  # dangling-free: a real folder outside
    run = kg("init", str(other))
    assert run.returncode == 2 and "data" in run.stderr, run.stderr
    assert snapshot(outside) == before


# --------------------------------------------------------------------------- dask


def _framed(message: object) -> bytes:
    """`message` as a dask TCP frame: well formed, meaningless to a client."""
    from distributed.comm.tcp import _add_frames_header
    from distributed.comm.utils import to_frames

    # in a thread of its own: a browser test earlier in this worker may have left
    # Playwright's event loop running in the main thread, where asyncio.run refuses
    made: list = []
    worker = threading.Thread(target=lambda: made.append(asyncio.run(to_frames(message))))
    worker.start()
    worker.join(30)
    frames, _, _ = _add_frames_header(made[0])
    return b"".join(bytes(f) for f in frames)


@pytest.fixture
def hostile_scheduler() -> Iterator[dict]:
    """A TCP server on 127.0.0.1 that accepts, reads, and then does `reply["how"]`."""
    reply: dict = {"how": b""}
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            conn.settimeout(5)
            try:
                conn.recv(65536)
                if reply["how"] == "close":
                    conn.close()
                elif reply["how"]:
                    conn.sendall(reply["how"])
            except OSError:
                continue

    threading.Thread(target=serve, daemon=True).start()
    reply["address"] = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    yield reply
    server.close()
    for conn in held:
        conn.close()


@pytest.mark.parametrize("how", ["silent", "garbage", "framed", "close"])
def test_a_scheduler_that_never_answers_or_answers_garbage_is_exit_2(
    hostile_scheduler, tmp_path, how
):
    hostile_scheduler["how"] = {
        "silent": b"",
        "garbage": b"\xff" * 64 + b"HTTP/1.1 200 OK\r\n\r\n<html>",
        "framed": _framed({"op": "nonsense", "x": [1, 2]}),
        "close": "close",
    }[how]
    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    env = {**ENV, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    args = ["--project", str(root), "build", "--executor", "dask"]
    started = time.monotonic()
    run = kg(*args, "--scheduler", hostile_scheduler["address"], env=env)
    assert time.monotonic() - started < 20
    _refused(run, "dask scheduler", hostile_scheduler["address"])
    assert run.stderr.count("\n") <= 2  # a warning about base_iri, then one error line
    assert not (root / "dist").exists()
