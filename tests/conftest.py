"""Shared fixtures: the repository's project (the seed data) and a small fixture project."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from kg.config import Config, load_config
from kg.pipeline import build_graph

REPO = Path(__file__).resolve().parent.parent
VOCAB = Path(__file__).resolve().parent / "vocab"  # vendored copies (see vocab/README.md)
MINI = Path(__file__).resolve().parent / "fixtures" / "mini"
PROFILES = sorted((REPO / "data" / "profiles").glob("*.yaml"))
# The cache signing secret of this test run (kg.cache): never the user's own.
# Made once by the process that starts the run (xdist's workers inherit it), removed when
# that process exits.
if "KG_TESTS_CACHE" not in os.environ:
    os.environ["KG_TESTS_CACHE"] = tempfile.mkdtemp(prefix="kg-tests-cache-")
    atexit.register(shutil.rmtree, os.environ["KG_TESTS_CACHE"], ignore_errors=True)
os.environ["XDG_CACHE_HOME"] = os.environ["KG_TESTS_CACHE"]

# Property tests: the same bounded examples on every run (no shrinking marathons, no flaky
# CI); `HYPOTHESIS_PROFILE=explore pytest` searches wider and randomly while developing.
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def repo_config() -> Config:
    return load_config(REPO)


@pytest.fixture(scope="session")
def seed_build(repo_config):
    """(resolution, mapped) for the seed data."""
    return build_graph(repo_config)


@pytest.fixture(scope="session")
def mini_build():
    return build_graph(load_config(MINI), cache=False)  # the fixture folder is not written


@pytest.fixture(scope="session", autouse=True)
def fixtures_stay_untouched():
    """No test writes into tests/fixtures/mini (a cache or an output there would make every
    later copy of it a warm project, and each copy slower): a test that builds the mini
    project works on `mini_copy`. Checked when each test process ends."""
    before = {p.name for p in MINI.iterdir()}
    yield
    after = {p.name for p in MINI.iterdir()}
    assert after == before, f"a test wrote {sorted(after - before)} into {MINI}"


def mini_copy(parent: Path) -> Path:
    """A writable copy of the mini fixture project in `parent` (made)."""
    target = parent / "mini"
    shutil.copytree(MINI, target)
    return target


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium for every browser test of the run (a launch costs seconds)."""
    from browser import browser

    with browser() as instance:
        yield instance


@pytest.fixture
def project(tmp_path) -> Path:
    """A writable copy of the mini fixture project."""
    target = tmp_path / "project"
    shutil.copytree(MINI, target)
    return target


def seed_project(root: Path) -> Path:
    """A writable project at `root` (made) holding the repository's seeds and kg.toml."""
    root.mkdir(parents=True)
    shutil.copytree(REPO / "data", root / "data")
    shutil.copy(REPO / "kg.toml", root / "kg.toml")
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def replace_first(path: Path, pattern: str, replacement: str) -> None:
    """Edit a file as a user would: the first match of `pattern` (a line-anchored regular
    expression) replaced; a pattern that matches nothing fails the test."""
    text = path.read_text(encoding="utf-8")
    changed = re.sub(pattern, replacement, text, count=1, flags=re.M)
    assert changed != text, f"{pattern!r} not found in {path}"
    path.write_text(changed, encoding="utf-8")
