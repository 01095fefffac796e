"""Six of kg's own precomputed answers kept up to date from the changed triples after an
edit (decisions 0050, 0055), instead of asking the whole query again:
`profile-completeness` (rows per profiled person), `ranked-venue-papers` (one row per
name, for each ranking list and rank it is answered ahead for), and the `KEYED` ones,
whose rows are asked again by a key column: `top-venues` (by venue),
`publications-by-venue-year` (by a venue's name), `equal-contribution` (by title); and
`publications-per-year`, whose counts are counted again (kg.query.counted, 0059).

Invariant: a maintained answer is the earlier answer's rows for every key (a person, a
name) that no changed triple can reach, plus the query asked again restricted to the
keys a changed triple can reach (a VALUES block), ordered by kg.query.ordered: the same
rows in the same order, byte for byte (SPARQL JSON results as kg.query.answers writes
them), as asking the whole query on the new store. Which keys a change reaches is read
off the query's own text, so it is done only for kg's own text of each query (a
project's query of the same name is asked whole). The reach is a superset, found from
the changed triples and the new store alone:

- `profile-completeness` reads, for a person, `?person ?property ?value`,
  `?person schema:name` and `?page a schema:ProfilePage ; schema:mainEntity ?person`:
  a person's rows change only when a changed triple has the person, or a page of theirs,
  as subject or object. Reached: every IRI of a changed triple, and the main entity (in
  the new store) of each.
- `ranked-venue-papers` counts, for a name, the distinct ranked papers of the profiled
  people of that name: a row changes only when a changed triple is a name, page,
  authorship, a paper's venue or a venue's ranking of one of its people (a change to a
  ranking itself, `kg:rankingList` or `kg:rankValue`, is asked whole). Reached: the
  names (new store) of every IRI of a changed triple, of the authors of every paper
  whose `kg:venue` changed and of the authors of the papers of every venue whose
  `kg:ranking` changed, and every changed name literal (a removed authorship names its
  author itself); the query is asked again for every person who has one of those
  names, keeping only those names' rows.
- `top-venues` (a venue's row: its `kg:venue` papers and its names): reached are the
  objects of changed `kg:venue` triples and the subjects of changed `schema:name`.
- `publications-by-venue-year` (a row per paper and venue, keyed by the venue's name):
  reached are every changed name literal, the names (new store) of the objects of
  changed `kg:venue` triples and of the venues (new store) of every subject of a
  changed name, date or venue triple. What the old store held and the new one lacks is
  in the removed triples themselves (a removed venue link names the venue; a removed
  name is a changed literal).
- `equal-contribution` (a row per equal-contribution authorship, keyed by the paper's
  title): reached are every changed name literal and the titles (new store) of the
  papers a changed triple is about: as the paper (`kg:authorship`, `schema:name`), as
  one of its authorships (`kg:equalContribution`, `kg:rank`, `kg:author`, or the
  object of `kg:authorship`) or as an author of one (a changed `schema:name`). Its
  sub-SELECT of every person's name is restricted too, to the authors of the papers
  of those titles.

Anything unexpected (blank nodes in the change, too many changed triples or reached
keys, an earlier answer that is not SPARQL JSON results) gives None: the whole query is
asked, as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable

import pyoxigraph as ox

from kg.errors import QueryError
from kg.graph.namespaces import KG, SCHEMA
from kg.query.counted import per_year_rows, ranked_rows
from kg.query.ordered import in_order, unordered
from kg.query.store import QueryStore

COMPLETENESS = "profile-completeness"
RANKED = "ranked-venue-papers"
TOP_VENUES = "top-venues"
BY_VENUE_YEAR = "publications-by-venue-year"
EQUAL = "equal-contribution"
PER_YEAR = "publications-per-year"  # counted (kg.query.counted, decision 0059)
KEYED = {TOP_VENUES: "venue", BY_VENUE_YEAR: "venue", EQUAL: "title"}  # kind -> key column
KINDS = (COMPLETENESS, RANKED, *KEYED, PER_YEAR)
MOST_CHANGED = 5_000  # changed triples (lines of the patch); more: asked whole
MOST_REACHED = 2_000  # keys a change reaches; more: asked whole
_WHERE = re.compile(r"\bWHERE\s*\{", re.IGNORECASE)


def maintain(
    store: QueryStore, kind: str, text: str, earlier: bytes, changed: tuple[bytes, bytes]
) -> bytes | None:
    """The answer of `text` (kg's text of the query `kind`, values bound, as run on
    `store`) as kg.query.answers' `_ordered_here` writes it, made from the `earlier`
    answer (those bytes, on the store before the change) and the patch's removed and
    added N-Triples lines `changed`; None where the module's invariant cannot be kept."""
    plain = order_of(text)
    old = _rows(earlier)
    triples = _triples(changed)
    if plain is None or old is None or triples is None:
        return None
    variables, rows = old
    if kind == PER_YEAR:
        return _counted(store, variables, rows, changed, plain[1])
    if kind == RANKED:
        found = _counted(store, variables, rows, changed, plain[1], text)
        if found is not None:
            return found
    if kind in KEYED:
        column = KEYED[kind]
        keyed = _keyed_reach(store, kind, triples)
        if keyed is None:
            return None
        keys, values = keyed
        restricted = _keyed_restricted(plain[0], kind, values)
        asked = _asked(store, restricted, variables) if values and restricted else []
    else:
        reached, where, column = _person_reach(store, kind, triples)
        if reached is None:
            return None
        keys, persons = reached
        restricted = _restricted(plain[0], where, _restriction(kind, persons))
        asked = _asked(store, restricted, variables) if persons and restricted else []
    if asked is None or restricted is None:
        return None
    touched = _reached_by(keys, column)
    kept = [row for row in rows if not touched(row)]
    fresh = [row for row in asked if touched(row)]
    ordered = in_order(variables, kept + fresh, plain[1])
    if ordered is None:
        return None
    document = {"head": {"vars": variables}, "results": {"bindings": ordered}}
    return json.dumps(document, ensure_ascii=False, sort_keys=True).encode("utf-8")


def _counted(
    store: QueryStore,
    variables: list[str],
    rows: list[dict],
    changed: tuple[bytes, bytes],
    order: list[tuple[str, bool]],
    ranked: str | None = None,
) -> bytes | None:
    """`publications-per-year`, or `ranked-venue-papers` (its text `ranked`), counted
    again from the earlier rows and the change (kg.query.counted, decision 0059)."""
    removed, added = _triples((changed[0], b"")), _triples((b"", changed[1]))
    if removed is None or added is None:
        return None
    if ranked is None and variables == ["year", "publications"]:
        found = per_year_rows(store, removed, added, rows)
    elif ranked is not None and variables == ["name", "papers"]:
        found = ranked_rows(store, ranked, removed, added, rows)
    else:
        return None
    ordered = None if found is None else in_order(variables, found, order)
    if ordered is None:
        return None
    document = {"head": {"vars": variables}, "results": {"bindings": ordered}}
    return json.dumps(document, ensure_ascii=False, sort_keys=True).encode("utf-8")


Order = tuple[str, list[tuple[str, bool]]] | None  # what `unordered` gives
_ORDERS: dict[str, Order] = {}  # text -> `unordered(text)`, in this process
MOST_ORDERS = 256


def order_of(text: str) -> Order:
    """`unordered(text)`, once per text and process (it parses the query with rdflib
    twice: ~15 ms), or as an earlier build found it (`known_order`)."""
    if text not in _ORDERS:
        known_order(text, unordered(text))
    return _ORDERS[text]


def known_order(text: str, order: Order) -> None:
    """What `unordered(text)` gives, found by an earlier build (a signed manifest's
    entry for this very text: `unordered` is a function of the text alone)."""
    if len(_ORDERS) >= MOST_ORDERS:
        _ORDERS.clear()
    _ORDERS[text] = order


def _person_reach(
    store: QueryStore, kind: str, triples: list[ox.Triple]
) -> tuple[Reach | None, int, str]:
    """The reach of a query whose rows are asked again for persons, the `WHERE` group
    the restriction goes in, and the key column."""
    if kind == COMPLETENESS:
        return _completeness_reach(store, triples), 0, "person"
    if kind == RANKED:
        return _ranked_reach(store, triples), 1, "name"
    return None, 0, ""


def _rows(raw: bytes) -> tuple[list[str], list[dict]] | None:
    try:
        document = json.loads(raw)
        variables = [str(v) for v in document["head"]["vars"]]
        rows = document["results"]["bindings"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        return None
    return variables, rows


def _triples(changed: tuple[bytes, bytes]) -> list[ox.Triple] | None:
    """The changed triples; None when too many, unreadable, or with a blank node."""
    removed, added = changed
    if removed.count(b"\n") + added.count(b"\n") > MOST_CHANGED:
        return None
    try:
        triples = [q.triple for q in ox.parse(removed + added, format=ox.RdfFormat.N_TRIPLES)]
    except (SyntaxError, ValueError, OSError):
        return None
    for t in triples:
        if isinstance(t.subject, ox.BlankNode) or isinstance(t.object, ox.BlankNode):
            return None
    return triples


def _iris(triples: Iterable[ox.Triple]) -> set[str]:
    found: set[str] = set()
    for t in triples:
        found.update(n.value for n in (t.subject, t.object) if isinstance(n, ox.NamedNode))
    return found


Reach = tuple[set[str], set[str]]  # the keys' terms (`_term`), the persons to ask for


def _completeness_reach(store: QueryStore, triples: list[ox.Triple]) -> Reach | None:
    iris = _iris(triples)
    entities = _column(
        store, f"SELECT DISTINCT ?p WHERE {{ {_values('x', iris)} ?x <{SCHEMA}mainEntity> ?p }}"
    )
    if entities is None:
        return None
    persons = iris | {t["value"] for t in entities if t.get("type") == "uri"}
    if len(persons) > MOST_REACHED:
        return None
    return {_term({"type": "uri", "value": p}) for p in persons}, persons


def _ranked_reach(store: QueryStore, triples: list[ox.Triple]) -> Reach | None:
    ranking = {f"{KG}rankingList", f"{KG}rankValue"}
    if any(t.predicate.value in ranking for t in triples):
        return None
    iris = _iris(triples)
    papers = _subjects(triples, f"{KG}venue")
    venues = _subjects(triples, f"{KG}ranking")
    names = {str(t.object) for t in triples if t.predicate.value == f"{SCHEMA}name"}
    author, venue, name = f"<{SCHEMA}author>", f"<{KG}venue>", f"<{SCHEMA}name>"
    found = _column(
        store,
        f"SELECT DISTINCT ?n WHERE {{ {{ {_values('x', iris)} ?x {name} ?n }} UNION "
        f"{{ {_values('x', papers)} ?x {author} ?a . ?a {name} ?n }} UNION "
        f"{{ {_values('x', venues)} ?p {venue} ?x ; {author} ?a . ?a {name} ?n }} UNION "
        f"{{ VALUES ?n {{ {' '.join(sorted(names))} }} }} }}",
    )
    if found is None or len(found) > MOST_REACHED:
        return None
    literals = " ".join(sorted(_literal(t) for t in found))
    named = f"VALUES ?n {{ {literals} }} ?p {name} ?n"
    people = _column(store, f"SELECT DISTINCT ?p WHERE {{ {named} }}")
    if people is None or len(people) > MOST_REACHED:
        return None
    return {_term(t) for t in found}, {t["value"] for t in people if t.get("type") == "uri"}


def _keyed_reach(
    store: QueryStore, kind: str, triples: list[ox.Triple]
) -> tuple[set[str], list[str]] | None:
    """The keys (`_term`) of a `KEYED` query a change can reach, and each written as
    SPARQL for a VALUES block (decision 0055). The reach is found in the new store; what
    the old store held that the new one lacks is in the removed triples themselves."""
    name = f"{SCHEMA}name"
    names = " ".join(sorted({str(t.object) for t in triples if t.predicate.value == name}))
    if kind == TOP_VENUES:  # rows by venue: its papers (kg:venue) and its names
        venues = _objects(triples, f"{KG}venue") | _subjects(triples, name)
        select = f"{{ {_values('n', venues)} }}"
    elif kind == BY_VENUE_YEAR:  # rows by a venue's name: its papers' names and dates
        moved = {f"{SCHEMA}datePublished", f"{KG}venue", name}
        papers = _subjects_any(triples, moved)
        select = (
            f"{{ {_values('s', _objects(triples, f'{KG}venue'))} ?s <{name}> ?n }} UNION "
            f"{{ {_values('p', papers)} ?p <{KG}venue> ?s . ?s <{name}> ?n }} UNION "
            f"{{ VALUES ?n {{ {names} }} }}"
        )
    else:  # EQUAL, rows by title: the authorships of the paper and their authors' names
        return _equal_reach(store, triples, names)
    return _keys(store, select)


def _equal_reach(
    store: QueryStore, triples: list[ox.Triple], names: str
) -> tuple[set[str], list[str]] | None:
    """`_keyed_reach` of `equal-contribution`: the titles of every paper a changed
    triple is about (as the paper, one of its authorships, or an author of one)."""
    name, authorship = f"<{SCHEMA}name>", f"<{KG}authorship>"
    facts = {f"{KG}equalContribution", f"{KG}rank", f"{KG}author"}
    papers = _subjects(triples, f"{KG}authorship") | _subjects(triples, f"{SCHEMA}name")
    shares = _subjects_any(triples, facts)
    shares |= _objects(triples, f"{KG}authorship")
    who = _subjects(triples, f"{SCHEMA}name")
    return _keys(
        store,
        f"{{ {_values('p', papers)} ?p {name} ?n }} UNION "
        f"{{ {_values('a', shares)} ?p {authorship} ?a . ?p {name} ?n }} UNION "
        f"{{ {_values('w', who)} ?a <{KG}author> ?w . ?p {authorship} ?a . ?p {name} ?n }} "
        f"UNION {{ VALUES ?n {{ {names} }} }}",
    )


def _keys(store: QueryStore, select: str) -> tuple[set[str], list[str]] | None:
    """The distinct `?n` of the pattern `select`, as keys and as SPARQL terms."""
    found = _column(store, f"SELECT DISTINCT ?n WHERE {{ {select} }}")
    if found is None or len(found) > MOST_REACHED:
        return None
    written = sorted(
        f"<{t['value']}>" if t.get("type") == "uri" else _literal(t)
        for t in found
        if t.get("type") in ("uri", "literal", "typed-literal")
    )
    if len(written) != len(found):  # a blank node: no VALUES block can name it
        return None
    return {_term(t) for t in found}, written


def _objects(triples: Iterable[ox.Triple], predicate: str) -> set[str]:
    """The IRIs that are objects of changed triples of `predicate`."""
    return {
        t.object.value
        for t in triples
        if t.predicate.value == predicate and isinstance(t.object, ox.NamedNode)
    }


def _subjects_any(triples: Iterable[ox.Triple], predicates: set[str]) -> set[str]:
    """The IRIs that are subjects of changed triples of any of `predicates`."""
    return {
        t.subject.value
        for t in triples
        if t.predicate.value in predicates and isinstance(t.subject, ox.NamedNode)
    }


def _subjects(triples: Iterable[ox.Triple], predicate: str) -> set[str]:
    """The IRIs that are subjects of changed triples of `predicate`."""
    return {
        t.subject.value
        for t in triples
        if t.predicate.value == predicate and isinstance(t.subject, ox.NamedNode)
    }


def _values(var: str, iris: Iterable[str]) -> str:
    return f"VALUES ?{var} {{ {' '.join(f'<{i}>' for i in sorted(iris))} }}"


def _literal(term: dict) -> str:
    """A literal of SPARQL JSON results written back as SPARQL (N-Triples syntax)."""
    value = ox.Literal(term["value"])
    if "xml:lang" in term:
        value = ox.Literal(term["value"], language=term["xml:lang"])
    elif "datatype" in term:
        value = ox.Literal(term["value"], datatype=ox.NamedNode(term["datatype"]))
    return str(value)


def _reached_by(keys: set[str], column: str) -> Callable[[dict], bool]:
    """Whether a row's term in `column` is one of `keys` (`_term`s), looked at only when
    its text is one of theirs (most rows of a large answer are not: 0059)."""
    texts = set()
    for key in keys:
        term = json.loads(key)
        texts.add(term.get("value") if isinstance(term, dict) else None)

    def reached(row: dict) -> bool:
        term = row.get(column)
        if isinstance(term, dict) and term.get("value") not in texts:
            return False
        return _term(term) in keys

    return reached


def _term(term: object) -> str:
    """A result term's identity (its JSON, keys sorted)."""
    return json.dumps(term, sort_keys=True)


def _column(store: QueryStore, text: str) -> list[dict] | None:
    """The one column of a SELECT, as SPARQL JSON results terms."""
    found = _asked(store, text, None)
    if found is None:
        return None
    return [next(iter(row.values())) for row in found if row]


def _asked(store: QueryStore, text: str, variables: list[str] | None) -> list[dict] | None:
    """The rows of a SELECT as SPARQL JSON results bindings; None when it fails or its
    variables are not `variables`."""
    try:
        result = store.query(text, "maintained answer")
        if not isinstance(result, ox.QuerySolutions):
            return None
        document = json.loads(result.serialize(format=ox.QueryResultsFormat.JSON) or b"")
    except (QueryError, OSError, ValueError, RuntimeError):
        return None
    if variables is not None and document["head"]["vars"] != variables:
        return None
    return list(document["results"]["bindings"])


def _restriction(kind: str, persons: set[str]) -> str:
    """What restricts a query to `persons`: a VALUES block; for `ranked-venue-papers`,
    their authorships as a sub-SELECT (joined on ?paper and ?person with the group's
    own authorship pattern, so the same solutions for those persons), which pyoxigraph
    evaluates first (with a VALUES block alone it read every ranked paper: 35 ms for 6
    people at 1k, 8 ms this way)."""
    values = _values("person", persons)
    if kind == RANKED:
        return f"{{ SELECT ?paper ?person WHERE {{ {values} ?paper <{SCHEMA}author> ?person }} }}"
    return values


def _keyed_restricted(text: str, kind: str, values: list[str]) -> str | None:
    """A `KEYED` query asked for the keys `values` only: a VALUES block on the key
    column in the outer group; for `equal-contribution` also its sub-SELECT of every
    person's name restricted to the authors of the papers of those titles (the outer
    group joins it on ?who only for them, so the same rows for those titles)."""
    if kind == EQUAL:
        name, authorship, author = f"<{SCHEMA}name>", f"<{KG}authorship>", f"<{KG}author>"
        authors = (
            f"{{ SELECT DISTINCT ?who WHERE {{ VALUES ?t {{ {' '.join(values)} }} "
            f"?p {name} ?t ; {authorship} ?x . ?x {author} ?who }} }}"
        )
        found = _restricted(text, 1, authors)
        if found is None:
            return None
        text = found
    return _restricted(text, 0, f"VALUES ?{KEYED[kind]} {{ {' '.join(values)} }}")


def _restricted(text: str, at: int, restriction: str) -> str | None:
    """`text` with `restriction` first in its `at`-th `WHERE {` group (not counting one
    on a comment line, as in the `#+ precompute:` header). Wherever it lands the answer
    is exact (only the reached keys' rows are taken from the result); in the right
    group it is also fast."""
    found = [m for m in _WHERE.finditer(text) if not _commented(text, m.start())]
    if len(found) <= at:
        return None
    end = found[at].end()
    return f"{text[:end]} {restriction} {text[end:]}"


def _commented(text: str, at: int) -> bool:
    """Whether the line holding `at` is a comment line."""
    return text[text.rfind("\n", 0, at) + 1 : at].lstrip().startswith("#")
