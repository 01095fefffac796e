"""`kg bench run`: stage timings, peak memory and ratios on synthetic corpora.

Each measurement runs in a fresh Python process (so peak RSS belongs to that run):
- `kg`: the real pipeline, stage by stage (load, resolve, map, validate, render, write);
- `naive`: rdflib's own serializers and pySHACL on the same graph, as a user would
  without kg's writers;
- `floor`: PyYAML's C loader over the same files plus writing the same N-Triples bytes,
  the least any build from YAML can do.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kg.synth import generate

_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
mode, root = sys.argv[1], Path(sys.argv[2])
stages = {}
def mark(name, start):
    stages[name] = {"seconds": time.perf_counter() - start,
                    "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
if mode == "floor":
    import yaml
    t = time.perf_counter()
    for p in sorted((root / "data" / "profiles").glob("*.yaml")):
        yaml.load(p.read_bytes(), Loader=yaml.CSafeLoader)
    mark("load", t)
    nt = (root / "graph.nt").read_bytes()
    t = time.perf_counter()
    (root / "floor.nt").write_bytes(nt)
    mark("write", t)
else:
    from kg.config import load_config
    from kg.load import load_dataset
    from kg.map import map_graph
    from kg.redact import redact
    from kg.resolve import resolve
    config = load_config(root)
    t = time.perf_counter(); data = redact(load_dataset(config.data_dir)); mark("load", t)
    t = time.perf_counter(); resolution = resolve(data); mark("resolve", t)
    t = time.perf_counter(); mapped = map_graph(resolution, config.base_iri); mark("map", t)
    triples = len(mapped.graph)
    if mode == "kg":
        from kg.export import to_ntriples, write_outputs
        from kg.render import render_outputs
        from kg.validate import validate
        t = time.perf_counter()
        validate(mapped.graph, mapped.sources, config.shapes_dir, config.ontology_dir)
        mark("validate", t)
        t = time.perf_counter(); files = render_outputs(config, resolution, mapped.triples)
        mark("render", t)
        t = time.perf_counter(); write_outputs(root / "dist", files); mark("write", t)
        (root / "graph.nt").write_text(files["graph.nt"], encoding="utf-8")
    else:
        from pyshacl import validate as shacl
        from rdflib import Graph
        shapes = Graph()
        for p in sorted(config.shapes_dir.glob("*.ttl")):
            shapes.parse(p)
        t = time.perf_counter()
        shacl(mapped.graph, shacl_graph=shapes, inference="none", advanced=True)
        mark("validate", t)
        t = time.perf_counter()
        for fmt in ("turtle", "nt", "json-ld"):
            mapped.graph.serialize(format=fmt)
        mark("render", t)
    stages["triples"] = triples
print(json.dumps(stages))
"""


def _child(mode: str, root: Path, timeout: float) -> dict:
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, mode, str(root)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if run.returncode != 0:
        raise RuntimeError(f"{mode} run failed:\n{run.stderr[-2000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def measure(people: int, seed: int = 1, timeout: float = 3600) -> dict:
    """Generate a corpus of `people` and measure kg, the naive baseline and the floor."""
    with tempfile.TemporaryDirectory(prefix="kg-bench-") as tmp:
        root = Path(tmp)
        generate(root, people, seed)
        result = {"people": people}
        for mode in ("kg", "naive", "floor"):
            started = time.perf_counter()
            result[mode] = _child(mode, root, timeout)
            result[mode]["total"] = time.perf_counter() - started
        return result


def table(results: list[dict]) -> str:
    """A Markdown table: seconds per stage, kg's peak memory, ratios to naive and floor."""
    rows = [
        "| people | triples | stage | kg s | naive s | floor s | kg peak MiB "
        "| kg/naive | kg/floor |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        triples = r["kg"]["triples"]
        for stage in ("load", "resolve", "map", "validate", "render", "write"):
            kg = r["kg"].get(stage, {}).get("seconds")
            naive = r["naive"].get(stage, {}).get("seconds")
            floor = r["floor"].get(stage, {}).get("seconds")
            rows.append(
                f"| {r['people']} | {triples} | {stage} | {_f(kg)} | {_f(naive)} | {_f(floor)} "
                f"| {_f(r['kg'].get(stage, {}).get('peak_mib'), 0)} | {_ratio(kg, naive)} "
                f"| {_ratio(kg, floor)} |"
            )
        kg_total, naive_total, floor_total = (r[m]["total"] for m in ("kg", "naive", "floor"))
        rows.append(
            f"| {r['people']} | {triples} | **end to end** | {_f(kg_total)} "
            f"| {_f(naive_total)} | {_f(floor_total)} | | {_ratio(kg_total, naive_total)} "
            f"| {_ratio(kg_total, floor_total)} |"
        )
    return "\n".join(rows)


def machine() -> str:
    import os

    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def _f(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "" if not a or not b else f"{a / b:.1f}x"
