"""The repository stands on its own, and the CLI starts fast."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import REPO

from kg.cli import main

OUTSIDE = re.compile(r"\.\./" + "shared|parent\\s*/\\s*[\"']" + "shared")


def _tracked(*patterns: str) -> list[str]:
    run = subprocess.run(
        ["git", "ls-files", *patterns], cwd=REPO, capture_output=True, text=True, check=True
    )
    return run.stdout.split()


def test_no_code_reads_anything_beside_the_repository():
    for name in _tracked("kg", "tests", "scripts", ".ci"):
        path = REPO / name
        if path.suffix in {".py", ""} and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not OUTSIDE.search(text), name


def test_a_fresh_clone_in_an_empty_folder_collects_every_test(tmp_path):
    """A clone with no sibling folders: every test module imports and collects."""
    clone = tmp_path / "kg"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    env = {**os.environ, "PYTHONPATH": str(clone)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert re.search(r"^\d+ tests collected", run.stdout, re.M), run.stdout[-500:]
    assert "error" not in run.stdout.lower().split("tests collected")[-1]


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["build", "--help"], []])
def test_version_and_help_do_not_import_rdflib_or_pyshacl(argv):
    probe = (
        "import sys\n"
        "from kg.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [m for m in ('rdflib', 'pyshacl', 'pyoxigraph', 'jinja2') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "HEAVY []" in run.stdout, run.stdout + run.stderr


def test_bare_kg_prints_the_help_and_succeeds(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: kg") and "build" in out and "query" in out
