"""Stored SPARQL queries (grlc conventions), run on the built graph or on any endpoint.

A query file `queries/<name>.rq` starts with grlc decorators (`#+ summary:`,
`#+ description:`, `#+ tags:`, `#+ defaults:`). Parameters are variables named
`?_name` (a plain literal), `?_name_iri` (an IRI), or `?_name_integer`,
`?_name_boolean`, `?_name_date`, `?_name_gYear` (typed literals).

Values are always bound as RDF terms, never spliced into text as given. The query is
scanned once, token by token, and each parameter variable outside strings, IRIs and
comments is replaced by its term, validated and escaped (`sparql_term`), in that one
pass: a value can only ever be one term, and a value that names another parameter stays
a literal. The same text runs embedded (pyoxigraph) and remotely. Embedded queries
refuse `SERVICE` (it makes the process fetch from the network) unless allowed.
"""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, cast

import yaml
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import XSD
from rdflib.term import Node

from kg.errors import KgError, QueryError, RemoteError, UsageError
from kg.iri import iri_problem

if TYPE_CHECKING:
    import pyoxigraph as ox
    from rdflib.query import ResultRow

    from kg.graph.triples import GraphLike
    from kg.query.net import Response
    from kg.query.store import QueryStore

TYPED_SUFFIXES = {
    "integer": XSD.integer,
    "boolean": XSD.boolean,
    "date": XSD.date,
    "gYear": XSD.gYear,
}
_PARAM = re.compile(r"\?_([A-Za-z][A-Za-z0-9]*?)(?:_(iri|integer|boolean|date|gYear))?\b")
_FORM = re.compile(r"^\s*(SELECT|ASK|CONSTRUCT|DESCRIBE)\b", re.I | re.M)


@dataclass(frozen=True)
class Parameter:
    name: str
    variable: str
    kind: str  # "iri", "literal", or a typed suffix
    default: str | None

    def term(self, value: str) -> URIRef | Literal:
        """The RDF term for a value given on the command line."""
        if self.kind == "iri":
            problem = iri_problem(value)
            if problem:
                raise UsageError(
                    f"parameter {self.name}: {value!r} is not an absolute IRI: expected {problem}"
                )
            return URIRef(value)
        if self.kind in TYPED_SUFFIXES:
            term = Literal(value, datatype=TYPED_SUFFIXES[self.kind])
            if term.ill_typed:
                raise UsageError(f"parameter {self.name}: {value!r} is not a valid {self.kind}")
            return term
        return Literal(value)


@dataclass(frozen=True)
class StoredQuery:
    name: str
    text: str
    summary: str
    description: str
    tags: tuple[str, ...]
    parameters: tuple[Parameter, ...]
    form: str
    path: Path | None = None
    owner_graph: str | None = None  # `#+ owner-graph: NAME` (see `owner_iri`)
    # `#+ precompute: SELECT ...`: the parameter values `kg build` answers the query for
    # ahead of time (kg.query.answers), one row of values (named as the parameters) each
    precompute: str | None = None

    def owner_iri(self, values: dict[str, str]) -> str | None:
        """`#+ owner-graph: person` on a CONSTRUCT query says that its answer is the page
        owner's graph: the triples of the IRI given as `person` and of every subject minted
        under it. The IRI, or None for other queries."""
        if self.owner_graph is None or self.form != "CONSTRUCT":
            return None
        term = self.bindings(values).get(f"_{self.owner_graph}_iri")
        return str(term) if isinstance(term, URIRef) else None

    def bindings(self, values: dict[str, str]) -> dict[str, URIRef | Literal]:
        """Terms for every parameter: the given value, else the default."""
        known = {p.name for p in self.parameters}
        unknown = sorted(set(values) - known)
        if unknown:
            expected = ", ".join(sorted(known)) or "none"
            raise UsageError(
                f"query {self.name!r} has no parameter {', '.join(unknown)} "
                f"(parameters: {expected})"
            )
        result = {}
        for p in self.parameters:
            value = values.get(p.name, p.default)
            if value is None:
                raise UsageError(f"query {self.name!r} needs --param {p.name}=VALUE")
            result[p.variable] = p.term(value)
        return result


def parse_query(text: str, name: str, path: Path | None = None) -> StoredQuery:
    """Read the grlc decorators and parameters of one query text."""
    header = "\n".join(
        line[3:] if line.startswith("#+ ") else line[2:]
        for line in text.splitlines()
        if line.startswith("#+")
    )
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~10x faster
        meta = yaml.load(header, Loader=loader) if header.strip() else {}
    except yaml.YAMLError as exc:
        raise QueryError(f"{path or name}: the #+ header is not valid YAML: {exc}") from None
    meta = meta if isinstance(meta, dict) else {}
    defaults = _defaults(meta.get("defaults"))
    params: dict[str, Parameter] = {}
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    for match in _PARAM.finditer(body):
        base, kind = match.group(1), match.group(2) or "literal"
        variable = match.group(0)[1:]
        params.setdefault(base, Parameter(base, variable, kind, defaults.get(base)))
    form = _FORM.search(body)
    if not form:
        raise QueryError(f"{path or name}: not a SELECT, ASK, CONSTRUCT or DESCRIBE query")
    return StoredQuery(
        name=name,
        text=text,
        summary=str(meta.get("summary", "")).strip(),
        description=str(meta.get("description", "")).strip(),
        tags=tuple(str(t) for t in meta.get("tags") or ()),
        parameters=tuple(params.values()),
        form=form.group(1).upper(),
        path=path,
        owner_graph=str(meta["owner-graph"]) if meta.get("owner-graph") else None,
        precompute=str(meta["precompute"]) if meta.get("precompute") else None,
    )


def _defaults(raw: object) -> dict[str, str]:
    items = raw if isinstance(raw, list) else [raw] if isinstance(raw, dict) else []
    found: dict[str, str] = {}
    for item in items:
        if isinstance(item, dict):
            found.update({str(k): str(v) for k, v in item.items()})
    return found


def load_queries(folder: Path) -> dict[str, StoredQuery]:
    """Every `*.rq` in `folder`, by name (the file stem)."""
    queries = {}
    for path in sorted(folder.glob("*.rq")):
        queries[path.stem] = parse_query(read_query_file(path), path.stem, path)
    return queries


MAX_QUERY_BYTES = 1024 * 1024


def read_query_file(path: Path) -> str:
    """A query file's text: a regular file (not a FIFO or device, which would hang or
    fill memory) of at most MAX_QUERY_BYTES, in UTF-8."""
    from kg.files import NotRegularFile, read_regular

    try:
        data = read_regular(path, MAX_QUERY_BYTES)
    except NotRegularFile:
        raise QueryError(f"{path}: not a regular file; expected a .rq query file") from None
    except OSError as exc:
        raise QueryError(f"{path}: cannot read the query ({exc.strerror or exc})") from None
    if len(data) > MAX_QUERY_BYTES:
        raise QueryError(f"{path}: more than {MAX_QUERY_BYTES} bytes; expected a query file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise QueryError(f"{path}: invalid UTF-8 at byte {exc.start}") from None


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class Answer:
    """A query result: rows of terms (SELECT), a boolean (ASK) or a graph (CONSTRUCT)."""

    form: str
    variables: tuple[str, ...] = ()
    rows: tuple[tuple[Node | None, ...], ...] = ()
    boolean: bool | None = None
    graph: Graph | None = None

    @property
    def size(self) -> int:
        """Rows, triples, or 1/0 for a boolean."""
        if self.form == "ASK":
            return int(bool(self.boolean))
        return len(self.graph) if self.graph is not None else len(self.rows)

    def text(self, fmt: str, base: str | None) -> str | None:
        """The answer as `kg.query.results.render` writes it, where it is already known
        (a precomputed answer, kg.query.answers); else None."""
        return None


def run_embedded(
    source: GraphLike | QueryStore,
    query: StoredQuery,
    values: dict[str, str] | None = None,
    allow_service: bool = False,
    precomputed: bool = True,
) -> Answer:
    """Answer a query in process with pyoxigraph (a graph is loaded into a store first).

    Parameters are bound as terms in one pass (`with_values`; pyoxigraph's own
    `substitutions` drop values used in BIND expressions, see docs/decisions/0009); a
    query that uses SERVICE is refused unless `allow_service` (it would reach the network).
    A query on a build's store may be answered by `kg build`'s precomputed answer
    (kg.query.answers: a query without parameters, or one with the values its
    `#+ precompute:` lists), unless `precomputed` is False.
    """
    from kg.query.store import QueryStore, solutions, triples_graph

    if not allow_service and uses_service(query.text):
        raise QueryError(
            f"query {query.name!r} uses SERVICE, which fetches from the network; "
            "pass --allow-service to run it"
        )
    store = source if isinstance(source, QueryStore) else QueryStore.from_graph(source)
    if precomputed and store.answers is not None:
        known = store.answers.find(
            query,
            lambda: run_embedded(store, query, values, allow_service, precomputed=False),
            values or {},
        )
        if isinstance(known, Answer):
            return known
    owner = query.owner_iri(values or {})
    found = store.owner_graph(owner) if owner else None
    if found is not None:  # read by the store's page-owner index (kg.query.persist)
        return Answer(query.form, graph=found)
    bindings = query.bindings(values or {})
    text = store_form(store, query, bindings)  # kg's faster text on its own store
    result = store.query(with_values(query, bindings, text), query.name)
    try:  # answers are computed while they are read
        if query.form == "ASK":
            return Answer("ASK", boolean=bool(result))
        if query.form in ("CONSTRUCT", "DESCRIBE"):
            return Answer(query.form, graph=triples_graph(cast("ox.QueryTriples", result)))
        variables, rows = solutions(cast("ox.QuerySolutions", result))
    except (OSError, ValueError, RuntimeError) as exc:
        raise QueryError(f"query {query.name!r} failed: {_first_line(exc)}") from None
    return Answer("SELECT", variables, tuple(rows))


def store_form(store: QueryStore, query: StoredQuery, bindings: Mapping[str, Node]) -> str | None:
    """kg's faster text of `query` for its persistent store, or None: shared-coauthors
    and coauthor-network read the store's co-author index (kg.query.coauthors; same
    parameters, same answer) when the query is kg's own text (not a project's query of
    the same name) and the store has the index (not an in-memory graph, not a graph
    without co-authors)."""
    from kg.query import coauthors

    if query.name == coauthors.NETWORK and query.text in _kg_texts(coauthors.NETWORK):
        return coauthors.NETWORK_TEXT if store.has_graph(coauthors.COAUTHORS) else None
    if query.name != coauthors.QUERY or query.text not in _kg_texts(coauthors.QUERY):
        return None
    a, b = bindings.get("_a_iri"), bindings.get("_b_iri")
    if not isinstance(a, URIRef) or not isinstance(b, URIRef):
        return None
    if not store.has_graph(coauthors.COAUTHORS):
        return None
    return coauthors.store_text(str(a), str(b), store.oxigraph)


def kg_texts(name: str) -> frozenset[str]:
    """kg's own text of a stored query, as written and with kg's prefixes declared."""
    return _kg_texts(name)


@lru_cache(maxsize=4)
def _kg_texts(name: str) -> frozenset[str]:
    """kg's own text of a stored query, as written and with kg's prefixes declared."""
    from kg.config import builtin_queries_dir

    folder = builtin_queries_dir()
    if folder is None:
        return frozenset()
    try:
        query = parse_query(read_query_file(folder / f"{name}.rq"), name)
    except KgError:
        return frozenset()
    return frozenset({query.text, with_kg_prefixes(query).text})


def with_kg_prefixes(query: StoredQuery) -> StoredQuery:
    """The query with kg's prefixes (schema, foaf, kg, rdf, xsd, ...) declared, unless the
    text declares them itself; written on the first line, so line numbers stay the same."""
    from kg.graph.namespaces import PREFIXES

    declared = set(DECLARED_PREFIX.findall(query.text))
    missing = [f"PREFIX {p}: <{ns}>" for p, ns in PREFIXES.items() if p not in declared]
    if not missing:
        return query
    return dataclasses.replace(query, text=" ".join(missing) + " " + query.text)


DECLARED_PREFIX = re.compile(r"\bPREFIX\s+([A-Za-z][\w.-]*)?:", re.I)  # its prefix

# Tokens that can hold text which is not syntax: comments, strings (long forms first),
# IRIs; and the variables we look for. One regex, one pass.
_TOKENS = re.compile(
    r"""(?P<skip>\#[^\n]*|'{3}(?:[^'\\]|\\.|'(?!''))*'{3}|"{3}(?:[^"\\]|\\.|"(?!""))*"{3}"""
    r"""|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|<[^<>"{}|^`\\\s]*>)"""
    r"""|(?P<var>[?$][A-Za-z0-9_\u00b7\u00c0-\U000effff]+)|(?P<brace>\{)""",
    re.S,
)
_SERVICE = re.compile(r"(?<![\w?$:])SERVICE(?![\w:])", re.I)
_CODEPOINT = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def _unescape_codepoints(text: str) -> str:
    """SPARQL's \\uXXXX escapes, which a parser may expand before anything else."""
    return _CODEPOINT.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), text)


def uses_service(text: str) -> bool:
    """Whether the query text has a SERVICE keyword (outside strings, IRIs, comments)."""
    syntax = _TOKENS.sub(
        lambda m: " " if m.group("skip") else m.group(), _unescape_codepoints(text)
    )
    return bool(_SERVICE.search(syntax))


def sparql_term(term: Node) -> str:
    """A term as SPARQL text: an IRI checked again, a literal escaped so it stays one."""
    if isinstance(term, URIRef):
        problem = iri_problem(str(term))
        if problem:
            raise UsageError(f"{str(term)!r} cannot be sent as an IRI: expected {problem}")
        return f"<{term}>"
    if not isinstance(term, Literal):
        raise UsageError(f"{term!r} cannot be sent as a parameter")
    text = str(term)
    if _CODEPOINT.search(text):
        raise UsageError(f"{text!r}: a value with \\u escapes cannot be sent to an endpoint safely")
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    if term.language:
        return f'"{body}"@{term.language}'
    if term.datatype is not None:
        return f'"{body}"^^{sparql_term(term.datatype)}'
    return f'"{body}"'


def run_rdflib(graph: Graph, query: StoredQuery, values: dict[str, str] | None = None) -> Answer:
    """The reference engine: rdflib's SPARQL (slow on big graphs; the tests and
    `kg bench run` compare it with `run_embedded`). Parameters are substituted into the
    text by `with_values`, as for the other engines, so both see the same query: rdflib's
    `initBindings` would not reach parameters inside sub-SELECTs."""
    text = with_values(query, query.bindings(values or {}))
    try:
        result = graph.query(text)
    except Exception as exc:  # rdflib raises pyparsing and assorted errors on bad queries
        raise QueryError(f"query {query.name!r} failed: {exc}") from None
    if query.form == "ASK":
        return Answer("ASK", boolean=bool(result.askAnswer))
    if query.form in ("CONSTRUCT", "DESCRIBE"):
        return Answer(query.form, graph=_as_graph(result.graph))
    variables = tuple(str(v) for v in result.vars or ())
    selected = cast("Iterable[ResultRow]", result)  # a SELECT result iterates its rows
    rows = tuple(tuple(row[i] for i in range(len(variables))) for row in selected)
    return Answer("SELECT", variables, rows)


def _as_graph(triples: Graph | None) -> Graph:
    from kg.graph.namespaces import PREFIXES

    g = Graph(bind_namespaces="none")
    for prefix, ns in PREFIXES.items():
        g.bind(prefix, ns)
    for t in triples or ():
        g.add(t)
    return g


def with_values(query: StoredQuery, bindings: Mapping[str, Node], text: str | None = None) -> str:
    """The query text for a remote endpoint, every parameter replaced by its term in
    one pass over the tokens (strings, IRIs and comments are never changed; the head
    before the first `{` -- prologue and projection -- is left as written). `text`: another
    text of the same query to bind instead (kg.query.coauthors.store_form)."""
    terms = {name: sparql_term(term) for name, term in bindings.items()}
    in_body = False

    def replace(match: re.Match) -> str:
        nonlocal in_body
        if match.group("brace"):
            in_body = True
            return match.group()
        var = match.group("var")
        if var and in_body and var[1:] in terms:
            return terms[var[1:]]
        return match.group()

    return _TOKENS.sub(replace, query.text if text is None else text)


def _verbatim(text: str) -> Callable[[re.Match[str]], str]:
    """A `re.sub` replacement inserting `text` as it is (no backslash escapes)."""
    return lambda _match: text


def run_remote(
    endpoint: str,
    query: StoredQuery,
    values: dict[str, str] | None = None,
    timeout: float = 30.0,
    user: str | None = None,
    password: str | None = None,
) -> Answer:
    """Send the query to a SPARQL 1.1 endpoint (protocol POST with a form) with `kg.query.net`:
    one deadline, no credentials to another origin, one-line errors."""
    from kg.query import net

    text = with_values(query, query.bindings(values or {}))
    net.check_url(endpoint, "endpoint")
    graph_form = query.form in ("CONSTRUCT", "DESCRIBE")
    accept = _RDF_ACCEPT if graph_form else "application/sparql-results+json"
    credentials = net.Credentials(user, password or "") if user is not None else None
    response = net.request(
        "POST",
        endpoint,
        urllib.parse.urlencode({"query": text}).encode("utf-8"),
        {"Content-Type": "application/x-www-form-urlencoded", "Accept": accept},
        credentials,
        timeout,
    )
    _check_status(endpoint, response)
    if graph_form:
        return Answer(query.form, graph=_as_graph(_parse_graph(endpoint, response)))
    return _from_json(endpoint, response, query.form)


_RDF_ACCEPT = "application/n-triples, text/turtle;q=0.9"
_RDF_FORMATS = {"application/n-triples": "nt", "text/plain": "nt", "text/turtle": "turtle"}


def _check_status(endpoint: str, response: Response) -> None:
    from kg.query.net import one_line

    status, detail = response.status, one_line(response.body)
    if 200 <= status < 300:
        return
    if status in (401, 403):
        raise RemoteError(
            f"{endpoint}: authentication failed (HTTP {status}); check --user and the password"
        )
    if status == 404:
        raise RemoteError(f"{endpoint}: no SPARQL endpoint there (HTTP 404)")
    if status == 400:
        raise RemoteError(f"{endpoint}: the endpoint rejected the query (HTTP 400): {detail}")
    if status >= 500:
        raise RemoteError(f"{endpoint}: the endpoint failed (HTTP {status}): {detail}")
    raise RemoteError(f"{endpoint}: HTTP {status} {response.reason}: {detail}".rstrip(": "))


def _parse_graph(endpoint: str, response: Response) -> Graph:
    fmt = _RDF_FORMATS.get(response.content_type)
    if fmt is None:
        raise RemoteError(
            f"{endpoint}: expected N-Triples or Turtle, got {response.content_type or 'no type'}"
        )
    try:
        return Graph().parse(data=response.body.decode("utf-8"), format=fmt)
    except Exception as exc:  # rdflib raises assorted errors on bad input
        raise RemoteError(
            f"{endpoint}: the answer is not valid {fmt}: {_first_line(exc)}"
        ) from None


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _from_json(endpoint: str, response: Response, form: str) -> Answer:
    import json

    try:
        data = json.loads(response.body.decode("utf-8"))
    except ValueError:
        raise RemoteError(
            f"{endpoint}: the answer is not SPARQL JSON results "
            f"(HTTP {response.status}, {response.content_type or 'no content type'})"
        ) from None
    try:
        return _answer(data, form)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RemoteError(f"{endpoint}: malformed SPARQL JSON results: {exc}") from None


def _answer(data: dict, form: str) -> Answer:
    if form == "ASK":
        if not isinstance(data.get("boolean"), bool):
            raise ValueError("no boolean in the answer to an ASK query")
        return Answer("ASK", boolean=data["boolean"])
    variables = tuple(str(v) for v in data["head"]["vars"])
    rows = []
    for binding in data["results"]["bindings"]:
        rows.append(tuple(_term(v, binding.get(v)) for v in variables))
    return Answer("SELECT", variables, tuple(rows))


def _term(variable: str, value: dict | None) -> Node | None:
    if value is None:
        return None
    kind, text = value.get("type"), value.get("value")
    if not isinstance(text, str):
        raise ValueError(f"the binding of ?{variable} has no text value")
    if kind == "uri":
        return URIRef(text)
    if kind == "bnode":
        from rdflib import BNode

        return BNode(text)
    if kind not in ("literal", "typed-literal"):
        raise ValueError(f"the binding of ?{variable} has type {kind!r}, not uri/literal/bnode")
    return Literal(
        text,
        lang=value.get("xml:lang"),
        datatype=URIRef(value["datatype"]) if value.get("datatype") else None,
    )
