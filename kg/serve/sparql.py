"""The SPARQL 1.1 Protocol on the embedded pyoxigraph store: run, bound in time and
size, and write the answer in the negotiated format.

pyoxigraph evaluates lazily, so the deadline and the result limit are checked while
the answer is read: a query stops when its time is up, except inside an operator
that must see all its input first (ORDER BY, GROUP BY), which finishes that step in
its worker thread before it notices (docs/serve.md).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from html import escape as _escape

import pyoxigraph as ox

from kg.serve.negotiate import choose

SELECT_TYPES = (
    "application/sparql-results+json",
    "application/sparql-results+xml",
    "text/csv",
    "text/tab-separated-values",
    "application/json",
    "application/xml",
)
ASK_TYPES = ("application/sparql-results+json", "application/sparql-results+xml",
             "application/json", "application/xml")  # fmt: skip
GRAPH_TYPES = {
    "text/turtle": ox.RdfFormat.TURTLE,
    "application/ld+json": ox.RdfFormat.JSON_LD,
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "application/rdf+xml": ox.RdfFormat.RDF_XML,
}
_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


class QueryTimeout(Exception):
    """The query ran out of time."""


class NotAcceptable(Exception):
    """No format of this kind of answer fits the Accept header."""

    def __init__(self, offered: tuple[str, ...]) -> None:
        super().__init__(", ".join(offered))
        self.offered = offered


@dataclass(frozen=True)
class Limits:
    """What one query may use (docs/serve.md#limits)."""

    timeout: float = 10.0  # seconds of wall time (and of CPU time, in its worker)
    max_results: int = 10_000  # rows or triples
    concurrent: int = 4  # queries running at once, one worker process each; more get 503
    memory: int = 512 * 1024 * 1024  # bytes of address space a query may add to its worker
    max_depth: int = 40  # bracket nesting; deeper is refused before parsing
    max_query: int = 64 * 1024  # bytes of query text (and of a POST body to /sparql)


@dataclass(frozen=True)
class Answer:
    body: bytes
    media_type: str
    truncated: bool


def execute(
    store: ox.Store,
    query: str,
    accept: str | None,
    limits: Limits,
    default_graphs: list[str] | None = None,
    named_graphs: list[str] | None = None,
    base_iri: str | None = None,
) -> Answer:
    """Run `query` and write its answer; raises SyntaxError for a bad query,
    QueryTimeout, NotAcceptable."""
    deadline = time.monotonic() + limits.timeout
    options: dict = {"base_iri": base_iri} if base_iri else {}
    if default_graphs:
        options["default_graph"] = [ox.NamedNode(g) for g in default_graphs]
    if named_graphs:
        options["named_graphs"] = [ox.NamedNode(g) for g in named_graphs]
    result = store.query(query, **options)
    # pyoxigraph's answers must be dropped by the thread that made them: nothing that
    # leaves this function (an exception's frames included) may still hold `result`
    if isinstance(result, ox.QueryBoolean):
        media = choose(accept, ASK_TYPES)
        value = bool(result)
        del result
        if media is None:
            raise NotAcceptable(ASK_TYPES)
        return Answer(_boolean(value, media), _charset(media), False)
    if isinstance(result, ox.QuerySolutions):
        media = choose(accept, SELECT_TYPES)
        variables = [v.value for v in result.variables]
        rows, truncated, late = _bounded(result, limits, deadline, media is not None)
        del result
        chosen = _check(media, SELECT_TYPES, late)
        return Answer(_solutions(variables, rows, chosen), _charset(chosen), truncated)
    media = choose(accept, tuple(GRAPH_TYPES))
    triples, truncated, late = _bounded(result, limits, deadline, media is not None)
    del result
    chosen = _check(media, tuple(GRAPH_TYPES), late)
    body = ox.serialize(triples, format=GRAPH_TYPES[chosen], prefixes=_prefixes(chosen))
    return Answer(body or b"", _charset(chosen), truncated)


def _check(media: str | None, offered: tuple[str, ...], late: bool) -> str:
    if media is None:
        raise NotAcceptable(offered)
    if late:
        raise QueryTimeout()
    return media


def _charset(media: str) -> str:
    if "json" in media:
        return media  # JSON is UTF-8 by definition; JSON-LD loaders reject a charset
    return f"{media}; charset=utf-8"


def _prefixes(media: str) -> dict[str, str] | None:
    if media != "text/turtle":
        return None
    from kg.graph.namespaces import PREFIXES  # rdflib: only for Turtle answers

    return {prefix: str(ns) for prefix, ns in PREFIXES.items()}


def _bounded(result, limits: Limits, deadline: float, wanted: bool) -> tuple[list, bool, bool]:
    """(items, truncated, out of time): at most `max_results` items, read until the
    deadline (nothing is read when the answer is not `wanted`)."""
    items: list = []
    if not wanted:
        return items, False, False
    for item in result:
        if len(items) >= limits.max_results:
            return items, True, False
        if len(items) % 256 == 0 and time.monotonic() > deadline:
            return [], False, True
        items.append(item)
    return items, False, time.monotonic() > deadline


# ------------------------------------------------------------------ result formats


def _boolean(value: bool, media: str) -> bytes:
    if media.endswith("json"):
        return json.dumps({"head": {}, "boolean": value}).encode()
    return (
        '<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">'
        f"<head/><boolean>{'true' if value else 'false'}</boolean></sparql>\n"
    ).encode()


def _solutions(variables: list[str], rows: list, media: str) -> bytes:
    if media.endswith("json"):
        return _json(variables, rows)
    if media.endswith("xml"):
        return _xml(variables, rows)
    if media == "text/csv":
        return _csv(variables, rows)
    return _tsv(variables, rows)


def escape(text: str) -> str:
    """XML character data (xml.sax.saxutils imports urllib: slow for a worker)."""
    return _escape(text, quote=False)


def quoteattr(text: str) -> str:
    return '"' + _escape(text, quote=True) + '"'


def _json_term(term) -> dict:
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, ox.Literal):
        out = {"type": "literal", "value": term.value}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype.value != _XSD_STRING:
            out["datatype"] = term.datatype.value
        return out
    return {"type": "triple", "value": str(term)}


def _json(variables: list[str], rows: list) -> bytes:
    bindings = []
    for row in rows:
        bound = {}
        for i, name in enumerate(variables):
            term = row[i]
            if term is not None:
                bound[name] = _json_term(term)
        bindings.append(bound)
    document = {"head": {"vars": variables}, "results": {"bindings": bindings}}
    return json.dumps(document, ensure_ascii=False).encode()


def _xml_term(term) -> str:
    if isinstance(term, ox.NamedNode):
        return f"<uri>{escape(term.value)}</uri>"
    if isinstance(term, ox.BlankNode):
        return f"<bnode>{escape(term.value)}</bnode>"
    if term.language:
        return f"<literal xml:lang={quoteattr(term.language)}>{escape(term.value)}</literal>"
    if term.datatype.value != _XSD_STRING:
        return f"<literal datatype={quoteattr(term.datatype.value)}>{escape(term.value)}</literal>"
    return f"<literal>{escape(term.value)}</literal>"


def _xml(variables: list[str], rows: list) -> bytes:
    out = ['<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">']
    out.append("<head>" + "".join(f"<variable name={quoteattr(v)}/>" for v in variables))
    out.append("</head>\n<results>\n")
    for row in rows:
        out.append("<result>")
        for i, name in enumerate(variables):
            if row[i] is not None:
                out.append(f"<binding name={quoteattr(name)}>{_xml_term(row[i])}</binding>")
        out.append("</result>\n")
    out.append("</results>\n</sparql>\n")
    return "".join(out).encode()


def _csv_cell(term) -> str:
    if term is None:
        return ""
    text = f"_:{term.value}" if isinstance(term, ox.BlankNode) else term.value
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv(variables: list[str], rows: list) -> bytes:
    lines = [",".join(variables)]
    lines += [",".join(_csv_cell(row[i]) for i in range(len(variables))) for row in rows]
    return ("\r\n".join(lines) + "\r\n").encode()


def _tsv(variables: list[str], rows: list) -> bytes:
    lines = ["\t".join(f"?{v}" for v in variables)]
    for row in rows:
        lines.append(
            "\t".join("" if row[i] is None else str(row[i]) for i in range(len(variables)))
        )
    return ("\n".join(lines) + "\n").encode()


def service_description(endpoint: str, triples: int) -> bytes:
    """SPARQL 1.1 Service Description of the endpoint, in Turtle (no blank nodes)."""
    formats = "".join(
        f"    sd:resultFormat <http://www.w3.org/ns/formats/{name}> ;\n"
        for name in ("SPARQL_Results_JSON", "SPARQL_Results_XML", "SPARQL_Results_CSV",
                     "SPARQL_Results_TSV", "Turtle", "JSON-LD", "N-Triples", "RDF_XML")
    )  # fmt: skip
    return (
        "@prefix sd: <http://www.w3.org/ns/sparql-service-description#> .\n"
        "@prefix void: <http://rdfs.org/ns/void#> .\n\n"
        f"<{endpoint}> a sd:Service ;\n"
        f"    sd:endpoint <{endpoint}> ;\n"
        "    sd:supportedLanguage sd:SPARQL11Query ;\n"
        f"{formats}"
        f"    sd:defaultDataset <{endpoint}#dataset> .\n\n"
        f"<{endpoint}#dataset> a sd:Dataset ;\n"
        f"    sd:defaultGraph <{endpoint}#default-graph> .\n\n"
        f"<{endpoint}#default-graph> a sd:Graph ;\n"
        f"    void:triples {triples} .\n"
    ).encode()
