"""Stage 5: serialize the graph: Turtle, JSON-LD, N-Triples, per person, VoID/DCAT.

All writers are deterministic (sorted), and `write_outputs` replaces the output
directory atomically (`kg.publish.outdir`): files are written to a new version beside the
current one, which becomes the output only when everything succeeded.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import Protocol, TypeVar, cast

from rdflib import BNode, Literal, URIRef
from rdflib.term import Identifier, Node

from kg import scheme
from kg.cache import SignedCache
from kg.errors import ProjectError
from kg.files import FOLDER_FLAGS
from kg.formats import JSONLD, NTRIPLES, RDF_FORMATS, TURTLE
from kg.graph.namespaces import DCAT, DCTERMS, FOAF, KG, PREFIXES, RDF, SCHEMA, VOID, XSD, curie
from kg.graph.ntriples import memo_terms, nt_object, nt_string, subject_block, to_ntriples
from kg.graph.triples import GraphLike, Triple, Triples
from kg.publish.fragments import Fragments
from kg.publish.jsontext import dumps
from kg.publish.jsontext import string as json_string
from kg.publish.outdir import MARKER, remove_at, replace_tree
from kg.publish.recycled import RECYCLED, drop_unwritten, sweep

T = TypeVar("T")
CONTEXT_PREFIXES = ("foaf", "kg", "xsd", "rdfs", "dcterms", "dcat", "void", "skos")


def jsonld_context(unusable: Collection[str] = ()) -> dict:
    """The compaction context: `@vocab` is schema.org (http), other vocabularies by prefix
    (except `unusable` ones: a graph with an IRI like `kg:x` cannot use the prefix `kg`)."""
    context: dict = {"@vocab": str(SCHEMA)}
    for prefix in CONTEXT_PREFIXES:
        if prefix not in unusable:
            context[prefix] = str(PREFIXES[prefix])
    return context


def _colliding_prefixes(graph: Iterable[Triple]) -> set[str]:
    """Context prefixes that are the scheme of an IRI in the graph (JSON-LD would read
    `kg:x` as a compact IRI); such a graph is written without them."""
    return colliding_prefixes(term for triple in graph for term in triple)


def colliding_prefixes(terms: Iterable[Node]) -> set[str]:
    """`_colliding_prefixes` of the triples these terms make up (each term once will do)."""
    schemes = tuple(f"{prefix}:" for prefix in CONTEXT_PREFIXES)
    found = set()
    for term in terms:
        t = term.datatype if isinstance(term, Literal) else term
        text = str(t) if isinstance(t, URIRef) else ""
        if text.startswith(schemes):  # (str: rdflib's URIRef.startswith takes no tuple)
            found.add(text[: text.find(":")])
    return found


# --------------------------------------------------------------------------- serializers

# Every writer takes any iterable of triples with `namespaces()` (an rdflib Graph or
# kg.graph.triples.Triples) and sorts, so the same triples always give the same bytes.
# Terms repeat a lot (types, predicates, people, venues), so each writer formats
# each distinct term once.


TYPES_KEPT = 1_000  # the sets of classes a process keeps the texts of, at most
_PN_LOCAL = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_INTEGER = re.compile(r"^[+-]?[0-9]+$")


class _TurtleTerms:
    """Turtle spelling of terms with the graph's prefixes, each term formatted once."""

    def __init__(self, prefixes: dict[str, str]) -> None:
        self.order = list(prefixes.items())
        self.used: set[str] = set()
        self.memo: dict[Node, tuple[str, str | None]] = {}
        # several classes' texts (`_turtle_block`), by the classes in the graph's order
        self.types: dict[tuple[Node, ...], tuple[str, frozenset[str]]] = {}

    def classes(self, objects: Collection[Identifier]) -> str:
        """`_objects_text` of a node's several classes, kept by them (few sets of
        classes recur: a person's, an organization's), with the prefixes it uses."""
        key = tuple(objects)
        found = self.types.get(key)
        if found is None:
            if len(self.types) >= TYPES_KEPT:
                self.types.clear()
            used, self.used = self.used, set()
            found = self.types[key] = (_objects_text(objects, self), frozenset(self.used))
            self.used = used
        self.used |= found[1]
        return found[0]

    def __call__(self, t: Node) -> str:
        found = self.memo.get(t)
        if found is None:
            found = self.memo[t] = self._format(t)
        if found[1] is not None:
            self.used.add(found[1])
        return found[0]

    def _format(self, t: Node) -> tuple[str, str | None]:
        if isinstance(t, URIRef):
            text = str(t)
            for ns, prefix in self.order:
                local = text[len(ns) :]
                if text.startswith(ns) and _PN_LOCAL.match(local):
                    return f"{prefix}:{local}", prefix
            return t.n3(), None
        if isinstance(t, Literal) and t.datatype == XSD.integer and _INTEGER.match(str(t)):
            return str(t), None
        if isinstance(t, Literal) and t.datatype == XSD.boolean and str(t) in ("true", "false"):
            return str(t), None
        if isinstance(t, Literal) and t.datatype is not None and t.datatype != XSD.string:
            datatype, used = self._format(t.datatype)  # the prefix the literal uses
            return f"{nt_string(str(t))}^^{datatype}", used
        return nt_object(t), None


class BlockSource(Protocol):
    """The texts of whole nodes, formatted once per build (`kg.publish.blocks.BlockTable`)."""

    def turtle(self, s: Node, size: int) -> tuple[str, AbstractSet[str]] | None: ...

    def jsonld(self, s: Node, size: int) -> str | None: ...

    def row(self, s: Node, size: int) -> int | None: ...

    def texts_at(self, row: int) -> tuple[str, AbstractSet[str], str]: ...

    def ntriples_at(self, row: int) -> str | None: ...


class NodeBlocks:
    """What the per-item files one process renders share: the build's block table (the
    text of each node a file holds whole, formatted once for the whole build) and one
    table of each format's term texts (for the partial nodes a file formats itself)."""

    def __init__(self, whole: Triples, table: BlockSource | None = None) -> None:
        self.whole = whole
        self.table = table
        self.turtle_terms = _TurtleTerms(graph_prefixes(whole))
        self.json_terms = _JsonTerms()
        self.nt_terms: dict[Node, str] = {}
        # set by the renderer when no IRI of the whole graph collides with a context
        # prefix: then no subset's does, and a file need not look (`to_jsonld`)
        self.collision_free = False
        # the texts of stubs (`description_texts`), formatted once per process
        self.stubs: dict[Node, tuple[NodeTexts, str]] = {}

    def forget_terms(self) -> None:
        """Empty the term texts (pure memos) this process made, e.g. while formatting its
        ranges of the block table: processes forked from it would each count them again
        (decision 0047); a task formats only the terms of its partial nodes again. The
        Turtle prefixes in use (`turtle_terms.order`) are kept."""
        self.turtle_terms.memo.clear()
        self.turtle_terms.types.clear()
        self.json_terms.clear()
        self.stubs.clear()


def _node_text(
    blocks: NodeBlocks | None,
    ext: str,
    s: Node,
    predicates: Described,
    make: Callable[[Node, Described], T],
) -> T:
    """`make(s, predicates)`, or the text of the block table when the file holds `s`
    whole (as many triples of it as the whole graph has)."""
    table = blocks.table if blocks is not None else None
    if table is not None:
        size = sum(map(len, predicates.values()))
        found = table.turtle(s, size) if ext == TURTLE.ext else table.jsonld(s, size)
        if found is not None:
            return cast("T", found)
    return make(s, predicates)


def to_turtle(graph: Iterable[Triple], blocks: NodeBlocks | None = None) -> str:
    """Readable, deterministic Turtle: used prefixes bound, subjects grouped and sorted,
    `a` first, then predicates and objects in order. Much faster than rdflib's writer."""
    return "".join(turtle_chunks(graph, blocks))


def turtle_chunks(graph: Iterable[Triple], blocks: NodeBlocks | None = None) -> Iterator[str]:
    """`to_turtle` in pieces: the prefixes the blocks use, then the blocks (kept until
    the end, since the prefixes come first)."""
    prefixes = graph_prefixes(graph)
    term = blocks.turtle_terms if blocks is not None else _TurtleTerms(prefixes)

    def block(s: Node, predicates: Described) -> tuple[str, AbstractSet[str]]:
        term.used = set()  # the prefixes this block uses, kept with its text
        return _turtle_block(s, predicates, term), term.used

    texts: list[str] = []
    used: set[str] = set()
    for s, predicates in sorted(_by_subject(graph).items(), key=_subject_order):
        text, prefixes_used = _node_text(blocks, TURTLE.ext, s, predicates, block)
        texts.append(text)
        used |= prefixes_used
    yield prefix_header(prefixes, used)
    yield "\n".join(texts)


Described = Mapping[Node, Collection[Node]]  # predicate -> objects


def _by_subject(graph: Iterable[Triple]) -> dict[Node, Described]:
    if isinstance(graph, Triples):
        return {s: graph.describe(s) for s in graph.subjects()}
    by_subject: dict[Node, dict[Node, list[Node]]] = {}
    for s, p, o in graph:
        by_subject.setdefault(s, {}).setdefault(p, []).append(o)
    return by_subject  # type: ignore[return-value]


def subject_key(s: Node) -> tuple[bool, str]:
    """rdflib's order of subjects (blank nodes, then IRIs, each by text), without
    rdflib's Python-level comparisons: the order of every writer's subjects."""
    return type(s) is URIRef, str(s)


def _subject_order(item: tuple[Node, object]) -> tuple[bool, str]:
    return subject_key(item[0])


def graph_prefixes(graph: object) -> dict[str, str]:
    """Namespace -> prefix of the graph's bound prefixes (an rdflib Graph or `Triples`)."""
    return {str(ns): p for p, ns in graph.namespaces() if p}  # type: ignore[attr-defined]


def prefix_header(prefixes: Mapping[str, str], used: AbstractSet[str]) -> str:
    """A Turtle file's `@prefix` lines for the `used` prefixes, by prefix, and a blank line."""
    ordered = sorted(prefixes.items(), key=lambda kv: kv[1])
    return "".join(f"@prefix {p}: <{ns}> .\n" for ns, p in ordered if p in used) + "\n"


def _turtle_block(s: Node, described: Described, term: _TurtleTerms) -> str:
    # rdflib's terms (Identifier) are ordered; its stubs type them as unordered Node
    predicates = cast("Mapping[Identifier, Collection[Identifier]]", described)
    lines = []
    types = predicates.get(_TYPE)
    if types:
        lines.append("a " + (term(next(iter(types))) if len(types) == 1 else term.classes(types)))
    for p, objects in sorted(predicates.items(), key=_by_text):
        if not str.__eq__(p, _RDF_TYPE):
            if len(objects) == 1:
                for o in objects:
                    lines.append(term(p) + " " + term(o))
            else:
                lines.append(term(p) + " " + ", ".join([term(o) for o in _ordered(objects)]))
    return f"{term(s)} " + " ;\n    ".join(lines) + " .\n"


def _by_text(item: tuple[Identifier, object]) -> str:
    return str(item[0])


_TYPE = RDF.type  # (a namespace's attribute makes a new URIRef on every read)
_RDF_TYPE = str(_TYPE)


def _objects_text(objects: Collection[Identifier], term: _TurtleTerms) -> str:
    """A predicate's objects in rdflib's order, each as `term` spells it."""
    if len(objects) == 1:
        for o in objects:
            return term(o)
    return ", ".join([term(o) for o in _ordered(objects)])


def _ordered(terms: Collection[Identifier]) -> list[Identifier]:
    """rdflib's order of terms; IRIs alone (predicates, classes, most objects) are in the
    order of their text, so they are sorted by it without rdflib's Python comparisons."""
    if len(terms) > 1 and all(type(t) is URIRef for t in terms):
        return sorted(terms, key=str)
    return sorted(terms)


_TERM = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_CANONICAL_INTEGER = re.compile(r"^(0|-?[1-9][0-9]*)$")
JSON_SAFE_INTEGER = 10**21  # JSON-LD reads a larger whole number as an xsd:double


def _compact_iri(iri: str, context: dict) -> str:
    """A key or type: a term of `@vocab` when that reads back as the same IRI, else a
    compact IRI with a prefix of the context, else the full IRI."""
    vocab = context["@vocab"]
    local = iri[len(vocab) :]
    if iri.startswith(vocab) and _TERM.match(local) and local not in context:
        return local
    for prefix in CONTEXT_PREFIXES:
        ns = context.get(prefix)
        if ns and iri.startswith(ns) and iri[len(ns) :] and not iri[len(ns) :].startswith("//"):
            return f"{prefix}:{iri[len(ns) :]}"
    return iri


def _node_id(node: Node) -> str:
    return f"_:{node}" if _is_blank(node) else str(node)


def _is_blank(node: Node) -> bool:
    """`isinstance(node, BNode)`, without rdflib's abstract class check for the exact
    types (about 0.7 µs a term that is not one: every IRI of a node text, decision 0071)."""
    kind = type(node)
    return kind is BNode or (kind is not URIRef and kind is not Literal and isinstance(node, BNode))


def _is_iri(o: Node) -> bool:
    """`isinstance(o, URIRef)`, likewise (a literal object is not an IRI at once)."""
    kind = type(o)
    return kind is URIRef or (kind is not Literal and kind is not BNode and isinstance(o, URIRef))


def _is_node(o: Node) -> bool:
    """`isinstance(o, URIRef | BNode)`, likewise."""
    kind = type(o)
    if kind is URIRef or kind is BNode:
        return True
    return kind is not Literal and isinstance(o, URIRef | BNode)


def _json_value(o: Node, context: dict) -> object:
    if isinstance(o, URIRef):  # the term itself (a str): no copy of its text in the memo
        return {"@id": o}
    if isinstance(o, BNode):
        return {"@id": _node_id(o)}
    assert isinstance(o, Literal)
    if o.language:
        return {"@value": str(o), "@language": o.language}
    if o.datatype is None or o.datatype == XSD.string:
        return str(o)
    text = str(o)
    if o.datatype == XSD.boolean and text in ("true", "false"):
        return text == "true"
    if (
        o.datatype == XSD.integer
        and _CANONICAL_INTEGER.match(text)
        and abs(int(text)) < JSON_SAFE_INTEGER
    ):
        return int(text)
    return {"@value": text, "@type": _compact_iri(str(o.datatype), context)}


def _sort_key(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class _JsonTerms:
    """JSON-LD values and their sort keys, each distinct term converted once."""

    def __init__(self, unusable: Collection[str] = ()) -> None:
        self.context = jsonld_context(unusable)
        self.keys: dict[Node, str] = {}
        self.values: dict[Node, tuple[str, object]] = {}
        self.key_texts: dict[str, str] = {}  # `_node_json`: a key's text
        self.predicates: dict[Node, str] = {}  # `_node_json`: a predicate's key
        self.types: dict[tuple[Node, ...], str | None] = {}  # `classes`
        self.members: dict[str, str] = {}  # `_node_json`: a member's text before its value

    def clear(self) -> None:
        """Forget every term's texts (pure memos)."""
        memos = (self.keys, self.values, self.key_texts, self.predicates, self.members, self.types)
        for memo in memos:
            memo.clear()

    def key(self, iri: Node) -> str:
        found = self.keys.get(iri)
        if found is None:
            found = self.keys[iri] = _compact_iri(str(iri), self.context)
        return found

    def value(self, o: Node) -> tuple[str, object]:
        found = self.values.get(o)
        if found is None:
            value = _json_value(o, self.context)
            found = self.values[o] = (_sort_key(value), value)
        return found

    def text(self, o: Node, depth: int) -> str:
        """`dumps` of `o`'s value nested `depth` (3 or 4) levels deep (not kept: a
        graph's IRIs and literals are most of its terms)."""
        kind = type(o)
        if kind is URIRef:  # {"@id": ...}
            return _ID_OPEN[depth] + json_string(cast("str", o)) + _ID_CLOSE[depth]
        if kind is BNode or (kind is not Literal and _is_node(o)):
            return _ID_OPEN[depth] + json_string(_node_id(o)) + _ID_CLOSE[depth]
        value = self.value(o)[1]
        return json_string(value) if isinstance(value, str) else dumps(value, depth)

    def key_text(self, key: str) -> str:
        found = self.key_texts.get(key)
        if found is None:
            found = self.key_texts[key] = json_string(key) + ": "
        return found

    def classes(self, objects: Collection[Node]) -> str | None:
        """The "@type" member of a node's classes (None when one is a literal: then a
        plain property), kept by them (few sets of classes recur)."""
        key = tuple(objects)
        if key in self.types:
            return self.types[key]
        if len(self.types) >= TYPES_KEPT:
            self.types.clear()
        found = self.types[key] = _types_member(objects, self)
        return found

    def predicate(self, p: Node) -> str:
        """A predicate's key in a node object ("" for rdf:type), kept per predicate."""
        found = self.predicates.get(p)
        if found is None:
            rdf_type = str.__eq__(cast("str", p), _RDF_TYPE)
            found = self.predicates[p] = "" if rdf_type else self.key(p)
        return found

    def member(self, key: str) -> str:
        """What comes before a member's value in a node object (at depth 3)."""
        found = self.members.get(key)
        if found is None:
            found = self.members[key] = "," + _PAD3 + self.key_text(key)
        return found


def to_jsonld_document(graph: Iterable[Triple]) -> dict:
    """A compacted, flattened JSON-LD document: one node object per subject, sorted."""
    terms = _JsonTerms(_colliding_prefixes(graph))
    nodes = sorted(_by_subject(graph).items(), key=_subject_order)
    out = [_node_object(s, _json_values(predicates, terms)) for s, predicates in nodes]
    return {"@context": terms.context, "@graph": out}


def to_jsonld(graph: Iterable[Triple], blocks: NodeBlocks | None = None) -> str:
    """`to_jsonld_document` as indented JSON text (node texts shared through `blocks`)."""
    return "".join(jsonld_chunks(graph, blocks))


def jsonld_chunks(graph: Iterable[Triple], blocks: NodeBlocks | None = None) -> Iterator[str]:
    """`to_jsonld` in pieces: the context, then each node object as it is made."""
    free = blocks is not None and blocks.collision_free
    unusable = set() if free else _colliding_prefixes(graph)
    if blocks is not None and free:  # the table's texts are in the whole graph's context
        terms = blocks.json_terms
    else:
        terms, blocks = _JsonTerms(unusable), None

    def node(s: Node, predicates: Described) -> str:
        return dumps(_node_object(s, _json_values(predicates, terms)), depth=2)

    yield f'{{\n  "@context": {dumps(terms.context, depth=1)},\n  "@graph": ['
    nodes = sorted(_by_subject(graph).items(), key=_subject_order)
    for i, (s, predicates) in enumerate(nodes):
        yield (",\n    " if i else "\n    ") + _node_text(blocks, JSONLD.ext, s, predicates, node)
    yield "\n  ]\n}\n" if nodes else "]\n}\n"


_JsonValues = dict[str, list[tuple[str, object]]]


def _json_values(predicates: Described, terms: _JsonTerms) -> _JsonValues:
    values: _JsonValues = {}
    for p, objects in predicates.items():
        if p == _TYPE and all(isinstance(o, URIRef | BNode) for o in objects):
            values["@type"] = [
                (_node_id(o),) * 2 if isinstance(o, BNode) else (terms.key(o),) * 2 for o in objects
            ]
        elif p == _TYPE:  # a literal "type" is not a class: a plain property
            values.setdefault(str(p), []).extend(terms.value(o) for o in objects)
        else:
            values.setdefault(terms.key(p), []).extend(terms.value(o) for o in objects)
    return values


def _node_object(subject: Node, values: _JsonValues) -> dict:
    obj: dict = {"@id": _node_id(subject)}
    for key in sorted(values, key=lambda k: (k != "@type", k)):
        ordered = [v for _, v in sorted(values[key], key=_first)]
        obj[key] = ordered[0] if len(ordered) == 1 else ordered
    return obj


def _first(pair: tuple[str, object]) -> str:
    return pair[0]


_PADS = ["\n" + "  " * depth for depth in range(6)]
_PAD3, _PAD4 = _PADS[3], _PADS[4]
_ID_OPEN = {depth: "{" + _PADS[depth + 1] + '"@id": ' for depth in (3, 4)}  # `_JsonTerms.text`
_ID_CLOSE = {depth: _PADS[depth] + "}" for depth in (3, 4)}


def _node_json(s: Node, predicates: Described, terms: _JsonTerms) -> str:
    """`dumps(_node_object(s, _json_values(predicates, terms)), depth=2)`, made of each
    term's text (kept by `terms`) instead of a dictionary written out: `json.dumps`'s
    indented text of an object is its members' texts, each at its depth, joined."""
    types: str | None = None
    groups: dict[str, Collection[Node]] = {}
    by_iri = cast("Mapping[Identifier, Collection[Node]]", predicates)  # str.__eq__: no rdflib
    for p, objects in by_iri.items():
        key = terms.predicate(p)
        if not key:  # rdf:type
            if len(objects) > 1 or all(map(_is_node, objects)):
                types = terms.classes(objects)
                if types is not None:
                    continue
            key = _RDF_TYPE  # a literal "type" is not a class: a plain property
        found = groups.get(key)
        groups[key] = objects if found is None else [*found, *objects]
    parts = ["{", _PAD3, '"@id": ', json_string(_node_id(s))]
    if types is not None:
        parts.append(types)
    for key in sorted(groups):
        objects = groups[key]
        parts.append(terms.member(key))
        if len(objects) == 1:
            for o in objects:
                parts.append(terms.text(o, 3))
        else:
            ordered = sorted(objects, key=lambda o: terms.value(o)[0])
            parts.append(_json_list([terms.text(o, 4) for o in ordered]))
    parts.append("\n    }")
    return "".join(parts)


def _types_member(objects: Collection[Node], terms: _JsonTerms) -> str | None:
    """A node's "@type" member (after its "@id"), or None when a class is a literal."""
    if not all(map(_is_node, objects)):
        return None
    types = sorted(_node_id(o) if _is_blank(o) else terms.key(o) for o in objects)
    return "," + _PAD3 + '"@type": ' + _json_list([json_string(t) for t in types])


def _json_list(texts: list[str]) -> str:
    """One member's value (depth 3): the only text, else a list of texts (depth 4)."""
    if len(texts) == 1:
        return texts[0]
    return "[" + _PAD4 + ("," + _PAD4).join(texts) + _PAD3 + "]"


def _ntriples(graph: Iterable[Triple], blocks: NodeBlocks | None = None) -> str:
    # one line per triple: nothing to keep per node, only the terms' texts
    return to_ntriples(graph, blocks.nt_terms if blocks is not None else None)


Writer = Callable[[Iterable[Triple], "NodeBlocks | None"], str]
# The writer of each format of kg.formats.RDF_FORMATS, by the format's name.
WRITERS: dict[str, Writer] = {"turtle": to_turtle, "json-ld": to_jsonld, "nt": _ntriples}
SERIALIZERS: dict[str, tuple[str, Writer]] = {
    f.ext: (f.media, WRITERS[f.name]) for f in RDF_FORMATS
}


def serialize(ext: str, graph: Iterable[Triple], blocks: NodeBlocks | None = None) -> str:
    """`graph` in the format with extension `ext` (a row of kg.formats.RDF_FORMATS)."""
    return SERIALIZERS[ext][1](graph, blocks)


# --------------------------------------------------------------------------- descriptions

# What `described` gives of every node it reaches: all of its triples with these predicates.
STUB_FACTS_ORDER = (RDF.type, SCHEMA.name, SCHEMA.url)
STUB_FACTS = frozenset(STUB_FACTS_ORDER)
STUBS_KEPT = 20_000  # the stubs' texts one process keeps, at most (then it starts again)
NodeTexts = tuple[str, AbstractSet[str], str]  # Turtle block, the prefixes it uses, JSON-LD


Seen = dict[Node, tuple[int, NodeTexts]]  # partial nodes formatted, by their triple count


def description_texts(
    subset: Triples,
    blocks: NodeBlocks,
    seen: Seen | None = None,
    kept: Fragments[NodeTexts] | None = None,
) -> dict[str, str]:
    """`serialize(ext, subset, blocks)` for every format of RDF_FORMATS (by extension),
    for a subset made by `described`, in one pass: its subjects grouped and ordered once,
    each node looked up in the block table once, its texts taken from there when the
    subset holds it whole (its N-Triples from the dump, decision 0071) or formatted once
    for the formats, and a **stub** (a node the subset holds only the type, name and
    URL triples of) formatted once per process: `described` gives every node it
    reaches all of those, so a stub's text is the same in every file (`NodeBlocks.stubs`).

    `seen`: the partial nodes formatted for another description whose nodes' triples
    hold this one's (a person's and their profile document's): one of the same size
    holds the same triples, and is not formatted again.

    `kept`: the partial nodes' texts an earlier build formatted, by the node's N-Triples
    lines in the file (its subject and triples, exactly: decision 0062); used only in
    the whole graph's context and prefixes (the caller keys `kept` by those)."""
    nodes = sorted(_by_subject(subset).items(), key=_subject_order)
    # the table's JSON-LD is in the whole graph's context: the file's only when the
    # whole graph collides with no context prefix (then no subset does)
    shared = blocks.collision_free
    json_terms = blocks.json_terms if shared else _JsonTerms(_colliding_prefixes(subset))
    ttl: list[str] = []
    json: list[str] = []
    used: set[str] = set()
    lines: list[tuple[str, str]] = []  # each subject's text and N-Triples lines
    term = memo_terms(blocks.nt_terms)
    node = _Node(blocks, json_terms, seen if shared else None, kept if shared else None)
    for s, predicates in nodes:
        head = term(s)
        stub = shared and len(predicates) <= _STUB_SIZE and all(p in STUB_FACTS for p in predicates)
        found = blocks.stubs.get(s) if stub else None
        if found is None:
            found = node.texts(head, s, predicates)
            if stub:
                if len(blocks.stubs) >= STUBS_KEPT:
                    blocks.stubs.clear()
                blocks.stubs[s] = found
        texts, block = found
        lines.append((head, block))
        ttl.append(texts[0])
        used |= texts[1]
        json.append(texts[2])
    head = f'{{\n  "@context": {dumps(json_terms.context, depth=1)},\n  "@graph": ['
    lines.sort(key=_first_text)  # the order of all lines sorted (see `_Node.texts`)
    return {
        TURTLE.ext: _prefix_lines(subset, used) + "\n".join(ttl),
        JSONLD.ext: head + _json_graph(json),
        NTRIPLES.ext: "".join(block for _, block in lines),
    }


_STUB_SIZE = len(STUB_FACTS)  # a node of more predicates is no stub
_PREFIXES = graph_prefixes(Triples())  # every `Triples`' prefixes (the project's)
_HEADERS: dict[frozenset[str], str] = {}  # `prefix_header` of them, by the prefixes used


def _prefix_lines(subset: Triples, used: AbstractSet[str]) -> str:
    """`prefix_header(graph_prefixes(subset), used)`, made once per set of prefixes used
    for a `Triples` (whose prefixes are the project's)."""
    if type(subset) is not Triples:
        return prefix_header(graph_prefixes(subset), used)
    key = frozenset(used)
    found = _HEADERS.get(key)
    if found is None:
        found = _HEADERS[key] = prefix_header(_PREFIXES, key)
    return found


def _first_text(pair: tuple[str, str]) -> str:
    return pair[0]


class _Node:
    """A description's node texts: looked up in the block table once (whole nodes' texts
    read from it), else formatted (once per `seen`; from `kept` when an earlier build
    formatted the same lines). `seen` and `kept` are None outside the whole graph's
    context, where the table's texts are not the file's."""

    def __init__(
        self,
        blocks: NodeBlocks,
        json_terms: _JsonTerms,
        seen: Seen | None,
        kept: Fragments[NodeTexts] | None,
    ) -> None:
        self.blocks, self.json_terms, self.seen, self.kept = blocks, json_terms, seen, kept
        self.table = blocks.table
        self.shared = blocks.collision_free and json_terms is blocks.json_terms

    def texts(self, head: str, s: Node, predicates: Described) -> tuple[NodeTexts, str]:
        """The node's Turtle, prefixes and JSON-LD texts, and its sorted N-Triples lines
        (`head`: its subject's text; no subject's text followed by a space is a prefix
        of another's line, so the subjects' blocks in the order of their texts are all
        lines sorted)."""
        table, blocks = self.table, self.blocks
        row = table.row(s, sum(map(len, predicates.values()))) if table is not None else None
        found = table.ntriples_at(row) if table is not None and row is not None else None
        block = found or subject_block(head, predicates, blocks.nt_terms)
        if row is not None and self.shared:
            return table.texts_at(row), block  # type: ignore[union-attr]
        make = partial(_partial_texts, blocks, s, predicates, self.json_terms, self.seen)
        if self.kept is None:
            return make(), block
        texts = self.kept.text(block, make)
        if self.seen is not None and s not in self.seen:
            self.seen[s] = (sum(map(len, predicates.values())), texts)
        return texts, block


def _partial_texts(
    blocks: NodeBlocks,
    s: Node,
    predicates: Described,
    json_terms: _JsonTerms,
    seen: Seen | None,
) -> NodeTexts:
    """A node the file does not hold whole, formatted (once per `seen`)."""
    size = sum(map(len, predicates.values())) if seen is not None else 0
    found = seen.get(s) if seen is not None else None
    if found is not None and found[0] == size:
        return found[1]
    term = blocks.turtle_terms
    term.used = set()  # the prefixes this block uses
    block = _turtle_block(s, predicates, term)
    texts = (block, term.used, _node_json(s, predicates, json_terms))
    if seen is not None:
        seen[s] = (size, texts)
    return texts


def _json_graph(nodes: list[str]) -> str:
    """The node objects of a JSON-LD document and its end (as `jsonld_chunks`)."""
    if not nodes:
        return "]\n}\n"
    return "\n    " + ",\n    ".join(nodes) + "\n  ]\n}\n"


# --------------------------------------------------------------------------- subsets


def owned_nodes(graph: Triples, people: list[URIRef]) -> dict[URIRef, list[Node]]:
    """Each person's own nodes: the person and every node minted under their IRI."""
    wanted = {str(p): p for p in people}
    owned: dict[URIRef, list[Node]] = {p: [p] for p in people}
    for s in graph.subjects():
        for person in _owners(str(s), wanted):
            owned[person].append(s)
    return owned


def _owners(iri: str, wanted: dict[str, URIRef]) -> list[URIRef]:
    found = []
    cut = iri.find("/", 0)
    while cut != -1:
        prefix = iri[:cut]
        if prefix in wanted:
            found.append(wanted[prefix])
        cut = iri.find("/", cut + 1)
    return found


def person_subset(graph: Triples, person: URIRef, own: list[Node]) -> Triples:
    """One person's subgraph, given their `owned_nodes`."""
    return described(graph, person_nodes(graph, person, own))


def person_nodes(graph: Triples, person: URIRef, own: list[Node]) -> set[Node]:
    """The nodes a person's files describe in full: their own and their profile page.

    Their works are linked by IRI (`foaf:made`, and every triple of a work or an
    authorship that points at the person), each with its type, name and URL, not
    described in full: a work is described in its own files, and a prolific author's file
    stays proportional to their own works instead of repeating every co-author's papers
    (docs/mapping.md, "What a person's files contain")."""
    return set(own) | set(graph.subjects(SCHEMA.mainEntity, person))


def described(graph: Triples, owned: Collection[Node]) -> Triples:
    """The triples of the `owned` nodes, the triples pointing at them, and the type,
    name and URL of every node those reach: a thing's description in the site
    (docs/decisions/0011-dereferenceable-iris.md)."""
    owned = owned if isinstance(owned, set | frozenset) else set(owned)
    sub = Triples()
    for s in owned:
        sub.take(s, graph.describe(s))  # whole: the graph's own objects
    for s in owned:
        for s2, p in graph.subject_predicates(s):
            if s2 not in owned:
                sub.add((s2, p, s))
    nodes = {o for o in sub.objects() if _is_iri(o)} | set(sub.subjects())
    for node in nodes - owned:  # an owned node has all of its triples already
        facts = graph.describe(node)
        for p in STUB_FACTS_ORDER:
            for o in facts.get(p, ()):
                sub.add((node, p, o))
    return sub


# --------------------------------------------------------------------------- dataset description


def dataset_description(
    graph: GraphLike,
    base: str,
    title: str,
    description: str,
    license: str,
    endpoint: str | None,
    examples: list[URIRef],
    dump: str = scheme.DUMP,
) -> Triples:
    """VoID + DCAT: what the dataset is, its dumps and its size by class."""
    d = Triples()
    ds = URIRef(scheme.dataset(base))
    for t in (VOID.Dataset, DCAT.Dataset):
        d.add((ds, RDF.type, t))
    d.add((ds, DCTERMS.title, Literal(title)))
    d.add((ds, DCTERMS.description, Literal(description)))
    d.add((ds, DCTERMS.license, URIRef(license)))
    d.add((ds, VOID.triples, Literal(len(graph), datatype=XSD.integer)))
    d.add((ds, VOID.entities, Literal(len(set(graph.subjects())), datatype=XSD.integer)))
    d.add((ds, VOID.uriSpace, Literal(base)))
    for ns in (SCHEMA, FOAF, KG):
        d.add((ds, VOID.vocabulary, URIRef(str(ns))))
    for name, (media, _) in SERIALIZERS.items():
        url = URIRef(scheme.mint(base, scheme.file_path(dump, name)))
        dist = URIRef(scheme.dataset(base, "distribution", name))
        d.add((ds, VOID.dataDump, url))
        d.add((ds, DCAT.distribution, dist))
        d.add((dist, RDF.type, DCAT.Distribution))
        d.add((dist, DCAT.downloadURL, url))
        d.add((dist, DCAT.mediaType, Literal(media)))
    counts = Counter(o for o in graph.objects(None, RDF.type))
    for cls, n in sorted(counts.items()):
        part = URIRef(scheme.dataset(base, "class", _local(cls)))
        d.add((ds, VOID.classPartition, part))
        d.add((part, VOID["class"], cls))
        d.add((part, VOID.entities, Literal(n, datatype=XSD.integer)))
    for example in examples:
        d.add((ds, VOID.exampleResource, example))
    if endpoint:
        d.add((ds, VOID.sparqlEndpoint, URIRef(endpoint)))
    return d


def _local(iri: Node) -> str:
    text = str(iri)
    return curie(text, "-") or text.rsplit("/", 1)[-1].rsplit("#", 1)[-1]


# --------------------------------------------------------------------------- writing


Part = Mapping[str, "str | bytes | Kept | Written | Encoded"]


def write_outputs(
    out_dir: Path,
    files: Part | Iterable[Part] | Callable[[Path], Iterable[Part]],
    manifest: Path | None = None,
    inside: Path | None = None,
    known: Previous | None = None,
) -> list[str]:
    """Write `files` (relative path -> text), or a stream of such parts, as the new
    content of `out_dir`, atomically (`kg.publish.outdir`: complete old or complete new tree,
    even if the process is killed); returns the paths written, sorted.

    Within a part, paths given the very same string object share one file (hard links).
    With `manifest` (a file kg keeps outside the output), a file whose bytes equal those
    of the same path in the tree being replaced, untouched since, is a hard link to it
    instead of a new copy (a link costs a fiftieth of a write). With `inside` (the
    project, when the output folder comes from its kg.toml), the output must really be
    inside it (`kg.publish.outdir`).

    `files` may also be a function of the staging folder that gives the parts: the
    renderer's workers then write their files there themselves (`write_part`) and the
    parts carry only their stamps (`Written`). `known`: the previous tree as the caller
    read it (`previous_tree`), taken while it is still the tree `out_dir` shows (its
    manifest, 232,000 stamps at 10k, is not read and unpickled again).
    """

    def fill(staging: Path) -> list[str]:
        swept = sweep(staging)  # a recycled tree (kg.publish.outdir's spare), else None
        if callable(files):
            parts: Iterable[Part] = files(staging)
        else:
            parts = [files] if isinstance(files, Mapping) else files
        writer = TreeWriter(staging, _still_previous(out_dir, manifest, known))
        names: list[str] = []
        for part in parts:
            writer.write(part)
            names.extend(part)
        writer.write({MARKER: "written by kg build; replaced on every build\n"})
        if swept is not None:
            drop_unwritten(staging, swept, writer.done)
        if manifest is not None:
            _save_manifest(manifest, staging.name, writer.done)
        return sorted(names)

    try:
        return replace_tree(out_dir, fill, inside, spare=manifest is not None)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise ProjectError(
            f"cannot write the output to {out_dir}: {exc.strerror or exc}{where}"
        ) from None


Stamp = tuple[str, int, int, int]  # content digest, inode, size, mtime in ns
Previous = tuple[Path, dict[str, Stamp]]  # the tree a build replaces, its files' stamps


@dataclass(frozen=True)
class Kept:
    """In place of a file's text: the previous tree's file at the same path, which holds
    these bytes (by digest); the writer links it."""

    digest: str


@dataclass(frozen=True)
class Written:
    """In place of a file's text: the file is in the staging folder already, written by
    a worker (`write_part`), with this stamp."""

    stamp: Stamp


@dataclass(frozen=True, eq=False)
class Encoded:
    """In place of a file's text: its bytes and their digest (`content_digest`), made
    once by the render cache (which keeps the digest): the writer neither encodes nor
    digests them again. Paths given the same `Encoded` share one file, as with text."""

    data: bytes
    digest: str


def encoded(files: Mapping[str, str]) -> dict[str, Encoded]:
    """Each file's bytes and digest, made once per text object (paths given the very
    same string get the same `Encoded`, and so one file)."""
    made: dict[int, Encoded] = {}
    out: dict[str, Encoded] = {}
    for rel, text in files.items():
        found = made.get(id(text))
        if found is None:
            data = text.encode("utf-8")
            found = made[id(text)] = Encoded(data, content_digest(data))
        out[rel] = found
    return out


def write_part(staging: Path, previous: Previous | None, part: Part) -> dict[str, Written]:
    """Write one part into the staging folder of `write_outputs` (in the process that
    rendered it) and return what the parent needs: each file's stamp. A file given as
    `Written` (a writer of this process made or kept it: its path was checked then) is
    passed on as it is (decision 0079: most of a rebuild's files are kept ones)."""
    writer = TreeWriter(staging, previous)
    writer.write({rel: file for rel, file in part.items() if not isinstance(file, Written)})
    done = writer.done
    return {
        rel: file if isinstance(file, Written) else Written(done[rel]) for rel, file in part.items()
    }


def linked_copies(
    writer: TreeWriter, target: Path, rels: tuple[str, ...], stamp: Stamp
) -> dict[str, Written]:
    """The stamps of a file written at `target` (`rels[0]`, stamped `stamp`) and of its
    hard links (else copies) made at the other `rels` of the staging folder."""
    stamps = {rels[0]: Written(stamp)}
    for rel in rels[1:]:
        other = writer._target(rel)
        if not _linked(target, other):
            shutil.copyfile(target, other)
        stamps[rel] = Written(_stamp(stamp[0], other.stat()))
    return stamps


def content_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def still_there(previous: Previous, rel: str, digest: str) -> bool:
    """Whether the previous tree's file `rel` holds `digest` and is untouched since."""
    tree, stamps = previous
    stamp = stamps.get(rel)
    if stamp is None or stamp[0] != digest:
        return False
    try:
        found = os.stat(os.path.join(tree, rel), follow_symlinks=False)
    except OSError:
        return False
    return S_ISREG(found.st_mode) and _stamp(digest, found) == stamp


def _stamp(digest: str, stat: os.stat_result) -> Stamp:
    return digest, stat.st_ino, stat.st_size, stat.st_mtime_ns


def previous_tree(out_dir: Path, manifest: Path | None) -> Previous | None:
    """The tree `out_dir` shows now and the stamps of its files, when the manifest is
    the one written with that tree. The manifest is a signed cache entry
    (`kg.cache.SignedCache`: `.kg-cache/outputs/<name>`): one a project ships is ignored."""
    if manifest is None or not out_dir.is_symlink():
        return None
    try:
        tree = out_dir.resolve(strict=True)
        kept = _manifest_cache(manifest).get(manifest.stem)
        if not isinstance(kept, dict) or kept.get("version") != tree.name:
            return None
        stamps = {k: tuple(v) for k, v in kept["files"].items()}
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        return None
    return tree, cast("dict[str, Stamp]", stamps)


def _still_previous(
    out_dir: Path, manifest: Path | None, known: Previous | None
) -> Previous | None:
    """`known` while `out_dir` still shows its tree (a tree's manifest is written once,
    with the tree: its version names it), else the previous tree read now."""
    if known is not None and manifest is not None:
        with contextlib.suppress(OSError):
            if out_dir.is_symlink() and out_dir.resolve(strict=True) == known[0]:
                return known
    return previous_tree(out_dir, manifest)


def _manifest_cache(manifest: Path) -> SignedCache:
    return SignedCache(manifest.parent)


def _save_manifest(manifest: Path, version: str, stamps: dict[str, Stamp]) -> None:
    """Without a manifest the next build writes every file: slower, not wrong."""
    _manifest_cache(manifest).put(manifest.stem, {"version": version, "files": stamps})


class TreeWriter:
    """Writes parts into the staging folder: hard links for repeated strings and for
    files unchanged since the previous tree, else new files; records their stamps.

    New files are made in their folder's descriptor (opened once per part and folder),
    so each costs four system calls (open, write, fstat, close) and no walk of its path;
    a file given as `Encoded` is not encoded nor digested again.

    In a recycled staging folder (kg.publish.recycled), a path already there is kept
    when it is the previous tree's very file with these bytes (its stamp), else removed
    before the new file is made."""

    def __init__(self, staging: Path, previous: Previous | None) -> None:
        self.staging = staging
        self.previous = previous
        self.recycled = os.path.lexists(staging / RECYCLED)
        self.folders: set[str] = {""}  # folders made, relative to the staging folder
        self.fds: dict[str, int] = {}  # folder -> descriptor, while a part is written
        self.sources: dict[str, int | None] = {}  # the previous tree's folders, likewise
        self.done: dict[str, Stamp] = {}

    def write(self, part: Part) -> None:
        written: dict[int, tuple[int, str, str]] = {}  # id(text) -> first file, while `part` lives
        try:
            for rel, text in part.items():
                if isinstance(text, Written):  # a worker wrote it into this staging folder
                    _check_rel(rel)  # the same check of the path
                    self.done[rel] = text.stamp
                elif isinstance(text, Kept):
                    self._keep(rel, text.digest)
                else:
                    self._write(rel, text, written)
        finally:
            self.close()

    def _write(self, rel: str, text: str | bytes | Encoded, written: dict) -> None:
        folder, name = self._place(rel)
        first = written.get(id(text))
        if first is not None:
            if self.recycled:
                _clear_at(folder, name)
            if _linked_at(first[0], first[1], folder, name):
                self.done[rel] = self.done[first[2]]
                return
        if isinstance(text, Encoded):
            data, digest = text.data, text.digest
        else:
            data = text if isinstance(text, bytes) else text.encode("utf-8")
            digest = content_digest(data)
        if self.recycled and self._here(rel, digest, folder, name):
            return
        if self.previous is None or not self._reuse(rel, digest, self.staging / rel):
            self.done[rel] = _stamp(digest, _write_new(folder, name, data))
        written.setdefault(id(text), (folder, name, rel))

    def _place(self, rel: str) -> tuple[int, str]:
        """The descriptor of `rel`'s folder (made when missing) and its name there."""
        folder, _, name = _check_rel(rel).rpartition("/")
        fd = self.fds.get(folder)
        if fd is None:
            path = self.staging / folder if folder else self.staging
            if folder not in self.folders:
                if self.recycled:
                    self._folders_on_the_way(folder)
                path.mkdir(parents=True, exist_ok=True)
                self._made(folder)
            fd = self.fds[folder] = os.open(path, FOLDER_FLAGS)
        return fd, name

    def _made(self, folder: str) -> None:
        while folder and folder not in self.folders:
            self.folders.add(folder)
            folder = folder.rpartition("/")[0]

    def _folders_on_the_way(self, folder: str) -> None:
        """In a recycled tree: a file where `folder` or a folder above it goes, removed."""
        on_the_way = ""
        for part in folder.split("/"):
            on_the_way = f"{on_the_way}/{part}" if on_the_way else part
            try:
                found = os.lstat(self.staging / on_the_way)
            except FileNotFoundError:
                return  # made below, with the folders under it
            if not S_ISDIR(found.st_mode):
                self.clear(on_the_way)

    def clear(self, rel: str) -> None:
        """In a recycled tree: whatever is at `rel`, removed (never followed)."""
        if self.recycled:
            folder, _, name = _check_rel(rel).rpartition("/")
            try:
                fd = os.open(self.staging / folder if folder else self.staging, FOLDER_FLAGS)
            except FileNotFoundError:
                return
            try:
                _clear_at(fd, name)
            finally:
                os.close(fd)

    def _here(self, rel: str, digest: str, folder: int, name: str) -> bool:
        """In a recycled tree: whether the file at `rel` is the previous tree's very file
        holding `digest` (kept, stamped), else it is removed."""
        stamp = self.previous[1].get(rel) if self.previous is not None else None
        try:
            found = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if stamp is not None and S_ISREG(found.st_mode) and _stamp(digest, found) == stamp:
            self.done[rel] = stamp
            return True
        remove_at(folder, name)
        return False

    def _target(self, rel: str) -> Path:
        folder = _check_rel(rel).rpartition("/")[0]
        target = self.staging / rel
        if folder not in self.folders:
            if self.recycled:
                self._folders_on_the_way(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            self._made(folder)
        return target

    def _keep(self, rel: str, digest: str) -> None:
        """Take the previous tree's file (a link, else a copy): the renderer found it
        holds the bytes of this build's file."""
        if self._taken(rel, digest):
            return
        target = self._target(rel)
        if self.previous is None or not still_there(self.previous, rel, digest):
            message = f"{rel} in the previous output changed during the build; build again"
            raise ProjectError(message)
        shutil.copyfile(self.previous[0] / rel, target)  # no hard links on this file system
        self.done[rel] = _stamp(digest, target.stat())

    def _taken(self, rel: str, digest: str) -> bool:
        """Whether the previous tree's file at `rel`, holding `digest` and untouched
        since (its stamp), is now this tree's file: kept in a recycled tree, else linked
        (stamped in `done`); else nothing is left at `rel`."""
        folder, name = self._place(rel)
        if self.recycled and self._here(rel, digest, folder, name):
            return True
        return self._linked_here(rel, digest, folder, name)

    def _linked_here(self, rel: str, digest: str, folder: int, name: str) -> bool:
        """`_reuse` through the two trees' folder descriptors (no walk of either path for
        each file: 0059): the previous tree's file linked (never followed), then what the
        link names checked against the stamp; a link that fails the check goes."""
        stamp = self.previous[1].get(rel) if self.previous is not None else None
        if stamp is None or stamp[0] != digest:
            return False
        source = self._previous_folder(rel.rpartition("/")[0])
        if source is None:
            return False
        try:
            os.link(name, name, src_dir_fd=source, dst_dir_fd=folder, follow_symlinks=False)
        except OSError:  # missing, or no hard links on this file system: write a copy
            return False
        found = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if S_ISREG(found.st_mode) and _stamp(digest, found) == stamp:
            self.done[rel] = stamp
            return True
        os.unlink(name, dir_fd=folder)  # a link to a link, or to a file changed since
        return False

    def _previous_folder(self, folder: str) -> int | None:
        """The previous tree's folder `folder`, opened once per writer (None: missing)."""
        if folder not in self.sources:
            assert self.previous is not None
            path = os.path.join(self.previous[0], folder) if folder else self.previous[0]
            try:
                self.sources[folder] = os.open(path, FOLDER_FLAGS)
            except OSError:
                self.sources[folder] = None
        return self.sources[folder]

    def keep_all(self, files: Mapping[str, str]) -> dict[str, Written] | None:
        """The previous tree's files (path -> digest) taken as `_taken` takes one, and
        their stamps; None when one is not there as it was, and then none of them is
        left in the staging folder (the caller renders them): the render's check that
        its kept files are still there and the writer's are one (decision 0059). The
        folders stay open for the next call, until `close`. In a recycled tree a file
        that is the previous tree's very file costs one `stat` in its folder's
        descriptor (`_here`, decision 0079)."""
        taken: list[str] = []
        for rel, digest in files.items():
            if not self._taken(rel, digest):
                self._drop(taken)
                return None
            taken.append(rel)
        return {rel: Written(self.done[rel]) for rel in taken}

    def close(self) -> None:
        """The folders' descriptors `keep_all` left open (for its next items), closed."""
        fds, self.fds = self.fds, {}
        sources, self.sources = self.sources, {}
        for fd in [*fds.values(), *sources.values()]:
            if fd is not None:
                os.close(fd)

    def _drop(self, taken: list[str]) -> None:
        """The files `keep_all` took, unlinked again (nothing else is at their paths)."""
        for rel in taken:
            folder, _, name = rel.rpartition("/")
            fd = self.fds.get(folder)
            if fd is None:
                os.unlink(self.staging / rel)
            else:
                os.unlink(name, dir_fd=fd)
            del self.done[rel]

    def _reuse(self, rel: str, digest: str, target: Path) -> bool:
        """Link the previous tree's file when it holds these bytes, untouched since: the
        link is made first, then what it links is checked against the stamp (so nothing
        can change between the check and the link); a link that fails the check goes."""
        if self.previous is None:
            return False
        tree, stamps = self.previous
        stamp = stamps.get(rel)
        if stamp is None or stamp[0] != digest or not _linked(os.path.join(tree, rel), target):
            return False
        found = os.stat(target, follow_symlinks=False)
        if S_ISREG(found.st_mode) and _stamp(digest, found) == stamp:
            self.done[rel] = stamp
            return True
        os.unlink(target)  # a link to a link, or to a file changed since
        return False


def _check_rel(rel: str) -> str:
    """`rel`, when it is a path inside the output directory."""
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in rel.split("/")):
        raise ProjectError(f"refusing to write {rel!r} outside the output directory")
    return rel


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _write_new(folder: int, name: str, data: bytes) -> os.stat_result:
    fd = os.open(name, _NEW_FILE, 0o666, dir_fd=folder)  # less the umask
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        return os.fstat(fd)
    finally:
        os.close(fd)


def _clear_at(folder: int, name: str) -> None:
    """Whatever is at `name` in the folder `folder`, removed (never followed)."""
    remove_at(folder, name)


def _linked_at(first_folder: int, first: str, folder: int, name: str) -> bool:
    """`_linked` between names in two folders' descriptors."""
    try:
        os.link(first, name, src_dir_fd=first_folder, dst_dir_fd=folder, follow_symlinks=False)
    except OSError:  # no hard links on this file system: write a copy
        return False
    return True


def _linked(first: Path | str, target: Path) -> bool:
    try:
        os.link(first, target, follow_symlinks=False)  # a link is linked, never its target
    except OSError:  # no hard links on this file system: write a copy
        return False
    return True
