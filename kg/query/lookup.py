"""Help around running queries: built-in and project queries together, kg's prefixes
predeclared, undeclared prefixes caught before the engine sees them, and parameters given
as a slug or an exact name turned into the IRI they mean.

Parameter values are resolved here, before binding: the result is always an absolute IRI
that `kg.query.stored` binds as an RDF term like any other value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from kg.errors import QueryError, UsageError
from kg.graph.namespaces import PREFIXES
from kg.query.stored import (
    DECLARED_PREFIX,
    Answer,
    Parameter,
    StoredQuery,
    load_queries,
    parse_query,
)

Ask = Callable[[StoredQuery, dict[str, str]], Answer]

# the IRI kinds a slug can name (`{base}{kind}/{slug}`), and which parameter names mean which
SLUG_KINDS = ("person", "org", "venue", "publication")
_KIND_OF_PARAMETER = {"org": "org", "organization": "org", "venue": "venue"}
_KIND_OF_PARAMETER |= {"publication": "publication", "paper": "publication"}
_ABSOLUTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_STRIP = re.compile(
    r'<[^<>\s]*>|"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"'
    r"|'(?:[^'\\\n]|\\.)*'|#[^\n]*"
)
_USED = re.compile(r"(?<![\w?$:.-])([A-Za-z][\w-]*(?:\.[\w-]+)*)?:(?=[\w%\\-]|\s|[;,.)\]}])")


def load_all_queries(builtin: Path | None, project: Path | None) -> dict[str, StoredQuery]:
    """The built-in queries and the project's `queries/`; the project's win on a name clash."""
    queries: dict[str, StoredQuery] = {}
    for folder in (builtin, project):
        if folder is not None and folder.is_dir():
            queries.update(load_queries(folder))
    return dict(sorted(queries.items()))


def check_prefixes(query: StoredQuery) -> None:
    """One line naming an undeclared prefix, instead of the parser's list of expected tokens."""
    declared = set(DECLARED_PREFIX.findall(query.text))
    used = {match.group(1) or "" for match in _USED.finditer(_STRIP.sub(" ", query.text))}
    unknown = sorted(used - declared - {""} - {"_"})
    if "" in used and "" not in declared:
        unknown.insert(0, "")
    if unknown:
        names = ", ".join(f"{p}:" for p in unknown)
        raise QueryError(
            f"query {query.name!r} uses the undeclared prefix {names}; declare it "
            f"(PREFIX {unknown[0]}: <...>) or use one kg predeclares: "
            f"{', '.join(PREFIXES)}"
        )


def defaults_used(query: StoredQuery, values: dict[str, str]) -> list[Parameter]:
    """The parameters that will take their default because no value was given."""
    return [p for p in query.parameters if p.name not in values and p.default is not None]


def resolve_values(query: StoredQuery, values: dict[str, str], ask: Ask, base: str) -> dict:
    """Every value (given or default) of an IRI parameter as an absolute IRI: a slug
    (`xin-jin`) or an exact name (`Xin Jin`) is looked up in the graph with `ask`."""
    resolved = dict(values)
    for p in query.parameters:
        value = values.get(p.name, p.default)
        if p.kind == "iri" and value is not None and not _ABSOLUTE.match(value):
            resolved[p.name] = _lookup(p, value, ask, base)
    return resolved


_LOOKUP = """PREFIX schema: <http://schema.org/>
SELECT DISTINCT ?node WHERE {
  { ?_person_iri ?p1 ?o1 . BIND (?_person_iri AS ?node) }
  UNION { ?_org_iri ?p2 ?o2 . BIND (?_org_iri AS ?node) }
  UNION { ?_venue_iri ?p3 ?o3 . BIND (?_venue_iri AS ?node) }
  UNION { ?_publication_iri ?p4 ?o4 . BIND (?_publication_iri AS ?node) }
  UNION { ?node schema:name ?_name }
}
ORDER BY ?node
LIMIT 20
"""


def _lookup(parameter: Parameter, value: str, ask: Ask, base: str) -> str:
    slug = value if _SLUG.match(value) else "-"  # "-" mints IRIs that name nothing
    values = {kind: f"{base}{kind}/{slug}" for kind in SLUG_KINDS} | {"name": value}
    answer = ask(parse_query(_LOOKUP, f"lookup of {parameter.name}"), values)
    found = [str(row[0]) for row in answer.rows if row and row[0] is not None]
    kind = _KIND_OF_PARAMETER.get(parameter.name, "person")
    preferred = [iri for iri in found if iri.startswith(f"{base}{kind}/")]
    if len(found) == 1 or len(preferred) == 1:
        return (preferred or found)[0]
    if not found:
        raise UsageError(
            f"parameter {parameter.name}: nothing in the graph has the slug or the exact "
            f"name {value!r}; give a slug (the end of its IRI, like {kind}/SLUG), an exact "
            "name, or a full IRI (`kg query people` lists people)"
        )
    slugs = ", ".join(iri[len(base) :].split("/", 1)[-1] for iri in found)
    raise UsageError(
        f"parameter {parameter.name}: {value!r} names several things; give the slug of the "
        f"one you mean: {slugs}"
    )
