"""Shared fixtures: the repository's project (the seed data) and a small fixture project."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kg.config import Config, load_config
from kg.pipeline import build_graph

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
VOCAB = SHARED / "vocab"
MINI = Path(__file__).resolve().parent / "fixtures" / "mini"
PROFILES = sorted((REPO / "data" / "profiles").glob("*.yaml"))


@pytest.fixture(scope="session")
def repo_config() -> Config:
    return load_config(REPO)


@pytest.fixture(scope="session")
def seed_build(repo_config):
    """(resolution, mapped) for the seed data."""
    return build_graph(repo_config)


@pytest.fixture(scope="session")
def mini_build():
    return build_graph(load_config(MINI))


@pytest.fixture
def project(tmp_path) -> Path:
    """A writable copy of the mini fixture project."""
    target = tmp_path / "project"
    shutil.copytree(MINI, target)
    return target


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
