"""The SHACL core constraint components as plain-Python checks over plain terms.

Each factory takes a constraint's parameters (already read from the shapes graph) and
returns a `Check`: given the run (`Run`: the data and the other compiled shapes), a focus
node and its value nodes, it yields `(value, component)` for every failure, the value
being None where SHACL reports no sh:value (counts, hasValue, qualified counts).
Invariant: a check decides exactly what pySHACL decides for the same terms, including
its reading of ill-typed literals (rdflib's converters, asked once per distinct literal).
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING, Protocol

from kg.validate.terms import RDF_LANGSTRING, XSD, XSD_STRING, Lit, Term, is_bnode, text_of

if TYPE_CHECKING:
    from kg.validate.data import Data

SH = "http://www.w3.org/ns/shacl#"
Failure = tuple[Term | None, str]


class Run(Protocol):
    data: Data

    def conforms(self, shape: object, node: Term) -> bool: ...


Check = Callable[[Run, Term, Collection[Term]], Iterable[Failure]]


def component(name: str) -> str:
    return f"{SH}{name}ConstraintComponent"


def per_value(name: str, ok: Callable[[Term], bool]) -> Check:
    """A component that tests each value node on its own."""
    comp = component(name)

    def check(run: Run, focus: Term, values: Collection[Term]) -> Iterator[Failure]:
        for v in values:
            if not ok(v):
                yield v, comp

    return check


def min_count(n: int) -> Check:
    comp = component("MinCount")
    return lambda run, focus, values: [(None, comp)] if len(values) < n else ()


def max_count(n: int) -> Check:
    comp = component("MaxCount")
    return lambda run, focus, values: [(None, comp)] if len(values) > n else ()


def has_value(term: Term) -> Check:
    comp = component("HasValue")
    return lambda run, focus, values: () if term in values else [(None, comp)]


def class_(cls: str) -> Check:
    comp = component("Class")

    def check(run: Run, focus: Term, values: Collection[Term]) -> Iterator[Failure]:
        for v in values:
            if isinstance(v, Lit) or not run.data.is_instance(v, cls):
                yield v, comp

    return check


NODE_KINDS = {
    "IRI": (True, False, False),
    "BlankNode": (False, True, False),
    "Literal": (False, False, True),
    "BlankNodeOrIRI": (True, True, False),
    "BlankNodeOrLiteral": (False, True, True),
    "IRIOrLiteral": (True, False, True),
}


def node_kind(kind: str) -> Check:
    iri, blank, literal = NODE_KINDS[kind.removeprefix(SH)]

    def ok(v: Term) -> bool:
        if isinstance(v, Lit):
            return literal
        return blank if is_bnode(v) else iri

    return per_value("NodeKind", ok)


def datatype(dt: str) -> Check:
    def ok(v: Term) -> bool:
        if not isinstance(v, Lit):
            return False
        if dt == "http://www.w3.org/2000/01/rdf-schema#Literal":
            return True
        return v.dt == dt and well_typed(v.lex, dt)

    return per_value("Datatype", ok)


_PYTHON_TYPES = {  # what pySHACL asks of the converted value, by datatype
    XSD + "integer": "int",
    XSD + "float": "float",
    XSD + "decimal": "Decimal",
    XSD + "boolean": "bool",
    XSD + "date": "date",
    XSD + "time": "time",
    XSD + "dateTime": "datetime",
}


@cache
def well_typed(lex: str, dt: str) -> bool:
    """Whether rdflib reads the literal as a well-formed value of its datatype."""
    if dt in (XSD_STRING, RDF_LANGSTRING):
        return True
    value, ill = _rdflib_value(lex, dt)
    if ill is True:
        return False
    wanted = _PYTHON_TYPES.get(dt)
    return wanted is None or wanted in {c.__name__ for c in type(value).__mro__}


def _rdflib_value(lex: str, dt: str) -> tuple[object, bool | None]:
    literal = _quiet_literal(Lit(lex, dt))
    return literal.value, literal.ill_typed


def _quiet_literal(term: Lit):  # -> rdflib.Literal, built without rdflib's log noise
    from rdflib import Literal, URIRef

    logger = logging.getLogger("rdflib.term")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # rdflib logs every literal it cannot convert
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if term.lang:
                return Literal(term.lex, lang=term.lang)
            return Literal(term.lex, datatype=None if term.dt == XSD_STRING else URIRef(term.dt))
    finally:
        logger.setLevel(level)


def min_length(n: int) -> Check:
    return per_value("MinLength", lambda v: not is_bnode(v) and len(text_of(v)) >= n)


def max_length(n: int) -> Check:
    return per_value("MaxLength", lambda v: not is_bnode(v) and len(text_of(v)) <= n)


_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


def pattern(regex: str, flags: str = "") -> Check:
    compiled = re.compile(regex, sum(_FLAGS.get(f, 0) for f in flags))
    return per_value(
        "Pattern", lambda v: not is_bnode(v) and compiled.search(text_of(v)) is not None
    )


def in_(members: Iterable[Term]) -> Check:
    allowed = frozenset(members)
    return per_value("In", lambda v: v in allowed)


def language_in(ranges: Sequence[str]) -> Check:
    wanted = [r.lower() for r in ranges]

    def ok(v: Term) -> bool:
        if not isinstance(v, Lit) or not v.lang:
            return False
        lang = v.lang.lower()
        return any(r == "*" or lang == r or lang.startswith(r + "-") for r in wanted)

    return per_value("LanguageIn", ok)


def unique_lang(on: bool) -> Check:
    comp = component("UniqueLang")

    def check(run: Run, focus: Term, values: Collection[Term]) -> Iterator[Failure]:
        langs: dict[str, int] = {}
        for v in values:
            if isinstance(v, Lit) and v.lang:
                langs[v.lang.lower()] = langs.get(v.lang.lower(), 0) + 1
        for _ in (n for n in langs.values() if n > 1 and on):
            yield None, comp

    return check


def equals(predicate: str) -> Check:
    comp = component("Equals")

    def check(run: Run, focus: Term, values: Collection[Term]) -> Iterator[Failure]:
        others = list(run.data.objects(focus, predicate))
        mine = set(values)
        theirs = set(others)
        for v in values:
            if v not in theirs:
                yield v, comp
        for o in others:
            if o not in mine:
                yield o, comp

    return check


def disjoint(predicate: str) -> Check:
    comp = component("Disjoint")

    def check(run: Run, focus: Term, values: Collection[Term]) -> Iterator[Failure]:
        others = set(run.data.objects(focus, predicate))
        for v in values:
            if v in others:
                yield v, comp

    return check


# ------------------------------------------------------------------ ranges


def value_range(name: str, bound: Lit, accept: Callable[[int], bool]) -> Check:
    """min/maxInclusive, min/maxExclusive: the value compared with the bound as pySHACL
    compares rdflib literals; values that cannot be compared fail."""

    def ok(v: Term) -> bool:
        if not isinstance(v, Lit):
            return False
        order = compare(v, bound)
        return order is not None and accept(order)

    return per_value(name, ok)


@cache
def compare(a: Lit, b: Lit) -> int | None:
    la, lb = _quiet_literal(a), _quiet_literal(b)
    if isinstance(la.value, str) != isinstance(lb.value, str):
        return None
    try:
        if la.eq(lb):
            return 0
        return 1 if la > lb else -1
    except (TypeError, NotImplementedError):
        return None


# ------------------------------------------------------------------ shape-based


def logical(name: str, shapes: Sequence[object]) -> Check:
    """sh:or, sh:and, sh:xone over shapes; sh:not and sh:node over one shape."""
    rule = {
        "Or": lambda n: n >= 1,
        "And": lambda n: n == len(shapes),
        "Xone": lambda n: n == 1,
        "Not": lambda n: n == 0,
        "Node": lambda n: n == 1,
    }[name]

    def ok(run: Run, v: Term) -> bool:
        return rule(sum(1 for s in shapes if run.conforms(s, v)))

    comp = component(name)

    def check(run: Run, focus: Term, values: Collection[Term]) -> Iterator[Failure]:
        for v in values:
            if not ok(run, v):
                yield v, comp

    return check


def qualified(shape: object, least: int | None, most: int | None) -> Check:
    low, high = component("QualifiedMinCount"), component("QualifiedMaxCount")

    def check(run: Run, focus: Term, values: Collection[Term]) -> Iterator[Failure]:
        n = sum(1 for v in values if run.conforms(shape, v))
        if least is not None and n < least:
            yield None, low
        if most is not None and n > most:
            yield None, high

    return check
