"""`kg bench run`: stage timings, peak memory and ratios on synthetic corpora.

Each measurement runs in a fresh Python process (so peak RSS belongs to that run):
- `kg`: the real pipeline, stage by stage (load, resolve, map, validate, render, write);
- `naive`: rdflib's own serializers and pySHACL on the same graph, as a user would
  without kg's writers;
- `floor`: PyYAML's C loader over the same files plus writing the same N-Triples bytes,
  the least any build from YAML can do.

Each run also reports its CPU seconds (its own and its children's) and the peak memory
summed over every process of the run: every 20 ms the peak RSS (VmHWM) of the run's
process and of all its descendants is read from /proc and summed; the largest sum is
kept. A sum of peaks bounds the true peak of the sum from above.
"""

from __future__ import annotations

import json
import platform
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from kg.bench.synth import generate

if TYPE_CHECKING:
    from kg.query.store import QueryStore

RDFLIB_UP_TO = 300  # rdflib's SPARQL takes minutes and GBs per query set at 1000 people

_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
mode, root, with_rdflib = sys.argv[1], Path(sys.argv[2]), sys.argv[3] == "1"
from kg.workers import tune_collector
tune_collector()  # as the CLI does
import os, threading
stages = {}
def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
def tree_rss(pid):  # peak RSS (VmHWM) of a process and all its descendants, from /proc
    total = 0
    try:
        with open(f"/proc/{pid}/status") as status:
            total += next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as kids:
                total += sum(tree_rss(int(k)) for k in kids.read().split())
    except (OSError, StopIteration, ValueError):
        pass
    return total
summed = [0]
def sample():  # the peaks of this run's processes summed, every 20 ms
    while True:
        summed[0] = max(summed[0], tree_rss(os.getpid()))
        time.sleep(0.02)
threading.Thread(target=sample, daemon=True).start()
started_cpu = cpu()
def mark(name, start):
    summed[0] = max(summed[0], tree_rss(os.getpid()))  # the sampler may not have run
    stages[name] = {"seconds": time.perf_counter() - start,
                    "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                    "cpu": cpu() - stages.get("_cpu", started_cpu),
                    "summed_peak_mib": summed[0] / 1024}
    stages["_cpu"] = cpu()
def progress(current, names):  # a stage ends where the pipeline announces the next
    def announce(message):
        for prefix, name in names.items():
            if message.startswith(prefix):
                if current[0] is not None:
                    mark(current[0], current[1])
                current[0], current[1] = name, time.perf_counter()
    return announce
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
elif mode == "query":
    from kg.config import load_config
    from kg.query.stored import load_queries, run_embedded, run_rdflib
    from kg.query.store import QueryStore
    from kg.bench.run import corpus_values
    config = load_config(root)
    import pyoxigraph
    from kg.query.persist import write_store
    t = time.perf_counter(); write_store(root / "graph.nt", root / "query-store", config.base_iri)
    mark("store write", t)  # what kg build adds (kg.query.persist)
    t = time.perf_counter()
    store = QueryStore(pyoxigraph.Store.read_only(str(root / "query-store")), owner_index=True)
    mark("store open", t)  # what kg query and kg serve pay
    from kg.query.answers import Answers, precomputable, write_answers
    t = time.perf_counter()  # what kg build adds: the answers of queries without parameters
    entries = write_answers(store, precomputable(config), root / "query-answers", config.base_iri)
    mark("query answers", t)
    store = QueryStore(store.oxigraph, owner_index=True,
                       answers=Answers(root / "query-answers", entries))
    chosen = corpus_values(store)
    stages["parameters"] = chosen
    graph = None
    if with_rdflib:
        from rdflib import Graph
        graph = Graph().parse(root / "graph.nt", format="nt")
    def size(answer):
        return answer.size
    from kg.query.stored import with_kg_prefixes
    times, sizes = {}, {}
    for name, q in sorted(load_queries(config.queries_dir).items()):
        q = with_kg_prefixes(q)  # as `kg query` runs it
        ox = []
        values = {p.name: chosen.get(f"{name}.{p.name}", chosen.get(p.name))
                  for p in q.parameters if p.name in chosen}
        for _ in range(11):
            # a precomputed answer is timed with reading its bytes (JSON), which `kg
            # query` and `kg serve` print; a live one is its rdflib terms
            t = time.perf_counter(); answer = run_embedded(store, q, values)
            answer.text("json", config.base_iri)
            ox.append(time.perf_counter() - t)
        sizes[name] = {"oxigraph": size(answer), "parameters": len(q.parameters),
                       "precomputed": answer.text("json", config.base_iri) is not None}
        rd = []
        for _ in range(3 if graph is not None else 0):
            t = time.perf_counter(); answer = run_rdflib(graph, q, values)
            rd.append(time.perf_counter() - t)
        if graph is not None:
            sizes[name]["rdflib"] = size(answer)
        times[name] = {"oxigraph": ox, "rdflib": rd}
    stages["queries"] = times
    stages["answers"] = sizes
elif mode == "kg":  # the real `kg build`, its stages timed by its progress messages
    from kg.config import load_config
    from kg.pipeline import build
    from kg.workers import worker_count
    config = load_config(root)
    jobs = worker_count(0, len(list((root / "data" / "profiles").glob("*.yaml"))))
    STAGES = {"loading": "load", "resolving": "resolve", "mapping": "map",
              "validating": "validate", "rendering": "render and write",
              "writing the query store": "query store"}
    current = [None, time.perf_counter()]
    result = build(config, progress=progress(current, STAGES), jobs=jobs)
    mark(current[0], current[1])
    import shutil
    shutil.copyfile(root / "dist" / "graph.nt", root / "graph.nt")
    stages["jobs"] = jobs
    stages["worker_peak_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    stages["triples"] = result.triples
elif mode == "rebuild":  # a fresh `kg build` after one edit, with what the first one left
    from kg.config import load_config
    from kg.pipeline import build
    from kg.workers import worker_count
    config = load_config(root)
    jobs = worker_count(0, len(list((root / "data" / "profiles").glob("*.yaml"))))
    first = sorted((root / "data" / "profiles").glob("*.yaml"))[0]
    text = first.read_text(encoding="utf-8")
    edited = text.replace("- title: ", "- title: Edited ", 1)  # one publication's title
    first.write_text(edited if edited != text else text + "\n", encoding="utf-8")
    try:
        t = time.perf_counter(); build(config, jobs=jobs); mark("rebuild after one edit", t)
    finally:
        first.write_text(text, encoding="utf-8")  # the other modes measure the same data
else:  # the same graph as kg's (kg.pipeline.build_graph), then the naive baseline
    from kg.config import load_config
    from kg.pipeline import build_graph
    config = load_config(root)
    current = [None, time.perf_counter()]
    _, mapped = build_graph(config, progress(current, {"loading": "load",
                            "resolving": "resolve", "mapping": "map"}), cache=False)
    mark(current[0], current[1])
    triples = len(mapped.triples)
    # the naive baseline: pySHACL and rdflib's serializers on the same graph
    from pyshacl import validate as shacl
    from rdflib import Graph
    shapes = Graph()
    for p in sorted(config.shapes_dir.glob("*.ttl")):
        shapes.parse(p)
    t = time.perf_counter()
    shacl(mapped.graph, shacl_graph=shapes, inference="none", advanced=True)
    mark("validate", t)
    t = time.perf_counter()
    from kg.formats import RDF_FORMATS
    for fmt in RDF_FORMATS:
        mapped.graph.serialize(format=fmt.name)
    mark("render", t)
    stages["triples"] = triples
stages["cpu_total"] = cpu() - started_cpu
stages["summed_peak_mib"] = max(summed[0], tree_rss(os.getpid())) / 1024
stages.pop("_cpu", None)
print(json.dumps(stages))
"""


def _child(mode: str, root: Path, people: int, timeout: float) -> dict:
    from kg.workers import python_command

    command, env = python_command("-c", _CHILD)
    run = subprocess.run(
        [*command, mode, str(root), "1" if people <= RDFLIB_UP_TO else "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if run.returncode != 0:
        raise RuntimeError(f"{mode} run failed:\n{run.stderr[-2000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


# Parameters of the stored queries, taken from the corpus so that they match real
# synthetic people (the seed defaults match nobody there). Synthetic co-authorship is
# Zipf-distributed: the busiest author is on half the papers at 10k people, far beyond
# any real researcher, so "a person" is the one at the 99th percentile of papers.
_PICKS = {
    "person": """SELECT ?x WHERE { { SELECT ?x (COUNT(?w) AS ?n) WHERE { ?w schema:author ?x }
        GROUP BY ?x } } ORDER BY DESC(?n) ?x OFFSET {offset} LIMIT 1""",
    "coauthor": """SELECT ?x WHERE { ?w schema:author <{person}> , ?x . FILTER (?x != <{person}>)
        } GROUP BY ?x ORDER BY DESC(COUNT(?w)) ?x LIMIT 1""",
    "publication": """SELECT ?x WHERE { ?x kg:authorship ?a } GROUP BY ?x
        ORDER BY DESC(COUNT(?a)) ?x LIMIT 1""",
    "advisor": """SELECT ?x WHERE { ?r kg:advisor ?x } GROUP BY ?x ORDER BY DESC(COUNT(?r)) ?x
        LIMIT 1""",
    "interns": """SELECT ?x WHERE { ?r kg:positionType "internship" ; schema:worksFor ?t .
        ?t schema:parentOrganization ?x } GROUP BY ?x ORDER BY DESC(COUNT(?r)) ?x LIMIT 1""",
    "org": """SELECT ?x WHERE { ?r a schema:OrganizationRole ; schema:alumniOf ?x }
        GROUP BY ?x ORDER BY DESC(COUNT(?r)) ?x LIMIT 1""",
}


def corpus_values(store: QueryStore) -> dict[str, str]:
    """Parameter values that match the corpus in `store`, by parameter name (or by
    `query.parameter` where one query needs another value)."""
    people = _pick(store, "person", offset="0")  # at least one
    count = int(_first(store, "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?w schema:author ?x }"))
    person = _pick(store, "person", offset=str(count // 100)) or people
    return {
        "person": person,
        "a": person,
        "b": _pick(store, "coauthor", person=person),
        "publication": _pick(store, "publication"),
        "advisor": _pick(store, "advisor"),
        "org": _pick(store, "org"),
        "interns-at.org": _pick(store, "interns"),
    }


def _pick(store: QueryStore, what: str, **slots: str) -> str:
    text = _PICKS[what]
    for name, value in slots.items():
        text = text.replace("{" + name + "}", value)
    return _first(store, text)


def _first(store: QueryStore, text: str) -> str:
    from kg.graph.namespaces import PREFIXES

    prefixes = "".join(f"PREFIX {p}: <{ns}>\n" for p, ns in PREFIXES.items())
    for row in store.query(prefixes + text, "bench parameters"):  # type: ignore[union-attr]
        return str(row[0].value)
    return ""


NAIVE_UP_TO = 2000  # pySHACL on the whole graph takes ~20 min at 10k people: skipped above


def measure(people: int, seed: int = 1, timeout: float = 7200) -> dict:
    """Generate a corpus of `people`; measure kg, the naive baseline, the floor, queries."""
    with tempfile.TemporaryDirectory(prefix="kg-bench-") as tmp:
        root = Path(tmp)
        generate(root, people, seed)
        result: dict = {"people": people, "measured": time.strftime("%Y-%m-%d", time.gmtime())}
        modes = ["kg", "rebuild", "floor", "query"] + (["naive"] if people <= NAIVE_UP_TO else [])
        for mode in modes:
            started = time.perf_counter()
            result[mode] = _child(mode, root, people, timeout)
            result[mode]["total"] = time.perf_counter() - started
        rebuild = result.pop("rebuild")  # a process of its own, as `kg build` after an edit
        result["kg"]["rebuild after one edit"] = {
            **rebuild["rebuild after one edit"],
            "cpu": rebuild["cpu_total"],
            "summed_peak_mib": rebuild["summed_peak_mib"],
        }
        return result


def combined(earlier: list[dict], measured: list[dict]) -> list[dict]:
    """One table's results by corpus size: this run's, then an earlier run's (its `--json`
    file) for the sizes this run did not measure (a 100k run takes an hour)."""
    sizes = {r["people"] for r in measured}
    kept = [r for r in earlier if r["people"] not in sizes]
    return sorted([*measured, *kept], key=lambda r: r["people"])


def provenance(results: list[dict]) -> str:
    """When each size was measured, where the runs differ."""
    dates = {r["people"]: r.get("measured", "an earlier run") for r in results}
    if len(set(dates.values())) <= 1:
        return ""
    return "Measured: " + ", ".join(f"{n} people on {d}" for n, d in sorted(dates.items())) + "."


# (row, kg's stage, naive's stage, floor's stage): kg renders and writes as one stream
STAGES = (
    ("load", "load", "load", "load"),
    ("resolve", "resolve", "resolve", None),
    ("map", "map", "map", None),
    ("validate", "validate", "validate", None),
    ("render and write", "render and write", "render", "write"),
    ("query store", "query store", None, None),
)


def table(results: list[dict]) -> str:
    """A Markdown table: seconds per stage, kg's peak memory, ratios to naive and floor."""
    rows = [
        "| people | triples | stage | kg s | naive s | floor s | kg peak MiB "
        "| kg/naive | kg/floor |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        triples = r["kg"]["triples"]
        naive_run = r.get("naive", {})
        for row, kg_stage, naive_stage, floor_stage in STAGES:
            kg = r["kg"].get(kg_stage, {}).get("seconds")
            naive = naive_run.get(naive_stage, {}).get("seconds")
            floor = r["floor"].get(floor_stage, {}).get("seconds") if floor_stage else None
            rows.append(
                f"| {r['people']} | {triples} | {row} | {_f(kg)} | {_f(naive)} | {_f(floor)} "
                f"| {_f(r['kg'].get(kg_stage, {}).get('peak_mib'), 0)} | {_ratio(kg, naive)} "
                f"| {_ratio(kg, floor)} |"
            )
        kg_total, floor_total = r["kg"]["total"], r["floor"]["total"]
        naive_total = naive_run.get("total")
        peak = max(r["kg"]["render and write"]["peak_mib"], r["kg"].get("worker_peak_mib", 0))
        rows.append(
            f"| {r['people']} | {triples} | **end to end** ({r['kg'].get('jobs', 1)} jobs) "
            f"| {_f(kg_total)} | {_f(naive_total)} | {_f(floor_total)} | {_f(peak, 0)} "
            f"| {_ratio(kg_total, naive_total)} | {_ratio(kg_total, floor_total)} |"
        )
        kg_cpu = r["kg"].get("cpu_total", 0)
        naive_cpu, floor_cpu = naive_run.get("cpu_total"), r["floor"].get("cpu_total")
        summed = r["kg"].get("summed_peak_mib")
        rows.append(
            f"| {r['people']} | {triples} | **end to end, CPU-s** (peak summed over processes) "
            f"| {_f(kg_cpu)} | {_f(naive_cpu)} | {_f(floor_cpu)} | {_f(summed, 0)} "
            f"| {_ratio(kg_cpu, naive_cpu)} | {_ratio(kg_cpu, floor_cpu)} |"
        )
        again = r["kg"]["rebuild after one edit"]
        rows.append(
            f"| {r['people']} | {triples} | rebuild after one edit (CPU-s {_f(again.get('cpu'))}; "
            f"peak summed over processes) | {_f(again['seconds'])} | | | "
            f"{_f(again.get('summed_peak_mib'), 0)} | | {_ratio(again['seconds'], floor_total)} |"
        )
    return "\n".join(rows)


def query_table(results: list[dict]) -> str:
    """p50 / p95 of every stored query as `kg query` runs it (pyoxigraph, answers as
    rdflib terms), and rdflib's SPARQL engine on small corpora for comparison."""
    rows = [
        "| people | query | kg p50 ms | kg p95 ms | rdflib p50 ms | rdflib p95 ms |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r in results:
        for name, times in sorted(r["query"]["queries"].items()):
            rd, ox = times["rdflib"], times["oxigraph"]
            rows.append(
                f"| {r['people']} | {name} | {_ms(ox, 50)} | {_ms(ox, 95)} "
                f"| {_ms(rd, 50)} | {_ms(rd, 95)} |"
            )
    return "\n".join(rows)


def _ms(samples: list[float], pct: int) -> str:
    if not samples:
        return "not run"
    ordered = sorted(samples)
    index = min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))
    return f"{ordered[index] * 1000:.0f}"


def machine() -> str:
    import os

    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def _f(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "" if not a or not b else f"{a / b:.1f}x"
