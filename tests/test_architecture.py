"""The file list shows the pipeline: stages import only stages before them, no stage uses
another stage's private names, and only the CLI prints or exits."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import REPO

KG = REPO / "kg"
# Each stage may import the ones listed before it (and the foundation), never one after.
ORDER = (
    "foundation",  # cache, change, config, errors, model, display, files, iri, scheme, formats,
    # workers, spool
    "ingest",  # YAML -> typed model
    "resolve",  # one node per real thing
    "graph",  # namespaces, IRIs, mapping to triples, N-Triples
    "validate",  # SHACL
    "publish",  # writers, per-person files, site, deployment
    "query",  # stored queries, embedded store, endpoints, Graph Store upload
    "pipeline",  # the Python API: the straight line through the stages
    "imports",  # BibTeX, CSL-JSON, ORCID, dblp merged into profiles
    "serve",  # HTTP app on the built result
    "bench",  # synthetic corpora and benchmarks
    "cli",  # the porch
)
FOUNDATION = {
    "cache",
    "change",
    "config",
    "errors",
    "model",
    "display",
    "files",
    "iri",
    "scheme",
    "formats",
    "workers",
    "spool",
    "__init__",
}


def _module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _stage(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in FOUNDATION:
        return "foundation"
    return "cli" if parts[1] == "__main__" else parts[1]


def _imports() -> dict[str, set[tuple[str, str]]]:
    """Module -> (imported module, imported name) for every `kg` import, lazy ones too."""
    found: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for path in sorted(KG.rglob("*.py")):
        module = _module(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kg"):
                for alias in node.names:
                    found[module].add((node.module or "", alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("kg"):
                        found[module].add((alias.name, ""))
    return found


def _target(module: str, name: str) -> str:
    """`from kg.query import stored` imports the module kg.query.stored; `from kg.query.stored
    import run` imports from kg.query.stored."""
    candidate = KG.parent / f"{module}.{name}".replace(".", "/")
    is_module = candidate.is_dir() or candidate.with_suffix(".py").is_file()
    return f"{module}.{name}" if name and is_module else module


def test_every_module_belongs_to_a_known_stage():
    stages = {_stage(_module(p)) for p in KG.rglob("*.py")}
    assert stages <= set(ORDER), sorted(stages - set(ORDER))
    assert {"ingest", "resolve", "graph", "validate", "publish", "query", "serve"} <= stages


def test_stages_import_only_stages_before_them():
    rank = {stage: i for i, stage in enumerate(ORDER)}
    wrong = []
    for module, targets in _imports().items():
        for target, name in targets:
            target_module = _target(target, name)
            here, there = _stage(module), _stage(target_module)
            if rank[there] > rank[here]:
                wrong.append(f"{module} ({here}) imports {target_module} ({there})")
    assert wrong == []


def test_no_stage_uses_another_stages_private_names():
    wrong = [
        f"{module} imports {name} from {target}"
        for module, targets in _imports().items()
        for target, name in targets
        if name.startswith("_") and not name.startswith("__") and _stage(module) != _stage(target)
    ]
    assert wrong == []


@pytest.mark.parametrize(
    "path", sorted(p for p in KG.rglob("*.py") if p.name not in {"cli.py", "__main__.py"})
)
def test_only_the_cli_exits(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            called = f"{getattr(node.func.value, 'id', '')}.{node.func.attr}"
            assert called not in {"sys.exit", "os._exit"}, f"{path.name}:{node.lineno}"


def _packages(module: str) -> set[str]:
    """Importing kg.serve.app runs kg/serve/__init__.py first: kg.serve.app, kg.serve."""
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(2, len(parts) + 1)}


def _cycle() -> list[str]:
    """One import cycle among kg's modules (lazy imports count too; importing a module
    imports the packages it is in), or []."""
    graph = {
        module: sorted({p for t, name in targets for p in _packages(_target(t, name))} - {module})
        for module, targets in _imports().items()
    }
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        path.append(module)
        for target in graph.get(module, []):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        state[module] = 2
        path.pop()
        return []

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return []


def test_no_import_cycles():
    assert _cycle() == [], " -> ".join(_cycle())


def test_the_cycle_finder_finds_a_cycle(monkeypatch):
    fake = {"kg.a": {("kg.b", "f")}, "kg.b": {("kg.c", "g")}, "kg.c": {("kg.a", "h")}}
    monkeypatch.setitem(globals(), "_imports", lambda: fake)
    assert _cycle() == ["kg.a", "kg.b", "kg.c", "kg.a"]


def test_a_profiles_publication_declares_every_printed_detail():
    """kg.model.PrintedDetails is the one list the importers' records, resolved
    publications and citations inherit; a profile's Publication declares the same fields
    (with their documentation), so a detail added to one reaches the other."""
    from kg.model import PRINTED_DETAILS, Publication

    assert set(PRINTED_DETAILS) <= set(Publication.__dataclass_fields__)


def test_kg_starts_python_only_through_python_command():
    """A new interpreter that runs with `-c` or `-m` puts the current folder (a project's,
    which may hold a planted `pickle.py`) first on sys.path unless it gets `-P`: every
    place kg starts Python goes through `kg.workers.python_command`, which adds it."""
    found = []
    for path in sorted(KG.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Attribute) and ast.unparse(node) == "sys.executable":
                    found.append(f"{path.relative_to(KG)}:{function.name}")
    assert sorted(set(found)) == ["workers.py:python_command"]
