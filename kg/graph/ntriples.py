"""N-Triples: one line per triple, every string escaped on one line (the canonical,
sortable form the whole-graph dump, the validation cache keys and the writers share)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping

from rdflib import Literal
from rdflib.term import Node

from kg.display import BIDI_CONTROLS
from kg.graph.namespaces import XSD
from kg.graph.triples import Triple


def to_ntriples(graph: Iterable[Triple], memo: dict[Node, str] | None = None) -> str:
    return "".join(ntriples_lines(graph, memo))


def ntriples_lines(graph: Iterable[Triple], memo: dict[Node, str] | None = None) -> list[str]:
    """The N-Triples lines (each ending in a newline) of the triples, sorted; `memo`: the
    terms' texts, shared by the files one process writes."""
    term = memo_terms({} if memo is None else memo)
    return sorted(f"{term(s)} {term(p)} {term(o)} .\n" for s, p, o in graph)


def memo_terms(memo: dict[Node, str]) -> Callable[[Node], str]:
    """A term's N-Triples text, each distinct term formatted once into `memo`."""

    def term(t: Node) -> str:
        text = memo.get(t)
        if text is None:
            text = memo[t] = nt_object(t)
        return text

    return term


def subject_block(
    head: str, predicates: Mapping[Node, Collection[Node]], memo: dict[Node, str]
) -> str:
    """The sorted N-Triples lines of one subject (`head`: its text), each term's text
    looked up in `memo` (made there once); the chunk the sorted dump is made of and
    what a subject's digest is taken over (the hot loop of a build)."""
    term = memo_terms(memo)
    lines = []
    for p, objects in predicates.items():
        start = f"{head} {memo.get(p) or term(p)} "
        for o in objects:
            lines.append(start + (memo.get(o) or term(o)) + " .\n")
    lines.sort()
    return "".join(lines)


_NT_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Control characters and bidi controls (which would reorder what a reader's editor or
# terminal shows of the dump) are written as \uXXXX escapes: the same string to a parser.
_NT_SPECIAL = re.compile(f'[\\x00-\\x1f\\x7f"\\\\{BIDI_CONTROLS}]')


def _nt_escape(match: re.Match) -> str:
    char = match.group()
    return _NT_ESCAPES.get(char) or f"\\u{ord(char):04X}"


def nt_string(text: str) -> str:
    return '"' + _NT_SPECIAL.sub(_nt_escape, text) + '"'


def nt_object(o: Node) -> str:
    """N-Triples form of a term: one line, always (never Turtle's long strings)."""
    if not isinstance(o, Literal):
        return o.n3()
    text = nt_string(str(o))
    if o.language:
        return f"{text}@{o.language}"
    if o.datatype is not None and o.datatype != XSD.string:
        return f"{text}^^<{o.datatype}>"
    return text


def ntriples_term(t: Node) -> str:
    """A term as N-Triples writes it: one line (newlines and tabs escaped); `_:id` for a
    blank node. Also the SPARQL 1.1 TSV form of a term."""
    return nt_object(t)
