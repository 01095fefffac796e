"""Plain RDF terms for the compiled validator: an IRI is a `str`, a blank node a `str`
starting with `_:`, a literal a `Lit` (lexical form, datatype IRI, language tag).

Invariant: every literal has a datatype (RDF 1.1: a simple literal is an `xsd:string`,
a tagged one an `rdf:langString`), so two equal terms are equal Python values; and
`nt(term)` writes the N-Triples form kg's own writer writes (kg/graph/ntriples.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from rdflib import BNode, Literal, URIRef
from rdflib.term import Node

from kg.errors import InputError, Problem
from kg.graph.ntriples import nt_string
from kg.model import Source

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_STRING = XSD + "string"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_SUBCLASSOF = "http://www.w3.org/2000/01/rdf-schema#subClassOf"


class Lit(NamedTuple):
    lex: str
    dt: str
    lang: str = ""


Term = str | Lit
PlainTriple = tuple[str, str, Term]


def is_bnode(term: Term) -> bool:
    return isinstance(term, str) and term.startswith("_:")


def text_of(term: Term) -> str:
    """What SPARQL's STR() gives: the lexical form or the IRI (a blank node's label)."""
    return term.lex if isinstance(term, Lit) else term


def nt(term: Term) -> str:
    """The N-Triples form of a term."""
    if isinstance(term, Lit):
        if term.lang:
            return f"{nt_string(term.lex)}@{term.lang}"
        if term.dt == XSD_STRING:
            return nt_string(term.lex)
        return f"{nt_string(term.lex)}^^<{term.dt}>"
    return term if term.startswith("_:") else f"<{term}>"


def from_rdflib(node: Node) -> Term:
    if isinstance(node, Literal):
        if node.language:
            return Lit(str(node), RDF_LANGSTRING, node.language)
        return Lit(str(node), str(node.datatype or XSD_STRING))
    if isinstance(node, BNode):
        return f"_:{node}"
    return str(node)


def to_rdflib(term: Term) -> Node:
    if isinstance(term, Lit):
        if term.lang:
            return Literal(term.lex, lang=term.lang)
        return Literal(term.lex, datatype=None if term.dt == XSD_STRING else URIRef(term.dt))
    if term.startswith("_:"):
        return BNode(term[2:])
    return URIRef(term)


# ------------------------------------------------------------------ N-Triples lines

_IRI = r"<([^>]*)>"
_BNODE = r"(_:[A-Za-z0-9_.\-]+)"
_LINE = re.compile(
    rf"\s*(?:{_IRI}|{_BNODE})\s+{_IRI}\s+"
    rf'(?:{_IRI}|{_BNODE}|"((?:[^"\\]|\\.)*)"(?:@([A-Za-z0-9\-]+)|\^\^{_IRI})?)\s*\.\s*$'
)
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_SIMPLE = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text

    def one(m: re.Match) -> str:
        code = m.group(1) or m.group(2)
        return chr(int(code, 16)) if code else _SIMPLE.get(m.group(3), m.group(3))

    return _ESCAPE.sub(one, text)


def parse_ntriples(lines: Iterable[str], origin: str = "N-Triples") -> Iterator[PlainTriple]:
    """The triples of N-Triples text given as lines or as blocks of lines."""
    number = 0
    shared: dict = {}  # equal terms share one Python object
    for block in lines:
        for line in block.splitlines():
            number += 1
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            triple = _canonical(stripped, shared)
            if triple is None:
                m = _LINE.match(stripped)
                if m is None:
                    where = Source(origin, number, 1)
                    raise InputError([Problem(where, "", "expected an N-Triples triple")])
                triple = _triple(m.groups())
            yield triple


def parse_term(text: str) -> Term:
    """A term's N-Triples text as kg writes it (`nt`, kg/graph/ntriples.py) read back: an
    IRI as written between its brackets (a subject's, kg/validate/incremental.py), a
    literal as `parse_ntriples` reads an object."""
    if text[0] == "<":
        return text[1:-1]
    if text[:2] == "_:":
        return text
    line = f"<> <> {text} ."
    triple = _canonical(line, {})
    if triple is None:
        m = _LINE.match(line)
        if m is None:
            raise InputError([Problem(Source("N-Triples", 1, 1), "", "expected a term")])
        triple = _triple(m.groups())
    return triple[2]


def _canonical(line: str, shared: dict) -> PlainTriple | None:
    """A line as kg's writer writes it (single spaces, no escapes in IRIs), read without a
    regular expression; None for anything else (the full grammar then decides)."""
    if not line.endswith(" ."):
        return None
    parts = line[:-2].split(" ", 2)
    if len(parts) != 3:
        return None
    s, p, o = parts
    if not (p[0] == "<" and p[-1] == ">" and ((s[0] == "<" and s[-1] == ">") or s[:2] == "_:")):
        return None
    if o[0] == "<" and o[-1] == ">" and " " not in o:
        obj: Term = o[1:-1]
    elif o[:2] == "_:" and " " not in o:
        obj = o
    elif o[0] == '"':
        end = o.rfind('"')
        lex, tail = o[1:end], o[end + 1 :]
        if end < 1 or (lex.endswith("\\") and not lex.endswith("\\\\")):
            return None
        lex = _unescape(lex)
        if not tail:
            obj = Lit(lex, XSD_STRING)
        elif tail[:3] == "^^<" and tail[-1] == ">":
            obj = Lit(lex, tail[3:-1])
        elif tail[0] == "@" and tail[1:].replace("-", "").isalnum():
            obj = Lit(lex, RDF_LANGSTRING, tail[1:].lower())
        else:
            return None
    else:
        return None
    s = s[1:-1] if s[0] == "<" else s
    if "\\" in s or "\\" in p:
        return None
    return shared.setdefault(s, s), shared.setdefault(p, p[1:-1]), shared.setdefault(obj, obj)


def _triple(g: tuple) -> PlainTriple:
    s_iri, s_b, p, o_iri, o_b, lex, lang, dt = g
    subject = _unescape(s_iri) if s_iri is not None else s_b
    if o_iri is not None:
        obj: Term = _unescape(o_iri)
    elif o_b is not None:
        obj = o_b
    elif lang:
        obj = Lit(_unescape(lex), RDF_LANGSTRING, lang.lower())
    else:
        obj = Lit(_unescape(lex), _unescape(dt) if dt else XSD_STRING)
    return subject, _unescape(p), obj
