"""A SELECT's ORDER BY done by kg, not pyoxigraph, where kg can order exactly as it would
(decision 0042): on the persistent store every comparison of two strings reads both from
RocksDB, so ordering 25,000 rows by venue, year and title took 5 of the 6 CPU-s of
`publications-by-venue-year` at 10k people.

Invariant: `unordered` gives a text without its ORDER BY and the sort keys only for a
query whose algebra is SELECT [DISTINCT|REDUCED] over ORDER BY, with no LIMIT or OFFSET,
every condition a variable of the projection (ASC or DESC) and every variable of the
projection a condition, and whose text ends with that ORDER BY clause; `in_order`
orders rows exactly as pyoxigraph's ORDER BY does (a stable sort on: unbound < IRI <
literal; IRIs and `xsd:string` literals by their text in code point order, as Rust
compares UTF-8; `xsd:integer` literals by value) or says None where it cannot be sure (a
key with blank nodes, language tags, other datatypes, integers written otherwise than
canonically, or strings and integers in one column, which pyoxigraph leaves in the order
it found them). Rows equal on every key are equal rows (the keys are the whole
projection), so their order cannot show.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_XSD = "http://www.w3.org/2001/XMLSchema#"
_STRING, _INTEGER = _XSD + "string", _XSD + "integer"
_KEY = r"(?:(?:ASC|DESC)\s*\(\s*\?\w+\s*\)|\?\w+)"
_ORDER_BY = re.compile(rf"\bORDER\s+BY((?:\s+{_KEY})+)\s*\Z", re.IGNORECASE)
_ONE_KEY = re.compile(r"(ASC|DESC)?\s*\(?\s*\?(\w+)", re.IGNORECASE)


def unordered(text: str) -> tuple[str, list[tuple[str, bool]]] | None:
    """The text without its final ORDER BY and the keys (variable, descending), or None
    where the query is not of the form the module's invariant names."""
    found = _ORDER_BY.search(text)
    if found is None:
        return None
    keys = [
        (m.group(2), (m.group(1) or "").upper() == "DESC")
        for m in _ONE_KEY.finditer(found.group(1))
    ]
    if _algebra_keys(text) != keys or _algebra_keys(text[: found.start()]) != []:
        return None  # the clause is not the query's ORDER BY (in a comment, a sub-SELECT)
    return text[: found.start()], keys


def _algebra_keys(text: str) -> list[tuple[str, bool]] | None:
    """The ORDER BY of a SELECT whose projection names every key ([] without one), None
    for anything else (another form, LIMIT or OFFSET, an expression as a key)."""
    from rdflib import Variable
    from rdflib.plugins.sparql import algebra, parser

    try:
        query = algebra.translateQuery(parser.parseQuery(text)).algebra
    except Exception:  # rdflib's parser raises many kinds; not understood is None
        return None
    if query.name != "SelectQuery":
        return None
    node = query.p
    if node.name in ("Distinct", "Reduced"):
        node = node.p
    if node.name != "Project":
        return None
    projected = {str(v) for v in node.PV}
    if node.p.name != "OrderBy":
        return []
    keys = []
    for condition in node.p.expr:
        expr = getattr(condition, "expr", condition)
        order = getattr(condition, "order", None)
        if not isinstance(expr, Variable) or str(expr) not in projected:
            return None
        keys.append((str(expr), order == "DESC"))
    if {name for name, _ in keys} != projected:
        return None  # rows equal on every key could differ: their order is pyoxigraph's
    return keys


def in_order(
    variables: Sequence[str], rows: list[dict], keys: list[tuple[str, bool]]
) -> list[dict] | None:
    """`rows` (SPARQL 1.1 JSON results bindings, as pyoxigraph writes them: a variable
    without a value is left out) ordered by `keys` as pyoxigraph's ORDER BY orders them,
    or None where that order cannot be known here."""
    ordered = list(rows)
    for name, descending in reversed(keys):  # stable sorts, the last key first
        if name not in variables:
            return None
        column = [_key(row.get(name)) for row in ordered]
        literals = {type(k[1]) for k in column if k is not None and k[0] == 2}
        if any(k is None for k in column) or len(literals) > 1:  # strings and integers
            return None
        pairs = sorted(
            zip(column, range(len(ordered)), strict=True), key=_first, reverse=descending
        )
        ordered = [ordered[i] for _, i in pairs]
    return ordered


def _first(pair: tuple[tuple[int, object] | None, int]) -> tuple[int, object]:
    assert pair[0] is not None
    return pair[0]


def _key(term: object) -> tuple[int, object] | None:
    if term is None:
        return (0, "")
    if not isinstance(term, dict) or not isinstance(term.get("value"), str):
        return None
    kind, value, datatype = term.get("type"), term["value"], term.get("datatype", _STRING)
    if kind == "uri":
        return (1, value)
    if kind != "literal" or "xml:lang" in term:
        return None
    if datatype == _STRING:
        return (2, value)
    if datatype == _INTEGER and re.fullmatch(r"-?(0|[1-9][0-9]*)", value):
        return (2, int(value))
    return None
