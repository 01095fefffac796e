"""`kg build` on the command line ends without the interpreter's teardown (kg.cli's
`_exit_at_once`): its exit code, its output and the files it wrote are all there."""

from __future__ import annotations

import subprocess
import sys

from conftest import seed_project

from kg.config import load_config
from kg.query.persist import open_built_store


def test_a_command_line_build_exits_at_once_with_everything_written(tmp_path):
    root = seed_project(tmp_path / "project")
    done = subprocess.run(
        [sys.executable, "-m", "kg", "--project", str(root), "build"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # by hand: the seeds' report, then the last line, flushed before the process ended
    assert "validation: conforms" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("wrote ") and done.stdout.endswith("files)\n")
    config = load_config(root)
    assert (config.out_dir / "build.json").is_file()
    store = open_built_store(config)  # the store and its signed manifest were written
    assert store is not None and store.answers is not None and len(store) > 0
