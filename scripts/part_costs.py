"""Per-part costs of a build, for docs/scaling.md.

    PYTHONPATH=$PWD python -m kg bench generate --people 1000 --out /tmp/c1000
    PYTHONPATH=$PWD python scripts/part_costs.py /tmp/c1000

Runs every validation part and every render task of the project one after another in
this process (no cache, no workers), timing each, and prints per kind: count, total and
mean seconds, output bytes and files; then the global stages (load, resolve, map), the
pickled size of the state each stage ships to a dask worker, and the resident memory a
fresh process needs to hold each state.
"""

from __future__ import annotations

import json
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from kg.config import load_config
from kg.graph.mapping import map_graph
from kg.ingest.load import load_dataset_partially
from kg.ingest.redact import redact
from kg.pipeline import profile_dates
from kg.publish.export import write_outputs
from kg.publish.render import render_parts
from kg.resolve.identity import resolve
from kg.validate.shacl import validate_in_parts

_RSS = """
import os, pickle, sys
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
import kg.publish.render, kg.validate.parts, pyshacl  # what a worker imports anyway
before = rss()
state = pickle.load(open(sys.argv[1], "rb"))
print((rss() - before) / 2**20)
"""


class TimingPool:
    """Runs every item here, in order, and records its kind, seconds and output."""

    def __init__(self, kind_of: Callable[[Any], str]) -> None:
        self.kind_of = kind_of
        self.rows: list[tuple[str, float, int, int]] = []  # kind, seconds, bytes, files
        self.state: Any = None

    def map(self, function: Callable, state: Any, items: Sequence[Any]) -> Iterator[Any]:
        self.state = state
        self.started = time.perf_counter()
        for item in items:
            start = time.perf_counter()
            result = function(state, item)
            seconds = time.perf_counter() - start
            size = sum(len(t.encode()) for t in result.values()) if isinstance(result, dict) else 0
            files = len(result) if isinstance(result, dict) else 0
            self.rows.append((self.kind_of(item), seconds, size, files))
            yield result

    def describe(self) -> str:
        return "measuring"


def summary(rows: list[tuple[str, float, int, int]]) -> dict[str, dict[str, float]]:
    kinds: dict[str, list[tuple[float, int, int]]] = defaultdict(list)
    for kind, seconds, size, files in rows:
        kinds[kind].append((seconds, size, files))
    return {
        kind: {
            "count": len(values),
            "seconds": round(sum(v[0] for v in values), 3),
            "mean_seconds": round(sum(v[0] for v in values) / len(values), 4),
            "max_seconds": round(max(v[0] for v in values), 4),
            "mib": round(sum(v[1] for v in values) / 2**20, 2),
            "files": sum(v[2] for v in values),
        }
        for kind, values in sorted(kinds.items())
    }


def state_memory(state: Any) -> dict[str, float]:
    with tempfile.NamedTemporaryFile(suffix=".pickle") as file:
        data = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
        file.write(data)
        file.flush()
        rss = subprocess.run(
            [sys.executable, "-c", _RSS, file.name], capture_output=True, text=True, check=True
        ).stdout
    return {"pickled_mib": round(len(data) / 2**20, 2), "rss_mib": round(float(rss), 1)}


def _tree_size(root: Path) -> tuple[int, int]:
    """Files and bytes under `root` (the output is a symlink to a folder; hard links once)."""
    seen, size = set(), 0
    paths = [p for p in root.resolve().rglob("*") if p.is_file()]
    for path in paths:
        stat = path.stat()
        if stat.st_ino not in seen:
            seen.add(stat.st_ino)
            size += stat.st_size
    return len(paths), size


def main(project: Path) -> dict[str, Any]:
    config = load_config(project)
    stages, start = {}, time.perf_counter()
    data, _ = load_dataset_partially(config.data_dir)
    data = redact(data)
    stages["load"], start = time.perf_counter() - start, time.perf_counter()
    resolution = resolve(data)
    stages["resolve"], start = time.perf_counter() - start, time.perf_counter()
    modified, created = profile_dates(config, data)
    mapped = map_graph(resolution, config.base_iri, modified, created)
    stages["map"] = time.perf_counter() - start
    validation = TimingPool(lambda part: "validation part")
    validate_in_parts(
        mapped.triples,
        mapped.sources,
        config.shapes_dir,
        config.ontology_dir,
        config.base_iri,
        validation,
        None,
    )
    rendering = TimingPool(lambda task: task[0])
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        write_outputs(
            Path(folder) / "dist", render_parts(config, resolution, mapped.triples, rendering)
        )
        end = time.perf_counter()
        files, size = _tree_size(Path(folder) / "dist")
    stages["render state"] = rendering.started - start
    stages["write"] = end - rendering.started - sum(row[1] for row in rendering.rows)
    return {
        "people": len(data.profiles),
        "triples": len(mapped.triples),
        "global_seconds": {k: round(v, 2) for k, v in stages.items()},
        "validation": summary(validation.rows),
        "render": summary(rendering.rows),
        "validation_state": state_memory(validation.state),
        "render_state": state_memory(rendering.state),
        "output": {"files": files, "mib_on_disk": round(size / 2**20, 1)},
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1])), indent=2))
