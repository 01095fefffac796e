"""Write query answers: table, CSV, TSV, SPARQL 1.1 JSON results, Turtle / JSON-LD graphs."""

from __future__ import annotations

import csv
import io
import json
import re
from json.encoder import encode_basestring as _string

from rdflib import BNode, Literal, URIRef
from rdflib.term import Node

from kg.display import terminal_safe
from kg.graph.namespaces import PREFIXES
from kg.graph.ntriples import ntriples_term
from kg.publish.export import to_jsonld, to_turtle
from kg.query.stored import Answer

FORMATS = ("table", "csv", "tsv", "json", "ttl")


def render(answer: Answer, fmt: str, base: str | None = None) -> str:
    """The answer in `fmt`; the table shows IRIs short (`person/xin-jin` under `base`,
    `schema:Person`), every other format writes them in full."""
    known = answer.text(fmt, base)  # a precomputed answer (kg.query.answers)
    if known is not None:
        return known
    if answer.graph is not None:
        return to_jsonld(answer.graph) if fmt == "json" else to_turtle(answer.graph)
    if fmt == "json":
        return indented(to_sparql_json(answer)) + "\n"
    if answer.form == "ASK":
        return ("true" if answer.boolean else "false") + "\n"
    if fmt in ("csv", "tsv"):
        return _delimited(answer, fmt)
    return _table(answer, base)


def same_text_as(answer: Answer, fmt: str) -> str:
    """The format whose text `render` also writes for `fmt`: a graph is JSON-LD or
    Turtle, an ASK answer is JSON or one line, a SELECT's `ttl` is its table."""
    if fmt == "json":
        return fmt
    if answer.graph is not None:
        return "ttl"
    if answer.form == "ASK":
        return "table"
    return fmt if fmt in ("csv", "tsv") else "table"


def to_sparql_json(answer: Answer) -> dict:
    """The SPARQL 1.1 Query Results JSON Format."""
    if answer.form == "ASK":
        return {"head": {}, "boolean": bool(answer.boolean)}
    rows = [
        {v: _json_term(t) for v, t in zip(answer.variables, row, strict=True) if t is not None}
        for row in answer.rows
    ]
    return {"head": {"vars": list(answer.variables)}, "results": {"bindings": rows}}


def indented(value: object, level: int = 0) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False)`, its very text, with strings
    written by json's C encoder (`indent` makes json take its pure-Python encoder, a
    third slower on a large answer: decision 0059). Objects (string keys), lists and
    strings are written here, any other value by json."""
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        if not value:
            return "{}"
        inner = "\n" + "  " * (level + 1)
        items = (
            f"{_string(k)}: {_string(v) if type(v) is str else indented(v, level + 1)}"
            for k, v in value.items()
        )
        return "{" + inner + ("," + inner).join(items) + "\n" + "  " * level + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        inner = "\n" + "  " * (level + 1)
        items = (indented(v, level + 1) for v in value)
        return "[" + inner + ("," + inner).join(items) + "\n" + "  " * level + "]"
    text = json.dumps(value, indent=2, ensure_ascii=False)  # nested: one level deeper
    return text.replace("\n", "\n" + "  " * level) if level else text


def _json_term(term: Node) -> dict:
    if isinstance(term, URIRef):
        return {"type": "uri", "value": str(term)}
    if isinstance(term, BNode):
        return {"type": "bnode", "value": str(term)}
    assert isinstance(term, Literal)
    out = {"type": "literal", "value": str(term)}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype:
        out["datatype"] = str(term.datatype)
    return out


def _plain(term: Node | None) -> str:
    return "" if term is None else str(term)


def _delimited(answer: Answer, fmt: str) -> str:
    buffer = io.StringIO()
    if fmt == "csv":  # SPARQL 1.1 CSV: plain values
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(answer.variables)
        for row in answer.rows:
            writer.writerow([_plain(t) for t in row])
        return buffer.getvalue()
    # SPARQL 1.1 TSV: RDF terms in N-Triples form (tabs and newlines escaped), one row a line
    lines = ["\t".join(f"?{v}" for v in answer.variables)]
    lines += ["\t".join("" if t is None else ntriples_term(t) for t in row) for row in answer.rows]
    return "\n".join(lines) + "\n"


def short_iri(term: Node | None, base: str | None) -> str:
    """An IRI as `person/xin-jin` (under the base) or `schema:Person`; other terms as text."""
    if not isinstance(term, URIRef):
        return _plain(term)
    if base and term.startswith(base) and len(term) > len(base):
        return term[len(base) :]
    for prefix, namespace in PREFIXES.items():
        local = term[len(namespace) :]
        if term.startswith(namespace) and re.fullmatch(r"[A-Za-z_][\w.-]*", local or "-"):
            return f"{prefix}:{local}"
    return str(term)


def _table(answer: Answer, base: str | None = None) -> str:
    header = list(answer.variables)
    body = [
        [terminal_safe(short_iri(t, base).replace("\n", " ")) for t in row] for row in answer.rows
    ]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    out = [line(header), line(["-" * w for w in widths])] + [line(r) for r in body]
    out.append(f"({len(body)} row{'s' if len(body) != 1 else ''})")
    return "\n".join(out) + "\n"
