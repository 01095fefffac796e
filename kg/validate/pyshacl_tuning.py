"""Patches that make pySHACL (the `--engine pyshacl` path and the test oracle) faster
without changing its answers: each SPARQL text parsed once, constraint parameters looked
up in a set. Invariant: each patch is undone when its `with` block ends."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rdflib import Graph
from rdflib.term import Node


@contextmanager
def parsed_once() -> Iterator[None]:
    """Parse each SPARQL text once while pySHACL runs.

    pySHACL evaluates a SPARQL constraint once per focus node and passes the query as
    text, so rdflib parses it again every time (about 6 ms each: three quarters of the
    validation time on the seeds). Reusing the translated query with new initial
    bindings is exactly what rdflib's prepared queries do.
    """
    from rdflib.plugins.sparql import processor

    original = processor.SPARQLProcessor.query
    translated: dict = {}

    def query(self, text, initBindings=None, initNs=None, base=None, DEBUG=False):
        if isinstance(text, str):
            key = (text, base, tuple(sorted((initNs or {}).items())))
            if key not in translated:
                parsed = processor.parseQuery(text)
                translated[key] = processor.translateQuery(parsed, base, initNs)
            text = translated[key]
        return original(self, text, initBindings, initNs, base, DEBUG)

    processor.SPARQLProcessor.query = query  # type: ignore[method-assign]  # deliberate patch
    try:
        yield
    finally:
        processor.SPARQLProcessor.query = original  # type: ignore[method-assign]


class _ListWithSet(list):
    """A list whose `in` is a set lookup (it stays one through `copy` and `append`)."""

    def __init__(self, items=()) -> None:
        super().__init__(items)
        self._members = set(self)

    def __contains__(self, item: object) -> bool:
        return item in self._members

    def copy(self) -> _ListWithSet:
        return _ListWithSet(self)

    def append(self, item) -> None:
        super().append(item)
        self._members.add(item)


@contextmanager
def constraint_lookup_by_set() -> Iterator[None]:
    """Let pySHACL find a shape's constraint parameters with a set lookup.

    For every shape it evaluates (nested `sh:or` branches too, once per value node),
    pySHACL tests each predicate of the shape for membership in a list of about forty
    parameter IRIs; each test is a linear scan of rdflib's Python-level `__eq__` (a
    fifth of the validation time on a synthetic corpus). pySHACL reads the list from a
    module attribute it caches itself, so it is swapped for a list with a set inside.
    """
    from pyshacl import shape
    from pyshacl.constraints import ALL_CONSTRAINT_PARAMETERS, CONSTRAINT_PARAMETERS_MAP

    missing = object()
    original = getattr(shape.module, "CONSTRAINT_PARAMS", missing)
    fast = (_ListWithSet(ALL_CONSTRAINT_PARAMETERS), CONSTRAINT_PARAMETERS_MAP)
    shape.module.CONSTRAINT_PARAMS = fast  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if original is missing:
            del shape.module.CONSTRAINT_PARAMS
        else:
            shape.module.CONSTRAINT_PARAMS = original  # type: ignore[attr-defined]


def owner_shape(shapes: Graph, shape: Node | None) -> str:
    """Anonymous property shapes are reported under the node shape that holds them."""
    from kg.graph.namespaces import SH

    owner = shapes.value(None, SH.property, shape) if shape is not None else None
    return str(owner) if owner is not None else ""
